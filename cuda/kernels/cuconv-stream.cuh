/* gst-cudaconvolve: the streaming separable kernel for 8-bit samples at
 * radius 1 to ST_MAX_RADIUS (docs/design.md, "The streaming kernel"),
 * shared by its plane launcher (cuconv-stream.cu) and the one launch of a
 * 4:2:0 frame (cuconv-frame420.cu).
 *
 * A thread owns C adjacent samples of a row (16, 8 or 4) and a strip of
 * S output rows below them.  It walks down its strip one input row at a
 * time: a 16-, 8- or 4-byte load of the row's C samples and a 4- or
 * 8-byte load of the apron on each side.  The row's horizontal sums are read
 * from its bytes as loaded, two taps a dp2a instruction (16-bit integer
 * taps, quantized on the host: stream_prepare, cuconv-stream.cu), and no
 * sample is converted to a float; each sum goes straight into the 2R + 1
 * output rows it feeds, whose float accumulators stay in registers (a
 * ring whose slots are compile-time names: the walk is unrolled by one
 * period of 2R + 1 rows); an output row is rounded, packed and stored as
 * soon as its last input row is in.  No shared memory and no barrier.
 * The loads run one period ahead of the arithmetic.  The 2-D matrix (3x3,
 * 5x5) walks the same way, in floats (a row's sums with each matrix row
 * share its conversions; dp2a measured slower there): each input row's
 * sum with matrix row t goes into the output row t rows above it.
 *
 * The strips cover the inner columns, whose windows lie inside the rows:
 * their loads and stores have no checks.  A strip whose rows lie inside
 * the plane walks them by pointer; only the first and last strips of a
 * plane map rows through the border (out of line).  The one or two
 * columns on each side take a thread per output row instead, which
 * gathers its 2R + 1 input rows sample by sample through the border mode
 * (cuconv-border.h): spread over many threads, those uncoalesced gathers
 * finish well before the strips do (two components from radius 2 read
 * them from a tile their warp loads a word at a time: stream_edge_tile).
 * Both sum in the same order, so they agree to the bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_STREAM_CUH__
#define __CUCONV_STREAM_CUH__

#include <cuda_runtime.h>

#include "cuconv-separable.cuh"

namespace cuconv {

constexpr int ST_THREADS = 128;

/* Samples a thread across, and output rows a thread, as measured
 * fastest on a 4K plane (docs/performance.md): 16 x 9 for the radius-1
 * blur and the 3x3 matrix; 8 x 13 for the sharpen and two terms at
 * radius 1, 8 x 16 at radius 2 for two components, 8 x 24 for the 5x5
 * matrix.  From radius 3, and for the radius-2 sharpen and blur of one
 * component, 4 samples across, so that the 2R + 1 rows of accumulators
 * fit the registers: the blur in 4 x 16 with its first and last periods
 * apart (stream_peel), 4 x 16 for the sharpen and the two terms at
 * radius 3, 4 x 24 for the blur at radius 3, its periods apart, and
 * 4 x 27 for the blur at radius 4 (at 27 the blocks of a 4K plane fill
 * whole waves of a 132-SM device, at 26 a few are left over).  No simple
 * rule picks them all: not the apron's share, nor how evenly the blocks
 * of one wave fall on the SMs (a count chosen at run time to spread them
 * was slower than these); where the blocks pass one wave, whole waves
 * win (the r = 4 blur). */
__host__ __device__ constexpr bool
stream_wide (int r, int out)
{
  return (out == OUT_BLUR || out == OUT_MATRIX) && r == 1;
}

__host__ __device__ constexpr int
stream_cols (int r, int out)
{
  return stream_wide (r, out) ? 16 : r >= 3 || (r == 2
      && out == OUT_SHARPEN) ? 4 : 8;
}

/* A whole plane's large shape: the blur of one component at radius 2 in
 * 4 across (above); StreamSmall and the 4:2:0 frame keep 8 there, where
 * 8 measured faster. */
__host__ __device__ constexpr int
stream_plane_cols (int r, int out, int nc)
{
  return r == 2 && out == OUT_BLUR && nc == 1 ? 4 : stream_cols (r, out);
}

__host__ __device__ constexpr int
stream_rows (int r, int out)
{
  return stream_wide (r, out) ? 9 : out == OUT_MATRIX ? 24 : r == 1 ? 13
      : r == 2 || (r == 3 && out != OUT_BLUR) ? 16 : r == 3 ? 24 : 27;
}

