/* gst-cudaconvolve: the 2-D convolution of a custom matrix (n_terms 0):
 * v = sum_j sum_i m[j][i] * in (B (x + i), B (y + j)), rows outer
 * (docs/design.md, "The 2-D matrix kernel").
 *
 * A block owns a tile of output pixels of every component of a plane.  It
 * converts the samples the tile reads (the tile plus an apron of r on each
 * side) into floats in shared memory once, with the plane's depth and
 * shift, a plane of floats a component so that a pixel's neighbours are
 * adjacent whatever the interleaving.  Each thread then computes a block
 * of P rows x Q columns of one component from shared memory: every input
 * row it reads feeds all P output rows, and every 4 input columns all Q
 * output columns, so that the (2r + 1)^2 taps cost few loads.
 *
 * Interior tiles load 4 samples at once with no checks; border tiles map
 * each column and row through the border mode once, into tables, and
 * guard their stores.
 *
 * One 8-bit component filtered at a fixed radius, the common case, takes
 * matrix_u8 instead: no shared memory staging, each thread reading its
 * window straight from global memory (see "One 8-bit component" below).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

/* Matrix radii with fully unrolled instantiations (3x3, 5x5, 7x7), of
 * matrix_tiles and of matrix_u8: their (2r + 1)^2 taps are immediate
 * operands.  Not CUCONV_FIXED_RADII: that list is the separable kernel's,
 * whose cost grows with 2r + 1, not its square; every other matrix radius
 * takes the generic path. */
#define CUCONV_MATRIX_FIXED_RADII(X) X (1) X (2) X (3)

constexpr int M_P = 4;          /* output rows a thread */

/* Output columns a thread: 4 on the fixed paths; 8 on the generic one,
 * whose taps come from shared memory 4 at a time, so that each load of 4
 * taps feeds 32 FMAs. */
__host__ __device__ constexpr int
m_cols (bool fixed)
{
  return fixed ? 4 : 8;
}

/* Output pixels of one component a tile row: a tile is 128 samples wide
 * (120 with 3 components, so that it starts on a multiple of 4 samples). */
__host__ __device__ constexpr int
m_tile_px (int nc)
{
  return nc == 3 ? 40 : 128 / nc;
}

/* Threads across a tile, each Q columns of one component. */
__host__ __device__ constexpr int
m_col_groups (int nc, bool fixed)
{
  return nc * m_tile_px (nc) / m_cols (fixed);
}

/* The most thread rows a block holds; the generic path may use fewer
 * (shorter tiles) when shared memory is short. */
__host__ __device__ constexpr int
m_max_row_groups (int nc, bool fixed)
{
  return THREADS / m_col_groups (nc, fixed);
}

__host__ __device__ constexpr int
round_up4 (int v)
{
  return (v + 3) & ~3;
}

/* A tile's shared memory, in floats: a plane per component of `rows` rows
 * of `spx` floats (the kw pixels read, then padding that the windows of
 * the last threads may load but never use), the generic path's taps in
 * rows of `ws` (a multiple of 4, for float4 loads), then the border
 * tables. */
struct MGeom
{
  int r, n;                     /* radius, 2r + 1 */
  int tpx, th;                  /* output pixels of a component, rows */
  int kw, rows;                 /* pixels and rows read: tpx + 2r, th + 2r */
  int spx;                      /* floats a row: tpx + round_up4 (n) */
  int cs;                       /* floats a component: rows * spx */
  int ws;                       /* taps a row in shared memory */
  bool fixed;
  __host__ __device__ constexpr MGeom (int r_, int nc, bool fixed_,
      int th_)
  : r (r_), n (2 * r_ + 1), tpx (m_tile_px (nc)), th (th_),
      kw (m_tile_px (nc) + 2 * r_), rows (th_ + 2 * r_),
      spx (m_tile_px (nc) + round_up4 (2 * r_ + 1)),
      cs ((th_ + 2 * r_) * (m_tile_px (nc) + round_up4 (2 * r_ + 1))),
      ws (round_up4 (2 * r_ + 1)), fixed (fixed_)
  {
  }
  __host__ __device__ constexpr int taps_floats () const
  {
    return fixed ? 0 : n * ws;
  }
  __host__ __device__ constexpr size_t smem_bytes (int nc) const
  {
    return ((size_t) nc * cs + taps_floats () + kw + rows) * sizeof (float);
  }
};

/* Bytes of a sample. */
template < bool WIDE > __host__ __device__ constexpr int
m_bytes ()
{
  return WIDE ? 2 : 1;
}

