/* gst-cudaconvolve: the coefficients (cuda/filter/cuconv-coeffs.c), the border
 * index helpers (cuda/api/cuconv-border.h) and the recursive gaussian's
 * sections and tables (cuda/filter/cuconv-recursive-coeffs.c), against the rules
 * written in docs/semantics.md and docs/design.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <complex.h>
#include <math.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "cuconv.h"
#include "cuconv-recursive.h"

static CuconvSettings
settings (CuconvKernel k, unsigned radius, double sigma)
{
  CuconvSettings s = { k, CUCONV_BORDER_CLAMP, radius, sigma };
  return s;
}

static double
taps_sum (const CuconvTaps * t)
{
  double sum = 0.0;
  int i;

  for (i = 0; i <= 2 * t->radius; i++)
    sum += t->w[i];
  return sum;
}

/* Every radius up to the longest truncated gaussian, then a few up to
 * the widest: the loops below stay quick with radii to 1024. */
static int
radius_next (int r)
{
  if (r < CUCONV_TRUNCATED_MAX_RADIUS || r == CUCONV_MAX_RADIUS)
    return r + 1;
  return MIN (2 * r + 37, CUCONV_MAX_RADIUS);
}

GST_START_TEST (test_sum_and_symmetry)
{
  const double sigmas[] = { 0.0, 0.3, 1.0, 2.5, 10.0, 64.0 };
  int k, r, si, sub;

  /* cuconv_taps_init () gives the blurs' taps */
  for (k = CUCONV_KERNEL_GAUSSIAN; k <= CUCONV_KERNEL_BOX; k++)
    for (r = 0; r <= CUCONV_MAX_RADIUS; r = radius_next (r))
      for (si = 0; si < (int) G_N_ELEMENTS (sigmas); si++)
        for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
          CuconvSettings s = settings (k, r, sigmas[si]);
          CuconvTaps t;
          int i;

          if (cuconv_settings_is_identity (&s)
              || cuconv_settings_untruncated (&s))
            continue;
          cuconv_taps_init (&t, &s, sub);
          fail_unless (t.radius >= 1 && t.radius <= CUCONV_MAX_RADIUS);
          fail_unless (fabs (taps_sum (&t) - 1.0) < 1e-5,
              "kernel %d r %d sigma %g sub %d: taps sum to %.8f", k, r,
              sigmas[si], sub, taps_sum (&t));
          for (i = 0; i < t.radius; i++) {
            fail_unless (t.w[i] == t.w[2 * t.radius - i]);
            fail_unless (t.w[i] >= 0.0f);
            /* a gaussian falls off from the centre; a box stays flat */
            fail_unless (t.w[i] <= t.w[i + 1]);
          }
          for (i = 2 * t.radius + 1; i < CUCONV_MAX_TAPS; i++)
            fail_unless (t.w[i] == 0.0f, "taps past the radius are zero");
        }
}

GST_END_TEST;

GST_START_TEST (test_sigma_rules)
{
  CuconvSettings s;
  int i, r;
  double sigma;

  /* sigma 0: OpenCV's 0.3 * (r - 1) + 0.8 */
  for (i = 1; i <= CUCONV_MAX_RADIUS; i++) {
    s = settings (CUCONV_KERNEL_GAUSSIAN, i, 0.0);
    cuconv_settings_resolve (&s, &r, &sigma);
    fail_unless_equals_int (r, i);
    fail_unless (fabs (sigma - (0.3 * (i - 1) + 0.8)) < 1e-12);
  }

  /* radius 0, sigma > 0: ceil (3 sigma), at most 64 */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 1.5);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 5);
  fail_unless (sigma == 1.5);
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 2.0);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 6);
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 0.1);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 1);
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 21.3);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 64);
  fail_if (cuconv_settings_untruncated (&s));
  /* above 64: the untruncated gaussian, radius 0 */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 21.34);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 0);
  fail_unless (sigma == 21.34);
  fail_unless (cuconv_settings_untruncated (&s));
  /* sobel, laplacian and box keep a radius: ceil (3 sigma) up to 768 */
  s = settings (CUCONV_KERNEL_BOX, 0, 256.0);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 768);
  fail_if (cuconv_settings_untruncated (&s));
  s = settings (CUCONV_KERNEL_SOBEL, 0, 30.0);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 90);
  /* an explicit radius is never untruncated */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 1024, 256.0);
  fail_if (cuconv_settings_untruncated (&s));

  /* both given: both kept */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 7, 1.25);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 7);
  fail_unless (sigma == 1.25);

  /* identity only for radius 0 and sigma 0 */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 0.0);
  fail_unless (cuconv_settings_is_identity (&s));
  s = settings (CUCONV_KERNEL_BOX, 0, 0.0);
  fail_unless (cuconv_settings_is_identity (&s));
  s = settings (CUCONV_KERNEL_GAUSSIAN, 1, 0.0);
  fail_if (cuconv_settings_is_identity (&s));
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 0.01);
  fail_if (cuconv_settings_is_identity (&s));
}

GST_END_TEST;

