/* gst-cudaconvolve: device buffers an engine keeps from frame to frame
 * (the scratch, the region filter's work and whole planes, the temporal
 * state, the strip pipeline's planes), and the one rule they follow: a
 * buffer is freed or replaced only once the GPU is done with the work
 * that still reads it.  A buffer changes only when a frame needs more
 * bytes or another shape, so that once it fits, a frame's work neither
 * allocates nor waits on the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_BUFFER_CUH__
#define __CUCONV_BUFFER_CUH__

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

namespace cuconv {

/* The last work on the GPU that used a set of buffers: an event recorded
 * after it, and the stream it was queued on.  The buffers of one owner
 * share one.  Value-initialise (GpuUse ()), then gpu_use_create. */
struct GpuUse
{
  cudaEvent_t event = nullptr;
  cudaStream_t stream = nullptr;        /* of the last use */
  bool recorded = false;        /* event has been recorded */
};

/* Creates u's event. */
cudaError_t gpu_use_create (GpuUse & u);

/* Orders the work queued next on stream after u's last use: a wait on the
 * GPU when that use was on another stream (one stream keeps its order
 * itself). */
cudaError_t gpu_use_follow (const GpuUse & u, cudaStream_t stream);

/* Makes the work queued on stream so far u's last use. */
cudaError_t gpu_use_record (GpuUse & u, cudaStream_t stream);

/* Waits on the host until u's last use is done. */
cudaError_t gpu_use_wait (const GpuUse & u);

/* Destroys u's event (the caller has waited for it where it must). */
void gpu_use_destroy (GpuUse & u);

/* A device allocation: linear bytes, or rows. */
struct DeviceBuffer
{
  uint8_t *ptr = nullptr;
  size_t size = 0;              /* bytes allocated */
  size_t pitch = 0;             /* rows: bytes from one row to the next */
  size_t row_bytes = 0;         /* rows: the shape asked for */
  int rows = 0;
};

/* How rows are laid out: pitched as the runtime aligns them, or tight
 * (pitch = row bytes) when a row is a multiple of 16 bytes and pitched
 * otherwise. */
enum BufferRows
{
  BUFFER_ROWS_PITCHED,
  BUFFER_ROWS_TIGHT_16
};

/* Frees b at once: the GPU is done with it (the caller knows). */
void buffer_free (DeviceBuffer & b);

/* Frees b in the order of the work queued on stream. */
void buffer_free_async (DeviceBuffer & b, cudaStream_t stream);

/* Allocates an empty b with bytes and a quarter more, rounded up to a
 * multiple of align (for buffer_grow). */
cudaError_t buffer_alloc_headroom (DeviceBuffer & b, size_t bytes,
    size_t align);

/* Allocates an empty b with rows of row_bytes, laid out as layout says
 * (for buffer_fit_rows). */
cudaError_t buffer_alloc_rows (DeviceBuffer & b, size_t row_bytes, int rows,
    BufferRows layout);

/* b, at least bytes large, for the work queued next on stream: stream
 * first waits for u's last use (gpu_use_follow), then a smaller
 * allocation is freed and one of exactly bytes allocated, both in
 * stream order, so that neither waits on the host. */
cudaError_t buffer_take_async (DeviceBuffer & b, const GpuUse & u,
    size_t bytes, cudaStream_t stream);

/* b, at least bytes large: a smaller allocation is replaced by one of a
 * quarter more than bytes, a multiple of align, once wait_idle () has
 * returned cudaSuccess, the GPU being done with the old one then.
 * wait_idle's error is returned, b left as it was. */
template < typename Wait > cudaError_t
buffer_grow (DeviceBuffer & b, size_t bytes, size_t align, Wait wait_idle)
{
  cudaError_t e;

  if (bytes <= b.size)
    return cudaSuccess;
  e = wait_idle ();
  if (e != cudaSuccess)
    return e;
  buffer_free (b);
  return buffer_alloc_headroom (b, bytes, align);
}

/* b, rows of row_bytes laid out as layout says: an allocation of another
 * shape (or none) is replaced once wait_idle () has returned cudaSuccess,
 * the GPU being done with the old one then, and *replaced (when not NULL)
 * set to true once the new one is allocated.  wait_idle's error is
 * returned, b left as it was. */
template < typename Wait > cudaError_t
buffer_fit_rows (DeviceBuffer & b, size_t row_bytes, int rows,
    BufferRows layout, Wait wait_idle, bool *replaced)
{
  cudaError_t e;

  if (b.ptr && b.row_bytes == row_bytes && b.rows == rows)
    return cudaSuccess;
  e = wait_idle ();
  if (e != cudaSuccess)
    return e;
  buffer_free (b);
  e = buffer_alloc_rows (b, row_bytes, rows, layout);
  if (e == cudaSuccess && replaced)
    *replaced = true;
  return e;
}

}                               /* namespace cuconv */

#endif /* __CUCONV_BUFFER_CUH__ */
