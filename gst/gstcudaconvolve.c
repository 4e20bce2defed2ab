/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:element-cudaconvolve
 * @title: cudaconvolve
 *
 * Convolves raw video on a CUDA GPU when one is usable and on the CPU
 * otherwise: a gaussian or box blur, sharpening (an unsharp mask of
 * strength #GstCudaConvolve:amount), sobel or laplacian edges, or the
 * user's own separable (#GstCudaConvolve:kernel-x,
 * #GstCudaConvolve:kernel-y) or 2-D (#GstCudaConvolve:matrix) kernel, in
 * 8 to 16 bit grey, YUV and RGB.  Chroma planes are filtered with a kernel
 * scaled to their subsampling, so luma and chroma blur by the same amount
 * in picture space.  #GstCudaConvolve:planes picks the components filtered
 * (by default: everything for blurs, luma for sharpen, luma with neutral
 * chroma for edge maps); alpha is always copied.  The border property says
 * what the kernel reads beyond the frame's edges.
 *
 * With identity settings (a blur or sharpen of radius, sigma and sigma-y
 * 0, sharpen of amount 0, custom without a kernel) the element is in
 * passthrough: buffers go through untouched, without a copy.  Every filter
 * property can change while PLAYING and is taken into account from the
 * next frame on; an invalid custom kernel is refused with a warning and
 * the previous one stays in effect.
 *
 * The read-only #GstCudaConvolve:active-backend property tells which
 * backend filters the frames ("cuda" or "cpu"; "none" before the element
 * is started).
 *
 * On the CUDA backend the element offers upstream a buffer pool of
 * page-locked (pinned) host memory, and filters into buffers of the same
 * memory: decoders and sources write their frames straight into memory the
 * GPU reads by DMA, and the result comes back the same way, with no
 * staging copy.  To every other element it is ordinary system memory.
 *
 * Frames already on the GPU stay there: both pads also take GStreamer's
 * CUDA memory (memory:CUDAMemory), and the element shares one
 * #GstCudaContext with nvcodec's elements (nvh264dec, cudaupload,
 * cudadownload, ...) through #GstContext, filtering their buffers in place
 * on a stream it finishes before pushing.  #GstCudaConvolve:cuda-device-id
 * picks the GPU (-1: the neighbours' context's, else device 0).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=I420,width=1280,height=720 ! cudaconvolve radius=8 ! videoconvert ! autovideosink
 * ]| Blurs the test pattern with a Gaussian of radius 8 (sigma 2.9).
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! qtdemux ! h264parse ! nvh264dec ! cudaconvolve radius=4 ! cudadownload ! videoconvert ! autovideosink
 * ]| Decodes, blurs and downloads once: the frames stay in CUDA memory
 * from the decoder to cudadownload.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudaconvolve kernel=box radius=4 border=mirror ! videoconvert ! autovideosink
 * ]| Box-blurs a camera, mirroring the picture at its edges.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! cudaconvolve kernel=sobel ! videoconvert ! autovideosink
 * ]| Shows a camera's edges, white on black.
 * |[
 * gst-launch-1.0 videotestsrc ! cudaconvolve kernel=custom matrix="<<0, -1, 0>, <-1, 5, -1>, <0, -1, 0>>" ! videoconvert ! autovideosink
 * ]| Sharpens with a 3x3 matrix of the user's.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "gstcudaconvolve.h"
#include "gstcuconvkernelprops.h"
#ifdef HAVE_CUDA
#include "cuconv-cuda.h"
#include "gstcuconvhostallocator.h"
#endif
#ifdef HAVE_GST_CUDA
#include <gst/cuda/cuda-gst.h>
#include "gstcuconvcudamemory.h"
#endif

GST_DEBUG_CATEGORY (gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

enum
{
  PROP_0,
  PROP_KERNEL,
  PROP_RADIUS,
  PROP_SIGMA,
  PROP_SIGMA_Y,
  PROP_AMOUNT,
  PROP_BORDER,
  PROP_PLANES,
  PROP_KERNEL_X,
  PROP_KERNEL_Y,
  PROP_MATRIX,
  PROP_NORMALIZE,
  PROP_BACKEND,
  PROP_ACTIVE_BACKEND,
  PROP_CUDA_DEVICE_ID,
  N_PROPERTIES
};

#define DEFAULT_KERNEL GST_CUDA_CONVOLVE_KERNEL_GAUSSIAN
#define DEFAULT_RADIUS 2
#define DEFAULT_SIGMA 0.0
#define DEFAULT_SIGMA_Y 0.0
#define DEFAULT_AMOUNT 1.0
#define DEFAULT_BORDER GST_CUDA_CONVOLVE_BORDER_CLAMP
#define DEFAULT_PLANES GST_CUDA_CONVOLVE_PLANES_AUTO
#define DEFAULT_NORMALIZE TRUE
#define DEFAULT_BACKEND GST_CUDA_CONVOLVE_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1

static GParamSpec *properties[N_PROPERTIES];

struct _GstCudaConvolve
{
  GstVideoFilter parent;

  /* Properties, under the object lock. */
  CuconvSettings settings;
  GstCudaConvolvePlanes planes;
  GstCudaConvolveBackend backend;
  gint device_id;               /* cuda-device-id; changed in READY only */
  const gchar *active_backend;
#ifdef HAVE_CUDA
  GstAllocator *host_allocator; /* pinned memory, opened on first use */
#endif

  /* Streaming thread only (and start/stop, which never run alongside it). */
  CuconvSettings frame_settings;   /* this frame's copy of settings */
  GstCudaConvolvePlanes frame_planes;
  GstCudaConvolveBackend frame_backend;
  CuconvFilter filter;
  gboolean filter_valid;
  gboolean engine_valid;        /* the engine matches engine_backend */
  GstCudaConvolveBackend engine_backend;
  gboolean use_cuda;
  gboolean warned_fallback;
#ifdef HAVE_CUDA
  CuconvCuda *cuda;
#endif
#ifdef HAVE_GST_CUDA
  /* set up in start () */
  GstCuconvCuda cuda_mem;
#endif
};

/* Every format the element filters, the same on both pads; one list for
 * every caps feature.  gst_cuda_convolve_map_planes () describes their
 * planes to the engine from their GstVideoFormatInfo. */
#define VIDEO_FORMATS "{ GRAY8, GRAY16_LE, I420, YV12, NV12, NV21, Y42B, " \
    "Y444, I420_10LE, I420_12LE, P010_10LE, P016_LE, Y444_16LE, RGBA, BGRA, " \
    "RGBx, BGRx, AYUV }"

/* CUDA memory first: preferred where the neighbours have it too. */
#ifdef HAVE_GST_CUDA
#define CUCONV_CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES \
    (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, VIDEO_FORMATS) "; " \
    GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#else
#define CUCONV_CAPS GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#endif

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (CUCONV_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (CUCONV_CAPS));

static void gst_cuda_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_cuda_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_cuda_convolve_finalize (GObject * object);

#ifdef HAVE_GST_CUDA
static void gst_cuda_convolve_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_cuda_convolve_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static GstFlowReturn gst_cuda_convolve_transform (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer * outbuf);
#endif
static GstCaps *gst_cuda_convolve_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter);
static gboolean gst_cuda_convolve_start (GstBaseTransform * trans);
static gboolean gst_cuda_convolve_stop (GstBaseTransform * trans);
static void gst_cuda_convolve_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer);
static gboolean gst_cuda_convolve_propose_allocation (GstBaseTransform *
    trans, GstQuery * decide_query, GstQuery * query);
