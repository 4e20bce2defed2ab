/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUCONV_CUDA_MEMORY_H__
#define __GST_CUCONV_CUDA_MEMORY_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>

G_BEGIN_DECLS

/* What cudaconvolve needs to work on frames in GStreamer's CUDA memory
 * (memory:CUDAMemory, gstreamer-cuda-1.0): the GstCudaContext it shares
 * with its neighbours through GstContext, and a stream of its own in that
 * context. */
typedef struct
{
  GstCudaContext *context;
  CUstream stream;
  gboolean in_cuda, out_cuda;   /* negotiated memory:CUDAMemory */
  gboolean opened;              /* gst_cuconv_cuda_open () was tried */
} GstCuconvCuda;

/* The element's GstElement::set_context (device_id: its cuda-device-id,
 * -1 = any) and the context part of its GstBaseTransform::query. */
void gst_cuconv_cuda_set_context (GstCuconvCuda * cuda, GstElement * element,
    GstContext * context, gint device_id);
gboolean gst_cuconv_cuda_handle_context_query (GstCuconvCuda * cuda,
    GstElement * element, GstQuery * query);

/* Finds the neighbours' context for device_id (or makes one and shares
 * it) and creates the stream.  FALSE when CUDA cannot be used; the element
 * then works on system memory only. */
gboolean gst_cuconv_cuda_open (GstCuconvCuda * cuda, GstElement * element,
    gint device_id);
void gst_cuconv_cuda_close (GstCuconvCuda * cuda);

/* The device of the context; only once there is one. */
gint gst_cuconv_cuda_device (const GstCuconvCuda * cuda);

/* Whether CUDA memory can be offered: until the element has tried to
 * open CUDA (pads are linked in NULL), and afterwards when it could. */
gboolean gst_cuconv_cuda_can_offer (const GstCuconvCuda * cuda);

/* caps with each structure offered in its own memory first, then in the
 * other of CUDA memory (when offer_cuda) and system memory. */
GstCaps *gst_cuconv_cuda_transform_caps (GstCaps * caps, gboolean offer_cuda);

/* Whether caps are in CUDA memory. */
gboolean gst_cuconv_cuda_caps_are_cuda (GstCaps * caps);

/* A GstCudaBufferPool of the context, proposed upstream. */
gboolean gst_cuconv_cuda_propose_pool (GstCuconvCuda * cuda, GstElement * element,
    GstQuery * query);

/* Downstream's pool when it is a CUDA pool of the same context, else one
 * of ours, configured for the query's caps. */
gboolean gst_cuconv_cuda_decide_pool (GstCuconvCuda * cuda, GstElement * element,
    GstQuery * query);

/* Whether every memory of buffer is CUDA memory of the context: the
 * element's kernels can then read or write it in place. */
gboolean gst_cuconv_cuda_buffer_is_local (const GstCuconvCuda * cuda,
    GstBuffer * buffer);

G_END_DECLS
#endif /* __GST_CUCONV_CUDA_MEMORY_H__ */