/* The value of raw sample s (a byte, or a word holding depth bits above
 * `shift` zero bits) as a float. */
template < bool WIDE > __device__ __forceinline__ float
sample_f (const MatrixParams & p, uint32_t s)
{
  return WIDE ? raw_to_float < uint16_t > (s, p.shift, (1u << p.depth) - 1)
      : raw_to_float < uint8_t > (s, 0, 0);
}

/* The raw sample at column col (of all components) of a row. */
template < bool WIDE > __device__ __forceinline__ uint32_t
raw_sample (const uint8_t * row, int col)
{
  return WIDE ? ((const uint16_t *) row)[col] : row[col];
}

/* A thread issues this many loads before it uses any, so that a tile
 * waits for memory once or twice rather than once a load. */
constexpr int LOAD_BATCH = 8;

/* Interior tiles: rows of 4-sample units (one 32-bit load of 8-bit
 * samples, one 64-bit load of words), from a multiple of 4 samples at
 * least r pixels to the left of the tile to one at least r to its right;
 * each sample is stored in its component's plane, those outside the kw
 * pixels a row keeps are dropped. */
template < int NC, bool WIDE > __device__ void
load_units (const MatrixParams & p, const MGeom & g, float *s, int px0,
    int y0)
{
  const int a = round_up4 (g.r * NC);   /* samples loaded left and right */
  const int upr = (g.tpx * NC + 2 * a) / 4;     /* units a row */
  const int skip = a - g.r * NC;        /* samples loaded before the first kept */
  const int keep = g.kw * NC, items = g.rows * upr;
  /* A unit's 4 samples go to 4 adjacent floats, so neighbouring threads'
   * stores, 4 floats apart, would fall in the same bank 4 at a time: each
   * group of 8 threads starts at another sample of its unit. */
  const int rot = (threadIdx.x >> 3) & 3;

  for (int it0 = threadIdx.x; it0 < items; it0 += LOAD_BATCH * THREADS) {
    uint32_t lo[LOAD_BATCH], hi[LOAD_BATCH];

#pragma unroll
    for (int b = 0; b < LOAD_BATCH; b++) {
      const int it = it0 + b * THREADS, row = it / upr, u = it - row * upr;
      const uint8_t *src = p.src + (size_t) (y0 - g.r + row) * p.src_pitch
          + (size_t) (px0 * NC - a + 4 * u) * m_bytes < WIDE > ();

      lo[b] = hi[b] = 0;
      if (it >= items)
        break;
      if (WIDE) {
        const uint2 v = __ldg ((const uint2 *) src);
        lo[b] = v.x;
        hi[b] = v.y;
      } else {
        lo[b] = __ldg ((const uint32_t *) src);
      }
    }
#pragma unroll
    for (int b = 0; b < LOAD_BATCH; b++) {
      const int it = it0 + b * THREADS, row = it / upr, u = it - row * upr;

      if (it >= items)
        break;
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int k = (e + rot) & 3, rel = 4 * u + k - skip;
        uint32_t raw;

        if (rel < 0 || rel >= keep)
          continue;
        if (WIDE)
          raw = ((k & 2) ? hi[b] : lo[b]) >> (16 * (k & 1)) & 0xffffu;
        else
          raw = lo[b] >> (8 * k) & 0xffu;
        s[(rel % NC) * g.cs + row * g.spx + rel / NC] =
            sample_f < WIDE > (p, raw);
      }
    }
  }
}

/* Border tiles: every sample through the tables; -1 reads 0, which any
 * depth and shift turn into 0.0f. */
template < int NC, bool WIDE > __device__ void
load_mapped (const MatrixParams & p, const MGeom & g, float *s,
    const int *colmap, const int *rowmap)
{
  const int items = g.rows * g.kw;

  for (int it0 = threadIdx.x; it0 < items; it0 += LOAD_BATCH * THREADS) {
    uint32_t raw[LOAD_BATCH][NC];

#pragma unroll
    for (int b = 0; b < LOAD_BATCH; b++) {
      const int it = it0 + b * THREADS, row = it / g.kw, k = it - row * g.kw;

#pragma unroll
      for (int c = 0; c < NC; c++)
        raw[b][c] = 0;
      if (it >= items)
        break;
      const int xi = colmap[k], yi = rowmap[row];
      if (xi < 0 || yi < 0)
        continue;
#pragma unroll
      for (int c = 0; c < NC; c++)
        raw[b][c] = raw_sample < WIDE > (p.src + (size_t) yi * p.src_pitch,
            xi * NC + c);
    }
#pragma unroll
    for (int b = 0; b < LOAD_BATCH; b++) {
      const int it = it0 + b * THREADS, row = it / g.kw, k = it - row * g.kw;

      if (it >= items)
        break;
#pragma unroll
      for (int c = 0; c < NC; c++)
        s[c * g.cs + row * g.spx + k] = sample_f < WIDE > (p, raw[b][c]);
    }
  }
}

