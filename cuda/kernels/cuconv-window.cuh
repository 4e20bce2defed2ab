/* gst-cudaconvolve: the register-window passes (docs/design.md, "Wide
 * filters in register windows"): one separable term or two, of radius up
 * to CUCONV_TILE_MAX_RADIUS, on planes of one component or two
 * interleaved (NV12's chroma), in two passes
 * through a float plane as on the global path (cuconv-global.cu), with
 * tap loops that do nothing but load a sample and multiply-add.
 *
 * The taps of a direction are padded with zeros to whole groups of
 * WIN_OUT.  A thread makes WIN_OUT outputs (adjacent pixels of a row in
 * the horizontal pass, adjacent rows of a column in the vertical one)
 * from a window of WIN_OUT staged samples held in registers: each tap
 * loads one sample from shared memory, which feeds WIN_OUT FMAs.  A group
 * of taps is one period of the window, so its slots are compile-time
 * names, and no tap has a test.  The taps are read from shared memory
 * four at a time (the same address for every lane: one broadcast).
 *
 * Sums are float, in the reference's order (tap 0 first), the horizontal
 * pass first: as the global path sums up to CUCONV_TILE_MAX_TAPS taps.
 *
 * Each pass is written as the phases of one thread, stage and then, after
 * a barrier, compute, callable on the host too: tests/test-window.cu runs
 * every thread of a launch through them on the CPU against the reference,
 * so that their indexing is checked on machines without a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_WINDOW_CUH__
#define __CUCONV_WINDOW_CUH__

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "cuconv.h"
#include "cuconv-border.h"

namespace cuconv {

/* Device loads through the read-only cache, and loops unrolled; on the
 * host, plain loads, and no pragma the host compiler would not know. */
#ifdef __CUDA_ARCH__
#define WIN_LDG(p) __ldg (p)
#define WIN_UNROLL _Pragma ("unroll")
#else
#define WIN_LDG(p) (*(p))
#define WIN_UNROLL
#endif

constexpr int WIN_OUT = 8;      /* outputs a thread; taps a group */
constexpr int WIN_MAX_RADIUS = 64;      /* CUCONV_TILE_MAX_RADIUS */
constexpr int WIN_MAX_TAPS = (2 * WIN_MAX_RADIUS + 1 + WIN_OUT - 1)
    / WIN_OUT * WIN_OUT;        /* 136 */

/* Horizontal pass: a warp a row, its lanes WIN_OUT pixels each (every
 * component), so a block takes WIN_H_TILE pixels of WIN_H_ROWS rows.  A
 * row's staged samples, a row a component, take one word of padding
 * after every WIN_OUT, so that lane l's window, which starts at sample
 * WIN_OUT l, starts in bank 9 l mod 32: the 32 lanes' loads fall in 32
 * banks. */
constexpr int WIN_H_ROWS = 8;
constexpr int WIN_H_THREADS = 32 * WIN_H_ROWS;
constexpr int WIN_H_TILE = 32 * WIN_OUT;
constexpr int WIN_H_SPAN = WIN_H_TILE + WIN_MAX_TAPS;   /* samples staged */
constexpr int WIN_H_PITCH = WIN_H_SPAN + WIN_H_SPAN / WIN_OUT;
constexpr int WIN_MAX_COMP = 2;

/* Vertical pass: a lane a column, a warp WIN_OUT rows of it, so a block
 * of win_v_warps (nt) warps takes win_v_tile (nt) rows of 32 columns; it stages
 * WIN_V_TILE + taps rows of them (dynamic shared memory: win_v_smem). */
constexpr int WIN_V_COLS = 32;

__host__ __device__ constexpr int
win_v_warps (int nt)
{
  return nt == 1 ? 16 : 8;
}

__host__ __device__ constexpr int
win_v_tile (int nt)
{
  return win_v_warps (nt) * WIN_OUT;
}

__host__ __device__ constexpr int
win_v_threads (int nt)
{
  return 32 * win_v_warps (nt);
}

/* The bytes of staged rows (and the taps) a vertical block of nt terms
 * needs for taps (padded) taps. */
__host__ __device__ constexpr int
win_v_smem (int nt, int taps)
{
  return (int) sizeof (float) * nt * ((win_v_tile (nt) + taps) * WIN_V_COLS
      + taps);
}

/* Padded sample index j of a staged horizontal row. */
__host__ __device__ constexpr int
win_pad (int j)
{
  return j + j / WIN_OUT;
}

