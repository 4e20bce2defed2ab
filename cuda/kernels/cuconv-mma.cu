/* gst-cudaconvolve: the tensor-core blur (docs/design.md, "The tensor-core
 * kernel"): a separable blur of 8-bit samples, one or two interleaved
 * components, reach rx * nc and ry up to MMA_MAX_REACH, as products of
 * the samples with banded (Toeplitz) tap matrices on mma.sync (sm_80 and
 * newer).
 *
 * A warp owns a strip of 16 output samples across and a band of rows
 * below them, and walks down it 8 rows (a tile) at a time, in registers:
 * only the tap tables pass through shared memory, once, at the start.
 *
 *  - Horizontal: the tile's filtered rows, transposed (16 samples x 8
 *    rows), are one m16n8k16 product per 16 window samples (KS of them):
 *    A = the taps, Toeplitz, built once; B = the tile's window, which each
 *    thread loads as one 8- or 16-byte word of its row (the k order is
 *    permuted so that a thread's k slots are adjacent bytes), as halves
 *    1024 + byte (a byte permute, no conversion; the bias of the sums
 *    takes the 1024 back, and 128 more so that the sums fit the halves'
 *    finer steps).
 *  - Vertical: the horizontal product's accumulators are, converted to
 *    halves, exactly the B fragments of an m16n8k8 product over those 8
 *    rows (two of 8 samples across).  Each tile feeds the 16-row output
 *    blocks whose window it lies in: 2 + 2 VA tiles make a block, VA tiles
 *    of 8 rows above and below (ry <= 8 VA).
 *
 * Precision: the samples are exact in halves, the taps rounded to halves
 * (relative error 2^-11), the horizontal sums rounded to halves (at most
 * 1/32 off, after the - 128), the products summed in FP32: at most
 * 255 * 2^-11 * 2 + 1/32 < 0.29 from the exact sum, within the +-1 of the
 * contract (docs/semantics.md).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <utility>

#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int MMA_WARPS = 4;    /* strips a block, side by side */
constexpr int MMA_THREADS = 32 * MMA_WARPS;
constexpr int MMA_STRIP = 16;   /* output samples across a warp */

/* The widest reach, rx * nc and ry, the kernel takes. */
constexpr int MMA_MAX_REACH = 64;

/* A strip's window starts `align`-aligned (the lanes' window words):
 * this many samples before its first output's reach. */
__host__ __device__ constexpr int
mma_lead (int reach, int align)
{
  return (align - reach % align) % align;
}

/* The taps as the lanes' A fragments read them, built on the host for
 * each launch: word i of a table holds taps d and d + 1 as halves
 * (d = i - TAP0; 0 outside the filter), so that a lane finds each of
 * its fragment words with one indexed load (from the block's copies in
 * shared memory, MmaTables).  The biases are 4 words each, one for each
 * word of an accumulator.  A lane's words lie from 4 KS + 14 (the
 * window's lead and the fragment's rows) below tap 0 across to 8 VA + 15
 * below it down (the apron tiles of the smallest ry a VA serves), and up
 * to 16 KS and 16 VA + 16 above it. */
__host__ __device__ constexpr int
mma_tap0 (int ks, int va)
{
  const int below = 4 * ks + 16 > 8 * va + 16 ? 4 * ks + 16 : 8 * va + 16;

  return below > 32 ? below : 32;
}

template < int KS, int VA > struct MmaTaps
{
  static constexpr int TAP0 = mma_tap0 (KS, VA);
  float bias_h[4];              /* - 1024 sum (taps) - 128 */
  float bias_v[4];              /* 128 sum (taps) + 0.5: rounding folded in */
  /* horizontal: output sample m reads window sample m + e + d, d = nc j */
  uint32_t h[TAP0 + 16 * KS];
  /* vertical: output row m reads row m - ry + d, d = j */
  uint32_t v[TAP0 + 16 * VA + 16];
};