/* The fixed radii: the thread's P x 4 block.  Input row jj of its window
 * feeds output row o with the matrix row jj - o; all indices are known at
 * compile time, so the taps are constant-bank operands of the FMAs. */
template < int R, int NC > __device__ __forceinline__ void
compute_fixed (const MatrixParams & p, const float *plane, int ty, int px,
    float (&acc)[M_P][4])
{
  constexpr int N = 2 * R + 1;
  constexpr int NV = (4 + 2 * R + 3) / 4;       /* float4 a window row */
  constexpr MGeom g (R, NC, true, 0);

#pragma unroll
  for (int jj = 0; jj < M_P + 2 * R; jj++) {
    const float4 *rp = (const float4 *) (plane + (ty + jj) * g.spx + px);
    float f[4 * NV];

#pragma unroll
    for (int v = 0; v < NV; v++) {
      const float4 x = rp[v];
      f[4 * v] = x.x;
      f[4 * v + 1] = x.y;
      f[4 * v + 2] = x.z;
      f[4 * v + 3] = x.w;
    }
#pragma unroll
    for (int o = 0; o < M_P; o++) {
      const int t = jj - o;
      if (t < 0 || t >= N)
        continue;
#pragma unroll
      for (int i = 0; i < N; i++)
#pragma unroll
        for (int q = 0; q < 4; q++)
          acc[o][q] = fmaf (p.w[t * N + i], f[q + i], acc[o][q]);
    }
  }
}

/* The generic path: input row jj of the window against up to P matrix
 * rows, 4 columns (one float4 of taps, dn of them used) at a time; the
 * window's 12 floats a, b, c cover the 8 outputs' inputs for those 4
 * taps.  ALL: every output row takes this input row (no check). */
template < bool ALL > __device__ __forceinline__ void
taps4 (float (&acc)[M_P][8], const float4 & a, const float4 & b,
    const float4 & c, const float4 * taps, int ws4, int n, int jj,
    int chunk, int dn)
{
  const float f[12] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w,
    c.x, c.y, c.z, c.w
  };

#pragma unroll
  for (int o = 0; o < M_P; o++) {
    const int t = jj - o;
    if (!ALL && (t < 0 || t >= n))
      continue;
    const float4 w4 = taps[t * ws4 + chunk];
    const float w[4] = { w4.x, w4.y, w4.z, w4.w };
#pragma unroll
    for (int d = 0; d < 4; d++) {
      if (d >= dn)
        break;
#pragma unroll
      for (int q = 0; q < 8; q++)
        acc[o][q] = fmaf (w[d], f[q + d], acc[o][q]);
    }
  }
}

template < bool ALL > __device__ __forceinline__ void
generic_row (float (&acc)[M_P][8], const float4 * rp, const float4 * taps,
    const MGeom & g, int jj)
{
  const int full = g.n / 4, rest = g.n % 4, ws4 = g.ws / 4;
  float4 a = rp[0], b = rp[1];
  int c = 0;

  for (; c < full; c++) {
    const float4 nx = rp[c + 2];
    taps4 < ALL > (acc, a, b, nx, taps, ws4, g.n, jj, c, 4);
    a = b;
    b = nx;
  }
  if (rest)
    taps4 < ALL > (acc, a, b, rp[c + 2], taps, ws4, g.n, jj, c, rest);
}

/* Input rows in order, so each output sums its matrix rows in order, and
 * within a row its columns in order, as the reference does. */
__device__ __forceinline__ void
compute_generic (const MGeom & g, const float *plane, const float4 * taps,
    int ty, int px, float (&acc)[M_P][8])
{
  for (int jj = 0; jj < M_P + g.n - 1; jj++) {
    const float4 *rp = (const float4 *) (plane + (ty + jj) * g.spx + px);

    if (jj >= M_P - 1 && jj < g.n)
      generic_row < true > (acc, rp, taps, g, jj);
    else
      generic_row < false > (acc, rp, taps, g, jj);
  }
}

