/* gst-cudaconvolve: non-local means, its definition (docs/semantics.md,
 * "Non-local means"): each sample the weighted mean of the samples of its
 * search window, each weighted by how alike its patch is to the sample's.
 * The CPU reference and the CPU engine run it; the GPU is tested against
 * it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cuconv.h"
#include "cuconv-sample.h"

/* What one call works with: the band's samples, border-extended by the
 * whole reach (search and patch). */
typedef struct
{
  int sx, sy;                   /* search radii */
  int px, py;                   /* patch radii */
  int ex, ey;                   /* reach: sx + px, sy + py */
  int ew;                       /* width + 2 ex */
  float k;                      /* 1 / (2 sr^2 n), n the patch's samples */
  uint16_t *ext;                /* (rows + 2 ey) x ew samples */
  int *bx;                      /* border map of x in -ex..W-1+ex */
} NlMeans;

/* The sum of squared differences of the patches around (a) and (b),
 * pointers to their centres in ext, rows top to bottom, samples left to
 * right, in float. */
static float
patch_distance (const NlMeans * m, const uint16_t * a, const uint16_t * b)
{
  float d = 0.0f;
  int i, j;

  for (j = -m->py; j <= m->py; j++)
    for (i = -m->px; i <= m->px; i++) {
      const float e = (float) a[j * m->ew + i] - (float) b[j * m->ew + i];

      d += e * e;
    }
  return d;
}

/* Non-local means at (x, row_begin + k), from the extended samples:
 * offsets rows top to bottom, left to right. */
static float
nlmeans_at (const NlMeans * m, int x, int k)
{
  const uint16_t *centre = m->ext + (size_t) (k + m->ey) * m->ew + x + m->ex;
  float num = 0.0f, den = 0.0f;
  int i, j;

  for (j = -m->sy; j <= m->sy; j++)
    for (i = -m->sx; i <= m->sx; i++) {
      const uint16_t *q = centre + j * m->ew + i;
      const float w = expf (-patch_distance (m, centre, q) * m->k);

      num += w * (float) *q;
      den += w;
    }
  /* den >= the centre's weight, 1 */
  return num / den;
}

int
cuconv_nlmeans_rows (const CuconvPlane * p, const CuconvFilter * f,
    int row_begin, int row_end)
{
  const int sub_x = p->sub_x > 1 ? p->sub_x : 1;
  const int sub_y = p->sub_y > 1 ? p->sub_y : 1;
  const int depth = sample_depth (p), rows = row_end - row_begin;
  const unsigned max = (1u << depth) - 1;
  const double sr = cuconv_bilateral_sigma_range (f, depth);
  NlMeans m;
  int c, x, y, i, ret = -1;

  if (rows <= 0 || p->width <= 0)
    return 0;
  m.px = f->patch_x[sub_x - 1];
  m.py = f->patch_y[sub_y - 1];
  m.ex = cuconv_filter_taps_x (f, p)->radius;
  m.ey = cuconv_filter_taps_y (f, p)->radius;
  m.sx = m.ex - m.px;
  m.sy = m.ey - m.py;
  m.ew = p->width + 2 * m.ex;
  m.k = (float) (1.0 / (2.0 * sr * sr * (2 * m.px + 1) * (2 * m.py + 1)));
  m.ext = malloc (sizeof (uint16_t) * (size_t) m.ew * (rows + 2 * m.ey));
  m.bx = malloc (sizeof (int) * m.ew);
  if (!m.ext || !m.bx)
    goto done;
  for (i = 0; i < m.ew; i++)
    m.bx[i] = cuconv_border_index (f->border, i - m.ex, p->width);

  for (c = 0; c < p->n_comp; c++) {
    if (p->op[c] == CUCONV_COMP_FILTER)
      sample_extend (p, f->border, c, row_begin, rows, m.ey, m.bx, m.ew,
          m.ext);
    for (y = row_begin; y < row_end; y++) {
      for (x = 0; x < p->width; x++) {
        switch (p->op[c]) {
          case CUCONV_COMP_COPY:
            sample_write (p, x, y, c, sample_read (p, x, y, c));
            break;
          case CUCONV_COMP_FILL:
            sample_write (p, x, y, c, p->fill << sample_shift (p));
            break;
          case CUCONV_COMP_FILTER:
          default:
            sample_write (p, x, y, c, cuconv_round_sat (nlmeans_at (&m, x,
                        y - row_begin), max) << sample_shift (p));
            break;
        }
      }
    }
  }
  ret = 0;

done:
  free (m.ext);
  free (m.bx);
  return ret;
}