/* The taps against the formula, evaluated here in double. */
static void
check_gaussian (const CuconvTaps * t, int radius, double sigma)
{
  double w[CUCONV_MAX_TAPS], sum = 0.0;
  int i;

  fail_unless_equals_int (t->radius, radius);
  for (i = -radius; i <= radius; i++)
    sum += w[i + radius] = exp (-(double) i * i / (2.0 * sigma * sigma));
  for (i = 0; i <= 2 * radius; i++)
    fail_unless (fabs (t->w[i] - w[i] / sum) < 1e-7,
        "tap %d: %.9f, expected %.9f", i, t->w[i], w[i] / sum);
}

GST_START_TEST (test_gaussian_values)
{
  CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, 2, 0.0);
  CuconvTaps t;

  /* radius 2: sigma 1.1; the centre tap worked out by hand */
  cuconv_taps_init (&t, &s, 1);
  check_gaussian (&t, 2, 1.1);
  fail_unless (fabs (t.w[2] - 0.36947) < 1e-4);

  s = settings (CUCONV_KERNEL_GAUSSIAN, 5, 3.0);
  cuconv_taps_init (&t, &s, 1);
  check_gaussian (&t, 5, 3.0);
}

GST_END_TEST;

GST_START_TEST (test_box_values)
{
  int r;

  for (r = 1; r <= CUCONV_MAX_RADIUS; r++) {
    CuconvSettings s = settings (CUCONV_KERNEL_BOX, r, 3.0);       /* sigma unused */
    CuconvTaps t;
    int i;

    cuconv_taps_init (&t, &s, 1);
    fail_unless_equals_int (t.radius, r);
    for (i = 0; i <= 2 * r; i++)
      fail_unless (t.w[i] == (float) (1.0 / (2 * r + 1)));
  }
}

GST_END_TEST;

/* Chroma subsampled by 2: radius ceil (r / 2) and sigma / 2. */
GST_START_TEST (test_chroma_scaling)
{
  int r;

  for (r = 1; r <= CUCONV_MAX_RADIUS; r++) {
    CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, r, 0.0);
    CuconvFilter f;
    int rr;
    double sigma;

    cuconv_settings_resolve (&s, &rr, &sigma);
    cuconv_filter_init (&f, &s);
    check_gaussian (&f.x[0], r, sigma);
    check_gaussian (&f.y[0], r, sigma);
    check_gaussian (&f.x[1], (r + 1) / 2, sigma / 2);
    check_gaussian (&f.y[1], (r + 1) / 2, sigma / 2);

    s.kernel = CUCONV_KERNEL_BOX;
    cuconv_filter_init (&f, &s);
    fail_unless_equals_int (f.x[1].radius, (r + 1) / 2);
    fail_unless (f.x[1].w[0] == (float) (1.0 / (2 * ((r + 1) / 2) + 1)));
  }

  /* sigma only: the chroma radius follows from the luma one */
  {
    CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 1.5);
    CuconvFilter f;

    cuconv_filter_init (&f, &s);
    check_gaussian (&f.x[0], 5, 1.5);
    check_gaussian (&f.x[1], 3, 0.75);
  }

  /* the plane picks its taps by subsampling factor */
  {
    CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, 8, 0.0);
    CuconvFilter f;
    CuconvPlane p422 = { NULL, NULL, 0, 0, 4, 4, 1, 2, 1 };

    cuconv_filter_init (&f, &s);
    fail_unless (cuconv_filter_taps_x (&f, &p422)->radius == 4);
    fail_unless (cuconv_filter_taps_y (&f, &p422)->radius == 8);
  }
}

GST_END_TEST;

/* Exact taps, written out. */
static void
check_taps (const CuconvTaps * t, int radius, const float *w)
{
  int i;

  fail_unless_equals_int (t->radius, radius);
  for (i = 0; i <= 2 * radius; i++)
    fail_unless (t->w[i] == w[i], "tap %d: %.9g, expected %.9g", i, t->w[i],
        w[i]);
}

static const float sobel_s3[] = { 1.0f, 2.0f, 1.0f };
static const float sobel_d3[] = { -1.0f, 0.0f, 1.0f };
static const float laplacian_l3[] = { 1.0f, -2.0f, 1.0f };
static const float laplacian_g3[] = { 0.0f, 1.0f, 0.0f };
static const float one_tap[] = { 1.0f };

/* Radius 1 is the classic 3x3 operator, on luma and on chroma that
 * subsampling brings down to radius 1; radius 0 and sigma 0 mean 1. */
