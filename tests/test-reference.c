/* gst-cudaconvolve: the CPU reference (cuda/ccv-reference.c) against an
 * independent naive 2-D convolution written here in double precision, with
 * its own taps and its own border rules, straight from docs/semantics.md.
 *
 * What is asserted: every output sample is within 1 of the naive result
 * (the reference accumulates in float, so a sum that lands within float
 * rounding of a .5 may round the other way), at most 1% of the samples of
 * a case differ at all, and nothing outside the plane's samples is
 * written.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "ccv.h"

#define GUARD 0xC3

static guint32 rng_state;

static guint8
rnd8 (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 24;
}

/* Border rules, written differently from ccv-border.h: by repeated
 * reflection and shifting rather than by modular arithmetic. */
static int
naive_index (CcvBorder b, int i, int n)
{
  switch (b) {
    case CCV_BORDER_CLAMP:
      return i < 0 ? 0 : (i >= n ? n - 1 : i);
    case CCV_BORDER_MIRROR:
      if (n == 1)
        return 0;
      while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
    case CCV_BORDER_WRAP:
      while (i < 0)
        i += n;
      while (i >= n)
        i -= n;
      return i;
    default:
      return (i < 0 || i >= n) ? -1 : i;
  }
}

/* Taps from the formulas, in double. */
static int
naive_taps (CcvKernel k, int radius, double sigma, int sub, double *w)
{
  double sum = 0.0;
  int i, r;

  if (radius == 0)
    radius = MIN (64, (int) ceil (3.0 * sigma));
  if (sigma == 0.0)
    sigma = 0.3 * (radius - 1) + 0.8;
  r = (radius + sub - 1) / sub;
  sigma /= sub;
  for (i = -r; i <= r; i++) {
    w[i + r] = k == CCV_KERNEL_BOX ? 1.0 : exp (-(double) i * i /
        (2.0 * sigma * sigma));
    sum += w[i + r];
  }
  for (i = 0; i <= 2 * r; i++)
    w[i] /= sum;
  return r;
}

static guint8
naive_sat_round (double v)
{
  double r = v < 0 ? -floor (-v + 0.5) : floor (v + 0.5);
  return r < 0 ? 0 : (r > 255 ? 255 : (guint8) r);
}

typedef struct
{
  int width, height, n_comp, sub_x, sub_y;
} Geometry;

static const Geometry geometries[] = {
  {1, 1, 1, 1, 1}, {2, 3, 1, 1, 1}, {17, 9, 1, 1, 1}, {385, 289, 1, 1, 1},
  {1, 1, 2, 2, 2}, {2, 3, 2, 2, 2}, {17, 9, 2, 2, 2}, {193, 145, 2, 2, 2},
  {9, 9, 1, 2, 1}, {193, 289, 1, 2, 1},
};

/* Runs one case; returns the number of samples that differ by 1. */
static guint64
check_case (const Geometry * g, CcvKernel k, CcvBorder b, int radius,
    double sigma)
{
  const int wb = g->width * g->n_comp;
  const int stride = wb + 7;    /* odd padding, guarded */
  const size_t size = (size_t) stride * g->height;
  guint8 *src = g_malloc (size), *dst = g_malloc (size);
  double kx[CCV_MAX_TAPS], ky[CCV_MAX_TAPS];
  CcvSettings s = { k, b, (unsigned) radius, sigma };
  CcvFilter f;
  CcvPlane p = { src, dst, stride, stride, g->width, g->height, g->n_comp,
    g->sub_x, g->sub_y
  };
  int rx, ry, x, y, c, i, j;
  guint64 ones = 0;

  for (i = 0; i < (int) size; i++)
    src[i] = rnd8 ();
  memset (dst, GUARD, size);
  ccv_filter_init (&f, &s);
  fail_unless (ccv_reference_frame (&p, 1, &f) == 0);

  rx = naive_taps (k, radius, sigma, g->sub_x, kx);
  ry = naive_taps (k, radius, sigma, g->sub_y, ky);
  for (y = 0; y < g->height; y++) {
    for (x = 0; x < stride; x++) {
      const guint8 got = dst[(size_t) y * stride + x];
      double acc = 0.0;
      int d;

      /* plain ifs: check's assertions cost a system call each */
      if (x >= wb) {
        if (got != GUARD)
          fail ("padding written at %d,%d", x, y);
        continue;
      }
      c = x % g->n_comp;
      for (j = -ry; j <= ry; j++) {
        const int yi = naive_index (b, y + j, g->height);
        for (i = -rx; i <= rx; i++) {
          const int xi = naive_index (b, x / g->n_comp + i, g->width);
          if (xi >= 0 && yi >= 0)
            acc += ky[j + ry] * kx[i + rx] *
                src[(size_t) yi * stride + xi * g->n_comp + c];
        }
      }
      d = abs ((int) got - naive_sat_round (acc));
      if (d > 1)
        fail ("%dx%d nc %d sub %d,%d kernel %d border %d "
          "r %d sigma %g: (%d,%d) is %d, expected %d (%.6f)", g->width,
          g->height, g->n_comp, g->sub_x, g->sub_y, k, b, radius, sigma, x, y,
          got, naive_sat_round (acc), acc);
      ones += d;
    }
  }
  fail_unless (ones * 100 <= (guint64) wb * g->height,
      "%" G_GUINT64_FORMAT " of %d samples off by 1 (kernel %d border %d "
      "r %d)", ones, wb * g->height, k, b, radius);
  g_free (src);
  g_free (dst);
  return ones;
}

