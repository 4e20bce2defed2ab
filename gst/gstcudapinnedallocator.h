/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_PINNED_ALLOCATOR_H__
#define __GST_CUDA_PINNED_ALLOCATOR_H__

#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>

G_BEGIN_DECLS

/**
 * GST_CUDA_PINNED_MEMORY_TYPE_NAME:
 *
 * The mem_type of page-locked host memory from #GstCudaPinnedAllocator,
 * for gst_memory_is_type ().
 */
#define GST_CUDA_PINNED_MEMORY_TYPE_NAME "CudaPinnedMemory"

#define GST_TYPE_CUDA_PINNED_ALLOCATOR (gst_cuda_pinned_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaPinnedAllocator, gst_cuda_pinned_allocator,
    GST, CUDA_PINNED_ALLOCATOR, GstAllocator);

GstAllocator *gst_cuda_pinned_allocator_new (GstCudaContext * context);

gboolean gst_is_cuda_pinned_memory (GstMemory * mem);
gboolean gst_is_cuda_pinned_memory_of (GstMemory * mem,
    GstCudaContext * context);

G_END_DECLS
#endif /* __GST_CUDA_PINNED_ALLOCATOR_H__ */
