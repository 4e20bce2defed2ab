/* gst-cudaconvolve: the coefficients (cuda/ccv-coeffs.c) and the border
 * index helpers (cuda/ccv-border.h), against the rules written in
 * docs/semantics.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>

#include <gst/check/gstcheck.h>

#include "ccv.h"

static CcvSettings
settings (CcvKernel k, unsigned radius, double sigma)
{
  CcvSettings s = { k, CCV_BORDER_CLAMP, radius, sigma };
  return s;
}

static double
taps_sum (const CcvTaps * t)
{
  double sum = 0.0;
  int i;

  for (i = 0; i <= 2 * t->radius; i++)
    sum += t->w[i];
  return sum;
}

GST_START_TEST (test_sum_and_symmetry)
{
  const double sigmas[] = { 0.0, 0.3, 1.0, 2.5, 10.0, 64.0 };
  int k, r, si, sub;

  for (k = 0; k < CCV_KERNEL_N; k++)
    for (r = 0; r <= CCV_MAX_RADIUS; r++)
      for (si = 0; si < (int) G_N_ELEMENTS (sigmas); si++)
        for (sub = 1; sub <= CCV_MAX_SUBSAMPLE; sub++) {
          CcvSettings s = settings (k, r, sigmas[si]);
          CcvTaps t;
          int i;

          if (ccv_settings_is_identity (&s))
            continue;
          ccv_taps_init (&t, &s, sub);
          fail_unless (t.radius >= 1 && t.radius <= CCV_MAX_RADIUS);
          fail_unless (fabs (taps_sum (&t) - 1.0) < 1e-5,
              "kernel %d r %d sigma %g sub %d: taps sum to %.8f", k, r,
              sigmas[si], sub, taps_sum (&t));
          for (i = 0; i < t.radius; i++) {
            fail_unless (t.w[i] == t.w[2 * t.radius - i]);
            fail_unless (t.w[i] >= 0.0f);
            /* a gaussian falls off from the centre; a box stays flat */
            fail_unless (t.w[i] <= t.w[i + 1]);
          }
          for (i = 2 * t.radius + 1; i < CCV_MAX_TAPS; i++)
            fail_unless (t.w[i] == 0.0f, "taps past the radius are zero");
        }
}

GST_END_TEST;

GST_START_TEST (test_sigma_rules)
{
  CcvSettings s;
  int i, r;
  double sigma;

  /* sigma 0: OpenCV's 0.3 * (r - 1) + 0.8 */
  for (i = 1; i <= CCV_MAX_RADIUS; i++) {
    s = settings (CCV_KERNEL_GAUSSIAN, i, 0.0);
    ccv_settings_resolve (&s, &r, &sigma);
    fail_unless_equals_int (r, i);
    fail_unless (fabs (sigma - (0.3 * (i - 1) + 0.8)) < 1e-12);
  }

  /* radius 0, sigma > 0: ceil (3 sigma), at most 64 */
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 1.5);
  ccv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 5);
  fail_unless (sigma == 1.5);
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 2.0);
  ccv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 6);
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 0.1);
  ccv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 1);
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 30.0);
  ccv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 64);

  /* both given: both kept */
  s = settings (CCV_KERNEL_GAUSSIAN, 7, 1.25);
  ccv_settings_resolve (&s, &r, &sigma);
  fail_unless_equals_int (r, 7);
  fail_unless (sigma == 1.25);

  /* identity only for radius 0 and sigma 0 */
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 0.0);
  fail_unless (ccv_settings_is_identity (&s));
  s = settings (CCV_KERNEL_BOX, 0, 0.0);
  fail_unless (ccv_settings_is_identity (&s));
  s = settings (CCV_KERNEL_GAUSSIAN, 1, 0.0);
  fail_if (ccv_settings_is_identity (&s));
  s = settings (CCV_KERNEL_GAUSSIAN, 0, 0.01);
  fail_if (ccv_settings_is_identity (&s));
}

GST_END_TEST;

/* The taps against the formula, evaluated here in double. */
static void
check_gaussian (const CcvTaps * t, int radius, double sigma)
{
  double w[CCV_MAX_TAPS], sum = 0.0;
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
  CcvSettings s = settings (CCV_KERNEL_GAUSSIAN, 2, 0.0);
  CcvTaps t;

  /* radius 2: sigma 1.1; the centre tap worked out by hand */
  ccv_taps_init (&t, &s, 1);
  check_gaussian (&t, 2, 1.1);
  fail_unless (fabs (t.w[2] - 0.36947) < 1e-4);

  s = settings (CCV_KERNEL_GAUSSIAN, 5, 3.0);
  ccv_taps_init (&t, &s, 1);
  check_gaussian (&t, 5, 3.0);
}

