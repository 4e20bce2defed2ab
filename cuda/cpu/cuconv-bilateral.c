/* gst-cudaconvolve: the bilateral filter's definition (docs/semantics.md,
 * "The bilateral"): its range weights and the filter itself, which the
 * CPU reference and the CPU engine both run and the GPU is tested against.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cuconv.h"
#include "cuconv-sample.h"

double
cuconv_bilateral_sigma_range (const CuconvFilter * f, int depth)
{
  const double sr = ldexp (f->sigma_range, (depth > 8 ? depth : 8) - 8);

  return sr > 0.0 && sr < CUCONV_MIN_SIGMA ? CUCONV_MIN_SIGMA : sr;
}

void
cuconv_bilateral_range_lut (float *wr, int n, double sigma_r)
{
  int d;

  for (d = 0; d < n; d++) {
    if (sigma_r > 0.0)
      wr[d] = (float) exp (-(double) d * d / (2.0 * sigma_r * sigma_r));
    else
      wr[d] = d == 0 ? 1.0f : 0.0f;
  }
}

/* What one call works with: the window's weights and the band's samples,
 * border-extended. */
typedef struct
{
  int rx, ry, ew;               /* radii; ew = width + 2 rx */
  float *ws;                    /* (2ry + 1) x (2rx + 1): kx[i] * ky[j] */
  float *wr;                    /* 2^depth range weights */
  uint16_t *ext;                /* (rows + 2ry) x ew samples */
  int *bx;                      /* border map of x in -rx..W-1+rx */
} Bilateral;

/* The bilateral at (x, row_begin + k), from the extended samples. */
static float
bilateral_at (const Bilateral * b, int x, int k)
{
  const int side = 2 * b->rx + 1;
  const uint16_t *centre = b->ext + (size_t) (k + b->ry) * b->ew + x + b->rx;
  const int pv = *centre;
  float num = 0.0f, den = 0.0f;
  int i, j;

  for (j = 0; j <= 2 * b->ry; j++) {
    const uint16_t *row = b->ext + (size_t) (k + j) * b->ew + x;
    const float *ws = b->ws + j * side;

    for (i = 0; i < side; i++) {
      const int q = row[i];
      const float w = ws[i] * b->wr[q > pv ? q - pv : pv - q];

      num += w * (float) q;
      den += w;
    }
  }
  /* den >= the centre's weight, 1 */
  return num / den;
}

int
cuconv_bilateral_rows (const CuconvPlane * p, const CuconvFilter * f,
    int row_begin, int row_end)
{
  const CuconvTaps *kx = cuconv_filter_taps_x (f, p);
  const CuconvTaps *ky = cuconv_filter_taps_y (f, p);
  const CuconvBorder border = f->border;
  const int depth = sample_depth (p), rows = row_end - row_begin;
  const unsigned max = (1u << depth) - 1;
  Bilateral b;
  int c, x, y, i, j, ret = -1;

  if (rows <= 0 || p->width <= 0)
    return 0;
  b.rx = kx->radius;
  b.ry = ky->radius;
  b.ew = p->width + 2 * b.rx;
  b.ws = malloc (sizeof (float) * (2 * b.rx + 1) * (2 * b.ry + 1));
  b.wr = malloc (sizeof (float) * ((size_t) max + 1));
  b.ext = malloc (sizeof (uint16_t) * (size_t) b.ew * (rows + 2 * b.ry));
  b.bx = malloc (sizeof (int) * b.ew);
  if (!b.ws || !b.wr || !b.ext || !b.bx)
    goto done;

  for (j = 0; j <= 2 * b.ry; j++)
    for (i = 0; i <= 2 * b.rx; i++)
      b.ws[j * (2 * b.rx + 1) + i] = kx->w[i] * ky->w[j];
  cuconv_bilateral_range_lut (b.wr, (int) max + 1,
      cuconv_bilateral_sigma_range (f, depth));
  for (i = 0; i < b.ew; i++)
    b.bx[i] = cuconv_border_index (border, i - b.rx, p->width);

  for (c = 0; c < p->n_comp; c++) {
    if (p->op[c] == CUCONV_COMP_FILTER)
      sample_extend (p, border, c, row_begin, rows, b.ry, b.bx, b.ew, b.ext);
    for (y = row_begin; y < row_end; y++) {
      for (x = 0; x < p->width; x++)
        sample_write_op (p, x, y, c, p->op[c] != CUCONV_COMP_FILTER ? 0 :
            cuconv_round_sat (bilateral_at (&b, x, y - row_begin), max));
    }
  }
  ret = 0;

done:
  free (b.ws);
  free (b.wr);
  free (b.ext);
  free (b.bx);
  return ret;
}