/* Whether the strips walk their first and last periods apart from the
 * others (stream_strip), and how many blocks an SM their registers leave
 * room for (5: 96 registers; 0: no cap), as measured fastest
 * (docs/performance.md): apart for the 2-D matrix (the 5x5 capped), the
 * sharpen, two terms from radius 3 (not capped: capped they spill), the
 * blur at radius 4 (capped: uncapped it takes 120 registers), at radius 3
 * (stream_rows) and at radius 2 in 4 samples across (stream_plane_cols).
 * Not for the blur at radius 1, nor at 2 in 8 across, nor two terms at
 * radius 1, where walking them apart gained nothing or lost. */
__host__ __device__ constexpr bool
stream_peel (int r, int out, int cols)
{
  return out == OUT_MATRIX || out == OUT_SHARPEN || r >= 3
      || (out == OUT_BLUR && r == 2 && cols == 4);
}

__host__ __device__ constexpr int
stream_min_blocks (int r, int out, bool peel)
{
  return peel && ((out == OUT_BLUR && r >= 4) || (out == OUT_MATRIX
          && r >= 2)) ? 5 : 0;
}

/* The shape of the streaming kernel of radius RAD, NCOMP interleaved
 * components and output OUTPUT (SepOut): COLS samples across (16, 8, 4)
 * and ROWS output rows a thread; SPREAD: the edge rows' warps spread
 * among the strips' (stream_role); PEEL: stream_peel. */
template < int RAD, int NCOMP, int OUTPUT,
    int COLS = stream_plane_cols (RAD, OUTPUT, NCOMP),
    int ROWS = stream_rows (RAD, OUTPUT), bool SPREAD = false,
    bool PEEL = stream_peel (RAD, OUTPUT, COLS) >
struct StreamShape
{
  static constexpr int R = RAD;
  static constexpr int NC = NCOMP;
  static constexpr int OUT = OUTPUT;
  static constexpr int NT = out_terms (OUT);
  static constexpr int K = 2 * R + 1;   /* taps */
  static constexpr int C = COLS;
  static constexpr int S = ROWS;
  static constexpr int A = R * NC;      /* apron, samples each side */
  static constexpr int E = A <= 4 ? 4 : 8;      /* apron loads, bytes */
  static constexpr int NW = (C + 2 * E) / 4;    /* words of a loaded row */
  /* whether the edge rows read their windows from a tile
   * (stream_edge_tile), and its words a row: odd, so that the lanes' rows
   * fall in distinct banks */
  static constexpr bool TILE = NC == 2 && R >= 2;
  static constexpr int TW = NW | 1;
  static constexpr bool SP = SPREAD;
  static constexpr bool PL = PEEL;
  /* blocks an SM for the plane kernel's register cap */
  static constexpr int MIN_BLOCKS = stream_min_blocks (R, OUT, PL);
};

__host__ __device__ constexpr int
stream_small_cols (int r, int out)
{
  return stream_cols (r, out) < 8 ? stream_cols (r, out) : 8;
}

/* The shape for whole planes below CUCONV_LARGE_PLANE_SAMPLES
 * (cuconv-dispatch.cuh): short strips of 8 samples (4 where stream_cols
 * says 4; 2R + 2 rows: two periods of the walk), enough of them to fill
 * the device, and the edge rows' warps spread; on such a plane the large
 * shape's long strips leave most of the device idle. */
template < int RAD, int NCOMP, int OUTPUT,
    bool PEEL = stream_peel (RAD, OUTPUT, stream_small_cols (RAD, OUTPUT)) >
using StreamSmall = StreamShape < RAD, NCOMP, OUTPUT,
    stream_small_cols (RAD, OUTPUT),
    2 * RAD + 2, true, PEEL >;

/* The columns of C samples across a band whose windows lie inside the
 * plane's rows, [lo, hi), and all of them, cols: the strips walk the
 * inner ones, the edge rows (a thread a row) the others. */
template < class Sh > __host__ __device__ __forceinline__ void
stream_columns (const SepParams & p, int *lo, int *hi, int *cols)
{
  *cols = (p.ws + Sh::C - 1) / Sh::C;
  *lo = (Sh::A + Sh::C - 1) / Sh::C;
  *hi = p.ws >= Sh::A ? (p.ws - Sh::A) / Sh::C : 0;
  if (*hi < *lo)
    *hi = *lo;
}

/* The edge columns' rows that a band of `rows` rows takes: in whole
 * warps where they read a tile (stream_edge_tile). */
template < class Sh > __host__ __device__ __forceinline__ int
stream_edge_span (int rows)
{
  return Sh::TILE ? (rows + 31) / 32 * 32 : rows;
}

/* Threads of a band of p: one an edge column's row, one an inner
 * column's strip of S rows; with Sh::SP, each kind in whole warps. */
