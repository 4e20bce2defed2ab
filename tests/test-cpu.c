/* gst-cudaconvolve: the CPU engine (cuda/cpu/cuconv-cpu.c) against the CPU
 * reference, within ±1 per sample (Canny: equal): every kernel type,
 * border, depth and packing, components filtered, copied or filled, odd
 * sizes, radii up to 64 and past the plane (the box to the largest), one
 * band and several.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "cuconv.h"

typedef struct
{
  int width, height, n_comp, sub_x, sub_y, depth, shift;
} Geometry;

static const Geometry geometries[] = {
  {1, 1, 1, 1, 1, 8}, {3, 7, 1, 1, 1, 8}, {33, 18, 1, 1, 1, 8},
  {127, 65, 1, 1, 1, 8}, {17, 9, 2, 2, 2, 8}, {13, 7, 4, 1, 1, 8},
  {11, 6, 1, 1, 1, 10}, {12, 5, 1, 2, 2, 12}, {13, 7, 1, 1, 1, 10, 6},
  {7, 4, 2, 2, 2, 10, 6}, {12, 7, 1, 1, 1, 16}, {29, 11, 4, 1, 1, 16},
};

static const CuconvBorder borders[] = { CUCONV_BORDER_CLAMP,
  CUCONV_BORDER_MIRROR, CUCONV_BORDER_WRAP, CUCONV_BORDER_ZERO
};

static const unsigned radii[] = { 1, 3, 8, 40, 64 };

/* A plane of g with random samples; dst allocated, filled with 0xa5. */
static void
plane_new (CuconvPlane * p, const Geometry * g, GRand * rand, int ops)
{
  const int bytes = g->depth > 8 ? 2 : 1;
  const ptrdiff_t stride = (ptrdiff_t) g->width * g->n_comp * bytes + 3 *
      bytes;
  uint8_t *src = g_malloc (MAX (stride * g->height, 1));
  int i, c;

  memset (p, 0, sizeof (*p));
  for (i = 0; i < stride * g->height; i++)
    src[i] = g_rand_int_range (rand, 0, 256);
  p->src = src;
  p->dst = g_malloc (MAX (stride * g->height, 1));
  memset (p->dst, 0xa5, stride * g->height);
  p->src_stride = p->dst_stride = stride;
  p->width = g->width;
  p->height = g->height;
  p->n_comp = g->n_comp;
  p->sub_x = g->sub_x;
  p->sub_y = g->sub_y;
  p->depth = g->depth;
  p->shift = g->shift;
  p->fill = 1u << (g->depth - 1);
  /* ops 1: the last component copied, 2: filled */
  for (c = 0; c < g->n_comp; c++)
    p->op[c] = CUCONV_COMP_FILTER;
  if (ops == 1)
    p->op[g->n_comp - 1] = CUCONV_COMP_COPY;
  else if (ops == 2)
    p->op[g->n_comp - 1] = CUCONV_COMP_FILL;
}

static void
plane_free (CuconvPlane * p)
{
  g_free ((gpointer) p->src);
  g_free (p->dst);
}

/* The engine's frame: the n planes filtered with f by cpu in its bands,
 * one pass after the other, the bands of a pass in order or, with
 * reverse, the last first. */
static void
engine_frame (CuconvCpu * cpu, int n_bands, const CuconvPlane * planes,
    int n, const CuconvFilter * f, int reverse)
{
  int b, pass;

  fail_unless (cuconv_cpu_prepare (cpu, planes, n, f) == 0);
  for (pass = 0; pass < cuconv_cpu_passes (f, planes, n); pass++)
    for (b = 0; b < n_bands; b++)
      fail_unless (cuconv_cpu_frame_band (cpu, planes, n, f, pass,
              reverse ? n_bands - 1 - b : b) == 0);
}

/* Filters the n planes with f by the engine in n_bands bands and by the
 * reference, and fails on a sample more than tolerance apart, or a low
 * bit set (P010).  With before, twice, the bands in order and the last
 * first, each after a frame filtered with before, which leaves its state
 * in the engine's memory. */
