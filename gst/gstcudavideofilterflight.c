/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's frame in flight (docs/design.md, "One frame in
 * flight").  A frame whose GPU work is only enqueued on the element's
 * stream is held, and the frame held before goes out once its event says
 * the GPU is done with it.  Here: whether a frame may be held, what the
 * pools and the LATENCY query count for it, the order in which frames and
 * serialized events and queries leave, the idle watch that pushes a frame
 * when nothing follows it, and the drop at a flush or stop.  All of it
 * runs under the sink pad's stream lock, in the streaming thread or the
 * idle watch's (or in stop (), once neither runs). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilterprivate.h"

#define GST_CAT_DEFAULT gst_cuda_video_filter_debug

/* How long the streaming thread may stay away with a frame held before
 * the element's own thread pushes it: far above the gap between frames
 * that arrive back to back (tens of microseconds), where holding pays. */
#define IDLE_RELEASE_US 1000

/* Whether this frame may stay in flight: not behind a live source, where
 * it would add a frame interval of latency, and not while prerolling,
 * where a sink waiting for its first frame may wait for it alone. */
static gboolean
gst_cuda_video_filter_may_hold (GstCudaVideoFilter * self)
{
  gboolean playing;

  if (GET_PRIV (self)->flight.upstream_live ||
      GST_PAD_MODE (GST_BASE_TRANSFORM_SRC_PAD (self)) != GST_PAD_MODE_PUSH)
    return FALSE;
  GST_OBJECT_LOCK (self);
  playing = GST_STATE (self) == GST_STATE_PLAYING;
  GST_OBJECT_UNLOCK (self);
  return playing;
}

guint
gst_cuda_video_filter_held_buffers (GstCudaVideoFilter * self)
{
  return GET_PRIV (self)->flight.upstream_live ? 0 : 1;
}

/* Waits for held's frame and hands its output over in *outbuf, or posts
 * an element error when the GPU failed on it. */
static GstFlowReturn
gst_cuda_video_filter_release (GstCudaVideoFilter * self,
    GstCudaVideoFilterHeld * held, GstBuffer ** outbuf)
{
  GError *error = NULL;
  gboolean done;

  done = gst_cuda_video_filter_gpu_wait (GET_PRIV (self)->gpu, held->event,
      &error);
  gst_clear_buffer (&held->in);
  if (!done) {
    gst_clear_buffer (&held->out);
    return gst_cuda_video_filter_failed_on_gpu (self, held->what, error);
  }
  gst_cuda_video_filter_gpu_mark_done (GET_PRIV (self)->gpu, held->out);
  *outbuf = g_steal_pointer (&held->out);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_cuda_video_filter_push (GstCudaVideoFilter * self, GstBuffer * buf)
{
  gst_cuda_video_filter_counts_pushed (&GET_PRIV (self)->counts,
      GST_ELEMENT (self));
  return gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), buf);
}

/* The streaming thread leaves with a frame held: the idle watch pushes it
 * unless the thread comes back soon. */
static void
gst_cuda_video_filter_watch (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;

  if (flight->held.out)
    gst_cuda_video_filter_idle_arm (flight->idle);
}

static void
gst_cuda_video_filter_unwatch (GstCudaVideoFilter * self)
{
  gst_cuda_video_filter_idle_disarm (GET_PRIV (self)->flight.idle);
}

GstFlowReturn
gst_cuda_video_filter_drain (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;
  GstCudaVideoFilterHeld held = flight->held;
  GstFlowReturn ret = GST_FLOW_OK;
  GstBuffer *out = NULL;

  gst_cuda_video_filter_unwatch (self);
  if (held.out) {
    GST_LOG_OBJECT (self, "draining the frame in flight");
    memset (&flight->held, 0, sizeof (flight->held));
    ret = gst_cuda_video_filter_release (self, &held, &out);
    if (ret == GST_FLOW_OK)
      ret = gst_cuda_video_filter_push (self, out);
  }
  if (ret == GST_FLOW_OK && flight->next_out)
    ret = gst_cuda_video_filter_push (self,
        g_steal_pointer (&flight->next_out));
  gst_clear_buffer (&flight->next_out);
  return ret;
}