/* Two floats as halves, lo in the low bits. */
__device__ __forceinline__ uint32_t
half2_bits (float lo, float hi)
{
  const __half2 h = __floats2half2_rn (lo, hi);
  return *(const uint32_t *) &h;
}

/* d = a * b + c: m16n8k16, halves in, FP32 sums. */
__device__ __forceinline__ void
mma_k16 (float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
    const float (&c)[4])
{
#if __CUDA_ARCH__ >= 800
  asm ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f" (d[0]), "=f" (d[1]), "=f" (d[2]), "=f" (d[3])
      : "r" (a[0]), "r" (a[1]), "r" (a[2]), "r" (a[3]), "r" (b0), "r" (b1),
      "f" (c[0]), "f" (c[1]), "f" (c[2]), "f" (c[3]));
#endif
}

/* d = a * b + c: m16n8k8. */
__device__ __forceinline__ void
mma_k8 (float (&d)[4], const uint32_t (&a)[2], uint32_t b,
    const float (&c)[4])
{
#if __CUDA_ARCH__ >= 800
  asm ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
      : "=f" (d[0]), "=f" (d[1]), "=f" (d[2]), "=f" (d[3])
      : "r" (a[0]), "r" (a[1]), "r" (b),
      "f" (c[0]), "f" (c[1]), "f" (c[2]), "f" (c[3]));
#endif
}

/* The tap tables in shared memory, twice: a lane's fragment words are at
 * different indices, which constant memory would serialise; and where a
 * fragment holds the same word twice (or an accumulator the same bias
 * four times), it reads them from different addresses, so that the
 * compiler keeps each in the register the product reads instead of
 * copying one value there before every product. */
template < int KS, int VA > struct MmaTables
{
  MmaTaps < KS, VA > copy[2];
};

/* Copies tb into both copies of t, with the whole block.  Each warp
 * copies a share of the words, up to 64 at a time: all their loads issued
 * at once (constant memory pays a miss once, not once a word) and every
 * lane reading the same word, which constant memory broadcasts (a word a
 * lane would be read one after the other); lane i % 32 stores word i. */
template < int KS, int VA > __device__ __forceinline__ void
mma_tables_load (MmaTables < KS, VA > &t, const MmaTaps < KS, VA > &tb)
{
  constexpr int N = sizeof (MmaTaps < KS, VA >) / 4;
  constexpr int SHARE = (N + MMA_WARPS - 1) / MMA_WARPS;
  constexpr int CHUNK = SHARE < 64 ? SHARE : 64;
  const uint32_t *src = (const uint32_t *) &tb;
  uint32_t *dst0 = (uint32_t *) &t.copy[0], *dst1 = (uint32_t *) &t.copy[1];
  const int first = threadIdx.x / 32 * SHARE, lane = threadIdx.x % 32;

#pragma unroll 1
  for (int c = first; c < first + SHARE; c += CHUNK) {
    uint32_t v[CHUNK];

#pragma unroll
    for (int i = 0; i < CHUNK; i++)
      v[i] = c + i < first + SHARE && c + i < N ? src[c + i] : 0u;
#pragma unroll
    for (int i = 0; i < CHUNK; i++)
      if (lane == i % 32 && c + i < first + SHARE && c + i < N) {
        dst0[c + i] = v[i];
        dst1[c + i] = v[i];
      }
  }
}

/* v, which the compiler may no longer recompute from its sources: the
 * walk's lane values stay in registers instead of being derived from
 * threadIdx (a slow special register read) in every iteration. */
__device__ __forceinline__ int
pinned (int v)
{
  asm volatile ("mov.b32 %0, %0;" : "+r" (v));
  return v;
}

/* A lane's share of the tap matrices.  KS k-steps of 16 window samples
 * across; 2 + 2 VA tiles of 8 rows a block.  Lane (g, t) = (lane / 4,
 * lane % 4) holds, as m16n8k16 and m16n8k8 A fragments do, rows g and
 * g + 8 of a matrix, and the columns of its own window bytes. */