GST_START_TEST (test_classic_3x3)
{
  static const struct
  {
    unsigned radius;
    int sub;
  } cases[] = { {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 2} };
  int ci, k;

  for (ci = 0; ci < (int) G_N_ELEMENTS (cases); ci++)
    for (k = CUCONV_KERNEL_SOBEL; k <= CUCONV_KERNEL_LAPLACIAN; k++) {
      CuconvSettings s = settings (k, cases[ci].radius, 0.0);
      const int sub = cases[ci].sub;
      CuconvFilter f;

      cuconv_filter_init (&f, &s);
      fail_unless_equals_int (f.n_terms, 2);
      if (k == CUCONV_KERNEL_SOBEL) {
        /* gx = D (x) S (y), gy = S (x) D (y) */
        fail_unless_equals_int (f.combine, CUCONV_COMBINE_MAGNITUDE);
        check_taps (&f.x[sub - 1], 1, sobel_d3);
        check_taps (&f.y[sub - 1], 1, sobel_s3);
        check_taps (&f.x2[sub - 1], 1, sobel_s3);
        check_taps (&f.y2[sub - 1], 1, sobel_d3);
      } else {
        fail_unless_equals_int (f.combine, CUCONV_COMBINE_ABS_SUM);
        check_taps (&f.x[sub - 1], 1, laplacian_l3);
        check_taps (&f.y[sub - 1], 1, laplacian_g3);
        check_taps (&f.x2[sub - 1], 1, laplacian_g3);
        check_taps (&f.y2[sub - 1], 1, laplacian_l3);
      }
    }

  /* a sigma so small that it resolves to radius 1: still the 3x3 taps,
   * sigma plays no part */
  {
    CuconvSettings s = settings (CUCONV_KERNEL_SOBEL, 0, 0.2);
    CuconvFilter f;

    cuconv_filter_init (&f, &s);
    check_taps (&f.x[0], 1, sobel_d3);
    check_taps (&f.y[0], 1, sobel_s3);
    s = settings (CUCONV_KERNEL_LAPLACIAN, 1, 5.0);
    cuconv_filter_init (&f, &s);
    check_taps (&f.x[0], 1, laplacian_l3);
    check_taps (&f.y[0], 1, laplacian_g3);
  }
}

GST_END_TEST;

/* The formula's weights in double: g[i + r] = exp (-i^2 / (2 sigma^2)). */
static void
formula_gaussian (double *g, int r, double sigma)
{
  int i;

  for (i = -r; i <= r; i++)
    g[i + r] = exp (-(double) i * i / (2.0 * sigma * sigma));
}

/* Sobel above radius 1: S sums to 4, D is odd with sum i D[i] = 2, both
 * follow the formula (to float rounding), on luma and chroma. */
static void
check_sobel (const CuconvTaps * s, const CuconvTaps * d, int r, double sigma)
{
  double g[CUCONV_MAX_TAPS], gsum = 0.0, msum = 0.0;
  double sum_s = 0.0, sum_d = 0.0, abs_d = 0.0, moment_d = 0.0;
  int i;

  fail_unless (r > 1);
  fail_unless_equals_int (s->radius, r);
  fail_unless_equals_int (d->radius, r);
  formula_gaussian (g, r, sigma);
  for (i = -r; i <= r; i++) {
    gsum += g[i + r];
    msum += (double) i * i * g[i + r];
  }
  for (i = -r; i <= r; i++) {
    const double ws = 4.0 * g[i + r] / gsum, wd = 2.0 * i * g[i + r] / msum;

    fail_unless (fabs (s->w[i + r] - ws) <= 1e-7 * fabs (ws) + 1e-30,
        "S[%d] r %d sigma %g: %.9g, expected %.9g", i, r, sigma,
        s->w[i + r], ws);
    fail_unless (fabs (d->w[i + r] - wd) <= 1e-7 * fabs (wd) + 1e-30,
        "D[%d] r %d sigma %g: %.9g, expected %.9g", i, r, sigma,
        d->w[i + r], wd);
    fail_unless (s->w[i + r] == s->w[r - i]);
    fail_unless (d->w[i + r] == -d->w[r - i]);
    fail_unless (i <= 0 || d->w[i + r] >= 0.0f);
    sum_s += s->w[i + r];
    sum_d += d->w[i + r];
    abs_d += fabs (d->w[i + r]);
    moment_d += (double) i * d->w[i + r];
  }
  fail_unless (fabs (sum_s - 4.0) < 1e-5, "sum S = %.9f", sum_s);
  fail_unless (fabs (sum_d) < 1e-6 * abs_d, "sum D = %g", sum_d);
  fail_unless (fabs (moment_d - 2.0) < 1e-5, "sum i D[i] = %.9f", moment_d);
}

/* The Laplacian of Gaussian above radius 1: G sums to 1, L is even with
 * sum L = 0 and sum i^2 L[i] = 2, both from the formula. */
static void
check_laplacian (const CuconvTaps * gt, const CuconvTaps * lt, int r, double sigma)
{
  double g[CUCONV_MAX_TAPS], l[CUCONV_MAX_TAPS], gsum = 0.0, mean = 0.0;
  double moment = 0.0, sum_g = 0.0, sum_l = 0.0, abs_l = 0.0, moment_l = 0.0;
  int i;

  fail_unless (r > 1);
  fail_unless_equals_int (gt->radius, r);
  fail_unless_equals_int (lt->radius, r);
  formula_gaussian (g, r, sigma);
  for (i = -r; i <= r; i++) {
    gsum += g[i + r];
    l[i + r] = ((double) i * i / (sigma * sigma) - 1.0) * g[i + r];
    mean += l[i + r] / (2 * r + 1);
  }
  for (i = -r; i <= r; i++)
    moment += (double) i * i * (l[i + r] - mean);
  for (i = -r; i <= r; i++) {
    const double wg = g[i + r] / gsum, wl = 2.0 * (l[i + r] - mean) / moment;

    fail_unless (fabs (gt->w[i + r] - wg) <= 1e-7 * wg + 1e-30,
        "G[%d] r %d sigma %g: %.9g, expected %.9g", i, r, sigma,
        gt->w[i + r], wg);
    /* tails near 0 come from a cancellation with the mean: their error is
     * relative to the centre tap */
    fail_unless (fabs (lt->w[i + r] - wl) <= 1e-7 * fabs (wl) +
        1e-12 * fabs (lt->w[r]),
        "L[%d] r %d sigma %g: %.9g, expected %.9g", i, r, sigma,
        lt->w[i + r], wl);
    fail_unless (gt->w[i + r] == gt->w[r - i]);
    fail_unless (lt->w[i + r] == lt->w[r - i]);
    sum_g += gt->w[i + r];
    sum_l += lt->w[i + r];
    abs_l += fabs (lt->w[i + r]);
    moment_l += (double) i * i * lt->w[i + r];
  }
  fail_unless (lt->w[r] < 0.0f, "the centre of L is negative");
  fail_unless (fabs (sum_g - 1.0) < 1e-5, "sum G = %.9f", sum_g);
  fail_unless (fabs (sum_l) < 1e-6 * abs_l, "sum L = %g", sum_l);
  fail_unless (fabs (moment_l - 2.0) < 1e-5, "sum i^2 L = %.9f", moment_l);
}

