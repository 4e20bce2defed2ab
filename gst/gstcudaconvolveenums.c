/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The GEnum types of cudaconvolve's kernel, border and planes properties:
 * the nicks and descriptions gst-inspect-1.0 shows. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaconvolveenums.h"

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
