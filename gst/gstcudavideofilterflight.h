/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_FLIGHT_H__
#define __GST_CUDA_VIDEO_FILTER_FLIGHT_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

#include "gstcudavideofilter.h"
#include "gstcudavideofilteridle.h"

G_BEGIN_DECLS

/* GstCudaVideoFilter's frame in flight (docs/design.md, "One frame in
 * flight"): which frames may stay enqueued on the GPU while the streaming
 * thread goes on, and when each goes downstream. */

/* A filtered frame not pushed yet: its GPU work was enqueued on the
 * element's stream, and is done once event is. */
typedef struct
{
  GstBuffer *out;               /* NULL: none */
  GstBuffer *in;                /* the GPU may still read it */
  guint event;                  /* of GST_CUDA_VIDEO_FILTER_GPU_EVENTS */
  const gchar *what;            /* the frame, for the error message */
} GstCudaVideoFilterHeld;

/* Under the sink pad's stream lock (the streaming thread, or the idle
 * watch's), but hold_latency. */
typedef struct
{
  gboolean upstream_live;       /* as upstream's LATENCY answer says */
  GstClockTime frame_duration;  /* from the framerate; NONE: unknown */
  GstCudaVideoFilterHeld held;  /* the frame in flight */
  GstCudaVideoFilterHeld queued;        /* enqueued by transform () */
  GstBuffer *next_out;          /* done at once, pushed after held */
  guint next_event;
  GstCudaVideoFilterIdle *idle; /* its thread runs from a hold to stop () */
  GstFlowReturn idle_ret;       /* of a push by the idle watch */
  GstClockTime hold_latency;    /* under the object lock: what LATENCY adds */
} GstCudaVideoFilterFlight;

/* From the element's init and finalize: nothing held, upstream taken as
 * live, the idle watch made (its thread starts with the first hold). */
void gst_cuda_video_filter_flight_init (GstCudaVideoFilter * self);
void gst_cuda_video_filter_flight_free (GstCudaVideoFilter * self);

/* From start (): upstream taken as live, no framerate known. */
void gst_cuda_video_filter_flight_start (GstCudaVideoFilter * self);

/* From stop (): the idle watch's thread ended, the frame held dropped,
 * upstream taken as live again. */
void gst_cuda_video_filter_flight_stop (GstCudaVideoFilter * self);

/* From set_info (), once a stream and before the pools are decided:
 * whether upstream is live, and the frame duration of in_info. */
void gst_cuda_video_filter_flight_set_info (GstCudaVideoFilter * self,
    const GstVideoInfo * in_info);

/* The buffers the element keeps beyond a plain filter's, for the pools. */
guint gst_cuda_video_filter_held_buffers (GstCudaVideoFilter * self);

/* Recomputes what the LATENCY query adds and, when it changed, posts a
 * latency message; after the backend or upstream's liveness changed. */
void gst_cuda_video_filter_update_latency (GstCudaVideoFilter * self);

/* Answers a LATENCY query on the source pad: upstream's latency, and a
 * frame more while one may be held. */
gboolean gst_cuda_video_filter_query_latency (GstCudaVideoFilter * self,
    GstQuery * query);

/* Pushes the frame held, and one done behind it, now.  Under the sink
 * pad's stream lock. */
GstFlowReturn gst_cuda_video_filter_drain (GstCudaVideoFilter * self);

/* After the subclass enqueued a frame's work on the stream (the context
 * current, ret what it returned): keeps the frame for
 * gst_cuda_video_filter_generate_output () or waits for it.  Returns what
 * goes upstream, posting an error when the GPU failed. */
GstFlowReturn gst_cuda_video_filter_enqueued (GstCudaVideoFilter * self,
    GstFlowReturn ret, GstBuffer * inbuf, GstBuffer * outbuf,
    const gchar * what);

/* The GstBaseTransform vfuncs that keep frames and events in order. */
gboolean gst_cuda_video_filter_sink_event (GstBaseTransform * trans,
    GstEvent * event);
GstFlowReturn gst_cuda_video_filter_submit_input_buffer (GstBaseTransform *
    trans, gboolean is_discont, GstBuffer * input);
GstFlowReturn gst_cuda_video_filter_generate_output (GstBaseTransform *
    trans, GstBuffer ** outbuf);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_FLIGHT_H__ */
