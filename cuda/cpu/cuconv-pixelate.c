/* gst-cudaconvolve: pixelate on the CPU (docs/semantics.md, "Pixelate"):
 * the blocks of a grid in luma pixels, carried to each plane, and each
 * block's mean.  The definition, and the CPU engine's way: a row of
 * blocks at a time, the sums of its blocks in one pass over its rows, the
 * means written in another.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "cuconv-pixelate.h"
#include "cuconv-sample.h"

int
cuconv_pixelate_plane (const CuconvPlane * p, const CuconvFilter * f)
{
  const int sx = p->sub_x > 1 ? p->sub_x : 1, sy = p->sub_y > 1 ? p->sub_y : 1;
  const long long x0 = f->block_x0[sx - 1], y0 = f->block_y0[sy - 1];
  const int shift = sample_shift (p);
  const unsigned mask = (1u << sample_depth (p)) - 1;
  const int nc = p->n_comp;
  long long bx, by, bx0, bx1, by0, by1;
  unsigned long long *sum;
  int n_bx, c, u, v;

  if (p->width <= 0 || p->height <= 0)
    return 0;
  bx0 = cuconv_pixelate_block_of (0, sx, x0, f->block);
  bx1 = cuconv_pixelate_block_of (p->width - 1, sx, x0, f->block);
  by0 = cuconv_pixelate_block_of (0, sy, y0, f->block);
  by1 = cuconv_pixelate_block_of (p->height - 1, sy, y0, f->block);
  n_bx = (int) (bx1 - bx0 + 1);
  sum = malloc (sizeof (unsigned long long) * (size_t) n_bx * nc);
  if (!sum)
    return -1;

  for (by = by0; by <= by1; by++) {
    int va, vb;

    cuconv_pixelate_span (by, sy, y0, f->block, p->height, &va, &vb);
    if (va >= vb)
      continue;
    memset (sum, 0, sizeof (unsigned long long) * (size_t) n_bx * nc);
    for (v = va; v < vb; v++)
      for (bx = bx0; bx <= bx1; bx++) {
        unsigned long long *s = sum + (bx - bx0) * nc;
        int ua, ub;

        cuconv_pixelate_span (bx, sx, x0, f->block, p->width, &ua, &ub);
        for (u = ua; u < ub; u++)
          for (c = 0; c < nc; c++)
            s[c] += sample_read (p, u, v, c) >> shift & mask;
      }
    for (bx = bx0; bx <= bx1; bx++) {
      const unsigned long long *s = sum + (bx - bx0) * nc;
      int ua, ub;
      unsigned long long n;

      cuconv_pixelate_span (bx, sx, x0, f->block, p->width, &ua, &ub);
      n = (unsigned long long) (ub - ua) * (unsigned long long) (vb - va);
      for (v = va; v < vb; v++)
        for (u = ua; u < ub; u++)
          for (c = 0; c < nc; c++)
            /* the mean, rounded half up */
            sample_write_op (p, u, v, c,
                (unsigned) ((2 * s[c] + n) / (2 * n)));
    }
  }
  free (sum);
  return 0;
}