GST_START_TEST (test_derivative_radii)
{
  const double sigmas[] = { 0.0, 0.3, 1.0, 2.5, 10.0, 64.0 };
  int r, si, sub;

  for (r = 2; r <= CUCONV_MAX_RADIUS; r = radius_next (r))
    for (si = 0; si < (int) G_N_ELEMENTS (sigmas); si++)
      for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
        const double sigma = sigmas[si] > 0.0 ? sigmas[si] :
            0.3 * (r - 1) + 0.8;
        const int rs = (r + sub - 1) / sub;
        CuconvSettings s = settings (CUCONV_KERNEL_SOBEL, r, sigmas[si]);
        CuconvFilter f;

        if (rs == 1)
          continue;             /* test_classic_3x3 */
        cuconv_filter_init (&f, &s);
        check_sobel (&f.y[sub - 1], &f.x[sub - 1], rs, sigma / sub);
        check_sobel (&f.x2[sub - 1], &f.y2[sub - 1], rs, sigma / sub);

        s.kernel = CUCONV_KERNEL_LAPLACIAN;
        cuconv_filter_init (&f, &s);
        check_laplacian (&f.y[sub - 1], &f.x[sub - 1], rs, sigma / sub);
        check_laplacian (&f.x2[sub - 1], &f.y2[sub - 1], rs, sigma / sub);
      }
}

GST_END_TEST;

/* What the normalisations are for: a ramp of slope 1 gives gx = 8 and a
 * parabola x^2 / 2 gives 1 at every radius, like the 3x3 operators. */
GST_START_TEST (test_derivative_responses)
{
  int r;

  for (r = 1; r <= 16; r++) {
    CuconvSettings s = settings (CUCONV_KERNEL_SOBEL, r, 0.0);
    CuconvFilter f;
    double gx = 0.0, smooth = 0.0, lap = 0.0;
    int i;

    cuconv_filter_init (&f, &s);
    for (i = -r; i <= r; i++) {
      gx += f.x[0].w[i + r] * (100.0 + i);
      smooth += f.y[0].w[i + r];
    }
    fail_unless (fabs (gx * smooth - 8.0) < 1e-4, "r %d: gx %g", r,
        gx * smooth);

    s.kernel = CUCONV_KERNEL_LAPLACIAN;
    cuconv_filter_init (&f, &s);
    for (i = -r; i <= r; i++)
      lap += f.x[0].w[i + r] * (7.0 + i) * (7.0 + i) / 2.0;
    fail_unless (fabs (lap - 1.0) < 1e-4, "r %d: laplacian %g", r, lap);
  }
}

GST_END_TEST;

