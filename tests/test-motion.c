/* gst-cudaconvolve: the compensated temporal denoise's definition
 * (cuconv-motion.h, cuconv-motion.c; docs/semantics.md, "Motion
 * compensation") against answers worked out by hand: the pyramid's
 * rounding, the vectors of shifted pictures (whole samples, fractions,
 * beyond the top level's reach, none on a flat picture), the bilinear
 * mix, the chroma's vectors and the blend with the previous output where
 * the vector points.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "cuconv.h"
#include "cuconv-motion.h"

#define W 160
#define H 120

static guint32 rng_state;

static guint32
rnd (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

/* The bilinear interpolation of a random grid of values below amp, one
 * every cell samples, at (x, y). */
static int
blob (const guint8 * grid, int cell, int x, int y, int amp)
{
  const int gx = x / cell, gy = y / cell, fx = x % cell, fy = y % cell;
  const guint8 *g = grid + gy * 64 + gx;

  return ((g[0] * (cell - fx) + g[1] * fx) * (cell - fy) + (g[64] * (cell -
              fx) + g[65] * fx) * fy) * amp / (cell * cell * 256);
}

/* A texture with detail at every scale, as a photograph has: blobs of 32
 * and 8 samples and noise. */
static void
texture (guint8 * buf, int w, int h, int stride)
{
  guint8 coarse[64 * 64], fine[64 * 64];

  for (int i = 0; i < 64 * 64; i++) {
    coarse[i] = (guint8) rnd ();
    fine[i] = (guint8) rnd ();
  }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      buf[y * stride + x] = (guint8) (blob (coarse, 32, x, y, 140) +
          blob (fine, 8, x, y, 80) + rnd () % 30);
}

/* dst(x, y) = src(x + dx, y + dy), the coordinates clamped. */
static void
shifted (const guint8 * src, guint8 * dst, int w, int h, int dx, int dy)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      dst[y * w + x] = src[cuconv_motion_clamp (y + dy, h) * w +
          cuconv_motion_clamp (x + dx, w)];
}

static CuconvPlane
gray_plane (const guint8 * in, guint8 * out, int w, int h)
{
  CuconvPlane p;

  memset (&p, 0, sizeof (p));
  p.src = in;
  p.dst = out;
  p.src_stride = p.dst_stride = w;
  p.width = w;
  p.height = h;
  p.n_comp = 1;
  p.sub_x = p.sub_y = 1;
  p.depth = 8;
  return p;
}

/* The field of in against prev, GRAY8 of W x H. */
static const CuconvMotionVector *
search (const guint8 * in, const guint8 * prev, void *scratch)
{
  const CuconvPlane p = gray_plane (in, NULL, W, H);

  return cuconv_motion_search (&p, 0, prev, W, scratch);
}

/* Blocks whose 8x8 samples and search reach stay inside the picture all
 * have vector (vx, vy) (1/SUBPEL); returns how many did not. */
static int
count_off (const CuconvMotionVector * f, int vx, int vy, int margin)
{
  const int nbx = cuconv_motion_blocks (W), nby = cuconv_motion_blocks (H);
  int off = 0;

  for (int by = 0; by < nby; by++)
    for (int bx = 0; bx < nbx; bx++) {
      const CuconvMotionVector v = f[by * nbx + bx];

      if (bx * 8 < margin || by * 8 < margin || bx * 8 + 8 > W - margin ||
          by * 8 + 8 > H - margin)
        continue;
      off += v.x != vx || v.y != vy;
    }
  return off;
}

GST_START_TEST (test_motion_levels)
{
  guint8 src[3 * 3] = { 0, 1, 2, 3, 4, 5, 6, 7, 9 };

  /* 5 -> 3 -> 2 -> 1 samples; a block of 8 holds them all */
  fail_unless (cuconv_motion_level_size (5, 0) == 5);
  fail_unless (cuconv_motion_level_size (5, 1) == 3);
  fail_unless (cuconv_motion_level_size (5, 2) == 2);
  fail_unless (cuconv_motion_level_size (5, 3) == 1);
  fail_unless (cuconv_motion_blocks (8) == 1 && cuconv_motion_blocks (9) ==
      2 && cuconv_motion_blocks (1) == 1);
  /* (0 + 1 + 3 + 4 + 2) >> 2 = 2; the last column and row repeat: (8 + 9
   * + 8 + 9 ... ) at (1, 1) of a 3x3: samples (2, 2) four times = 9 */
  fail_unless (cuconv_motion_down (src, 3, 3, 3, 0, 0) == 2);
  fail_unless (cuconv_motion_down (src, 3, 3, 3, 1, 0) == (2 + 2 + 5 + 5 +
          2) >> 2);
  fail_unless (cuconv_motion_down (src, 3, 3, 3, 1, 1) == 9);
}