/* One plane's passes.  The float plane h holds, for each term, the
 * horizontal pass of the plane rows [h_lo, h_lo + h_rows), its samples
 * interleaved as the plane's, h_pitch floats a row (a multiple of 32). */
struct WindowParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;  /* bytes */
  int width, height;            /* of the whole plane, for the border */
  int nc;                       /* interleaved components: 1 or 2 */
  int ws;                       /* samples a row: width * nc */
  int row_begin, row_end;       /* the band written */
  int border;
  int bytes;                    /* of a sample: 1 or 2 */
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask;                /* (1 << depth) - 1: also the saturation */
  int combine;
  float amount;
  int nt;                       /* terms: 1 or 2 */
  int rx, ry;                   /* the widest term's radii */
  int taps_x, taps_y;           /* 2 r + 1 rounded up to WIN_OUT */
  float *h;
  size_t h_pitch;               /* floats */
  size_t h_term;                /* floats: h_rows * h_pitch */
  int h_lo, h_rows;
  /* [term][tap]: the widest term's taps, zero past 2 r + 1 and where a
   * term is narrower (padded to the widest radius) */
  float kx[2][WIN_MAX_TAPS];
  float ky[2][WIN_MAX_TAPS];
};

/* p for rows [row_begin, row_end) of plane pl filtered by f, where
 * window_takes (cuconv-kernels.cuh): everything but h (cuconv-window.cu). */
void window_params_init (WindowParams & p, const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end);

/* The passes' grids: blocks of WIN_H_THREADS over the rows of h, and of
 * win_v_threads (p.nt) over the band. */
static inline dim3
win_h_grid (const WindowParams & p)
{
  return dim3 ((p.width + WIN_H_TILE - 1) / WIN_H_TILE,
      (p.h_rows + WIN_H_ROWS - 1) / WIN_H_ROWS);
}

static inline dim3
win_v_grid (const WindowParams & p)
{
  const int vt = win_v_tile (p.nt);

  return dim3 ((p.ws + WIN_V_COLS - 1) / WIN_V_COLS,
      (p.row_end - p.row_begin + vt - 1) / vt);
}

/* The value of a raw sample (a byte, or a little-endian 16-bit word). */
__host__ __device__ __forceinline__ float
win_value (const WindowParams & p, uint32_t raw)
{
  return (float) ((raw >> p.shift) & p.mask);
}

/* Sample xi (a component of a pixel) of row `row`, any alignment. */
__host__ __device__ __forceinline__ float
win_sample (const WindowParams & p, const uint8_t * row, int xi)
{
  const uint8_t *s = row + (size_t) xi * p.bytes;

  return win_value (p, p.bytes == 1 ? WIN_LDG (s) : WIN_LDG (s) |
      (uint32_t) WIN_LDG (s + 1) << 8);
}

/* Horizontal pass ------------------------------------------------------- */

/* Stages, for thread tid of block (bx, by): its share of the taps (NT
 * terms, tap[m * WIN_MAX_TAPS + t]), and its warp's row of the tile: the
 * samples of the pixels x0 - rx + j, j < WIN_H_TILE + taps_x, through
 * the border (zero outside for the zero border), as floats, component c
 * at in[(c WIN_H_ROWS + warp) WIN_H_PITCH + win_pad (j)].  Rows inside
 * the plane are read a 32-bit word a lane where the words lie inside the
 * row. */
template < int NT, int NC > __host__ __device__ __forceinline__ void
win_h_stage (const WindowParams & p, int bx, int by, int tid, float *in,
    float *tap)
{
  const int lane = tid % 32, warp = tid / 32;
  const int hr = by * WIN_H_ROWS + warp;
  const int a = bx * WIN_H_TILE - p.rx;   /* the first pixel staged */
  const int n = (WIN_H_TILE + p.taps_x) * NC;   /* samples staged */

  for (int e = tid; e < NT * p.taps_x; e += WIN_H_THREADS) {
    const int m = e / p.taps_x, t = e - m * p.taps_x;
    tap[m * WIN_MAX_TAPS + t] = p.kx[m][t];
  }
  if (hr >= p.h_rows)
    return;

  const uint8_t *row = p.src + (size_t) (p.h_lo + hr) * p.src_pitch;
  auto put = [&](int k, float v) {
    /* sample k of those staged: pixel k / NC, component k % NC */
    in[(k % NC * WIN_H_ROWS + warp) * WIN_H_PITCH + win_pad (k / NC)] = v;
  };
  const int per_word = 4 / p.bytes;
  /* the words that hold samples a NC .. a NC + n - 1 */
  const uintptr_t first = (uintptr_t) (row + (ptrdiff_t) a * NC * p.bytes);
  const int skip = (int) (first % 4) / p.bytes; /* samples before them */
  const int words = (skip + n + per_word - 1) / per_word;

  if (a * NC - skip >= 0 && a * NC - skip + words * per_word <= p.ws
      && (first % 4) % p.bytes == 0) {
    const uint32_t *w = (const uint32_t *) (first - first % 4);

    for (int q = lane; q < words; q += 32) {
      const uint32_t v = WIN_LDG (w + q);

      for (int i = 0; i < per_word; i++) {
        const int k = q * per_word + i - skip;
        if (k >= 0 && k < n)
          put (k, win_value (p, v >> (8 * p.bytes * i)));
      }
    }
    return;
  }
  for (int k = lane; k < n; k += 32) {
    const int x = a + k / NC;
    const int xi = x >= 0 && x < p.width ? x :
        cuconv_border_index ((CuconvBorder) p.border, x, p.width);

    put (k, xi < 0 ? 0.0f : win_sample (p, row, xi * NC + k % NC));
  }
}

