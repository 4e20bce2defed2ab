/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaconvolveenums.h"
#include "gstcudaconvolvefilterprops.h"
#include "gstcudaconvolvekernelprops.h"

#include <string.h>

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

void
gst_cuda_convolve_filter_props_init (GstCudaConvolveFilterProps * props)
{
  memset (props, 0, sizeof (*props));
  props->settings.kernel = (CuconvKernel) DEFAULT_KERNEL;
  props->settings.border = (CuconvBorder) DEFAULT_BORDER;
  props->settings.radius = DEFAULT_RADIUS;
  props->settings.sigma = DEFAULT_SIGMA;
  props->settings.sigma_y = DEFAULT_SIGMA_Y;
  props->settings.amount = DEFAULT_AMOUNT;
  props->settings.sigma_range = DEFAULT_SIGMA_RANGE;
  props->settings.block_size = DEFAULT_BLOCK_SIZE;
  props->settings.patch_radius = DEFAULT_PATCH_RADIUS;
  props->settings.threshold_low = DEFAULT_THRESHOLD_LOW;
  props->settings.threshold_high = DEFAULT_THRESHOLD_HIGH;
  props->settings.normalize = DEFAULT_NORMALIZE;
  props->planes = DEFAULT_PLANES;
}

void
gst_cuda_convolve_filter_param_specs (GParamSpec ** specs)
{
  const GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;
  /* A controller cannot interpolate arrays. */
  const GParamFlags custom = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;

  specs[GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL] =
      g_param_spec_enum ("kernel", "Kernel",
      "What the filter computes: a gaussian or box blur, sharpen (unsharp "
      "mask), sobel (gradient magnitude) or laplacian edges, custom (the "
      "kernel in kernel-x/kernel-y or matrix), bilateral (a gaussian "
      "blur that keeps edges: weights fall with distance, sigma, and with "
      "the difference of the samples, sigma-range), pixelate (a mosaic "
      "of blocks of block-size), nlmeans (non-local means: a denoise "
      "that averages the samples whose patches, patch-radius, look alike), "
      "or canny (thin, connected edges: threshold-low, threshold-high)",
      GST_TYPE_CUDA_CONVOLVE_KERNEL, DEFAULT_KERNEL, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_RADIUS] =
      g_param_spec_uint ("radius", "Radius",
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
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA] =
      g_param_spec_double ("sigma", "Sigma",
      "Standard deviation of the gaussian in luma pixels, 0-256, for "
      "gaussian, sharpen, bilateral (its spatial weights), canny (its "
      "smoothing), and sobel and laplacian above radius 1; "
      "vertically too unless sigma-y is set. 0 = derive it from radius as "
      "0.3 * (radius - 1) + 0.8; a sigma below 0.1 (on a plane: divided by "
      "its subsampling) counts as 0.1. box uses it only to derive the radius "
      "when radius is 0", 0.0, CUCONV_MAX_SIGMA, DEFAULT_SIGMA, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_Y] =
      g_param_spec_double ("sigma-y", "Sigma Y",
      "Vertical standard deviation in luma pixels, 0-256, for a filter "
      "stronger in one direction; with radius 0 it also gives the vertical "
      "radius, ceil (3 * sigma-y). 0 = the same as sigma", 0.0,
      CUCONV_MAX_SIGMA, DEFAULT_SIGMA_Y, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_AMOUNT] =
      g_param_spec_double ("amount", "Amount",
      "Strength of kernel=sharpen, 0-10: out = in + amount * (in - "
      "gaussian (in)), the gaussian of radius and sigma. 0 = passthrough; "
      "1 doubles the detail finer than the gaussian", 0.0, CUCONV_MAX_AMOUNT,
      DEFAULT_AMOUNT, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_RANGE] =
      g_param_spec_double ("sigma-range", "Sigma range",
      "kernel=bilateral: standard deviation of the range "
      "weight exp (-d^2 / (2 sigma-range^2)), d the difference of two "
      "samples, in 8-bit levels (0-1000; times 4 in 10-bit, 256 in 16-bit "
      "samples). Differences well below it are smoothed, edges well above "
      "it kept. 0 = only equal samples are averaged: passthrough. "
      "kernel=nlmeans: the same, d the root mean square difference of two "
      "samples' patches", 0.0, CUCONV_MAX_SIGMA_RANGE, DEFAULT_SIGMA_RANGE,
      live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_BLOCK_SIZE] =
      g_param_spec_uint ("block-size", "Block size",
      "kernel=pixelate: the side of the blocks in luma pixels "
      "(halved on subsampled chroma), 1-" G_STRINGIFY (CUCONV_MAX_BLOCK)
      ": each block becomes the mean of its samples, rounded. The blocks "
      "start at the frame's top-left corner, and with region=roi at each "
      "region's box (grown by roi-margin); roi-scale sets a side for each "
      "region instead. 1 = passthrough", 1, CUCONV_MAX_BLOCK,
      DEFAULT_BLOCK_SIZE, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_PATCH_RADIUS] =
      g_param_spec_uint ("patch-radius", "Patch radius",
      "kernel=nlmeans: the radius of the patches compared, "
      "in luma samples (halved, rounded up, on subsampled chroma), 0-"
      G_STRINGIFY (CUCONV_MAX_PATCH_RADIUS) ": a sample is averaged with "
      "those within radius whose (2 patch-radius + 1)^2 neighbourhoods "
      "look like its own. 0 = compare the samples alone (the bilateral's "
      "range weights without the spatial ones)", 0, CUCONV_MAX_PATCH_RADIUS,
      DEFAULT_PATCH_RADIUS, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_LOW] =
      g_param_spec_double ("threshold-low", "Threshold low",
      "kernel=canny: a pixel whose gradient (the 3x3 "
      "Sobel magnitude of the smoothed picture, in 8-bit levels: 0-1442, "
      "times 4 in 10-bit, 256 in 16-bit samples) is above it and a maximum "
      "along its direction is an edge where it connects (8-neighbours, "
      "through such pixels) to one above threshold-high. The lower of the "
      "two thresholds is this one", 0.0, CUCONV_MAX_CANNY_THRESHOLD,
      DEFAULT_THRESHOLD_LOW, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_HIGH] =
      g_param_spec_double ("threshold-high", "Threshold high",
      "kernel=canny: a pixel whose gradient is above it "
      "(and a maximum along its direction) is an edge, and edges grow from "
      "it through the pixels above threshold-low (8-bit levels, as "
      "threshold-low)", 0.0, CUCONV_MAX_CANNY_THRESHOLD, DEFAULT_THRESHOLD_HIGH,
      live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_BORDER] =
      g_param_spec_enum ("border", "Border",
      "What the kernel reads beyond the frame's edges",
      GST_TYPE_CUDA_CONVOLVE_BORDER, DEFAULT_BORDER, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_PLANES] =
      g_param_spec_enum ("planes", "Planes",
      "Which components are filtered; the others are copied unchanged. "
      "Luma means Y, and R, G and B in RGB formats; chroma means U and V. "
      "Alpha and padding bytes are always copied. auto: blurs and custom "
      "filter everything, sharpen luma only, sobel, laplacian and canny "
      "filter luma and set chroma to neutral grey",
      GST_TYPE_CUDA_CONVOLVE_PLANES, DEFAULT_PLANES, live);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_X] =
      gst_cuda_convolve_kernel_props_param_spec ("kernel-x", "Kernel X",
      "kernel=custom, separable: the horizontal taps, left to right, an odd "
      "number (1-129) of numbers within +-1000000 centred on the output "
      "pixel, e.g. \"<1, 2, 1>\". Empty (<>) = not set: no horizontal "
      "filtering. Ignored while matrix is set. An invalid value is refused "
      "with a warning and the previous one stays", custom);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_Y] =
      gst_cuda_convolve_kernel_props_param_spec ("kernel-y", "Kernel Y",
      "kernel=custom, separable: the vertical taps, top to bottom, as "
      "kernel-x. Empty (<>) = not set: no vertical filtering", custom);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_MATRIX] =
      gst_cuda_convolve_kernel_props_param_spec ("matrix", "Matrix",
      "kernel=custom, 2-D: rows top to bottom of numbers left to right, "
      "square with an odd side (1-31), values within +-1000000, centred on "
      "the output pixel and not flipped, e.g. \"<<0, -1, 0>, <-1, 5, -1>, "
      "<0, -1, 0>>\". Used instead of kernel-x/kernel-y when set; empty (<>) "
      "= not set. An invalid value is refused with a warning and the "
      "previous one stays", custom);
  specs[GST_CUDA_CONVOLVE_FILTER_PROP_NORMALIZE] =
      g_param_spec_boolean ("normalize", "Normalize",
      "kernel=custom: divide kernel-x, kernel-y and matrix each "
      "by the sum of its values, so that flat areas keep their brightness; "
      "a kernel summing to 0 (an edge detector), or so near 0 that a value "
      "divided by it would pass +-1000000, is used as given. FALSE = "
      "use every kernel as given", DEFAULT_NORMALIZE, live);
}