GST_END_TEST;

GST_START_TEST (test_motion_mix)
{
  /* the samples themselves at whole positions; a quarter of the way:
   * (10 * 3 * 4 + 50 * 1 * 4 + 2 * 8) >> 4 = (120 + 200 + 8) >> 4 = 20 */
  fail_unless (cuconv_motion_mix (10, 50, 90, 130, 0, 0) == 10);
  fail_unless (cuconv_motion_mix (10, 50, 90, 130, 1, 0) == 20);
  /* the centre: (10 + 50 + 90 + 130) * 4 / 16 = 70 */
  fail_unless (cuconv_motion_mix (10, 50, 90, 130, 2, 2) == 70);
  /* halves round up: (0 * 2 + 1 * 2) * 4 + 8 >> 4 = 1 */
  fail_unless (cuconv_motion_mix (0, 1, 0, 1, 2, 0) == 1);
  fail_unless (cuconv_motion_whole (-1) == -1 && cuconv_motion_whole (-4) ==
      -1 && cuconv_motion_whole (-5) == -2 && cuconv_motion_whole (7) == 1);
  /* chroma halves round away from zero */
  fail_unless (cuconv_motion_scale (3, 2) == 2 && cuconv_motion_scale (-3,
          2) == -2 && cuconv_motion_scale (1, 2) == 1
      && cuconv_motion_scale (-1, 2) == -1 && cuconv_motion_scale (-4, 2)
      == -2 && cuconv_motion_scale (5, 1) == 5);
}

GST_END_TEST;

GST_START_TEST (test_motion_shifts)
{
  static const int shifts[][2] = { {0, 0}, {5, -3}, {-1, 1}, {21, 13},
  {-36, 2}, {3, -30}
  };
  CuconvMotionLayout l;
  guint8 *prev = g_malloc (W * H), *in = g_malloc (W * H);
  void *scratch;

  cuconv_motion_layout (W, H, &l);
  scratch = g_malloc (l.bytes);
  rng_state = 7;
  texture (prev, W, H, W);
  for (guint i = 0; i < G_N_ELEMENTS (shifts); i++) {
    const int dx = shifts[i][0], dy = shifts[i][1];
    int off;

    /* the camera moved: the input shows at (x, y) what the previous
     * frame showed at (x + dx, y + dy) */
    shifted (prev, in, W, H, dx, dy);
    off = count_off (search (in, prev, scratch), dx * CUCONV_MOTION_SUBPEL,
        dy * CUCONV_MOTION_SUBPEL, 40);
    fail_unless (off == 0, "shift (%d, %d): %d blocks off", dx, dy, off);
  }
  /* a flat picture: every vector costs the same, the penalty keeps 0 */
  memset (prev, 90, W * H);
  memset (in, 90, W * H);
  fail_unless (count_off (search (in, prev, scratch), 0, 0, 0) == 0);
  g_free (prev);
  g_free (in);
  g_free (scratch);
}

GST_END_TEST;

/* An input that is the bilinear mix of the previous frame at (x + 2.25, y
 * - 0.5) everywhere: its vector is (9, -2) quarters, where the sum of
 * differences is 0. */
GST_START_TEST (test_motion_fraction)
{
  CuconvMotionLayout l;
  guint8 *prev = g_malloc (W * H), *in = g_malloc (W * H);
  const CuconvMotionPrev pv = { prev, W, W, H, 1, 8, 0 };
  const CuconvMotionVector v = { 9, -2 };
  void *scratch;
  int off;

  cuconv_motion_layout (W, H, &l);
  scratch = g_malloc (l.bytes);
  rng_state = 11;
  texture (prev, W, H, W);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      in[y * W + x] = (guint8) cuconv_motion_fetch (&pv, x, y, 0, v);
  off = count_off (search (in, prev, scratch), 9, -2, 16);
  fail_unless (off == 0, "%d blocks off", off);
  g_free (prev);
  g_free (in);
  g_free (scratch);
}

