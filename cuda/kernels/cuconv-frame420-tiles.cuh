/* gst-cudaconvolve: a 4:2:0 frame through the tuned separable tiles in one
 * launch at a luma radius of CUCONV_FIXED_RADII (sep_frame420), and its
 * launcher (launch_frame420_rn, declared in cuconv-separable.cuh).  The
 * frame's launcher (launch_frame420_tiles, cuconv-frame420.cu) sees the
 * declaration only; each radius is instantiated once, by CUCONV_FRAME420_INSTANTIATE
 * in one of the cuconv-frame420-r*.cu, which split the unrolled kernels
 * into translation units of about equal compile time, so that the cores
 * of a small machine share them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_FRAME420_TILES_CUH__
#define __CUCONV_FRAME420_TILES_CUH__

#include <cuda_runtime.h>

#include "cuconv-separable.cuh"

namespace cuconv {

/* Rows a thread of a frame's chroma tiles (radius RC, NC components):
 * those of 8-bit samples, also for 16-bit ones (fixed_rpt's 7 at radius
 * 4 measured slower there). */
__host__ __device__ constexpr int
frame_chroma_rpt (int rc, int nc)
{
  return fixed_rpt (rc, nc, 1, OUT_BLUR);
}

/* A 4:2:0 frame in one launch: the luma plane (radius R) and its chroma
 * planes (radius (R + 1) / 2, NC components), each block taking one tile
 * of one plane.  Each plane is named by a constant index so that its taps
 * stay immediate operands. */
template < int R, int NC, int SB > __global__ void
__launch_bounds__ (THREADS, fixed_min_blocks ((R + 1) / 2) <
    fixed_min_blocks (R) ? fixed_min_blocks ((R + 1) / 2) :
    fixed_min_blocks (R))
sep_frame420 (const __grid_constant__ FrameParams fp)
{
  constexpr int RC = (R + 1) / 2;
  const int b = blockIdx.x;
  const int i = b < fp.first_block[1] ? 0 : b < fp.first_block[2] ? 1 : 2;
  const int k = b - fp.first_block[i], tx = fp.tiles_x[i];
  const int by = border_rows_first (k / tx,
      (fp.first_block[i + 1] - fp.first_block[i]) / tx);

  grid_dep_wait ();
  if (i == 0)
    tile_fixed < R, 1, SB, OUT_BLUR > (fp.plane[0], k % tx, by);
  else if (i == 1)
    tile_fixed < RC, NC, SB, OUT_BLUR, frame_chroma_rpt (RC, NC) >
        (fp.plane[1], k % tx, by);
  else
    tile_fixed < RC, NC, SB, OUT_BLUR, frame_chroma_rpt (RC, NC) >
        (fp.plane[2], k % tx, by);
}

/* Host side ------------------------------------------------------------ */

template < int R, int NC, int SB > cudaError_t
launch_frame420_rn (const FrameParams & fp0, cudaStream_t stream)
{
  constexpr int RC = (R + 1) / 2;
  constexpr int RPT_L = fixed_rpt (R, 1, SB, OUT_BLUR);
  constexpr int RPT_C = frame_chroma_rpt (RC, NC);
  static SmemLimit smem_limit;
  const int smem_l = (int) sep_smem_bytes (fixed_geom < R, 1, SB,
      RPT_L > ());
  const int smem_c = (int) sep_smem_bytes (fixed_geom < RC, NC, SB,
      RPT_C > ());
  const int smem = smem_l > smem_c ? smem_l : smem_c;
  FrameParams fp = fp0;
  int blocks = 0;

  for (int i = 0; i < 3; i++) {
    const SepParams & p = fp.plane[i < fp.n ? i : fp.n - 1];
    const int tile_h = ROW_GROUPS * (i == 0 ? RPT_L : RPT_C);
    fp.first_block[i] = blocks;
    fp.tiles_x[i] = (p.ws + TILE_W - 1) / TILE_W;
    if (i < fp.n)
      blocks += fp.tiles_x[i] * ((p.row_end - p.row_begin + tile_h - 1)
          / tile_h);
  }
  fp.first_block[3] = blocks;
  return launch_smem ((const void *) sep_frame420 < R, NC, SB >, smem,
      smem_limit,[&]{
        launch_pdl (sep_frame420 < R, NC, SB >, blocks, THREADS, smem,
            stream, fp);});
}

/* The launchers launch_frame420_tiles takes at luma radius R: chroma of 1 or 2
 * components (I420, NV12), of 8 or 16 bits. */
#define CUCONV_FRAME420_INSTANTIATE(R) \
  template cudaError_t launch_frame420_rn < R, 1, 1 > (const FrameParams &, \
      cudaStream_t); \
  template cudaError_t launch_frame420_rn < R, 2, 1 > (const FrameParams &, \
      cudaStream_t); \
  template cudaError_t launch_frame420_rn < R, 1, 2 > (const FrameParams &, \
      cudaStream_t); \
  template cudaError_t launch_frame420_rn < R, 2, 2 > (const FrameParams &, \
      cudaStream_t);

}                               /* namespace cuconv */

#endif /* __CUCONV_FRAME420_TILES_CUH__ */
