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

/* The class itself: its properties, the CUDA context set on it, start
 * and stop, set_info, the queries (each passed to the part that answers
 * it), each buffer's way through GstBaseTransform (before_transform,
 * prepare_output_buffer, transform) and the allocation queries.  The
 * other parts of the base class, which these call into:
 * gstcudavideofilterbackend.c (the backend in use, and a frame's way to
 * the subclass's filter vfunc), gstcudavideofiltercaps.c (the caps, CUDA
 * memory first where it pays), gstcudavideofilterflight.c (the frame in
 * flight), gstcudavideofilterinput.c (input checks and the stats),
 * gstcudavideofilteridle.c (the frame in flight's idle watch) and
 * gstcudavideofiltergpu.c (the CUDA side; without CUDA,
 * gstcudavideofilternogpu.c). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilterprivate.h"

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

static GParamSpec *properties[N_PROPERTIES];

static void gst_cuda_video_filter_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_cuda_video_filter_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static void gst_cuda_video_filter_finalize (GObject * object);
static void gst_cuda_video_filter_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_cuda_video_filter_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static gboolean gst_cuda_video_filter_start (GstBaseTransform * trans);
static gboolean gst_cuda_video_filter_stop (GstBaseTransform * trans);
static void gst_cuda_video_filter_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer);
static GstFlowReturn gst_cuda_video_filter_prepare_output_buffer
    (GstBaseTransform * trans, GstBuffer * inbuf, GstBuffer ** outbuf);
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

#define gst_cuda_video_filter_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaVideoFilter,
    gst_cuda_video_filter, GST_TYPE_VIDEO_FILTER);

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
      "qos property turns that off), idle-pushed (frames in flight that the "
      "element's own thread pushed because no frame followed them within a "
      "millisecond)", GST_TYPE_STRUCTURE,
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
  gst_cuda_video_filter_flight_init (self);
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
  gst_cuda_video_filter_flight_free (GST_CUDA_VIDEO_FILTER (object));

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

GstCudaVideoFilterPrivate *
gst_cuda_video_filter_get_private (GstCudaVideoFilter * self)
{
  return gst_cuda_video_filter_get_instance_private (self);
}

GstBaseTransformClass *
gst_cuda_video_filter_get_parent_class (void)
{
  return GST_BASE_TRANSFORM_CLASS (parent_class);
}

gint
gst_cuda_video_filter_device_id (GstCudaVideoFilter * self)
{
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = GET_PRIV (self)->device_id;
  GST_OBJECT_UNLOCK (self);
  return device_id;
}

GstCudaVideoFilterBackend
gst_cuda_video_filter_backend (GstCudaVideoFilter * self)
{
  GstCudaVideoFilterBackend backend;

  GST_OBJECT_LOCK (self);
  backend = GET_PRIV (self)->backend;
  GST_OBJECT_UNLOCK (self);
  return backend;
}

void
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
  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_CAPS)
    return gst_cuda_video_filter_query_sink_caps (trans, query);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

static gboolean
gst_cuda_video_filter_start (GstBaseTransform * trans)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  /* init () or stop () left no backend in use: it is chosen now */
  priv->choice.warned_fallback = FALSE;
  gst_cuda_video_filter_flight_start (self);
  gst_cuda_video_filter_counts_reset (&priv->counts, GST_ELEMENT (self));
  return gst_cuda_video_filter_ensure_backend (self,
      gst_cuda_video_filter_backend (self));
}

static gboolean
gst_cuda_video_filter_stop (GstBaseTransform * trans)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  gst_cuda_video_filter_flight_stop (self);
  gst_cuda_video_filter_close_cuda (self);
  gst_cuda_video_filter_gpu_close (priv->gpu);
  priv->choice.in_use = GST_CUDA_VIDEO_FILTER_IN_USE_NONE;
  priv->in_cuda = priv->out_cuda = FALSE;
  gst_cuda_video_filter_update_latency (self);
  gst_cuda_video_filter_set_active_backend (self, "none");
  return TRUE;
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

  gst_cuda_video_filter_flight_set_info (self, in_info);

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
  priv->choice.frame = gst_cuda_video_filter_backend (self);

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
    if (!gst_cuda_video_filter_ensure_backend (self, priv->choice.frame))
      return GST_FLOW_ERROR;
    if (priv->choice.in_use == GST_CUDA_VIDEO_FILTER_IN_USE_CUDA &&
        priv->in_cuda && priv->out_cuda &&
        gst_cuda_video_filter_gpu_buffers_are_local (priv->gpu, inbuf,
            outbuf))
      return gst_cuda_video_filter_filter_device (self, inbuf, outbuf);
  }

  /* Any other mix, and identity settings between memories: the frames
   * mapped into host memory (GstCudaMemory stages them), then
   * transform_frame () filters or copies them. */
  return gst_cuda_video_filter_map_and_transform (self, inbuf, outbuf);
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