template < int KS, int VA > struct MmaFragments
{
  static constexpr int NV = 2 + 2 * VA;
  uint32_t h[KS][4];            /* output sample x window sample */
  uint32_t v[NV][2];            /* output row x row of tile i */

  /* e: window samples left of the first output's reach.  Row m of the
   * horizontal matrix is output sample pi (m) of the strip: pi (2u + i) =
   * 4u + i, pi (8 + 2u + i) = 4u + 2 + i (u < 4, i < 2), so that the
   * vertical products leave lane t samples 4t .. 4t + 3 of its rows, one
   * 32-bit store each. */
  __device__ MmaFragments (const MmaTables < KS, VA > &tt, int ry, int e,
      int g, int t)
  {
    constexpr int TAP0 = MmaTaps < KS, VA >::TAP0;
    const int pi = 2 * g - (g & 1);     /* pi (g); pi (g + 8) = pi + 2 */

#pragma unroll
    for (int s = 0; s < KS; s++) {
      /* k slots 2t, 2t + 1 | 2t + 8, 2t + 9 are bytes 4s .. 4s + 3 of
       * the lane's window word, which starts at window sample 4 KS t */
      const int d = TAP0 + 4 * KS * t + 4 * s - e - pi;
      h[s][0] = tt.copy[0].h[d];
      h[s][1] = tt.copy[0].h[d - 2];
      h[s][2] = tt.copy[0].h[d + 2];
      h[s][3] = tt.copy[1].h[d];
    }
#pragma unroll
    for (int i = 0; i < NV; i++) {
      /* tile i's row k is row 8 i + k - 8 VA of the block */
      const int d = TAP0 + 8 * i + 2 * t - 8 * VA - g + ry;
      v[i][0] = tt.copy[0].v[d];
      v[i][1] = tt.copy[1].v[d - 8];
    }
  }
};

/* Where window sample s of a row comes from, for a window that reaches
 * past a side of the row (or an unaligned plane): its offset in the row,
 * -1 for a zero.  Out of line, as the border's code is large and the
 * edge strips' only. */
static __device__ __noinline__ int
mma_source (int border, int s, int nc, int width)
{
  return border_sample ((CuconvBorder) border, s, nc, width);
}

/* Row y of the plane, or the row the border maps it to; NULL: zeros. */
__device__ __forceinline__ const uint8_t *
mma_row (const SepParams & p, int y)
{
  if (y < 0 || y >= p.height)
    y = border_row_far (p.border, y, p.height);
  return y < 0 ? NULL : p.src + (size_t) y * p.src_pitch;
}

/* The thread's 4 KS window bytes at a, in aligned 8- or 16-byte loads. */
template < int KS > __device__ __forceinline__ void
mma_load_word (const uint8_t * a, uint32_t (&w)[KS])
{
  if constexpr (KS == 2) {
    const uint2 v = __ldg ((const uint2 *) a);
    w[0] = v.x;
    w[1] = v.y;
  } else {
    static_assert (KS % 4 == 0, "a window word of whole 16-byte loads");
#pragma unroll
    for (int q = 0; q < KS / 4; q++) {
      const uint4 v = __ldg ((const uint4 *) a + q);
      w[4 * q] = v.x;
      w[4 * q + 1] = v.y;
      w[4 * q + 2] = v.z;
      w[4 * q + 3] = v.w;
    }
  }
}

/* Where each of a lane's window bytes comes from in an edge strip
 * (mma_source): kept in registers for the narrow windows, asked byte by
 * byte for the wide ones, whose registers the walk needs. */
template < int KS > struct MmaBorderMap
{
  static constexpr bool KEPT = KS <= 4;
  int cm[KEPT ? 4 * KS : 1];

  __device__ __forceinline__ void init (const SepParams & p, int x)
  {
    if constexpr (KEPT) {
#pragma unroll
      for (int i = 0; i < 4 * KS; i++)
        cm[i] = mma_source (p.border, x + i, p.nc, p.width);
    }
  }

  __device__ __forceinline__ int at (const SepParams & p, int x, int i) const
  {
    if constexpr (KEPT)
      return cm[i];
    else
      return mma_source (p.border, x + i, p.nc, p.width);
  }
};

