/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's backends.  The choice (GstCudaVideoFilterChoice):
 * backend=cpu closes the CUDA side, backend=cuda opens it or fails with
 * an element error, backend=auto opens it or falls back to the CPU with
 * one warning a start; a switch between CUDA and the CPU while playing
 * reconfigures both pads (the pinned pools go with CUDA) and notifies
 * active-backend.  Then a frame's way to the subclass's filter vfunc on
 * the backend in use: in CUDA memory of the element's context on both
 * sides (the device path), mapped in host memory (page-locked on both
 * sides, or not), or on the CPU. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudavideofilterprivate.h"

#define GST_CAT_DEFAULT gst_cuda_video_filter_debug

/* Opens the CUDA backend unless it is open: the context and stream, then
 * the subclass's resources in that context. */
static gboolean
gst_cuda_video_filter_open_cuda (GstCudaVideoFilter * self, GError ** error)
{
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  gboolean ok;

  if (priv->choice.in_use == GST_CUDA_VIDEO_FILTER_IN_USE_CUDA)
    return TRUE;
  if (!gst_cuda_video_filter_gpu_open (priv->gpu, GST_ELEMENT (self),
          gst_cuda_video_filter_device_id (self), error))
    return FALSE;
  if (!gst_cuda_video_filter_gpu_push (priv->gpu))
    goto push_failed;
  ok = !klass->open_cuda || klass->open_cuda (self, error);
  gst_cuda_video_filter_gpu_pop (priv->gpu);

  if (ok)
    priv->choice.in_use = GST_CUDA_VIDEO_FILTER_IN_USE_CUDA;
  return ok;

  /* ERRORS */
push_failed:
  {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "Cannot make the CUDA context current.");
    return FALSE;
  }
}

/* Leaves no backend in use: the caller chooses the next. */
void
gst_cuda_video_filter_close_cuda (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  if (priv->choice.in_use != GST_CUDA_VIDEO_FILTER_IN_USE_CUDA)
    return;
  if (gst_cuda_video_filter_gpu_push (priv->gpu)) {
    /* a frame in flight may still use the subclass's buffers */
    gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, NULL);
    if (klass->close_cuda)
      klass->close_cuda (self);
    gst_cuda_video_filter_gpu_pop (priv->gpu);
  } else {
    GST_ERROR_OBJECT (self, "cannot push the CUDA context to free the "
        "filter's GPU resources");
  }
  priv->choice.in_use = GST_CUDA_VIDEO_FILTER_IN_USE_NONE;
}

gboolean
gst_cuda_video_filter_ensure_backend (GstCudaVideoFilter * self,
    GstCudaVideoFilterBackend backend)
{
  GstCudaVideoFilterChoice *choice = &GET_PRIV (self)->choice;
  GstCudaVideoFilterInUse was = choice->in_use;
  GError *error = NULL;
  gboolean use_cuda;

  if (was != GST_CUDA_VIDEO_FILTER_IN_USE_NONE && choice->made_for == backend)
    return TRUE;

  switch (backend) {
    case GST_CUDA_VIDEO_FILTER_BACKEND_CPU:
      gst_cuda_video_filter_close_cuda (self);
      use_cuda = FALSE;
      break;
    case GST_CUDA_VIDEO_FILTER_BACKEND_CUDA:
      if (!gst_cuda_video_filter_open_cuda (self, &error))
        goto no_cuda;
      use_cuda = TRUE;
      break;
    case GST_CUDA_VIDEO_FILTER_BACKEND_AUTO:
    default:
      use_cuda = gst_cuda_video_filter_open_cuda (self, &error);
      /* once a start, on the bus too: gst-launch-1.0 and applications
       * show it where the user looks */
      if (!use_cuda && !choice->warned_fallback) {
        GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("backend=auto: %s "
                "Filtering on the CPU, which is much slower.",
                error->message), (NULL));
        choice->warned_fallback = TRUE;
      }
      g_clear_error (&error);
      break;
  }

  choice->in_use = use_cuda ? GST_CUDA_VIDEO_FILTER_IN_USE_CUDA :
      GST_CUDA_VIDEO_FILTER_IN_USE_CPU;
  choice->made_for = backend;
  GST_INFO_OBJECT (self, "Filtering on the %s", use_cuda ?
      "GPU (CUDA)" : "CPU");
  gst_cuda_video_filter_set_active_backend (self, use_cuda ? "cuda" : "cpu");
  gst_cuda_video_filter_update_latency (self);

  /* Pinned pools go with the CUDA backend: when it comes or goes while
   * playing, upstream and we pick pools again. */
  if (was != GST_CUDA_VIDEO_FILTER_IN_USE_NONE &&
      (was == GST_CUDA_VIDEO_FILTER_IN_USE_CUDA) != use_cuda) {
    gst_base_transform_reconfigure_sink (GST_BASE_TRANSFORM (self));
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
  }
  return TRUE;

  /* ERRORS */
no_cuda:
  {
    choice->in_use = GST_CUDA_VIDEO_FILTER_IN_USE_NONE;
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("backend=cuda, but CUDA cannot be used: %s Use backend=auto to fall "
            "back to the CPU, or backend=cpu.", error->message), (NULL));
    g_clear_error (&error);
    return FALSE;
  }
}

GstFlowReturn
gst_cuda_video_filter_failed_on_gpu (GstCudaVideoFilter * self,
    const gchar * what, GError * error)
{
  GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
      ("Filtering %s on the GPU failed: %s.", what, error->message), (NULL));
  g_clear_error (&error);
  return GST_FLOW_ERROR;
}

