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
 * strength #GstCudaConvolve:amount), sobel or laplacian edges, the
 * user's own separable (#GstCudaConvolve:kernel-x,
 * #GstCudaConvolve:kernel-y) or 2-D (#GstCudaConvolve:matrix) kernel, or
 * the edge-preserving bilateral blur (#GstCudaConvolve:sigma-range), in
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
 * #GstCudaConvolve:region=roi filters only inside rectangles, outside-roi
 * everywhere else: the frame's #GstVideoRegionOfInterestMeta and, from
 * GStreamer 1.24, the object detections of its GstAnalyticsRelationMeta
 * (of #GstCudaConvolve:roi-types, at least
 * #GstCudaConvolve:roi-min-confidence, grown by
 * #GstCudaConvolve:roi-margin; still applied for
 * #GstCudaConvolve:roi-hold frames after the last that carried them), and
 * the fixed #GstCudaConvolve:regions.  There the output is the
 * whole-frame filter's, elsewhere the input; with roi, a frame without
 * any passes through.  #GstCudaConvolve:roi-shape (the box or the ellipse
 * inscribed in it) and #GstCudaConvolve:roi-feather (a band inside the
 * shape's edge over which the output fades from the input to the
 * filtered value) soften each region.  Beyond 4096 rectangles a frame
 * is filtered whole (a warning).
 *
 * #GstCudaConvolve:temporal denoises over time first: each sample is
 * blended with the previous denoised frame (before the kernel) unless it
 * changed by #GstCudaConvolve:temporal-threshold or more (motion), then
 * the kernel filters the result.  It adds no latency, keeps one denoised
 * frame (on the GPU, or in host memory on the CPU), covers the whole frame
 * whatever the region, and starts afresh on caps changes, flushes, seeks,
 * gaps, discontinuities and backend switches.
 *
 * The plumbing is #GstCudaVideoFilter's: the backend choice
 * (#GstCudaVideoFilter:backend, and the read-only
 * #GstCudaVideoFilter:active-backend, "cuda" or "cpu", "none" before the
 * element is started), the one CUDA context, CUDA memory and the buffer
 * pools described below.
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
 * on a stream it finishes before pushing.  #GstCudaVideoFilter:cuda-device-id
 * picks the GPU (-1: the neighbours' context's, else device 0).
 *
 * Behind a source that is not live (a file, a decoder, appsrc), a frame in
 * CUDA memory, or in pinned memory on both sides, stays in flight while
 * the GPU filters it: the element pushes it, finished, once the next frame
 * is enqueued, before any event or query that follows it, or about a
 * millisecond later when nothing follows; a flush drops it.  The LATENCY query
 * then counts one frame more, and the pools proposed upstream one buffer
 * more.  Behind a live source every frame is finished before it is pushed.
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
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! facedetect display=false ! videoconvert ! cudaconvolve region=roi roi-types=face roi-margin=16 sigma=12 radius=0 ! videoconvert ! autovideosink
 * ]| Blurs the faces facedetect finds, 16 pixels beyond their boxes.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudaconvolve kernel=bilateral radius=2 sigma-range=12 temporal=0.8 temporal-threshold=20 ! videoconvert ! autovideosink
 * ]| Denoises a camera over time, then with an edge-preserving blur.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "cuconv-engine.h"
#include "gstcudaconvolve.h"
#include "gstcudaconvolvefilterprops.h"
#include "gstcudaconvolvekernelprops.h"
#include "gstcudaconvolveplanes.h"
#include "gstcudaconvolveregions.h"
#include "gstcudaconvolvetemporal.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

enum
{
  PROP_0,
  /* gstcudaconvolvefilterprops.c's, in its order */
  PROP_KERNEL,
  PROP_RADIUS,
  PROP_SIGMA,
  PROP_SIGMA_Y,
  PROP_AMOUNT,
  PROP_SIGMA_RANGE,
  PROP_BLOCK_SIZE,
  PROP_PATCH_RADIUS,
  PROP_THRESHOLD_LOW,
  PROP_THRESHOLD_HIGH,
  PROP_BORDER,
  PROP_PLANES,
  PROP_KERNEL_X,
  PROP_KERNEL_Y,
  PROP_MATRIX,
  PROP_NORMALIZE,
  PROP_CPU_THREADS,
  /* gstcudaconvolvetemporal.c's, in its order */
  PROP_TEMPORAL,
  PROP_TEMPORAL_THRESHOLD,
  PROP_TEMPORAL_MODE,
  /* gstcudaconvolveregions.c's, in its order */
  PROP_REGION,
  PROP_ROI_TYPES,
  PROP_ROI_MARGIN,
  PROP_REGIONS,
  PROP_ROI_MIN_CONFIDENCE,
  PROP_ROI_HOLD,
  PROP_ROI_SHAPE,
  PROP_ROI_FEATHER,
  PROP_ROI_SCALE,
  N_PROPERTIES
};

