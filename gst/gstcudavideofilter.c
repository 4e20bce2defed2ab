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
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilter.h"
#include "gstcudavideofiltergpu.h"
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

static GParamSpec *properties[N_PROPERTIES];

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
      "frames-out (buffers pushed), dropped-short (buffers dropped because "
      "they do not hold a whole frame of their caps), dropped-qos (buffers "
      "skipped as too late by QoS, each also posted as a QoS message; the "
      "qos property turns that off)", GST_TYPE_STRUCTURE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_cuda_video_filter_set_context);

  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_video_filter_query);
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

static gboolean
gst_cuda_video_filter_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query)
{
  if (gst_cuda_video_filter_gpu_handle_context_query (GET_PRIV (trans)->gpu,
          GST_ELEMENT (trans), query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
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
      if (!priv->use_cuda && !priv->warned_fallback) {
        GST_WARNING_OBJECT (self, "backend=auto: %s Filtering on the CPU, "
            "which is much slower.", error->message);
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
  gst_cuda_video_filter_counts_reset (&priv->counts, GST_ELEMENT (self));
  return gst_cuda_video_filter_ensure_backend (self,
      gst_cuda_video_filter_backend (self));
}

static gboolean
gst_cuda_video_filter_stop (GstBaseTransform * trans)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);

  gst_cuda_video_filter_close_cuda (self);
  gst_cuda_video_filter_gpu_close (priv->gpu);
  priv->use_cuda = FALSE;
  priv->engine_valid = FALSE;
  priv->in_cuda = priv->out_cuda = FALSE;
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
   * unless a neighbour needs the other. */
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
  GstCudaVideoFilterPrivate *priv = GET_PRIV (vfilter);

  priv->in_cuda = gst_cuda_video_filter_gpu_caps_are_cuda (incaps);
  priv->out_cuda = gst_cuda_video_filter_gpu_caps_are_cuda (outcaps);
  GST_DEBUG_OBJECT (vfilter, "%s %dx%d, CUDA memory in %d, out %d",
      GST_VIDEO_INFO_NAME (in_info), GST_VIDEO_INFO_WIDTH (in_info),
      GST_VIDEO_INFO_HEIGHT (in_info), priv->in_cuda, priv->out_cuda);
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

  /* GstController values land in the properties before they are copied. */
  stream_time = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME,
      GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (stream_time))
    gst_object_sync_values (GST_OBJECT (self), stream_time);

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

/* In and out in CUDA memory of the context: the subclass reads and writes
 * the planes where they are, on the element's stream, which is finished
 * before the buffer goes downstream. */
static GstFlowReturn
gst_cuda_video_filter_filter_device (GstCudaVideoFilter * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (self);
  GstVideoFilter *vfilter = GST_VIDEO_FILTER (self);
  GstVideoFrame in_frame, out_frame;
  GstFlowReturn ret;
  GError *error = NULL;

  if (!gst_cuda_video_filter_gpu_map_frame (&in_frame, &vfilter->in_info,
          inbuf, GST_MAP_READ))
    goto map_failed;
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
  ret = GST_CUDA_VIDEO_FILTER_GET_CLASS (self)->filter_cuda_device (self,
      &in_frame, &out_frame, gst_cuda_video_filter_gpu_stream (priv->gpu));
  if (ret == GST_FLOW_OK && !gst_cuda_video_filter_gpu_sync (priv->gpu,
          &error))
    ret = GST_FLOW_ERROR;
  gst_cuda_video_filter_gpu_pop (priv->gpu);
  gst_video_frame_unmap (&out_frame);
  gst_video_frame_unmap (&in_frame);

  if (error)
    goto sync_failed;
  return ret;

  /* ERRORS */
map_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot map a frame in CUDA memory."), (NULL));
    return GST_FLOW_ERROR;
  }
push_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Cannot make the CUDA context current."), (NULL));
    return GST_FLOW_ERROR;
  }
sync_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Filtering CUDA memory on the GPU failed: %s.", error->message),
        (NULL));
    g_clear_error (&error);
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
 * returns GST_BASE_TRANSFORM_FLOW_DROPPED. */
static GstFlowReturn
gst_cuda_video_filter_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstFlowReturn ret;

  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->submit_input_buffer (trans,
      is_discont, input);
  /* input is only compared, not used: it may be gone */
  if (ret == GST_FLOW_OK || ret == GST_BASE_TRANSFORM_FLOW_DROPPED)
    gst_cuda_video_filter_counts_received (&GET_PRIV (trans)->counts,
        GST_ELEMENT (trans), trans->queued_buf != input);
  return ret;
}

/* Counts the buffers that go downstream. */
static GstFlowReturn
gst_cuda_video_filter_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstCudaVideoFilterPrivate *priv = GET_PRIV (trans);
  GstFlowReturn ret;

  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
      outbuf);
  if (ret == GST_FLOW_OK && *outbuf)
    gst_cuda_video_filter_counts_pushed (&priv->counts, GST_ELEMENT (trans));
  return ret;
}

/* The output has the input's geometry: what describes it stays true. */
static gboolean
gst_cuda_video_filter_transform_meta (GstBaseTransform * trans,
    GstBuffer * outbuf, GstMeta * meta, GstBuffer * inbuf)
{
  return gst_cuda_video_filter_input_meta_stays (meta);
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

  /* Any other mix, and identity settings between memories: GstVideoFilter
   * maps the frames into host memory (GstCudaMemory stages them) and
   * transform_frame () filters or copies them. */
  return GST_BASE_TRANSFORM_CLASS (parent_class)->transform (trans, inbuf,
      outbuf);
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
    return klass->filter_cpu (self, in_frame, out_frame);

  if (!gst_cuda_video_filter_gpu_push (priv->gpu))
    goto push_failed;
  ret = klass->filter_cuda_host (self, in_frame, out_frame);
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
      GST_ELEMENT (self), query, gst_cuda_video_filter_wants_pinned (self));
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
          &done))
    return FALSE;
  if (done)
    return TRUE;

  /* GstVideoFilter's choice (a video buffer pool, with GstVideoMeta when
   * downstream accepts it) suits the filter: output strides are read from
   * each frame. */
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
      query);
}
