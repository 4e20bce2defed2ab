/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_H__
#define __GST_CUDA_VIDEO_FILTER_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

typedef enum
{
  GST_CUDA_VIDEO_FILTER_BACKEND_AUTO,
  GST_CUDA_VIDEO_FILTER_BACKEND_CUDA,
  GST_CUDA_VIDEO_FILTER_BACKEND_CPU,
} GstCudaVideoFilterBackend;

#define GST_TYPE_CUDA_VIDEO_FILTER_BACKEND \
    (gst_cuda_video_filter_backend_get_type ())
GType gst_cuda_video_filter_backend_get_type (void);

/**
 * GST_CUDA_VIDEO_FILTER_FLOW_USE_HOST:
 *
 * Returned by #GstCudaVideoFilterClass.filter_cuda_pinned, having enqueued
 * nothing, for a frame it leaves to #GstCudaVideoFilterClass.filter_cuda_host.
 */
#define GST_CUDA_VIDEO_FILTER_FLOW_USE_HOST GST_FLOW_CUSTOM_SUCCESS_1

#define GST_TYPE_CUDA_VIDEO_FILTER (gst_cuda_video_filter_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaVideoFilter, gst_cuda_video_filter,
    GST, CUDA_VIDEO_FILTER, GstVideoFilter);

/**
 * GstCudaVideoFilterClass:
 * @prepare_frame: streaming thread, once per input buffer before it is
 *     filtered (after gst_object_sync_values ()): copy the properties the
 *     frame is filtered with under the object lock, and read what the
 *     buffer carries (its metas; not its memory).  Returns %TRUE when they leave
 *     frames unchanged: the base class then passes buffers through, or
 *     copies them where the memories differ.  Required.
 * @filter_cpu: filters in_frame into out_frame, both mapped in system
 *     memory, on the CPU.  Required.
 * @open_cuda: makes the subclass's GPU resources for the CUDA backend; the
 *     element's CUDA context is current.  %FALSE with @error set when they
 *     cannot be had.
 * @close_cuda: frees what @open_cuda made; the context is current.
 * @filter_cuda_host: filters frames mapped in host memory (system or
 *     pinned) on the GPU, synchronously; the context is current.
 * @filter_cuda_device: filters frames whose planes are mapped in device
 *     memory of the element's context, asynchronously on @stream (a
 *     CUstream); the context is current.
 * @filter_cuda_pinned: filters frames mapped in host memory whose every
 *     memory, in and out, is page-locked memory of the element's context
 *     (its pinned pools), asynchronously on @stream as @filter_cuda_device
 *     does: the GPU reads and writes them by DMA after it returns.  Returns
 *     %GST_CUDA_VIDEO_FILTER_FLOW_USE_HOST, having enqueued nothing, for a
 *     frame that needs @filter_cuda_host (work on the CPU after the GPU's).
 *     Optional.
 *
 * A CUDA video filter: the base class owns the backend choice, the one
 * #GstCudaContext (shared with the neighbours), the element's stream, the
 * caps with and without CUDA memory and the buffer pools; a subclass
 * only filters.  Every vfunc that returns a #GstFlowReturn posts its own
 * error message on failure.
 *
 * @filter_cuda_pinned and @filter_cuda_device only enqueue: the base class
 * decides when the frame is done.  Upstream live, it waits for the stream
 * before the buffer goes on; otherwise, in PLAYING, it keeps one frame in
 * flight, pushing frame n - 1 once frame n is enqueued and n - 1's work is
 * done, so that the GPU works while the streaming thread does GStreamer's
 * per-buffer work.  Either way nothing leaves the element unfinished.
 */
struct _GstCudaVideoFilterClass
{
  GstVideoFilterClass parent_class;

  gboolean (*prepare_frame) (GstCudaVideoFilter * filter, GstBuffer * inbuf);
  GstFlowReturn (*filter_cpu) (GstCudaVideoFilter * filter,
      GstVideoFrame * in_frame, GstVideoFrame * out_frame);

  gboolean (*open_cuda) (GstCudaVideoFilter * filter, GError ** error);
  void (*close_cuda) (GstCudaVideoFilter * filter);
  GstFlowReturn (*filter_cuda_host) (GstCudaVideoFilter * filter,
      GstVideoFrame * in_frame, GstVideoFrame * out_frame);
  GstFlowReturn (*filter_cuda_device) (GstCudaVideoFilter * filter,
      GstVideoFrame * in_frame, GstVideoFrame * out_frame, gpointer stream);
  GstFlowReturn (*filter_cuda_pinned) (GstCudaVideoFilter * filter,
      GstVideoFrame * in_frame, GstVideoFrame * out_frame, gpointer stream);

  gpointer _gst_reserved[GST_PADDING];
};

void gst_cuda_video_filter_class_add_pad_templates (GstCudaVideoFilterClass *
    klass, const gchar * formats);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_H__ */
