/* gst-cudaconvolve: the region filter's direct kernel (docs/design.md,
 * "The region path"), which filters the rectangles of a frame where they
 * lie, reading the source through the frame's border mode exactly as the
 * whole-frame filter does.  A block takes one item of a work list in
 * device memory: an output tile (at most DIRECT_W x tile_h) of one
 * component of one rectangle of one plane.  It stages the tile's input
 * with the filter's reach, filters it in shared memory, horizontally then
 * vertically in the reference's order, combines the terms and writes the
 * samples of its tile, all inside the rectangle.  One or two separable
 * terms, or the 2-D matrix; here also what it takes, its view of a plane,
 * its taps and its shared memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-tap-rows.cuh"
#include "cuconv-device-frames.cuh"

namespace cuconv {

/* The widest reach a tile holds; a wider filter takes the whole plane. */
constexpr int DIRECT_MAX_REACH = 64;

/* Sample k (a component of a pixel) of row `row`, as a value. */
__device__ __forceinline__ float
direct_load (const DirectPlane & pl, const uint8_t * row, size_t k)
{
  const uint32_t raw = pl.bytes == 1 ? row[k] : ((const uint16_t *) row)[k];

  return sample_to_float ((raw >> pl.shift) & pl.mask);
}

__device__ __forceinline__ void
direct_store (const DirectPlane & pl, int x, int y, int comp, uint32_t word)
{
  uint8_t *row = pl.dst + (size_t) y * pl.dst_pitch;
  const size_t k = (size_t) x * pl.nc + comp;

  if (pl.bytes == 1)
    row[k] = (uint8_t) word;
  else
    ((uint16_t *) row)[k] = (uint16_t) word;
}

/* A value rounded, saturated and shifted into the sample's word. */
__device__ __forceinline__ uint32_t
direct_word (const DirectPlane & pl, float v)
{
  return (cuconv_round_sat (v, pl.mask) << pl.shift) & pl.word_mask;
}

/* Loads a block has in flight at once, each thread STAGE_BATCH. */
constexpr int STAGE_BATCH = 8;

/* Stages component comp of the tile: stage[r * cols + c], r < rows,
 * c < cols, is the value of the pixel (colmap[c], rowmap[r]), 0 where
 * either is -1.  Each thread issues STAGE_BATCH loads before it stores
 * any, so a block waits for memory a few times, not once a row. */
__device__ __forceinline__ void
direct_stage (const DirectPlane & pl, int comp, float *stage, int cols,
    int rows, const int *colmap, const int *rowmap)
{
  const int n = rows * cols, dr = THREADS / cols, dc = THREADS % cols;
  int r = threadIdx.x / cols, c = threadIdx.x % cols;

  for (int e = threadIdx.x; e < n; e += STAGE_BATCH * THREADS) {
    float v[STAGE_BATCH];

#pragma unroll
    for (int u = 0; u < STAGE_BATCH; u++) {
      /* (r, c) is element e + u THREADS, row-major */
      v[u] = 0.0f;
      if (e + u * THREADS < n) {
        const int y = rowmap[r], x = colmap[c];

        if (y >= 0 && x >= 0)
          v[u] = direct_load (pl, pl.src + (size_t) y * pl.src_pitch,
              (size_t) x * pl.nc + comp);
      }
      r += dr;
      c += dc;
      if (c >= cols) {
        c -= cols;
        r++;
      }
    }
#pragma unroll
    for (int u = 0; u < STAGE_BATCH; u++)
      if (e + u * THREADS < n)
        stage[e + u * THREADS] = v[u];
  }
}

/* A block's tile in shared memory: its taps, its input staged with the
 * reach (cols x rows floats), the horizontal pass's rows of each term. */
struct DirectTile
{
  DirectItem it;
  int cols, rows, w4;
  const float *taps, *stage;
  float *hbuf;
};

/* The matrix, rows outer: 4 outputs of a row a thread. */
__device__ void
direct_matrix (const DirectParams & p, const DirectPlane & pl,
    const DirectTile & t)
{
  for (int i = threadIdx.x; i < t.it.h * t.w4; i += THREADS) {
    const int y = i / t.w4, x = 4 * (i - y * t.w4);
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

    for (int j = 0; j < p.side; j++)
      hrow (t.stage + (y + j) * t.cols + x, t.taps + j * pl.t4x, pl.t4x, acc);
#pragma unroll
    for (int o = 0; o < 4; o++)
      if (x + o < t.it.w)
        direct_store (pl, t.it.x0 + x + o, t.it.y0 + y, t.it.comp,
            direct_word (pl, acc[o]));
  }
}

/* NT separable terms: horizontally every staged row of every term, 4
 * outputs a thread; then vertically, 4 rows of a column a thread, and the
 * terms combined. */