template < class Sh > __host__ __device__ __forceinline__ int
stream_threads (const SepParams & p)
{
  const int rows = p.row_end - p.row_begin;
  int lo, hi, cols;

  stream_columns < Sh > (p, &lo, &hi, &cols);
  const int edge_rows = (cols - (hi - lo)) * stream_edge_span < Sh > (rows);
  const int strips = (hi - lo) * ((rows + Sh::S - 1) / Sh::S);
  if (Sh::SP)
    return 32 * ((edge_rows + 31) / 32 + (strips + 31) / 32);
  return edge_rows + strips;
}

/* What thread t of a band with n_edge edge rows and n_strip strips
 * walks: edge row *e or strip *i (-1 for neither; a strip or, with
 * Sh::TILE, an edge row may lie past the band).  The edge rows come
 * first, a thread each: spread over many
 * threads, their gathers (uncoalesced: a warp's lanes read different
 * rows) finish long before the strips do.  Sh::SP: every sp-th warp from
 * the first (sp up to 4) is an edge-row warp, so that no SM holds many
 * of them: on a small plane, whose strips are short, those SMs ended
 * last (on a 4K plane spreading them costs a little: the large shapes
 * keep the edge rows first). */
template < class Sh > __device__ __forceinline__ void
stream_role (int n_edge, int n_strip, int t, int *e, int *i)
{
  *e = *i = -1;
  if (!Sh::SP) {
    if (t < n_edge)
      *e = t;
    else
      *i = t - n_edge;
    return;
  }
  const int ew = (n_edge + 31) / 32, sw = (n_strip + 31) / 32;
  const int sp = ew > 0 ? min (4, (ew + sw) / ew) : 1;
  const int g = t >> 5, lane = t & 31;

  if (g % sp != 0 || g / sp >= ew)
    *i = (g - min (ew, (g + sp - 1) / sp)) * 32 + lane;
  else if ((g / sp) * 32 + lane < n_edge)
    *e = (g / sp) * 32 + lane;
}

/* Blocks of ST_THREADS threads that a band of p takes. */
template < class Sh > __host__ __device__ __forceinline__ int
stream_blocks (const SepParams & p)
{
  return (stream_threads < Sh > (p) + ST_THREADS - 1) / ST_THREADS;
}

/* cuconv_border_index () for a column px less than n outside a row of
 * n > 1 pixels, with selects instead of branches. */
__device__ __forceinline__ int
near_border_index (int border, int px, int n)
{
  const bool lo = px < 0, hi = px >= n;
  const int clamp = lo ? 0 : hi ? n - 1 : px;
  const int mirror = lo ? -px : hi ? 2 * n - 2 - px : px;
  const int wrap = lo ? px + n : hi ? px - n : px;

  return border == CUCONV_BORDER_CLAMP ? clamp : border ==
      CUCONV_BORDER_MIRROR ? mirror : border == CUCONV_BORDER_WRAP ? wrap :
      lo || hi ? -1 : px;
}

/* A loaded row: the E bytes left of x, the C samples from x, the E bytes
 * right of them. */
template < class Sh > struct StreamWindow
{
  uint32_t w[Sh::NW];
};

/* Packs the window's samples v (the C + 2A the taps read, from x - A)
 * into the words of a StreamWindow. */
template < class Sh > __device__ __forceinline__ StreamWindow < Sh >
stream_pack (const uint32_t * v)
{
  constexpr int OFF = Sh::E - Sh::A;
  StreamWindow < Sh > g;

#pragma unroll
  for (int i = 0; i < Sh::NW; i++)
    g.w[i] = 0u;
#pragma unroll
  for (int i = 0; i < Sh::C + 2 * Sh::A; i++)
    g.w[(OFF + i) / 4] |= v[i] << (8 * ((OFF + i) % 4));
  return g;
}

/* The window of row yy of a plane too narrow for near_border_index: each
 * sample through the border on its own.  Out of line: tiny planes only. */
template < class Sh > __device__ __noinline__ StreamWindow < Sh >
stream_gather_far (const SepParams & p, int x, int yy)
{
  const uint8_t *row = p.src + (size_t) yy * p.src_pitch;
  uint32_t v[Sh::C + 2 * Sh::A];

#pragma unroll
  for (int i = 0; i < Sh::C + 2 * Sh::A; i++) {
    const int o = border_sample ((CuconvBorder) p.border, x - Sh::A + i,
        Sh::NC, p.width);
    v[i] = o >= 0 ? row[o] : 0u;
  }
  return stream_pack < Sh > (v);
}