GST_END_TEST;

/* cuconv_motion_best_subpel () computes the definition: the first least
 * cuconv_motion_cost_subpel () of the 25 candidates, on random levels
 * (partial blocks at the edges, whole vectors reaching past them). */
GST_START_TEST (test_motion_subpel_exact)
{
  static const int sizes[][2] = { {1, 1}, {5, 3}, {37, 29}, {64, 40} };
  const int h = CUCONV_MOTION_SUBPEL / 2;

  rng_state = 13;
  for (guint z = 0; z < G_N_ELEMENTS (sizes); z++) {
    const int w = sizes[z][0], ht = sizes[z][1];
    guint8 *a = g_malloc (w * ht), *b = g_malloc (w * ht);
    const CuconvMotionLevel lv = { a, b, w, ht, w };

    for (int round = 0; round < 4; round++) {
      for (int i = 0; i < w * ht; i++) {
        /* flat areas too, where ties decide */
        a[i] = (guint8) (round == 3 ? 50 : rnd () % (round ? 256 : 4));
        b[i] = (guint8) (round == 3 ? 50 : rnd () % (round ? 256 : 4));
      }
      for (int by = 0; by < cuconv_motion_blocks (ht); by++)
        for (int bx = 0; bx < cuconv_motion_blocks (w); bx++) {
          const CuconvMotionVector whole = {
            (short) ((int) (rnd () % 21) - 10), (short) ((int) (rnd () % 21)
                - 10)
          };
          const CuconvMotionVector got = cuconv_motion_best_subpel (&lv, bx,
              by, whole);
          CuconvMotionVector want = { 0, 0 }, v;
          unsigned least = 0xffffffffu;

          for (int dy = -h; dy <= h; dy++)
            for (int dx = -h; dx <= h; dx++) {
              unsigned c;

              v.x = (short) (whole.x * CUCONV_MOTION_SUBPEL + dx);
              v.y = (short) (whole.y * CUCONV_MOTION_SUBPEL + dy);
              c = cuconv_motion_cost_subpel (&lv, bx, by, v);
              if (c < least) {
                least = c;
                want = v;
              }
            }
          fail_unless (got.x == want.x && got.y == want.y,
              "%dx%d block (%d, %d): (%d, %d), the definition (%d, %d)", w,
              ht, bx, by, got.x, got.y, want.x, want.y);
        }
    }
    g_free (a);
    g_free (b);
  }
}

GST_END_TEST;

/* The blend follows the field: a previous frame of one value left of
 * column 8 and another right of it, a field moving the right half's
 * blocks by 2 samples; a chroma plane subsampled 2x2 follows half of it. */
GST_START_TEST (test_motion_blend)
{
  guint8 k[CUCONV_TEMPORAL_LUT], in[16 * 2], prev[16 * 2], out[16 * 2];
  guint8 cin[8], cprev[8], cout[8];
  CuconvMotionVector field[2] = { {0, 0}, {-2 * CUCONV_MOTION_SUBPEL, 0} };
  CuconvPlane p = gray_plane (in, out, 16, 2);
  CuconvPlane c = gray_plane (cin, cout, 8, 1);

  cuconv_temporal_lut (k, 1.0, 255.0);
  for (int x = 0; x < 16; x++)
    for (int y = 0; y < 2; y++) {
      prev[y * 16 + x] = x < 8 ? 100 : 200;
      in[y * 16 + x] = 110;
    }
  cuconv_temporal_rows_compensated (&p, prev, 16, field, 2, k, 0, 0, 2);
  /* columns 0-7 and 10-15: their own side; 8, 9 reach back to 6, 7 (100):
   * 110 + floor ((k[10] (100 - 110) + 128) / 256) = 110 - 9 = 101, and
   * towards 200: 110 + floor ((k[90] * 90 + 128) / 256) */
  fail_unless (out[0] == 101 && out[7] == 101, "%u %u", out[0], out[7]);
  fail_unless (out[8] == 101 && out[9] == 101, "%u %u", out[8], out[9]);
  fail_unless (out[10] == 110 + ((k[90] * 90 + 128) >> 8), "%u", out[10]);
  fail_unless (memcmp (out, out + 16, 16) == 0);

  /* chroma: sample 4 stands for luma 8, in the right block; -8 quarters
   * of luma are -4 of chroma: one whole sample to the left */
  c.sub_x = c.sub_y = 2;
  for (int x = 0; x < 8; x++) {
    cprev[x] = (guint8) (10 * x);
    cin[x] = (guint8) (10 * x);
  }
  cuconv_temporal_rows_compensated (&c, cprev, 8, field, 2, k, 0, 0, 1);
  fail_unless (cout[3] == 30, "%u", cout[3]);
  /* 40 against 30: 40 + floor ((k[10] * -10 + 128) / 256) = 31 */
  fail_unless (cout[4] == 40 + ((k[10] * -10 + 128) >> 8), "%u", cout[4]);
  /* the first frame takes the input */
  cuconv_temporal_rows_compensated (&c, cprev, 8, NULL, 2, k, 1, 0, 1);
  fail_unless (memcmp (cout, cin, 8) == 0);
}

