/* gst-cudaconvolve: the top level's motion search a warp a block
 * (cuda/kernels/cuconv-motion.cuh) run on the CPU, each lane's pick and
 * then the warp's, against the definition (cuconv_motion_best) for every
 * block: levels of odd sizes, the previous level the input moved by up
 * to 6 samples with noise, plain noise, flat areas (ties everywhere).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "xorshift.h"

#include "cuconv-motion.cuh"

using namespace cuconv;

static uint32_t rng = 0x13579bdu;

static uint32_t
rnd (void)
{
  return xorshift32 (&rng);
}

/* A level of w x h: b the picture, a it moved by (mx, my) with noise of
 * +-noise (kind 0), plain noise (1), or flat (2). */
static int
run_level (int w, int h, int kind)
{
  const int stride = w + (int) (rnd () % 4);
  const int mx = (int) (rnd () % 13) - 6, my = (int) (rnd () % 13) - 6;
  std::vector < uint8_t > a ((size_t) stride * h), b ((size_t) stride * h);
  const CuconvMotionLevel lv = { a.data (), b.data (), w, h, stride };
  const CuconvMotionVector none = { 0, 0 };
  int fails = 0;

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      b[(size_t) y * stride + x] = kind == 2 ? 77 :
          (uint8_t) (128 + 100 * ((x / 3 + y / 5) % 2) - 50 * ((x * y) % 3)
          + rnd () % 20);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int sx = cuconv_motion_clamp (x + mx, w);
      const int sy = cuconv_motion_clamp (y + my, h);
      a[(size_t) y * stride + x] = kind == 1 ? (uint8_t) rnd () : kind == 2
          ? 77 : (uint8_t) (b[(size_t) sy * stride + sx] + rnd () % 9);
    }

  for (int by = 0; by < cuconv_motion_blocks (h); by++)
    for (int bx = 0; bx < cuconv_motion_blocks (w); bx++) {
      MotionPick best = motion_top_lane (&lv, bx, by, 0);

      for (int lane = 1; lane < 32; lane++)
        best = motion_pick (best, motion_top_lane (&lv, bx, by, lane));
      const CuconvMotionVector got = motion_top_vector (best);
      const CuconvMotionVector want = cuconv_motion_best (&lv, bx, by, 1,
          none);

      if (got.x != want.x || got.y != want.y) {
        if (fails++ == 0)
          printf ("  block (%d, %d): (%d, %d), the definition (%d, %d)\n",
              bx, by, got.x, got.y, want.x, want.y);
      }
    }
  if (fails)
    printf ("FAIL %dx%d, kind %d, moved (%d, %d): %d blocks\n", w, h, kind,
        mx, my, fails);
  return fails != 0;
}

int
main (void)
{
  static const int sizes[][2] = {
    {1, 1}, {7, 5}, {8, 8}, {33, 17}, {60, 34}, {30, 17}, {97, 61},
  };
  int cases = 0, failed = 0;

  for (auto & z:sizes)
    for (int kind = 0; kind < 3; kind++)
      for (int rep = 0; rep < 3; rep++) {
        cases++;
        failed += run_level (z[0], z[1], kind);
      }
  printf ("top-level motion search a warp a block, on the CPU: %d levels, "
      "%d failed\n", cases, failed);
  return failed != 0;
}