GST_START_TEST (test_sigma_y_rules)
{
  CuconvSettings s;
  int r;
  double sigma;

  /* unset: as horizontally, sobel's radius-1 default included */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 4, 0.0);
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 4 && fabs (sigma - 1.7) < 1e-12);
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 1.5);
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 5 && sigma == 1.5);
  s = settings (CUCONV_KERNEL_SOBEL, 0, 0.0);
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 1 && fabs (sigma - 0.8) < 1e-12);

  /* set: the radius from it unless the radius is given */
  s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 1.0);
  s.sigma_y = 2.0;
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 6 && sigma == 2.0);
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless (r == 3 && sigma == 1.0);
  s = settings (CUCONV_KERNEL_GAUSSIAN, 5, 1.0);
  s.sigma_y = 2.0;
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 5 && sigma == 2.0);
  s = settings (CUCONV_KERNEL_BOX, 0, 0.0);
  s.sigma_y = 30.0;
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless_equals_int (r, 90);
  /* a gaussian: the untruncated one vertically, nothing horizontally */
  s.kernel = CUCONV_KERNEL_GAUSSIAN;
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 0 && sigma == 30.0);
  {
    CuconvFilter *f = g_new (CuconvFilter, 1);

    cuconv_filter_init (f, &s);
    fail_unless (f->y[0].untruncated && f->y[0].sigma == 30.0);
    fail_unless (f->y[1].untruncated && f->y[1].sigma == 15.0);
    fail_unless (!f->x[0].untruncated && f->x[0].radius == 0);
    g_free (f);
  }
  /* sobel's default radius 1 is horizontal only here */
  s = settings (CUCONV_KERNEL_SOBEL, 0, 0.0);
  s.sigma_y = 0.9;
  cuconv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 1);
  cuconv_settings_resolve_y (&s, &r, &sigma);
  fail_unless (r == 3 && sigma == 0.9);

  /* the taps: each direction its own radius and sigma, halved on chroma;
   * a direction of radius 0 is the one tap [1] */
  {
    CuconvFilter f;

    s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 1.0);
    s.sigma_y = 2.5;
    cuconv_filter_init (&f, &s);
    check_gaussian (&f.x[0], 3, 1.0);
    check_gaussian (&f.y[0], 8, 2.5);
    check_gaussian (&f.x[1], 2, 0.5);
    check_gaussian (&f.y[1], 4, 1.25);

    s = settings (CUCONV_KERNEL_GAUSSIAN, 0, 0.0);
    s.sigma_y = 1.5;
    fail_if (cuconv_settings_is_identity (&s));
    cuconv_filter_init (&f, &s);
    check_taps (&f.x[0], 0, one_tap);
    check_taps (&f.x[1], 0, one_tap);
    check_gaussian (&f.y[0], 5, 1.5);
    check_gaussian (&f.y[1], 3, 0.75);

    s.kernel = CUCONV_KERNEL_BOX;
    cuconv_filter_init (&f, &s);
    check_taps (&f.x[0], 0, one_tap);
    fail_unless_equals_int (f.y[0].radius, 5);
    fail_unless (f.y[0].w[0] == (float) (1.0 / 11));

    s = settings (CUCONV_KERNEL_SOBEL, 0, 0.0);
    s.sigma_y = 1.2;
    cuconv_filter_init (&f, &s);
    check_taps (&f.x[0], 1, sobel_d3);
    check_taps (&f.x2[0], 1, sobel_s3);
    check_sobel (&f.y[0], &f.y2[0], 4, 1.2);
  }
}

GST_END_TEST;

GST_START_TEST (test_identity_rules)
{
  CuconvSettings s;
  int k;

  for (k = CUCONV_KERNEL_GAUSSIAN; k <= CUCONV_KERNEL_SHARPEN; k++) {
    s = settings (k, 0, 0.0);
    s.amount = 1.0;
    fail_unless (cuconv_settings_is_identity (&s), "kernel %d", k);
    s.sigma_y = 0.5;
    fail_if (cuconv_settings_is_identity (&s), "kernel %d", k);
    s = settings (k, 3, 0.0);
    s.amount = 1.0;
    fail_if (cuconv_settings_is_identity (&s), "kernel %d", k);
  }
  /* an unsharp mask of amount 0 adds nothing */
  s = settings (CUCONV_KERNEL_SHARPEN, 5, 2.0);
  fail_unless (cuconv_settings_is_identity (&s));
  s.amount = 0.5;
  fail_if (cuconv_settings_is_identity (&s));

  /* edge maps are never the identity, not even with everything 0 */
  for (k = CUCONV_KERNEL_SOBEL; k <= CUCONV_KERNEL_LAPLACIAN; k++) {
    s = settings (k, 0, 0.0);
    fail_if (cuconv_settings_is_identity (&s), "kernel %d", k);
  }

  /* custom: the identity when nothing is set; radius and sigma play no
   * part */
  s = settings (CUCONV_KERNEL_CUSTOM, 5, 2.0);
  fail_unless (cuconv_settings_is_identity (&s));
  s.custom_y_len = 1;
  s.custom_y[0] = 1.0;
  fail_if (cuconv_settings_is_identity (&s));
  s = settings (CUCONV_KERNEL_CUSTOM, 0, 0.0);
  s.matrix_side = 1;
  s.matrix[0] = 1.0;
  fail_if (cuconv_settings_is_identity (&s));
}

GST_END_TEST;

GST_START_TEST (test_sharpen_taps)
{
  CuconvSettings s = settings (CUCONV_KERNEL_SHARPEN, 4, 0.0);
  CuconvFilter f;

  s.amount = 1.3;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.n_terms, 1);
  fail_unless_equals_int (f.combine, CUCONV_COMBINE_SHARPEN);
  fail_unless (f.amount == (float) 1.3);
  check_gaussian (&f.x[0], 4, 1.7);
  check_gaussian (&f.y[0], 4, 1.7);
  check_gaussian (&f.x[1], 2, 0.85);
  check_gaussian (&f.y[1], 2, 0.85);

  s.kernel = CUCONV_KERNEL_GAUSSIAN;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.combine, CUCONV_COMBINE_NONE);
  s.kernel = CUCONV_KERNEL_BOX;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.combine, CUCONV_COMBINE_NONE);
}

GST_END_TEST;