/* The window of row yy of the plane for a thread whose window reaches
 * past a side of the plane: each sample the taps read mapped through the
 * border on its own (0 outside the plane for the zero border), all the
 * loads issued before any is used.  near: the plane is wider than a
 * window, so that no sample lies a row's width outside it. */
template < class Sh > __device__ __forceinline__ StreamWindow < Sh >
stream_gather (const SepParams & p, int x, int yy, bool near)
{
  constexpr int NC = Sh::NC;
  const uint8_t *row = p.src + (size_t) yy * p.src_pitch;
  uint32_t v[Sh::C + 2 * Sh::A];

  if (!near)
    return stream_gather_far < Sh > (p, x, yy);
#pragma unroll
  for (int i = 0; i < Sh::C + 2 * Sh::A; i++) {
    const int s = x - Sh::A + i;
    /* NC is 1 or 2: the pixel and component by shifts */
    const int px = NC == 1 ? s : s >> 1, comp = s - px * NC;
    const int xi = near_border_index (p.border, px, p.width);
    v[i] = xi >= 0 ? __ldg (row + xi * NC + comp) : 0u;
  }
  return stream_pack < Sh > (v);
}

/* Loads the C samples at row and the E bytes on each side of them into
 * the words w of a StreamWindow: no checks. */
template < class Sh > __device__ __forceinline__ void
stream_load_row (const uint8_t * row, uint32_t * w)
{
  constexpr int C = Sh::C, E = Sh::E, NW = Sh::NW;
  static_assert ((C == 16 || C == 8 || C == 4) && C % E == 0,
      "16-, 8- or 4-byte rows, apron loads aligned as the row's");

  if (E == 4) {
    w[0] = __ldg ((const uint32_t *) (row - 4));
    w[NW - 1] = __ldg ((const uint32_t *) (row + C));
  } else {
    const uint2 l = __ldg ((const uint2 *) (row - 8));
    const uint2 r = __ldg ((const uint2 *) (row + C));
    w[0] = l.x;
    w[1] = l.y;
    w[NW - 2] = r.x;
    w[NW - 1] = r.y;
  }
  if (C == 16) {
    const uint4 m = __ldg ((const uint4 *) row);
    w[E / 4] = m.x;
    w[E / 4 + 1] = m.y;
    w[E / 4 + 2] = m.z;
    w[E / 4 + 3] = m.w;
  } else if (C == 8) {
    const uint2 m = __ldg ((const uint2 *) row);
    w[E / 4] = m.x;
    w[E / 4 + 1] = m.y;
  } else {
    w[E / 4] = __ldg ((const uint32_t *) row);
  }
}

/* Loads row y of the plane, mapped through the border, into the words w
 * of a StreamWindow (a row outside the plane with the zero border reads
 * 0).  GATHER: the window reaches past a side of the plane (near: as
 * stream_gather). */
template < class Sh, bool GATHER > __device__ __forceinline__ void
stream_load (const SepParams & p, int x, int y, bool near, uint32_t * w)
{
  constexpr int NW = Sh::NW;
  const int yy = (unsigned) y < (unsigned) p.height ? y :
      border_row_far (p.border, y, p.height);

  if (yy < 0) {
#pragma unroll
    for (int i = 0; i < NW; i++)
      w[i] = 0u;
    return;
  }
  if (GATHER) {
    const StreamWindow < Sh > g = stream_gather < Sh > (p, x, yy, near);
#pragma unroll
    for (int i = 0; i < NW; i++)
      w[i] = g.w[i];
    return;
  }
  stream_load_row < Sh > (p.src + (size_t) yy * p.src_pitch + x, w);
}

/* The floats of the C + 2A samples the matrix's taps read, from the
 * loaded row w. */
template < class Sh > __device__ __forceinline__ void
stream_floats (const uint32_t * w, float *f)
{
#pragma unroll
  for (int i = 0; i < Sh::C + 2 * Sh::A; i++)
    f[i] = u8_to_f (w[(Sh::E - Sh::A + i) / 4], (Sh::E - Sh::A + i) % 4);
}

/* a plus the K taps w times the row f (stream_floats) from sample c. */
template < class Sh > __device__ __forceinline__ float
stream_dot (const float *w, const float *f, int c, float a)
{
#pragma unroll
  for (int i = 0; i < Sh::K; i++)
    a = fmaf (w[i], f[c + i], a);
  return a;
}

/* c plus the signed 16-bit halves of a times bytes 0 and 1 of b (HI:
 * bytes 2 and 3), in one instruction. */
