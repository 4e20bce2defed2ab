/* gst-cudaconvolve: non-local means on the GPU by sums (docs/design.md,
 * "Non-local means"), each thread's phases, callable on the host too
 * (tests/test-nlmeans-sums.cu runs every thread of a launch through them
 * on the CPU against the definition).
 *
 * A block takes a tile of NL_TILE x NL_TILE outputs of one component and
 * stages the tile and its reach (search and patch radii) through the
 * border, as the direct kernel does.  Then, offset by offset of the
 * search window in the definition's order, as the CPU's definition
 * (cuconv_nlmeans_rows) does it: the squared differences of the patch
 * area's samples and theirs at the offset (E, each computed once), their
 * sums along each row over the patch's width (H), and each output's sum
 * down its column over the patch's height, the patch distance: exact
 * integers, so any order gives the same.  Each square is one shared-memory
 * load (the sample at the offset: the other one, the same for every
 * offset, stays in a register), where the direct kernel loads two samples
 * for each of a patch's squares at every output.  The weights and the
 * means are float, accumulated offset by offset in the definition's order
 * and precision.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_NLMEANS_CUH__
#define __CUCONV_NLMEANS_CUH__

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "cuconv.h"
#include "cuconv-border.h"

namespace cuconv {

constexpr int NL_TILE = 16;
constexpr int NL_THREADS = NL_TILE * NL_TILE;
/* the squares' and the row sums' area at the widest patch */
constexpr int NL_E_MAX = (NL_TILE + 2 * CUCONV_MAX_PATCH_RADIUS)
    * (NL_TILE + 2 * CUCONV_MAX_PATCH_RADIUS);
constexpr int NL_E_CELLS = (NL_E_MAX + NL_THREADS - 1) / NL_THREADS;
constexpr int NL_H_CELLS = (NL_TILE * (NL_TILE + 2 * CUCONV_MAX_PATCH_RADIUS)
    + NL_THREADS - 1) / NL_THREADS;

struct NlMeansParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int width, height;            /* the whole plane, for the border */
  int row_begin, row_end;
  int nc, bytes, shift;
  uint32_t mask;                /* 2^depth - 1 */
  uint32_t fill;                /* a FILL sample as it is stored */
  uint8_t op[CUCONV_MAX_COMP];
  int border;
  int sx, sy, px, py;           /* search and patch radii */
  int ex, ey;                   /* their sums: the reach */
  float k;                      /* 1 / (2 sr^2 n), n the patch's samples */
};

/* p for rows [row_begin, row_end) of plane pl filtered by f
 * (cuconv-nlmeans.cu). */
void nlmeans_params_init (NlMeansParams & p, const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end);

/* Rounded float arithmetic, never contracted into an FMA: the
 * definition's. */
__host__ __device__ __forceinline__ float
nl_mul (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fmul_rn (a, b);
#else
  return a * b;
#endif
}

__host__ __device__ __forceinline__ float
nl_add (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn (a, b);
#else
  return a + b;
#endif
}

/* The shared memory of a block: E, then H (Acc each), then the tile's
 * samples (int). */
__host__ __device__ inline int
nl_tile_w (const NlMeansParams & p)
{
  return NL_TILE + 2 * p.ex;
}

__host__ __device__ inline int
nl_e_w (const NlMeansParams & p)
{
  return NL_TILE + 2 * p.px;
}

__host__ __device__ inline int
nl_e_h (const NlMeansParams & p)
{
  return NL_TILE + 2 * p.py;
}

template < typename Acc > __host__ __device__ inline size_t
nl_smem (const NlMeansParams & p)
{
  return sizeof (Acc) * (size_t) (nl_e_w (p) + NL_TILE) * nl_e_h (p)
      + sizeof (int) * (size_t) nl_tile_w (p) * (NL_TILE + 2 * p.ey);
}

/* The raw sample s of a row of `bytes`-byte samples, any alignment. */
__host__ __device__ __forceinline__ uint32_t
nl_word (const uint8_t * row, int s, int bytes)
{
  return bytes == 1 ? row[s] : row[2 * s] | (uint32_t) row[2 * s + 1] << 8;
}

/* Stages, for thread tid of the block of tile (bx, by) and component c,
 * its share of the tile's samples through the border (0 outside for the
 * zero border): tile[r * nl_tile_w + i], plane (x0 - ex + i, y0 - ey +
 * r). */