/* What component op makes of the sum v at column col of row y. */
template < bool WIDE > __device__ __forceinline__ uint32_t
out_sample (const MatrixParams & p, int op, float v, int y, int col)
{
  switch (op) {
    case CUCONV_COMP_COPY:
      return raw_sample < WIDE > (p.src + (size_t) y * p.src_pitch, col);
    case CUCONV_COMP_FILL:
      return p.fill << p.shift;
    case CUCONV_COMP_FILTER:
    default:
      return cuconv_round_sat (v, (1u << p.depth) - 1) << p.shift;
  }
}

/* Writes the thread's block: rows y.., pixels px.. of component comp.
 * GUARD: the tile may stick out of the plane or the band; otherwise a
 * planar row of 4 outputs is one aligned store. */
template < int NC, bool WIDE, int Q, bool GUARD > __device__ void
store_block (const MatrixParams & p, const float (&acc)[M_P][Q], int comp,
    int px, int y)
{
  const int op = p.op[comp];

#pragma unroll
  for (int o = 0; o < M_P; o++) {
    const int yy = y + o;
    uint8_t *row = p.dst + (size_t) yy * p.dst_pitch;

    if (GUARD && yy >= p.row_end)
      break;
    if (NC == 1 && !GUARD) {
#pragma unroll
      for (int q = 0; q < Q; q += 4) {
        uint32_t v[4];
#pragma unroll
        for (int e = 0; e < 4; e++)
          v[e] = out_sample < WIDE > (p, op, acc[o][q + e], yy, px + q + e);
        if (WIDE)
          *(uint2 *) (row + 2 * (px + q)) = make_uint2 (v[0] | v[1] << 16,
              v[2] | v[3] << 16);
        else
          *(uint32_t *) (row + px + q) = v[0] | v[1] << 8 | v[2] << 16 |
              v[3] << 24;
      }
    } else {
#pragma unroll
      for (int q = 0; q < Q; q++) {
        const int col = (px + q) * NC + comp;
        uint32_t v;

        if (GUARD && px + q >= p.width)
          break;
        v = out_sample < WIDE > (p, op, acc[o][q], yy, col);
        if (WIDE)
          ((uint16_t *) row)[col] = (uint16_t) v;
        else
          row[col] = (uint8_t) v;
      }
    }
  }
}

/* One tile (blockIdx.x, blockIdx.y) of tile_rows rows; R < 0: the generic
 * path, with p.radius. */
template < int R, int NC, bool WIDE > __global__ void
__launch_bounds__ (THREADS)
matrix_tiles (const __grid_constant__ MatrixParams p, int tile_rows)
{
  constexpr bool FIXED = R >= 0;
  constexpr int Q = m_cols (FIXED);
  constexpr int COL_GROUPS_M = m_col_groups (NC, FIXED);
  const MGeom g (FIXED ? R : p.radius, NC, FIXED, FIXED ?
      m_max_row_groups (NC, true) * M_P : tile_rows);
  extern __shared__ float4 matrix_smem[];
  float *s = (float *) matrix_smem;
  float4 *taps = (float4 *) (s + NC * g.cs);
  int *colmap = (int *) (s + NC * g.cs + g.taps_floats ());
  int *rowmap = colmap + g.kw;
  const int px0 = blockIdx.x * g.tpx;
  const int y0 = p.row_begin + blockIdx.y * g.th;
  const int a = round_up4 (g.r * NC);
  const bool interior = tile_is_interior (p.src_aligned && p.dst_aligned,
      px0 * NC - a, (px0 + g.tpx) * NC + a, p.width * NC, y0, g.th, g.r,
      p.height, p.row_end);

  if (interior) {
    load_units < NC, WIDE > (p, g, s, px0, y0);
  } else {
    /* tables of pixels (nc 1): load_mapped reads their components */
    build_border_tables ((CuconvBorder) p.border, 1, p.width, p.height,
        colmap, g.kw, px0 - g.r, rowmap, g.rows, y0 - g.r);
    __syncthreads ();
    load_mapped < NC, WIDE > (p, g, s, colmap, rowmap);
  }
  if (!FIXED)
    for (int i = threadIdx.x; i < g.n * g.ws; i += THREADS) {
      const int t = i / g.ws, c = i - t * g.ws;
      ((float *) taps)[i] = c < g.n ? p.w[t * g.n + c] : 0.0f;
    }
  __syncthreads ();

  /* thread rows of Q columns of one component, components side by side */
  const int cg = threadIdx.x % COL_GROUPS_M, rg = threadIdx.x / COL_GROUPS_M;
  const int comp = cg / (g.tpx / Q), px = (cg % (g.tpx / Q)) * Q;
  const int ty = rg * M_P;
  float acc[M_P][Q];

  if (ty >= g.th)
    return;
#pragma unroll
  for (int o = 0; o < M_P; o++)
#pragma unroll
    for (int q = 0; q < Q; q++)
      acc[o][q] = 0.0f;
  if constexpr (FIXED)
    compute_fixed < R, NC > (p, s + comp * g.cs, ty, px, acc);
  else
    compute_generic (g, s + comp * g.cs, taps, ty, px, acc);
  if (interior)
    store_block < NC, WIDE, Q, false > (p, acc, comp, px0 + px, y0 + ty);
  else
    store_block < NC, WIDE, Q, true > (p, acc, comp, px0 + px, y0 + ty);
}