/* The subclass reads and writes the planes where they are, on the
 * element's stream, once a write to the input still pending on another
 * stream is done (GStreamer 1.24 on).  From 1.24 the frame goes
 * downstream at once, its memory's stream ordered after the work on the
 * GPU; before, or for memory without a stream, the work is finished
 * before the frame goes (held in flight, or waited for). */
GstFlowReturn
gst_cuda_video_filter_filter_device (GstCudaVideoFilter * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstVideoFilter *vfilter = GST_VIDEO_FILTER (self);
  GstVideoFrame in_frame, out_frame;
  GError *error = NULL;
  GstFlowReturn ret;
  gpointer stream;

  if (!gst_cuda_video_filter_gpu_map_frame (&in_frame, &vfilter->in_info,
          inbuf, GST_MAP_READ)) {
    gst_cuda_video_filter_counts_dropped (&priv->counts, GST_ELEMENT (self),
        &vfilter->in_info, FALSE, "it cannot be mapped in CUDA memory, or "
        "a plane of it is not within one CUDA memory");
    return GST_BASE_TRANSFORM_FLOW_DROPPED;
  }
  if (!gst_cuda_video_filter_gpu_map_frame (&out_frame, &vfilter->out_info,
          outbuf, GST_MAP_WRITE)) {
    gst_video_frame_unmap (&in_frame);
    goto map_failed;
  }
  if (!gst_cuda_video_filter_gpu_push (priv->gpu)) {
    gst_video_frame_unmap (&out_frame);
    gst_video_frame_unmap (&in_frame);
    goto push_failed;
  }
  /* from 1.24 the output memory's stream, else the element's */
  stream = gst_cuda_video_filter_gpu_frame_stream (priv->gpu, inbuf, outbuf);
  /* after the input's map, which may have started an upload */
  if (!gst_cuda_video_filter_gpu_wait_for_writers (priv->gpu, inbuf,
          stream ? stream : gst_cuda_video_filter_gpu_stream (priv->gpu),
          &error)) {
    ret = gst_cuda_video_filter_failed_on_gpu (self, "CUDA memory", error);
  } else if (!stream) {
    ret = GST_CUDA_VIDEO_FILTER_GET_CLASS (self)->filter (self, &in_frame,
        &out_frame, GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE,
        gst_cuda_video_filter_gpu_stream (priv->gpu));
    ret = gst_cuda_video_filter_enqueued (self, ret, inbuf, outbuf,
        "CUDA memory");
  } else {
    /* readers wait for the stream: the frame goes at once */
    ret = GST_CUDA_VIDEO_FILTER_GET_CLASS (self)->filter (self, &in_frame,
        &out_frame, GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE, stream);
    if (ret == GST_FLOW_OK && !gst_cuda_video_filter_gpu_hand_over (priv->gpu,
            inbuf, stream, &error))
      ret = gst_cuda_video_filter_failed_on_gpu (self, "CUDA memory", error);
    if (ret != GST_FLOW_OK)
      gst_cuda_video_filter_gpu_sync (priv->gpu, stream, NULL);
  }
  gst_cuda_video_filter_gpu_pop (priv->gpu);
  gst_video_frame_unmap (&out_frame);
  gst_video_frame_unmap (&in_frame);
  return ret;

  /* ERRORS */
map_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot map an output buffer in CUDA memory."), (NULL));
    return GST_FLOW_ERROR;
  }
push_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Cannot make the CUDA context current."), (NULL));
    return GST_FLOW_ERROR;
  }
}

/* Frames mapped in host memory, the context current: page-locked on both
 * sides, enqueued on the stream as CUDA memory is; else synchronously. */
static GstFlowReturn
gst_cuda_video_filter_filter_host (GstCudaVideoFilter * self,
    GstVideoFrame * in_frame, GstVideoFrame * out_frame)
{
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  gpointer stream = gst_cuda_video_filter_gpu_stream (priv->gpu);
  GstFlowReturn ret;

  if (!gst_cuda_video_filter_gpu_buffers_are_pinned (priv->gpu,
          in_frame->buffer, out_frame->buffer))
    return klass->filter (self, in_frame, out_frame,
        GST_CUDA_VIDEO_FILTER_MEMORY_HOST, stream);
  ret = klass->filter (self, in_frame, out_frame,
      GST_CUDA_VIDEO_FILTER_MEMORY_PINNED, stream);
  return gst_cuda_video_filter_enqueued (self, ret, in_frame->buffer,
      out_frame->buffer, "a frame");
}

GstFlowReturn
gst_cuda_video_filter_transform_frame (GstVideoFilter * vfilter,
    GstVideoFrame * in_frame, GstVideoFrame * out_frame)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (vfilter);
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstFlowReturn ret;

  /* Identity settings reach here only between system and CUDA memory,
   * where the buffer cannot pass through: a copy. */
  if (priv->frame_identity)
    return gst_video_frame_copy (out_frame, in_frame) ? GST_FLOW_OK :
        GST_FLOW_ERROR;

  if (priv->choice.in_use != GST_CUDA_VIDEO_FILTER_IN_USE_CUDA)
    return klass->filter (self, in_frame, out_frame,
        GST_CUDA_VIDEO_FILTER_MEMORY_CPU, NULL);

  if (!gst_cuda_video_filter_gpu_push (priv->gpu))
    goto push_failed;
  ret = gst_cuda_video_filter_filter_host (self, in_frame, out_frame);
  gst_cuda_video_filter_gpu_pop (priv->gpu);
  return ret;

  /* ERRORS */
push_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Cannot make the CUDA context current."), (NULL));
    return GST_FLOW_ERROR;
  }
}