GST_START_TEST (test_custom_separable)
{
  static const float quarter[] = { 0.25f, 0.5f, 0.25f };
  static const float raw[] = { 1.0f, 2.0f, 1.0f };
  static const float odd[] = { -1.0f, 0.0f, 1.0f };
  CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, 7, 3.0);
  CuconvFilter f;
  int sub;

  s.custom_x_len = 3;
  s.custom_x[0] = 1.0;
  s.custom_x[1] = 2.0;
  s.custom_x[2] = 1.0;
  s.normalize = 1;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.n_terms, 1);
  fail_unless_equals_int (f.combine, CUCONV_COMBINE_NONE);
  /* the same for every plane; unset y is [1]; radius and sigma unused */
  for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
    check_taps (&f.x[sub - 1], 1, quarter);
    check_taps (&f.y[sub - 1], 0, one_tap);
  }

  s.normalize = 0;
  cuconv_filter_init (&f, &s);
  check_taps (&f.x[0], 1, raw);
  check_taps (&f.x[1], 1, raw);

  /* y only, normalised by its own sum; a zero sum is left as it is */
  s.custom_y_len = 3;
  memcpy (s.custom_y, s.custom_x, sizeof (s.custom_x));
  s.custom_x_len = 3;
  s.custom_x[0] = -1.0;
  s.custom_x[1] = 0.0;
  s.custom_x[2] = 1.0;
  s.normalize = 1;
  cuconv_filter_init (&f, &s);
  check_taps (&f.x[1], 1, odd);
  check_taps (&f.y[1], 1, quarter);
  s.custom_x_len = 0;
  cuconv_filter_init (&f, &s);
  check_taps (&f.x[0], 0, one_tap);
  check_taps (&f.y[0], 1, quarter);

  /* normalised in double, rounded once: 1/3 each, not 1 * (float) 1/3 */
  s.custom_x_len = 3;
  s.custom_x[0] = s.custom_x[1] = s.custom_x[2] = 0.1;
  cuconv_filter_init (&f, &s);
  fail_unless (f.x[0].w[0] == (float) (0.1 / (0.1 + 0.1 + 0.1)));

  /* the longest: 129 taps */
  s.custom_x_len = CUCONV_MAX_CUSTOM_TAPS;
  for (sub = 0; sub < CUCONV_MAX_CUSTOM_TAPS; sub++)
    s.custom_x[sub] = sub + 1;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.x[0].radius, CUCONV_MAX_CUSTOM_RADIUS);
  fail_unless (f.x[0].w[CUCONV_MAX_CUSTOM_TAPS - 1] ==
      (float) (129.0 / (129.0 * 130.0 / 2.0)));

  /* nothing set: the one tap [1] both ways, a passthrough */
  s = settings (CUCONV_KERNEL_CUSTOM, 0, 0.0);
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.n_terms, 1);
  check_taps (&f.x[0], 0, one_tap);
  check_taps (&f.y[0], 0, one_tap);
}

GST_END_TEST;

GST_START_TEST (test_custom_matrix)
{
  CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, 0, 0.0);
  CuconvFilter f;
  int i;

  /* row-major: matrix[row * side + column] weighs in (x + column - r,
   * y + row - r); an asymmetric matrix shows the order */
  s.matrix_side = 3;
  for (i = 0; i < 9; i++)
    s.matrix[i] = i + 1;        /* sum 45 */
  /* custom_x is ignored when the matrix is set */
  s.custom_x_len = 3;
  s.custom_x[1] = 1.0;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.n_terms, 0);
  fail_unless_equals_int (f.combine, CUCONV_COMBINE_NONE);
  fail_unless_equals_int (f.m.radius, 1);
  for (i = 0; i < 9; i++)
    fail_unless (f.m.w[i] == (float) (i + 1));

  s.normalize = 1;
  cuconv_filter_init (&f, &s);
  for (i = 0; i < 9; i++)
    fail_unless (f.m.w[i] == (float) ((i + 1) / 45.0));

  /* a zero sum is left as it is */
  for (i = 0; i < 9; i++)
    s.matrix[i] = i - 4;
  cuconv_filter_init (&f, &s);
  for (i = 0; i < 9; i++)
    fail_unless (f.m.w[i] == (float) (i - 4));

  /* the largest, 31 x 31 */
  s.matrix_side = CUCONV_MAX_MATRIX_SIDE;
  for (i = 0; i < CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE; i++)
    s.matrix[i] = 2.0;
  cuconv_filter_init (&f, &s);
  fail_unless_equals_int (f.m.radius, CUCONV_MAX_MATRIX_RADIUS);
  for (i = 0; i < CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE; i++)
    fail_unless (f.m.w[i] == (float) (1.0 / 961));
}

GST_END_TEST;

/* The border modes against their definitions written out by hand. */
GST_START_TEST (test_border_index)
{
  /* n = 4, samples a b c d at 0..3; i from -6 to 9 */
  static const int clamp[] =
      { 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3, 3 };
  static const int mirror[] =
      { 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3 };
  static const int wrap[] = { 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1 };
  static const int zero[] =
      { -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, -1, -1 };
  int i;

  for (i = -6; i <= 9; i++) {
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_CLAMP, i, 4),
        clamp[i + 6]);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_MIRROR, i, 4),
        mirror[i + 6]);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_WRAP, i, 4),
        wrap[i + 6]);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_ZERO, i, 4),
        zero[i + 6]);
  }

  /* a plane of one sample: every mode but zero reads it */
  for (i = -200; i <= 200; i++) {
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_CLAMP, i, 1), 0);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_MIRROR, i, 1), 0);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_WRAP, i, 1), 0);
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_ZERO, i, 1),
        i == 0 ? 0 : -1);
  }

  /* n = 2: mirror alternates a b a b, never repeating the edge */
  for (i = -130; i <= 130; i++)
    fail_unless_equals_int (cuconv_border_index (CUCONV_BORDER_MIRROR, i, 2),
        (i % 2 + 2) % 2);
}