static gboolean gst_cuda_convolve_decide_allocation (GstBaseTransform *
    trans, GstQuery * query);
static gboolean gst_cuda_convolve_set_info (GstVideoFilter * vfilter,
    GstCaps * incaps, GstVideoInfo * in_info, GstCaps * outcaps,
    GstVideoInfo * out_info);
static GstFlowReturn gst_cuda_convolve_transform_frame (GstVideoFilter *
    vfilter, GstVideoFrame * in_frame, GstVideoFrame * out_frame);

#define gst_cuda_convolve_parent_class parent_class
G_DEFINE_TYPE (GstCudaConvolve, gst_cuda_convolve, GST_TYPE_VIDEO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaconvolve, "cudaconvolve", GST_RANK_NONE,
    GST_TYPE_CUDA_CONVOLVE);

GType
gst_cuda_convolve_kernel_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
#define GST_CUDA_CONVOLVE_KERNEL_VALUE(name, nick, desc) \
    {GST_CUDA_CONVOLVE_KERNEL_##name, desc, nick},
    CUCONV_KERNEL_TYPES (GST_CUDA_CONVOLVE_KERNEL_VALUE)
#undef GST_CUDA_CONVOLVE_KERNEL_VALUE
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveKernel", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_convolve_border_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CONVOLVE_BORDER_CLAMP,
        "Repeat the edge sample (aaa|abcd|ddd)", "clamp"},
    {GST_CUDA_CONVOLVE_BORDER_MIRROR,
        "Reflect without repeating the edge sample (dcb|abcd|cba)", "mirror"},
    {GST_CUDA_CONVOLVE_BORDER_WRAP,
        "Wrap around to the opposite edge (bcd|abcd|abc)", "wrap"},
    {GST_CUDA_CONVOLVE_BORDER_ZERO,
        "Read 0 beyond the edges, darkening them (000|abcd|000)", "zero"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveBorder", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_convolve_planes_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
#define GST_CUDA_CONVOLVE_PLANES_VALUE(name, nick, desc) \
    {GST_CUDA_CONVOLVE_PLANES_##name, desc, nick},
    CUCONV_PLANES_TYPES (GST_CUDA_CONVOLVE_PLANES_VALUE)
#undef GST_CUDA_CONVOLVE_PLANES_VALUE
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolvePlanes", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_convolve_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CONVOLVE_BACKEND_AUTO,
        "CUDA when a device is usable, else the CPU (with a warning)", "auto"},
    {GST_CUDA_CONVOLVE_BACKEND_CUDA,
        "CUDA, on the device cuda-device-id picks; fail to start when it is not usable", "cuda"},
    {GST_CUDA_CONVOLVE_BACKEND_CPU,
        "The CPU reference implementation", "cpu"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_cuda_convolve_class_init (GstCudaConvolveClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *vfilter_class = GST_VIDEO_FILTER_CLASS (klass);
  const GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;
  /* A controller cannot interpolate arrays. */
  const GParamFlags custom = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_cuda_convolve_set_property;
  gobject_class->get_property = gst_cuda_convolve_get_property;
  gobject_class->finalize = gst_cuda_convolve_finalize;

  properties[PROP_KERNEL] = g_param_spec_enum ("kernel", "Kernel",
      "What the filter computes: a gaussian or box blur, sharpen (unsharp "
      "mask), sobel (gradient magnitude) or laplacian edges, or custom (the "
      "kernel in kernel-x/kernel-y or matrix)",
      GST_TYPE_CUDA_CONVOLVE_KERNEL, DEFAULT_KERNEL, live);
  properties[PROP_RADIUS] = g_param_spec_uint ("radius", "Radius",
      "Kernel radius in luma pixels, 0-64: the kernel spans 2 * radius + 1 "
      "pixels in each direction (halved, rounded up, on subsampled chroma). "
      "0 = derive it from sigma as ceil (3 * sigma), at most 64; sobel and "
      "laplacian take radius 0 and sigma 0 as radius 1. Not used by custom. "
      "gaussian, box and sharpen with radius, sigma and sigma-y 0 pass "
      "buffers through untouched", 0, CUCONV_MAX_RADIUS, DEFAULT_RADIUS, live);
  properties[PROP_SIGMA] = g_param_spec_double ("sigma", "Sigma",
      "Standard deviation of the gaussian in luma pixels, 0-64, for "
      "gaussian, sharpen, and sobel and laplacian above radius 1; "
      "vertically too unless sigma-y is set. 0 = derive it from radius as "
      "0.3 * (radius - 1) + 0.8. box uses it only to derive the radius when "
      "radius is 0", 0.0, CUCONV_MAX_SIGMA, DEFAULT_SIGMA, live);
  properties[PROP_SIGMA_Y] = g_param_spec_double ("sigma-y", "Sigma Y",
      "Vertical standard deviation in luma pixels, 0-64, for a filter "
      "stronger in one direction; with radius 0 it also gives the vertical "
      "radius, ceil (3 * sigma-y). 0 = the same as sigma",
      0.0, CUCONV_MAX_SIGMA, DEFAULT_SIGMA_Y, live);
  properties[PROP_AMOUNT] = g_param_spec_double ("amount", "Amount",
      "Strength of kernel=sharpen, 0-10: out = in + amount * (in - "
      "gaussian (in)), the gaussian of radius and sigma. 0 = passthrough; "
      "1 doubles the detail finer than the gaussian",
      0.0, CUCONV_MAX_AMOUNT, DEFAULT_AMOUNT, live);
  properties[PROP_BORDER] = g_param_spec_enum ("border", "Border",
      "What the kernel reads beyond the frame's edges",
      GST_TYPE_CUDA_CONVOLVE_BORDER, DEFAULT_BORDER, live);
  properties[PROP_PLANES] = g_param_spec_enum ("planes", "Planes",
      "Which components are filtered; the others are copied unchanged. "
      "Luma means Y, and R, G and B in RGB formats; chroma means U and V. "
      "Alpha and padding bytes are always copied. auto: blurs and custom "
      "filter everything, sharpen luma only, sobel and laplacian filter luma "
      "and set chroma to neutral grey", GST_TYPE_CUDA_CONVOLVE_PLANES,
      DEFAULT_PLANES, live);
  properties[PROP_KERNEL_X] =
      gst_cuconv_kernel_props_param_spec ("kernel-x", "Kernel X",
      "kernel=custom, separable: the horizontal taps, left to right, an odd "
      "number (1-129) of numbers centred on the output pixel, e.g. "
      "\"<1, 2, 1>\". Empty (<>) = not set: no horizontal filtering. "
      "Ignored while matrix is set. An invalid value is refused with a "
      "warning and the previous one stays", custom);
  properties[PROP_KERNEL_Y] =
      gst_cuconv_kernel_props_param_spec ("kernel-y", "Kernel Y",
      "kernel=custom, separable: the vertical taps, top to bottom, as "
      "kernel-x. Empty (<>) = not set: no vertical filtering", custom);
  properties[PROP_MATRIX] =
      gst_cuconv_kernel_props_param_spec ("matrix", "Matrix",
      "kernel=custom, 2-D: rows top to bottom of numbers left to right, "
      "square with an odd side (1-31), centred on the output pixel and not "
      "flipped, e.g. \"<<0, -1, 0>, <-1, 5, -1>, <0, -1, 0>>\". Used instead "
      "of kernel-x/kernel-y when set; empty (<>) = not set. An invalid value "
      "is refused with a warning and the previous one stays", custom);
  properties[PROP_NORMALIZE] = g_param_spec_boolean ("normalize",
      "Normalize", "kernel=custom: divide kernel-x, kernel-y and matrix each "
      "by the sum of its values, so that flat areas keep their brightness; "
      "a kernel summing to 0 (an edge detector) is used as given. FALSE = "
      "use every kernel as given", DEFAULT_NORMALIZE, live);
  properties[PROP_BACKEND] = g_param_spec_enum ("backend", "Backend",
      "Where frames are filtered; a change while PLAYING applies from the "
      "next frame (see active-backend for the one in use)",
      GST_TYPE_CUDA_CONVOLVE_BACKEND, DEFAULT_BACKEND, live);
  properties[PROP_ACTIVE_BACKEND] =
      g_param_spec_string ("active-backend", "Active backend",
      "The backend filtering frames: \"cuda\" or \"cpu\", \"none\" until the "
      "element is started. Notified when it changes", "none",
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CUDA_DEVICE_ID] = g_param_spec_int ("cuda-device-id",
      "CUDA device id", "The CUDA device to filter on (0-based, as "
      "nvidia-smi numbers them). -1 = automatic: the device of the CUDA "
      "context shared by neighbouring CUDA elements (nvh264dec, cudaupload, "
      "...), else device 0", -1, G_MAXINT, DEFAULT_CUDA_DEVICE_ID,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata (element_class,
      "CUDA convolution filter", "Filter/Effect/Video",
      "Blurs (gaussian, box), sharpens (unsharp mask), finds edges (sobel, "
      "laplacian) or applies a custom separable or 2-D kernel, in 8 to 16 "
      "bit YUV, grey and RGB, with a choice of planes and of border "
      "handling. Runs on a CUDA GPU when one is usable, else on the CPU; "
      "identity settings pass buffers through untouched",
      "gst-cudaconvolve authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

#ifdef HAVE_GST_CUDA
  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_set_context);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_convolve_query);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_convolve_transform);
#endif
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_transform_caps);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_convolve_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_convolve_stop);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_before_transform);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_decide_allocation);
  /* Passthrough means no work at all, not even a look at the buffer. */
  trans_class->transform_ip_on_passthrough = FALSE;

  vfilter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_convolve_set_info);
  vfilter_class->transform_frame =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_transform_frame);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_convolve_debug, "cudaconvolve", 0,
      "CUDA convolution blur");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_KERNEL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_BORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_PLANES, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_BACKEND, 0);
}