/* The thread's 4 KS window bytes of row y, which may lie outside the
 * plane: one aligned load where the window lies inside the row, else
 * byte by byte through cm. */
template < int KS > __device__ __forceinline__ void
mma_load (const SepParams & p, int y, int x, bool whole,
    const MmaBorderMap < KS > &cm, uint32_t (&w)[KS])
{
  const uint8_t *row = mma_row (p, y);

#pragma unroll
  for (int s = 0; s < KS; s++)
    w[s] = 0;
  if (!row)
    return;
  if (whole) {
    mma_load_word < KS > (row + x, w);
    return;
  }
#pragma unroll
  for (int i = 0; i < 4 * KS; i++) {
    const int at = cm.at (p, x, i);

    if (at >= 0)
      w[i / 4] |= (uint32_t) __ldg (row + at) << (8 * (i % 4));
  }
}

/* The thread's rows of the pair of tiles from row y (rows y + g and
 * y + 8 + g): two loads where the pair lies inside the plane and the
 * window inside the rows (the warp agrees), else through mma_load.  a:
 * the lane's window in row y + g, where the plane has that row. */
template < int KS > __device__ __forceinline__ void
mma_load_pair (const SepParams & p, const uint8_t * a, int y, int g,
    int x, bool inner, bool whole, const MmaBorderMap < KS > &cm,
    uint32_t (&w)[2][KS])
{
  if (inner && y >= 0 && y + 16 <= p.height) {
    mma_load_word < KS > (a, w[0]);
    mma_load_word < KS > (a + 8 * p.src_pitch, w[1]);
  } else {
    mma_load < KS > (p, y + g, x, whole, cm, w[0]);
    mma_load < KS > (p, y + 8 + g, x, whole, cm, w[1]);
  }
}

/* The 4 output bytes of a lane's row, from a vertical product's
 * accumulators (n-tiles 0 and 1, the row's two of each), each floor (v)
 * (the + 0.5 is in the sums).  No clamp: taps >= 0 summing to at most
 * 1.0001 each way (mma_takes) keep an output within 0.29 of a sum in
 * [0.5, 255.53]. */
__device__ __forceinline__ uint32_t
mma_pack (const float (&acc)[2][4], int half)
{
  const uint32_t lo = __byte_perm (floor_bits (acc[0][2 * half]),
      floor_bits (acc[0][2 * half + 1]), 0x0040);
  const uint32_t hi = __byte_perm (floor_bits (acc[1][2 * half]),
      floor_bits (acc[1][2 * half + 1]), 0x0040);

  return __byte_perm (lo, hi, 0x5410);
}

/* Stores the output block of rows y .. y + 15 of the strip from sample x
 * (lane (g, t) holds samples x + 4t .. x + 4t + 3 of rows y + g and
 * y + 8 + g): 32-bit stores where the block lies inside the band and the
 * strip inside an aligned row (`fast`, the warp agrees), else each sample
 * guarded.  d: the lane's first sample in row y + g. */
__device__ __forceinline__ void
mma_store (const SepParams & p, uint8_t * d, const float (&acc)[2][4],
    int x, int y, int g, int t, int y_end, bool fast)
{
  if (fast && y + 16 <= y_end) {
    *(uint32_t *) d = mma_pack (acc, 0);
    *(uint32_t *) (d + 8 * p.dst_pitch) = mma_pack (acc, 1);
    return;
  }
#pragma unroll
  for (int half = 0; half < 2; half++) {
    const int yy = y + g + 8 * half, xx = x + 4 * t;
    const uint32_t v = mma_pack (acc, half);
    uint8_t *d = p.dst + (size_t) yy * p.dst_pitch + xx;

    if (yy >= y_end)
      continue;
#pragma unroll
    for (int i = 0; i < 4; i++)
      if (xx + i < p.ws)
        d[i] = (uint8_t) (v >> (8 * i));
  }
}

