/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_GPU_PRIVATE_H__
#define __GST_CUDA_VIDEO_FILTER_GPU_PRIVATE_H__

#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudacontext.h>
#include <cuda_runtime_api.h>

#include "gstcudavideofiltergpu.h"

G_BEGIN_DECLS

/* The CUDA side's state, shared by gstcudavideofiltergpu.c (context,
 * stream, events, the stream contract) and gstcudavideofilterpools.c (the
 * pools and memory it proposes and decides). */
struct _GstCudaVideoFilterGpu
{
  /* Set by the neighbours through set_context () (as in nvcodec, the
   * same pointer gst_cuda_ensure_element_context () fills), fixed from
   * open () to close (). */
  GstCudaContext *context;
#if GST_CHECK_VERSION (1, 24, 0)
  GstCudaStream *cuda_stream;   /* stream, also on the element's pools */
  GstCudaStream *out_stream;    /* of the output pool decided, if CUDA */
#endif
  CUstream stream;
  cudaEvent_t events[GST_CUDA_VIDEO_FILTER_GPU_EVENTS];  /* on stream */
  cudaEvent_t writer;           /* on a writer's stream, for stream to wait */
  cudaEvent_t done;             /* on a frame's stream, for its input's */
  GstAllocator *pinned;         /* pinned memory of context */
  gboolean tried;               /* open () ran since close () */
};

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_GPU_PRIVATE_H__ */
