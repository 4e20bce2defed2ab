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
#include "gstcudaconvolvekernelprops.h"
#include "gstcudaconvolveplanes.h"
#include "gstcudaconvolveregions.h"
#include "gstcudaconvolvetemporal.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

enum
{
  PROP_0,
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

#define DEFAULT_KERNEL GST_CUDA_CONVOLVE_KERNEL_GAUSSIAN
#define DEFAULT_RADIUS 2
#define DEFAULT_SIGMA 0.0
#define DEFAULT_SIGMA_Y 0.0
#define DEFAULT_AMOUNT 1.0
#define DEFAULT_SIGMA_RANGE 25.0
#define DEFAULT_BLOCK_SIZE 16
#define DEFAULT_PATCH_RADIUS 2
#define DEFAULT_THRESHOLD_LOW 50.0
#define DEFAULT_THRESHOLD_HIGH 150.0
#define DEFAULT_BORDER GST_CUDA_CONVOLVE_BORDER_CLAMP
#define DEFAULT_PLANES GST_CUDA_CONVOLVE_PLANES_AUTO
#define DEFAULT_NORMALIZE TRUE
#define DEFAULT_CPU_THREADS 0
#define MAX_CPU_THREADS 256

static GParamSpec *properties[N_PROPERTIES];
G_STATIC_ASSERT (PROP_ROI_SCALE - PROP_REGION ==
    GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE &&
    N_PROPERTIES - PROP_REGION == GST_CUDA_CONVOLVE_REGION_N_PROPS);
G_STATIC_ASSERT (PROP_REGION - PROP_TEMPORAL ==
    GST_CUDA_CONVOLVE_TEMPORAL_N_PROPS);

struct _GstCudaConvolve
{
  GstCudaVideoFilter parent;

