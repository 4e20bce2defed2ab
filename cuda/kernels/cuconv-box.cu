/* gst-cudaconvolve: the box of the tuned 8-bit path (launch_box), whose
 * cost does not grow with the radius: running sums instead of 2r + 1
 * taps, in tiles.  Whole planes of any radius take running sums through
 * global memory instead (cuconv-box-sums.cu).
 *
 * A block owns a TILE_W x tile_h tile, as the separable kernel does, and
 * stages the tile plus its apron in shared memory (16-byte loads for
 * interior tiles, the border tables for border tiles).  The horizontal
 * pass slides a window along segments of 32 outputs of each staged row
 * (one addition and one subtraction an output), the vertical pass slides a
 * window down each column; both in exact integers.  The result is the
 * window sum S divided by (2r + 1)^2, rounded half up, computed exactly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int SEG = 32;         /* outputs a thread slides over in a row */
constexpr int MAX_TILE_H = 64;
constexpr int COL_GROUPS = TILE_W / 4;  /* vertical pass: 4 columns a thread */
constexpr int ROW_SEGS = THREADS / COL_GROUPS;

/* Staged rows are 4 bytes longer than the span so that a warp reading one
 * column of 32 consecutive rows hits 32 banks.  The rows of sums are 4 ints
 * longer than the tile so that 8 consecutive rows' 16-byte stores do. */
__host__ __device__ constexpr int
in_pitch (const TileGeom & g)
{
  return g.span + 4;
}

constexpr int H_PITCH = TILE_W + 4;

/* Shared memory: staged bytes, the sums (16-byte aligned), the tables. */
__host__ __device__ constexpr int
hsum_offset (const TileGeom & g)
{
  return round_up16 (g.rows * in_pitch (g));
}

__host__ __device__ constexpr size_t
box_smem_bytes (const TileGeom & g)
{
  return (size_t) hsum_offset (g) + (size_t) g.rows * H_PITCH * 4
      + g.maps_bytes ();
}

static __device__ void
box_stage (const SepParams & p, const TileGeom & g, uint8_t * in,
    int *colmap, int *rowmap, int x0, int y0, bool interior)
{
  const int pitch = in_pitch (g);

  if (interior) {
    const int vpr = g.span / 16, n = g.rows * vpr;
    const uint8_t *base = p.src + (size_t) (y0 - p.ry) * p.src_pitch
        + (x0 - g.apron);
    for (int i = threadIdx.x; i < n; i += THREADS) {
      const int r = i / vpr, v = i - r * vpr;
      const uint4 d =
          __ldg ((const uint4 *) (base + (size_t) r * p.src_pitch) + v);
      uint32_t *o = (uint32_t *) (in + r * pitch + 16 * v);
      o[0] = d.x;
      o[1] = d.y;
      o[2] = d.z;
      o[3] = d.w;
    }
    return;
  }
  build_maps (p, g, colmap, rowmap, x0, y0);
  __syncthreads ();
  for (int i = threadIdx.x; i < g.rows * g.span; i += THREADS) {
    const int r = i / g.span, c = i - r * g.span;
    in[r * pitch + c] = (uint8_t) mapped_sample < 1 > (p, colmap, rowmap[r], c);
  }
}

/* Window sums along segments of SEG outputs of every staged row: one
 * addition and one subtraction an output.  Item i takes row i % rows, so a
 * warp reads one column of consecutive rows. */
