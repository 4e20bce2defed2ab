/* gst-cudaconvolve: the tuned separable kernels for 8-bit planes of 1 or
 * 2 components: a fully unrolled instantiation for each radius of
 * CUCONV_FIXED_RADII (blur, or the unsharp mask of one), and a generic one
 * for any other radius (docs/design.md).  The tiles are in
 * cuconv-separable.cuh.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-separable.cuh"

namespace cuconv {

template < int R, int NC, bool SHARP > __global__ void
__launch_bounds__ (THREADS, fixed_min_blocks (R))
sep_fixed (const __grid_constant__ SepParams p)
{
  tile_fixed < R, NC, SHARP > (p, blockIdx.x, blockIdx.y);
}

__global__ void
__launch_bounds__ (THREADS)
sep_generic (const __grid_constant__ SepParams p, int tile_h)
{
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  extern __shared__ uint4 smem[];
  const TileSmem sm (smem, g);
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = p.row_begin + blockIdx.y * tile_h;

  if (is_interior (p, x0, y0, tile_h)) {
    hpass_generic < false > (p, g, sm.colmap, sm.rowmap, sm.hbuf, x0, y0);
  } else {
    build_maps (p, g, sm.colmap, sm.rowmap, x0, y0);
    __syncthreads ();
    hpass_generic < true > (p, g, sm.colmap, sm.rowmap, sm.hbuf, x0, y0);
  }
  __syncthreads ();
  vpass_generic (p, sm.hbuf, x0, y0, tile_h);
}

/* Host side ------------------------------------------------------------ */

void
sep_params_init (SepParams & p, const CuconvPlane & pl, const CuconvTaps & kx,
    const CuconvTaps & ky, CuconvBorder border, int row_begin, int row_end)
{
  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.wb = pl.width * pl.n_comp;
  p.rx = kx.radius;
  p.ry = ky.radius;
  p.border = border;
  p.src_aligned16 = ((uintptr_t) pl.src % 16 == 0) && (p.src_pitch % 16 == 0);
  p.dst_aligned4 = ((uintptr_t) pl.dst % 4 == 0) && (p.dst_pitch % 4 == 0);
  memcpy (p.kx, kx.w, sizeof (float) * (2 * kx.radius + 1));
  memcpy (p.ky, ky.w, sizeof (float) * (2 * ky.radius + 1));
  p.taps_nonneg = 1;
  for (int i = 0; i <= 2 * kx.radius; i++)
    p.taps_nonneg &= kx.w[i] >= 0.0f;
  for (int i = 0; i <= 2 * ky.radius; i++)
    p.taps_nonneg &= ky.w[i] >= 0.0f;
}


typedef cudaError_t (*FixedLauncher) (const SepParams &, cudaStream_t);

template < int R, int NC, bool SHARP > static cudaError_t
launch_fixed (const SepParams & p, cudaStream_t stream)
{
  constexpr int tile_h = ROW_GROUPS * fixed_rpt (R);
  static SmemLimit smem_limit;
  const int smem = (int) sep_smem_bytes (TileGeom (R, R, NC, tile_h));
  dim3 grid ((p.wb + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);

  return launch_smem ((const void *) sep_fixed < R, NC, SHARP >, smem,
      smem_limit,[&]{
        sep_fixed < R, NC, SHARP > <<< grid, THREADS, smem, stream >>>
        (p);});
}

template < int NC, bool SHARP > static FixedLauncher
pick_fixed (int r)
{
  switch (r) {
#define CUCONV_FIXED_CASE(R) case R: return launch_fixed < R, NC, SHARP >;
      CUCONV_FIXED_RADII (CUCONV_FIXED_CASE)
#undef CUCONV_FIXED_CASE
    default:
      return NULL;
  }
}

static cudaError_t
launch_generic (const SepParams & p, cudaStream_t stream)
{
  static SmemLimit smem_limit;
  size_t smem;
  int tile_h;
  const cudaError_t e = fit_tile (8 * ROW_GROUPS, ROW_GROUPS,[&](int h) {
        return sep_smem_bytes (TileGeom (p.rx, p.ry, p.nc, h));
      }, &tile_h, &smem);

  if (e != cudaSuccess)
    return e;
  if (tile_h == 0)
    return cudaErrorInvalidConfiguration;
  /* A small plane (a region atlas, the chroma of a small frame) in tall
   * tiles is a fraction of one wave, which lasts one block's time: shorter
   * tiles, down to a row group, until there are two blocks a
   * multiprocessor.  Large planes keep the tallest tile that fits. */
  tile_h = fill_two_waves (tile_h, ROW_GROUPS, (p.wb + TILE_W - 1) / TILE_W,
      p.row_end - p.row_begin);
  smem = sep_smem_bytes (TileGeom (p.rx, p.ry, p.nc, tile_h));
  return launch_tiled (sep_generic, p, tile_h, smem, smem_limit, stream);
}

int
separable_tile_rows (void)
{
  return ROW_GROUPS * 8;        /* the tallest tile of any path */
}

cudaError_t
launch_separable (const SepParams & p, cudaStream_t stream)
{
  FixedLauncher launch = NULL;

  if (!p.taps_nonneg)           /* the rounding in pack4 relies on it */
    return cudaErrorInvalidValue;
  if (p.rx == p.ry && p.nc == 1)
    launch = p.amount > 0.0f ? pick_fixed < 1, true > (p.rx) :
        pick_fixed < 1, false > (p.rx);
  else if (p.rx == p.ry && p.nc == 2)
    launch = p.amount > 0.0f ? pick_fixed < 2, true > (p.rx) :
        pick_fixed < 2, false > (p.rx);
  if (launch)
    return launch (p, stream);
  /* the unsharp mask only in the unrolled radii: the caller takes the
   * general kernel for the others */
  if (p.amount > 0.0f)
    return cudaErrorNotSupported;
  return launch_generic (p, stream);
}

}                               /* namespace cuconv */
