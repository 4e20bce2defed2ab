/* gst-cudaconvolve: the CPU engine's untruncated gaussian: the GPU's
 * recursive filter (cuconv-recursive.h: complex one-pole sections, causal
 * and anticausal, started from the border's states,
 * cuconv-recursive-border.h), at a cost that does not grow with sigma.
 * Two passes over the frame: the columns (each band a range of them,
 * side by side), into a float plane the engine keeps for every band, then
 * the rows (each band a range of them).  Sums and states in double.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "cuconv-cpu.h"
#include "cuconv-recursive.h"
#include "cuconv-recursive-border.h"

/* The untruncated gaussian in one direction or both, the other the tap
 * [1], alone or sharpened: what the GPU's recursive path takes too. */
int
cpu_is_recursive (const CuconvFilter * f)
{
  int s;

  if (f->n_terms != 1 || (f->combine != CUCONV_COMBINE_NONE &&
          f->combine != CUCONV_COMBINE_SHARPEN))
    return 0;
  for (s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    const CuconvTaps *tx = &f->x[s], *ty = &f->y[s];

    if (!tx->untruncated && !ty->untruncated)
      return 0;
    if ((!tx->untruncated && (tx->radius != 0 || tx->w[0] != 1.0f)) ||
        (!ty->untruncated && (ty->radius != 0 || ty->w[0] != 1.0f)))
      return 0;
  }
  return 1;
}

typedef CuconvCplx Cx;