template < bool HI > __device__ __forceinline__ int
dp2a (uint32_t a, uint32_t b, int c)
{
  int d;

  if (HI)
    asm ("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r" (d) : "r" (a), "r" (b),
        "r" (c));
  else
    asm ("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r" (d) : "r" (a), "r" (b),
        "r" (c));
  return d;
}

/* The horizontal sums h of the loaded row w at its C samples, with the
 * quantized taps of term m (stream_prepare): each the bias hbias[m] plus
 * the integer sum of the taps times the samples, whose bits are the float
 * bias + sum exactly (the sum lies within the bias's range).  Two taps an
 * instruction, read from the samples' bytes as they were loaded: the
 * window's words (a component's bytes, from 2 components), and those
 * words shifted by one byte for the pairs that start at an odd byte; the
 * last tap pairs with the sample before it. */
template < class Sh > __device__ __forceinline__ void
stream_hsums (const SepParams & p, const uint32_t * w, int m, float *h)
{
  constexpr int NC = Sh::NC, R = Sh::R, NQ = Sh::NW / NC;
  constexpr int E0 = (Sh::E - Sh::A) / NC;
  static_assert (NC == 1 || (NC == 2 && Sh::NW % 2 == 0),
      "a component's bytes in whole words");
  uint32_t s[NC][NQ], sh[NC][NQ];

#pragma unroll
  for (int q = 0; q < NC; q++) {
#pragma unroll
    for (int k = 0; k < NQ; k++)
      s[q][k] = NC == 1 ? w[k] : __byte_perm (w[2 * k], w[2 * k + 1],
          q == 0 ? 0x6420 : 0x7531);
#pragma unroll
    for (int k = 0; k < NQ; k++)
      sh[q][k] = __byte_perm (s[q][k], k + 1 < NQ ? s[q][k + 1] : 0u,
          0x4321);
  }
#pragma unroll
  for (int c = 0; c < Sh::C; c++) {
    const int q = c % NC;
    int a = p.hbias[m];

#pragma unroll
    for (int j = 0; j <= R; j++) {
      /* the first byte of pair j (of the last tap and the one before) */
      const int i = E0 + c / NC + (j < R ? 2 * j : 2 * R - 1);
      const uint32_t b = i % 2 == 0 ? s[q][i / 4] : sh[q][i / 4];

      a = i % 4 < 2 ? dp2a < false > (p.kq[m][j], b, a)
          : dp2a < true > (p.kq[m][j], b, a);
    }
    h[c] = __int_as_float (a);
  }
}

/* Sample c of the loaded row w as a float: its byte moved to the low
 * bits and converted (two instructions, with no selector to keep in a
 * register as u8_to_f's). */
template < class Sh > __device__ __forceinline__ float
stream_sample (const uint32_t * w, int c)
{
  return __uint2float_rn (__byte_perm (w[(Sh::E + c) / 4], 0u,
          0x4440u | (Sh::E + c) % 4));
}

/* An output row of the strip at x from its terms' sums t0 and t1:
 * combined, rounded, packed and stored at d (GATHER: only its samples
 * inside the row).  The blur's, the sharpen's and the matrix's sums hold
 * the rounding's + 0.5 already. */
template < class Sh, bool GATHER > __device__ __forceinline__ void
stream_store_row (const SepParams & p, uint8_t * d, int x, const float *t0,
    const float *t1)
{
  constexpr int C = Sh::C, OUT = Sh::OUT;
  uint32_t b[C], out[C / 4];

  if (OUT == OUT_MATRIX && p.taps_nonneg) {
    /* taps >= 0 summing to at most 1 (launch_stream_matrix): no clamp,
     * by a branch the whole launch takes alike (the clamp measured
     * slower) */
#pragma unroll
    for (int c = 0; c < C; c++)
      b[c] = floor_bits (t0[c]);
  } else {
#pragma unroll
    for (int c = 0; c < C; c++) {
      float v;

      if (OUT == OUT_SHARPEN || OUT == OUT_MATRIX) {
        /* taps of either sign: saturated to [0, maxv] */
        v = fminf (fmaxf (t0[c], 0.5f), p.maxv + 0.5f);
      } else if (OUT == OUT_TWO_TERMS || OUT == OUT_ABS_SUM) {
        /* the combination is the shape's: no code for the other (a
         * run-time choice between them measured slower) */
        v = fminf (two_terms_approx (OUT == OUT_ABS_SUM ?
                CUCONV_COMBINE_ABS_SUM : CUCONV_COMBINE_MAGNITUDE, t0[c],
                t1[c]), p.maxv) + 0.5f;
      } else {
        v = t0[c];
      }
      b[c] = floor_bits (v);
    }
  }
#pragma unroll
  for (int q = 0; q < C / 4; q++)
    out[q] = pack_low_bytes (b[4 * q], b[4 * q + 1], b[4 * q + 2],
        b[4 * q + 3]);

  if (GATHER && x + C > p.ws) {
    for (int c = 0; c < C && x + c < p.ws; c++)
      d[c] = (uint8_t) (out[c / 4] >> (8 * (c % 4)));
    return;
  }
  if (C == 16)
    *(uint4 *) d = make_uint4 (out[0], out[1], out[2], out[3]);
  else if (C == 8)
    *(uint2 *) d = make_uint2 (out[0], out[1]);
  else
    *(uint32_t *) d = out[0];
}