/* One group of taps: k[m * stride + u] is tap u of the group for term
 * m, applied to the WIN_OUT outputs acc[m][o] from the window w, where
 * slot (u + o) % WIN_OUT holds the sample output o reads at tap u; each
 * slot is refilled, once read for the last time, with the sample WIN_OUT
 * further, next (u). */
template < int NT, typename N > __host__ __device__ __forceinline__ void
win_group (const float *k, int stride, float (&acc)[NT][WIN_OUT],
    float (&w)[WIN_OUT], N next)
{
  float kv[NT][WIN_OUT];

WIN_UNROLL
  for (int m = 0; m < NT; m++) {
#ifdef __CUDA_ARCH__
    const float4 *v = (const float4 *) (k + m * stride);
WIN_UNROLL
    for (int i = 0; i < WIN_OUT / 4; i++) {
      const float4 q = v[i];
      kv[m][4 * i] = q.x;
      kv[m][4 * i + 1] = q.y;
      kv[m][4 * i + 2] = q.z;
      kv[m][4 * i + 3] = q.w;
    }
#else
    for (int u = 0; u < WIN_OUT; u++)
      kv[m][u] = k[m * stride + u];
#endif
  }
WIN_UNROLL
  for (int u = 0; u < WIN_OUT; u++) {
WIN_UNROLL
    for (int m = 0; m < NT; m++)
WIN_UNROLL
      for (int o = 0; o < WIN_OUT; o++)
        acc[m][o] = fmaf (kv[m][u], w[(u + o) % WIN_OUT], acc[m][o]);
    w[u] = next (u);
  }
}

/* Computes, for thread tid of block (bx, by), the WIN_OUT pixels x0 + 8
 * lane + o of its warp's row into h, every component. */
template < int NT, int NC > __host__ __device__ __forceinline__ void
win_h_compute (const WindowParams & p, int bx, int by, int tid,
    const float *in, const float *tap)
{
  const int lane = tid % 32, warp = tid / 32;
  const int hr = by * WIN_H_ROWS + warp;
  const int x = bx * WIN_H_TILE + lane * WIN_OUT;
  float acc[NC][NT][WIN_OUT];

  if (hr >= p.h_rows || x >= p.width)
    return;
WIN_UNROLL
  for (int c = 0; c < NC; c++) {
    /* the window of lane l starts at staged sample 8 l: padded, 9 l */
    const float *s = in + (c * WIN_H_ROWS + warp) * WIN_H_PITCH
        + win_pad (lane * WIN_OUT);
    float w[WIN_OUT];

WIN_UNROLL
    for (int o = 0; o < WIN_OUT; o++) {
      w[o] = s[o];
WIN_UNROLL
      for (int m = 0; m < NT; m++)
        acc[c][m][o] = 0.0f;
    }
    for (int g = 0; g < p.taps_x / WIN_OUT; g++) {
      s += WIN_OUT + 1;         /* the next group's samples, padded */
      win_group < NT > (tap + g * WIN_OUT, WIN_MAX_TAPS, acc[c], w,
          [&](int u) {
            return s[u];
          });
    }
  }

  for (int m = 0; m < NT; m++) {
    float *h = p.h + m * p.h_term + (size_t) hr * p.h_pitch + x * NC;
    if (x + WIN_OUT <= p.width) {
#ifdef __CUDA_ARCH__
      /* 32-byte aligned: h_pitch and x are multiples of WIN_OUT */
      float4 *h4 = (float4 *) h;
WIN_UNROLL
      for (int i = 0; i < WIN_OUT * NC / 4; i++) {
        const int e = 4 * i;    /* samples e .. e + 3 of the thread's */
        h4[i] = make_float4 (acc[e % NC][m][e / NC],
            acc[(e + 1) % NC][m][(e + 1) / NC],
            acc[(e + 2) % NC][m][(e + 2) / NC],
            acc[(e + 3) % NC][m][(e + 3) / NC]);
      }
#else
      for (int e = 0; e < WIN_OUT * NC; e++)
        h[e] = acc[e % NC][m][e / NC];
#endif
    } else {
      for (int e = 0; e < WIN_OUT * NC && x + e / NC < p.width; e++)
        h[e] = acc[e % NC][m][e / NC];
    }
  }
}