#define DEFAULT_CPU_THREADS 0
#define MAX_CPU_THREADS 256

static GParamSpec *properties[N_PROPERTIES];
G_STATIC_ASSERT (PROP_ROI_SCALE - PROP_REGION ==
    GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE &&
    N_PROPERTIES - PROP_REGION == GST_CUDA_CONVOLVE_REGION_N_PROPS);
G_STATIC_ASSERT (PROP_CPU_THREADS - PROP_KERNEL ==
    GST_CUDA_CONVOLVE_FILTER_N_PROPS);
G_STATIC_ASSERT (PROP_REGION - PROP_TEMPORAL ==
    GST_CUDA_CONVOLVE_TEMPORAL_N_PROPS);

struct _GstCudaConvolve
{
  GstCudaVideoFilter parent;

  /* Properties, under the object lock. */
  GstCudaConvolveFilterProps filter_props;
  GstCudaConvolveRegionProps region_props;
  GstCudaConvolveTemporalProps temporal_props;
  guint cpu_threads;

  /* Streaming thread only (and start/stop, which never run alongside it). */
  CuconvSettings frame_settings;        /* this frame's copy of settings */
  GstCudaConvolvePlanes frame_planes;
  guint frame_cpu_threads;
  gboolean frame_spatial_off;   /* the kernel leaves this frame unchanged */
  GstCudaConvolveRegionFrame frame_regions;
  CuconvSettings filter_settings;       /* what filter was built from */
  CuconvFilter *filter;         /* built from frame_settings when they change
                                 * (on the heap: 66 KiB of taps) */
  gboolean filter_valid;
  /* The temporal denoise's table and resets. */
  GstCudaConvolveTemporal temporal;
  /* What the stream of frames keeps: the CPU's threads and memory, the
   * temporal state, the GPU's resources (in the base's context). */
  CuconvEngine *engine;
};

/* Every format the element filters, the same on both pads and in either
 * memory.  gst_cuda_convolve_planes_describe () describes their planes to the
 * engine from their GstVideoFormatInfo. */
#define VIDEO_FORMATS "{ GRAY8, GRAY16_LE, I420, YV12, NV12, NV21, Y42B, " \
    "Y444, I420_10LE, I420_12LE, P010_10LE, P016_LE, Y444_16LE, RGBA, BGRA, " \
    "RGBx, BGRx, AYUV }"

static void gst_cuda_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_cuda_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_cuda_convolve_finalize (GObject * object);
static gboolean gst_cuda_convolve_stop (GstBaseTransform * trans);
static gboolean gst_cuda_convolve_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static gboolean gst_cuda_convolve_set_info (GstVideoFilter * vfilter,
    GstCaps * incaps, GstVideoInfo * in_info, GstCaps * outcaps,
    GstVideoInfo * out_info);

static gboolean gst_cuda_convolve_prepare_frame (GstCudaVideoFilter * filter,
    GstBuffer * inbuf);
static GstFlowReturn gst_cuda_convolve_filter (GstCudaVideoFilter * filter,
    GstVideoFrame * in_frame, GstVideoFrame * out_frame,
    GstCudaVideoFilterMemory memory, gpointer stream);
static gboolean gst_cuda_convolve_open_cuda (GstCudaVideoFilter * filter,
    GError ** error);
static void gst_cuda_convolve_close_cuda (GstCudaVideoFilter * filter);

#define gst_cuda_convolve_parent_class parent_class
G_DEFINE_TYPE (GstCudaConvolve, gst_cuda_convolve, GST_TYPE_CUDA_VIDEO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaconvolve, "cudaconvolve", GST_RANK_NONE,
    GST_TYPE_CUDA_CONVOLVE);