static void
gst_cuda_convolve_init (GstCudaConvolve * self)
{
  self->settings.kernel = (CuconvKernel) DEFAULT_KERNEL;
  self->settings.border = (CuconvBorder) DEFAULT_BORDER;
  self->settings.radius = DEFAULT_RADIUS;
  self->settings.sigma = DEFAULT_SIGMA;
  self->settings.sigma_y = DEFAULT_SIGMA_Y;
  self->settings.amount = DEFAULT_AMOUNT;
  self->settings.normalize = DEFAULT_NORMALIZE;
  self->planes = DEFAULT_PLANES;
  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_CUDA_DEVICE_ID;
  self->active_backend = "none";

  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self),
      cuconv_settings_is_identity (&self->settings));
}

/* An invalid value of property, refused: on the bus as an element warning
 * when the element has one (in a pipeline, so the application or
 * gst-launch-1.0 shows it), else on stderr through g_warning (), as GObject
 * refuses an out-of-range number: gst-launch-1.0 sets properties before
 * the pipeline exists. */
static void
gst_cuda_convolve_refuse (GstCudaConvolve * self, const gchar * property,
    const gchar * why)
{
  GstBus *bus = gst_element_get_bus (GST_ELEMENT (self));

  if (bus) {
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("Invalid %s refused: %s. The previous value stays in effect.",
            property, why), (NULL));
    gst_object_unref (bus);
  } else {
    g_warning ("%s: invalid %s refused: %s. The previous value stays in "
        "effect.", GST_OBJECT_NAME (self), property, why);
  }
}

