/* gst-cudaconvolve: the box kernel, whose cost does not grow with the
 * radius: running sums instead of 2r + 1 taps.
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

#include "ccv-tile.cuh"

namespace ccv {

constexpr int SEG = 32;         /* outputs a thread slides over */
constexpr int MAX_TILE_H = 64;

/* Staged rows are 4 bytes longer than the span so that a warp reading one
 * column of 32 consecutive rows hits 32 banks; the integer rows are one
 * word longer for the same reason. */
__host__ __device__ constexpr int
in_pitch (const TileGeom & g)
{
  return g.span + 4;
}

constexpr int H_PITCH = TILE_W + 1;

__host__ __device__ constexpr size_t
box_smem_bytes (const TileGeom & g)
{
  return (size_t) g.rows * in_pitch (g) + (size_t) g.rows * H_PITCH * 4
      + g.maps_bytes ();
}

template < CcvBorder B > __device__ void
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
  build_maps < B > (p, g, colmap, rowmap, x0, y0);
  __syncthreads ();
  for (int i = threadIdx.x; i < g.rows * g.span; i += THREADS) {
    const int r = i / g.span, c = i - r * g.span;
    in[r * pitch + c] = (uint8_t) mapped_byte (p, colmap, rowmap[r], c);
  }
}

/* Window sums along segments of SEG outputs of every staged row.  Item i
 * takes row i % rows, so a warp reads one column of consecutive rows. */
__device__ void
box_hpass (const SepParams & p, const TileGeom & g, const uint8_t * in,
    int *hsum)
{
  const int pitch = in_pitch (g), nc = p.nc, d = (2 * p.rx + 1) * nc;
  const int n = g.rows * (TILE_W / SEG);

  for (int i = threadIdx.x; i < n; i += THREADS) {
    const int r = i % g.rows, x0 = (i / g.rows) * SEG;
    /* window of output x: bytes x - rx * nc .. x + rx * nc, step nc */
    const uint8_t *lo = in + r * pitch + g.apron - p.rx * nc + x0;
    int *out = hsum + r * H_PITCH + x0;

    for (int c = 0; c < nc; c++) {
      int s = 0;
      for (int t = 0; t < d; t += nc)
        s += lo[c + t];
      out[c] = s;
      for (int x = c + nc; x < SEG; x += nc) {
        s += lo[x + d - nc] - lo[x - nc];
        out[x] = s;
      }
    }
  }
}

/* floor (S / n2 + 1/2) = floor ((2 S + n2) / (2 n2)), exactly: a float
 * estimate, then one correction each way. */
__device__ __forceinline__ uint32_t
box_round (int s, int den, float inv_den)
{
  const int num = 2 * s + (den >> 1);
  int q = (int) ((float) num * inv_den);
  q -= q * den > num;
  q += (q + 1) * den <= num;
  return (uint32_t) q;
}

/* Window sums down segments of each column; writes bytes. */
__device__ void
box_vpass (const SepParams & p, const int *hsum, int x0, int y0, int tile_h,
    bool guard)
{
  const int d = 2 * p.ry + 1;
  const int den = 2 * d * (2 * p.rx + 1);
  const float inv_den = 1.0f / den;
  const int segs = THREADS / TILE_W;
  const int len = (tile_h + segs - 1) / segs;
  const int c = threadIdx.x % TILE_W, o0 = (threadIdx.x / TILE_W) * len;
  const int x = x0 + c;
  int s = 0;

  if (guard && x >= p.wb)
    return;
  for (int t = 0; t < d; t++)
    s += hsum[(o0 + t) * H_PITCH + c];
  for (int o = o0; o < o0 + len && o < tile_h; o++) {
    const int y = y0 + o;
    if (o > o0)
      s += hsum[(o + d - 1) * H_PITCH + c] - hsum[(o - 1) * H_PITCH + c];
    if (guard && y >= p.row_end)
      break;
    p.dst[(size_t) y * p.dst_pitch + x] = (uint8_t) box_round (s, den,
        inv_den);
  }
}

template < CcvBorder B > __global__ void
__launch_bounds__ (THREADS)
box_kernel (const __grid_constant__ SepParams p, int tile_h)
{
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  extern __shared__ uint4 smem[];
  uint8_t *in = (uint8_t *) smem;
  int *hsum = (int *) (in + g.rows * in_pitch (g));
  int *colmap = hsum + g.rows * H_PITCH, *rowmap = colmap + g.span;
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = p.row_begin + blockIdx.y * tile_h;
  const bool interior = is_interior (p, x0, y0, tile_h);

  box_stage < B > (p, g, in, colmap, rowmap, x0, y0, interior);
  __syncthreads ();
  box_hpass (p, g, in, hsum);
  __syncthreads ();
  box_vpass (p, hsum, x0, y0, tile_h, !interior);
}

cudaError_t
launch_box (const SepParams & p, cudaStream_t stream)
{
  static int smem_allowed[CCV_BORDER_N];
  void (*k) (SepParams, int) = with_border (p.border, [](auto b) {
        return box_kernel < decltype (b)::value >;
      });
  size_t smem;
  const int tile_h = fit_tile_rows (p, MAX_TILE_H, 8, box_smem_bytes, &smem);
  cudaError_t err;

  if (tile_h == 0)
    return cudaErrorInvalidConfiguration;
  err = allow_smem ((const void *) k, (int) smem, &smem_allowed[p.border]);
  if (err != cudaSuccess)
    return err;
  dim3 grid ((p.wb + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);
  k <<< grid, THREADS, smem, stream >>> (p, tile_h);
  return cudaGetLastError ();
}

}                               /* namespace ccv */