static void
gst_cuda_convolve_class_init (GstCudaConvolveClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *vfilter_class = GST_VIDEO_FILTER_CLASS (klass);
  GstCudaVideoFilterClass *filter_class = GST_CUDA_VIDEO_FILTER_CLASS (klass);

  gobject_class->set_property = gst_cuda_convolve_set_property;
  gobject_class->get_property = gst_cuda_convolve_get_property;
  gobject_class->finalize = gst_cuda_convolve_finalize;

  gst_cuda_convolve_filter_param_specs (&properties[PROP_KERNEL]);
  properties[PROP_CPU_THREADS] = g_param_spec_uint ("cpu-threads",
      "CPU threads", "Threads that filter a frame on the CPU backend, each a "
      "band of its rows: 0 = as many as the machine has cores. Takes effect "
      "from the next frame", 0, MAX_CPU_THREADS, DEFAULT_CPU_THREADS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  gst_cuda_convolve_temporal_param_specs (&properties[PROP_TEMPORAL]);
  gst_cuda_convolve_region_props_param_specs (&properties[PROP_REGION]);
  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata (element_class,
      "CUDA convolution filter", "Filter/Effect/Video",
      "Blurs (gaussian, box), sharpens (unsharp mask), finds edges (sobel, "
      "laplacian) or applies a custom separable or 2-D kernel, in 8 to 16 "
      "bit YUV, grey and RGB, with a choice of planes and of border "
      "handling. Runs on a CUDA GPU when one is usable, else on the CPU; "
      "identity settings pass buffers through untouched",
      "gst-cudaconvolve authors");
  gst_cuda_video_filter_class_add_pad_templates (filter_class, VIDEO_FORMATS);

  filter_class->prepare_frame =
      GST_DEBUG_FUNCPTR (gst_cuda_convolve_prepare_frame);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_convolve_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_convolve_sink_event);
  vfilter_class->set_info = GST_DEBUG_FUNCPTR (gst_cuda_convolve_set_info);
  filter_class->filter = GST_DEBUG_FUNCPTR (gst_cuda_convolve_filter);
  filter_class->open_cuda = GST_DEBUG_FUNCPTR (gst_cuda_convolve_open_cuda);
  filter_class->close_cuda = GST_DEBUG_FUNCPTR (gst_cuda_convolve_close_cuda);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_convolve_debug, "cudaconvolve", 0,
      "CUDA convolution blur");

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_KERNEL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_BORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_PLANES, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_REGION, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_CONVOLVE_ROI_SHAPE, 0);
}

static void
gst_cuda_convolve_init (GstCudaConvolve * self)
{
  gst_cuda_convolve_filter_props_init (&self->filter_props);
  self->filter = g_new0 (CuconvFilter, 1);
  self->engine = cuconv_engine_new ();
  gst_cuda_convolve_region_props_init (&self->region_props);
  gst_cuda_convolve_region_frame_init (&self->frame_regions);
  gst_cuda_convolve_temporal_props_init (&self->temporal_props);
  gst_cuda_convolve_temporal_init (&self->temporal);

  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self),
      cuconv_settings_is_identity (&self->filter_props.settings));
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
  gboolean valid = TRUE;
  gchar *why = NULL;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KERNEL:
    case PROP_RADIUS:
    case PROP_SIGMA:
    case PROP_SIGMA_Y:
    case PROP_AMOUNT:
    case PROP_SIGMA_RANGE:
    case PROP_BLOCK_SIZE:
    case PROP_PATCH_RADIUS:
    case PROP_THRESHOLD_LOW:
    case PROP_THRESHOLD_HIGH:
    case PROP_BORDER:
    case PROP_PLANES:
    case PROP_KERNEL_X:
    case PROP_KERNEL_Y:
    case PROP_MATRIX:
    case PROP_NORMALIZE:
      valid = gst_cuda_convolve_filter_props_set (&self->filter_props,
          prop_id - PROP_KERNEL, value, &why);
      break;
    case PROP_CPU_THREADS:
      self->cpu_threads = g_value_get_uint (value);
      break;
    case PROP_TEMPORAL:
    case PROP_TEMPORAL_THRESHOLD:
    case PROP_TEMPORAL_MODE:
      gst_cuda_convolve_temporal_props_set (&self->temporal_props,
          prop_id - PROP_TEMPORAL, value);
      break;
    case PROP_REGION:
    case PROP_ROI_TYPES:
    case PROP_ROI_MARGIN:
    case PROP_REGIONS:
    case PROP_ROI_MIN_CONFIDENCE:
    case PROP_ROI_HOLD:
    case PROP_ROI_SHAPE:
    case PROP_ROI_FEATHER:
    case PROP_ROI_SCALE:
      valid = gst_cuda_convolve_region_props_set (&self->region_props,
          prop_id - PROP_REGION, value, &why);
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
    case PROP_RADIUS:
    case PROP_SIGMA:
    case PROP_SIGMA_Y:
    case PROP_AMOUNT:
    case PROP_SIGMA_RANGE:
    case PROP_BLOCK_SIZE:
    case PROP_PATCH_RADIUS:
    case PROP_THRESHOLD_LOW:
    case PROP_THRESHOLD_HIGH:
    case PROP_BORDER:
    case PROP_PLANES:
    case PROP_KERNEL_X:
    case PROP_KERNEL_Y:
    case PROP_MATRIX:
    case PROP_NORMALIZE:
      gst_cuda_convolve_filter_props_get (&self->filter_props,
          prop_id - PROP_KERNEL, value);
      break;
    case PROP_CPU_THREADS:
      g_value_set_uint (value, self->cpu_threads);
      break;
    case PROP_TEMPORAL:
    case PROP_TEMPORAL_THRESHOLD:
    case PROP_TEMPORAL_MODE:
      gst_cuda_convolve_temporal_props_get (&self->temporal_props,
          prop_id - PROP_TEMPORAL, value);
      break;
    case PROP_REGION:
    case PROP_ROI_TYPES:
    case PROP_ROI_MARGIN:
    case PROP_REGIONS:
    case PROP_ROI_MIN_CONFIDENCE:
    case PROP_ROI_HOLD:
    case PROP_ROI_SHAPE:
    case PROP_ROI_FEATHER:
    case PROP_ROI_SCALE:
      gst_cuda_convolve_region_props_get (&self->region_props,
          prop_id - PROP_REGION, value);
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
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);

  /* close_cuda () freed the GPU's side, in the context, when the element
   * stopped */
  cuconv_engine_free (self->engine);
  gst_cuda_convolve_region_props_clear (&self->region_props);
  gst_cuda_convolve_region_frame_clear (&self->frame_regions);
  g_free (self->filter);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* What frames carry over to the next ones, the temporal denoise and the
 * held detections, starts afresh.  Any thread. */
