/* gst-cudaconvolve: whether there is a GPU, in a translation unit of its
 * own: programs that only ask (the element tests) then link the CUDA
 * runtime and not the engine's kernels, which are megabytes a GPU
 * architecture.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-cuda.h"

extern "C" int
cuconv_device_count (void)
{
  int n = 0;

  if (cudaGetDeviceCount (&n) != cudaSuccess)
    return 0;
  return n;
}
