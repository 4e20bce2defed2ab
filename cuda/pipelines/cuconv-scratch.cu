/* gst-cudaconvolve: scratch, the device memory a frame's wide paths keep
 * their intermediates in (the global passes' rows and taps, the recursive
 * filter's states, the box's column carries), owned by an engine and kept
 * from frame to frame: it only grows, stream-ordered, so that once it has
 * grown a frame's work neither allocates nor waits on the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-kernels.cuh"

namespace cuconv {

cudaError_t
scratch_take (Scratch & s, size_t bytes, cudaStream_t stream, void **ptr)
{
  cudaError_t e;

  if (!s.use.event) {
    e = gpu_use_create (s.use);
    if (e != cudaSuccess)
      return e;
  }
  e = buffer_take_async (s.mem, s.use, bytes, stream);
  if (e != cudaSuccess)
    return e;
  /* scratch_done records on it */
  s.use.stream = stream;
  s.pending = true;
  *ptr = s.mem.ptr;
  return cudaSuccess;
}

cudaError_t
scratch_done (Scratch & s)
{
  if (!s.pending)
    return cudaSuccess;
  s.pending = false;
  return gpu_use_record (s.use, s.use.stream);
}

void
scratch_free (Scratch & s)
{
  gpu_use_wait (s.use);
  gpu_use_destroy (s.use);
  buffer_free (s.mem);
  cudaGetLastError ();
  s = Scratch ();
}

void
scratch_free_async (Scratch & s, cudaStream_t stream)
{
  buffer_free_async (s.mem, stream);
  gpu_use_destroy (s.use);
  s = Scratch ();
}

}                               /* namespace cuconv */