static void
check_frame (const CuconvPlane * planes, int n, const CuconvFilter * f,
    const CuconvFilter * before, int n_bands, unsigned tolerance,
    const gchar * what)
{
  CuconvPlane ref[CUCONV_MAX_PLANES];
  CuconvCpu *cpu = cuconv_cpu_new (n_bands);
  int i, x, y, reverse;

  for (i = 0; i < n; i++) {
    const size_t size = planes[i].dst_stride * MAX (planes[i].height, 0);

    ref[i] = planes[i];
    ref[i].dst = g_malloc (MAX (size, 1));
    memset (ref[i].dst, 0xa5, size);
  }
  fail_unless (cuconv_reference_frame (ref, n, f) == 0);
  for (reverse = 0; reverse < (before ? 2 : 1); reverse++) {
    if (before)
      engine_frame (cpu, n_bands, planes, n, before, reverse);
    engine_frame (cpu, n_bands, planes, n, f, reverse);
    for (i = 0; i < n; i++) {
      const CuconvPlane *p = &planes[i];
      const int bytes = p->depth > 8 ? 2 : 1;

      for (y = 0; y < p->height; y++) {
        for (x = 0; x < p->width * p->n_comp; x++) {
          const uint8_t *g = p->dst + y * p->dst_stride + x * bytes;
          const uint8_t *w = ref[i].dst + y * p->dst_stride + x * bytes;
          unsigned got = bytes == 1 ? g[0] : g[0] | g[1] << 8;
          unsigned want = bytes == 1 ? w[0] : w[0] | w[1] << 8;

          fail_unless (got + tolerance >= want && want + tolerance >= got &&
              ((got ^ want) & ((1u << p->shift) - 1)) == 0,
              "%s, plane %d %dx%d x%d depth %d shift %d, %d bands%s: "
              "sample (%d, %d) is %u, the reference %u", what, i, p->width,
              p->height, p->n_comp, p->depth, p->shift, n_bands,
              reverse ? " (the last first)" : "", x, y, got, want);
        }
      }
    }
  }
  for (i = 0; i < n; i++)
    g_free (ref[i].dst);
  cuconv_cpu_free (cpu);
}

/* check_frame () of plane p, within ±1. */
static void
check (const CuconvPlane * p, const CuconvFilter * f, int n_bands,
    const gchar * what)
{
  check_frame (p, 1, f, NULL, n_bands, 1, what);
}

static CuconvSettings
settings (CuconvKernel k, CuconvBorder b, unsigned radius)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = k;
  s.border = b;
  s.radius = radius;
  s.amount = 1.5;
  return s;
}