/* One 8-bit component ---------------------------------------------------- */

/* A plane of one 8-bit component (grey, the planes of I420, NV12's luma)
 * under the 3x3 matrix stages nothing (pick_u8 says where): staged as
 * above, converting, storing and loading back its samples cost most of
 * the work (the 3x3 matrix took 62 instructions an output, 9 of them its
 * FMAs).  A thread computes Q
 * adjacent columns x H rows straight from global memory instead.  It
 * reads each row of its window once (Q bytes in one load and a 4-byte
 * word either side), converts each byte once, and adds the row to every
 * output row it meets, as compute_fixed does; an output row is rounded
 * and stored as soon as its last matrix row is in, so that only 2r + 1
 * rows of sums are live at a time.
 *
 * Rows always come through the block's row table, so the top and bottom
 * cost nothing extra.  Where a thread's window sticks out of the row, or
 * the rows are not 4-byte aligned, the words of the window that do (or
 * all of them) are read a byte at a time through the column table; the
 * other threads keep their vector loads. */
template < int R > struct U8Tile
{
  /* columns a thread: 16, one 16-byte load (the dispatch takes radius 1
   * only: at 2 and 3, 2r + 1 rows of 16 sums would not fit the registers,
   * and 8 columns measured no faster than the tiled kernel) */
  static constexpr int Q = 16;
  /* rows a thread: 128 outputs in all, so that its 2r rows of window
   * beyond its own are a small part of what it loads and converts */
  static constexpr int H = 128 / Q;
  /* threads across a tile; a tile is 256 pixels x 128 rows (a
   * 3840x2160 plane is 255 tiles: one wave of 2 blocks an SM on a
   * 132-SM device) */
  static constexpr int TX = 256 / Q;
  static constexpr int TY = THREADS / TX;
  static constexpr int W = TX * Q;      /* a tile's pixels */
  static constexpr int TH = TY * H;     /* a tile's rows */
  /* a window row: the bytes from x - 4 to x + Q + 4, in words; its
   * columns x - R .. x + Q + R - 1 are bytes 4 - R .. Q + 3 + R */
  static constexpr int NW = Q / 4 + 2;
  static constexpr int NR = H + 2 * R;  /* window rows */
  static_assert (R <= 4, "the window's apron lies in one word either side");
};

/* How a thread reads its window and writes its outputs. */
enum U8Access
{
  U8_VECTOR,                    /* Q bytes in one load or store */
  U8_WORDS,                     /* Q / 4 words */
  U8_BYTES,                     /* bytes: at the plane's edges, or unaligned */
};

/* How a thread may access q bytes from column x of rows of width bytes
 * from base, with `apron` more bytes either side: vector or word accesses
 * only where all of them lie inside the row and are aligned. */
__device__ __forceinline__ U8Access
u8_access (const uint8_t * base, size_t pitch, int x, int q, int apron,
    int width)
{
  const uintptr_t a = (uintptr_t) base | pitch;

  if (x - apron < 0 || x + q + apron > width || a % 4 != 0)
    return U8_BYTES;
  return a % q == 0 ? U8_VECTOR : U8_WORDS;
}

/* Word i of a window row (the bytes from x - 4 + 4i) of plane row `row`
 * where the window is not wholly inside the row, or the rows are not
 * 4-byte aligned: the word whole if it lies inside the row and
 * `aligned`, else byte by byte, the window's bytes alone, each through
 * the column table (colmap[k]: where column x - R + k reads). */
template < int R > __device__ __forceinline__ uint32_t
u8_edge_word (const uint8_t * row, bool aligned, int x, int width, int i,
    const int *colmap)
{
  using T = U8Tile < R >;
  const int c0 = x - 4 + 4 * i;
  uint32_t v = 0;

  if (aligned && c0 >= 0 && c0 + 4 <= width)
    return __ldg ((const uint32_t *) (row + c0));
#pragma unroll
  for (int e = 0; e < 4; e++) {
    const int k = 4 * i + e - (4 - R);  /* the window's column */

    if (k >= 0 && k < T::Q + 2 * R && colmap[k] >= 0)
      v |= (uint32_t) __ldg (row + (unsigned) colmap[k]) << 8 * e;
  }
  return v;
}

