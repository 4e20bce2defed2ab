/* gst-cudaconvolve: the recursive gaussian's coefficients: the fitted
 * sections, how many a plane needs, and each direction's poles, weights,
 * powers and border constants (cuconv-recursive.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuconv-recursive.h"

/* h(x) = sum_i exp (-l_i x) (a_i cos (w_i x) + b_i sin (w_i x)), x >= 0 in
 * units of sigma, least-squares fits to exp (-x^2 / 2) on [0, 14]
 * (cuda/filter/recursive-fit.py; 2 sections from Deriche's 1993 constants).  L1
 * distance of the discrete kernels the GPU applies (the poles rounded to
 * float, the weights refitted to them from sigma 8 up: fit_sections) to
 * the sampled gaussian, both normalised; tests/test-coeffs.c checks it:
 *
 *   sigma   2 sections  3 sections  4 sections
 *   0.8     4.85e-04    1.04e-05    9.42e-08
 *   1       8.34e-04    8.53e-06    1.80e-07
 *   2       5.79e-04    8.46e-06    1.94e-07
 *   4       5.58e-04    7.67e-06    2.30e-07
 *   8       5.49e-04    7.28e-06    1.79e-07
 *   10.67   5.44e-04    7.35e-06    1.12e-07
 *   16      5.33e-04    7.34e-06    1.12e-07
 *   21.33   5.29e-04    7.32e-06    1.04e-07
 *   32      5.26e-04    7.23e-06    1.20e-07
 *   64      5.25e-04    7.21e-06    1.18e-07
 *   128     5.25e-04    7.21e-06    1.25e-07
 *   256     5.25e-04    7.20e-06    1.48e-07
 *
 * The largest from sigma 0.8 to 256, on a fine grid: 8.35e-4 (sigma
 * 1.01), 1.17e-5 (0.90), 2.78e-7 (1.09). */
typedef struct
{
  double a, b, l, w;
} Section;

static const Section sections2[2] = {
  {1.680536155, 3.755048654, 1.785661288, 0.631987513},
  {-0.681159249, -0.264818624, 1.725398111, 1.997477219},
};

static const Section sections3[3] = {
  {3.154985076, 7.316137801, 2.182917572, 0.526615848},
  {-2.313589288, -0.921119092, 2.151819787, 1.616160827},
  {0.158595608, -0.043831033, 2.079448538, 2.856775370},
};

static const Section sections4[4] = {
  {6.143117377, 14.529055568, 2.517411744, 0.460900309},
  {-6.028644826, -2.465061665, 2.497537359, 1.400585040},
  {0.905567373, -0.309345655, 2.454592378, 2.403808859},
  {-0.020040035, 0.023202628, 2.378081630, 3.569917130},
};

double
cuconv_recursive_error (int n_sections)
{
  return n_sections <= 2 ? 8.4e-4 : n_sections == 3 ? 1.2e-5 : 2.8e-7;
}

int
cuconv_recursive_sections (int depth, double gain, int n_dirs)
{
  /* the kernels' error sums to 0, so a sample moves by at most half the
   * L1 distance times the range; each direction adds its own */
  const double range = ldexp (1.0, depth > 8 ? depth : 8) - 1.0;
  int n;

  if (gain < 1.0)
    gain = 1.0;
  for (n = 2; n < CUCONV_REC_MAX_SECTIONS; n++)
    if (gain * range * n_dirs * cuconv_recursive_error (n) / 2.0 <= 0.25)
      break;
  return n;
}

static CuconvCplx
to_cplx (double complex z)
{
  CuconvCplx c = { creal (z), cimag (z) };

  return c;
}

/* x rounded to float, through memory: GCC 12's vectorizer (-O2) drops the
 * (float) of a pair of casts whose results are widened again. */
static double
to_float (double x)
{
  volatile float f = (float) x;

  return f;
}

/* z rounded to the floats the kernels of 8 to 12 bits use (poles and
 * weights define the kernel: both precisions apply the same one) */
static CuconvCplx
to_float_cplx (double complex z)
{
  CuconvCplx c = { to_float (creal (z)), to_float (cimag (z)) };

  return c;
}

static double complex
from_cplx (CuconvCplx c)
{
  return c.re + I * c.im;
}

