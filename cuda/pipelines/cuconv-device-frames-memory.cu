/* gst-cudaconvolve: the region filter's memory (cuconv-device-frames.cuh), kept
 * from frame to frame: the page-locked slots the host writes a frame's
 * work list in, used in turn; the device buffers the work list is
 * uploaded to and the planes filtered whole go to, which grow once the
 * previous frame's launches are done with them; and the region filter's
 * creation and teardown.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuconv-device-frames.cuh"

namespace cuconv {

cudaError_t
work_begin (CuconvDeviceFrames * rf, size_t bytes, uint8_t ** host)
{
  WorkSlot & w = rf->slot[rf->next_slot];
  cudaError_t e = cudaEventSynchronize (w.uploaded);
  uint8_t *p = NULL;

  *host = w.host;
  if (e != cudaSuccess || bytes <= w.size)
    return e;
  bytes = align_up (bytes + bytes / 4, 4096);
  e = cudaHostAlloc ((void **) &p, bytes, cudaHostAllocPortable);
  if (e != cudaSuccess)
    return e;
  cudaFreeHost (w.host);
  w.host = *host = p;
  w.size = bytes;
  return cudaSuccess;
}

cudaError_t
device_grow (CuconvDeviceFrames * rf, DeviceBuffer & b, size_t bytes)
{
  const auto wait_idle = [rf] {
    return gpu_use_wait (rf->use);
  };

  return buffer_grow (b, bytes, 1 << 16, wait_idle);
}

cudaError_t
work_upload (CuconvDeviceFrames * rf, size_t bytes, cudaStream_t stream)
{
  WorkSlot & w = rf->slot[rf->next_slot];
  /* the previous frame's launches read d_work: the stream keeps them
   * apart, or a wait on the GPU when the frame came on another stream */
  cudaError_t e = gpu_use_follow (rf->use, stream);

  if (e == cudaSuccess)
    e = device_grow (rf, rf->d_work, bytes);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync (rf->d_work.ptr, w.host, bytes,
        cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (w.uploaded, stream);
  if (e != cudaSuccess)
    return e;
  rf->next_slot = (rf->next_slot + 1) % WORK_SLOTS;
  return cudaSuccess;
}

cudaError_t
work_end (CuconvDeviceFrames * rf, cudaStream_t stream)
{
  return gpu_use_record (rf->use, stream);
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" void
cuconv_device_frames_free (CuconvDeviceFrames * rf)
{
  if (!rf)
    return;
  /* the last frame's launches may still read the buffers */
  gpu_use_wait (rf->use);
  for (int i = 0; i < WORK_SLOTS; i++) {
    if (rf->slot[i].uploaded) {
      cudaEventSynchronize (rf->slot[i].uploaded);
      cudaEventDestroy (rf->slot[i].uploaded);
    }
    cudaFreeHost (rf->slot[i].host);
  }
  scratch_free (rf->wide);
  buffer_free (rf->scratch);
  buffer_free (rf->d_work);
  gpu_use_destroy (rf->use);
  cudaGetLastError ();
  free (rf->clipped);
  free (rf->relative);
  free (rf);
}

extern "C" CuconvDeviceFrames *
cuconv_device_frames_new (CuconvStatus * st)
{
  CuconvDeviceFrames *rf =
      (CuconvDeviceFrames *) calloc (1, sizeof (CuconvDeviceFrames));
  cudaError_t e;

  if (!rf) {
    fail (st, "out of host memory for the regions", cudaErrorMemoryAllocation);
    return NULL;
  }
  e = gpu_use_create (rf->use);
  for (int i = 0; i < WORK_SLOTS && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags (&rf->slot[i].uploaded,
        cudaEventDisableTiming);
  if (e != cudaSuccess) {
    fail (st, "cannot create a CUDA event for the regions", e);
    cuconv_device_frames_free (rf);
    return NULL;
  }
  return rf;
}