static void
gst_cuda_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);
  CuconvSettings *s = &self->settings;
  gboolean valid = TRUE;
  gchar *why = NULL;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KERNEL:
      self->settings.kernel = (CuconvKernel) g_value_get_enum (value);
      break;
    case PROP_RADIUS:
      self->settings.radius = g_value_get_uint (value);
      break;
    case PROP_SIGMA:
      self->settings.sigma = g_value_get_double (value);
      break;
    case PROP_SIGMA_Y:
      self->settings.sigma_y = g_value_get_double (value);
      break;
    case PROP_AMOUNT:
      self->settings.amount = g_value_get_double (value);
      break;
    case PROP_BORDER:
      self->settings.border = (CuconvBorder) g_value_get_enum (value);
      break;
    case PROP_PLANES:
      self->planes = (GstCudaConvolvePlanes) g_value_get_enum (value);
      break;
      /* Checked in full before they replace the kernel in effect, which an
       * invalid value leaves as it was: the streaming thread copies the
       * settings under the lock, so no frame sees half a kernel. */
    case PROP_KERNEL_X:
      valid = gst_cuconv_kernel_props_parse_taps (value, s->custom_x,
          &s->custom_x_len, &why);
      break;
    case PROP_KERNEL_Y:
      valid = gst_cuconv_kernel_props_parse_taps (value, s->custom_y,
          &s->custom_y_len, &why);
      break;
    case PROP_MATRIX:
      valid = gst_cuconv_kernel_props_parse_matrix (value, s->matrix,
          &s->matrix_side, &why);
      break;
    case PROP_NORMALIZE:
      self->settings.normalize = g_value_get_boolean (value);
      break;
    case PROP_BACKEND:
      self->backend = (GstCudaConvolveBackend) g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);

  if (!valid) {
    gst_cuda_convolve_refuse (self, pspec->name, why);
    g_free (why);
  }
}

static void
gst_cuda_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KERNEL:
      g_value_set_enum (value, self->settings.kernel);
      break;
    case PROP_RADIUS:
      g_value_set_uint (value, self->settings.radius);
      break;
    case PROP_SIGMA:
      g_value_set_double (value, self->settings.sigma);
      break;
    case PROP_SIGMA_Y:
      g_value_set_double (value, self->settings.sigma_y);
      break;
    case PROP_AMOUNT:
      g_value_set_double (value, self->settings.amount);
      break;
    case PROP_BORDER:
      g_value_set_enum (value, self->settings.border);
      break;
    case PROP_PLANES:
      g_value_set_enum (value, self->planes);
      break;
    case PROP_KERNEL_X:
      gst_cuconv_kernel_props_taps_to_value (self->settings.custom_x,
          self->settings.custom_x_len, value);
      break;
    case PROP_KERNEL_Y:
      gst_cuconv_kernel_props_taps_to_value (self->settings.custom_y,
          self->settings.custom_y_len, value);
      break;
    case PROP_MATRIX:
      gst_cuconv_kernel_props_matrix_to_value (self->settings.matrix,
          self->settings.matrix_side, value);
      break;
    case PROP_NORMALIZE:
      g_value_set_boolean (value, self->settings.normalize);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_ACTIVE_BACKEND:
      g_value_set_string (value, self->active_backend);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_convolve_finalize (GObject * object)
{
#ifdef HAVE_CUDA
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);

  /* stop () frees them; this covers an element finalized without
   * stopping */
  g_clear_pointer (&self->cuda, cuconv_cuda_free);
  gst_clear_object (&self->host_allocator);
#endif

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_convolve_set_active_backend (GstCudaConvolve * self,
    const gchar * name)
{
  gboolean changed;

  GST_OBJECT_LOCK (self);
  changed = strcmp (self->active_backend, name) != 0;
  self->active_backend = name;
  GST_OBJECT_UNLOCK (self);

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self),
        properties[PROP_ACTIVE_BACKEND]);
}

#ifdef HAVE_CUDA
/* The cuda-device-id property: -1 = any. */
static gint
gst_cuda_convolve_device_id (GstCudaConvolve * self)
{
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);
  return device_id;
}

/* The CUDA device to filter on: the shared context's, when there is one. */
static gint
gst_cuda_convolve_device (GstCudaConvolve * self)
{
#ifdef HAVE_GST_CUDA
  if (self->cuda_mem.context)
    return gst_cuconv_cuda_device (&self->cuda_mem);
#endif
  return MAX (gst_cuda_convolve_device_id (self), 0);
}
#endif

/* Opens the CUDA engine unless it is open.  On failure, err holds a
 * sentence saying why. */
static gboolean
gst_cuda_convolve_open_cuda (GstCudaConvolve * self, gchar * err,
    gsize err_len)
{
#ifdef HAVE_CUDA
  if (self->cuda)
    return TRUE;

  if (cuconv_device_count () <= 0) {
    g_snprintf (err, err_len, "No usable CUDA device was found "
        "(no GPU, or no NVIDIA driver).");
    return FALSE;
  }
  self->cuda = cuconv_cuda_new (gst_cuda_convolve_device (self), err, err_len);
  if (!self->cuda)
    return FALSE;

  GST_INFO_OBJECT (self, "Opened %s", cuconv_cuda_describe (self->cuda));
  return TRUE;
#else
  g_snprintf (err, err_len, "This build of the plugin has no CUDA support.");
  return FALSE;
#endif
}

static void
gst_cuda_convolve_close_cuda (GstCudaConvolve * self)
{
#ifdef HAVE_CUDA
  g_clear_pointer (&self->cuda, cuconv_cuda_free);
#endif
}

/* Makes the engine match the backend asked for: opens or closes the CUDA
 * engine and updates active-backend.  Returns FALSE after posting an error
 * when backend=cuda cannot run. */
static gboolean
gst_cuda_convolve_ensure_backend (GstCudaConvolve * self,
    GstCudaConvolveBackend backend)
{
  gchar err[256] = "";
  gboolean was_valid = self->engine_valid, used_cuda = self->use_cuda;

  if (self->engine_valid && self->engine_backend == backend)
    return TRUE;

  switch (backend) {
    case GST_CUDA_CONVOLVE_BACKEND_CPU:
      gst_cuda_convolve_close_cuda (self);
      self->use_cuda = FALSE;
      break;
    case GST_CUDA_CONVOLVE_BACKEND_CUDA:
      if (!gst_cuda_convolve_open_cuda (self, err, sizeof (err)))
        goto no_cuda;
      self->use_cuda = TRUE;
      break;
    case GST_CUDA_CONVOLVE_BACKEND_AUTO:
    default:
      self->use_cuda = gst_cuda_convolve_open_cuda (self, err, sizeof (err));
      if (!self->use_cuda && !self->warned_fallback) {
        GST_WARNING_OBJECT (self, "backend=auto: %s Filtering on the CPU, "
            "which is much slower.", err);
        self->warned_fallback = TRUE;
      }
      break;
  }

  self->engine_backend = backend;
  self->engine_valid = TRUE;
  GST_INFO_OBJECT (self, "Filtering on the %s", self->use_cuda ? "GPU (CUDA)"
      : "CPU");
  gst_cuda_convolve_set_active_backend (self, self->use_cuda ? "cuda" : "cpu");

  /* Pinned pools go with the CUDA backend: when it comes or goes while
   * playing, upstream and we pick pools again. */
  if (was_valid && used_cuda != self->use_cuda) {
    gst_base_transform_reconfigure_sink (GST_BASE_TRANSFORM (self));
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
  }
  return TRUE;

  /* ERRORS */
no_cuda:
  {
    self->engine_valid = FALSE;
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("backend=cuda, but CUDA cannot be used: %s Use backend=auto to fall "
            "back to the CPU, or backend=cpu.", err), (NULL));
    return FALSE;
  }
}

