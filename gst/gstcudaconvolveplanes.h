/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_PLANES_H__
#define __GST_CUDA_CONVOLVE_PLANES_H__

#include <gst/video/video.h>

#include "cuconv.h"
#include "gstcudaconvolveenums.h"

G_BEGIN_DECLS

/* Describes each plane of in_frame and out_frame (mapped, the same format
 * and size) to the engine: pointers, strides, size, subsampling, depth and
 * the components interleaved, with what becomes of each component for
 * kernel and which (docs/semantics.md, "Planes").  Returns the number of
 * planes. */
guint gst_cuda_convolve_planes_describe (const GstVideoFrame * in_frame,
    GstVideoFrame * out_frame, CuconvKernel kernel,
    GstCudaConvolvePlanes which, CuconvPlane * planes);

/* The component of plane 0 of frame's format that guides the compensated
 * temporal denoise: luma, or green; -1 where it is not in plane 0. */
gint gst_cuda_convolve_planes_guide (const GstVideoFrame * frame);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_PLANES_H__ */