/* f (0) && f (1) && ... && f (P - 1), each index a compile-time
 * constant (std::integral_constant): one period of an unrolled walk. */
template < class F, int... U > __device__ __forceinline__ bool
mma_steps (F & f, std::integer_sequence < int, U... >)
{
  return (f (std::integral_constant < int, U > ()) && ...);
}

/* One warp: the strip of output samples [c0, c0 + 16) of rows
 * [y0, y_end).
 *
 * The walk holds the window words of three pairs of tiles (the one it
 * computes and the two in flight behind it) and the accumulators of the
 * VA + 1 output blocks that the current pair feeds, both as rings: it is
 * unrolled by a period of P pairs, a multiple of both rings' lengths, so
 * that every slot is a register of its own and nothing is copied (a copy
 * of a load's word would wait for the load). */
template < int KS, int VA > __device__ void
mma_strip (const SepParams & p, const MmaTables < KS, VA > &tt, int c0,
    int y0, int y_end)
{
  constexpr int ALIGN = 4 * KS;         /* bytes a thread's window word */
  constexpr int NB = VA + 1;            /* blocks a pair feeds */
  constexpr int P = NB % 3 == 0 ? NB : 3 * NB;     /* lcm (3, NB) */
  const int lane = pinned (threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int reach = p.rx * p.nc;
  const int e = mma_lead (reach, ALIGN);
  const int xw = c0 - reach - e;
  const int x = xw + ALIGN * t;
  const bool inner = pinned (p.src_aligned16 && xw >= 0
      && xw + 16 * KS <= p.ws);
  /* in an edge strip, the lanes whose bytes all lie in the row still
   * load them as one word; only the others gather */
  const bool whole = pinned (p.src_aligned16 && x >= 0
      && x + ALIGN <= p.ws);
  const bool fast = pinned (p.dst_aligned && c0 + 16 <= p.ws);
  const MmaFragments < KS, VA > fr (tt, p.ry, e, g, t);
  float bias_h[4], bias_v[4];
  MmaBorderMap < KS > cm;
  float acc[NB][2][4];
  uint32_t w[3][2][KS];
  int yt = y0 - 8 * VA;         /* the first row of the pair of tiles */
  /* the lane's window in row yt + g (then of the pairs it loads ahead);
   * its first output in row y0 + g */
  const uint8_t *src = p.src + x + (ptrdiff_t) (yt + g) * p.src_pitch;
  uint8_t *dst = p.dst + c0 + 4 * t + (ptrdiff_t) (y0 + g) * p.dst_pitch;
  const int pairs = (y_end - y0 + 15) / 16 + VA;
  int pr = 0;

  if (!inner)
    cm.init (p, x);
#pragma unroll
  for (int j = 0; j < 4; j++) {
    bias_h[j] = tt.copy[0].bias_h[j];
    bias_v[j] = tt.copy[0].bias_v[j];
  }
  /* (the blocks above y0 are computed but not stored) */
#pragma unroll
  for (int k = 0; k < NB; k++)
#pragma unroll
    for (int n = 0; n < 2; n++)
#pragma unroll
      for (int j = 0; j < 4; j++)
        acc[k][n][j] = bias_v[j];
  mma_load_pair < KS > (p, src, yt, g, x, inner, whole, cm, w[0]);
  src += 16 * (ptrdiff_t) p.src_pitch;
  mma_load_pair < KS > (p, src, yt + 16, g, x, inner, whole, cm, w[1]);
  src += 16 * (ptrdiff_t) p.src_pitch;
  /* A pair of tiles: the loads of the pair two ahead into the freed
   * buffer, then the horizontal and vertical products of this one, and
   * the block they complete stored.  Pair u of the period: block k of the
   * pair (k = 0 the one it completes) accumulates in acc[(u + k) % NB]. */
  auto step =[&](auto period_index) {
    constexpr int u = decltype (period_index)::value;
    const uint32_t (&cur)[2][KS] = w[u % 3];

    if (pr >= pairs)
      return false;
    mma_load_pair < KS > (p, src, yt + 32, g, x, inner, whole, cm,
        w[(u + 2) % 3]);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float c[4];
      /* halves 1024 + byte */
      mma_k16 (c, fr.h[0], __byte_perm (cur[h][0], 0x64646464u, 0x4140),
          __byte_perm (cur[h][0], 0x64646464u, 0x4342), bias_h);
#pragma unroll
      for (int s = 1; s < KS; s++)
        mma_k16 (c, fr.h[s], __byte_perm (cur[h][s], 0x64646464u, 0x4140),
            __byte_perm (cur[h][s], 0x64646464u, 0x4342), c);
      /* (sample g or g + 8, rows 2t, 2t + 1): the vertical B fragments;
       * the last block starts from the bias */
      const uint32_t b[2] = { half2_bits (c[0], c[1]),
        half2_bits (c[2], c[3])
      };
#pragma unroll
      for (int k = 0; k <= VA; k++)
#pragma unroll
        for (int n = 0; n < 2; n++) {
          float (&a)[4] = acc[(u + k) % NB][n];
          if (k == VA && h == 0)
            mma_k8 (a, fr.v[2 * (VA - k) + h], b[n], bias_v);
          else
            mma_k8 (a, fr.v[2 * (VA - k) + h], b[n], a);
        }
    }
    if (pr >= VA) {
      mma_store (p, dst, acc[u % NB], c0, y0 + 16 * (pr - VA), g, t, y_end,
          fast);
      dst += 16 * (ptrdiff_t) p.dst_pitch;
    }
    pr++;
    yt += 16;
    src += 16 * (ptrdiff_t) p.src_pitch;
    return true;
  };

  while (mma_steps (step, std::make_integer_sequence < int, P > ()));
}