GST_END_TEST;

GST_START_TEST (test_box_values)
{
  int r;

  for (r = 1; r <= CCV_MAX_RADIUS; r++) {
    CcvSettings s = settings (CCV_KERNEL_BOX, r, 3.0);       /* sigma unused */
    CcvTaps t;
    int i;

    ccv_taps_init (&t, &s, 1);
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

  for (r = 1; r <= CCV_MAX_RADIUS; r++) {
    CcvSettings s = settings (CCV_KERNEL_GAUSSIAN, r, 0.0);
    CcvFilter f;
    int rr;
    double sigma;

    ccv_settings_resolve (&s, &rr, &sigma);
    ccv_filter_init (&f, &s);
    check_gaussian (&f.x[0], r, sigma);
    check_gaussian (&f.y[0], r, sigma);
    check_gaussian (&f.x[1], (r + 1) / 2, sigma / 2);
    check_gaussian (&f.y[1], (r + 1) / 2, sigma / 2);

    s.kernel = CCV_KERNEL_BOX;
    ccv_filter_init (&f, &s);
    fail_unless_equals_int (f.x[1].radius, (r + 1) / 2);
    fail_unless (f.x[1].w[0] == (float) (1.0 / (2 * ((r + 1) / 2) + 1)));
  }

  /* sigma only: the chroma radius follows from the luma one */
  {
    CcvSettings s = settings (CCV_KERNEL_GAUSSIAN, 0, 1.5);
    CcvFilter f;

    ccv_filter_init (&f, &s);
    check_gaussian (&f.x[0], 5, 1.5);
    check_gaussian (&f.x[1], 3, 0.75);
  }

  /* the plane picks its taps by subsampling factor */
  {
    CcvSettings s = settings (CCV_KERNEL_GAUSSIAN, 8, 0.0);
    CcvFilter f;
    CcvPlane p422 = { NULL, NULL, 0, 0, 4, 4, 1, 2, 1 };

    ccv_filter_init (&f, &s);
    fail_unless (ccv_filter_taps_x (&f, &p422)->radius == 4);
    fail_unless (ccv_filter_taps_y (&f, &p422)->radius == 8);
  }
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
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_CLAMP, i, 4),
        clamp[i + 6]);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_MIRROR, i, 4),
        mirror[i + 6]);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_WRAP, i, 4),
        wrap[i + 6]);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_ZERO, i, 4),
        zero[i + 6]);
  }

  /* a plane of one sample: every mode but zero reads it */
  for (i = -200; i <= 200; i++) {
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_CLAMP, i, 1), 0);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_MIRROR, i, 1), 0);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_WRAP, i, 1), 0);
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_ZERO, i, 1),
        i == 0 ? 0 : -1);
  }

  /* n = 2: mirror alternates a b a b, never repeating the edge */
  for (i = -130; i <= 130; i++)
    fail_unless_equals_int (ccv_border_index (CCV_BORDER_MIRROR, i, 2),
        (i % 2 + 2) % 2);
}

GST_END_TEST;

GST_START_TEST (test_round_sat)
{
  fail_unless_equals_int (ccv_round_sat_u8 (0.49f), 0);
  fail_unless_equals_int (ccv_round_sat_u8 (0.5f), 1);
  fail_unless_equals_int (ccv_round_sat_u8 (1.5f), 2);
  fail_unless_equals_int (ccv_round_sat_u8 (2.5f), 3);
  fail_unless_equals_int (ccv_round_sat_u8 (254.5f), 255);
  fail_unless_equals_int (ccv_round_sat_u8 (300.0f), 255);
  fail_unless_equals_int (ccv_round_sat_u8 (-0.4f), 0);
  fail_unless_equals_int (ccv_round_sat_u8 (-3.0f), 0);
}

GST_END_TEST;

static Suite *
coeffs_suite (void)
{
  Suite *s = suite_create ("coeffs");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sum_and_symmetry);
  tcase_add_test (tc, test_sigma_rules);
  tcase_add_test (tc, test_gaussian_values);
  tcase_add_test (tc, test_box_values);
  tcase_add_test (tc, test_chroma_scaling);
  tcase_add_test (tc, test_border_index);
  tcase_add_test (tc, test_round_sat);
  return s;
}

GST_CHECK_MAIN (coeffs);
