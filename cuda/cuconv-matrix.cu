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
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

/* Matrix radii with fully unrolled instantiations (3x3, 5x5, 7x7): their
 * (2r + 1)^2 taps are immediate operands.  Not CUCONV_FIXED_RADII: that
 * list is the separable kernel's, whose cost grows with 2r + 1, not its
 * square; every other matrix radius takes the generic path. */
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

template < bool WIDE > static MatrixLauncher
pick_comps (int nc, int r)
{
  switch (nc) {
    case 1:
      return pick_radius < 1, WIDE > (r);
    case 2:
      return pick_radius < 2, WIDE > (r);
    case 3:
      return pick_radius < 3, WIDE > (r);
    case 4:
      return pick_radius < 4, WIDE > (r);
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
  launch = p.depth > 8 ? pick_comps < true > (p.n_comp, p.radius) :
      pick_comps < false > (p.n_comp, p.radius);
  if (!launch)
    return cudaErrorInvalidValue;
  if (p.row_end <= p.row_begin)
    return cudaSuccess;
  return launch (p, stream);
}

}                               /* namespace cuconv */
