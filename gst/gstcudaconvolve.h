/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_H__
#define __GST_CUDA_CONVOLVE_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstcudaconvolveenums.h"
#include "gstcudavideofilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_CONVOLVE (gst_cuda_convolve_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaConvolve, gst_cuda_convolve,
    GST, CUDA_CONVOLVE, GstCudaVideoFilter);

GST_ELEMENT_REGISTER_DECLARE (cudaconvolve);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_H__ */