GST_END_TEST;

GST_START_TEST (test_round_sat)
{
  fail_unless_equals_int (cuconv_round_sat_u8 (0.49f), 0);
  fail_unless_equals_int (cuconv_round_sat_u8 (0.5f), 1);
  fail_unless_equals_int (cuconv_round_sat_u8 (1.5f), 2);
  fail_unless_equals_int (cuconv_round_sat_u8 (2.5f), 3);
  fail_unless_equals_int (cuconv_round_sat_u8 (254.5f), 255);
  fail_unless_equals_int (cuconv_round_sat_u8 (300.0f), 255);
  fail_unless_equals_int (cuconv_round_sat_u8 (-0.4f), 0);
  fail_unless_equals_int (cuconv_round_sat_u8 (-3.0f), 0);
}

GST_END_TEST;

/* The recursive gaussian ------------------------------------------------ */

/* The sigmas of cuconv-recursive-coeffs.c's error table. */
static const double rec_sigmas[] = {
  0.8, 1.0, 2.0, 4.0, 8.0, 10.67, 16.0, 21.33, 32.0, 64.0, 128.0, 256.0
};

/* The discrete kernel of d's sections: h[0] = c (the causal and the
 * anticausal sums both count the centre, less c once), h[k] =
 * sum_s Re (a_s p_s^|k|); its sum over |k| <= reach and its L1 distance
 * to the sampled gaussian of sigma, both normalised. */
static void
rec_kernel_stats (const CuconvRecDir * d, double sigma, double *sum,
    double *l1)
{
  const int reach = (int) ceil (20.0 * sigma) + 50;
  double g_norm = 0.0, h, g;
  int k, s;

  for (k = -reach; k <= reach; k++)
    g_norm += exp (-(double) k * k / (2.0 * sigma * sigma));
  *sum = *l1 = 0.0;
  for (k = -reach; k <= reach; k++) {
    if (k == 0) {
      h = d->c;
    } else {
      h = 0.0;
      for (s = 0; s < d->n_sections; s++) {
        /* p^|k| in polar form, from the float pole the kernels use */
        const double pr = d->p[s].re, pi = d->p[s].im;
        const double mag = pow (hypot (pr, pi), abs (k));
        const double arg = atan2 (pi, pr) * abs (k);

        h += d->a[s].re * mag * cos (arg) - d->a[s].im * mag * sin (arg);
      }
    }
    g = exp (-(double) k * k / (2.0 * sigma * sigma)) / g_norm;
    *sum += h;
    *l1 += fabs (h - g);
  }
}

/* Each section count's kernel, as the GPU applies it (float poles and
 * weights), sums to 1 and stays within the table of its L1 distance to
 * the sampled gaussian, from sigma 0.8 to 256, and within
 * cuconv_recursive_error (); and the count cuconv_recursive_sections ()
 * picks keeps a filter within a quarter of an LSB with the worst distance
 * of the whole range, small sigmas included (the other direction of a
 * filter may have one). */
GST_START_TEST (test_recursive_kernel)
{
  /* cuconv-recursive-coeffs.c's table, rounded up in the last digit */
  static const double table[3][G_N_ELEMENTS (rec_sigmas)] = {
    {4.86e-4, 8.35e-4, 5.80e-4, 5.59e-4, 5.50e-4, 5.45e-4, 5.34e-4,
        5.30e-4, 5.27e-4, 5.26e-4, 5.26e-4, 5.26e-4},
    {1.04e-5, 8.54e-6, 8.47e-6, 7.68e-6, 7.29e-6, 7.36e-6, 7.35e-6,
        7.33e-6, 7.24e-6, 7.22e-6, 7.22e-6, 7.21e-6},
    {9.43e-8, 1.81e-7, 1.95e-7, 2.31e-7, 1.80e-7, 1.13e-7, 1.13e-7,
        1.05e-7, 1.21e-7, 1.19e-7, 1.26e-7, 1.49e-7},
  };
  static const struct
  {
    int depth;
    double gain;
    int dirs;
  } uses[] = {
    {8, 1.0, 1}, {8, 1.0, 2}, {10, 1.0, 2}, {12, 1.0, 2}, {16, 1.0, 1},
    {16, 1.0, 2}, {8, 3.0, 2}, {8, 10.0, 2}, {10, 10.0, 2}, {12, 10.0, 2},
  };
  double worst[3] = { 0.0, 0.0, 0.0 };
  int ns, i, u;

  for (ns = 2; ns <= 4; ns++) {
    for (i = 0; i < (int) G_N_ELEMENTS (rec_sigmas); i++) {
      CuconvRecDir d;
      double sum, l1;

      cuconv_recursive_dir_init (&d, rec_sigmas[i], ns, 1000, 32, 8);
      fail_unless_equals_int (d.n_sections, ns);
      rec_kernel_stats (&d, rec_sigmas[i], &sum, &l1);
      fail_unless (fabs (sum - 1.0) < 1e-6, "%d sections, sigma %g: sum %.9f",
          ns, rec_sigmas[i], sum);
      fail_unless (l1 <= table[ns - 2][i], "%d sections, sigma %g: L1 %.3e "
          "above the table's %.3e", ns, rec_sigmas[i], l1, table[ns - 2][i]);
      fail_unless (l1 <= cuconv_recursive_error (ns), "%d sections, sigma "
          "%g: L1 %.3e above cuconv_recursive_error's %.3e", ns,
          rec_sigmas[i], l1, cuconv_recursive_error (ns));
      worst[ns - 2] = MAX (worst[ns - 2], l1);
    }
  }
  fail_unless_equals_int (cuconv_recursive_sections (8, 1.0, 2), 2);
  fail_unless_equals_int (cuconv_recursive_sections (10, 1.0, 2), 3);
  fail_unless_equals_int (cuconv_recursive_sections (16, 1.0, 2), 4);
  for (u = 0; u < (int) G_N_ELEMENTS (uses); u++) {
    const int n = cuconv_recursive_sections (uses[u].depth, uses[u].gain,
        uses[u].dirs);
    const double range = ldexp (1.0, uses[u].depth) - 1.0;
    const double moved = uses[u].gain * range * uses[u].dirs *
        worst[n - 2] / 2.0;

    fail_unless (n >= 2 && n <= 4);
    fail_unless (moved <= 0.25, "depth %d, gain %g, %d directions: %d "
        "sections move a sample by up to %.3f LSB", uses[u].depth,
        uses[u].gain, uses[u].dirs, n, moved);
  }
}