/* Forgets the frame held without pushing it (a flush, stop): once the GPU
 * is done with its buffers, which it may still read and write. */
static void
gst_cuda_video_filter_drop (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterFlight *flight = &priv->flight;

  gst_cuda_video_filter_unwatch (self);
  if (flight->held.out) {
    GST_DEBUG_OBJECT (self, "dropping the frame in flight");
    gst_cuda_video_filter_gpu_wait (priv->gpu, flight->held.event, NULL);
  }
  gst_clear_buffer (&flight->held.in);
  gst_clear_buffer (&flight->held.out);
  gst_clear_buffer (&flight->next_out);
  flight->idle_ret = GST_FLOW_OK;
}

/* The idle watch's thread: the streaming thread stayed away with a frame
 * held.  Under the stream lock, as the streaming thread pushes; what the
 * push returns goes upstream with the next buffer. */
static void
gst_cuda_video_filter_idle_release (gpointer data, guint serial)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (data);
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;
  GstPad *sinkpad = GST_BASE_TRANSFORM_SINK_PAD (self);
  GstFlowReturn ret;

  GST_PAD_STREAM_LOCK (sinkpad);
  if (gst_cuda_video_filter_idle_is_current (flight->idle, serial)) {
    GST_DEBUG_OBJECT (self, "no frame for a while: pushing the one in flight");
    if (flight->held.out)
      gst_cuda_video_filter_counts_idle_pushed (&GET_PRIV (self)->counts,
          GST_ELEMENT (self));
    ret = gst_cuda_video_filter_drain (self);
    if (ret != GST_FLOW_OK)
      flight->idle_ret = ret;
  }
  GST_PAD_STREAM_UNLOCK (sinkpad);
}

void
gst_cuda_video_filter_flight_init (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;

  flight->upstream_live = TRUE;
  flight->frame_duration = GST_CLOCK_TIME_NONE;
  flight->idle = gst_cuda_video_filter_idle_new ("cudafilter-idle",
      gst_cuda_video_filter_idle_release, self, IDLE_RELEASE_US);
}

void
gst_cuda_video_filter_flight_free (GstCudaVideoFilter * self)
{
  gst_cuda_video_filter_idle_free (GET_PRIV (self)->flight.idle);
}

void
gst_cuda_video_filter_flight_start (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;

  flight->upstream_live = TRUE;
  flight->frame_duration = GST_CLOCK_TIME_NONE;
}

void
gst_cuda_video_filter_flight_stop (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;

  /* the watch's thread may be pushing: it ends first */
  gst_cuda_video_filter_idle_stop (flight->idle);
  gst_cuda_video_filter_drop (self);
  flight->upstream_live = TRUE;
}

/* Whether upstream is live.  Unanswered, it is taken as live: no frame is
 * held, as before. */
static gboolean
gst_cuda_video_filter_upstream_is_live (GstCudaVideoFilter * self)
{
  GstQuery *query = gst_query_new_latency ();
  gboolean live = TRUE;

  if (gst_pad_peer_query (GST_BASE_TRANSFORM_SINK_PAD (self), query))
    gst_query_parse_latency (query, &live, NULL, NULL);
  gst_query_unref (query);
  return live;
}

void
gst_cuda_video_filter_flight_set_info (GstCudaVideoFilter * self,
    const GstVideoInfo * in_info)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;

  /* Decided once a stream, before the pools are: a frame in flight only
   * behind a source that is not live. */
  flight->upstream_live = gst_cuda_video_filter_upstream_is_live (self);
  flight->frame_duration = GST_VIDEO_INFO_FPS_N (in_info) > 0 &&
      GST_VIDEO_INFO_FPS_D (in_info) > 0 ?
      gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (in_info),
      GST_VIDEO_INFO_FPS_N (in_info)) : GST_CLOCK_TIME_NONE;
  GST_INFO_OBJECT (self, "upstream is %slive: %s", flight->upstream_live ?
      "" : "not ", flight->upstream_live ? "every frame is finished before "
      "it is pushed" : "one frame may be in flight");
  gst_cuda_video_filter_update_latency (self);
}

