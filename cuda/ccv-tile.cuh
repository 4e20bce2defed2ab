/* gst-cudaconvolve: what the tiled kernels share: tile geometry, boundary
 * classification and the border tables of border tiles (CUDA C++,
 * internal).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CCV_TILE_CUH__
#define __CCV_TILE_CUH__

#include <type_traits>

#include "ccv-kernels.cuh"

namespace ccv {

constexpr int TILE_W = 128;     /* output bytes per tile row */
constexpr int THREADS = 256;

__host__ __device__ constexpr int
round_up16 (int v)
{
  return (v + 15) & ~15;
}

/* The input a tile reads: its rows plus the vertical apron, its bytes
 * plus the horizontal apron rounded up to 16 bytes on each side. */
struct TileGeom
{
  int apron;                    /* bytes read left and right, 16-aligned */
  int span;                     /* TILE_W + 2 * apron */
  int rows;                     /* tile_h + 2 * ry */
  __host__ __device__ constexpr TileGeom (int rx, int ry, int nc, int tile_h)
  : apron (round_up16 (rx * nc)), span (TILE_W + 2 * round_up16 (rx * nc)),
      rows (tile_h + 2 * ry)
  {
  }
  /* the border tables: one int a column, one a row */
  __host__ __device__ constexpr size_t maps_bytes () const
  {
    return (size_t) (span + rows) * sizeof (int);
  }
};

/* A tile is interior when all it reads lies inside the plane (rows
 * [0, height), bytes [0, wb)) and all it writes inside the band.  Its
 * 16-byte loads then stay inside the allocation: the apron is rounded up
 * to 16 bytes, which the pitch is a multiple of. */
__device__ __forceinline__ bool
is_interior (const SepParams & p, int x0, int y0, int tile_h)
{
  return p.src_aligned16 && p.dst_aligned4 && x0 - p.rx * p.nc >= 0
      && x0 + TILE_W + p.rx * p.nc <= p.wb && y0 - p.ry >= 0
      && y0 + tile_h + p.ry <= p.height && y0 + tile_h <= p.row_end;
}

/* Border tiles: each column and row the tile reads is mapped through the
 * border mode once, into tables: a byte offset in the row (components of
 * an interleaved plane mapped on their own) and a row, -1 reading 0. */
template < CcvBorder B > __device__ void
build_maps (const SepParams & p, const TileGeom & g, int *colmap,
    int *rowmap, int x0, int y0)
{
  for (int c = threadIdx.x; c < g.span; c += THREADS) {
    const int xb = x0 - g.apron + c;
    const int px = xb >= 0 ? xb / p.nc : -((-xb + p.nc - 1) / p.nc);
    const int xi = ccv_border_index (B, px, p.width);
    colmap[c] = xi < 0 ? -1 : xi * p.nc + (xb - px * p.nc);
  }
  for (int r = threadIdx.x; r < g.rows; r += THREADS)
    rowmap[r] = ccv_border_index (B, y0 - p.ry + r, p.height);
}

/* Byte c of staged row r of a border tile, through the tables. */
__device__ __forceinline__ uint32_t
mapped_byte (const SepParams & p, const int *colmap, int row, int c)
{
  const int xo = colmap[c];
  return (xo < 0 || row < 0) ? 0u : p.src[(size_t) row * p.src_pitch + xo];
}

/* Raises a kernel's dynamic shared memory limit once per process: the
 * attribute call costs microseconds, far more than a small frame's work. */
static inline cudaError_t
allow_smem (const void *kernel, int bytes, int *done)
{
  cudaError_t err = cudaSuccess;

  if (*done < bytes) {
    err = cudaFuncSetAttribute (kernel,
        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (err == cudaSuccess)
      *done = bytes;
  }
  return err;
}

/* The tallest tile, a multiple of `step` rows from `max_h` down, whose
 * shared memory (smem_for (TileGeom)) fits the device; 0 if none does. */
template < typename F > static int
fit_tile_rows (const SepParams & p, int max_h, int step, F smem_for,
    size_t * smem)
{
  int dev, max_smem;

  if (cudaGetDevice (&dev) != cudaSuccess ||
      cudaDeviceGetAttribute (&max_smem,
          cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    return 0;
  for (int h = max_h; h >= step; h /= 2) {
    *smem = smem_for (TileGeom (p.rx, p.ry, p.nc, h));
    if (*smem <= (size_t) max_smem)
      return h;
  }
  return 0;
}

/* Calls f with the border mode as a compile-time constant: the one switch
 * that turns the runtime mode into a template instantiation. */
template < typename F > static auto
with_border (int border, F f)
{
  switch (border) {
    case CCV_BORDER_MIRROR:
      return f (std::integral_constant < CcvBorder, CCV_BORDER_MIRROR > ());
    case CCV_BORDER_WRAP:
      return f (std::integral_constant < CcvBorder, CCV_BORDER_WRAP > ());
    case CCV_BORDER_ZERO:
      return f (std::integral_constant < CcvBorder, CCV_BORDER_ZERO > ());
    case CCV_BORDER_CLAMP:
    default:
      return f (std::integral_constant < CcvBorder, CCV_BORDER_CLAMP > ());
  }
}

}                               /* namespace ccv */

#endif /* __CCV_TILE_CUH__ */
