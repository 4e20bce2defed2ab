/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_FILTER_PROPS_H__
#define __GST_CUDA_CONVOLVE_FILTER_PROPS_H__

#include <gst/gst.h>

#include "cuconv.h"
#include "gstcudaconvolveplanes.h"

G_BEGIN_DECLS

/* The filter's properties in cudaconvolve: the kernel and its strength,
 * the border and the planes filtered, the custom kernels; their specs,
 * defaults and values. */

/* Offsets from the first of the element's properties that are these. */
enum
{
  GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL,
  GST_CUDA_CONVOLVE_FILTER_PROP_RADIUS,
  GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA,
  GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_Y,
  GST_CUDA_CONVOLVE_FILTER_PROP_AMOUNT,
  GST_CUDA_CONVOLVE_FILTER_PROP_SIGMA_RANGE,
  GST_CUDA_CONVOLVE_FILTER_PROP_BLOCK_SIZE,
  GST_CUDA_CONVOLVE_FILTER_PROP_PATCH_RADIUS,
  GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_LOW,
  GST_CUDA_CONVOLVE_FILTER_PROP_THRESHOLD_HIGH,
  GST_CUDA_CONVOLVE_FILTER_PROP_BORDER,
  GST_CUDA_CONVOLVE_FILTER_PROP_PLANES,
  GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_X,
  GST_CUDA_CONVOLVE_FILTER_PROP_KERNEL_Y,
  GST_CUDA_CONVOLVE_FILTER_PROP_MATRIX,
  GST_CUDA_CONVOLVE_FILTER_PROP_NORMALIZE,
  GST_CUDA_CONVOLVE_FILTER_N_PROPS
};

/* The properties, under the element's object lock. */
typedef struct
{
  CuconvSettings settings;
  GstCudaConvolvePlanes planes;
} GstCudaConvolveFilterProps;

void gst_cuda_convolve_filter_props_init (GstCudaConvolveFilterProps * props);
/* Fills specs[0 .. GST_CUDA_CONVOLVE_FILTER_N_PROPS - 1]. */
void gst_cuda_convolve_filter_param_specs (GParamSpec ** specs);
/* Sets property prop (an offset) from value.  Returns FALSE for a custom
 * kernel refused, leaving the one in effect and *why saying why (free
 * it). */
gboolean gst_cuda_convolve_filter_props_set (GstCudaConvolveFilterProps *
    props, guint prop, const GValue * value, gchar ** why);
void gst_cuda_convolve_filter_props_get (const GstCudaConvolveFilterProps *
    props, guint prop, GValue * value);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_FILTER_PROPS_H__ */