/* What the LATENCY query adds: a frame's duration while frames may be
 * held (the CUDA backend, upstream not live), nothing when the framerate
 * is unknown (0/1: no duration to add). */
void
gst_cuda_video_filter_update_latency (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterFlight *flight = &priv->flight;
  GstClockTime latency = 0;
  gboolean changed;

  if (!flight->upstream_live &&
      priv->choice.in_use == GST_CUDA_VIDEO_FILTER_IN_USE_CUDA &&
      GST_CLOCK_TIME_IS_VALID (flight->frame_duration))
    latency = flight->frame_duration;

  GST_OBJECT_LOCK (self);
  changed = flight->hold_latency != latency;
  flight->hold_latency = latency;
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return;
  GST_DEBUG_OBJECT (self, "latency of the frame in flight: %" GST_TIME_FORMAT,
      GST_TIME_ARGS (latency));
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
}

gboolean
gst_cuda_video_filter_query_latency (GstCudaVideoFilter * self,
    GstQuery * query)
{
  GstClockTime min, max, add;
  gboolean live;

  if (!gst_cuda_video_filter_get_parent_class ()->query (GST_BASE_TRANSFORM
          (self), GST_PAD_SRC, query))
    return FALSE;
  GST_OBJECT_LOCK (self);
  add = GET_PRIV (self)->flight.hold_latency;
  GST_OBJECT_UNLOCK (self);
  if (add == 0)
    return TRUE;

  gst_query_parse_latency (query, &live, &min, &max);
  gst_query_set_latency (query, live, min + add,
      GST_CLOCK_TIME_IS_VALID (max) ? max + add : max);
  return TRUE;
}

/* Events keep their order with the frames: the one held goes out before
 * any serialized event (EOS, caps, segment, gap, ...).  A flush drops it:
 * at FLUSH_STOP, as FLUSH_START comes outside the streaming thread, and
 * nothing can be pushed between the two. */
gboolean
gst_cuda_video_filter_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstFlowReturn ret;

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP) {
    gst_cuda_video_filter_drop (self);
  } else if (GST_EVENT_IS_SERIALIZED (event)) {
    ret = gst_cuda_video_filter_drain (self);
    if (ret != GST_FLOW_OK)
      GST_DEBUG_OBJECT (self, "the frame in flight before %s: %s",
          GST_EVENT_TYPE_NAME (event), gst_flow_get_name (ret));
  }
  return gst_cuda_video_filter_get_parent_class ()->sink_event (trans, event);
}

/* With a frame in flight allowed, an event marks the frame and its input
 * is kept for generate_output (); else the stream is waited for.  On any
 * failure what was enqueued is finished before the buffers go back. */
GstFlowReturn
gst_cuda_video_filter_enqueued (GstCudaVideoFilter * self, GstFlowReturn ret,
    GstBuffer * inbuf, GstBuffer * outbuf, const gchar * what)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterFlight *flight = &priv->flight;
  GstCudaVideoFilterHeld *queued = &flight->queued;
  GError *error = NULL;

  if (ret != GST_FLOW_OK) {
    gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, NULL);
    return ret;
  }
  if (!gst_cuda_video_filter_may_hold (self)) {
    if (!gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, &error))
      return gst_cuda_video_filter_failed_on_gpu (self, what, error);
    gst_cuda_video_filter_gpu_mark_done (priv->gpu, outbuf);
    return GST_FLOW_OK;
  }
  /* the frame held, if any, has the other event */
  if (!gst_cuda_video_filter_gpu_record (priv->gpu, flight->next_event,
          &error)) {
    gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, NULL);
    return gst_cuda_video_filter_failed_on_gpu (self, what, error);
  }
  queued->in = gst_buffer_ref (inbuf);
  queued->event = flight->next_event;
  queued->what = what;
  flight->next_event =
      (flight->next_event + 1) % GST_CUDA_VIDEO_FILTER_GPU_EVENTS;
  return GST_FLOW_OK;
}

