/* gst-cudaconvolve: the register-window passes (cuda/kernels/
 * cuconv-window.cuh) run on the CPU, every thread of every block of both
 * launches through the passes' own phases, against the CPU reference:
 * their indexing, staging, borders, padding of the taps and rounding,
 * checked where there is no GPU.  The shared memory and the float plane
 * start as NaN, so a sample read that no thread staged or wrote spoils
 * its output even where a zero tap multiplies it.
 *
 * Seeded random planes of one and two components, odd sizes and pitches,
 * 8 and 16 bits (10 bits above a shift of 6 too), rows starting on odd
 * addresses, every border, radii 0 to 64, blur, sharpen, sobel and
 * laplacian, whole planes and bands.  Tolerance as test-gpu's: +-1 LSB on filtered samples; the rest
 * of the output (rows outside the band, bytes between rows) untouched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "xorshift.h"

#include "cuconv.h"
#include "cuconv-kernels.cuh"
#include "cuconv-window.cuh"

using namespace cuconv;

static uint32_t rng = 0x5eed1234u;

static uint32_t
rnd (void)
{
  return xorshift32 (&rng);
}

/* The reference's combination (cuconv-reference.c) of an output's sums. */
static __host__ __device__ float
combine (const WindowParams & p, float s, float t0, float t1)
{
  switch (p.combine) {
    case CUCONV_COMBINE_SHARPEN:
      return s + p.amount * (s - t0);
    case CUCONV_COMBINE_MAGNITUDE:
      return sqrtf (t0 * t0 + t1 * t1);
    case CUCONV_COMBINE_ABS_SUM:
      return fabsf (t0 + t1);
    default:
      return t0;
  }
}

/* What the vertical pass's kernel does with an output's sums: combine,
 * round, store. */
struct Store
{
  const WindowParams *p;

  __host__ __device__ void operator () (int y, int s, float t0, float t1) const
  {
    const float src = win_sample (*p, p->src + y * p->src_pitch, s);
    const uint32_t w = cuconv_round_sat (combine (*p, src, t0, t1),
        p->mask) << p->shift;
    uint8_t *d = p->dst + y * p->dst_pitch + s * p->bytes;

    d[0] = (uint8_t) w;
    if (p->bytes == 2)
      d[1] = (uint8_t) (w >> 8);
  }
};

/* Both launches of launch_window, a block at a time: every thread's stage
 * phase, then (the barrier) every thread's compute phase. */
template < int NT, int NC > static void
run_passes (WindowParams & p)
{
  std::vector < float >h (NT * p.h_term, NAN);
  std::vector < float >in (NC * WIN_H_ROWS * WIN_H_PITCH);
  std::vector < float >tap (NT * WIN_MAX_TAPS);
  std::vector < float >vs (win_v_smem (NT, p.taps_y) / sizeof (float));
  const dim3 hg = win_h_grid (p), vg = win_v_grid (p);

  p.h = h.data ();
  for (unsigned by = 0; by < hg.y; by++)
    for (unsigned bx = 0; bx < hg.x; bx++) {
      std::fill (in.begin (), in.end (), NAN);
      std::fill (tap.begin (), tap.end (), NAN);
      for (int t = 0; t < WIN_H_THREADS; t++)
        win_h_stage < NT, NC > (p, bx, by, t, in.data (), tap.data ());
      for (int t = 0; t < WIN_H_THREADS; t++)
        win_h_compute < NT, NC > (p, bx, by, t, in.data (), tap.data ());
    }

  float *vin = vs.data ();
  float *vtap = vin + NT * (win_v_tile (NT) + p.taps_y) * WIN_V_COLS;
  for (unsigned by = 0; by < vg.y; by++)
    for (unsigned bx = 0; bx < vg.x; bx++) {
      std::fill (vs.begin (), vs.end (), NAN);
      for (int t = 0; t < win_v_threads (NT); t++)
        win_v_stage < NT > (p, bx, by, t, vin, vtap);
      for (int t = 0; t < win_v_threads (NT); t++)
        win_v_compute < NT > (p, bx, by, t, vin, vtap, Store { &p });
    }
  p.h = NULL;
}

typedef struct
{
  const char *name;
  CuconvKernel kernel;
  int radius;
} Filter;

typedef struct
{
  int depth, shift;
} Depth;

