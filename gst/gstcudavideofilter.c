/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:gstcudavideofilter
 * @title: GstCudaVideoFilter
 * @short_description: Base class for video filters running on CUDA or the CPU
 *
 * An abstract #GstVideoFilter for filters with a CUDA and a CPU
 * implementation, in the shape of nvcodec's GstCudaBaseTransform.  It owns
 * #GstCudaVideoFilter:backend (auto, cuda, cpu; auto falls back to the CPU
 * with one warning), the read-only #GstCudaVideoFilter:active-backend,
 * #GstCudaVideoFilter:cuda-device-id and the one #GstCudaContext of the
 * element, shared with its neighbours (nvh264dec, cudaupload, ...) through
 * #GstContext.  Every GPU resource of the element is made and freed with
 * that context pushed: the subclass's (in #GstCudaVideoFilterClass.open_cuda
 * and close_cuda), the element's stream, pinned host memory, CUDA pools.
 *
 * Both pads take system memory and, in a CUDA build, CUDA memory
 * (memory:CUDAMemory).  Frames in CUDA memory of the context on both sides
 * are filtered where they are, on the element's stream; any other mix is
 * mapped to host memory by #GstVideoFilter.  On the CUDA backend the
 * element proposes upstream a pool of pinned host memory and filters into
 * pinned buffers, which the GPU reads and writes by DMA.
 *
 * Frames whose GPU work is only enqueued (CUDA memory, pinned memory on
 * both sides) are held one at a time when upstream is not live: frame
 * n - 1 is pushed once frame n is enqueued and n - 1 is done, so that the
 * GPU filters while the streaming thread does the rest.  The frame held
 * goes out before any serialized event or query (EOS, caps, segment, gap,
 * allocation, drain) and before renegotiation, and is dropped by a flush;
 * the LATENCY query counts it (one frame duration).  Behind a live source
 * every frame is finished before it is pushed, as a held frame would add
 * a frame interval of latency.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilter.h"
#include "gstcudavideofiltergpu.h"
#include "gstcudavideofilteridle.h"
#include "gstcudavideofilterinput.h"

GST_DEBUG_CATEGORY (gst_cuda_video_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_video_filter_debug

enum
{
  PROP_0,
  PROP_BACKEND,
  PROP_ACTIVE_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_STATS,
  N_PROPERTIES
};

#define DEFAULT_BACKEND GST_CUDA_VIDEO_FILTER_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1

/* How long the streaming thread may stay away with a frame held before
 * the element's own thread pushes it: far above the gap between frames
 * that arrive back to back (tens of microseconds), where holding pays. */
#define IDLE_RELEASE_US 1000

static GParamSpec *properties[N_PROPERTIES];

/* A filtered frame not pushed yet: its GPU work was enqueued on the
 * element's stream, and is done once event is. */
typedef struct
{
  GstBuffer *out;               /* NULL: none */
  GstBuffer *in;                /* the GPU may still read it */
  guint event;                  /* of GST_CUDA_VIDEO_FILTER_GPU_EVENTS */
  const gchar *what;            /* the frame, for the error message */
} GstCudaVideoFilterHeld;

typedef struct
{
  /* Properties, under the object lock. */
  GstCudaVideoFilterBackend backend;
  gint device_id;               /* changed in READY only */
  const gchar *active_backend;

  /* Streaming thread only (and start/stop, which never run alongside). */
  GstCudaVideoFilterGpu *gpu;
  GstCudaVideoFilterBackend frame_backend;
  gboolean frame_identity;      /* this frame's settings change nothing */
  gboolean engine_valid;        /* use_cuda matches engine_backend */
  GstCudaVideoFilterBackend engine_backend;
  gboolean use_cuda;
  gboolean cuda_open;           /* the subclass's open_cuda () succeeded */
  gboolean warned_fallback;
  gboolean in_cuda, out_cuda;   /* negotiated memory:CUDAMemory */
  GstCudaVideoFilterCounts counts;     /* the stats property */

  /* One frame in flight, under the sink pad's stream lock (the streaming
   * thread, or the idle watch's). */
  gboolean upstream_live;       /* as upstream's LATENCY answer says */
  GstClockTime frame_duration;  /* from the framerate; NONE: unknown */
  GstCudaVideoFilterHeld held;  /* the frame in flight */
  GstCudaVideoFilterHeld queued;        /* enqueued by transform () */
  GstBuffer *next_out;          /* done at once, pushed after held */
  guint next_event;
  GstCudaVideoFilterIdle *idle; /* its thread runs from a hold to stop () */
  GstFlowReturn idle_ret;       /* of a push by the idle watch */
  GstClockTime hold_latency;    /* under the object lock: what LATENCY adds */
} GstCudaVideoFilterPrivate;

static void gst_cuda_video_filter_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_cuda_video_filter_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static void gst_cuda_video_filter_finalize (GObject * object);
static void gst_cuda_video_filter_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_cuda_video_filter_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static gboolean gst_cuda_video_filter_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static void gst_cuda_video_filter_idle_release (gpointer data, guint serial);
static GstCaps *gst_cuda_video_filter_transform_caps (GstBaseTransform *
    trans, GstPadDirection direction, GstCaps * caps, GstCaps * filter);
static gboolean gst_cuda_video_filter_start (GstBaseTransform * trans);
static gboolean gst_cuda_video_filter_stop (GstBaseTransform * trans);
static void gst_cuda_video_filter_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer);
static GstFlowReturn gst_cuda_video_filter_prepare_output_buffer
    (GstBaseTransform * trans, GstBuffer * inbuf, GstBuffer ** outbuf);