/* p^k for an integer k >= 0 (0^0 = 1) */
static double complex
cpow_int (double complex p, double k)
{
  if (k == 0.0)
    return 1.0;
  if (p == 0.0)
    return 0.0;
  return cexp (k * clog (p));
}

/* One fit of n sections to the sampled gaussian of sigma, in the floats
 * the kernels use: poles p, weights a and c = sum Re (a). */
typedef struct
{
  double sigma;
  int n;
  CuconvCplx p[CUCONV_REC_MAX_SECTIONS], a[CUCONV_REC_MAX_SECTIONS];
  float c;
} Fit;

/* Samples k of the sampled gaussian of sigma, normalised over all
 * integers, taken into account: beyond 10 sigma they are below 2e-22. */
static int
gauss_reach (double sigma)
{
  return (int) ceil (10.0 * sigma) + 2;
}

/* g[k] = exp (-k^2 / (2 sigma^2)) / sum over all integers, k = 0..reach. */
static void
gauss_samples (double sigma, int reach, double *g)
{
  double norm = 0.0;
  int k;

  for (k = 0; k <= reach; k++) {
    g[k] = exp (-(double) k * k / (2.0 * sigma * sigma));
    norm += k == 0 ? g[k] : 2.0 * g[k];
  }
  for (k = 0; k <= reach; k++)
    g[k] /= norm;
}

/* Normalises f's weights so that its discrete kernel sums to 1 (causal,
 * k >= 0, plus anticausal, k >= 1), in double, then rounds them. */
static void
fit_finish (Fit * f, const double complex * a)
{
  double complex p[CUCONV_REC_MAX_SECTIONS];
  double gain = 0.0, c = 0.0;
  int i;

  for (i = 0; i < f->n; i++) {
    p[i] = from_cplx (f->p[i]);
    gain += creal (a[i] * (1.0 + p[i]) / (1.0 - p[i]));
  }
  for (i = 0; i < f->n; i++) {
    f->a[i] = to_float_cplx (a[i] / gain);
    c += f->a[i].re;
  }
  f->c = (float) c;
}

/* L1 distance of f's discrete kernel, h[0] = c and h[+-k] = sum Re (a
 * p^k), to the sampled gaussian g (reach samples a side; h beyond them
 * summed out to where p^k is negligible). */
static double
fit_l1 (const Fit * f, const double *g, int reach)
{
  const int far = (int) ceil (20.0 * f->sigma) + 50;
  double complex p[CUCONV_REC_MAX_SECTIONS], pk[CUCONV_REC_MAX_SECTIONS];
  double l1 = fabs (f->c - g[0]);
  int i, k;

  for (i = 0; i < f->n; i++)
    pk[i] = p[i] = from_cplx (f->p[i]);
  for (k = 1; k <= far; k++) {
    double h = 0.0;

    for (i = 0; i < f->n; i++) {
      h += creal (from_cplx (f->a[i]) * pk[i]);
      pk[i] *= p[i];
    }
    l1 += 2.0 * fabs (h - (k <= reach ? g[k] : 0.0));
  }
  return l1;
}

/* sum over k >= 1 of z^k */
static double complex
geometric (double complex z)
{
  return z / (1.0 - z);
}

/* Solves the n x n system m (n <= 2 CUCONV_REC_MAX_SECTIONS, the right
 * side in column n) in place, by elimination with partial pivoting;
 * FALSE when it is singular. */
static int
solve (int n, double m[][2 * CUCONV_REC_MAX_SECTIONS + 1])
{
  int c, r, j;

  for (c = 0; c < n; c++) {
    int piv = c;

    for (r = c + 1; r < n; r++)
      if (fabs (m[r][c]) > fabs (m[piv][c]))
        piv = r;
    if (m[piv][c] == 0.0)
      return 0;
    for (j = 0; j <= n; j++) {
      const double t = m[c][j];
      m[c][j] = m[piv][j];
      m[piv][j] = t;
    }
    for (r = 0; r < n; r++) {
      const double q = m[r][c] / m[c][c];

      if (r == c)
        continue;
      for (j = c; j <= n; j++)
        m[r][j] -= q * m[c][j];
    }
  }
  for (c = 0; c < n; c++)
    m[c][n] /= m[c][c];
  return 1;
}