/* Output row y of an edge column at x (stream_store_row, only its
 * samples inside the row), where it lies in the band. */
template < class Sh > __device__ __forceinline__ void
stream_store_edge (const SepParams & p, int x, int y, const float *t0,
    const float *t1)
{
  if (y < p.row_end)
    stream_store_row < Sh, true > (p, p.dst + (size_t) y * p.dst_pitch + x,
        x, t0, t1);
}

/* Loads row y of the strip at x, at in, into the words w of a
 * StreamWindow; without BY_POINTER, a row outside the plane through the
 * border (stream_load). */
template < class Sh, bool BY_POINTER > __device__ __forceinline__ void
stream_strip_load (const SepParams & p, const uint8_t * in, int x, int y,
    uint32_t * w)
{
  if (BY_POINTER || (unsigned) y < (unsigned) p.height)
    stream_load_row < Sh > (in, w);
  else
    stream_load < Sh, false > (p, x, y, false, w);
}

/* Period j0 / K of the walk of stream_strip: input rows j0 to
 * j0 + K - 1.  J0 >= 0: the period is the first or the last, j0 = J0 is
 * known at compile time and the FMAs into output rows outside the strip
 * are left out (they are started afresh or never stored); -1: a middle
 * period, at j0. */
template < class Sh, bool BY_POINTER, int J0 > __device__ __forceinline__ void
stream_period (const SepParams & p, int x, int y0, int j0,
    uint32_t (&ring)[Sh::K][Sh::NW], float (&acc)[Sh::NT][Sh::K][Sh::C],
    const uint8_t * &in, uint8_t * &out)
{
  constexpr int R = Sh::R, OUT = Sh::OUT;
  constexpr int C = Sh::C, A = Sh::A, S = Sh::S;
  constexpr int NT = Sh::NT, K = Sh::K, ROWS = S + 2 * R;

#pragma unroll
  for (int u = 0; u < K; u++) {
    const int j = (J0 >= 0 ? J0 : j0) + u;
    float h[NT][C], own[C], f[OUT == OUT_MATRIX ? C + 2 * A : 1];

    if (ROWS % K != 0 && j >= ROWS)
      break;
    if (OUT == OUT_MATRIX) {
      stream_floats < Sh > (ring[u], f);
    } else {
#pragma unroll
      for (int m = 0; m < NT; m++)
        stream_hsums < Sh > (p, ring[u], m, h[m]);
    }
#pragma unroll
    for (int c = 0; c < C && OUT == OUT_SHARPEN; c++)
      own[c] = stream_sample < Sh > (ring[u], c);
    if (j + K < ROWS) {
      stream_strip_load < Sh, BY_POINTER > (p, in, x, y0 - R + j + K,
          ring[u]);
      in += p.src_pitch;
    }

    /* the row's horizontal sums, each into the 2R + 1 output rows it
     * feeds: output row j - t takes it with vertical tap t, or for the
     * matrix, its sum with matrix row t; the sharpen's output row j - R
     * also takes the row's own samples (in a middle period, rows outside
     * the strip take it too, into slots that are started afresh before
     * their own output row uses them) */
#pragma unroll
    for (int m = 0; m < NT; m++) {
#pragma unroll
      for (int c = 0; c < C; c++) {
#pragma unroll
        for (int t = 0; t < K; t++) {
          float &a = acc[m][(u + K - t) % K][c];
          const float a0 = t == 0 ? p.vinit[m] : a;

          if (J0 >= 0 && (j - t < 0 || j - t >= S))
            continue;
          if (OUT == OUT_MATRIX)
            a = stream_dot < Sh > (p.kx + t * K, f, c, a0);
          else
            a = fmaf (p.ky[m * SEP_TERM2 + t], h[m][c], a0);
          if (OUT == OUT_SHARPEN && t == R)
            a = fmaf (p.amount, own[c], a);
        }
      }
    }
    if (j >= 2 * R) {
      if (BY_POINTER || y0 + j - 2 * R < p.row_end)
        stream_store_row < Sh, false > (p, out, x, acc[0][(u + 1) % K],
            acc[NT - 1][(u + 1) % K]);
      out += p.dst_pitch;
    }
  }
}