static GstFlowReturn gst_cuda_video_filter_submit_input_buffer
    (GstBaseTransform * trans, gboolean is_discont, GstBuffer * input);
static GstFlowReturn gst_cuda_video_filter_generate_output (GstBaseTransform *
    trans, GstBuffer ** outbuf);
static gboolean gst_cuda_video_filter_transform_meta (GstBaseTransform *
    trans, GstBuffer * outbuf, GstMeta * meta, GstBuffer * inbuf);
static GstFlowReturn gst_cuda_video_filter_transform (GstBaseTransform *
    trans, GstBuffer * inbuf, GstBuffer * outbuf);
static gboolean gst_cuda_video_filter_propose_allocation (GstBaseTransform *
    trans, GstQuery * decide_query, GstQuery * query);
static gboolean gst_cuda_video_filter_decide_allocation (GstBaseTransform *
    trans, GstQuery * query);
static gboolean gst_cuda_video_filter_set_info (GstVideoFilter * vfilter,
    GstCaps * incaps, GstVideoInfo * in_info, GstCaps * outcaps,
    GstVideoInfo * out_info);
static GstFlowReturn gst_cuda_video_filter_transform_frame (GstVideoFilter *
    vfilter, GstVideoFrame * in_frame, GstVideoFrame * out_frame);

#define gst_cuda_video_filter_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaVideoFilter,
    gst_cuda_video_filter, GST_TYPE_VIDEO_FILTER);

#define GET_PRIV(self) \
    ((GstCudaVideoFilterPrivate *) \
    gst_cuda_video_filter_get_instance_private (GST_CUDA_VIDEO_FILTER (self)))

GType
gst_cuda_video_filter_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_VIDEO_FILTER_BACKEND_AUTO,
        "CUDA when a device is usable, else the CPU (with a warning)", "auto"},
    {GST_CUDA_VIDEO_FILTER_BACKEND_CUDA,
          "CUDA, on the device cuda-device-id picks; fail to start when it "
          "is not usable", "cuda"},
    {GST_CUDA_VIDEO_FILTER_BACKEND_CPU,
        "The CPU implementation", "cpu"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaVideoFilterBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_cuda_video_filter_class_init (GstCudaVideoFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *vfilter_class = GST_VIDEO_FILTER_CLASS (klass);

  gobject_class->set_property = gst_cuda_video_filter_set_property;
  gobject_class->get_property = gst_cuda_video_filter_get_property;
  gobject_class->finalize = gst_cuda_video_filter_finalize;

  properties[PROP_BACKEND] = g_param_spec_enum ("backend", "Backend",
      "Where frames are filtered; a change while PLAYING applies from the "
      "next frame (see active-backend for the one in use)",
      GST_TYPE_CUDA_VIDEO_FILTER_BACKEND, DEFAULT_BACKEND,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING |
      GST_PARAM_CONTROLLABLE);
  properties[PROP_ACTIVE_BACKEND] =
      g_param_spec_string ("active-backend", "Active backend",
      "The backend filtering frames: \"cuda\" or \"cpu\", \"none\" until the "
      "element is started. Notified when it changes", "none",
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CUDA_DEVICE_ID] = g_param_spec_int ("cuda-device-id",
      "CUDA device id", "The CUDA device to filter on (0-based, as "
      "nvidia-smi numbers them), set in NULL or READY. -1 = automatic: the "
      "device of the CUDA context shared by neighbouring CUDA elements "
      "(nvh264dec, cudaupload, ...), else device 0", -1, G_MAXINT,
      DEFAULT_CUDA_DEVICE_ID,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Counts since the element started, in a GstStructure named "
      "\"<element factory>-stats\": frames-in (buffers received), "
      "frames-out (buffers pushed; on the GPU behind a source that is not "
      "live, one behind until the stream ends, as a frame is held while "
      "the GPU filters it), dropped-short (buffers dropped because "
      "they are too small for a frame of their caps), dropped-invalid "
      "(buffers dropped because their video meta does not describe a frame "
      "of their caps, or they cannot be mapped), dropped-qos (buffers "
      "skipped as too late by QoS, each also posted as a QoS message; the "
      "qos property turns that off)", GST_TYPE_STRUCTURE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_set_context);

  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_query);
  trans_class->sink_event =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_sink_event);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_transform_caps);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_stop);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_before_transform);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_prepare_output_buffer);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_submit_input_buffer);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_generate_output);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_transform_meta);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_transform);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_decide_allocation);
  /* Passthrough means no work at all, not even a look at the buffer. */
  trans_class->transform_ip_on_passthrough = FALSE;

  vfilter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_set_info);
  vfilter_class->transform_frame =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_transform_frame);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_video_filter_debug, "cudavideofilter", 0,
      "CUDA video filter base class");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VIDEO_FILTER_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_VIDEO_FILTER, 0);
}

static void
gst_cuda_video_filter_init (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  priv->backend = DEFAULT_BACKEND;
  priv->device_id = DEFAULT_CUDA_DEVICE_ID;
  priv->active_backend = "none";
  priv->gpu = gst_cuda_video_filter_gpu_new ();
  priv->upstream_live = TRUE;
  priv->frame_duration = GST_CLOCK_TIME_NONE;
  priv->idle = gst_cuda_video_filter_idle_new ("cudafilter-idle",
      gst_cuda_video_filter_idle_release, self, IDLE_RELEASE_US);
}