/* How a launch's warps split the band: bands of `rows` rows, each of
 * `strips` strips of 16 samples.  The n_left and n_right strips at the
 * sides, whose windows reach past the row, take MMA_EDGE_SPLIT warps each,
 * a share of the rows each: they measured three times slower a row (their
 * loads go through the border), and the grid is one wave, whose slowest
 * warp sets its time. */
constexpr int MMA_EDGE_SPLIT = 4;

struct MmaGrid
{
  int rows, bands, strips, n_left, n_right;
};

/* Warp w's strip and rows [*y0, *y_end); false when it has none. */
__device__ __forceinline__ bool
mma_work (const SepParams & p, const MmaGrid & gr, int w, int *c0, int *y0,
    int *y_end)
{
  constexpr int S = MMA_EDGE_SPLIT;
  const int inner = gr.strips - gr.n_left - gr.n_right;
  const int items = inner + S * (gr.n_left + gr.n_right);
  const int band = w / items;
  int it = w % items, part = -1, strip;

  if (band >= gr.bands)
    return false;
  if (it < S * gr.n_left) {
    strip = it / S;
    part = it % S;
  } else if (it < S * gr.n_left + inner) {
    strip = it - (S - 1) * gr.n_left;
  } else {
    it -= S * gr.n_left + inner;
    strip = gr.n_left + inner + it / S;
    part = it % S;
  }
  *c0 = strip * MMA_STRIP;
  *y0 = p.row_begin + band * gr.rows;
  *y_end = min (*y0 + gr.rows, p.row_end);
  if (part >= 0) {
    const int share = (gr.rows / S + 15) / 16 * 16;
    *y_end = min (*y0 + (part + 1) * share, *y_end);
    *y0 += part * share;
  }
  return *y0 < *y_end;
}