/* Counts every buffer received.  GstBaseTransform's QoS skips a late one
 * here, before prepare_output_buffer (): it then queues nothing and
 * returns GST_BASE_TRANSFORM_FLOW_DROPPED.  Before it renegotiates (new
 * caps downstream, new pools), the frame in flight goes out. */
GstFlowReturn
gst_cuda_video_filter_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (trans);
  GstFlowReturn ret = priv->flight.idle_ret;

  gst_cuda_video_filter_unwatch (self);
  priv->flight.idle_ret = GST_FLOW_OK;
  if (ret == GST_FLOW_OK &&
      gst_pad_needs_reconfigure (GST_BASE_TRANSFORM_SRC_PAD (trans)))
    ret = gst_cuda_video_filter_drain (self);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (input);
    gst_cuda_video_filter_counts_received (&priv->counts,
        GST_ELEMENT (trans), FALSE);
    return ret;
  }
  ret = gst_cuda_video_filter_get_parent_class ()->submit_input_buffer (trans,
      is_discont, input);
  /* nothing comes of a buffer QoS skipped */
  if (ret != GST_FLOW_OK)
    gst_cuda_video_filter_watch (self);
  /* input is only compared, not used: it may be gone */
  if (ret == GST_FLOW_OK || ret == GST_BASE_TRANSFORM_FLOW_DROPPED)
    gst_cuda_video_filter_counts_received (&priv->counts,
        GST_ELEMENT (trans), trans->queued_buf != input);
  return ret;
}

/* The frame just made, in *outbuf, in order with the one held: enqueued,
 * it is held and the one before goes out in its place (nothing when there
 * was none); finished already, it goes out after the held one, which
 * takes its place now. */
static GstFlowReturn
gst_cuda_video_filter_order (GstCudaVideoFilter * self, GstBuffer ** outbuf)
{
  GstCudaVideoFilterFlight *flight = &GET_PRIV (self)->flight;
  GstCudaVideoFilterHeld prev = flight->held;
  GstFlowReturn ret;

  if (flight->queued.in) {
    flight->held = flight->queued;
    flight->held.out = *outbuf;
    memset (&flight->queued, 0, sizeof (flight->queued));
  } else if (prev.out) {
    flight->next_out = *outbuf;
    memset (&flight->held, 0, sizeof (flight->held));
  } else {
    return GST_FLOW_OK;
  }
  *outbuf = NULL;
  if (!prev.out)
    return GST_FLOW_OK;
  ret = gst_cuda_video_filter_release (self, &prev, outbuf);
  if (ret != GST_FLOW_OK)
    gst_clear_buffer (&flight->next_out);
  return ret;
}

/* Filters the frame submitted and hands over what goes downstream now, in
 * order (gst_cuda_video_filter_order ()); GstBaseTransform calls it again
 * while it returns a buffer.  Counts the buffers that go downstream. */
GstFlowReturn
gst_cuda_video_filter_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (trans);
  GstFlowReturn ret;

  if (priv->flight.next_out) {
    *outbuf = g_steal_pointer (&priv->flight.next_out);
    ret = GST_FLOW_OK;
  } else {
    ret = gst_cuda_video_filter_get_parent_class ()->generate_output (trans,
        outbuf);
    if (ret == GST_FLOW_OK && *outbuf)
      ret = gst_cuda_video_filter_order (GST_CUDA_VIDEO_FILTER (trans),
          outbuf);
    /* the input of a frame that goes nowhere is not read any more: on
     * failure the stream was waited for */
    gst_clear_buffer (&priv->flight.queued.in);
  }
  if (ret == GST_FLOW_OK && *outbuf)
    gst_cuda_video_filter_counts_pushed (&priv->counts, GST_ELEMENT (trans));
  else
    /* nothing more this time: the streaming thread leaves */
    gst_cuda_video_filter_watch (GST_CUDA_VIDEO_FILTER (trans));
  return ret;
}