/* Plane row yi (-1 reads 0) as the thread's window row w. */
template < int R > __device__ __forceinline__ void
u8_load_row (const MatrixParams & p, U8Access mode, int yi, int x,
    const int *colmap, uint32_t (&w)[U8Tile < R >::NW])
{
  using T = U8Tile < R >;

  if (yi < 0) {
#pragma unroll
    for (int i = 0; i < T::NW; i++)
      w[i] = 0;
    return;
  }

  /* yi >= 0: the unsigned product is one step less */
  const uint8_t *row = p.src + (size_t) (unsigned) yi * p.src_pitch;

  if (mode == U8_BYTES) {
    const bool aligned = ((uintptr_t) p.src | p.src_pitch) % 4 == 0;

#pragma unroll
    for (int i = 0; i < T::NW; i++)
      w[i] = u8_edge_word < R > (row, aligned, x, p.width, i, colmap);
    return;
  }
  row += x;
  w[0] = __ldg ((const uint32_t *) (row - 4));
  w[T::NW - 1] = __ldg ((const uint32_t *) (row + T::Q));
  if (mode == U8_WORDS) {
#pragma unroll
    for (int i = 1; i < T::NW - 1; i++)
      w[i] = __ldg ((const uint32_t *) (row + 4 * (i - 1)));
  } else {
    const uint4 v = __ldg ((const uint4 *) row);

    w[1] = v.x;
    w[2] = v.y;
    w[3] = v.z;
    w[4] = v.w;
  }
}

/* Adds window row jj (w) to the sums of the output rows it meets: row o
 * takes it with matrix row jj - o.  Once unrolled every index is a
 * constant: the taps come straight from the constant bank, the bytes'
 * positions are immediates of the conversions. */
template < int R > __device__ __forceinline__ void
u8_add_row (const MatrixParams & p, const uint32_t (&w)[U8Tile < R >::NW],
    int jj, float (&acc)[U8Tile < R >::H][U8Tile < R >::Q])
{
  using T = U8Tile < R >;
  constexpr int N = 2 * R + 1;
  float f[T::Q + 2 * R];

#pragma unroll
  for (int k = 0; k < T::Q + 2 * R; k++)
    f[k] = u8_to_f (w[(k + 4 - R) / 4], (k + 4 - R) % 4);
#pragma unroll
  for (int o = 0; o < T::H; o++) {
    const int t = jj - o;

    if (t < 0 || t >= N)
      continue;
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
      for (int q = 0; q < T::Q; q++)
        acc[o][q] = fmaf (p.w[t * N + i], f[q + i], acc[o][q]);
  }
}

/* Rounds 4 sums as cuconv_round_sat (v, 255) does and packs them, the
 * first in the low byte.  v + 0.5 truncated, then saturated to 0..255, is
 * that rounding: below -0.5 both give 0, and from there up truncation is
 * the floor.  ptxas fuses each pair of truncations with its cvt.pack
 * into one F2IP. */
__device__ __forceinline__ uint32_t
round_pack4_sat (float a, float b, float c, float d)
{
  const int ia = __float2int_rz (__fadd_rn (a, 0.5f));
  const int ib = __float2int_rz (__fadd_rn (b, 0.5f));
  const int ic = __float2int_rz (__fadd_rn (c, 0.5f));
  const int id = __float2int_rz (__fadd_rn (d, 0.5f));
  uint32_t hi, v;

  /* cvt.pack.sat.u8.s32.b32 d, a, b, c: b in byte 0, a in byte 1, the
   * low half of c above them */
  asm ("cvt.pack.sat.u8.s32.b32 %0, %1, %2, 0;" : "=r" (hi) : "r" (id),
      "r" (ic));
  asm ("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r" (v) : "r" (ib),
      "r" (ia), "r" (hi));
  return v;
}

/* Rounds the sums v of an output row and writes them at d, column x;
 * bytes only inside the plane. */
template < int Q > __device__ __forceinline__ void
u8_store_row (uint8_t * d, U8Access mode, int x, int width,
    const float (&v)[Q])
{
  uint32_t out[Q / 4];

#pragma unroll
  for (int i = 0; i < Q / 4; i++)
    out[i] = round_pack4_sat (v[4 * i], v[4 * i + 1], v[4 * i + 2],
        v[4 * i + 3]);
  if (mode == U8_BYTES) {
#pragma unroll
    for (int k = 0; k < Q; k++)
      if (x + k < width)
        d[k] = (uint8_t) (out[k / 4] >> 8 * (k % 4));
  } else if (mode == U8_WORDS) {
#pragma unroll
    for (int i = 0; i < Q / 4; i++)
      ((uint32_t *) d)[i] = out[i];
  } else {
    *(uint4 *) d = make_uint4 (out[0], out[1], out[2], out[3]);
  }
}