/* A band of p, 4 warps a block (MmaGrid).  At KS = 2, VA = 1 (reach up
 * to 8: the radii that matter most) 5 blocks an SM fit 96 registers
 * without spilling; KS = 4 keeps 4 (128 registers), the wide windows 2
 * (their tap fragments, window words and VA + 1 blocks of accumulators
 * take up to 255). */
template < int KS, int VA > __global__ void
__launch_bounds__ (MMA_THREADS, KS == 2 && VA == 1 ? 5 : KS <= 4 ? 4 : 2)
sep_mma (const __grid_constant__ SepParams p,
    const __grid_constant__ MmaTaps < KS, VA > tb, const MmaGrid gr)
{
  __shared__ MmaTables < KS, VA > tt;
  int c0, y0, y_end;

  /* the tables come from the parameters: copied while the grid before
   * ends */
  mma_tables_load (tt, tb);
  __syncthreads ();
  grid_dep_wait ();
  if (mma_work (p, gr, blockIdx.x * MMA_WARPS + threadIdx.x / 32, &c0, &y0,
          &y_end))
    mma_strip < KS, VA > (p, tt, c0, y0, y_end);
}

/* Host side ------------------------------------------------------------ */

static uint32_t
half_bits (float w)
{
  const __half_raw r = __float2half_rn (w);

  return r.x;
}

/* The tables of MmaTaps for p's taps. */
template < int KS, int VA > static void
mma_taps_init (MmaTaps < KS, VA > &tb, const SepParams & p)
{
  constexpr int TAP0 = MmaTaps < KS, VA >::TAP0;
  auto th =[&](int d) -> uint32_t {
    return d >= 0 && d % p.nc == 0 && d / p.nc <= 2 * p.rx
        ? half_bits (p.kx[d / p.nc]) : 0u;
  };
  auto tv =[&](int d) -> uint32_t {
    return d >= 0 && d <= 2 * p.ry ? half_bits (p.ky[d]) : 0u;
  };
  float sum_h = 0.0f, sum_v = 0.0f;

  for (int i = 0; i < (int) (sizeof (tb.h) / sizeof (tb.h[0])); i++)
    tb.h[i] = th (i - TAP0) | th (i - TAP0 + 1) << 16;
  for (int i = 0; i < (int) (sizeof (tb.v) / sizeof (tb.v[0])); i++)
    tb.v[i] = tv (i - TAP0) | tv (i - TAP0 + 1) << 16;
  for (int j = 0; j <= 2 * p.rx; j++)
    sum_h += __half2float (__float2half_rn (p.kx[j]));
  for (int j = 0; j <= 2 * p.ry; j++)
    sum_v += __half2float (__float2half_rn (p.ky[j]));
  for (int j = 0; j < 4; j++) {
    tb.bias_h[j] = -1024.0f * sum_h - 128.0f;
    tb.bias_v[j] = 128.0f * sum_v + 0.5f;
  }
}

/* Devices whose blocks of each sep_mma resident an SM are remembered;
 * others are asked at every launch. */
#define MMA_KNOWN_DEVICES 16

/* Blocks of sep_mma < KS, VA > resident an SM of the current device (at
 * least 1), asked once a device: two models of GPU in one process each
 * get their own. */
template < int KS, int VA > static int
mma_resident_per_sm (void)
{
  static std::atomic < int > known[MMA_KNOWN_DEVICES];
  int dev, n = 0;

  if (cudaGetDevice (&dev) != cudaSuccess) {
    cudaGetLastError ();
    return 1;
  }
  if (dev >= 0 && dev < MMA_KNOWN_DEVICES)
    n = known[dev].load (std::memory_order_relaxed);
  if (n > 0)
    return n;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&n, sep_mma < KS, VA >,
          MMA_THREADS, 0) != cudaSuccess || n < 1) {
    cudaGetLastError ();
    return 1;
  }
  if (dev >= 0 && dev < MMA_KNOWN_DEVICES)
    known[dev].store (n, std::memory_order_relaxed);
  return n;
}

