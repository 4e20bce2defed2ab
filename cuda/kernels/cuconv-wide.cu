/* gst-cudaconvolve: filters too wide for the fused tiles (docs/design.md,
 * "Wide filters"): the untruncated gaussian by recursive filtering, and
 * taps wider than CUCONV_TILE_MAX_RADIUS through global memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"

namespace cuconv {

static bool
taps_wide (const CuconvTaps & t)
{
  return t.untruncated || t.radius > CUCONV_TILE_MAX_RADIUS;
}

bool
filter_is_wide (const CuconvFilter & f)
{
  /* a block may span the plane, and an edge of Canny's */
  if (f.combine == CUCONV_COMBINE_PIXELATE
      || f.combine == CUCONV_COMBINE_CANNY)
    return true;
  for (int s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    if (f.n_terms >= 1 && (taps_wide (f.x[s]) || taps_wide (f.y[s])))
      return true;
    if (f.n_terms == 2 && (taps_wide (f.x2[s]) || taps_wide (f.y2[s])))
      return true;
  }
  return false;
}

cudaError_t
launch_wide (const CuconvPlane & pl, const CuconvFilter & f, Scratch & sc,
    cudaStream_t stream)
{
  if (cuconv_filter_taps_x (&f, &pl)->untruncated
      || cuconv_filter_taps_y (&f, &pl)->untruncated)
    return launch_recursive (pl, f, sc, stream);
  return launch_global (pl, f, 0, pl.height, sc, stream);
}

}                               /* namespace cuconv */