static void
gst_cuda_convolve_restart (GstCudaConvolve * self)
{
  gst_cuda_convolve_temporal_reset (&self->temporal);
  gst_cuda_convolve_hold_reset (&self->frame_regions.hold);
}

/* The CPU backend's threads and memory, and the temporal state, go with
 * the stream (the base's stop closes CUDA first: close_cuda frees the
 * GPU's side). */
static gboolean
gst_cuda_convolve_stop (GstBaseTransform * trans)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);
  gboolean ret;

  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
  cuconv_engine_release_cpu (self->engine);
  gst_cuda_convolve_restart (self);
  return ret;
}

/* Frames carry nothing over where they stop following one another: a
 * flush, a new segment (a seek), a gap, a new stream. */
static gboolean
gst_cuda_convolve_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_SEGMENT:
    case GST_EVENT_GAP:
    case GST_EVENT_STREAM_START:
      gst_cuda_convolve_restart (self);
      break;
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* New caps: frames carry nothing over. */
static gboolean
gst_cuda_convolve_set_info (GstVideoFilter * vfilter, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  gst_cuda_convolve_restart (GST_CUDA_CONVOLVE (vfilter));
  return GST_VIDEO_FILTER_CLASS (parent_class)->set_info (vfilter, incaps,
      in_info, outcaps, out_info);
}

/* Whether a and b make the same filter; custom kernels are compared as far
 * as they are set. */
