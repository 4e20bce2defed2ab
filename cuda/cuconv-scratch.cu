/* gst-cudaconvolve: scratch, the device memory a frame's wide paths keep
 * their intermediates in (the global passes' rows and taps, the recursive
 * filter's states, the box's column carries), owned by an engine and kept
 * from frame to frame: it only grows, stream-ordered, so that once it has
 * grown a frame's work neither allocates nor waits on the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-engine.cuh"

namespace cuconv {

cudaError_t
scratch_take (Scratch & s, size_t bytes, cudaStream_t stream, void **ptr)
{
  cudaError_t e;

  if (!s.last) {
    e = cudaEventCreateWithFlags (&s.last, cudaEventDisableTiming);
    if (e != cudaSuccess)
      return e;
  }
  /* the previous frame's launches on another stream may still use it */
  if (s.used && s.stream != stream) {
    e = cudaStreamWaitEvent (stream, s.last, 0);
    if (e != cudaSuccess)
      return e;
  }
  if (bytes > s.size) {
    if (s.ptr) {
      e = cudaFreeAsync (s.ptr, stream);
      s.ptr = NULL;
      s.size = 0;
      if (e != cudaSuccess)
        return e;
    }
    e = cudaMallocAsync (&s.ptr, bytes, stream);
    if (e != cudaSuccess) {
      s.ptr = NULL;
      return e;
    }
    s.size = bytes;
  }
  s.stream = stream;
  s.pending = true;
  *ptr = s.ptr;
  return cudaSuccess;
}

cudaError_t
scratch_done (Scratch & s)
{
  cudaError_t e;

  if (!s.pending)
    return cudaSuccess;
  s.pending = false;
  s.used = true;
  e = cudaEventRecord (s.last, s.stream);
  return e;
}

void
scratch_free (Scratch & s)
{
  if (s.last) {
    cudaEventSynchronize (s.last);
    cudaEventDestroy (s.last);
  }
  if (s.ptr)
    cudaFree (s.ptr);
  cudaGetLastError ();
  s = Scratch ();
}

void
scratch_free_async (Scratch & s, cudaStream_t stream)
{
  if (s.ptr)
    cudaFreeAsync (s.ptr, stream);
  if (s.last)
    cudaEventDestroy (s.last);
  s = Scratch ();
}

}                               /* namespace cuconv */