/* The strip of S output rows from row y0 of the C samples from x.  Input
 * row j (row y0 - R + j) sits in slot j % K of the load ring, loaded K
 * rows (one period) ahead; output row o accumulates in slot o % K.  The
 * walk is unrolled by one period, so that the slots are compile-time
 * names, and rolled over the periods, so that the code stays small
 * enough for the instruction cache (two periods ahead measured slower);
 * with Sh::PL the first and last periods are unrolled on their own
 * (stream_period, stream_peel).  The rows are walked by pointer.
 * BY_POINTER: every row the strip reads lies in the plane and every row
 * it writes in the band (all strips but the first and last of a band): no
 * checks, fewer instructions.  Else each row is checked, and one outside
 * the plane read through the border (faster, even with every strip so
 * walked, than every row's address from its index). */
template < class Sh, bool BY_POINTER > __device__ __forceinline__ void
stream_strip (const SepParams & p, int x, int y0)
{
  constexpr int R = Sh::R, K = Sh::K, ROWS = Sh::S + 2 * R;
  constexpr int LAST = (ROWS - 1) / K * K;      /* the last period's j0 */
  uint32_t ring[K][Sh::NW];
  float acc[Sh::NT][K][Sh::C];
  /* the next row to load (the address of a row outside the plane is
   * not read) and the next output row */
  const uint8_t *in = p.src + (ptrdiff_t) (y0 - R) * p.src_pitch + x;
  uint8_t *out = p.dst + (ptrdiff_t) y0 * p.dst_pitch + x;

#pragma unroll
  for (int u = 0; u < K; u++) {
    if (u >= ROWS)
      break;
    stream_strip_load < Sh, BY_POINTER > (p, in, x, y0 - R + u, ring[u]);
    in += p.src_pitch;
  }
  if (!Sh::PL) {
#pragma unroll 1
    for (int j0 = 0; j0 < ROWS; j0 += K)
      stream_period < Sh, BY_POINTER, -1 > (p, x, y0, j0, ring, acc, in,
          out);
    return;
  }
  stream_period < Sh, BY_POINTER, 0 > (p, x, y0, 0, ring, acc, in, out);
#pragma unroll 1
  for (int j0 = K; j0 < LAST; j0 += K)
    stream_period < Sh, BY_POINTER, -1 > (p, x, y0, j0, ring, acc, in, out);
  if (LAST > 0)
    stream_period < Sh, BY_POINTER, LAST > (p, x, y0, LAST, ring, acc, in,
        out);
}

/* Fills the warp's tile of the windows at x of input rows y0 - R to
 * y0 + 31 + R, for its lanes' rows y0 to y0 + 31 of an edge column
 * (stream_edge_row): the lanes along a row's words, a word at a time; a
 * word that reaches past a side of the row sample by sample through the
 * border (border_sample).  Returns the tile, Sh::TW words a row. */
template < class Sh > __device__ __forceinline__ const uint32_t *
stream_edge_tile (const SepParams & p, int x, int y0)
{
  constexpr int NW = Sh::NW, TW = Sh::TW, TR = 32 + 2 * Sh::R;
  __shared__ uint32_t tiles[ST_THREADS / 32][TR * TW];
  uint32_t *tile = tiles[threadIdx.x / 32];

  for (int k = threadIdx.x % 32; k < TR * NW; k += 32) {
    const int j = k / NW, q = k - j * NW, y = y0 - Sh::R + j;
    const int yy = (unsigned) y < (unsigned) p.height ? y :
        border_row_far (p.border, y, p.height);
    const int s = x - Sh::E + 4 * q;    /* the word's first sample */
    const uint8_t *row = p.src + (size_t) yy * p.src_pitch;
    uint32_t v = 0u;

    if (yy >= 0 && s >= 0 && s + 4 <= p.ws) {
      v = __ldg ((const uint32_t *) (row + s));
    } else if (yy >= 0) {
      for (int b = 0; b < 4; b++) {
        const int o = border_sample ((CuconvBorder) p.border, s + b, Sh::NC,
            p.width);
        v |= o >= 0 ? (uint32_t) __ldg (row + o) << (8 * b) : 0u;
      }
    }
    tile[j * TW + q] = v;
  }
  __syncwarp ();
  return tile;
}