static void
gst_cuda_video_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (object);

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      priv->backend = (GstCudaVideoFilterBackend) g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_video_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (object);

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      g_value_set_enum (value, priv->backend);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_ACTIVE_BACKEND:
      g_value_set_string (value, priv->active_backend);
      break;
    case PROP_STATS:
      g_value_take_boxed (value,
          gst_cuda_video_filter_counts_to_structure (&priv->counts,
              GST_ELEMENT (object)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_video_filter_finalize (GObject * object)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (object);

  /* stop () closed it; this drops a context set while in NULL */
  gst_cuda_video_filter_gpu_free (priv->gpu);
  gst_cuda_video_filter_idle_free (priv->idle);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/**
 * gst_cuda_video_filter_class_add_pad_templates:
 * @klass: a #GstCudaVideoFilterClass
 * @formats: the video formats filtered, as a caps list ("{ I420, NV12 }")
 *
 * Adds "sink" and "src" templates of raw video in @formats, in CUDA memory
 * (preferred where the neighbours have it too) and in system memory.
 */
void
gst_cuda_video_filter_class_add_pad_templates (GstCudaVideoFilterClass *
    klass, const gchar * formats)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCaps *caps = gst_cuda_video_filter_gpu_template_caps (formats);

  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

static gint
gst_cuda_video_filter_device_id (GstCudaVideoFilter * self)
{
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = GET_PRIV (self)->device_id;
  GST_OBJECT_UNLOCK (self);
  return device_id;
}

static GstCudaVideoFilterBackend
gst_cuda_video_filter_backend (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterBackend backend;

  GST_OBJECT_LOCK (self);
  backend = GET_PRIV (self)->backend;
  GST_OBJECT_UNLOCK (self);
  return backend;
}

static void
gst_cuda_video_filter_set_active_backend (GstCudaVideoFilter * self,
    const gchar * name)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  gboolean changed;

  GST_OBJECT_LOCK (self);
  changed = strcmp (priv->active_backend, name) != 0;
  priv->active_backend = name;
  GST_OBJECT_UNLOCK (self);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self),
        properties[PROP_ACTIVE_BACKEND]);
}

static void
gst_cuda_video_filter_set_context (GstElement * element, GstContext * context)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (element);

  gst_cuda_video_filter_gpu_set_context (GET_PRIV (self)->gpu, element,
      context, gst_cuda_video_filter_device_id (self));
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* One frame in flight (docs/design.md, "One frame in flight").  A frame whose GPU
 * work is only enqueued on the element's stream is held, and the frame
 * held before goes out once its event says the GPU is done with it.  All
 * of it runs under the sink pad's stream lock, in the streaming thread or
 * the idle watch's (or in stop (), once neither runs). */

/* Whether this frame may stay in flight: not behind a live source, where
 * it would add a frame interval of latency, and not while prerolling,
 * where a sink waiting for its first frame may wait for it alone. */
static gboolean
gst_cuda_video_filter_may_hold (GstCudaVideoFilter * self)
{
  gboolean playing;

  if (GET_PRIV (self)->upstream_live ||
      GST_PAD_MODE (GST_BASE_TRANSFORM_SRC_PAD (self)) != GST_PAD_MODE_PUSH)
    return FALSE;
  GST_OBJECT_LOCK (self);
  playing = GST_STATE (self) == GST_STATE_PLAYING;
  GST_OBJECT_UNLOCK (self);
  return playing;
}

/* The buffers the element keeps beyond a plain filter's, for the pools. */
static guint
gst_cuda_video_filter_held_buffers (GstCudaVideoFilter * self)
{
  return GET_PRIV (self)->upstream_live ? 0 : 1;
}

static GstFlowReturn
gst_cuda_video_filter_gpu_failed (GstCudaVideoFilter * self,
    const gchar * what, GError * error)
{
  GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
      ("Filtering %s on the GPU failed: %s.", what, error->message), (NULL));
  g_clear_error (&error);
  return GST_FLOW_ERROR;
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
    return gst_cuda_video_filter_gpu_failed (self, held->what, error);
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
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  if (priv->held.out)
    gst_cuda_video_filter_idle_arm (priv->idle);
}

static void
gst_cuda_video_filter_unwatch (GstCudaVideoFilter * self)
{
  gst_cuda_video_filter_idle_disarm (GET_PRIV (self)->idle);
}

/* Pushes the frame held, and one done behind it, now. */
static GstFlowReturn
gst_cuda_video_filter_drain (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterHeld held = priv->held;
  GstFlowReturn ret = GST_FLOW_OK;
  GstBuffer *out = NULL;

  gst_cuda_video_filter_unwatch (self);
  if (held.out) {
    GST_LOG_OBJECT (self, "draining the frame in flight");
    memset (&priv->held, 0, sizeof (priv->held));
    ret = gst_cuda_video_filter_release (self, &held, &out);
    if (ret == GST_FLOW_OK)
      ret = gst_cuda_video_filter_push (self, out);
  }
  if (ret == GST_FLOW_OK && priv->next_out)
    ret = gst_cuda_video_filter_push (self, g_steal_pointer (&priv->next_out));
  gst_clear_buffer (&priv->next_out);
  return ret;
}

