/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_GPU_H__
#define __GST_CUDA_VIDEO_FILTER_GPU_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* GstCudaVideoFilter's CUDA side, private to the base class: the
 * GstCudaContext shared with the neighbours, the element's stream in it,
 * CUDA memory in caps and the buffer pools (CUDA memory, pinned host
 * memory).  Two implementations, one chosen by meson: with gstreamer-cuda
 * (gstcudavideofiltergpu.c), and without CUDA, where nothing opens
 * (gstcudavideofilternogpu.c).  This is the only place the two builds
 * differ in the base class. */
typedef struct _GstCudaVideoFilterGpu GstCudaVideoFilterGpu;

GstCudaVideoFilterGpu *gst_cuda_video_filter_gpu_new (void);
void gst_cuda_video_filter_gpu_free (GstCudaVideoFilterGpu * gpu);

/* Raw video in formats (a caps list such as "{ I420, NV12 }"), in CUDA
 * memory first where the build has it, then in system memory. */
GstCaps *gst_cuda_video_filter_gpu_template_caps (const gchar * formats);

/* GstElement::set_context, and the context part of GstBaseTransform::query
 * (TRUE when answered).  device_id: cuda-device-id, -1 = any.  Before the
 * element opens, a CONTEXT query is answered with the context it will
 * take (the application's, else the process's) unless may_make is FALSE
 * (the CPU backend). */
void gst_cuda_video_filter_gpu_set_context (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstContext * context, gint device_id);
gboolean gst_cuda_video_filter_gpu_handle_context_query (GstCudaVideoFilterGpu
    * gpu, GstElement * element, GstQuery * query, gint device_id,
    gboolean may_make);

/* Finds the neighbours' or the application's context for device_id, or
 * takes the process's for it (device 0 for -1) and shares it; creates the
 * stream and the pinned allocator in it.  Does nothing when open.  FALSE
 * with error set when CUDA cannot be used. */
gboolean gst_cuda_video_filter_gpu_open (GstCudaVideoFilterGpu * gpu,
    GstElement * element, gint device_id, GError ** error);
/* Frees the stream, drops the allocator and the context (buffers still in
 * flight keep theirs alive). */
void gst_cuda_video_filter_gpu_close (GstCudaVideoFilterGpu * gpu);
gboolean gst_cuda_video_filter_gpu_is_open (GstCudaVideoFilterGpu * gpu);

/* Whether CUDA memory may be offered in caps: until opening was tried (pads
 * are linked in NULL), and afterwards when it worked. */
gboolean gst_cuda_video_filter_gpu_can_offer (GstCudaVideoFilterGpu * gpu);

/* Makes the context current on this thread / undoes it. */
gboolean gst_cuda_video_filter_gpu_push (GstCudaVideoFilterGpu * gpu);
void gst_cuda_video_filter_gpu_pop (GstCudaVideoFilterGpu * gpu);

/* The element's stream (a CUstream), and waiting for a stream (NULL: the
 * element's); the context is current. */
gpointer gst_cuda_video_filter_gpu_stream (GstCudaVideoFilterGpu * gpu);
gboolean gst_cuda_video_filter_gpu_sync (GstCudaVideoFilterGpu * gpu,
    gpointer stream, GError ** error);

/* Events on the stream, one for each frame in flight: record (the context
 * current) marks the work enqueued on the stream so far, wait (pushes the
 * context itself) returns once that work is done, with error set when it
 * failed.  slot: 0 to GST_CUDA_VIDEO_FILTER_GPU_EVENTS - 1. */
#define GST_CUDA_VIDEO_FILTER_GPU_EVENTS 2
gboolean gst_cuda_video_filter_gpu_record (GstCudaVideoFilterGpu * gpu,
    guint slot, GError ** error);
gboolean gst_cuda_video_filter_gpu_wait (GstCudaVideoFilterGpu * gpu,
    guint slot, GError ** error);