template < int NC > __device__ void
box_hpass (const SepParams & p, const TileGeom & g, const uint8_t * in,
    int *hsum)
{
  const int pitch = in_pitch (g), d = (2 * p.rx + 1) * NC;
  const int n = g.rows * (TILE_W / SEG);

  for (int i = threadIdx.x; i < n; i += THREADS) {
    const int r = i % g.rows, x0 = (i / g.rows) * SEG;
    /* the window of output x is lo[x], lo[x + NC], ... lo[x + d - NC] */
    const uint8_t *lo = in + r * pitch + g.apron - p.rx * NC + x0;
    const uint8_t *hi = lo + d - NC;
    int4 *out = (int4 *) (hsum + r * H_PITCH + x0);
    int s[NC], v[SEG];

#pragma unroll
    for (int c = 0; c < NC; c++) {
      s[c] = 0;
      for (int t = 0; t < d; t += NC)
        s[c] += lo[c + t];
      v[c] = s[c];
    }
#pragma unroll
    for (int x = NC; x < SEG; x++) {
      s[x % NC] += hi[x] - lo[x - NC];
      v[x] = s[x % NC];
    }
#pragma unroll
    for (int q = 0; q < SEG / 4; q++)
      out[q] = make_int4 (v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
  }
}

/* round (S / n2) for a window of n2 = (2 rx + 1)(2 ry + 1) samples, in
 * the low byte.  n2 is odd, so S / n2 is never a half: it lies at least
 * 1 / (2 n2) >= 3e-5 from one, more than the error of this float
 * evaluation (< 2.5e-5 for S < 2^22), so the result is exact. */
__device__ __forceinline__ uint32_t
box_round (int s, float inv_n2)
{
  return __float_as_uint (__fadd_rd (fmaf ((float) s, inv_n2, 0.5f),
          8388608.0f));
}

/* Window sums down each column: a thread slides 4 columns down a segment
 * of the tile's rows and writes 4 bytes a row. */
__device__ void
box_vpass (const SepParams & p, const int *hsum, int x0, int y0, int tile_h,
    bool guard)
{
  const int d = 2 * p.ry + 1;
  const float inv_n2 = 1.0f / (float) (d * (2 * p.rx + 1));
  const int len = tile_h / ROW_SEGS;
  const int cg = threadIdx.x % COL_GROUPS;
  const int o0 = (threadIdx.x / COL_GROUPS) * len;
  const int4 *h = (const int4 *) hsum + cg;
  const int x = x0 + cg * 4;
  int4 s = make_int4 (0, 0, 0, 0);

  for (int t = 0; t < d; t++) {
    const int4 v = h[(o0 + t) * (H_PITCH / 4)];
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  }
  for (int o = o0; o < o0 + len; o++) {
    if (o > o0) {
      const int4 a = h[(o + d - 1) * (H_PITCH / 4)];
      const int4 b = h[(o - 1) * (H_PITCH / 4)];
      s.x += a.x - b.x;
      s.y += a.y - b.y;
      s.z += a.z - b.z;
      s.w += a.w - b.w;
    }
    const uint32_t lo = __byte_perm (box_round (s.x, inv_n2),
        box_round (s.y, inv_n2), 0x0040);
    const uint32_t hi = __byte_perm (box_round (s.z, inv_n2),
        box_round (s.w, inv_n2), 0x0040);
    store4 (p, x, y0 + o, __byte_perm (lo, hi, 0x5410), guard);
  }
}

__global__ void
__launch_bounds__ (THREADS)
box_kernel (const __grid_constant__ SepParams p, int tile_h)
{
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  extern __shared__ uint4 smem[];
  uint8_t *in = (uint8_t *) smem;
  int *hsum = (int *) (in + hsum_offset (g));
  int *colmap = hsum + g.rows * H_PITCH, *rowmap = colmap + g.span;
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = p.row_begin + blockIdx.y * tile_h;
  const bool interior = is_interior (p, x0, y0, tile_h);

  box_stage (p, g, in, colmap, rowmap, x0, y0, interior);
  __syncthreads ();
  if (p.nc == 1)
    box_hpass < 1 > (p, g, in, hsum);
  else
    box_hpass < 2 > (p, g, in, hsum);
  __syncthreads ();
  box_vpass (p, hsum, x0, y0, tile_h, !interior);
}

cudaError_t
launch_box (const SepParams & p, cudaStream_t stream)
{
  static SmemLimit smem_limit;
  size_t smem;
  int tile_h;
  const cudaError_t e = fit_tile (MAX_TILE_H, 8,[&](int h) {
        return box_smem_bytes (TileGeom (p.rx, p.ry, p.nc, h));
      }, &tile_h, &smem);

  if (e != cudaSuccess)
    return e;
  if (tile_h == 0)
    return cudaErrorNotSupported;       /* too little shared memory */
  return launch_tiled (box_kernel, p, tile_h, smem, smem_limit, stream);
}

}                               /* namespace cuconv */