/* Forgets the frame held without pushing it (a flush, stop): once the GPU
 * is done with its buffers, which it may still read and write. */
static void
gst_cuda_video_filter_drop (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  gst_cuda_video_filter_unwatch (self);
  if (priv->held.out) {
    GST_DEBUG_OBJECT (self, "dropping the frame in flight");
    gst_cuda_video_filter_gpu_wait (priv->gpu, priv->held.event, NULL);
  }
  gst_clear_buffer (&priv->held.in);
  gst_clear_buffer (&priv->held.out);
  gst_clear_buffer (&priv->next_out);
  priv->idle_ret = GST_FLOW_OK;
}

/* The idle watch's thread: the streaming thread stayed away with a frame
 * held.  Under the stream lock, as the streaming thread pushes; what the
 * push returns goes upstream with the next buffer. */
static void
gst_cuda_video_filter_idle_release (gpointer data, guint serial)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (data);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstPad *sinkpad = GST_BASE_TRANSFORM_SINK_PAD (self);
  GstFlowReturn ret;

  GST_PAD_STREAM_LOCK (sinkpad);
  if (gst_cuda_video_filter_idle_is_current (priv->idle, serial)) {
    GST_DEBUG_OBJECT (self, "no frame for a while: pushing the one in flight");
    ret = gst_cuda_video_filter_drain (self);
    if (ret != GST_FLOW_OK)
      priv->idle_ret = ret;
  }
  GST_PAD_STREAM_UNLOCK (sinkpad);
}

/* What the LATENCY query adds: a frame's duration while frames may be
 * held (the CUDA backend, upstream not live), nothing when the framerate
 * is unknown (0/1: no duration to add). */
static void
gst_cuda_video_filter_update_latency (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstClockTime latency = 0;
  gboolean changed;

  if (!priv->upstream_live && priv->use_cuda &&
      GST_CLOCK_TIME_IS_VALID (priv->frame_duration))
    latency = priv->frame_duration;

  GST_OBJECT_LOCK (self);
  changed = priv->hold_latency != latency;
  priv->hold_latency = latency;
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return;
  GST_DEBUG_OBJECT (self, "latency of the frame in flight: %" GST_TIME_FORMAT,
      GST_TIME_ARGS (latency));
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
}

/* Upstream's latency, and a frame more while one may be held. */
static gboolean
gst_cuda_video_filter_query_latency (GstCudaVideoFilter * self,
    GstQuery * query)
{
  GstClockTime min, max, add;
  gboolean live;

  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->query (GST_BASE_TRANSFORM
          (self), GST_PAD_SRC, query))
    return FALSE;
  GST_OBJECT_LOCK (self);
  add = GET_PRIV (self)->hold_latency;
  GST_OBJECT_UNLOCK (self);
  if (add == 0)
    return TRUE;

  gst_query_parse_latency (query, &live, &min, &max);
  gst_query_set_latency (query, live, min + add,
      GST_CLOCK_TIME_IS_VALID (max) ? max + add : max);
  return TRUE;
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

/* GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, which a build without CUDA has no
 * header for */
#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"

/* Whether structure i of caps is in CUDA memory. */
static gboolean
gst_cuda_video_filter_structure_is_cuda (GstCaps * caps, guint i)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, i);

  return f && gst_caps_features_contains (f, CUDA_MEMORY_FEATURE);
}

/* Whether caps take frames in CUDA memory (or anything). */
static gboolean
gst_cuda_video_filter_caps_take_cuda (GstCaps * caps)
{
  gboolean cuda = gst_caps_is_any (caps);
  guint i;

  for (i = 0; i < gst_caps_get_size (caps) && !cuda; i++)
    cuda = gst_cuda_video_filter_structure_is_cuda (caps, i);
  return cuda;
}

/* caps with their CUDA-memory structures first (takes caps). */
static GstCaps *
gst_cuda_video_filter_cuda_first (GstCaps * caps)
{
  GstCaps *cuda = gst_caps_new_empty ();
  guint i;

  if (gst_caps_is_any (caps))
    return caps;
  for (i = 0; i < gst_caps_get_size (caps); i++)
    if (gst_cuda_video_filter_structure_is_cuda (caps, i))
      gst_caps_append_structure_full (cuda,
          gst_structure_copy (gst_caps_get_structure (caps, i)),
          gst_caps_features_copy (gst_caps_get_features (caps, i)));
  return gst_caps_merge (cuda, caps);
}

/* The answer to a CAPS query on the sink pad: GstBaseTransform's (what
 * downstream takes, through transform_caps, within the templates and the
 * filter), but with its CUDA-memory caps first where downstream takes
 * CUDA memory.  An upstream that can give either (cudaupload passes
 * system memory through where it may) then gives frames in CUDA memory,
 * which the element filters where they are and hands on there, where in
 * system memory it would upload and download every frame itself.  One
 * question downstream gives both the answer and the preference: two, in
 * every element of a chain, would make negotiation exponential in the
 * chain's length. */