static gboolean
gst_cuda_convolve_start (GstBaseTransform * trans)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
  GstCudaConvolveBackend backend;

  GST_OBJECT_LOCK (self);
  backend = self->backend;
  GST_OBJECT_UNLOCK (self);

  self->filter_valid = FALSE;
  self->engine_valid = FALSE;

#ifdef HAVE_GST_CUDA
  /* The context first: it says which device the engine opens.  Without
   * one, CUDA memory is not offered and frames come in system memory. */
  if (backend != GST_CUDA_CONVOLVE_BACKEND_CPU)
    gst_cuconv_cuda_open (&self->cuda_mem, GST_ELEMENT (self),
        gst_cuda_convolve_device_id (self));
#endif

  return gst_cuda_convolve_ensure_backend (self, backend);
}

static gboolean
gst_cuda_convolve_stop (GstBaseTransform * trans)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
#ifdef HAVE_CUDA
  GstAllocator *allocator;
#endif

  gst_cuda_convolve_close_cuda (self);
#ifdef HAVE_GST_CUDA
  gst_cuconv_cuda_close (&self->cuda_mem);
#endif
  self->use_cuda = FALSE;
  self->engine_valid = FALSE;
  self->filter_valid = FALSE;
  gst_cuda_convolve_set_active_backend (self, "none");
#ifdef HAVE_CUDA
  /* Pools and buffers still in flight hold their own references to it. */
  GST_OBJECT_LOCK (self);
  allocator = g_steal_pointer (&self->host_allocator);
  GST_OBJECT_UNLOCK (self);
  gst_clear_object (&allocator);
#endif

  return TRUE;
}

static void
gst_cuda_convolve_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
  GstClockTime stream_time;
  gboolean identity;

  /* GstController values land in the properties before they are copied. */
  stream_time = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME,
      GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (stream_time))
    gst_object_sync_values (GST_OBJECT (self), stream_time);

  GST_OBJECT_LOCK (self);
  self->frame_settings = self->settings;
  self->frame_planes = self->planes;
  self->frame_backend = self->backend;
  GST_OBJECT_UNLOCK (self);

  identity = cuconv_settings_is_identity (&self->frame_settings);
#ifdef HAVE_GST_CUDA
  /* A buffer cannot pass from system memory to CUDA memory untouched. */
  identity &= self->cuda_mem.in_cuda == self->cuda_mem.out_cuda;
#endif
  if (identity != gst_base_transform_is_passthrough (trans)) {
    GST_DEBUG_OBJECT (self, "passthrough %d", identity);
    gst_base_transform_set_passthrough (trans, identity);
    /* Passthrough skips the buffer pool: negotiate one when leaving it. */
    if (!identity)
      gst_base_transform_reconfigure_src (trans);
  }
}

#ifdef HAVE_CUDA
/* Whether frames will be filtered on the GPU, so that pinned memory pays.
 * The backend asked for, not the one running: upstream may ask before the
 * first frame, and a change of backend reconfigures the pools. */
static gboolean
gst_cuda_convolve_wants_pinned (GstCudaConvolve * self)
{
  GstCudaConvolveBackend backend;

  GST_OBJECT_LOCK (self);
  backend = self->backend;
  GST_OBJECT_UNLOCK (self);

  switch (backend) {
    case GST_CUDA_CONVOLVE_BACKEND_CPU:
      return FALSE;
    case GST_CUDA_CONVOLVE_BACKEND_CUDA:
      return TRUE;
    case GST_CUDA_CONVOLVE_BACKEND_AUTO:
    default:
      return cuconv_device_count () > 0;
  }
}

/* The element's pinned-memory allocator (a new reference), opened on first
 * use; NULL when the device cannot be opened. */
static GstAllocator *
gst_cuda_convolve_get_host_allocator (GstCudaConvolve * self)
{
  GstAllocator *allocator = NULL, *spare = NULL;
  gchar err[256] = "";

  GST_OBJECT_LOCK (self);
  if (self->host_allocator)
    allocator = gst_object_ref (self->host_allocator);
  GST_OBJECT_UNLOCK (self);
  if (allocator)
    return allocator;

  /* Opening the device takes a while: not under the lock.  When two
   * threads race here, the second allocator is dropped. */
  allocator = gst_cuconv_host_allocator_new (gst_cuda_convolve_device (self),
      err, sizeof (err));
  if (!allocator) {
    GST_WARNING_OBJECT (self, "No pinned memory, using system memory: %s",
        err);
    return NULL;
  }

  GST_OBJECT_LOCK (self);
  if (self->host_allocator) {
    spare = allocator;
    allocator = gst_object_ref (self->host_allocator);
  } else {
    self->host_allocator = gst_object_ref (allocator);
  }
  GST_OBJECT_UNLOCK (self);
  gst_clear_object (&spare);

  return allocator;
}

/* Puts a GstVideoBufferPool of pinned memory first in query, in place of
 * GstVideoFilter's system-memory one, and the allocator first among the
 * allocation params: upstream that configures the pool with the first
 * allocator, or allocates without a pool, gets pinned memory as well.
 * Leaves the query as it is when no pinned memory can be had. */