static gboolean
settings_equal (const CuconvSettings * a, const CuconvSettings * b)
{
  return a->kernel == b->kernel && a->border == b->border &&
      a->radius == b->radius && a->sigma == b->sigma &&
      a->sigma_y == b->sigma_y && a->amount == b->amount &&
      a->sigma_range == b->sigma_range && a->normalize == b->normalize &&
      a->block_size == b->block_size &&
      a->patch_radius == b->patch_radius &&
      a->threshold_low == b->threshold_low &&
      a->threshold_high == b->threshold_high &&
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

static gboolean
gst_cuda_convolve_prepare_frame (GstCudaVideoFilter * filter, GstBuffer * inbuf)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (filter);
  GstCudaConvolveRegionProps region_props;
  GstCudaConvolveTemporalProps temporal_props;
  gboolean temporal;

  gst_cuda_convolve_region_props_init (&region_props);
  GST_OBJECT_LOCK (self);
  self->frame_settings = self->filter_props.settings;
  self->frame_planes = self->filter_props.planes;
  self->frame_cpu_threads = self->cpu_threads;
  gst_cuda_convolve_region_props_copy (&region_props, &self->region_props);
  temporal_props = self->temporal_props;
  GST_OBJECT_UNLOCK (self);

  temporal =
      gst_cuda_convolve_temporal_prepare (&self->temporal, &temporal_props,
      inbuf);
  self->frame_spatial_off = cuconv_settings_is_identity (&self->frame_settings)
      || gst_cuda_convolve_region_frame_prepare (&self->frame_regions,
      GST_ELEMENT (self), &region_props, inbuf,
      &GST_VIDEO_FILTER (self)->in_info);
  gst_cuda_convolve_region_frame_relative (&self->frame_regions, &region_props,
      &self->frame_settings);
  gst_cuda_convolve_region_props_clear (&region_props);
  return self->frame_spatial_off && !temporal;
}

/* The engine's filter for this frame's settings, rebuilt only when they
 * changed. */
static const CuconvFilter *
gst_cuda_convolve_frame_filter (GstCudaConvolve * self)
{
  if (self->frame_spatial_off)
    return NULL;
  if (!self->filter_valid ||
      !settings_equal (&self->filter_settings, &self->frame_settings)) {
    cuconv_filter_init (self->filter, &self->frame_settings);
    self->filter_settings = self->frame_settings;
    self->filter_valid = TRUE;
  }
  return self->filter;
}

/* The one hand-over: the frame, its filter, regions and temporal table,
 * and where it lives, to the engine. */
static GstFlowReturn
gst_cuda_convolve_filter (GstCudaVideoFilter * filter,
    GstVideoFrame * in_frame, GstVideoFrame * out_frame,
    GstCudaVideoFilterMemory memory, gpointer stream)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (filter);
  CuconvPlane planes[GST_VIDEO_MAX_PLANES];
  CuconvFrame frame = { planes };
  CuconvStatus st = { 0 };

  G_STATIC_ASSERT ((gint) GST_CUDA_VIDEO_FILTER_MEMORY_CPU ==
      CUCONV_MEMORY_CPU && (gint) GST_CUDA_VIDEO_FILTER_MEMORY_HOST ==
      CUCONV_MEMORY_HOST && (gint) GST_CUDA_VIDEO_FILTER_MEMORY_PINNED ==
      CUCONV_MEMORY_PINNED && (gint) GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE ==
      CUCONV_MEMORY_DEVICE);

  frame.n_planes = gst_cuda_convolve_planes_describe (in_frame, out_frame,
      self->frame_settings.kernel, self->frame_planes, planes);
  frame.memory = (CuconvMemory) memory;
  frame.stream = stream;
  frame.filter = gst_cuda_convolve_frame_filter (self);
  frame.regions = &self->frame_regions.regions;
  if (self->temporal.on) {
    frame.temporal = self->temporal.lut;
    frame.temporal_restart =
        gst_cuda_convolve_temporal_take_reset (&self->temporal);
    frame.temporal_guide = gst_cuda_convolve_planes_guide (in_frame);
    frame.temporal_compensate = self->temporal.compensate &&
        frame.temporal_guide >= 0;
  }
  frame.cpu_threads = self->frame_cpu_threads;
  if (cuconv_engine_filter (self->engine, &frame, &st) == 0)
    return GST_FLOW_OK;

  if (memory == GST_CUDA_VIDEO_FILTER_MEMORY_CPU) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory while filtering a frame on the CPU."), (NULL));
  } else {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Filtering %s on the GPU failed: %s Try backend=cpu, and report "
            "the error if it persists.",
            memory == GST_CUDA_VIDEO_FILTER_MEMORY_DEVICE ? "CUDA memory" :
            "a frame", st.message), ("engine status %d", st.code));
  }
  return GST_FLOW_ERROR;
}

static gboolean
gst_cuda_convolve_open_cuda (GstCudaVideoFilter * filter, GError ** error)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (filter);
  CuconvStatus st = { 0 };

  if (cuconv_engine_open_gpu (self->engine, &st) != 0) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "%s", st.message);
    return FALSE;
  }
  return TRUE;
}

static void
gst_cuda_convolve_close_cuda (GstCudaVideoFilter * filter)
{
  cuconv_engine_close_gpu (GST_CUDA_CONVOLVE (filter)->engine);
}