GST_END_TEST;

/* |z - w| relative to |w|, for float tables against double values. */
static double
cplx_rel (CuconvCplx z, double complex w)
{
  return cabs ((z.re + I * z.im) - w) / fmax (cabs (w), 1e-30);
}

/* The tables the kernels read (segments, groups, powers, border
 * constants) agree with their definitions in cuconv-recursive.h, for
 * lines of 1 sample up and segment and group sizes of the kernels. */
GST_START_TEST (test_recursive_tables)
{
  static const int lengths[] = { 1, 2, 31, 32, 33, 255, 256, 257, 1080,
    2160, 3840, 17000
  };
  int i, s, k;

  for (i = 0; i < (int) G_N_ELEMENTS (lengths); i++) {
    const int n = lengths[i];
    CuconvRecDir d;

    cuconv_recursive_dir_init (&d, 40.0, 4, n, 32, 8);
    fail_unless_equals_int (d.n, n);
    fail_unless_equals_int (d.n_segs, (n + 31) / 32);
    fail_unless_equals_int (d.n_groups, (d.n_segs + 7) / 8);
    fail_unless_equals_int (d.tail, n - (d.n_segs - 1) * 32);
    fail_unless (d.tail >= 1 && d.tail <= 32);
    for (s = 0; s < d.n_sections; s++) {
      const double complex p = d.p[s].re + I * d.p[s].im;
      const int last = (d.n_groups - 1) * 8 * 32;

      fail_unless (cabs (p) < 1.0);
      for (k = 0; k <= CUCONV_REC_MAX_SEG; k++)
        fail_unless (cplx_rel (d.pk[s][k], cpow (p, k)) < 1e-6);
      for (k = 0; k < CUCONV_REC_PSEG; k++)
        fail_unless (cplx_rel (d.pseg[s][k], cpow (p, 32.0 * k)) < 1e-5);
      fail_unless (cplx_rel (d.pgroup[s], cpow (p, 256.0)) < 1e-5);
      fail_unless (cplx_rel (d.pborder[s], cpow (p, n - last)) < 1e-5,
          "n %d: pborder", n);
      fail_unless (cplx_rel (d.pinv[s], 1.0 / p) < 1e-6);
      fail_unless (cplx_rel (d.clamp[s], 1.0 / (1.0 - p)) < 1e-6);
      fail_unless (cplx_rel (d.wrap[s], 1.0 / (1.0 - cpow (p, n))) < 1e-5,
          "n %d: wrap", n);
      fail_unless (cplx_rel (d.mirror_p[s], cpow (p, n - 1)) < 1e-5);
      if (n >= 2)
        fail_unless (cplx_rel (d.mirror_d[s],
                1.0 / (1.0 - cpow (p, 2.0 * n - 2.0))) < 1e-5, "n %d: mirror",
            n);
    }
  }
}

GST_END_TEST;

static Suite *
coeffs_suite (void)
{
  Suite *s = suite_create ("coeffs");
  TCase *tc = tcase_create ("general");

  /* check's default of 4 s a test is too little for the exhaustive ones
   * on two busy cores */
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sum_and_symmetry);
  tcase_add_test (tc, test_sigma_rules);
  tcase_add_test (tc, test_gaussian_values);
  tcase_add_test (tc, test_box_values);
  tcase_add_test (tc, test_chroma_scaling);
  tcase_add_test (tc, test_classic_3x3);
  tcase_add_test (tc, test_derivative_radii);
  tcase_add_test (tc, test_derivative_responses);
  tcase_add_test (tc, test_sigma_y_rules);
  tcase_add_test (tc, test_identity_rules);
  tcase_add_test (tc, test_sharpen_taps);
  tcase_add_test (tc, test_custom_separable);
  tcase_add_test (tc, test_custom_matrix);
  tcase_add_test (tc, test_border_index);
  tcase_add_test (tc, test_round_sat);
  tcase_add_test (tc, test_recursive_kernel);
  tcase_add_test (tc, test_recursive_tables);
  return s;
}

GST_CHECK_MAIN (coeffs);