static void
gst_cuda_convolve_propose_pinned (GstCudaConvolve * self, GstQuery * query)
{
  GstAllocationParams params;
  GstAllocator *allocator, *other = NULL;
  GstBufferPool *pool;
  GstStructure *config;
  GstVideoInfo info;
  GstCaps *caps;
  gchar *name;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return;
  allocator = gst_cuda_convolve_get_host_allocator (self);
  if (!allocator)
    return;

  /* The alignment, prefix and padding already asked for still hold. */
  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0) {
    gst_query_parse_nth_allocation_param (query, 0, &other, &params);
    gst_clear_object (&other);
  }

  pool = gst_video_buffer_pool_new ();
  name = g_strdup_printf ("%s-pinned-pool", GST_OBJECT_NAME (self));
  g_object_set (pool, "name", name, NULL);
  g_free (name);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
  gst_buffer_pool_config_set_allocator (config, allocator, &params);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config))
    goto config_failed;

  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_set_nth_allocation_param (query, 0, allocator, &params);
  else
    gst_query_add_allocation_param (query, allocator, &params);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, info.size, 0, 0);
  else
    gst_query_add_allocation_pool (query, pool, info.size, 0, 0);
  GST_DEBUG_OBJECT (self, "proposing %" GST_PTR_FORMAT " of pinned memory",
      pool);

  gst_object_unref (pool);
  gst_object_unref (allocator);
  return;

  /* ERRORS */
config_failed:
  {
    GST_WARNING_OBJECT (self, "Cannot configure a pool of pinned memory; "
        "proposing system memory");
    gst_object_unref (pool);
    gst_object_unref (allocator);
  }
}

static gboolean
is_system_allocator (GstAllocator * allocator)
{
  return !allocator || g_strcmp0 (allocator->mem_type,
      GST_ALLOCATOR_SYSMEM) == 0;
}

/* A pool of no particular memory: GstBufferPool or GstVideoBufferPool
 * themselves (not a subclass) on system memory. */
static gboolean
is_plain_pool (GstBufferPool * pool)
{
  GType type = G_OBJECT_TYPE (pool);
  GstAllocator *allocator = NULL;
  GstStructure *config;
  gboolean plain;

  if (type != GST_TYPE_BUFFER_POOL && type != GST_TYPE_VIDEO_BUFFER_POOL)
    return FALSE;
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_allocator (config, &allocator, NULL);
  plain = is_system_allocator (allocator);
  gst_structure_free (config);

  return plain;
}

/* Output buffers of pinned memory, so that the download from the GPU is a
 * DMA straight into them.  Only when downstream has no memory of its own
 * to offer: a pool or allocator that is more than plain system memory (a
 * sink's pool, GL or dmabuf memory, or pinned already) is kept, as writing
 * into it saves downstream a copy, which beats a faster download.  Here we
 * only hand our allocator over: GstVideoFilter makes the pool where there
 * is none and GstBaseTransform configures it with the first allocator. */
static void
gst_cuda_convolve_decide_pinned (GstCudaConvolve * self, GstQuery * query)
{
  GstAllocationParams params;
  GstAllocator *allocator = NULL;
  GstBufferPool *pool = NULL;
  guint size = 0, min = 0, max = 0;
  gboolean have_pool, have_params, special;

  have_pool = gst_query_get_n_allocation_pools (query) > 0;
  if (have_pool)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  gst_allocation_params_init (&params);
  have_params = gst_query_get_n_allocation_params (query) > 0;
  if (have_params)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);

  special = (pool && !is_plain_pool (pool)) ||
      !is_system_allocator (allocator);
  if (special)
    GST_DEBUG_OBJECT (self, "keeping downstream's %" GST_PTR_FORMAT
        " and %" GST_PTR_FORMAT, pool, allocator);
  gst_clear_object (&pool);
  gst_clear_object (&allocator);
  if (special)
    return;

  allocator = gst_cuda_convolve_get_host_allocator (self);
  if (!allocator)
    return;

  /* A pool of our own rather than downstream's plain one, keeping the
   * buffer counts downstream asked for. */
  if (have_pool)
    gst_query_set_nth_allocation_pool (query, 0, NULL, size, min, max);
  if (have_params)
    gst_query_set_nth_allocation_param (query, 0, allocator, &params);
  else
    gst_query_add_allocation_param (query, allocator, &params);
  GST_DEBUG_OBJECT (self, "output buffers of pinned memory");
  gst_object_unref (allocator);
}
#endif

#ifdef HAVE_GST_CUDA
/* Whether an allocation query is for frames in CUDA memory. */
static gboolean
gst_cuda_convolve_caps_are_cuda (GstQuery * query)
{
  GstCaps *caps;

  gst_query_parse_allocation (query, &caps, NULL);
  return gst_cuconv_cuda_caps_are_cuda (caps);
}
#endif

static gboolean
gst_cuda_convolve_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
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

#ifdef HAVE_GST_CUDA
  /* CUDA memory: a pool of the shared context, so that upstream's frames
   * are already where the kernels read them. */
  if (gst_cuda_convolve_caps_are_cuda (query)) {
    gst_cuconv_cuda_propose_pool (&GST_CUDA_CONVOLVE (trans)->cuda_mem,
        GST_ELEMENT (trans), query);
    return TRUE;
  }
#endif
#ifdef HAVE_CUDA
  /* On the CPU, GstVideoFilter's pool of system memory. */
  if (gst_cuda_convolve_wants_pinned (GST_CUDA_CONVOLVE (trans)))
    gst_cuda_convolve_propose_pinned (GST_CUDA_CONVOLVE (trans), query);
#endif

  return TRUE;
}

static gboolean
gst_cuda_convolve_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
#ifdef HAVE_GST_CUDA
  /* The CUDA pool is configured there, whole: the base class would set
   * downstream's allocator (none, or system memory) on it. */
  if (gst_cuda_convolve_caps_are_cuda (query))
    return gst_cuconv_cuda_decide_pool (&GST_CUDA_CONVOLVE (trans)->cuda_mem,
        GST_ELEMENT (trans), query);
#endif
#ifdef HAVE_CUDA
  if (gst_cuda_convolve_wants_pinned (GST_CUDA_CONVOLVE (trans)))
    gst_cuda_convolve_decide_pinned (GST_CUDA_CONVOLVE (trans), query);
#endif

  /* GstVideoFilter's choice (a video buffer pool, with GstVideoMeta when
   * downstream accepts it) suits the filter: output strides are read from
   * each frame. */
  return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans,
      query);
}

