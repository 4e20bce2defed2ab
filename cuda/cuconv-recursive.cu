/* gst-cudaconvolve: placeholder, replaced by the recursive path.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-engine.cuh"

namespace cuconv {

cudaError_t
launch_recursive (const CuconvPlane & pl, const CuconvFilter & f, cudaStream_t stream)
{
  (void) pl;
  (void) f;
  (void) stream;
  return cudaErrorNotSupported;
}

}                               /* namespace cuconv */
