/* gst-cudaconvolve: the CPU engine's box, at a cost that does not grow
 * with the radius: running sums of the samples, exact in double (they are
 * integers), the mean rounded once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "cuconv-cpu.h"

/* The horizontal sums of source row y over 2 rx + 1 samples, each
 * component on its own: a running sum, exact in double (the samples are
 * integers), into h. */
static void
box_row (const Plane * pl, int y, float *ext, double *h)
{
  const int nc = pl->nc, taps = 2 * pl->rx + 1;
  int x, c, i;

  cpu_ext_row (pl, y, ext);
  for (c = 0; c < nc; c++) {
    double sum = 0.0;

    for (i = 0; i < taps; i++)
      sum += ext[i * nc + c];
    h[c] = sum;
    for (x = 1; x < pl->w; x++) {
      sum += ext[(x - 1 + taps) * nc + c] - ext[(x - 1) * nc + c];
      h[x * nc + c] = sum;
    }
  }
}

/* Rows y0..y1 - 1 of the box, at a cost that does not grow with the
 * radius: each column's sum of the horizontal sums, slid down a row by
 * adding the row that comes in and taking off the one that leaves, both
 * summed again (exact: integers in double); the mean rounded.  The
 * reference's float taps of 1 / (2r + 1) round the same mean within a
 * fraction of the last bit. */
int
cpu_band_box (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, ry = pl->ry;
  const size_t ext_n = (size_t) (pl->w + 2 * pl->rx) * pl->nc;
  const double scale = 1.0 / ((2.0 * pl->rx + 1.0) * (2.0 * ry + 1.0));
  float *ext, *out;
  double *h, *col;
  int y, x;

  /* h and col are doubles: two floats each, 8-byte aligned after ext_n
   * rounded up to an even count */
  if (cpu_band_memory (b, ext_n + 1 + 5 * (size_t) n) < 0)
    return -1;
  ext = b->mem;
  h = (double *) (b->mem + ((ext_n + 1) & ~(size_t) 1));
  col = h + n;
  out = (float *) (col + n);

  memset (col, 0, sizeof (double) * n);
  for (y = y0 - ry; y <= y0 + ry; y++) {
    box_row (pl, y, ext, h);
    for (x = 0; x < n; x++)
      col[x] += h[x];
  }
  for (y = y0; y < y1; y++) {
    for (x = 0; x < n; x++)
      out[x] = (float) (col[x] * scale);
    cpu_write_row (pl, y, out);
    if (y + 1 == y1)
      break;
    box_row (pl, y + ry + 1, ext, h);
    for (x = 0; x < n; x++)
      col[x] += h[x];
    box_row (pl, y - ry, ext, h);
    for (x = 0; x < n; x++)
      col[x] -= h[x];
  }
  return 0;
}