static gboolean
gst_cuda_convolve_set_info (GstVideoFilter * vfilter, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (vfilter);

  GST_DEBUG_OBJECT (self, "%s %dx%d", GST_VIDEO_INFO_NAME (in_info),
      GST_VIDEO_INFO_WIDTH (in_info), GST_VIDEO_INFO_HEIGHT (in_info));

#ifdef HAVE_CUDA
  /* The staging buffers are sized for the old geometry. */
  if (self->cuda)
    cuconv_cuda_release_buffers (self->cuda);
#endif
#ifdef HAVE_GST_CUDA
  self->cuda_mem.in_cuda = gst_cuconv_cuda_caps_are_cuda (incaps);
  self->cuda_mem.out_cuda = gst_cuconv_cuda_caps_are_cuda (outcaps);
  GST_DEBUG_OBJECT (self, "CUDA memory in %d, out %d",
      self->cuda_mem.in_cuda, self->cuda_mem.out_cuda);
  if ((self->cuda_mem.in_cuda || self->cuda_mem.out_cuda) &&
      !self->cuda_mem.context) {
    GST_ERROR_OBJECT (self, "CUDA memory negotiated without a CUDA context");
    return FALSE;
  }
#endif

  return TRUE;
}

/* Whether a and b make the same filter; custom kernels are compared as far
 * as they are set. */
static gboolean
settings_equal (const CuconvSettings * a, const CuconvSettings * b)
{
  return a->kernel == b->kernel && a->border == b->border &&
      a->radius == b->radius && a->sigma == b->sigma &&
      a->sigma_y == b->sigma_y && a->amount == b->amount &&
      a->normalize == b->normalize &&
      a->custom_x_len == b->custom_x_len &&
      a->custom_y_len == b->custom_y_len &&
      a->matrix_side == b->matrix_side &&
      memcmp (a->custom_x, b->custom_x,
      a->custom_x_len * sizeof (double)) == 0 &&
      memcmp (a->custom_y, b->custom_y,
      a->custom_y_len * sizeof (double)) == 0 &&
      memcmp (a->matrix, b->matrix,
      a->matrix_side * a->matrix_side * sizeof (double)) == 0;
}

/* What becomes of component comp (GST_VIDEO_COMP_Y, _U, ...) of a frame of
 * finfo, by the planes rule: Y, and R, G, B, are luma; U and V chroma;
 * alpha is copied. */
static CuconvCompOp
comp_op (const GstVideoFormatInfo * finfo, gint comp, CuconvKernel kernel,
    GstCudaConvolvePlanes which)
{
  gboolean chroma;

  if (comp == GST_VIDEO_COMP_A)
    return CUCONV_COMP_COPY;
  chroma = GST_VIDEO_FORMAT_INFO_IS_YUV (finfo) &&
      (comp == GST_VIDEO_COMP_U || comp == GST_VIDEO_COMP_V);

  switch (which) {
    case GST_CUDA_CONVOLVE_PLANES_ALL:
      return CUCONV_COMP_FILTER;
    case GST_CUDA_CONVOLVE_PLANES_LUMA:
      return chroma ? CUCONV_COMP_COPY : CUCONV_COMP_FILTER;
    case GST_CUDA_CONVOLVE_PLANES_CHROMA:
      return chroma ? CUCONV_COMP_FILTER : CUCONV_COMP_COPY;
    case GST_CUDA_CONVOLVE_PLANES_AUTO:
    default:
      if (!chroma)
        return CUCONV_COMP_FILTER;
      switch (kernel) {
        case CUCONV_KERNEL_SHARPEN:
          /* sharpening colour would only add colour noise */
          return CUCONV_COMP_COPY;
        case CUCONV_KERNEL_SOBEL:
        case CUCONV_KERNEL_LAPLACIAN:
          /* edges of colour mean nothing: a grey edge map */
          return CUCONV_COMP_FILL;
        default:
          return CUCONV_COMP_FILTER;
      }
  }
}

/* Describes each plane of the frames to the engine, with what becomes of
 * each of its components for kernel and which.  Returns the number of
 * planes. */
static guint
gst_cuda_convolve_map_planes (const GstVideoFrame * in_frame,
    GstVideoFrame * out_frame, CuconvKernel kernel, GstCudaConvolvePlanes which,
    CuconvPlane * planes)
{
  const GstVideoFormatInfo *finfo = in_frame->info.finfo;
  guint n_planes = GST_VIDEO_FRAME_N_PLANES (in_frame);
  guint p;

  for (p = 0; p < n_planes; p++) {
    CuconvPlane *plane = &planes[p];
    gint comp[GST_VIDEO_MAX_COMPONENTS], first, bytes, i;

    gst_video_format_info_component (finfo, p, comp);
    first = comp[0];
    g_assert (first >= 0);

    memset (plane, 0, sizeof (*plane));
    plane->src = GST_VIDEO_FRAME_PLANE_DATA (in_frame, p);
    plane->dst = GST_VIDEO_FRAME_PLANE_DATA (out_frame, p);
    plane->src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (in_frame, p);
    plane->dst_stride = GST_VIDEO_FRAME_PLANE_STRIDE (out_frame, p);
    plane->width = GST_VIDEO_FRAME_COMP_WIDTH (in_frame, first);
    plane->height = GST_VIDEO_FRAME_COMP_HEIGHT (in_frame, first);
    /* The factors, not the size ratio: 5 luma columns have 3 chroma ones. */
    plane->sub_x = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, first);
    plane->sub_y = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, first);
    /* The components of a plane share depth and shift in every format. */
    plane->depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, first);
    plane->shift = GST_VIDEO_FORMAT_INFO_SHIFT (finfo, first);
    plane->fill = 1u << (plane->depth - 1);

    /* A pixel's samples: its components in the order of their offsets,
     * then in RGBx or BGRx a padding byte that is no component, copied
     * like alpha.  The order, not the offset itself: GStreamer 1.22 gives
     * the V of P010 and P016 NV12's offset of 1, not 2 bytes. */
    bytes = cuconv_plane_sample_bytes (plane);
    plane->n_comp = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, first) / bytes;
    g_assert (plane->n_comp >= 1 && plane->n_comp <= CUCONV_MAX_COMP);
    for (i = 0; i < plane->n_comp; i++)
      plane->op[i] = CUCONV_COMP_COPY;
    for (i = 0; i < GST_VIDEO_MAX_COMPONENTS && comp[i] >= 0; i++) {
      gint j, pos = 0;

      for (j = 0; j < GST_VIDEO_MAX_COMPONENTS && comp[j] >= 0; j++)
        pos += GST_VIDEO_FORMAT_INFO_POFFSET (finfo, comp[j]) <
            GST_VIDEO_FORMAT_INFO_POFFSET (finfo, comp[i]);
      plane->op[pos] = comp_op (finfo, comp[i], kernel, which);
    }
  }

  return n_planes;
}