/* The weights a (a = x + i y) whose kernel, with f's float poles, is
 * nearest the sampled gaussian g in the least-squares sense over all
 * integers: the normal equations of the basis u_i[k] = Re (p_i^k),
 * v_i[k] = -Im (p_i^k), k counted twice but for k = 0, their products
 * summed in closed form (geometric series) and against g to its reach. */
static int
fit_least_squares (const Fit * f, const double *g, int reach,
    double complex * a)
{
  const int n = f->n, m2 = 2 * n;
  double m[2 * CUCONV_REC_MAX_SECTIONS][2 * CUCONV_REC_MAX_SECTIONS + 1];
  double complex p[CUCONV_REC_MAX_SECTIONS], pk[CUCONV_REC_MAX_SECTIONS];
  int i, j, k;

  for (i = 0; i < n; i++)
    pk[i] = p[i] = from_cplx (f->p[i]);
  for (i = 0; i < n; i++) {
    for (j = 0; j < n; j++) {
      /* 2 Re A Re B = Re AB + Re AB*, 2 Im A Im B = Re AB* - Re AB,
       * 2 Re A Im B = Im AB - Im AB*, with A = p_i^k, B = p_j^k */
      const double complex s = geometric (p[i] * p[j]);
      const double complex t = geometric (p[i] * conj (p[j]));

      m[2 * i][2 * j] = 1.0 + creal (s) + creal (t);
      m[2 * i + 1][2 * j + 1] = creal (t) - creal (s);
      m[2 * i][2 * j + 1] = -(cimag (s) - cimag (t));
      m[2 * i + 1][2 * j] = -(cimag (s) + cimag (t));
    }
    m[2 * i][m2] = g[0];
    m[2 * i + 1][m2] = 0.0;
  }
  for (k = 1; k <= reach; k++) {
    for (i = 0; i < n; i++) {
      m[2 * i][m2] += 2.0 * creal (pk[i]) * g[k];
      m[2 * i + 1][m2] -= 2.0 * cimag (pk[i]) * g[k];
      pk[i] *= p[i];
    }
  }
  if (!solve (m2, m))
    return 0;
  for (i = 0; i < n; i++)
    a[i] = m[2 * i][m2] + I * m[2 * i + 1][m2];
  return 1;
}

/* Below this sigma the poles lie far enough from 1 that rounding them
 * barely moves the kernel, and some are so near 0 that a least-squares
 * fit of their weights is ill-conditioned: the fitted weights stay. */
#define REFIT_MIN_SIGMA 8.0

/* The sections for sigma: the fitted poles rounded to float, and the
 * weights that suit those floats best.  Far from 1, a rounded pole barely
 * moves its section; for sigma in the hundreds its rounding reshapes the
 * kernel (4 sections at sigma 256: an L1 distance of 3.8e-6 with the
 * fitted weights, 1.4e-7 refitted), so the weights are also fitted again,
 * by least squares, for the float poles, and whichever pair lies nearer
 * the gaussian is kept. */
static void
fit_sections (Fit * f, double sigma, int n)
{
  const Section *sec = n <= 2 ? sections2 : n == 3 ? sections3 : sections4;
  const int reach = gauss_reach (sigma);
  double complex a[CUCONV_REC_MAX_SECTIONS];
  double *g;
  Fit refit;
  int i;

  f->sigma = sigma;
  f->n = n;
  for (i = 0; i < n; i++) {
    f->p[i] = to_float_cplx (cexp ((-sec[i].l + I * sec[i].w) / sigma));
    a[i] = sec[i].a - I * sec[i].b;
  }
  fit_finish (f, a);
  if (sigma < REFIT_MIN_SIGMA
      || !(g = malloc (sizeof (double) * (reach + 1))))
    return;
  gauss_samples (sigma, reach, g);
  refit = *f;
  if (fit_least_squares (&refit, g, reach, a)) {
    fit_finish (&refit, a);
    if (fit_l1 (&refit, g, reach) < fit_l1 (f, g, reach))
      *f = refit;
  }
  free (g);
}

/* The fits a thread has made, most recent first: a filter asks for the
 * same one or two sigmas frame after frame. */