gboolean
gst_cuda_convolve_filter_props_set (GstCudaConvolveFilterProps * props,
    guint prop, const GValue * value, gchar ** why)
{
  gboolean valid = TRUE;

  switch (prop) {
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL:
      props->settings.kernel = (CuconvKernel) g_value_get_enum (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_RADIUS:
      props->settings.radius = g_value_get_uint (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA:
      props->settings.sigma = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_Y:
      props->settings.sigma_y = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_AMOUNT:
      props->settings.amount = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_RANGE:
      props->settings.sigma_range = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_BLOCK_SIZE:
      props->settings.block_size = g_value_get_uint (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_PATCH_RADIUS:
      props->settings.patch_radius = g_value_get_uint (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_LOW:
      props->settings.threshold_low = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_HIGH:
      props->settings.threshold_high = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_BORDER:
      props->settings.border = (CuconvBorder) g_value_get_enum (value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_PLANES:
      props->planes = (GstCudaConvolvePlanes) g_value_get_enum (value);
      break;
      /* Checked in full before they replace the kernel in effect, which an
       * invalid value leaves as it was: the streaming thread copies the
       * settings under the lock, so no frame sees half a kernel. */
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_X:
      valid =
          gst_cuda_convolve_kernel_props_parse_taps (value,
          props->settings.custom_x, &props->settings.custom_x_len, why);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_Y:
      valid =
          gst_cuda_convolve_kernel_props_parse_taps (value,
          props->settings.custom_y, &props->settings.custom_y_len, why);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_MATRIX:
      valid =
          gst_cuda_convolve_kernel_props_parse_matrix (value,
          props->settings.matrix, &props->settings.matrix_side, why);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_NORMALIZE:
      props->settings.normalize = g_value_get_boolean (value);
      break;
    default:
      g_assert_not_reached ();
  }
  return valid;
}

void
gst_cuda_convolve_filter_props_get (const GstCudaConvolveFilterProps * props,
    guint prop, GValue * value)
{
  switch (prop) {
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL:
      g_value_set_enum (value, props->settings.kernel);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_RADIUS:
      g_value_set_uint (value, props->settings.radius);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA:
      g_value_set_double (value, props->settings.sigma);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_Y:
      g_value_set_double (value, props->settings.sigma_y);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_AMOUNT:
      g_value_set_double (value, props->settings.amount);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_RANGE:
      g_value_set_double (value, props->settings.sigma_range);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_BLOCK_SIZE:
      g_value_set_uint (value, props->settings.block_size);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_PATCH_RADIUS:
      g_value_set_uint (value, props->settings.patch_radius);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_LOW:
      g_value_set_double (value, props->settings.threshold_low);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_HIGH:
      g_value_set_double (value, props->settings.threshold_high);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_BORDER:
      g_value_set_enum (value, props->settings.border);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_PLANES:
      g_value_set_enum (value, props->planes);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_X:
      gst_cuda_convolve_kernel_props_taps_to_value (props->settings.custom_x,
          props->settings.custom_x_len, value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_Y:
      gst_cuda_convolve_kernel_props_taps_to_value (props->settings.custom_y,
          props->settings.custom_y_len, value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_MATRIX:
      gst_cuda_convolve_kernel_props_matrix_to_value (props->settings.matrix,
          props->settings.matrix_side, value);
      break;
    case GST_CUDA_CONVOLVE_FILTER_PROP_NORMALIZE:
      g_value_set_boolean (value, props->settings.normalize);
      break;
    default:
      g_assert_not_reached ();
  }
}
