/* gst-cudaconvolve: device buffers kept from frame to frame and the last
 * GPU work that used them (cuconv-buffer.cuh): the allocations, and the
 * events that say when the GPU is done with a buffer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-buffer.cuh"

namespace cuconv {

cudaError_t
gpu_use_create (GpuUse & u)
{
  return cudaEventCreateWithFlags (&u.event, cudaEventDisableTiming);
}

cudaError_t
gpu_use_follow (const GpuUse & u, cudaStream_t stream)
{
  if (!u.recorded || u.stream == stream)
    return cudaSuccess;
  return cudaStreamWaitEvent (stream, u.event, 0);
}

cudaError_t
gpu_use_record (GpuUse & u, cudaStream_t stream)
{
  u.stream = stream;
  u.recorded = true;
  return cudaEventRecord (u.event, stream);
}

cudaError_t
gpu_use_wait (const GpuUse & u)
{
  if (!u.recorded)
    return cudaSuccess;
  return cudaEventSynchronize (u.event);
}

void
gpu_use_destroy (GpuUse & u)
{
  if (u.event)
    cudaEventDestroy (u.event);
  u = GpuUse ();
}

void
buffer_free (DeviceBuffer & b)
{
  if (b.ptr)
    cudaFree (b.ptr);
  b = DeviceBuffer ();
}

void
buffer_free_async (DeviceBuffer & b, cudaStream_t stream)
{
  if (b.ptr)
    cudaFreeAsync (b.ptr, stream);
  b = DeviceBuffer ();
}

cudaError_t
buffer_alloc_headroom (DeviceBuffer & b, size_t bytes, size_t align)
{
  void *ptr = NULL;
  cudaError_t e;

  /* a quarter more, so that sizes that creep up reallocate seldom */
  bytes = (bytes + bytes / 4 + align - 1) / align * align;
  e = cudaMalloc (&ptr, bytes);
  if (e != cudaSuccess)
    return e;
  b.ptr = (uint8_t *) ptr;
  b.size = bytes;
  return cudaSuccess;
}

cudaError_t
buffer_alloc_rows (DeviceBuffer & b, size_t row_bytes, int rows,
    BufferRows layout)
{
  void *ptr = NULL;
  size_t pitch = row_bytes;
  cudaError_t e;

  /* tight rows: a copy from a tight host frame is one linear DMA, which
   * runs faster than a pitched one; 16-byte aligned rows still take the
   * kernels' vector path */
  if (layout == BUFFER_ROWS_TIGHT_16 && row_bytes % 16 == 0)
    e = cudaMalloc (&ptr, row_bytes * rows);
  else
    e = cudaMallocPitch (&ptr, &pitch, row_bytes, (size_t) rows);
  if (e != cudaSuccess)
    return e;
  b.ptr = (uint8_t *) ptr;
  b.pitch = pitch;
  b.size = pitch * rows;
  b.row_bytes = row_bytes;
  b.rows = rows;
  return cudaSuccess;
}

cudaError_t
buffer_take_async (DeviceBuffer & b, const GpuUse & u, size_t bytes,
    cudaStream_t stream)
{
  cudaError_t e;

  /* the previous frame's launches on another stream may still use it */
  e = gpu_use_follow (u, stream);
  if (e != cudaSuccess || bytes <= b.size)
    return e;
  if (b.ptr) {
    e = cudaFreeAsync (b.ptr, stream);
    b = DeviceBuffer ();
    if (e != cudaSuccess)
      return e;
  }
  e = cudaMallocAsync ((void **) &b.ptr, bytes, stream);
  if (e != cudaSuccess) {
    b.ptr = NULL;
    return e;
  }
  b.size = bytes;
  return cudaSuccess;
}

}                               /* namespace cuconv */
