/* gst-cudaconvolve: the tuned separable kernels for planes of 1 or 2
 * components: a fully unrolled instantiation for each radius of
 * CUCONV_FIXED_RADII, for 8- and 16-bit samples (a blur, the unsharp mask
 * of one, or two terms combined: sobel and laplacian, 8-bit), and a
 * generic one for any other radius (an 8-bit blur) (docs/design.md).  The
 * tiles are in cuconv-separable.cuh; the unrolled kernels in
 * cuconv-separable-fixed.cuh, instantiated by the cuconv-separable-r*.cu:
 * here the generic kernel and the choice of a launcher.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <algorithm>

#include <cuda_runtime.h>

#include "cuconv-separable.cuh"

namespace cuconv {

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
sep_plane_init (SepParams & p, const CuconvPlane & pl, CuconvBorder border,
    int row_begin, int row_end)
{
  const int sb = cuconv_plane_sample_bytes (&pl);

  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.ws = pl.width * pl.n_comp;
  p.sb = sb;
  p.border = border;
  p.shift = sb == 2 ? pl.shift : 0;
  p.mask = sb == 2 ? (1u << pl.depth) - 1 : 0xffu;
  p.maxv = (float) p.mask;
  p.src_aligned16 = ((uintptr_t) pl.src % 16 == 0) && (p.src_pitch % 16 == 0);
  p.dst_aligned = ((uintptr_t) pl.dst | p.dst_pitch) % (4 * sb) == 0;
}

bool
sep_params_init (SepParams & p, const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end)
{
  const CuconvTaps *x = cuconv_filter_taps_x (&f, &pl);
  const CuconvTaps *y = cuconv_filter_taps_y (&f, &pl);

  sep_plane_init (p, pl, f.border, row_begin, row_end);
  p.combine = f.combine;
  p.amount = f.amount;
  if (f.n_terms == 2) {
    const CuconvTaps *x2 = &f.x2[pl.sub_x - 1], *y2 = &f.y2[pl.sub_y - 1];
    const int r = std::max (std::max (x->radius, y->radius),
        std::max (x2->radius, y2->radius));

    if (r > CUCONV_FIXED_MAX_RADIUS)
      return false;
    p.rx = p.ry = r;
    pad_taps (p.kx, *x, r);
    pad_taps (p.ky, *y, r);
    pad_taps (p.kx + SEP_TERM2, *x2, r);
    pad_taps (p.ky + SEP_TERM2, *y2, r);
    p.taps_nonneg = 0;
    return true;
  }
  p.rx = x->radius;
  p.ry = y->radius;
  memcpy (p.kx, x->w, sizeof (float) * (2 * x->radius + 1));
  memcpy (p.ky, y->w, sizeof (float) * (2 * y->radius + 1));
  p.taps_nonneg = 1;
  for (int i = 0; i <= 2 * x->radius; i++)
    p.taps_nonneg &= x->w[i] >= 0.0f;
  for (int i = 0; i <= 2 * y->radius; i++)
    p.taps_nonneg &= y->w[i] >= 0.0f;
  return true;
}

typedef cudaError_t (*FixedLauncher) (const SepParams &, cudaStream_t);

template < int NC, int SB, int OUT > static FixedLauncher
pick_fixed (int r)
{
  switch (r) {
#define CUCONV_FIXED_CASE(R) case R: return launch_fixed < R, NC, SB, OUT >;
      CUCONV_FIXED_RADII (CUCONV_FIXED_CASE)
#undef CUCONV_FIXED_CASE
    default:
      return NULL;
  }
}

/* The unrolled kernel for p, or NULL: two terms on one component of 8
 * bits; a blur or sharpen on 1 or 2 components of 8 or 16 bits. */
static FixedLauncher
pick_fixed_for (const SepParams & p)
{
  const bool two = p.combine == CUCONV_COMBINE_MAGNITUDE
      || p.combine == CUCONV_COMBINE_ABS_SUM;
  const bool sharp = p.combine == CUCONV_COMBINE_SHARPEN;

  if (p.rx != p.ry || p.nc < 1 || p.nc > 2)
    return NULL;
  if (two)
    return p.nc == 1 && p.sb == 1 ? pick_fixed < 1, 1, OUT_TWO_TERMS >
        (p.rx) : NULL;
#define CUCONV_PICK(NC, SB) (sharp ? pick_fixed < NC, SB, OUT_SHARPEN > (p.rx) \
      : pick_fixed < NC, SB, OUT_BLUR > (p.rx))
  if (p.sb == 1)
    return p.nc == 1 ? CUCONV_PICK (1, 1) : CUCONV_PICK (2, 1);
  return p.nc == 1 ? CUCONV_PICK (1, 2) : CUCONV_PICK (2, 2);
#undef CUCONV_PICK
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
  tile_h = fill_two_waves (tile_h, ROW_GROUPS, (p.ws + TILE_W - 1) / TILE_W,
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
  const FixedLauncher launch = pick_fixed_for (p);

  /* a blur's rounding (pack4) has no clamp below 0 */
  if (p.combine == CUCONV_COMBINE_NONE && !p.taps_nonneg)
    return cudaErrorInvalidValue;
  if (launch)
    return launch (p, stream);
  /* the generic kernel: an 8-bit blur; the caller takes the general
   * kernel for the others */
  if (p.combine != CUCONV_COMBINE_NONE || p.sb != 1)
    return cudaErrorNotSupported;
  return launch_generic (p, stream);
}

}                               /* namespace cuconv */