/* Launches the kernel over the band of p: as many bands as make the
 * grid one wave of resident blocks (the more rows a warp, the more
 * outputs share its apron tiles), in whole blocks of 16 rows. */
template < int KS, int VA > static cudaError_t
launch_mma_k (const SepParams & p, cudaStream_t stream)
{
  const int reach = p.rx * p.nc, e = mma_lead (reach, 4 * KS);
  const int band = p.row_end - p.row_begin;
  const int per_sm = mma_resident_per_sm < KS, VA > ();
  int sms, items, warps;
  MmaGrid gr;
  MmaTaps < KS, VA > tb;

  if (device_sm_count (&sms) != cudaSuccess) {
    cudaGetLastError ();
    sms = 1;
  }
  /* the strips whose windows start left of the row or end right of it
   * (mma_strip's `inner`): all of them in an unaligned plane */
  gr.strips = (p.ws + MMA_STRIP - 1) / MMA_STRIP;
  if (!p.src_aligned16) {
    gr.n_left = gr.strips;
    gr.n_right = 0;
  } else {
    const int first_right = p.ws + reach + e - 16 * KS >= 0
        ? (p.ws + reach + e - 16 * KS) / MMA_STRIP + 1 : 0;
    gr.n_left = min (gr.strips, (reach + e + MMA_STRIP - 1) / MMA_STRIP);
    gr.n_right = gr.strips - max (gr.n_left, min (gr.strips, first_right));
  }
  items = gr.strips + (MMA_EDGE_SPLIT - 1) * (gr.n_left + gr.n_right);
  gr.bands = max (1, per_sm * sms * MMA_WARPS / items);
  gr.rows = max (16, ((band + gr.bands - 1) / gr.bands + 15) / 16 * 16);
  gr.bands = (band + gr.rows - 1) / gr.rows;
  warps = gr.bands * items;
  mma_taps_init (tb, p);
  return launch_pdl (sep_mma < KS, VA >, (warps + MMA_WARPS - 1) / MMA_WARPS,
      MMA_THREADS, 0, stream, p, tb, gr);
}

bool
mma_takes (const SepParams & p)
{
  int major;

  if (!(p.sb == 1 && (p.nc == 1 || p.nc == 2)
          && p.combine == CUCONV_COMBINE_NONE && p.taps_nonneg
          && p.rx * p.nc <= MMA_MAX_REACH && p.ry <= MMA_MAX_REACH
          /* mma_pack has no clamp */
          && taps_bounded (p.kx, 2 * p.rx + 1)
          && taps_bounded (p.ky, 2 * p.ry + 1)))
    return false;
  if (device_cc_major (&major) != cudaSuccess) {
    cudaGetLastError ();
    return false;
  }
  return major >= 8;
}

cudaError_t
launch_mma (const SepParams & p, cudaStream_t stream)
{
  if (!mma_takes (p))
    return cudaErrorNotSupported;
  if (p.row_end <= p.row_begin)
    return cudaSuccess;
  /* window words of 4 KS bytes: 16 + 2 reach + the lead to the word's
   * alignment <= 16 KS; VA apron tiles of 8 rows: ry <= 8 VA.  Past 16
   * either way, VA 5 or 8 (the ring of VA + 1 blocks a multiple of the
   * ring of 3 pairs: mma_strip's period) */
  const int reach = p.rx * p.nc;

  if (reach <= 16 && p.ry <= 16) {
    if (reach > 8)
      return p.ry > 8 ? launch_mma_k < 4, 2 > (p, stream)
          : launch_mma_k < 4, 1 > (p, stream);
    return p.ry > 8 ? launch_mma_k < 2, 2 > (p, stream)
        : launch_mma_k < 2, 1 > (p, stream);
  }
  if (reach <= 48)
    return p.ry > 40 ? launch_mma_k < 8, 8 > (p, stream)
        : launch_mma_k < 8, 5 > (p, stream);
  return launch_mma_k < 12, 8 > (p, stream);
}

}                               /* namespace cuconv */
