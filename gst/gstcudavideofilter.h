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
 * GstCudaVideoFilterMemory:
 * @GST_CUDA_VIDEO_FILTER_MEMORY_CPU: frames mapped in system memory,
 *     filtered on the CPU; done when the vfunc returns.
 * @GST_CUDA_VIDEO_FILTER_MEMORY_HOST: frames mapped in host memory,
 *     filtered on the GPU; done when the vfunc returns.
 * @GST_CUDA_VIDEO_FILTER_MEMORY_PINNED: frames mapped in host memory whose
 *     every memory, in and out, is page-locked memory of the element's
 *     context (its pinned pools): enqueued on the stream, the GPU reading
 *     and writing them by DMA after the vfunc returns.
 * @GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE: frames mapped in device memory of
 *     the element's context, enqueued on the stream.
 *
 * Where a frame's planes live, and so where and when it is filtered.
 */
typedef enum
{
  GST_CUDA_VIDEO_FILTER_MEMORY_CPU,
  GST_CUDA_VIDEO_FILTER_MEMORY_HOST,
  GST_CUDA_VIDEO_FILTER_MEMORY_PINNED,
  GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE,
} GstCudaVideoFilterMemory;

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
 * @filter: filters in_frame into out_frame, mapped as @memory says; for
 *     the GPU's kinds the element's CUDA context is current and @stream is
 *     a CUstream of it (the pinned and device kinds only enqueue there).
 *     Required.
 * @open_cuda: makes the subclass's GPU resources for the CUDA backend; the
 *     element's CUDA context is current.  %FALSE with @error set when they
 *     cannot be had.
 * @close_cuda: frees what @open_cuda made; the context is current.
 *
 * A CUDA video filter: the base class owns the backend choice, the one
 * #GstCudaContext (shared with the neighbours), the element's stream, the
 * caps with and without CUDA memory and the buffer pools; a subclass
 * only filters.  Every vfunc that returns a #GstFlowReturn posts its own
 * error message on failure.
 *
 * Pinned and device frames are only enqueued: the base class
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
  GstFlowReturn (*filter) (GstCudaVideoFilter * filter,
      GstVideoFrame * in_frame, GstVideoFrame * out_frame,
      GstCudaVideoFilterMemory memory, gpointer stream);

  gboolean (*open_cuda) (GstCudaVideoFilter * filter, GError ** error);
  void (*close_cuda) (GstCudaVideoFilter * filter);

  gpointer _gst_reserved[GST_PADDING];
};

void gst_cuda_video_filter_class_add_pad_templates (GstCudaVideoFilterClass *
    klass, const gchar * formats);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_H__ */