static GstCaps *
gst_cuda_video_filter_sink_caps (GstBaseTransform * trans, GstCaps * filter)
{
  GstCaps *templ = gst_pad_get_pad_template_caps (trans->sinkpad);
  GstCaps *otempl = gst_pad_get_pad_template_caps (trans->srcpad);
  GstCaps *peer_filter = NULL, *peer, *tmp, *caps;
  gboolean cuda;

  if (filter) {
    tmp = gst_caps_intersect_full (filter, templ, GST_CAPS_INTERSECT_FIRST);
    peer_filter = gst_cuda_video_filter_transform_caps (trans, GST_PAD_SINK,
        tmp, NULL);
    gst_caps_unref (tmp);
    tmp = gst_caps_intersect_full (peer_filter, otempl,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (peer_filter);
    peer_filter = tmp;
  }
  peer = gst_pad_peer_query_caps (trans->srcpad, peer_filter);
  cuda = gst_cuda_video_filter_caps_take_cuda (peer);
  tmp = gst_caps_intersect_full (peer, otempl, GST_CAPS_INTERSECT_FIRST);
  caps = gst_cuda_video_filter_transform_caps (trans, GST_PAD_SRC, tmp,
      filter);
  gst_caps_unref (tmp);
  tmp = gst_caps_intersect_full (caps, templ, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (caps);
  caps = cuda ? gst_cuda_video_filter_cuda_first (tmp) : tmp;

  gst_clear_caps (&peer_filter);
  gst_caps_unref (peer);
  gst_caps_unref (templ);
  gst_caps_unref (otempl);
  return caps;
}

static gboolean
gst_cuda_video_filter_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);

  if (gst_cuda_video_filter_gpu_handle_context_query (GET_PRIV (trans)->gpu,
          GST_ELEMENT (trans), query, gst_cuda_video_filter_device_id (self),
          gst_cuda_video_filter_backend (self) !=
          GST_CUDA_VIDEO_FILTER_BACKEND_CPU))
    return TRUE;
  /* A serialized query (allocation, drain) comes after the frames before
   * it: the one held goes out first, and an upstream pool waiting for its
   * buffers gets ours back. */
  if (direction == GST_PAD_SINK && GST_QUERY_IS_SERIALIZED (query)) {
    GST_PAD_STREAM_LOCK (GST_BASE_TRANSFORM_SINK_PAD (trans));
    gst_cuda_video_filter_drain (self);
    GST_PAD_STREAM_UNLOCK (GST_BASE_TRANSFORM_SINK_PAD (trans));
  }
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    return gst_cuda_video_filter_query_latency (self, query);
  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    GstCaps *filter, *caps;

    gst_query_parse_caps (query, &filter);
    caps = gst_cuda_video_filter_sink_caps (trans, filter);
    gst_query_set_caps_result (query, caps);
    gst_caps_unref (caps);
    return TRUE;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

/* Events keep their order with the frames: the one held goes out before
 * any serialized event (EOS, caps, segment, gap, ...).  A flush drops it:
 * at FLUSH_STOP, as FLUSH_START comes outside the streaming thread, and
 * nothing can be pushed between the two. */
static gboolean
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
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* Opens the CUDA backend unless it is open: the context and stream, then
 * the subclass's resources in that context. */
static gboolean
gst_cuda_video_filter_open_cuda (GstCudaVideoFilter * self, GError ** error)
{
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  gboolean ok;

  if (priv->cuda_open)
    return TRUE;
  if (!gst_cuda_video_filter_gpu_open (priv->gpu, GST_ELEMENT (self),
          gst_cuda_video_filter_device_id (self), error))
    return FALSE;
  if (!gst_cuda_video_filter_gpu_push (priv->gpu))
    goto push_failed;
  ok = !klass->open_cuda || klass->open_cuda (self, error);
  gst_cuda_video_filter_gpu_pop (priv->gpu);

  priv->cuda_open = ok;
  return ok;

  /* ERRORS */
push_failed:
  {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "Cannot make the CUDA context current.");
    return FALSE;
  }
}

/* Frees the subclass's GPU resources; the context stays for CUDA memory
 * until stop (). */
static void
gst_cuda_video_filter_close_cuda (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterClass *klass = GST_CUDA_VIDEO_FILTER_GET_CLASS (self);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  if (!priv->cuda_open)
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
  priv->cuda_open = FALSE;
}

/* Makes the backend in use match the one asked for and updates
 * active-backend.  Returns FALSE after posting an error when backend=cuda
 * cannot run. */
static gboolean
gst_cuda_video_filter_ensure_backend (GstCudaVideoFilter * self,
    GstCudaVideoFilterBackend backend)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  gboolean was_valid = priv->engine_valid, used_cuda = priv->use_cuda;
  GError *error = NULL;

  if (priv->engine_valid && priv->engine_backend == backend)
    return TRUE;

  switch (backend) {
    case GST_CUDA_VIDEO_FILTER_BACKEND_CPU:
      gst_cuda_video_filter_close_cuda (self);
      priv->use_cuda = FALSE;
      break;
    case GST_CUDA_VIDEO_FILTER_BACKEND_CUDA:
      if (!gst_cuda_video_filter_open_cuda (self, &error))
        goto no_cuda;
      priv->use_cuda = TRUE;
      break;
    case GST_CUDA_VIDEO_FILTER_BACKEND_AUTO:
    default:
      priv->use_cuda = gst_cuda_video_filter_open_cuda (self, &error);
      /* once a start, on the bus too: gst-launch-1.0 and applications
       * show it where the user looks */
      if (!priv->use_cuda && !priv->warned_fallback) {
        GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND, ("backend=auto: %s "
                "Filtering on the CPU, which is much slower.",
                error->message), (NULL));
        priv->warned_fallback = TRUE;
      }
      g_clear_error (&error);
      break;
  }

  priv->engine_backend = backend;
  priv->engine_valid = TRUE;
  GST_INFO_OBJECT (self, "Filtering on the %s", priv->use_cuda ?
      "GPU (CUDA)" : "CPU");
  gst_cuda_video_filter_set_active_backend (self,
      priv->use_cuda ? "cuda" : "cpu");
  gst_cuda_video_filter_update_latency (self);

  /* Pinned pools go with the CUDA backend: when it comes or goes while
   * playing, upstream and we pick pools again. */
  if (was_valid && used_cuda != priv->use_cuda) {
    gst_base_transform_reconfigure_sink (GST_BASE_TRANSFORM (self));
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
  }
  return TRUE;

  /* ERRORS */
