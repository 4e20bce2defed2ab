/* gst-cudaconvolve: filter coefficients, computed here once for the CPU
 * reference and the CUDA kernels alike.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "ccv.h"

int
ccv_settings_is_identity (const CcvSettings * s)
{
  return s->radius == 0 && s->sigma <= 0.0;
}

void
ccv_settings_resolve (const CcvSettings * s, int *radius, double *sigma)
{
  int r = (int) s->radius;
  double sg = s->sigma;

  if (r == 0 && sg > 0.0) {
    r = (int) ceil (3.0 * sg);
    if (r > CCV_MAX_RADIUS)
      r = CCV_MAX_RADIUS;
  }
  /* OpenCV's rule for an aperture of 2r + 1, as cv::getGaussianKernel */
  if (sg <= 0.0)
    sg = 0.3 * (r - 1) + 0.8;

  *radius = r;
  *sigma = sg;
}

static void
taps_gaussian (CcvTaps * t, double sigma)
{
  double w[CCV_MAX_TAPS], sum = 0.0;
  int i, r = t->radius;

  for (i = -r; i <= r; i++) {
    w[i + r] = exp (-(double) (i * i) / (2.0 * sigma * sigma));
    sum += w[i + r];
  }
  for (i = 0; i <= 2 * r; i++)
    t->w[i] = (float) (w[i] / sum);
}

static void
taps_box (CcvTaps * t)
{
  int i, n = 2 * t->radius + 1;

  for (i = 0; i < n; i++)
    t->w[i] = (float) (1.0 / n);
}

void
ccv_taps_init (CcvTaps * t, const CcvSettings * s, int sub)
{
  int r;
  double sigma;

  ccv_settings_resolve (s, &r, &sigma);
  memset (t, 0, sizeof (*t));
  t->radius = (r + sub - 1) / sub;

  switch (s->kernel) {
    case CCV_KERNEL_BOX:
      taps_box (t);
      break;
    case CCV_KERNEL_GAUSSIAN:
    default:
      taps_gaussian (t, sigma / sub);
      break;
  }
}

void
ccv_filter_init (CcvFilter * f, const CcvSettings * s)
{
  int sub;

  f->settings = *s;
  for (sub = 1; sub <= CCV_MAX_SUBSAMPLE; sub++) {
    ccv_taps_init (&f->x[sub - 1], s, sub);
    f->y[sub - 1] = f->x[sub - 1];
  }
}