/* One case; returns 1 if it failed. */
static int
run_case (const Filter & fl, const Depth & dp, int nc, int w, int h,
    CuconvBorder b, bool band)
{
  const int bytes = dp.depth > 8 ? 2 : 1;
  const int odd = (int) (rnd () % 2);  /* rows start on odd addresses */
  const ptrdiff_t stride = (ptrdiff_t) w * nc * bytes + (rnd () % 5) * bytes
      + odd;
  const size_t size = (size_t) stride * h + 8;
  std::vector < uint8_t > src (size), got (size), want (size);
  CuconvSettings s;
  CuconvFilter *f = new CuconvFilter;
  CuconvPlane pl;
  int fails = 0, off_by_one = 0;

  for (size_t i = 0; i < size; i++)
    src[i] = (uint8_t) rnd ();
  for (size_t i = 0; i < size; i++)
    got[i] = want[i] = (uint8_t) (0xa5 ^ i);

  memset (&s, 0, sizeof (s));
  s.kernel = fl.kernel;
  s.border = b;
  s.radius = fl.radius;
  s.amount = 1.5;
  cuconv_filter_init (f, &s);

  memset (&pl, 0, sizeof (pl));
  pl.width = w;
  pl.height = h;
  pl.n_comp = nc;
  pl.sub_x = pl.sub_y = 1;
  pl.depth = dp.depth;
  pl.shift = dp.shift;
  for (int c = 0; c < nc; c++)
    pl.op[c] = CUCONV_COMP_FILTER;
  pl.src = src.data () + odd;
  pl.src_stride = pl.dst_stride = stride;

  if (!window_takes (pl, *f)) {
    printf ("FAIL %s r=%d: not taken\n", fl.name, fl.radius);
    delete f;
    return 1;
  }
  const int rb = band ? h / 3 : 0, re = band ? h - h / 3 : h;
  WindowParams p;

  pl.dst = got.data () + odd;
  window_params_init (p, pl, *f, rb, re);
  if (f->n_terms == 1 && nc == 1)
    run_passes < 1, 1 > (p);
  else if (f->n_terms == 1)
    run_passes < 1, 2 > (p);
  else if (nc == 1)
    run_passes < 2, 1 > (p);
  else
    run_passes < 2, 2 > (p);
  pl.dst = want.data () + odd;
  cuconv_reference_plane_filter (&pl, f);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * nc; x++) {
      const size_t at = odd + (size_t) y * stride + (size_t) x * bytes;
      const int g = bytes == 1 ? got[at] : got[at] | got[at + 1] << 8;
      const int r = bytes == 1 ? want[at] : want[at] | want[at + 1] << 8;
      const bool in_band = y >= rb && y < re;
      const int d = abs ((g >> dp.shift) - (r >> dp.shift));
      const bool bad = in_band ? d > 1 || (g & ((1 << dp.shift) - 1)) != 0
          : got[at] != (uint8_t) (0xa5 ^ at) || (bytes == 2
          && got[at + 1] != (uint8_t) (0xa5 ^ (at + 1)));

      if (bad && fails++ == 0)
        printf ("  first difference at sample %d of row %d: %d, reference "
            "%d%s\n", x, y, g, r, in_band ? "" : " (outside the band)");
      off_by_one += in_band && d == 1;
    }
  /* the bytes between rows and after the last, untouched */
  for (int y = 0; y < h; y++)
    for (size_t i = (size_t) w * nc * bytes; i < (size_t) stride; i++) {
      const size_t at = odd + (size_t) y * stride + i;
      if (at < size && got[at] != (uint8_t) (0xa5 ^ at))
        fails++;
    }

  if (fails)
    printf ("FAIL %s r=%d depth %d shift %d, %d components, %dx%d border "
        "%d%s: %d samples off by more than 1 or written outside\n", fl.name,
        fl.radius, dp.depth, dp.shift, nc, w, h, b, band ? " band" : "",
        fails);
  delete f;
  return fails != 0;
}

int
main (void)
{
  static const Filter filters[] = {
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 0},
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 1},
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 4},
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 17},
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 36},
    {"gaussian", CUCONV_KERNEL_GAUSSIAN, 64},
    {"box", CUCONV_KERNEL_BOX, 29},
    {"sharpen", CUCONV_KERNEL_SHARPEN, 21},
    {"sobel", CUCONV_KERNEL_SOBEL, 48},
    {"laplacian", CUCONV_KERNEL_LAPLACIAN, 3},
  };
  static const Depth depths[] = { {8, 0}, {16, 0}, {10, 6}, {12, 0} };
  static const int sizes[][2] = {
    {1, 1}, {3, 2}, {17, 9}, {255, 7}, {257, 33}, {300, 131}, {521, 67},
    {97, 300},
  };
  int cases = 0, failed = 0;

  for (const Filter & fl:filters)
    for (const Depth & dp:depths)
      for (auto & z:sizes)
        for (int b = 0; b < CUCONV_BORDER_N; b++) {
          /* the larger sizes at two borders each, to keep the run short */
          if (z[0] * z[1] > 20000 && (b + fl.radius) % 2)
            continue;
          cases++;
          failed += run_case (fl, dp, 1 + cases % 2, z[0], z[1],
              (CuconvBorder) b, cases % 3 == 0);
        }
  printf ("window passes on the CPU: %d cases, %d failed\n", cases, failed);
  return failed != 0;
}