/* Window rows a thread loads ahead of the one it sums, so that their
 * loads are in flight meanwhile. */
constexpr int U8_AHEAD = 2;

/* The thread's block: columns x.., rows y.. below row_end.  rowmap[jj] is
 * the plane row window row jj (row y - R + jj) reads, colmap as for
 * u8_edge_word; in and out say how it reads and writes. */
template < int R > __device__ __forceinline__ void
u8_block (const MatrixParams & p, U8Access in, U8Access out, int x, int y,
    const int *colmap, const int *rowmap)
{
  using T = U8Tile < R >;
  uint8_t *dst = p.dst + (size_t) y * p.dst_pitch + x;
  uint32_t w[T::NR][T::NW];
  float acc[T::H][T::Q];

#pragma unroll
  for (int jj = 0; jj < U8_AHEAD; jj++)
    u8_load_row < R > (p, in, rowmap[jj], x, colmap, w[jj]);
#pragma unroll
  for (int jj = 0; jj < T::NR; jj++) {
    const int o = jj - 2 * R;   /* the output row this row completes */

    if (jj + U8_AHEAD < T::NR)
      u8_load_row < R > (p, in, rowmap[jj + U8_AHEAD], x, colmap,
          w[jj + U8_AHEAD]);
    if (jj < T::H)
#pragma unroll
      for (int q = 0; q < T::Q; q++)
        acc[jj][q] = 0.0f;
    u8_add_row < R > (p, w[jj], jj, acc);
    if (o >= 0 && y + o < p.row_end) {
      u8_store_row < T::Q > (dst, out, x, p.width, acc[o]);
      dst += p.dst_pitch;
    }
  }
}

/* One tile (blockIdx.x, blockIdx.y) of TX x TY threads.  2 blocks an SM
 * leave the registers that the edges' byte loads need beside the sums
 * (at 3, 80 registers a thread, ptxas spills). */
template < int R > __global__ void
__launch_bounds__ (THREADS, 2)
matrix_u8 (const __grid_constant__ MatrixParams p)
{
  using T = U8Tile < R >;
  __shared__ int colmap[T::W + 2 * R], rowmap[T::TH + 2 * R];
  const int x0 = blockIdx.x * T::W;
  const int y0 = p.row_begin + blockIdx.y * T::TH;
  const int tx = threadIdx.x % T::TX, ty = threadIdx.x / T::TX;
  const int x = x0 + tx * T::Q, y = y0 + ty * T::H;

  build_border_tables ((CuconvBorder) p.border, 1, p.width, p.height,
      colmap, T::W + 2 * R, x0 - R, rowmap, T::TH + 2 * R, y0 - R);
  __syncthreads ();
  if (x >= p.width || y >= p.row_end)
    return;
  u8_block < R > (p, u8_access (p.src, p.src_pitch, x, T::Q, 4, p.width),
      u8_access (p.dst, p.dst_pitch, x, T::Q, 0, p.width),
      x, y, colmap + tx * T::Q, rowmap + ty * T::H);
}

/* Host side ------------------------------------------------------------ */

void
matrix_params_init (MatrixParams & p, const CuconvPlane & pl,
    const CuconvMatrix & m, CuconvBorder border, int row_begin, int row_end)
{
  const size_t unit = 4 * (size_t) cuconv_plane_sample_bytes (&pl);
  const int n = 2 * m.radius + 1;

  band_params_init (p, pl, row_begin, row_end);
  p.n_comp = pl.n_comp;
  p.depth = pl.depth > 8 ? pl.depth : 8;
  p.shift = pl.depth > 8 ? pl.shift : 0;
  p.fill = pl.fill;
  memcpy (p.op, pl.op, sizeof (p.op));
  p.border = border;
  p.radius = m.radius;
  p.src_aligned = (uintptr_t) pl.src % unit == 0 && p.src_pitch % unit == 0;
  p.dst_aligned = (uintptr_t) pl.dst % unit == 0 && p.dst_pitch % unit == 0;
  if (m.radius >= 0 && m.radius <= CUCONV_MAX_MATRIX_RADIUS)
    memcpy (p.w, m.w, sizeof (float) * n * n);
}

