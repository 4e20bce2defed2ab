/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* A frame's planes as the engine sees them, from the format's
 * GstVideoFormatInfo: no table of formats, so every format GStreamer
 * describes the same way is taken as it is. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudaconvolveplanes.h"

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
        case CUCONV_KERNEL_CANNY:
          /* edges of colour mean nothing: a grey edge map */
          return CUCONV_COMP_FILL;
        default:
          return CUCONV_COMP_FILTER;
      }
  }
}

/* The place of component c among a plane's samples (comp: the plane's
 * components, gst_video_format_info_component ()): its components in the
 * order of their offsets.  The order, not the offset itself: GStreamer
 * 1.22 gives the V of P010 and P016 NV12's offset of 1, not 2 bytes. */
static gint
position (const GstVideoFormatInfo * finfo, const gint * comp, gint c)
{
  gint j, pos = 0;

  for (j = 0; j < GST_VIDEO_MAX_COMPONENTS && comp[j] >= 0; j++)
    pos += GST_VIDEO_FORMAT_INFO_POFFSET (finfo, comp[j]) <
        GST_VIDEO_FORMAT_INFO_POFFSET (finfo, c);
  return pos;
}

gint
gst_cuda_convolve_planes_guide (const GstVideoFrame * frame)
{
  const GstVideoFormatInfo *finfo = frame->info.finfo;
  const gint guide = GST_VIDEO_FORMAT_INFO_IS_RGB (finfo) ?
      GST_VIDEO_COMP_G : GST_VIDEO_COMP_Y;
  gint comp[GST_VIDEO_MAX_COMPONENTS];

  if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, guide) != 0)
    return -1;
  gst_video_format_info_component (finfo, 0, comp);
  return position (finfo, comp, guide);
}

guint
gst_cuda_convolve_planes_describe (const GstVideoFrame * in_frame,
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
     * like alpha. */
    bytes = cuconv_plane_sample_bytes (plane);
    plane->n_comp = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, first) / bytes;
    g_assert (plane->n_comp >= 1 && plane->n_comp <= CUCONV_MAX_COMP);
    for (i = 0; i < plane->n_comp; i++)
      plane->op[i] = CUCONV_COMP_COPY;
    for (i = 0; i < GST_VIDEO_MAX_COMPONENTS && comp[i] >= 0; i++)
      plane->op[position (finfo, comp, comp[i])] =
          comp_op (finfo, comp[i], kernel, which);
  }

  return n_planes;
}

