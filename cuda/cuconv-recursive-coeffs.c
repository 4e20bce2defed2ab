/* gst-cudaconvolve: the recursive gaussian's coefficients: the fitted
 * sections, how many a plane needs, and each direction's poles, weights,
 * powers and border constants (cuconv-recursive.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "cuconv-recursive.h"

/* h(x) = sum_i exp (-l_i x) (a_i cos (w_i x) + b_i sin (w_i x)), x >= 0 in
 * units of sigma, least-squares fits to exp (-x^2 / 2) on [0, 14]
 * (cuda/recursive-fit.py; 2 sections from Deriche's 1993 constants).  L1
 * distance of the normalised discrete kernels to the sampled gaussian:
 *
 *   sigma   2 sections  3 sections  4 sections
 *   0.8     4.85e-04    1.03e-05    1.09e-07
 *   1       8.34e-04    8.59e-06    1.03e-07
 *   2       5.79e-04    8.48e-06    1.15e-07
 *   4       5.58e-04    7.65e-06    1.02e-07
 *   8       5.50e-04    7.58e-06    9.75e-08
 *   10.67   5.44e-04    7.43e-06    9.66e-08
 *   16      5.33e-04    7.38e-06    9.70e-08
 *   21.33   5.29e-04    7.33e-06    9.63e-08
 *   32      5.26e-04    7.26e-06    9.58e-08
 *   64      5.25e-04    7.22e-06    9.48e-08
 *   128     5.25e-04    7.21e-06    9.47e-08
 *   256     5.25e-04    7.21e-06    9.47e-08
 */
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
  return n_sections <= 2 ? 5.5e-4 : n_sections == 3 ? 7.6e-6 : 1.0e-7;
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
  CuconvCplx c = { (float) creal (z), (float) cimag (z) };

  return c;
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

void
cuconv_recursive_dir_init (CuconvRecDir * d, double sigma, int n_sections,
    int n, int seg, int group)
{
  const Section *sec = n_sections <= 2 ? sections2 :
      n_sections == 3 ? sections3 : sections4;
  double complex p[CUCONV_REC_MAX_SECTIONS], a[CUCONV_REC_MAX_SECTIONS];
  double gain = 0.0, c = 0.0;
  int i, k;

  memset (d, 0, sizeof (*d));
  d->n = n;
  d->n_sections = n_sections <= 2 ? 2 : n_sections >= 4 ? 4 : 3;
  d->seg = seg;
  d->n_segs = (n + seg - 1) / seg;
  d->group = group;
  d->n_groups = (d->n_segs + group - 1) / group;
  d->tail = n - (d->n_segs - 1) * seg;

  for (i = 0; i < d->n_sections; i++) {
    const double complex q = cexp ((-sec[i].l + I * sec[i].w) / sigma);
    /* the pole the kernels use: float */
    const CuconvCplx pf = to_cplx (q);

    p[i] = pf.re + I * pf.im;
    a[i] = sec[i].a - I * sec[i].b;
    /* the discrete kernel's sum: causal (k >= 0) plus anticausal (k >= 1) */
    gain += creal (a[i] * (1.0 + p[i]) / (1.0 - p[i]));
  }
  for (i = 0; i < d->n_sections; i++) {
    const double complex q = p[i];

    a[i] /= gain;
    d->p[i] = to_cplx (p[i]);
    d->a[i] = to_cplx (a[i]);
    c += d->a[i].re;
    for (k = 0; k <= CUCONV_REC_MAX_SEG; k++)
      d->pk[i][k] = to_cplx (cpow_int (q, k));
    for (k = 0; k < CUCONV_REC_PSEG; k++)
      d->pseg[i][k] = to_cplx (cpow_int (q, (double) k * seg));
    /* a pole that float rounds to (almost) 0 (sigma far below 1) never
     * reaches a neighbour: the state it would divide does not matter */
    d->pinv[i] = cabs (q) > 1e-20 ? to_cplx (1.0 / q) : to_cplx (0.0);
    d->clamp[i] = to_cplx (1.0 / (1.0 - p[i]));
    d->wrap[i] = to_cplx (1.0 / (1.0 - cpow_int (q, n)));
    d->mirror_p[i] = to_cplx (cpow_int (q, n - 1));
    d->mirror_d[i] = n >= 2 ?
        to_cplx (1.0 / (1.0 - cpow_int (q, 2.0 * n - 2.0))) : to_cplx (0.0);
    d->pgroup[i] = to_cplx (cpow_int (q, (double) group * seg));
    d->pborder[i] = to_cplx (cpow_int (q,
            n - (double) (d->n_groups - 1) * group * seg));
  }
  d->c = (float) c;
}