#define FIT_CACHE 8
static _Thread_local Fit fit_cache[FIT_CACHE];
static _Thread_local int fit_cached;

static const Fit *
sections_for (double sigma, int n)
{
  Fit f;
  int i;

  for (i = 0; i < fit_cached; i++) {
    if (fit_cache[i].sigma == sigma && fit_cache[i].n == n) {
      f = fit_cache[i];
      break;
    }
  }
  if (i == fit_cached) {
    fit_sections (&f, sigma, n);
    if (fit_cached < FIT_CACHE)
      fit_cached++;
    i = fit_cached - 1;
  }
  memmove (&fit_cache[1], &fit_cache[0], sizeof (Fit) * i);
  fit_cache[0] = f;
  return &fit_cache[0];
}

static void
dir_compute (CuconvRecDir * d, double sigma, int n_sections, int n, int seg,
    int group)
{
  const Fit *f;
  int i, k;

  memset (d, 0, sizeof (*d));
  d->n = n;
  d->n_sections = n_sections <= 2 ? 2 : n_sections >= 4 ? 4 : 3;
  d->seg = seg;
  d->n_segs = (n + seg - 1) / seg;
  d->group = group;
  d->n_groups = (d->n_segs + group - 1) / group;
  d->tail = n - (d->n_segs - 1) * seg;

  f = sections_for (sigma, d->n_sections);
  d->c = f->c;
  for (i = 0; i < d->n_sections; i++) {
    const double complex q = from_cplx (f->p[i]);

    d->p[i] = f->p[i];
    d->a[i] = f->a[i];
    for (k = 0; k <= CUCONV_REC_MAX_SEG; k++)
      d->pk[i][k] = to_cplx (cpow_int (q, k));
    for (k = 0; k < CUCONV_REC_PSEG; k++)
      d->pseg[i][k] = to_cplx (cpow_int (q, (double) k * seg));
    /* a pole that float rounds to (almost) 0 (sigma far below 1) never
     * reaches a neighbour: the state it would divide does not matter */
    d->pinv[i] = cabs (q) > 1e-20 ? to_cplx (1.0 / q) : to_cplx (0.0);
    d->clamp[i] = to_cplx (1.0 / (1.0 - q));
    d->wrap[i] = to_cplx (1.0 / (1.0 - cpow_int (q, n)));
    d->mirror_p[i] = to_cplx (cpow_int (q, n - 1));
    d->mirror_d[i] = n >= 2 ?
        to_cplx (1.0 / (1.0 - cpow_int (q, 2.0 * n - 2.0))) : to_cplx (0.0);
    d->pgroup[i] = to_cplx (cpow_int (q, (double) group * seg));
    d->pborder[i] = to_cplx (cpow_int (q,
            n - (double) (d->n_groups - 1) * group * seg));
  }
}

/* The directions a thread has filled, with what they were filled for: a
 * frame asks for the same few (a sigma, each plane's width and height)
 * frame after frame, and filling one takes hundreds of complex powers.
 * Entries stay where they are (each is kilobytes): a miss refills the one
 * used longest ago. */
#define DIR_CACHE 8
typedef struct
{
  double sigma;
  int n_sections;
  unsigned used;                /* the call that last took it; 0: empty */
  CuconvRecDir d;
} DirEntry;
static _Thread_local DirEntry dir_cache[DIR_CACHE];
static _Thread_local unsigned dir_calls;

void
cuconv_recursive_dir_init (CuconvRecDir * d, double sigma, int n_sections,
    int n, int seg, int group)
{
  DirEntry *e = &dir_cache[0];
  int i;

  for (i = 0; i < DIR_CACHE; i++) {
    DirEntry *c = &dir_cache[i];

    if (c->used && c->sigma == sigma && c->n_sections == n_sections
        && c->d.n == n && c->d.seg == seg && c->d.group == group) {
      e = c;
      break;
    }
    if (c->used < e->used)
      e = c;
  }
  if (i == DIR_CACHE) {
    e->sigma = sigma;
    e->n_sections = n_sections;
    dir_compute (&e->d, sigma, n_sections, n, seg, group);
  }
  /* 0 stays "empty" when the count wraps */
  e->used = ++dir_calls ? dir_calls : ++dir_calls;
  *d = e->d;
}