/* Output row y of the C samples from x of an edge column, whose window
 * reaches past a side of the plane: its 2R + 1 input rows one after the
 * other, summed in the strips' order (the same results).  Each window
 * gathered sample by sample through the border mode, or with Sh::TILE
 * (two components from radius 2) read from the warp's tile
 * (stream_edge_tile), whose loads are words shared by the lanes.  Those
 * wider windows' gathers took more registers than the strips, and the
 * 4:2:0 frame kernels that hold them spilled.  Elsewhere the tiles cost
 * more than they saved (planes of one component, and the chroma of a
 * frame at radius 1). */
template < class Sh > __device__ __forceinline__ void
stream_edge_row (const SepParams & p, int x, int y, const uint32_t * tile)
{
  constexpr int R = Sh::R, OUT = Sh::OUT, NW = Sh::NW;
  constexpr int C = Sh::C, A = Sh::A, NT = Sh::NT, K = Sh::K;
  const bool near = p.width > C + A;
  float acc[NT][C];

#pragma unroll
  for (int m = 0; m < NT; m++)
#pragma unroll
    for (int c = 0; c < C; c++)
      acc[m][c] = p.vinit[m];
#pragma unroll 1
  for (int t = 0; t < K; t++) {
    uint32_t w[NW];
    float h[C], f[OUT == OUT_MATRIX ? C + 2 * A : 1];

    if (Sh::TILE) {
#pragma unroll
      for (int i = 0; i < NW; i++)
        w[i] = tile[(threadIdx.x % 32 + t) * Sh::TW + i];
    } else {
      stream_load < Sh, true > (p, x, y - R + t, near, w);
    }
    if (OUT == OUT_MATRIX)
      stream_floats < Sh > (w, f);
#pragma unroll
    for (int m = 0; m < NT; m++) {
      if (OUT != OUT_MATRIX)
        stream_hsums < Sh > (p, w, m, h);
#pragma unroll
      for (int c = 0; c < C; c++) {
        acc[m][c] = OUT == OUT_MATRIX ? stream_dot < Sh > (p.kx + t * K, f,
            c, acc[m][c]) : fmaf (p.ky[m * SEP_TERM2 + t], h[c], acc[m][c]);
        if (OUT == OUT_SHARPEN && t == R)
          acc[m][c] = fmaf (p.amount, stream_sample < Sh > (w, c), acc[m][c]);
      }
    }
  }
  stream_store_edge < Sh > (p, x, y, acc[0], acc[NT - 1]);
}

/* Thread t of a band of p: an edge row or a strip (stream_role).  Run by
 * whole warps (the vote). */
template < class Sh > __device__ __forceinline__ void
stream_thread (const SepParams & p, int t)
{
  constexpr int R = Sh::R, S = Sh::S;
  const int rows = p.row_end - p.row_begin, bands = (rows + S - 1) / S;
  int lo, hi, cols, e, i;

  stream_columns < Sh > (p, &lo, &hi, &cols);
  const int inner = hi - lo, edges = cols - inner;
  stream_role < Sh > (edges * stream_edge_span < Sh > (rows), inner * bands,
      t, &e, &i);

  /* the strips of the band's first and last rows of strips come first:
   * they walk with border checks, more slowly, and among the last
   * blocks they ended last */
  const int k = inner > 0 && i >= 0 ? i / inner : 0;
  const int sy = border_rows_first (k, bands);
  const int x = (lo + i - k * inner) * Sh::C, y0 = p.row_begin + sy * S;
  /* a warp walks by pointer only when all its threads can: one whose
   * threads took both walks would run one after the other */
  const bool by_pointer = __all_sync (0xffffffffu, inner > 0 && i >= 0
      && y0 >= R && y0 + S + R <= p.height && y0 + S <= p.row_end);

  if (e >= 0) {
    /* the first sample of edge column k */
    const auto edge_x = [&](int k) { return (k < lo ? k : hi + k - lo)
          * Sh::C; };

    if constexpr (Sh::TILE) {
      /* warp e / 32 takes 32 rows of edge column k, from row r */
      const int g = e / 32, r = p.row_begin + g / edges * 32, k = g % edges;

      stream_edge_row < Sh > (p, edge_x (k), r + e % 32,
          stream_edge_tile < Sh > (p, edge_x (k), r));
    } else {
      const int r = e / edges, k = e - r * edges;

      stream_edge_row < Sh > (p, edge_x (k), p.row_begin + r, NULL);
    }
  } else if (by_pointer) {
    stream_strip < Sh, true > (p, x, y0);
  } else if (inner > 0 && i >= 0 && y0 < p.row_end) {
    stream_strip < Sh, false > (p, x, y0);
  }
}

}                               /* namespace cuconv */

#endif /* __CUCONV_STREAM_CUH__ */
