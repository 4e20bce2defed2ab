/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_ENUMS_H__
#define __GST_CUDA_CONVOLVE_ENUMS_H__

#include <glib-object.h>

#include "cuconv.h"

G_BEGIN_DECLS

/* The enumerated properties of cudaconvolve (kernel, border, planes) as
 * GEnum types, their values the engine's. */

/* Values equal CuconvKernel: both are generated from CUCONV_KERNEL_TYPES. */
typedef enum
{
#define GST_CUDA_CONVOLVE_KERNEL_ENUM(name, nick, desc) \
  GST_CUDA_CONVOLVE_KERNEL_##name = CUCONV_KERNEL_##name,
  CUCONV_KERNEL_TYPES (GST_CUDA_CONVOLVE_KERNEL_ENUM)
#undef GST_CUDA_CONVOLVE_KERNEL_ENUM
} GstCudaConvolveKernel;

/* Values equal CuconvBorder. */
typedef enum
{
  GST_CUDA_CONVOLVE_BORDER_CLAMP = CUCONV_BORDER_CLAMP,
  GST_CUDA_CONVOLVE_BORDER_MIRROR = CUCONV_BORDER_MIRROR,
  GST_CUDA_CONVOLVE_BORDER_WRAP = CUCONV_BORDER_WRAP,
  GST_CUDA_CONVOLVE_BORDER_ZERO = CUCONV_BORDER_ZERO,
} GstCudaConvolveBorder;

/* Values equal CuconvPlanes: both are generated from CUCONV_PLANES_TYPES. */
typedef enum
{
#define GST_CUDA_CONVOLVE_PLANES_ENUM(name, nick, desc) \
  GST_CUDA_CONVOLVE_PLANES_##name = CUCONV_PLANES_##name,
  CUCONV_PLANES_TYPES (GST_CUDA_CONVOLVE_PLANES_ENUM)
#undef GST_CUDA_CONVOLVE_PLANES_ENUM
} GstCudaConvolvePlanes;

#define GST_TYPE_CUDA_CONVOLVE_KERNEL (gst_cuda_convolve_kernel_get_type ())
GType gst_cuda_convolve_kernel_get_type (void);

#define GST_TYPE_CUDA_CONVOLVE_BORDER (gst_cuda_convolve_border_get_type ())
GType gst_cuda_convolve_border_get_type (void);

#define GST_TYPE_CUDA_CONVOLVE_PLANES (gst_cuda_convolve_planes_get_type ())
GType gst_cuda_convolve_planes_get_type (void);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_ENUMS_H__ */