static inline Cx
cmul (Cx a, Cx b)
{
  Cx r = { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
  return r;
}

static inline Cx
cadd (Cx a, Cx b)
{
  Cx r = { a.re + b.re, a.im + b.im };
  return r;
}

/* The arithmetic of border_states: every product and sum rounded on its
 * own. */
#define CX_MK(re, im) ((Cx) { (re), (im) })
#define CX_MAD(m, u, v) cadd (cmul ((m), (u)), (v))
#define CX_SCALE(m, x) cmul ((m), CX_MK ((x), 0.0))

/* Section s's states z[-1] and w[n] at the border, as the kernels'
 * (cuconv-recursive-border.h). */
CUCONV_REC_BORDER_STATES (static, border_states, double, Cx, CuconvRecDir,
    re, im, CX_MK, cmul, CX_MAD, CX_SCALE)

/* The directions of a plane: each untruncated one's sections. */
typedef struct
{
  int rows, cols;               /* filtered along rows, along columns */
  CuconvRecDir dx, dy;
} Rec;

static void
rec_init (Rec * r, const Plane * pl)
{
  const CuconvTaps *tx = pl->kx[0], *ty = pl->ky[0];
  const int depth = pl->wide ? (pl->p->depth) : 8;
  int ns;

  r->rows = tx->untruncated;
  r->cols = ty->untruncated;
  ns = cuconv_recursive_sections (depth, pl->combine ==
      CUCONV_COMBINE_SHARPEN ? pl->amount : 1.0, r->rows + r->cols);
  if (r->rows)
    cuconv_recursive_dir_init (&r->dx, tx->sigma, ns, pl->w,
        CUCONV_REC_MAX_SEG, 1);
  if (r->cols)
    cuconv_recursive_dir_init (&r->dy, ty->sigma, ns, pl->p->height,
        CUCONV_REC_MAX_SEG, 1);
}

/* One line of n samples x[k * step] filtered into acc[k] (double). */
static void
rec_line (const CuconvRecDir * d, CuconvBorder border, const float *x,
    size_t step, int n, double *acc)
{
  int s, k;

  for (k = 0; k < n; k++)
    acc[k] = -d->c * x[k * step];
  for (s = 0; s < d->n_sections; s++) {
    const Cx p = d->p[s], a = d->a[s];
    Cx zc = { 0.0, 0.0 }, za = { 0.0, 0.0 }, z, w;

    for (k = 0; k < n; k++)
      zc = cadd (cmul (p, zc), (Cx) { x[k * step], 0.0 });
    for (k = n - 1; k >= 0; k--)
      za = cadd (cmul (p, za), (Cx) { x[k * step], 0.0 });
    border_states (d, s, border, x[0], x[(size_t) (n - 1) * step], zc, za,
        &z, &w);
    for (k = 0; k < n; k++) {
      z = cadd (cmul (p, z), (Cx) { x[k * step], 0.0 });
      acc[k] += a.re * z.re - a.im * z.im;
    }
    for (k = n - 1; k >= 0; k--) {
      w = cadd (cmul (p, w), (Cx) { x[k * step], 0.0 });
      acc[k] += a.re * w.re - a.im * w.im;
    }
  }
}

/* Pass 0: columns j0..j1 - 1 of the plane (n = width * n_comp of them),
 * its samples as floats into xp and the columns filtered into yp (both n
 * x height), the lines side by side so that the loops run across them. */
static int
rec_columns (const Plane * pl, const Rec * r, float *xp, float *yp, int j0,
    int j1, Band * b)
{
  const int m = j1 - j0, h = pl->p->height, n = pl->n;
  const int bytes = pl->wide ? 2 : 1;
  const CuconvRecDir *d = &r->dy;
  double *acc, *st;
  int s, y, j;

  if (m <= 0)
    return 0;
  for (y = 0; y < h; y++)
    cpu_row_to_float (pl->p->src + y * pl->p->src_stride + (size_t) j0 * bytes,
        pl->wide, pl->shift, pl->mask, m, xp + (size_t) y * n + j0);
  if (!r->cols) {
    for (y = 0; y < h; y++)
      memcpy (yp + (size_t) y * n + j0, xp + (size_t) y * n + j0,
          sizeof (float) * m);
    return 0;
  }
  /* acc: the sums, h x m; st: four complex states a column */
  if (cpu_band_memory (b, 2 * ((size_t) h * m + 8 * (size_t) m)) < 0)
    return -1;
  acc = (double *) b->mem;
  st = acc + (size_t) h * m;

  for (y = 0; y < h; y++)
    for (j = 0; j < m; j++)
      acc[(size_t) y * m + j] = -d->c * xp[(size_t) y * n + j0 + j];
  for (s = 0; s < d->n_sections; s++) {
    const Cx p = d->p[s], a = d->a[s];
    double *zr = st, *zi = st + m, *wr = st + 2 * m, *wi = st + 3 * m;

    /* the zero-initial totals, then the border's states in their place */
    memset (st, 0, sizeof (double) * 4 * m);
    for (y = 0; y < h; y++) {
      const float *x = xp + (size_t) y * n + j0;

      for (j = 0; j < m; j++) {
        const double re = p.re * zr[j] - p.im * zi[j] + x[j];

        zi[j] = p.re * zi[j] + p.im * zr[j];
        zr[j] = re;
      }
    }
    for (y = h - 1; y >= 0; y--) {
      const float *x = xp + (size_t) y * n + j0;

      for (j = 0; j < m; j++) {
        const double re = p.re * wr[j] - p.im * wi[j] + x[j];

        wi[j] = p.re * wi[j] + p.im * wr[j];
        wr[j] = re;
      }
    }
    for (j = 0; j < m; j++) {
      Cx sc, sa;

      border_states (d, s, pl->border, xp[j0 + j],
          xp[(size_t) (h - 1) * n + j0 + j], (Cx) { zr[j], zi[j] },
          (Cx) { wr[j], wi[j] }, &sc, &sa);
      zr[j] = sc.re;
      zi[j] = sc.im;
      wr[j] = sa.re;
      wi[j] = sa.im;
    }
    /* the runs from the true states */
    for (y = 0; y < h; y++) {
      const float *x = xp + (size_t) y * n + j0;
      double *o = acc + (size_t) y * m;

      for (j = 0; j < m; j++) {
        const double re = p.re * zr[j] - p.im * zi[j] + x[j];

        zi[j] = p.re * zi[j] + p.im * zr[j];
        zr[j] = re;
        o[j] += a.re * zr[j] - a.im * zi[j];
      }
    }
    for (y = h - 1; y >= 0; y--) {
      const float *x = xp + (size_t) y * n + j0;
      double *o = acc + (size_t) y * m;

      for (j = 0; j < m; j++) {
        const double re = p.re * wr[j] - p.im * wi[j] + x[j];

        wi[j] = p.re * wi[j] + p.im * wr[j];
        wr[j] = re;
        o[j] += a.re * wr[j] - a.im * wi[j];
      }
    }
  }
  for (y = 0; y < h; y++)
    for (j = 0; j < m; j++)
      yp[(size_t) y * n + j0 + j] = (float) acc[(size_t) y * m + j];
  return 0;
}

/* Pass 1: rows y0..y1 - 1 from yp, each component along the row, then
 * sharpened if asked, rounded and written. */
static int
rec_rows (const Plane * pl, const Rec * r, const float *yp, int y0, int y1,
    Band * b)
{
  const int n = pl->n, nc = pl->nc, w = pl->w;
  double *acc;
  float *out, *in;
  int y, c, x;

  if (cpu_band_memory (b, 2 * (size_t) w + 2 * (size_t) n) < 0)
    return -1;
  acc = (double *) b->mem;
  out = (float *) (acc + w);
  in = out + n;
  for (y = y0; y < y1; y++) {
    const float *line = yp + (size_t) y * n;

    if (r->rows) {
      for (c = 0; c < nc; c++) {
        rec_line (&r->dx, pl->border, line + c, nc, w, acc);
        for (x = 0; x < w; x++)
          out[x * nc + c] = (float) acc[x];
      }
    } else {
      memcpy (out, line, sizeof (float) * n);
    }
    cpu_combine_row (pl, y, out, NULL, in);
    cpu_write_row (pl, y, out);
  }
  return 0;
}

int
cpu_rec_band (const Plane * pl, float *xp, float *yp, int pass, int from,
    int to, Band * b)
{
  Rec r;

  rec_init (&r, pl);
  return pass == 0 ? rec_columns (pl, &r, xp, yp, from, to, b) :
      rec_rows (pl, &r, yp, from, to, b);
}
