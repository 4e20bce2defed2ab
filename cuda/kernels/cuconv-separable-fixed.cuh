/* gst-cudaconvolve: the tuned separable kernel of one plane at a radius of
 * CUCONV_FIXED_RADII (sep_fixed) and its launcher (launch_fixed, declared
 * in cuconv-separable.cuh).  The dispatch (pick_fixed, cuconv-separable.cu)
 * sees the declaration only; each radius is instantiated once, by
 * CUCONV_SEPARABLE_INSTANTIATE in one of the cuconv-separable-r*.cu, which
 * split the unrolled kernels into translation units of about equal
 * compile time, so that the cores of a small machine share them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_SEPARABLE_FIXED_CUH__
#define __CUCONV_SEPARABLE_FIXED_CUH__

#include <cuda_runtime.h>

#include "cuconv-separable.cuh"

namespace cuconv {

template < int R, int NC, int SB, int OUT, int RPT > __global__ void
__launch_bounds__ (THREADS, fixed_min_blocks (R))
sep_fixed (const __grid_constant__ SepParams p)
{
  grid_dep_wait ();
  tile_fixed < R, NC, SB, OUT, RPT > (p, blockIdx.x,
      border_rows_first (blockIdx.y, gridDim.y));
}

/* Host side ------------------------------------------------------------ */

template < int R, int NC, int SB, int OUT, int RPT > cudaError_t
launch_fixed_rpt (const SepParams & p, cudaStream_t stream)
{
  constexpr int tile_h = ROW_GROUPS * RPT;
  static SmemLimit smem_limit;
  const int smem = (int) sep_smem_bytes (fixed_geom < R, NC, SB, RPT > (),
      out_terms (OUT));
  dim3 grid ((p.ws + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);

  return launch_smem ((const void *) sep_fixed < R, NC, SB, OUT, RPT >, smem,
      smem_limit,[&]{
        launch_pdl (sep_fixed < R, NC, SB, OUT, RPT >, grid, THREADS, smem,
            stream, p);});
}

/* fixed_rpt's taller 16-bit tiles pay on a band of a large plane
 * (CUCONV_LARGE_PLANE_SAMPLES, cuconv-dispatch.cuh); on a smaller one the
 * 8-bit rows, whose blocks fill the device better. */

template < int R, int NC, int SB, int OUT > cudaError_t
launch_fixed (const SepParams & p, cudaStream_t stream)
{
  constexpr int RPT = fixed_rpt (R, NC, SB, OUT);
  constexpr int RPT_8BIT = fixed_rpt (R, NC, 1, OUT);

  if constexpr (RPT != RPT_8BIT) {
    if ((double) p.ws * (p.row_end - p.row_begin) < CUCONV_LARGE_PLANE_SAMPLES)
      return launch_fixed_rpt < R, NC, SB, OUT, RPT_8BIT > (p, stream);
  }
  return launch_fixed_rpt < R, NC, SB, OUT, RPT > (p, stream);
}

/* The launchers pick_fixed_for takes at radius R: the blur and sharpen of
 * 1 or 2 components of 8 or 16 bits, two terms of one of 8 bits. */
#define CUCONV_SEPARABLE_INSTANTIATE_OUT(R, OUT) \
  template cudaError_t launch_fixed < R, 1, 1, OUT > (const SepParams &, \
      cudaStream_t); \
  template cudaError_t launch_fixed < R, 2, 1, OUT > (const SepParams &, \
      cudaStream_t); \
  template cudaError_t launch_fixed < R, 1, 2, OUT > (const SepParams &, \
      cudaStream_t); \
  template cudaError_t launch_fixed < R, 2, 2, OUT > (const SepParams &, \
      cudaStream_t);
#define CUCONV_SEPARABLE_INSTANTIATE(R) \
  CUCONV_SEPARABLE_INSTANTIATE_OUT (R, OUT_BLUR) \
  CUCONV_SEPARABLE_INSTANTIATE_OUT (R, OUT_SHARPEN) \
  template cudaError_t launch_fixed < R, 1, 1, OUT_TWO_TERMS > \
      (const SepParams &, cudaStream_t);

}                               /* namespace cuconv */

#endif /* __CUCONV_SEPARABLE_FIXED_CUH__ */