GST_END_TEST;

/* A panning camera over a noisy texture: the compensated state's error
 * falls well below the input's noise, where the state at its own place
 * does not follow. */
GST_START_TEST (test_motion_sequence)
{
  CuconvMotionLayout l;
  guint8 *clean = g_malloc (W * 2 * H * 2), *in = g_malloc (W * H);
  guint8 *s[2] = { g_malloc (W * H), g_malloc (W * H) };
  guint8 *still = g_malloc (W * H);
  guint8 k[CUCONV_TEMPORAL_LUT];
  double err_in = 0, err_comp = 0, err_still = 0;
  void *scratch;

  cuconv_motion_layout (W, H, &l);
  scratch = g_malloc (l.bytes);
  rng_state = 5;
  for (int y = 0; y < 2 * H; y++)
    for (int x = 0; x < 2 * W; x++)
      clean[y * 2 * W + x] = (guint8) (120 + 60 * ((x / 16 + y / 16) % 2) +
          (x * 3 + y * 5) % 23);
  cuconv_temporal_lut (k, 0.9, 60.0);
  for (int t = 0; t < 24; t++) {
    CuconvPlane p = gray_plane (in, s[t % 2], W, H);
    CuconvPlane q = gray_plane (in, still, W, H);
    const CuconvMotionVector *f = NULL;

    /* 2 samples right and 1 down a frame, noise of +-12 */
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        in[y * W + x] = (guint8) (clean[(y + t) * 2 * W + x + 2 * t] +
            (int) (rnd () % 25) - 12);
    if (t > 0)
      f = cuconv_motion_search (&p, 0, s[(t + 1) % 2], W, scratch);
    cuconv_temporal_rows_compensated (&p, s[(t + 1) % 2], W, f,
        cuconv_motion_blocks (W), k, t == 0, 0, H);
    cuconv_temporal_rows (&q, k, t == 0, 0, H);
    if (t < 12)
      continue;
    for (int y = 16; y < H - 16; y++)
      for (int x = 16; x < W - 16; x++) {
        const double c = clean[(y + t) * 2 * W + x + 2 * t];

        err_in += (in[y * W + x] - c) * (in[y * W + x] - c);
        err_comp += (s[t % 2][y * W + x] - c) * (s[t % 2][y * W + x] - c);
        err_still += (still[y * W + x] - c) * (still[y * W + x] - c);
      }
  }
  fail_unless (err_comp * 3 < err_in, "compensated %g of %g", err_comp,
      err_in);
  fail_unless (err_comp * 2 < err_still, "compensated %g, still %g",
      err_comp, err_still);
  g_free (clean);
  g_free (in);
  g_free (s[0]);
  g_free (s[1]);
  g_free (still);
  g_free (scratch);
}

GST_END_TEST;

static Suite *
motion_suite (void)
{
  Suite *s = suite_create ("motion");
  TCase *tc = tcase_create ("motion");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_motion_levels);
  tcase_add_test (tc, test_motion_mix);
  tcase_add_test (tc, test_motion_shifts);
  tcase_add_test (tc, test_motion_fraction);
  tcase_add_test (tc, test_motion_subpel_exact);
  tcase_add_test (tc, test_motion_blend);
  tcase_add_test (tc, test_motion_sequence);
  return s;
}

GST_CHECK_MAIN (motion);
