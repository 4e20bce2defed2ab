/* gst-cudaconvolve: pixelate's grid (docs/semantics.md, "Pixelate"),
 * defined once for the CPU and the GPU: the block a sample lies in, and
 * the samples a block covers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_PIXELATE_H__
#define __CUCONV_PIXELATE_H__

#include "cuconv.h"

/* floor (a / d) for d >= 1, any sign of a. */
CUCONV_HD long long
cuconv_floor_div (long long a, long long d)
{
  return a >= 0 ? a / d : -((-a + d - 1) / d);
}

/* The block of sample u of a plane subsampled by s, on the grid of side
 * `block` through x0 (luma pixels from the plane's first sample): the
 * block of the first luma pixel the sample stands for. */
CUCONV_HD long long
cuconv_pixelate_block_of (long long u, int s, long long x0, int block)
{
  return cuconv_floor_div (u * s - x0, block);
}

/* The samples [*a, *b) of [0, n) that block i of that grid covers: u is
 * in block i when i block <= u s - x0 < (i + 1) block. */
CUCONV_HD void
cuconv_pixelate_span (long long i, int s, long long x0, int block, int n,
    int *a, int *b)
{
  const long long lo = -cuconv_floor_div (-(x0 + i * block), s);
  const long long hi = -cuconv_floor_div (-(x0 + (i + 1) * block), s);

  *a = (int) (lo < 0 ? 0 : lo > n ? n : lo);
  *b = (int) (hi < 0 ? 0 : hi > n ? n : hi);
}

#endif /* __CUCONV_PIXELATE_H__ */