/* Every kernel type but custom, every border, depth and packing. */
GST_START_TEST (test_kernels_match_reference)
{
  GRand *rand = g_rand_new_with_seed (41);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  guint g, b, r;
  CuconvKernel k;

  for (g = 0; g < G_N_ELEMENTS (geometries); g++) {
    for (k = 0; k < CUCONV_KERNEL_CUSTOM; k++) {
      for (b = 0; b < G_N_ELEMENTS (borders); b++) {
        for (r = 0; r < G_N_ELEMENTS (radii); r++) {
          CuconvSettings s = settings (k, borders[b], radii[r]);
          CuconvPlane p;
          gchar *what;

          cuconv_filter_init (f, &s);
          fail_unless (cuconv_cpu_takes (f));
          plane_new (&p, &geometries[g], rand, (g + k + b + r) % 3);
          what = g_strdup_printf ("kernel %d border %d radius %u", k, b,
              radii[r]);
          check (&p, f, 1 + (g + r) % 3, what);
          g_free (what);
          plane_free (&p);
        }
      }
    }
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* The bilateral, in bands: every border, depth and packing, radii 1 to
 * the cut (16), sigma-range 0 to nearly the gaussian. */
GST_START_TEST (test_bilateral_matches_reference)
{
  static const double ranges[] = { 0.0, 12.0, 40.0, 400.0 };
  static const unsigned bl_radii[] = { 1, 3, 7, 30 };
  GRand *rand = g_rand_new_with_seed (47);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  guint g, b, r;

  for (g = 0; g < G_N_ELEMENTS (geometries); g++) {
    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      for (r = 0; r < G_N_ELEMENTS (bl_radii); r++) {
        CuconvSettings s = settings (CUCONV_KERNEL_BILATERAL, borders[b],
            bl_radii[r]);
        CuconvPlane p;
        gchar *what;

        s.sigma_range = ranges[(g + b + r) % G_N_ELEMENTS (ranges)];
        cuconv_filter_init (f, &s);
        plane_new (&p, &geometries[g], rand, (g + b + r) % 3);
        fail_unless (cuconv_cpu_takes (f) && cuconv_cpu_passes (f, &p, 1) ==
            1);
        what = g_strdup_printf ("bilateral border %d radius %u sigma-range %g",
            b, bl_radii[r], s.sigma_range);
        check (&p, f, 1 + (g + r) % 3, what);
        g_free (what);
        plane_free (&p);
      }
    }
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* The box past radius 64, as running sums: radii up to the largest. */
GST_START_TEST (test_wide_box_matches_reference)
{
  static const unsigned wide[] = { 65, 200, CUCONV_MAX_RADIUS };
  GRand *rand = g_rand_new_with_seed (43);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  guint g, b, r;

  for (g = 0; g < G_N_ELEMENTS (geometries); g++) {
    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      for (r = 0; r < G_N_ELEMENTS (wide); r++) {
        CuconvSettings s = settings (CUCONV_KERNEL_BOX, borders[b], wide[r]);
        CuconvPlane p;

        cuconv_filter_init (f, &s);
        fail_unless (cuconv_cpu_takes (f));
        plane_new (&p, &geometries[g], rand, (g + b + r) % 3);
        check (&p, f, 1 + (g + r) % 3, "wide box");
        plane_free (&p);
      }
    }
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* The untruncated gaussian by the recursive filter, alone and
 * sharpened. */
GST_START_TEST (test_untruncated_matches_reference)
{
  static const double sigmas[] = { 21.5, 40.0, 120.0 };
  GRand *rand = g_rand_new_with_seed (44);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  guint g, b, i, k;

  for (g = 0; g < G_N_ELEMENTS (geometries); g++) {
    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      for (i = 0; i < G_N_ELEMENTS (sigmas); i++) {
        for (k = 0; k < 2; k++) {
          CuconvSettings s = settings (k ? CUCONV_KERNEL_SHARPEN :
              CUCONV_KERNEL_GAUSSIAN, borders[b], 0);
          CuconvPlane p;

          s.sigma = sigmas[i];
          cuconv_filter_init (f, &s);
          fail_unless (cuconv_cpu_takes (f));
          plane_new (&p, &geometries[g], rand, (g + b + i) % 3);
          check (&p, f, 1 + (g + i) % 3, k ? "untruncated sharpen" :
              "untruncated gaussian");
          plane_free (&p);
        }
      }
    }
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* The user's kernels: separable taps of unequal lengths, and matrices. */
GST_START_TEST (test_custom_match_reference)
{
  GRand *rand = g_rand_new_with_seed (42);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  guint g, b, m;

  for (g = 0; g < G_N_ELEMENTS (geometries); g++) {
    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      for (m = 0; m < 3; m++) {
        CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, borders[b], 0);
        CuconvPlane p;
        int i;

        if (m == 0) {
          s.custom_x_len = 5;
          s.custom_y_len = 3;
        } else {
          s.matrix_side = m == 1 ? 3 : 7;
        }
        for (i = 0; i < s.custom_x_len; i++)
          s.custom_x[i] = g_rand_double_range (rand, -1, 2);
        for (i = 0; i < s.custom_y_len; i++)
          s.custom_y[i] = g_rand_double_range (rand, -1, 2);
        for (i = 0; i < s.matrix_side * s.matrix_side; i++)
          s.matrix[i] = g_rand_double_range (rand, -1, 2);
        s.normalize = m != 2;
        cuconv_filter_init (f, &s);
        fail_unless (cuconv_cpu_takes (f));
        plane_new (&p, &geometries[g], rand, (g + b + m) % 3);
        check (&p, f, 1 + (g + m) % 3, m == 0 ? "custom taps" :
            "custom matrix");
        plane_free (&p);
      }
    }
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* Positive taps that sum past 1 (not normalised): sums past what 16-bit
 * fixed point holds, saturated as the reference does. */
GST_START_TEST (test_gain_above_one)
{
  static const Geometry g = { 131, 9, 1, 1, 1, 8 };
  GRand *rand = g_rand_new_with_seed (45);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, CUCONV_BORDER_CLAMP, 0);
  CuconvPlane p;

  s.custom_x_len = s.custom_y_len = 3;
  s.custom_x[0] = s.custom_x[1] = s.custom_x[2] = 0.6;
  s.custom_y[0] = s.custom_y[1] = s.custom_y[2] = 0.6;
  s.normalize = FALSE;
  cuconv_filter_init (f, &s);
  plane_new (&p, &g, rand, 0);
  check (&p, f, 2, "taps summing to 1.8");
  plane_free (&p);
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* What it leaves to the reference. */
GST_START_TEST (test_takes)
{
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, CUCONV_BORDER_CLAMP,
      65);
  CuconvPlane p = { NULL, NULL, 8, 8, 8, 8, 1, 1, 1, 8 };

  cuconv_filter_init (f, &s);
  fail_if (cuconv_cpu_takes (f), "radius 65 is summed in double");
  s = settings (CUCONV_KERNEL_GAUSSIAN, CUCONV_BORDER_CLAMP, 0);
  s.sigma = 40.0;
  cuconv_filter_init (f, &s);
  fail_unless (cuconv_cpu_takes (f) && cuconv_cpu_passes (f, &p, 1) == 2,
      "the untruncated gaussian, recursive");
  g_free (f);
}

GST_END_TEST;

/* Canny's inputs: noise (many edges, many ties), or noise over smooth
 * blobs (long edges across the bands), every sample of depth bits above
 * the shift. */
static void
canny_input (CuconvPlane * p, GRand * rand, int blobs)
{
  const int depth = p->depth > 8 ? p->depth : 8;
  const int shift = depth > 8 ? p->shift : 0;
  const unsigned max = (1u << depth) - 1;
  uint8_t *src = (uint8_t *) p->src;
  int x, y;

  for (y = 0; y < p->height; y++) {
    for (x = 0; x < p->width * p->n_comp; x++) {
      double v = g_rand_double (rand);
      unsigned word;

      if (blobs)
        v = 0.5 + 0.35 * sin (x * 0.21 + y * 0.05) * cos (y * 0.17) +
            0.1 * (v - 0.5);
      word = (unsigned) (v * max + 0.5) << shift;
      if (depth == 8) {
        src[y * p->src_stride + x] = (uint8_t) word;
      } else {
        src[y * p->src_stride + 2 * x] = (uint8_t) word;
        src[y * p->src_stride + 2 * x + 1] = (uint8_t) (word >> 8);
      }
    }
  }
}

/* Canny's smoothing: none; a radius; sigma only, or sigma_y only (no
 * horizontal smoothing); a horizontal one alone, made by hand. */
static void
canny_filter (CuconvFilter * f, CuconvBorder border, int smoothing,
    double low, double high)
{
  CuconvSettings s = settings (CUCONV_KERNEL_CANNY, border, 0);
  int sub;

  s.threshold_low = low;
  s.threshold_high = high;
  if (smoothing == 1)
    s.radius = 2;
  else if (smoothing == 2)
    s.sigma = 1.4;
  else if (smoothing == 3)
    s.sigma_y = 2.0;
  else if (smoothing == 4)
    s.radius = CUCONV_MAX_CANNY_RADIUS;
  cuconv_filter_init (f, &s);
  if (smoothing == 4) {
    for (sub = 0; sub < CUCONV_MAX_SUBSAMPLE; sub++) {
      f->y[sub].radius = 0;
      f->canny_y[sub][0] = 1 << CUCONV_CANNY_TAP_SHIFT;
    }
  }
}

/* Canny, bit for bit: every border, depth and packing, several filtered
 * components, odd sizes down to 1x1, smoothing or none, thresholds equal
 * or 0, one band to more bands than rows (the planes of more than 4096
 * pixels with one border each and a few smoothings, so that the run stays
 * short under valgrind).  Each after a frame that left weak pixels
 * everywhere in the engine's memory: a band that read or flooded rows not
 * yet its own would follow them. */
GST_START_TEST (test_canny_matches_reference)
{
  static const Geometry canny_geometries[] = {
    {1, 9, 1, 1, 1, 8}, {9, 1, 1, 1, 1, 8}, {2, 2, 3, 1, 1, 8},
    {64, 33, 3, 1, 1, 8}, {385, 289, 1, 1, 1, 8}, {97, 61, 3, 1, 1, 16},
    {101, 50, 1, 1, 1, 12, 4},
  };
  static const double thresholds[][2] = {
    {50, 150}, {20, 60}, {100, 100}, {0, 0}, {0, 40}, {300, 30},
  };
  GRand *rand = g_rand_new_with_seed (48);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvFilter *weak = g_new (CuconvFilter, 1);
  const guint n_geometries = G_N_ELEMENTS (geometries) +
      G_N_ELEMENTS (canny_geometries);
  guint g, b, m, k = 0;

  for (g = 0; g < n_geometries; g++) {
    const Geometry *geo = g < G_N_ELEMENTS (geometries) ? &geometries[g] :
        &canny_geometries[g - G_N_ELEMENTS (geometries)];

    const gboolean large = geo->width * geo->height > 4096;

    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      for (m = 0; m < 5; m++, k++) {
        const double *t = thresholds[k % G_N_ELEMENTS (thresholds)];
        const int bands[] = { 1, 2, 3, 4, geo->height + 3 };
        CuconvPlane p;
        gchar *what;

        if (large && (b != (g + m) % G_N_ELEMENTS (borders) || m % 2 != 0 ||
                (geo->width * geo->height > 65536 && m != 2)))
          continue;
        canny_filter (f, borders[b], m, t[0], t[1]);
        canny_filter (weak, borders[b], m, 0, CUCONV_MAX_CANNY_THRESHOLD);
        fail_unless (cuconv_cpu_takes (f));
        plane_new (&p, geo, rand, k % 3);
        canny_input (&p, rand, k % 2);
        what = g_strdup_printf ("canny border %d smoothing %u thresholds "
            "%g/%g", b, m, t[0], t[1]);
        check_frame (&p, 1, f, weak, bands[(g + b + m) %
                G_N_ELEMENTS (bands)], 0, what);
        g_free (what);
        plane_free (&p);
      }
    }
  }
  g_free (weak);
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

/* Canny over a frame of planes: luma, interleaved chroma at half size, a
 * plane of no pixels, and RGB with every component filtered; the passes
 * run each plane's components in turn. */
GST_START_TEST (test_canny_frame)
{
  static const Geometry frame[] = {
    {75, 41, 1, 1, 1, 8}, {38, 21, 2, 2, 2, 8}, {0, 0, 1, 1, 1, 8},
    {33, 17, 3, 1, 1, 8},
  };
  GRand *rand = g_rand_new_with_seed (49);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvPlane planes[G_N_ELEMENTS (frame)];
  guint i, m;

  for (m = 0; m < 5; m++) {
    canny_filter (f, borders[m % G_N_ELEMENTS (borders)], m, 30, 90);
    for (i = 0; i < G_N_ELEMENTS (frame); i++) {
      plane_new (&planes[i], &frame[i], rand, i == 1 ? m % 3 : 0);
      canny_input (&planes[i], rand, 1);
    }
    fail_unless (cuconv_cpu_passes (f, planes, G_N_ELEMENTS (frame)) ==
        (m == 0 || m == 4 ? 4 : 5) * 6);
    check_frame (planes, G_N_ELEMENTS (frame), f, NULL, 1 + m % 4, 0,
        "canny frame");
    for (i = 0; i < G_N_ELEMENTS (frame); i++)
      plane_free (&planes[i]);
  }
  g_free (f);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
cpu_suite (void)
{
  Suite *s = suite_create ("cuconv-cpu");
  TCase *tc = tcase_create ("cpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_kernels_match_reference);
  tcase_add_test (tc, test_bilateral_matches_reference);
  tcase_add_test (tc, test_wide_box_matches_reference);
  tcase_add_test (tc, test_untruncated_matches_reference);
  tcase_add_test (tc, test_custom_match_reference);
  tcase_add_test (tc, test_gain_above_one);
  tcase_add_test (tc, test_canny_matches_reference);
  tcase_add_test (tc, test_canny_frame);
  tcase_add_test (tc, test_takes);
  return s;
}

GST_CHECK_MAIN (cpu);