no_cuda:
  {
    priv->engine_valid = FALSE;
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("backend=cuda, but CUDA cannot be used: %s Use backend=auto to fall "
            "back to the CPU, or backend=cpu.", error->message), (NULL));
    g_clear_error (&error);
    return FALSE;
  }
}

static gboolean
gst_cuda_video_filter_start (GstBaseTransform * trans)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  priv->engine_valid = FALSE;
  priv->warned_fallback = FALSE;
  priv->upstream_live = TRUE;
  priv->frame_duration = GST_CLOCK_TIME_NONE;
  gst_cuda_video_filter_counts_reset (&priv->counts, GST_ELEMENT (self));
  return gst_cuda_video_filter_ensure_backend (self,
      gst_cuda_video_filter_backend (self));
}

static gboolean
gst_cuda_video_filter_stop (GstBaseTransform * trans)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  /* the watch's thread may be pushing: it ends first */
  gst_cuda_video_filter_idle_stop (priv->idle);
  gst_cuda_video_filter_drop (self);
  gst_cuda_video_filter_close_cuda (self);
  gst_cuda_video_filter_gpu_close (priv->gpu);
  priv->use_cuda = FALSE;
  priv->engine_valid = FALSE;
  priv->in_cuda = priv->out_cuda = FALSE;
  priv->upstream_live = TRUE;
  gst_cuda_video_filter_update_latency (self);
  gst_cuda_video_filter_set_active_backend (self, "none");
  return TRUE;
}

static GstCaps *
gst_cuda_video_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCaps *ret, *tmp;
  gboolean offer_cuda;

  /* Each side may be in CUDA or system memory, whatever the other is
   * (CUDA memory only when there is a context to use it in); the other
   * side's memory first, so that a pipeline stays in the memory it is in
   * unless a neighbour needs the other (but where downstream takes CUDA
   * memory, the sink pad's CAPS answer puts it first:
   * gst_cuda_video_filter_sink_caps ()). */
  offer_cuda = gst_cuda_video_filter_backend (self) !=
      GST_CUDA_VIDEO_FILTER_BACKEND_CPU &&
      gst_cuda_video_filter_gpu_can_offer (GET_PRIV (self)->gpu);
  ret = gst_cuda_video_filter_gpu_transform_caps (caps, offer_cuda);

  if (filter) {
    tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      ret);
  return ret;
}

static gboolean
gst_cuda_video_filter_set_info (GstVideoFilter * vfilter, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (vfilter);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (vfilter);

  priv->in_cuda = gst_cuda_video_filter_gpu_caps_are_cuda (incaps);
  priv->out_cuda = gst_cuda_video_filter_gpu_caps_are_cuda (outcaps);
  GST_DEBUG_OBJECT (vfilter, "%s %dx%d, CUDA memory in %d, out %d",
      GST_VIDEO_INFO_NAME (in_info), GST_VIDEO_INFO_WIDTH (in_info),
      GST_VIDEO_INFO_HEIGHT (in_info), priv->in_cuda, priv->out_cuda);

  /* Decided once a stream, before the pools are: a frame in flight only
   * behind a source that is not live. */
  priv->upstream_live = gst_cuda_video_filter_upstream_is_live (self);
  priv->frame_duration = GST_VIDEO_INFO_FPS_N (in_info) > 0 &&
      GST_VIDEO_INFO_FPS_D (in_info) > 0 ?
      gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (in_info),
      GST_VIDEO_INFO_FPS_N (in_info)) : GST_CLOCK_TIME_NONE;
  GST_INFO_OBJECT (self, "upstream is %slive: %s", priv->upstream_live ?
      "" : "not ", priv->upstream_live ? "every frame is finished before it "
      "is pushed" : "one frame may be in flight");
  gst_cuda_video_filter_update_latency (self);

  return (!priv->in_cuda && !priv->out_cuda) ||
      gst_cuda_video_filter_gpu_accept_caps (priv->gpu, GST_ELEMENT (vfilter),
      incaps, in_info);
}

static void
gst_cuda_video_filter_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstClockTime stream_time;
  gboolean passthrough;

  /* GstController values land in the properties before they are copied
   * (in a time segment: upstream may send none, or one in bytes). */
  if (trans->segment.format == GST_FORMAT_TIME) {
    stream_time = gst_segment_to_stream_time (&trans->segment,
        GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
    if (GST_CLOCK_TIME_IS_VALID (stream_time))
      gst_object_sync_values (GST_OBJECT (self), stream_time);
  }

  priv->frame_identity =
      GST_CUDA_VIDEO_FILTER_GET_CLASS (self)->prepare_frame (self, buffer);
  priv->frame_backend = gst_cuda_video_filter_backend (self);

  /* A buffer cannot pass from system memory to CUDA memory untouched. */
  passthrough = priv->frame_identity && priv->in_cuda == priv->out_cuda;
  if (passthrough != gst_base_transform_is_passthrough (trans)) {
    GST_DEBUG_OBJECT (self, "passthrough %d", passthrough);
    gst_base_transform_set_passthrough (trans, passthrough);
    /* Passthrough skips the buffer pool: negotiate one when leaving it. */
    if (!passthrough)
      gst_base_transform_reconfigure_src (trans);
  }
}

