/* gst-cudaconvolve: non-local means by sums (cuda/kernels/
 * cuconv-nlmeans.cuh) run on the CPU, every thread of every block through
 * the kernel's own phases in the kernel's order (stage; barrier; for each
 * offset: squares, barrier, row sums, barrier, weights), against the
 * definition (cuconv_reference_plane_filter, which runs
 * cuconv_nlmeans_rows).  The shared memory starts as garbage, so a read
 * of what no thread wrote shows.
 *
 * Seeded random planes of odd sizes, 8, 10 (above a shift of 6), 12 and 16
 * bits, 1 to 4 components with filtered, copied and filled ones, every
 * border, search radii 0 to 7 and patches 0 to 8 (the reach up to 16 + 8),
 * whole planes and bands.  Tolerance: +-1 LSB on filtered samples (the
 * GPU's expf is not the host's); copied and filled samples exact; rows
 * outside the band untouched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "xorshift.h"

#include "cuconv.h"
#include "cuconv-kernels.cuh"
#include "cuconv-nlmeans.cuh"

using namespace cuconv;

static uint32_t rng = 0x2468aceu;

static uint32_t
rnd (void)
{
  return xorshift32 (&rng);
}

/* One launch of nlmeans_sums <Acc>, a block at a time. */
template < typename Acc > static void
run_sums (const NlMeansParams & p)
{
  const int gx = (p.width + NL_TILE - 1) / NL_TILE;
  const int gy = (p.row_end - p.row_begin + NL_TILE - 1) / NL_TILE;
  std::vector < unsigned char >smem (nl_smem < Acc > (p) + 16);
  std::vector < NlThread > t (NL_THREADS);

  Acc *e = (Acc *) smem.data ();
  Acc *h = e + nl_e_w (p) * nl_e_h (p);
  int *tile = (int *) (h + NL_TILE * nl_e_h (p));
  const int tw = nl_tile_w (p);

  for (int c = 0; c < p.nc; c++)
    for (int by = 0; by < gy; by++)
      for (int bx = 0; bx < gx; bx++) {
        for (auto & b:smem)
          b = (unsigned char) rnd ();
        if (p.op[c] != CUCONV_COMP_FILTER) {
          for (int tid = 0; tid < NL_THREADS; tid++) {
            const int x = bx * NL_TILE + tid % NL_TILE;
            const int y = p.row_begin + by * NL_TILE + tid / NL_TILE;
            if (x >= p.width || y >= p.row_end)
              continue;
            const uint32_t w = p.op[c] == CUCONV_COMP_COPY ?
                nl_word (p.src + y * p.src_pitch, x * p.nc + c, p.bytes) :
                p.fill;
            uint8_t *d = p.dst + y * p.dst_pitch + (x * p.nc + c) * p.bytes;
            d[0] = (uint8_t) w;
            if (p.bytes == 2)
              d[1] = (uint8_t) (w >> 8);
          }
          continue;
        }
        for (int tid = 0; tid < NL_THREADS; tid++)
          nl_stage (p, bx, by, c, tid, tile);
        for (int tid = 0; tid < NL_THREADS; tid++)
          nl_thread_init (p, tid, tile, t[tid]);
        for (int j = -p.sy; j <= p.sy; j++)
          for (int i = -p.sx; i <= p.sx; i++) {
            for (int tid = 0; tid < NL_THREADS; tid++)
              nl_squares < Acc > (t[tid], j * tw + i, tile, e);
            for (int tid = 0; tid < NL_THREADS; tid++)
              nl_rows < Acc > (p, t[tid], e, h);
            for (int tid = 0; tid < NL_THREADS; tid++) {
              const int x = bx * NL_TILE + tid % NL_TILE;
              const int y = p.row_begin + by * NL_TILE + tid / NL_TILE;
              if (x < p.width && y < p.row_end)
                nl_weigh < Acc > (p, tid, t[tid], j * tw + i, h, tile);
            }
          }
        for (int tid = 0; tid < NL_THREADS; tid++) {
          const int x = bx * NL_TILE + tid % NL_TILE;
          const int y = p.row_begin + by * NL_TILE + tid / NL_TILE;
          if (x >= p.width || y >= p.row_end)
            continue;
          const uint32_t w = cuconv_round_sat (t[tid].num / t[tid].den,
              p.mask) << p.shift;
          uint8_t *d = p.dst + y * p.dst_pitch + (x * p.nc + c) * p.bytes;
          d[0] = (uint8_t) w;
          if (p.bytes == 2)
            d[1] = (uint8_t) (w >> 8);
        }
      }
}