/* Whether caps are in CUDA memory. */
gboolean gst_cuda_video_filter_gpu_caps_are_cuda (GstCaps * caps);

/* caps with each structure in its own memory first, then in the other of
 * CUDA memory (when offer_cuda) and system memory. */
GstCaps *gst_cuda_video_filter_gpu_transform_caps (GstCaps * caps,
    gboolean offer_cuda);

/* Pools for the allocation query's caps: a CUDA pool of the context for
 * CUDA memory; else, when pinned, pinned host memory (leaving the query as
 * GstVideoFilter made it when none can be had).  held: buffers the
 * element keeps beyond what a plain filter does (the frame in flight),
 * added to the minimum of the pools proposed, and to the counts of the
 * pools decided that are the element's own.  decide_allocation returns
 * TRUE in *done when it configured the query whole. */
void gst_cuda_video_filter_gpu_propose_allocation (GstCudaVideoFilterGpu *
    gpu, GstElement * element, GstQuery * query, gboolean pinned,
    guint held);
gboolean gst_cuda_video_filter_gpu_decide_allocation (GstCudaVideoFilterGpu *
    gpu, GstElement * element, GstQuery * query, gboolean pinned,
    guint held, gboolean * done);

/* Whether every memory of inbuf and outbuf is CUDA memory of the context,
 * so the kernels can read and write them where they are. */
gboolean gst_cuda_video_filter_gpu_buffers_are_local (GstCudaVideoFilterGpu *
    gpu, GstBuffer * inbuf, GstBuffer * outbuf);

/* Whether every memory of inbuf and outbuf is page-locked host memory of
 * the context (GstCudaPinnedAllocator's), which the GPU reads and writes
 * by DMA while the CPU goes on. */
gboolean gst_cuda_video_filter_gpu_buffers_are_pinned (GstCudaVideoFilterGpu *
    gpu, GstBuffer * inbuf, GstBuffer * outbuf);

/* Orders stream (a frame's, or the element's) after the writes still
 * pending on buffer's CUDA memory on other streams (GStreamer 1.24 on;
 * nothing before), on the GPU.  Call with the context current, after
 * mapping buffer: the map may start an upload.  FALSE with error set when
 * CUDA fails. */
gboolean gst_cuda_video_filter_gpu_wait_for_writers (GstCudaVideoFilterGpu *
    gpu, GstBuffer * buffer, gpointer stream, GError ** error);

/* The element's writes into buffer's CUDA memory are done: clears the
 * flag that would make readers wait for its stream (1.24 on). */
void gst_cuda_video_filter_gpu_mark_done (GstCudaVideoFilterGpu * gpu,
    GstBuffer * buffer);

/* The stream a frame in CUDA memory is filtered on, GStreamer's way from
 * 1.24: where every memory of both buffers carries a stream, and the
 * output's share one, that one: its readers wait for it, and its next
 * writer writes on it.  NULL otherwise (and before 1.24): the element's
 * stream, and the frame is done before it goes downstream. */
gpointer gst_cuda_video_filter_gpu_frame_stream (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf);

/* After a frame's work was enqueued on stream (from frame_stream ()), the
 * context current: the input's stream, where upstream writes next, waits
 * on the GPU for that work.  The output goes downstream at once, its
 * memory flagged GST_CUDA_MEMORY_TRANSFER_NEED_SYNC by its map.  FALSE
 * with error set when CUDA fails. */
gboolean gst_cuda_video_filter_gpu_hand_over (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, gpointer stream, GError ** error);

/* gst_video_frame_map () with the planes in device memory; FALSE too
 * where a plane is not within one CUDA memory. */
gboolean gst_cuda_video_filter_gpu_map_frame (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buffer, GstMapFlags flags);

/* Whether caps negotiated in CUDA memory (on either pad) can be worked
 * on: there is a context, and CUDA memory can hold their frames; posts an
 * error saying why not. */
gboolean gst_cuda_video_filter_gpu_accept_caps (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstCaps * caps, const GstVideoInfo * info);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_GPU_H__ */