typedef cudaError_t (*MatrixLauncher) (const MatrixParams &, cudaStream_t);

template < int R, int NC, bool WIDE > static cudaError_t
launch_m (const MatrixParams & p, cudaStream_t stream)
{
  constexpr bool FIXED = R >= 0;
  static SmemLimit smem_limit;
  const int r = FIXED ? R : p.radius;
  const int max_rg = m_max_row_groups (NC, FIXED);
  int rg;
  size_t smem;
  /* generic path: the tallest tile that fits, in groups of M_P rows
   * (Turing has 64 KiB a block; the fixed radii need at most 24 KiB) */
  const cudaError_t err = fit_tile (max_rg, FIXED ? max_rg : 1,[&](int u) {
        return MGeom (r, NC, FIXED, u * M_P).smem_bytes (NC);
      }, &rg, &smem);

  if (err != cudaSuccess)
    return err;
  if (rg == 0)
    return cudaErrorInvalidConfiguration;

  const int th = rg * M_P;
  const dim3 grid ((p.width + m_tile_px (NC) - 1) / m_tile_px (NC),
      (p.row_end - p.row_begin + th - 1) / th);
  return launch_smem ((const void *) matrix_tiles < R, NC, WIDE >,
      (int) smem, smem_limit,[&] {
        matrix_tiles < R, NC, WIDE > <<< grid, THREADS, smem, stream >>> (p,
            th);
      });
}

template < int NC, bool WIDE > static MatrixLauncher
pick_radius (int r)
{
  switch (r) {
#define CUCONV_MATRIX_CASE(R) case R: return launch_m < R, NC, WIDE >;
      CUCONV_MATRIX_FIXED_RADII (CUCONV_MATRIX_CASE)
#undef CUCONV_MATRIX_CASE
    default:
      return launch_m < -1, NC, WIDE >;
  }
}

template < int R > static cudaError_t
launch_u8 (const MatrixParams & p, cudaStream_t stream)
{
  using T = U8Tile < R >;
  const dim3 grid ((p.width + T::W - 1) / T::W,
      (p.row_end - p.row_begin + T::TH - 1) / T::TH);

  matrix_u8 < R > <<< grid, THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

bool
matrix_u8_takes (const MatrixParams & p)
{
  return p.depth <= 8 && p.n_comp == 1 && p.op[0] == CUCONV_COMP_FILTER
      && p.radius == 1;
}

long long
matrix_u8_blocks (const MatrixParams & p)
{
  using T = U8Tile < 1 >;

  return (long long) ((p.width + T::W - 1) / T::W) *
      ((p.row_end - p.row_begin + T::TH - 1) / T::TH);
}

/* One 8-bit component: matrix_u8 for the 3x3 matrix of a filtered one
 * where the dispatch chose it (p.u8); the tiled kernel for the rest (at
 * 5x5 and 7x7 matrix_u8 is no faster). */
static MatrixLauncher
pick_u8 (const MatrixParams & p)
{
  if (p.u8 && p.op[0] == CUCONV_COMP_FILTER && p.radius == 1)
    return launch_u8 < 1 >;
  return pick_radius < 1, false > (p.radius);
}

template < bool WIDE > static MatrixLauncher
pick_comps (const MatrixParams & p)
{
  switch (p.n_comp) {
    case 1:
      if constexpr (WIDE)
        return pick_radius < 1, WIDE > (p.radius);
      else
        return pick_u8 (p);
    case 2:
      return pick_radius < 2, WIDE > (p.radius);
    case 3:
      return pick_radius < 3, WIDE > (p.radius);
    case 4:
      return pick_radius < 4, WIDE > (p.radius);
    default:
      return NULL;
  }
}

cudaError_t
launch_matrix (const MatrixParams & p, cudaStream_t stream)
{
  MatrixLauncher launch;

  if (p.radius < 0 || p.radius > CUCONV_MAX_MATRIX_RADIUS || p.width <= 0
      || p.height <= 0 || p.row_begin < 0 || p.row_end > p.height)
    return cudaErrorInvalidValue;
  /* 16-bit samples are read and written as words */
  if (p.depth > 8 && (((uintptr_t) p.src | (uintptr_t) p.dst | p.src_pitch
              | p.dst_pitch) & 1))
    return cudaErrorInvalidValue;
  launch = p.depth > 8 ? pick_comps < true > (p) : pick_comps < false > (p);
  if (!launch)
    return cudaErrorInvalidValue;
  if (p.row_end <= p.row_begin)
    return cudaSuccess;
  return launch (p, stream);
}

}                               /* namespace cuconv */