__host__ __device__ inline void
nl_stage (const NlMeansParams & p, int bx, int by, int c, int tid, int *tile)
{
  const int x0 = bx * NL_TILE, y0 = p.row_begin + by * NL_TILE;
  const int tw = nl_tile_w (p), th = NL_TILE + 2 * p.ey;

  for (int k = tid; k < tw * th; k += NL_THREADS) {
    const int xi = cuconv_border_index ((CuconvBorder) p.border,
        x0 - p.ex + k % tw, p.width);
    const int yi = cuconv_border_index ((CuconvBorder) p.border,
        y0 - p.ey + k / tw, p.height);

    tile[k] = xi < 0 || yi < 0 ? 0 : (int) (nl_word (p.src +
            (size_t) yi * p.src_pitch, xi * p.nc + c, p.bytes) >> p.shift &
        p.mask);
  }
}

/* What a thread keeps from offset to offset: the squares it computes
 * (where in E, the sample of the patch area's own, where the other lies
 * at offset 0 in the tile), the row sums (where in H, where the row's
 * squares start in E), and its output's sums. */
struct NlThread
{
  int e_n, h_n;
  int e_at[NL_E_CELLS], a[NL_E_CELLS], b_at[NL_E_CELLS];
  int h_at[NL_H_CELLS], h_e[NL_H_CELLS];
  int q_at;                     /* the output's sample at offset 0 */
  float num, den;
};

/* Sets up t for thread tid once the tile is staged. */
__host__ __device__ inline void
nl_thread_init (const NlMeansParams & p, int tid, const int *tile,
    NlThread & t)
{
  const int tw = nl_tile_w (p), ew = nl_e_w (p), eh = nl_e_h (p);

  t.e_n = 0;
  for (int k = tid; k < ew * eh; k += NL_THREADS) {
    /* E cell (u, v): plane (x0 - px + u, y0 - py + v) */
    const int u = k % ew, v = k / ew;
    const int at = (v + p.sy) * tw + u + p.sx;

    t.e_at[t.e_n] = k;
    t.a[t.e_n] = tile[at];
    t.b_at[t.e_n++] = at;
  }
  t.h_n = 0;
  for (int k = tid; k < NL_TILE * eh; k += NL_THREADS) {
    t.h_at[t.h_n] = k;
    t.h_e[t.h_n++] = k / NL_TILE * ew + k % NL_TILE;
  }
  t.q_at = (tid / NL_TILE + p.ey) * tw + tid % NL_TILE + p.ex;
  t.num = t.den = 0.0f;
}

/* The squares at offset d (j nl_tile_w + i) into E. */
template < typename Acc > __host__ __device__ __forceinline__ void
nl_squares (const NlThread & t, int d, const int *tile, Acc * e)
{
  for (int n = 0; n < NL_E_CELLS; n++)
    if (n < t.e_n) {
      const int diff = t.a[n] - tile[t.b_at[n] + d];

      /* |diff| < 2^16: its square fits 32 bits unsigned */
      e[t.e_at[n]] = (Acc) ((unsigned) diff * (unsigned) diff);
    }
}

/* The squares' sums along each row over the patch's width, into H. */
template < typename Acc > __host__ __device__ __forceinline__ void
nl_rows (const NlMeansParams & p, const NlThread & t, const Acc * e, Acc * h)
{
  for (int n = 0; n < NL_H_CELLS; n++)
    if (n < t.h_n) {
      Acc s = 0;

      for (int i = 0; i <= 2 * p.px; i++)
        s += e[t.h_e[n] + i];
      h[t.h_at[n]] = s;
    }
}

/* Thread tid's output at offset d: its patch distance down its column of
 * H, its weight, the sums. */
template < typename Acc > __host__ __device__ __forceinline__ void
nl_weigh (const NlMeansParams & p, int tid, NlThread & t, int d,
    const Acc * h, const int *tile)
{
  const Acc *col = h + tid;
  Acc dist = 0;

  for (int j = 0; j <= 2 * p.py; j++)
    dist += col[j * NL_TILE];
  const float w = expf (-nl_mul ((float) dist, p.k));

  t.num = nl_add (t.num, nl_mul (w, (float) tile[t.q_at + d]));
  t.den = nl_add (t.den, w);
}

}                               /* namespace cuconv */

#endif /* __CUCONV_NLMEANS_CUH__ */
