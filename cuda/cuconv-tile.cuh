/* gst-cudaconvolve: what the tiled kernels share: tile geometry, boundary
 * classification and the border tables of border tiles (CUDA C++,
 * internal).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_TILE_CUH__
#define __CUCONV_TILE_CUH__

#include <type_traits>

#include "cuconv-kernels.cuh"

namespace cuconv {

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
template < CuconvBorder B > __device__ void
build_maps (const SepParams & p, const TileGeom & g, int *colmap,
    int *rowmap, int x0, int y0)
{
  for (int c = threadIdx.x; c < g.span; c += THREADS) {
    const int xb = x0 - g.apron + c;
    const int px = xb >= 0 ? xb / p.nc : -((-xb + p.nc - 1) / p.nc);
    const int xi = cuconv_border_index (B, px, p.width);
    colmap[c] = xi < 0 ? -1 : xi * p.nc + (xb - px * p.nc);
  }
  for (int r = threadIdx.x; r < g.rows; r += THREADS)
    rowmap[r] = cuconv_border_index (B, y0 - p.ry + r, p.height);
}

/* Byte c of staged row r of a border tile, through the tables. */
__device__ __forceinline__ uint32_t
mapped_byte (const SepParams & p, const int *colmap, int row, int c)
{
  const int xo = colmap[c];
  return (xo < 0 || row < 0) ? 0u : p.src[(size_t) row * p.src_pitch + xo];
}

__device__ __forceinline__ float
u8_to_f (uint32_t word, int byte)
{
  /* 0x4B0000xx is 2^23 + xx as a float: two integer ops, no I2F */
  return __uint_as_float (__byte_perm (word, 0x4B000000u,
          0x7440u | byte)) - 8388608.0f;
}

/* Rounds half away from zero and saturates to 0..255, exactly as
 * cuconv_round_sat_u8: the byte lands in the low bits of the result.  The
 * separable kernels' taps are non-negative and sum to 1 (checked in
 * sep_params_init), so a result lies in [0, 255.5) and needs no clamp. */
__device__ __forceinline__ uint32_t
round_sat_bits (float v)
{
  const float t = v + 0.5f;
  /* adding 2^23 rounding down leaves floor (t) in the mantissa */
  return __float_as_uint (__fadd_rd (t, 8388608.0f));
}

__device__ __forceinline__ uint32_t
pack4 (const float4 & a)
{
  const uint32_t lo = __byte_perm (round_sat_bits (a.x),
      round_sat_bits (a.y), 0x0040);
  const uint32_t hi = __byte_perm (round_sat_bits (a.z),
      round_sat_bits (a.w), 0x0040);
  return __byte_perm (lo, hi, 0x5410);
}

/* Writes 4 output bytes of row y from x on.  guard: the tile may stick
 * out of the plane or the band, or the destination may be unaligned. */
__device__ __forceinline__ void
store4 (const SepParams & p, int x, int y, uint32_t v, bool guard)
{
  uint8_t *d = p.dst + (size_t) y * p.dst_pitch + x;

  if (!guard) {
    *(uint32_t *) d = v;
  } else if (y < p.row_end) {
    if (x + 3 < p.wb && p.dst_aligned4)
      *(uint32_t *) d = v;
    else
      for (int b = 0; b < 4 && x + b < p.wb; b++)
        d[b] = (uint8_t) (v >> (8 * b));
  }
}

/* The dynamic shared memory a kernel has been allowed, per device. */
constexpr int SMEM_DEVICES = 16;
typedef int SmemAllowed[SMEM_DEVICES];

/* Launches a kernel that needs `bytes` of dynamic shared memory: launch ()
 * does the <<< >>> call.  The limit is raised once per device, because the
 * attribute call costs microseconds, far more than a small frame's work.
 * But the limit belongs to a CUDA context, and a device can have several
 * (GStreamer's GstCudaContext makes its own): when a launch the cache
 * thought allowed fails, the limit is raised in this context and the
 * launch retried once. */
template < typename L > static inline cudaError_t
launch_smem (const void *kernel, int bytes, SmemAllowed done, L launch)
{
  int dev = 0;
  cudaError_t err = cudaGetDevice (&dev);
  bool cached;

  if (err != cudaSuccess)
    return err;
  if (dev >= SMEM_DEVICES)
    dev = SMEM_DEVICES - 1;
  cached = done[dev] >= bytes;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!cached) {
      err = cudaFuncSetAttribute (kernel,
          cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      if (err != cudaSuccess)
        return err;
      done[dev] = bytes > done[dev] ? bytes : done[dev];
    }
    launch ();
    err = cudaGetLastError ();
    if (err == cudaSuccess || !cached)
      return err;
    cached = false;
  }
  return err;
}

/* Launches k (kernel of (params, tile rows)) over the band of p in tiles of
 * tile_h rows, with smem bytes of dynamic shared memory. */
typedef void (*TiledKernel) (SepParams, int);

static inline cudaError_t
launch_tiled (TiledKernel k, const SepParams & p, int tile_h, size_t smem,
    SmemAllowed done, cudaStream_t stream)
{
  dim3 grid ((p.wb + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);

  return launch_smem ((const void *) k, (int) smem, done,[&]{
        k <<< grid, THREADS, smem, stream >>> (p, tile_h);});
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
    case CUCONV_BORDER_MIRROR:
      return f (std::integral_constant < CuconvBorder, CUCONV_BORDER_MIRROR > ());
    case CUCONV_BORDER_WRAP:
      return f (std::integral_constant < CuconvBorder, CUCONV_BORDER_WRAP > ());
    case CUCONV_BORDER_ZERO:
      return f (std::integral_constant < CuconvBorder, CUCONV_BORDER_ZERO > ());
    case CUCONV_BORDER_CLAMP:
    default:
      return f (std::integral_constant < CuconvBorder, CUCONV_BORDER_CLAMP > ());
  }
}

}                               /* namespace cuconv */

#endif /* __CUCONV_TILE_CUH__ */