static void
run_matrix (const int *radii, int n_radii, gboolean large)
{
  guint64 ones = 0, cases = 0;
  int gi, k, b, ri;

  rng_state = 20261122;
  for (gi = 0; gi < (int) G_N_ELEMENTS (geometries); gi++) {
    const Geometry *g = &geometries[gi];

    if ((g->width * g->height > 1000) != large)
      continue;
    for (k = CCV_KERNEL_GAUSSIAN; k <= CCV_KERNEL_BOX; k++)
      for (b = 0; b < CCV_BORDER_N; b++)
        for (ri = 0; ri < n_radii; ri++, cases++)
          ones += check_case (g, k, b, radii[ri], 0.0);
  }
  GST_INFO ("%" G_GUINT64_FORMAT " cases, %" G_GUINT64_FORMAT
      " samples off by 1", cases, ones);
}

static const int all_radii[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
  14, 15, 16
};

/* Small planes, frames smaller than the kernel among them: radii 1..16. */
GST_START_TEST (test_small_all_radii)
{
  run_matrix (all_radii, G_N_ELEMENTS (all_radii), FALSE);
}

GST_END_TEST;

GST_START_TEST (test_large)
{
  run_matrix (all_radii, G_N_ELEMENTS (all_radii), TRUE);
}

GST_END_TEST;

/* Sigma only, both given, and a radius of 64 on small planes. */
GST_START_TEST (test_sigma)
{
  static const Geometry g = { 37, 23, 1, 1, 1 }, g2 = { 19, 12, 2, 2, 2 };
  int b;

  rng_state = 7;
  for (b = 0; b < CCV_BORDER_N; b++) {
    check_case (&g, CCV_KERNEL_GAUSSIAN, b, 0, 1.5);
    check_case (&g2, CCV_KERNEL_GAUSSIAN, b, 0, 2.7);
    check_case (&g, CCV_KERNEL_GAUSSIAN, b, 3, 4.0);
    check_case (&g, CCV_KERNEL_GAUSSIAN, b, 64, 0.0);
    check_case (&g2, CCV_KERNEL_BOX, b, 64, 0.0);
  }
}

GST_END_TEST;

/* A known answer, worked out by hand: box radius 1 on a 3x3 plane. */
GST_START_TEST (test_known_box)
{
  static const guint8 in[9] = { 0, 0, 0, 0, 90, 0, 0, 0, 0 };
  guint8 out[9];
  CcvSettings s = { CCV_KERNEL_BOX, CCV_BORDER_ZERO, 1, 0.0 };
  CcvFilter f;
  CcvPlane p = { in, out, 3, 3, 3, 3, 1, 1, 1 };
  int i;

  ccv_filter_init (&f, &s);
  fail_unless (ccv_reference_frame (&p, 1, &f) == 0);
  for (i = 0; i < 9; i++)
    fail_unless_equals_int (out[i], 10);        /* 90 / 9 everywhere */

  s.border = CCV_BORDER_CLAMP;
  ccv_filter_init (&f, &s);
  fail_unless (ccv_reference_frame (&p, 1, &f) == 0);
  fail_unless_equals_int (out[0], 10);
  fail_unless_equals_int (out[4], 10);
}

GST_END_TEST;

static Suite *
reference_suite (void)
{
  Suite *s = suite_create ("reference");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_known_box);
  tcase_add_test (tc, test_small_all_radii);
  tcase_add_test (tc, test_large);
  tcase_add_test (tc, test_sigma);
  return s;
}

GST_CHECK_MAIN (reference);
