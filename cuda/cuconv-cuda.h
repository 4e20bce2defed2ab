/* gst-cudaconvolve: the CUDA engine's C API.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_CUDA_H__
#define __CUCONV_CUDA_H__

#include "cuconv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _CuconvCuda CuconvCuda;

/* Number of CUDA devices the runtime can use; 0 without a driver or GPU. */
int cuconv_cuda_device_count (void);

/* Opens device_id (0-based) and creates the engine's streams.  On failure
 * returns NULL and writes a sentence for the user into err. */
CuconvCuda *cuconv_cuda_new (int device_id, char *err, size_t err_len);

void cuconv_cuda_free (CuconvCuda * cc);

/* "NVIDIA H100 80GB HBM3 (device 0)", for logs. */
const char *cuconv_cuda_describe (const CuconvCuda * cc);

/* Filters a frame whose planes are in host memory, synchronously: when it
 * returns 0 every dst plane holds the result.  Device and pinned staging
 * buffers are kept across calls and reallocated only when the frame's
 * geometry changes.  Host memory from cuconv_cuda_host_alloc is uploaded
 * straight from where it lies.  Returns -1 with a sentence in err on any
 * CUDA error; dst is then undefined and must not be pushed. */
int cuconv_cuda_process_host (CuconvCuda * cc, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, char *err, size_t err_len);

/* Frees the engine's frame buffers (on caps change or stop). */
void cuconv_cuda_release_buffers (CuconvCuda * cc);

/* Page-locked host memory, for a buffer pool: the GPU's DMA engines read
 * and write it directly.  NULL when it cannot be had.  Independent of any
 * engine: memory may outlive the engine that filters it. */
void *cuconv_cuda_host_alloc (int device_id, size_t size);
void cuconv_cuda_host_free (void *ptr);

/* Filters planes whose src and dst are device pointers, asynchronously on
 * stream (a cudaStream_t, NULL for the legacy default stream).  The kernel
 * alone: for the conformance suite, the benchmark and CUDA-memory frames.
 * Each plane's src must be readable for height * src_stride bytes, and up
 * to the next multiple of 16 past the last row's samples when src and its
 * stride are 16-byte aligned (as cudaMalloc and cudaMallocPitch give).
 * Returns 0 or a cudaError_t. */
int cuconv_cuda_filter_device (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *stream);

/* "cudaErrorInvalidValue" for a cudaError_t that cuconv_cuda_filter_device
 * returned. */
const char *cuconv_cuda_error_name (int err);

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_CUDA_H__ */
