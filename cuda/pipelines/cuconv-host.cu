/* gst-cudaconvolve: what the engine's callers need of the CUDA runtime
 * without any kernel: the device count and the
 * status of a failed call.  In a translation unit of its own, so that
 * programs that only ask whether there is a GPU (the element tests) link
 * the CUDA runtime and not the kernels, which are megabytes a GPU
 * architecture.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"

namespace cuconv {

int
fail (CuconvStatus * st, const char *what, cudaError_t e)
{
  cudaGetLastError ();          /* not a sticky error: clear it */
  if (e == cudaSuccess)
    e = cudaErrorUnknown;       /* a failure is never reported as 0 */
  if (st) {
    st->code = (int) e;
    snprintf (st->message, sizeof (st->message), "%s: %s (%s)", what,
        cudaGetErrorString (e), cudaGetErrorName (e));
  }
  return (int) e;
}

}                               /* namespace cuconv */

extern "C" int
cuconv_device_count (void)
{
  int n = 0;

  if (cudaGetDeviceCount (&n) != cudaSuccess) {
    cudaGetLastError ();
    return 0;
  }
  return n;
}