  /* Properties, under the object lock. */
  CuconvSettings settings;
  GstCudaConvolvePlanes planes;
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
      "mask), sobel (gradient magnitude) or laplacian edges, custom (the "
      "kernel in kernel-x/kernel-y or matrix), bilateral (a gaussian "
      "blur that keeps edges: weights fall with distance, sigma, and with "
      "the difference of the samples, sigma-range), pixelate (a mosaic "
      "of blocks of block-size), nlmeans (non-local means: a denoise "
      "that averages the samples whose patches, patch-radius, look alike), "
      "or canny (thin, connected edges: threshold-low, threshold-high)",
      GST_TYPE_CUDA_CONVOLVE_KERNEL, DEFAULT_KERNEL, live);
  properties[PROP_RADIUS] = g_param_spec_uint ("radius", "Radius",
      "Kernel radius in luma pixels, 0-1024: the kernel spans 2 * radius + 1 "
      "pixels in each direction (halved, rounded up, on subsampled chroma). "
      "0 = derive it from sigma as ceil (3 * sigma); for gaussian and "
      "sharpen, when that is above 64, the untruncated gaussian (the ideal "
      "blur, at a cost that does not grow with sigma); sobel and "
      "laplacian take radius 0 and sigma 0 as radius 1; bilateral cuts it "
      "to 16, nlmeans (its search window) and canny (its smoothing) too. "
      "Not used by custom. "
      "gaussian, box, sharpen and bilateral with radius, sigma and sigma-y 0 "
      "pass buffers through untouched", 0, CUCONV_MAX_RADIUS, DEFAULT_RADIUS,
      live);
  properties[PROP_SIGMA] = g_param_spec_double ("sigma", "Sigma",
      "Standard deviation of the gaussian in luma pixels, 0-256, for "
      "gaussian, sharpen, bilateral (its spatial weights), canny (its "
      "smoothing), and sobel and laplacian above radius 1; "
      "vertically too unless sigma-y is set. 0 = derive it from radius as "
      "0.3 * (radius - 1) + 0.8; a sigma below 0.1 (on a plane: divided by "
      "its subsampling) counts as 0.1. box uses it only to derive the radius "
      "when radius is 0", 0.0, CUCONV_MAX_SIGMA, DEFAULT_SIGMA, live);
  properties[PROP_SIGMA_Y] = g_param_spec_double ("sigma-y", "Sigma Y",
      "Vertical standard deviation in luma pixels, 0-256, for a filter "
      "stronger in one direction; with radius 0 it also gives the vertical "
      "radius, ceil (3 * sigma-y). 0 = the same as sigma",
      0.0, CUCONV_MAX_SIGMA, DEFAULT_SIGMA_Y, live);
  properties[PROP_AMOUNT] = g_param_spec_double ("amount", "Amount",
      "Strength of kernel=sharpen, 0-10: out = in + amount * (in - "
      "gaussian (in)), the gaussian of radius and sigma. 0 = passthrough; "
      "1 doubles the detail finer than the gaussian",
      0.0, CUCONV_MAX_AMOUNT, DEFAULT_AMOUNT, live);
  properties[PROP_SIGMA_RANGE] = g_param_spec_double ("sigma-range",
      "Sigma range", "kernel=bilateral: standard deviation of the range "
      "weight exp (-d^2 / (2 sigma-range^2)), d the difference of two "
      "samples, in 8-bit levels (0-1000; times 4 in 10-bit, 256 in 16-bit "
      "samples). Differences well below it are smoothed, edges well above "
      "it kept. 0 = only equal samples are averaged: passthrough. "
      "kernel=nlmeans: the same, d the root mean square difference of two "
      "samples' patches",
      0.0, CUCONV_MAX_SIGMA_RANGE, DEFAULT_SIGMA_RANGE, live);
  properties[PROP_BLOCK_SIZE] = g_param_spec_uint ("block-size",
      "Block size", "kernel=pixelate: the side of the blocks in luma pixels "
      "(halved on subsampled chroma), 1-" G_STRINGIFY (CUCONV_MAX_BLOCK)
      ": each block becomes the mean of its samples, rounded. The blocks "
      "start at the frame's top-left corner, and with region=roi at each "
      "region's box (grown by roi-margin); roi-scale sets a side for each "
      "region instead. 1 = passthrough", 1, CUCONV_MAX_BLOCK,
      DEFAULT_BLOCK_SIZE, live);
  properties[PROP_PATCH_RADIUS] = g_param_spec_uint ("patch-radius",
      "Patch radius", "kernel=nlmeans: the radius of the patches compared, "
      "in luma samples (halved, rounded up, on subsampled chroma), 0-"
      G_STRINGIFY (CUCONV_MAX_PATCH_RADIUS) ": a sample is averaged with "
      "those within radius whose (2 patch-radius + 1)^2 neighbourhoods "
      "look like its own. 0 = compare the samples alone (the bilateral's "
      "range weights without the spatial ones)", 0, CUCONV_MAX_PATCH_RADIUS,
      DEFAULT_PATCH_RADIUS, live);
  properties[PROP_THRESHOLD_LOW] = g_param_spec_double ("threshold-low",
      "Threshold low", "kernel=canny: a pixel whose gradient (the 3x3 "
      "Sobel magnitude of the smoothed picture, in 8-bit levels: 0-1442, "
      "times 4 in 10-bit, 256 in 16-bit samples) is above it and a maximum "
      "along its direction is an edge where it connects (8-neighbours, "
      "through such pixels) to one above threshold-high. The lower of the "
      "two thresholds is this one", 0.0, CUCONV_MAX_CANNY_THRESHOLD,
      DEFAULT_THRESHOLD_LOW, live);
  properties[PROP_THRESHOLD_HIGH] = g_param_spec_double ("threshold-high",
      "Threshold high", "kernel=canny: a pixel whose gradient is above it "
      "(and a maximum along its direction) is an edge, and edges grow from "
      "it through the pixels above threshold-low (8-bit levels, as "
      "threshold-low)", 0.0, CUCONV_MAX_CANNY_THRESHOLD,
      DEFAULT_THRESHOLD_HIGH, live);
  properties[PROP_BORDER] = g_param_spec_enum ("border", "Border",
      "What the kernel reads beyond the frame's edges",
      GST_TYPE_CUDA_CONVOLVE_BORDER, DEFAULT_BORDER, live);
  properties[PROP_PLANES] = g_param_spec_enum ("planes", "Planes",
      "Which components are filtered; the others are copied unchanged. "
      "Luma means Y, and R, G and B in RGB formats; chroma means U and V. "
      "Alpha and padding bytes are always copied. auto: blurs and custom "
      "filter everything, sharpen luma only, sobel, laplacian and canny "
      "filter luma and set chroma to neutral grey", GST_TYPE_CUDA_CONVOLVE_PLANES,
      DEFAULT_PLANES, live);
  properties[PROP_KERNEL_X] =
      gst_cuda_convolve_kernel_props_param_spec ("kernel-x", "Kernel X",
      "kernel=custom, separable: the horizontal taps, left to right, an odd "
      "number (1-129) of numbers within +-1000000 centred on the output "
      "pixel, e.g. \"<1, 2, 1>\". Empty (<>) = not set: no horizontal "
      "filtering. Ignored while matrix is set. An invalid value is refused "
      "with a warning and the previous one stays", custom);
  properties[PROP_KERNEL_Y] =
      gst_cuda_convolve_kernel_props_param_spec ("kernel-y", "Kernel Y",
      "kernel=custom, separable: the vertical taps, top to bottom, as "
      "kernel-x. Empty (<>) = not set: no vertical filtering", custom);
  properties[PROP_MATRIX] =
      gst_cuda_convolve_kernel_props_param_spec ("matrix", "Matrix",
      "kernel=custom, 2-D: rows top to bottom of numbers left to right, "
      "square with an odd side (1-31), values within +-1000000, centred on "
      "the output pixel and not flipped, e.g. \"<<0, -1, 0>, <-1, 5, -1>, "
      "<0, -1, 0>>\". Used instead of kernel-x/kernel-y when set; empty (<>) "
      "= not set. An invalid value is refused with a warning and the "
      "previous one stays", custom);
  properties[PROP_NORMALIZE] = g_param_spec_boolean ("normalize",
      "Normalize", "kernel=custom: divide kernel-x, kernel-y and matrix each "
      "by the sum of its values, so that flat areas keep their brightness; "
      "a kernel summing to 0 (an edge detector), or so near 0 that a value "
      "divided by it would pass +-1000000, is used as given. FALSE = "
      "use every kernel as given", DEFAULT_NORMALIZE, live);
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
  self->settings.kernel = (CuconvKernel) DEFAULT_KERNEL;
  self->settings.border = (CuconvBorder) DEFAULT_BORDER;
  self->settings.radius = DEFAULT_RADIUS;
  self->settings.sigma = DEFAULT_SIGMA;
  self->settings.sigma_y = DEFAULT_SIGMA_Y;
  self->settings.amount = DEFAULT_AMOUNT;
  self->settings.sigma_range = DEFAULT_SIGMA_RANGE;
  self->settings.block_size = DEFAULT_BLOCK_SIZE;
  self->settings.patch_radius = DEFAULT_PATCH_RADIUS;
  self->settings.threshold_low = DEFAULT_THRESHOLD_LOW;
  self->settings.threshold_high = DEFAULT_THRESHOLD_HIGH;
  self->settings.normalize = DEFAULT_NORMALIZE;
  self->planes = DEFAULT_PLANES;
  self->filter = g_new0 (CuconvFilter, 1);
  self->engine = cuconv_engine_new ();
  gst_cuda_convolve_region_props_init (&self->region_props);
  gst_cuda_convolve_region_frame_init (&self->frame_regions);
  gst_cuda_convolve_temporal_props_init (&self->temporal_props);
  gst_cuda_convolve_temporal_init (&self->temporal);

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
    case PROP_SIGMA_RANGE:
      self->settings.sigma_range = g_value_get_double (value);
      break;
    case PROP_BLOCK_SIZE:
      self->settings.block_size = g_value_get_uint (value);
      break;
    case PROP_PATCH_RADIUS:
      self->settings.patch_radius = g_value_get_uint (value);
      break;
    case PROP_THRESHOLD_LOW:
      self->settings.threshold_low = g_value_get_double (value);
      break;
    case PROP_THRESHOLD_HIGH:
      self->settings.threshold_high = g_value_get_double (value);
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
      valid = gst_cuda_convolve_kernel_props_parse_taps (value, s->custom_x,
          &s->custom_x_len, &why);
      break;
    case PROP_KERNEL_Y:
      valid = gst_cuda_convolve_kernel_props_parse_taps (value, s->custom_y,
          &s->custom_y_len, &why);
      break;
    case PROP_MATRIX:
      valid = gst_cuda_convolve_kernel_props_parse_matrix (value, s->matrix,
          &s->matrix_side, &why);
      break;
    case PROP_NORMALIZE:
      self->settings.normalize = g_value_get_boolean (value);
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
    case PROP_SIGMA_RANGE:
      g_value_set_double (value, self->settings.sigma_range);
      break;
    case PROP_BLOCK_SIZE:
      g_value_set_uint (value, self->settings.block_size);
      break;
    case PROP_PATCH_RADIUS:
      g_value_set_uint (value, self->settings.patch_radius);
      break;
    case PROP_THRESHOLD_LOW:
      g_value_set_double (value, self->settings.threshold_low);
      break;
    case PROP_THRESHOLD_HIGH:
      g_value_set_double (value, self->settings.threshold_high);
      break;
    case PROP_BORDER:
      g_value_set_enum (value, self->settings.border);
      break;
    case PROP_PLANES:
      g_value_set_enum (value, self->planes);
      break;
    case PROP_KERNEL_X:
      gst_cuda_convolve_kernel_props_taps_to_value (self->settings.custom_x,
          self->settings.custom_x_len, value);
      break;
    case PROP_KERNEL_Y:
      gst_cuda_convolve_kernel_props_taps_to_value (self->settings.custom_y,
          self->settings.custom_y_len, value);
      break;
    case PROP_MATRIX:
      gst_cuda_convolve_kernel_props_matrix_to_value (self->settings.matrix,
          self->settings.matrix_side, value);
      break;
    case PROP_NORMALIZE:
      g_value_set_boolean (value, self->settings.normalize);
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
  self->frame_settings = self->settings;
  self->frame_planes = self->planes;
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