/* After the subclass enqueued a frame's work on the stream (the context
 * current, ret what it returned): with a frame in flight allowed, an event
 * marks the frame and its input is kept for generate_output (); else the
 * stream is waited for.  On any failure what was enqueued is finished
 * before the buffers go back. */
static GstFlowReturn
gst_cuda_video_filter_enqueued (GstCudaVideoFilter * self, GstFlowReturn ret,
    GstBuffer * inbuf, GstBuffer * outbuf, const gchar * what)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterHeld *queued = &priv->queued;
  GError *error = NULL;

  if (ret != GST_FLOW_OK) {
    gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, NULL);
    return ret;
  }
  if (!gst_cuda_video_filter_may_hold (self)) {
    if (!gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, &error))
      return gst_cuda_video_filter_gpu_failed (self, what, error);
    gst_cuda_video_filter_gpu_mark_done (priv->gpu, outbuf);
    return GST_FLOW_OK;
  }
  /* the frame held, if any, has the other event */
  if (!gst_cuda_video_filter_gpu_record (priv->gpu, priv->next_event, &error)) {
    gst_cuda_video_filter_gpu_sync (priv->gpu, NULL, NULL);
    return gst_cuda_video_filter_gpu_failed (self, what, error);
  }
  queued->in = gst_buffer_ref (inbuf);
  queued->event = priv->next_event;
  queued->what = what;
  priv->next_event = (priv->next_event + 1) % GST_CUDA_VIDEO_FILTER_GPU_EVENTS;
  return GST_FLOW_OK;
}

/* In and out in CUDA memory of the context: the subclass reads and writes
 * the planes where they are, on the element's stream, once a write to the
 * input still pending on another stream is done (GStreamer 1.24 on).
 * From 1.24 the frame goes downstream at once, its memory's stream
 * ordered after the work on the GPU; before, or for memory without a
 * stream, the work is finished before the frame goes (held in flight, or
 * waited for). */
static GstFlowReturn
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
        &vfilter->in_info, FALSE, "it cannot be mapped in CUDA memory");
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
    ret = gst_cuda_video_filter_gpu_failed (self, "CUDA memory", error);
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
      ret = gst_cuda_video_filter_gpu_failed (self, "CUDA memory", error);
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

/* A buffer that does not hold a whole frame of its caps is dropped here,
 * before an output buffer is allocated for it: it is never filtered, the
 * stream goes on, and a warning says so (then at most one a second). */
static GstFlowReturn
gst_cuda_video_filter_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  if (!gst_cuda_video_filter_counts_accept (&GET_PRIV (trans)->counts,
          GST_ELEMENT (trans), &GST_VIDEO_FILTER (trans)->in_info, inbuf))
    return GST_BASE_TRANSFORM_FLOW_DROPPED;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->prepare_output_buffer
      (trans, inbuf, outbuf);
}

/* Counts every buffer received.  GstBaseTransform's QoS skips a late one
 * here, before prepare_output_buffer (): it then queues nothing and
 * returns GST_BASE_TRANSFORM_FLOW_DROPPED.  Before it renegotiates (new
 * caps downstream, new pools), the frame in flight goes out. */
static GstFlowReturn
gst_cuda_video_filter_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (trans);
  GstFlowReturn ret = priv->idle_ret;

  gst_cuda_video_filter_unwatch (self);
  priv->idle_ret = GST_FLOW_OK;
  if (ret == GST_FLOW_OK &&
      gst_pad_needs_reconfigure (GST_BASE_TRANSFORM_SRC_PAD (trans)))
    ret = gst_cuda_video_filter_drain (self);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (input);
    gst_cuda_video_filter_counts_received (&GET_PRIV (trans)->counts,
        GST_ELEMENT (trans), FALSE);
    return ret;
  }
  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->submit_input_buffer (trans,
      is_discont, input);
  /* nothing comes of a buffer QoS skipped */
  if (ret != GST_FLOW_OK)
    gst_cuda_video_filter_watch (self);
  /* input is only compared, not used: it may be gone */
  if (ret == GST_FLOW_OK || ret == GST_BASE_TRANSFORM_FLOW_DROPPED)
    gst_cuda_video_filter_counts_received (&GET_PRIV (trans)->counts,
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
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstCudaVideoFilterHeld prev = priv->held;
  GstFlowReturn ret;

  if (priv->queued.in) {
    priv->held = priv->queued;
    priv->held.out = *outbuf;
    memset (&priv->queued, 0, sizeof (priv->queued));
  } else if (prev.out) {
    priv->next_out = *outbuf;
    memset (&priv->held, 0, sizeof (priv->held));
  } else {
    return GST_FLOW_OK;
  }
  *outbuf = NULL;
  if (!prev.out)
    return GST_FLOW_OK;
  ret = gst_cuda_video_filter_release (self, &prev, outbuf);
  if (ret != GST_FLOW_OK)
    gst_clear_buffer (&priv->next_out);
  return ret;
}