typedef struct
{
  int depth, shift;
} Depth;

/* One case; returns 1 if it failed. */
static int
run_case (int search, int patch, const Depth & dp, int nc, int w, int h,
    CuconvBorder b, bool band)
{
  const int bytes = dp.depth > 8 ? 2 : 1;
  const ptrdiff_t stride = (ptrdiff_t) w * nc * bytes + (rnd () % 3) * bytes;
  const size_t size = (size_t) stride * h;
  std::vector < uint8_t > src (size), got (size), want (size);
  CuconvFilter *f = new CuconvFilter;
  CuconvSettings s;
  CuconvPlane pl;
  NlMeansParams p;
  int fails = 0;

  for (auto & v:src)
    v = (uint8_t) rnd ();
  /* a smooth part, so that the weights are not all 1 or all 0 */
  for (size_t i = 0; i < size / 2; i++)
    src[i] = (uint8_t) (src[i] % 16 + 100);
  for (size_t i = 0; i < size; i++)
    got[i] = want[i] = (uint8_t) (0x5a ^ i);

  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_NLMEANS;
  s.border = b;
  s.radius = search;
  s.patch_radius = patch;
  s.sigma_range = 5.0 + rnd () % 30;
  cuconv_filter_init (f, &s);

  memset (&pl, 0, sizeof (pl));
  pl.width = w;
  pl.height = h;
  pl.n_comp = nc;
  pl.sub_x = pl.sub_y = 1;
  pl.depth = dp.depth;
  pl.shift = dp.shift;
  pl.fill = 3;
  for (int c = 0; c < nc; c++)
    pl.op[c] = c == 0 || nc < 3 ? CUCONV_COMP_FILTER : c == 1 ?
        CUCONV_COMP_COPY : c == 2 ? CUCONV_COMP_FILTER : CUCONV_COMP_FILL;
  pl.src = src.data ();
  pl.src_stride = pl.dst_stride = stride;

  const int rb = band ? h / 3 : 0, re = band ? h - h / 3 : h;
  pl.dst = got.data ();
  nlmeans_params_init (p, pl, *f, rb, re);
  if (dp.depth > 10)
    run_sums < unsigned long long > (p);
  else
    run_sums < unsigned > (p);
  pl.dst = want.data ();
  cuconv_reference_plane_filter (&pl, f);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * nc; x++) {
      const size_t at = (size_t) y * stride + (size_t) x * bytes;
      const int g = bytes == 1 ? got[at] : got[at] | got[at + 1] << 8;
      const int r = bytes == 1 ? want[at] : want[at] | want[at + 1] << 8;
      const bool filtered = pl.op[x % nc] == CUCONV_COMP_FILTER;
      const bool in_band = y >= rb && y < re;
      const bool bad = !in_band ? got[at] != (uint8_t) (0x5a ^ at)
          : filtered ? abs ((g >> dp.shift) - (r >> dp.shift)) > 1
          || (g & ((1 << dp.shift) - 1)) != 0 : g != r;

      if (bad && fails++ == 0)
        printf ("  first difference at sample %d of row %d: %d, "
            "reference %d%s\n", x, y, g, r, in_band ? "" : " (outside)");
    }
  if (fails)
    printf ("FAIL search %d patch %d depth %d shift %d, %d components, "
        "%dx%d border %d%s: %d samples\n", search, patch, dp.depth,
        dp.shift, nc, w, h, b, band ? " band" : "", fails);
  delete f;
  return fails != 0;
}

int
main (void)
{
  static const int windows[][2] = {
    {0, 0}, {1, 0}, {1, 1}, {3, 2}, {2, 3}, {7, 1}, {3, 8}, {16, 8},
  };
  static const Depth depths[] = { {8, 0}, {10, 6}, {12, 0}, {16, 0} };
  static const int sizes[][2] = { {1, 1}, {5, 3}, {17, 9}, {41, 37} };
  int cases = 0, failed = 0;

  for (auto & wp:windows)
    for (const Depth & dp:depths)
      for (auto & z:sizes)
        for (int b = 0; b < CUCONV_BORDER_N; b++) {
          const int nc = 1 + (cases % 4);

          /* the widest reach on the smaller sizes only: the definition's
           * cost grows with it */
          if (wp[0] == 16 && z[0] > 17)
            continue;
          cases++;
          failed += run_case (wp[0], wp[1], dp, nc, z[0], z[1],
              (CuconvBorder) b, cases % 3 == 0);
        }
  printf ("non-local means by sums on the CPU: %d cases, %d failed\n", cases,
      failed);
  return failed != 0;
}
