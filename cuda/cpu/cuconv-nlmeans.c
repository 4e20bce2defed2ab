/* gst-cudaconvolve: non-local means, its definition (docs/semantics.md,
 * "Non-local means"): each sample the weighted mean of the samples of its
 * search window, each weighted by how alike its patch is to the sample's.
 * The CPU reference and the CPU engine run it; the GPU is tested against
 * it.
 *
 * The patches' distances are exact integers, so they may be summed in any
 * order: for each offset of the window in turn, the squared differences
 * of the band's samples and theirs at that offset, summed along each row
 * over the patch's width, then down the columns over its height (running
 * sums), a cost that does not grow with the patch.  The weights and the
 * means are float, accumulated for every sample offset by offset in the
 * definition's order.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuconv.h"
#include "cuconv-sample.h"

/* What one call works with: the band's samples, border-extended by the
 * whole reach (search and patch), and the sums of the offsets. */
typedef struct
{
  int sx, sy;                   /* search radii */
  int px, py;                   /* patch radii */
  int ex, ey;                   /* reach: sx + px, sy + py */
  int ew;                       /* width + 2 ex */
  int width, rows;
  float k;                      /* 1 / (2 sr^2 n), n the patch's samples */
  uint16_t *ext;                /* (rows + 2 ey) x ew samples */
  int *bx;                      /* border map of x in -ex..W-1+ex */
  uint64_t *h;                  /* (rows + 2 py) x width: row sums */
  uint64_t *col;                /* width: column sums */
  float *num, *den;             /* rows x width */
} NlMeans;

static uint64_t
square (int a, int b)
{
  return (uint64_t) ((int64_t) (a - b) * (a - b));
}

/* Adds offset (i, j) to num and den: D, the patch distance of every
 * sample to the one at (x + i, y + j), then its weight. */
static void
add_offset (NlMeans * m, int i, int j)
{
  const int pw = 2 * m->px + 1, ph = 2 * m->py + 1;
  int x, r;

  /* h row r: plane row row_begin - py + r, summed over x - px .. x + px */
  for (r = 0; r < m->rows + ph - 1; r++) {
    const uint16_t *a = m->ext + (size_t) (r + m->sy) * m->ew + m->sx;
    const uint16_t *b = a + j * m->ew + i;
    uint64_t *h = m->h + (size_t) r * m->width;
    uint64_t s = 0;

    for (x = 0; x < pw - 1; x++)
      s += square (a[x], b[x]);
    for (x = 0; x < m->width; x++) {
      s += square (a[x + pw - 1], b[x + pw - 1]);
      h[x] = s;
      s -= square (a[x], b[x]);
    }
  }
  /* down the columns over py rows each side */
  memset (m->col, 0, sizeof (uint64_t) * m->width);
  for (r = 0; r < ph - 1; r++)
    for (x = 0; x < m->width; x++)
      m->col[x] += m->h[(size_t) r * m->width + x];
  for (r = 0; r < m->rows; r++) {
    const uint64_t *add = m->h + (size_t) (r + ph - 1) * m->width;
    const uint64_t *sub = m->h + (size_t) r * m->width;
    const uint16_t *q = m->ext + (size_t) (r + m->ey + j) * m->ew + m->ex + i;
    float *num = m->num + (size_t) r * m->width;
    float *den = m->den + (size_t) r * m->width;

    for (x = 0; x < m->width; x++) {
      float w;

      m->col[x] += add[x];
      w = expf (-(float) m->col[x] * m->k);
      num[x] += w * (float) q[x];
      den[x] += w;
      m->col[x] -= sub[x];
    }
  }
}

int
cuconv_nlmeans_rows (const CuconvPlane * p, const CuconvFilter * f,
    int row_begin, int row_end)
{
  const int sub_x = p->sub_x > 1 ? p->sub_x : 1;
  const int sub_y = p->sub_y > 1 ? p->sub_y : 1;
  const int depth = sample_depth (p);
  const unsigned max = (1u << depth) - 1;
  const double sr = cuconv_bilateral_sigma_range (f, depth);
  NlMeans m;
  size_t band;
  int c, x, y, i, j, ret = -1;

  if (row_end <= row_begin || p->width <= 0)
    return 0;
  memset (&m, 0, sizeof (m));
  m.width = p->width;
  m.rows = row_end - row_begin;
  m.px = f->patch[sub_x - 1];
  m.py = f->patch[sub_y - 1];
  m.ex = cuconv_filter_taps_x (f, p)->radius;
  m.ey = cuconv_filter_taps_y (f, p)->radius;
  m.sx = m.ex - m.px;
  m.sy = m.ey - m.py;
  m.ew = p->width + 2 * m.ex;
  m.k = (float) (1.0 / (2.0 * sr * sr * (2 * m.px + 1) * (2 * m.py + 1)));
  band = (size_t) m.rows * m.width;
  m.ext = malloc (sizeof (uint16_t) * (size_t) m.ew * (m.rows + 2 * m.ey));
  m.bx = malloc (sizeof (int) * m.ew);
  m.h = malloc (sizeof (uint64_t) * (size_t) m.width * (m.rows + 2 * m.py));
  m.col = malloc (sizeof (uint64_t) * m.width);
  m.num = malloc (sizeof (float) * band);
  m.den = malloc (sizeof (float) * band);
  if (!m.ext || !m.bx || !m.h || !m.col || !m.num || !m.den)
    goto done;
  for (i = 0; i < m.ew; i++)
    m.bx[i] = cuconv_border_index (f->border, i - m.ex, p->width);

  for (c = 0; c < p->n_comp; c++) {
    if (p->op[c] == CUCONV_COMP_FILTER) {
      sample_extend (p, f->border, c, row_begin, m.rows, m.ey, m.bx, m.ew,
          m.ext);
      memset (m.num, 0, sizeof (float) * band);
      memset (m.den, 0, sizeof (float) * band);
      /* offsets rows top to bottom, each left to right */
      for (j = -m.sy; j <= m.sy; j++)
        for (i = -m.sx; i <= m.sx; i++)
          add_offset (&m, i, j);
    }
    for (y = row_begin; y < row_end; y++) {
      const size_t at = (size_t) (y - row_begin) * m.width;

      /* den >= the centre's weight, 1 */
      for (x = 0; x < p->width; x++)
        sample_write_op (p, x, y, c, p->op[c] != CUCONV_COMP_FILTER ? 0 :
            cuconv_round_sat (m.num[at + x] / m.den[at + x], max));
    }
  }
  ret = 0;

done:
  free (m.ext);
  free (m.bx);
  free (m.h);
  free (m.col);
  free (m.num);
  free (m.den);
  return ret;
}