/* Filters the frame submitted and hands over what goes downstream now, in
 * order (gst_cuda_video_filter_order ()); GstBaseTransform calls it again
 * while it returns a buffer.  Counts the buffers that go downstream. */
static GstFlowReturn
gst_cuda_video_filter_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (trans);
  GstFlowReturn ret;

  if (priv->next_out) {
    *outbuf = g_steal_pointer (&priv->next_out);
    ret = GST_FLOW_OK;
  } else {
    ret = GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
        outbuf);
    if (ret == GST_FLOW_OK && *outbuf)
      ret = gst_cuda_video_filter_order (GST_CUDA_VIDEO_FILTER (trans),
          outbuf);
    /* the input of a frame that goes nowhere is not read any more: on
     * failure the stream was waited for */
    gst_clear_buffer (&priv->queued.in);
  }
  if (ret == GST_FLOW_OK && *outbuf)
    gst_cuda_video_filter_counts_pushed (&priv->counts, GST_ELEMENT (trans));
  else
    /* nothing more this time: the streaming thread leaves */
    gst_cuda_video_filter_watch (GST_CUDA_VIDEO_FILTER (trans));
  return ret;
}

/* The output has the input's geometry: what describes it stays true. */
static gboolean
gst_cuda_video_filter_transform_meta (GstBaseTransform * trans,
    GstBuffer * outbuf, GstMeta * meta, GstBuffer * inbuf)
{
  return gst_cuda_video_filter_input_meta_stays (meta);
}

/* GstVideoFilter's mapping, but an input that cannot be mapped (which
 * the checks on arrival did not foresee) is dropped and counted, not
 * pushed unfilled. */
static GstFlowReturn
gst_cuda_video_filter_map_and_transform (GstCudaVideoFilter * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstVideoFilter *vfilter = GST_VIDEO_FILTER (self);
  GstVideoFrame in_frame, out_frame;
  GstFlowReturn ret;

  if (!gst_video_frame_map (&in_frame, &vfilter->in_info, inbuf,
          GST_MAP_READ | GST_VIDEO_FRAME_MAP_FLAG_NO_REF)) {
    gst_cuda_video_filter_counts_dropped (&GET_PRIV (self)->counts,
        GST_ELEMENT (self), &vfilter->in_info, FALSE, "it cannot be mapped");
    return GST_BASE_TRANSFORM_FLOW_DROPPED;
  }
  if (!gst_video_frame_map (&out_frame, &vfilter->out_info, outbuf,
          GST_MAP_WRITE | GST_VIDEO_FRAME_MAP_FLAG_NO_REF)) {
    gst_video_frame_unmap (&in_frame);
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot map an output buffer."), (NULL));
    return GST_FLOW_ERROR;
  }
  ret = gst_cuda_video_filter_transform_frame (vfilter, &in_frame,
      &out_frame);
  gst_video_frame_unmap (&out_frame);
  gst_video_frame_unmap (&in_frame);
  return ret;
}

static GstFlowReturn
gst_cuda_video_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  if (!priv->frame_identity) {
    if (!gst_cuda_video_filter_ensure_backend (self, priv->frame_backend))
      return GST_FLOW_ERROR;
    if (priv->use_cuda && priv->in_cuda && priv->out_cuda &&
        gst_cuda_video_filter_gpu_buffers_are_local (priv->gpu, inbuf,
            outbuf))
      return gst_cuda_video_filter_filter_device (self, inbuf, outbuf);
  }

  /* Any other mix, and identity settings between memories: the frames
   * mapped into host memory (GstCudaMemory stages them), then
   * transform_frame () filters or copies them. */
  return gst_cuda_video_filter_map_and_transform (self, inbuf, outbuf);
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

static GstFlowReturn
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

  if (!priv->use_cuda)
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

/* Whether frames will be filtered on the GPU, so that pinned memory pays.
 * The backend asked for: a change of backend reconfigures the pools. */
static gboolean
gst_cuda_video_filter_wants_pinned (GstCudaVideoFilter * self)
{
  return gst_cuda_video_filter_backend (self) !=
      GST_CUDA_VIDEO_FILTER_BACKEND_CPU &&
      gst_cuda_video_filter_gpu_is_open (GET_PRIV (self)->gpu);
}

static gboolean
gst_cuda_video_filter_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);

  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;

  /* In passthrough (no decide_query) downstream answered for us. */
  if (!decide_query)
    return TRUE;

  /* Frames are mapped through GstVideoMeta, so any stride and plane offset
   * upstream likes is fine. */
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL))
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  gst_cuda_video_filter_gpu_propose_allocation (GET_PRIV (self)->gpu,
      GST_ELEMENT (self), query, gst_cuda_video_filter_wants_pinned (self),
      gst_cuda_video_filter_held_buffers (self));
  return TRUE;
}

static gboolean
gst_cuda_video_filter_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  gboolean done;

  if (!gst_cuda_video_filter_gpu_decide_allocation (GET_PRIV (self)->gpu,
          GST_ELEMENT (self), query, gst_cuda_video_filter_wants_pinned (self),
          gst_cuda_video_filter_held_buffers (self), &done))
    return FALSE;
  if (done)
    return TRUE;

  /* GstVideoFilter's choice (a video buffer pool, with GstVideoMeta when
   * downstream accepts it) suits the filter: output strides are read from
   * each frame. */
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
      query);
}