/* Vertical pass --------------------------------------------------------- */

/* Stages, for thread tid of block (bx, by) of NT terms: its share of the
 * taps (at tap[m * taps_y + t]) and of the rows y0 - ry + j, j < tile +
 * taps_y, of the block's 32 columns of samples, row j of term m at
 * in[(m (tile + taps_y) + j) 32 + lane]; rows outside h (only the outputs
 * past the band read them) and samples past the row read 0. */
template < int NT > __host__ __device__ __forceinline__ void
win_v_stage (const WindowParams & p, int bx, int by, int tid, float *in,
    float *tap)
{
  constexpr int TILE = win_v_tile (NT), WARPS = win_v_warps (NT);
  const int lane = tid % 32, warp = tid / 32;
  const int s = bx * WIN_V_COLS + lane;
  const int y0 = p.row_begin + by * TILE;
  const int span = TILE + p.taps_y;

  for (int e = tid; e < NT * p.taps_y; e += win_v_threads (NT)) {
    const int m = e / p.taps_y, t = e - m * p.taps_y;
    tap[e] = p.ky[m][t];
  }
  for (int j = warp; j < span; j += WARPS) {
    const int v = y0 - p.ry + j;
    const int y = v >= 0 && v < p.height ? v :
        cuconv_border_index ((CuconvBorder) p.border, v, p.height);
    const int hr = y - p.h_lo;
    const bool inside = y >= 0 && hr >= 0 && hr < p.h_rows && s < p.ws;

WIN_UNROLL
    for (int m = 0; m < NT; m++)
      in[(m * span + j) * WIN_V_COLS + lane] = inside ?
          WIN_LDG (p.h + m * p.h_term + (size_t) hr * p.h_pitch + s) : 0.0f;
  }
}

/* Computes, for thread tid of block (bx, by), the WIN_OUT rows y0 + 8
 * warp + o of its column, and hands each output's sums to put (row,
 * column, t0, t1), which combines, rounds and stores them. */
template < int NT, typename P > __host__ __device__ __forceinline__ void
win_v_compute (const WindowParams & p, int bx, int by, int tid,
    const float *in, const float *tap, P put)
{
  constexpr int TILE = win_v_tile (NT);
  const int lane = tid % 32, warp = tid / 32;
  const int s = bx * WIN_V_COLS + lane;
  const int y = p.row_begin + by * TILE + warp * WIN_OUT;
  const int span = TILE + p.taps_y;
  float acc[NT][1][WIN_OUT], w[NT][WIN_OUT];

  if (s >= p.ws || y >= p.row_end)
    return;
WIN_UNROLL
  for (int m = 0; m < NT; m++) {
WIN_UNROLL
    for (int o = 0; o < WIN_OUT; o++) {
      acc[m][0][o] = 0.0f;
      w[m][o] = in[(m * span + warp * WIN_OUT + o) * WIN_V_COLS + lane];
    }
  }
  for (int g = 0; g < p.taps_y / WIN_OUT; g++) {
    const int next = warp * WIN_OUT + (g + 1) * WIN_OUT;
    /* each term its own window: the terms' planes differ */
WIN_UNROLL
    for (int m = 0; m < NT; m++)
      win_group < 1 > (tap + m * p.taps_y + g * WIN_OUT, 0, acc[m], w[m],
          [&](int u) {
            return in[(m * span + next + u) * WIN_V_COLS + lane];
          });
  }
  for (int o = 0; o < WIN_OUT && y + o < p.row_end; o++)
    put (y + o, s, acc[0][0][o], acc[NT - 1][0][o]);
}

}                               /* namespace cuconv */

#endif /* __CUCONV_WINDOW_CUH__ */