/* This frame's backend and filter, from the settings copied for it. */
static gboolean
gst_cuda_convolve_prepare (GstCudaConvolve * self)
{
  if (!gst_cuda_convolve_ensure_backend (self, self->frame_backend))
    return FALSE;

  if (!self->filter_valid ||
      !settings_equal (&self->filter.settings, &self->frame_settings)) {
    cuconv_filter_init (&self->filter, &self->frame_settings);
    self->filter_valid = TRUE;
  }
  return TRUE;
}

static GstFlowReturn
gst_cuda_convolve_transform_frame (GstVideoFilter * vfilter,
    GstVideoFrame * in_frame, GstVideoFrame * out_frame)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (vfilter);
  CuconvPlane planes[GST_VIDEO_MAX_PLANES];
  guint n_planes;
#ifdef HAVE_CUDA
  gchar err[256] = "";
#endif

  /* Identity settings reach here only between system and CUDA memory,
   * where the buffer cannot pass through: a copy. */
  if (cuconv_settings_is_identity (&self->frame_settings))
    return gst_video_frame_copy (out_frame, in_frame) ? GST_FLOW_OK :
        GST_FLOW_ERROR;

  if (!gst_cuda_convolve_prepare (self))
    return GST_FLOW_ERROR;

  n_planes = gst_cuda_convolve_map_planes (in_frame, out_frame,
      self->frame_settings.kernel, self->frame_planes, planes);

#ifdef HAVE_CUDA
  if (self->use_cuda) {
    if (cuconv_cuda_process_host (self->cuda, planes, n_planes, &self->filter,
            err, sizeof (err)) < 0)
      goto cuda_failed;
    return GST_FLOW_OK;
  }
#endif

  if (cuconv_reference_frame (planes, n_planes, &self->filter) < 0)
    goto cpu_failed;

  return GST_FLOW_OK;

  /* ERRORS */
#ifdef HAVE_CUDA
cuda_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Filtering on the GPU failed: %s", err), (NULL));
    return GST_FLOW_ERROR;
  }
#endif
cpu_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory while filtering a frame on the CPU."), (NULL));
    return GST_FLOW_ERROR;
  }
}

static GstCaps *
gst_cuda_convolve_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *ret, *tmp;
#ifdef HAVE_GST_CUDA
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
  gboolean offer_cuda;

  /* Each side may be in CUDA or system memory, whatever the other is
   * (CUDA memory only when there is a context to use it in); the other
   * side's memory first, so that a pipeline stays in the memory it is in
   * unless a neighbour needs the other. */
  GST_OBJECT_LOCK (self);
  offer_cuda = self->backend != GST_CUDA_CONVOLVE_BACKEND_CPU &&
      gst_cuconv_cuda_can_offer (&self->cuda_mem);
  GST_OBJECT_UNLOCK (self);
  ret = gst_cuconv_cuda_transform_caps (caps, offer_cuda);
#else
  ret = gst_caps_ref (caps);
#endif

  if (filter) {
    tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      ret);
  return ret;
}

#ifdef HAVE_GST_CUDA
static void
gst_cuda_convolve_set_context (GstElement * element, GstContext * context)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (element);

  gst_cuconv_cuda_set_context (&self->cuda_mem, element, context,
      gst_cuda_convolve_device_id (self));
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_convolve_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);

  if (gst_cuconv_cuda_handle_context_query (&self->cuda_mem,
          GST_ELEMENT (self), query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
}

/* In and out in CUDA memory of the shared context: the kernels read and
 * write the buffers where they are, in the context, on our stream, which
 * is finished before the buffer goes downstream. */
static GstFlowReturn
gst_cuda_convolve_filter_cuda (GstCudaConvolve * self, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstVideoFilter *vfilter = GST_VIDEO_FILTER (self);
  GstVideoFrame in_frame, out_frame;
  CuconvPlane planes[GST_VIDEO_MAX_PLANES];
  guint n_planes;
  int rc = 0;
  CUresult cr = CUDA_SUCCESS;
  const char *what = "cannot launch the kernel";

  if (!gst_video_frame_map (&in_frame, &vfilter->in_info, inbuf,
          GST_MAP_READ | GST_MAP_CUDA))
    goto map_failed;
  if (!gst_video_frame_map (&out_frame, &vfilter->out_info, outbuf,
          GST_MAP_WRITE | GST_MAP_CUDA)) {
    gst_video_frame_unmap (&in_frame);
    goto map_failed;
  }
  n_planes = gst_cuda_convolve_map_planes (&in_frame, &out_frame,
      self->frame_settings.kernel, self->frame_planes, planes);

  if (!gst_cuda_context_push (self->cuda_mem.context)) {
    rc = -1;
    what = "cannot make the CUDA context current";
  } else {
    rc = cuconv_filter_device (planes, n_planes, &self->filter,
        self->cuda_mem.stream);
    if (rc == 0) {
      cr = CuStreamSynchronize (self->cuda_mem.stream);
      what = "the kernel failed";
    }
    gst_cuda_context_pop (NULL);
  }
  gst_video_frame_unmap (&out_frame);
  gst_video_frame_unmap (&in_frame);

  if (rc != 0 || cr != CUDA_SUCCESS)
    goto cuda_failed;
  return GST_FLOW_OK;

  /* ERRORS */
map_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot map a frame in CUDA memory."), (NULL));
    return GST_FLOW_ERROR;
  }
cuda_failed:
  {
    const char *name = NULL;

    if (cr != CUDA_SUCCESS)
      CuGetErrorName (cr, &name);
    else if (rc > 0)
      name = cuconv_cuda_error_name (rc);
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Filtering CUDA memory on the GPU failed: %s (%s).", what,
            GST_STR_NULL (name)), (NULL));
    return GST_FLOW_ERROR;
  }
}

static GstFlowReturn
gst_cuda_convolve_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
  GstCuconvCuda *cm = &self->cuda_mem;

  if (cm->in_cuda && cm->out_cuda && gst_cuconv_cuda_buffer_is_local (cm, inbuf)
      && gst_cuconv_cuda_buffer_is_local (cm, outbuf)) {
    if (!gst_cuda_convolve_prepare (self))
      return GST_FLOW_ERROR;
    if (self->use_cuda)
      return gst_cuda_convolve_filter_cuda (self, inbuf, outbuf);
  }

  /* Any other mix, and identity settings between memories: GstVideoFilter
   * maps the frames into system memory (GstCudaMemory stages them) and
   * transform_frame () filters or copies them. */
  return GST_BASE_TRANSFORM_CLASS (parent_class)->transform (trans, inbuf,
      outbuf);
}
#endif