template < int NT > __device__ void
direct_separable (const DirectParams & p, const DirectPlane & pl,
    const DirectTile & t)
{
  const int hs = 4 * t.w4, rows = t.rows, w = t.it.w, h = t.it.h;
  const float *ky = t.taps + NT * pl.t4x;

  for (int i = threadIdx.x; i < NT * rows * t.w4; i += THREADS) {
    const int m = NT == 1 ? 0 : i / (rows * t.w4);
    const int k = i - m * rows * t.w4, r = k / t.w4;
    const int x = 4 * (k - r * t.w4);
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

    hrow (t.stage + r * t.cols + x, t.taps + m * pl.t4x, pl.t4x, acc);
    *(float4 *) (t.hbuf + (m * rows + r) * hs + x) =
        make_float4 (acc[0], acc[1], acc[2], acc[3]);
  }
  __syncthreads ();

  for (int i = threadIdx.x; i < w * (quad_up (h) / 4); i += THREADS) {
    const int y = 4 * (i / w), x = i % w;
    float v[NT][4];

#pragma unroll
    for (int m = 0; m < NT; m++) {
#pragma unroll
      for (int o = 0; o < 4; o++)
        v[m][o] = 0.0f;
      vcol (t.hbuf + (m * rows + y) * hs + x, hs, ky + m * pl.t4y, pl.t4y,
          v[m]);
    }
#pragma unroll
    for (int o = 0; o < 4; o++) {
      if (y + o >= h)
        break;
      const float in = t.stage[(pl.ry + y + o) * t.cols + pl.rx + x];
      const float out = combine_terms (p.combine, p.amount, in,
          v[0][o], v[NT - 1][o]);
      direct_store (pl, t.it.x0 + x, t.it.y0 + y + o, t.it.comp,
          direct_word (pl, out));
    }
  }
}

/* NT: 1 or 2 separable terms, or 0 for the matrix. */
template < int NT > __global__ void
__launch_bounds__ (THREADS)
region_direct (const __grid_constant__ DirectParams p)
{
  extern __shared__ float4 direct_shared[];
  const DirectItem it = p.items[blockIdx.x];
  const DirectPlane & pl = p.plane[it.plane];
  float *taps = (float *) direct_shared;
  float *stage = taps + p.taps_cap;
  float *hbuf = stage + p.stage_cap;
  int *colmap = (int *) (hbuf + p.hbuf_cap);
  int *rowmap = colmap + p.cols_cap;

  /* a filled component (copied ones have no items: dst holds them) */
  if (pl.op[it.comp] != CUCONV_COMP_FILTER) {
    for (int i = threadIdx.x; i < it.w * it.h; i += THREADS)
      direct_store (pl, it.x0 + i % it.w, it.y0 + i / it.w, it.comp, pl.fill);
    return;
  }

  const int cols = direct_cols (it.w, pl.t4x);
  const int rows = direct_rows (NT, it.h, pl.ry, pl.t4y);
  const int n_taps = direct_taps (NT, pl.t4x, pl.t4y, p.side);

  /* the taps, and where each staged column and row reads */
  for (int i = threadIdx.x; i < n_taps; i += THREADS)
    taps[i] = p.taps[pl.taps + i];
  build_border_tables ((CuconvBorder) p.border, 1, pl.width, pl.height,
      colmap, cols, it.x0 - pl.rx, rowmap, rows, it.y0 - pl.ry);
  __syncthreads ();

  direct_stage (pl, it.comp, stage, cols, rows, colmap, rowmap);
  __syncthreads ();

  const DirectTile t = { it, cols, rows, quad_up (it.w) / 4, taps, stage,
    hbuf
  };
  if constexpr (NT == 0)
    direct_matrix (p, pl, t);
  else
    direct_separable < NT > (p, pl, t);
}

int
written_components (const CuconvPlane & pl)
{
  int n = 0;

  for (int c = 0; c < pl.n_comp; c++)
    n += pl.op[c] != CUCONV_COMP_COPY;
  return n;
}

bool
has_filtered (const CuconvPlane & pl)
{
  for (int c = 0; c < pl.n_comp; c++)
    if (pl.op[c] == CUCONV_COMP_FILTER)
      return true;
  return false;
}

/* How far f reads from an output sample of pl, horizontally and
 * vertically: the widest of its terms' taps, or the matrix's radius. */
static void
plane_reach (const CuconvFilter & f, const CuconvPlane & pl, int *rx, int *ry)
{
  if (f.n_terms == 0) {
    *rx = *ry = f.m.radius;
    return;
  }
  *rx = cuconv_filter_taps_x (&f, &pl)->radius;
  *ry = cuconv_filter_taps_y (&f, &pl)->radius;
  if (f.n_terms == 2) {
    *rx = max (*rx, f.x2[pl.sub_x - 1].radius);
    *ry = max (*ry, f.y2[pl.sub_y - 1].radius);
  }
}

