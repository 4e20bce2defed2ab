/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's CUDA side in a build without CUDA (no nvcc, or
 * -Dcuda=disabled): nothing opens, so the element offers system memory
 * only and filters on the CPU. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudavideofiltergpu.h"

struct _GstCudaVideoFilterGpu
{
  gboolean unused;
};

GstCudaVideoFilterGpu *
gst_cuda_video_filter_gpu_new (void)
{
  return g_new0 (GstCudaVideoFilterGpu, 1);
}

void
gst_cuda_video_filter_gpu_free (GstCudaVideoFilterGpu * gpu)
{
  g_free (gpu);
}

GstCaps *
gst_cuda_video_filter_gpu_template_caps (const gchar * formats)
{
  gchar *s = g_strdup_printf ("video/x-raw, format = (string) %s, "
      "width = " GST_VIDEO_SIZE_RANGE ", height = " GST_VIDEO_SIZE_RANGE
      ", framerate = " GST_VIDEO_FPS_RANGE, formats);
  GstCaps *caps = gst_caps_from_string (s);

  g_free (s);
  return caps;
}

void
gst_cuda_video_filter_gpu_set_context (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstContext * context, gint device_id)
{
}

gboolean
gst_cuda_video_filter_gpu_handle_context_query (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gint device_id, gboolean may_make)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_open (GstCudaVideoFilterGpu * gpu,
    GstElement * element, gint device_id, GError ** error)
{
  /* the reason configure found (meson.build) */
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      "This build of the plugin has no CUDA support: %s.",
      CUCONV_NO_CUDA_WHY);
  return FALSE;
}

void
gst_cuda_video_filter_gpu_close (GstCudaVideoFilterGpu * gpu)
{
}

gboolean
gst_cuda_video_filter_gpu_is_open (GstCudaVideoFilterGpu * gpu)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_can_offer (GstCudaVideoFilterGpu * gpu)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_push (GstCudaVideoFilterGpu * gpu)
{
  return FALSE;
}

void
gst_cuda_video_filter_gpu_pop (GstCudaVideoFilterGpu * gpu)
{
}

gpointer
gst_cuda_video_filter_gpu_stream (GstCudaVideoFilterGpu * gpu)
{
  return NULL;
}

gboolean
gst_cuda_video_filter_gpu_sync (GstCudaVideoFilterGpu * gpu, gpointer stream,
    GError ** error)
{
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_record (GstCudaVideoFilterGpu * gpu, guint slot,
    GError ** error)
{
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_wait (GstCudaVideoFilterGpu * gpu, guint slot,
    GError ** error)
{
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_caps_are_cuda (GstCaps * caps)
{
  return FALSE;
}

GstCaps *
gst_cuda_video_filter_gpu_transform_caps (GstCaps * caps, gboolean offer_cuda)
{
  return gst_caps_ref (caps);
}

void
gst_cuda_video_filter_gpu_propose_allocation (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gboolean pinned, guint held)
{
}

gboolean
gst_cuda_video_filter_gpu_decide_allocation (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gboolean pinned, guint held,
    gboolean * done)
{
  *done = FALSE;
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_buffers_are_local (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_buffers_are_pinned (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_wait_for_writers (GstCudaVideoFilterGpu * gpu,
    GstBuffer * buffer, gpointer stream, GError ** error)
{
  return TRUE;
}

void
gst_cuda_video_filter_gpu_mark_done (GstCudaVideoFilterGpu * gpu,
    GstBuffer * buffer)
{
}

gpointer
gst_cuda_video_filter_gpu_frame_stream (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  return NULL;
}

gboolean
gst_cuda_video_filter_gpu_hand_over (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, gpointer stream, GError ** error)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_map_frame (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buffer, GstMapFlags flags)
{
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_accept_caps (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstCaps * caps, const GstVideoInfo * info)
{
  return FALSE;                 /* no CUDA memory is ever negotiated */
}