bool
direct_takes_filter (const CuconvFilter & f)
{
  /* a filter computed another way than by taps the tiles hold */
  if (filter_is_wide (f) || f.combine == CUCONV_COMBINE_BILATERAL
      || f.combine == CUCONV_COMBINE_NLMEANS)
    return false;
  if (f.n_terms == 0)
    return f.m.radius <= DIRECT_MAX_REACH;
  if (f.n_terms > 2)
    return false;
  for (int s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    if (f.x[s].radius > DIRECT_MAX_REACH || f.y[s].radius > DIRECT_MAX_REACH)
      return false;
    if (f.n_terms == 2 && (f.x2[s].radius > DIRECT_MAX_REACH ||
            f.y2[s].radius > DIRECT_MAX_REACH))
      return false;
  }
  return true;
}

bool
direct_takes_plane (const CuconvPlane & pl)
{
  return pl.n_comp >= 1 && pl.n_comp <= CUCONV_MAX_COMP &&
      (cuconv_plane_sample_bytes (&pl) == 1 || ((uintptr_t) pl.src |
          (uintptr_t) pl.dst | (size_t) pl.src_stride |
          (size_t) pl.dst_stride) % 2 == 0);
}

void
direct_plane_init (DirectPlane & d, const CuconvPlane & pl,
    const CuconvFilter & f)
{
  const int depth = pl.depth > 8 ? pl.depth : 8;

  band_params_init (d, pl, 0, pl.height);
  d.nc = pl.n_comp;
  d.bytes = cuconv_plane_sample_bytes (&pl);
  d.shift = depth > 8 ? pl.shift : 0;
  d.mask = (1u << depth) - 1;
  d.word_mask = d.bytes == 1 ? 0xffu : 0xffffu;
  /* words are stored as they fit, as the reference cuts them */
  d.fill = (pl.fill << d.shift) & d.word_mask;
  memcpy (d.op, pl.op, sizeof (d.op));
  if (!has_filtered (pl))
    return;
  plane_reach (f, pl, &d.rx, &d.ry);
  d.t4x = quad_up (2 * d.rx + 1);
  d.t4y = f.n_terms == 0 ? 0 : quad_up (2 * d.ry + 1);
}

void
direct_taps_write (float *out, const DirectPlane & d, const CuconvPlane & pl,
    const CuconvFilter & f)
{
  const int nt = f.n_terms, side = 2 * f.m.radius + 1;

  memset (out, 0, sizeof (float) * direct_taps (nt, d.t4x, d.t4y, side));
  if (nt == 0) {
    for (int j = 0; j < side; j++)
      memcpy (out + j * d.t4x, f.m.w + j * side, sizeof (float) * side);
    return;
  }
  for (int m = 0; m < nt; m++) {
    const CuconvTaps *x = m == 0 ? &f.x[pl.sub_x - 1] : &f.x2[pl.sub_x - 1];
    const CuconvTaps *y = m == 0 ? &f.y[pl.sub_y - 1] : &f.y2[pl.sub_y - 1];

    memcpy (out + m * d.t4x + d.rx - x->radius, x->w,
        sizeof (float) * (2 * x->radius + 1));
    memcpy (out + nt * d.t4x + m * d.t4y + d.ry - y->radius, y->w,
        sizeof (float) * (2 * y->radius + 1));
  }
}

size_t
direct_smem (DirectParams & p, const CuconvFilter & f, const bool *on,
    int n_planes, int tile_h)
{
  const int nt = f.n_terms, side = 2 * f.m.radius + 1;
  int rows = 0, cols = 0;

  p.taps_cap = 0;
  for (int i = 0; i < n_planes; i++) {
    const DirectPlane & d = p.plane[i];

    if (!on[i] || d.t4x == 0)
      continue;
    p.taps_cap = max (p.taps_cap, direct_taps (nt, d.t4x, d.t4y, side));
    rows = max (rows, direct_rows (nt, tile_h, d.ry, d.t4y));
    cols = max (cols, direct_cols (DIRECT_W, d.t4x));
  }
  p.stage_cap = rows * cols;
  p.hbuf_cap = nt * rows * DIRECT_W;
  p.cols_cap = cols;
  return sizeof (float) * ((size_t) p.taps_cap + p.stage_cap + p.hbuf_cap +
      cols + rows);
}

typedef void (*DirectKernel) (DirectParams);

cudaError_t
launch_direct (const DirectParams & p, int nt, int blocks, size_t smem,
    cudaStream_t stream)
{
  static SmemLimit limits[3];
  const DirectKernel k = nt == 0 ? region_direct < 0 > : nt == 1 ?
      region_direct < 1 > : region_direct < 2 >;

  if (blocks == 0)
    return cudaSuccess;
  return launch_smem ((const void *) k, (int) smem, limits[nt],[&]{
        k <<< blocks, THREADS, smem, stream >>> (p);});
}

}                               /* namespace cuconv */
