/* gst-cudaconvolve: non-local means on the GPU (docs/semantics.md,
 * "Non-local means"): a block a tile of 16 x 16 outputs of one component,
 * the tile and its reach (search and patch radii) staged in shared memory
 * through the border, each thread an output: the patch distances exact
 * integers, the weights and the means float in the reference's order
 * (cuconv_nlmeans_rows, cuconv-nlmeans.c).  Two kernels: the direct one,
 * each output's patch distances summed square by square, and the one by
 * sums (its phases in cuconv-nlmeans.cuh), reached through
 * CUCONV_PATH_NLMEANS_SUMS until measured.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"
#include "cuconv-nlmeans.cuh"

namespace cuconv {

/* A component's copy or fill, for the outputs (x, y) of a block whose
 * component is not filtered. */
__device__ __forceinline__ void
nl_other (const NlMeansParams & p, int c, int x, int y)
{
  uint8_t *d = p.dst + (size_t) y * p.dst_pitch;

  store_word (d, x * p.nc + c, p.bytes, p.op[c] == CUCONV_COMP_COPY ?
      load_word (p.src + (size_t) y * p.src_pitch, x * p.nc + c, p.bytes) :
      p.fill);
}

/* D: the patch distances are exact in Acc, 32-bit up to 10-bit samples
 * (at most 289 squares of 1023), else 64-bit. */
template < typename Acc > __global__ void
__launch_bounds__ (NL_TILE * NL_TILE)
nlmeans_kernel (const __grid_constant__ NlMeansParams p)
{
  extern __shared__ int tile[];
  const int c = blockIdx.z, tw = nl_tile_w (p);
  const int x = blockIdx.x * NL_TILE + threadIdx.x;
  const int y = p.row_begin + blockIdx.y * NL_TILE + threadIdx.y;
  const bool out = x < p.width && y < p.row_end;

  if (p.op[c] != CUCONV_COMP_FILTER) {
    if (out)
      nl_other (p, c, x, y);
    return;
  }
  nl_stage (p, blockIdx.x, blockIdx.y, c, threadIdx.y * NL_TILE
      + threadIdx.x, tile);
  __syncthreads ();
  if (!out)
    return;

  const int *centre = tile + (threadIdx.y + p.ey) * tw + threadIdx.x + p.ex;
  float num = 0.0f, den = 0.0f;

  for (int j = -p.sy; j <= p.sy; j++)
    for (int i = -p.sx; i <= p.sx; i++) {
      const int *q = centre + j * tw + i;
      Acc d = 0;

      for (int jj = -p.py; jj <= p.py; jj++)
        for (int ii = -p.px; ii <= p.px; ii++) {
          const int e = centre[jj * tw + ii] - q[jj * tw + ii];

          /* |e| < 2^16: e^2 fits in 32 bits unsigned */
          d += (Acc) ((unsigned) e * (unsigned) e);
        }
      const float w = expf (-__fmul_rn (sizeof (Acc) == 4 ?
              __uint2float_rn ((unsigned) d) : __ull2float_rn (d), p.k));

      num = __fadd_rn (num, __fmul_rn (w, (float) *q));
      den = __fadd_rn (den, w);
    }
  store_word (p.dst + (size_t) y * p.dst_pitch, x * p.nc + c, p.bytes,
      cuconv_round_sat (num / den, p.mask) << p.shift);
}

/* By sums: the phases of cuconv-nlmeans.cuh, offset by offset, two
 * barriers an offset. */
template < typename Acc > __global__ void
__launch_bounds__ (NL_THREADS)
nlmeans_sums (const __grid_constant__ NlMeansParams p)
{
  extern __shared__ float4 smem[];
  Acc *e = (Acc *) smem;
  Acc *h = e + nl_e_w (p) * nl_e_h (p);
  int *tile = (int *) (h + NL_TILE * nl_e_h (p));
  const int c = blockIdx.z, tid = threadIdx.y * NL_TILE + threadIdx.x;
  const int x = blockIdx.x * NL_TILE + threadIdx.x;
  const int y = p.row_begin + blockIdx.y * NL_TILE + threadIdx.y;
  const bool out = x < p.width && y < p.row_end;
  const int tw = nl_tile_w (p);
  NlThread t;

  if (p.op[c] != CUCONV_COMP_FILTER) {
    if (out)
      nl_other (p, c, x, y);
    return;
  }
  nl_stage (p, blockIdx.x, blockIdx.y, c, tid, tile);
  __syncthreads ();
  nl_thread_init (p, tid, tile, t);
  for (int j = -p.sy; j <= p.sy; j++)
    for (int i = -p.sx; i <= p.sx; i++) {
      nl_squares < Acc > (t, j * tw + i, tile, e);
      __syncthreads ();
      nl_rows < Acc > (p, t, e, h);
      __syncthreads ();
      if (out)
        nl_weigh < Acc > (p, tid, t, j * tw + i, h, tile);
    }
  if (out)
    store_word (p.dst + (size_t) y * p.dst_pitch, x * p.nc + c, p.bytes,
        cuconv_round_sat (t.num / t.den, p.mask) << p.shift);
}

void
nlmeans_params_init (NlMeansParams & p, const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end)
{
  const int bytes = cuconv_plane_sample_bytes (&pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const int sub_x = pl.sub_x > 1 ? pl.sub_x : 1;
  const int sub_y = pl.sub_y > 1 ? pl.sub_y : 1;
  const double sr = cuconv_bilateral_sigma_range (&f, depth);

  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.bytes = bytes;
  p.shift = bytes == 1 ? 0 : pl.shift;
  p.mask = (1u << depth) - 1;
  p.fill = pl.fill << p.shift;
  memcpy (p.op, pl.op, sizeof (p.op));
  p.border = f.border;
  p.px = f.patch[sub_x - 1];
  p.py = f.patch[sub_y - 1];
  p.ex = cuconv_filter_taps_x (&f, &pl)->radius;
  p.ey = cuconv_filter_taps_y (&f, &pl)->radius;
  p.sx = p.ex - p.px;
  p.sy = p.ey - p.py;
  p.k = (float) (1.0 / (2.0 * sr * sr * (2 * p.px + 1) * (2 * p.py + 1)));
}

cudaError_t
launch_nlmeans (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, bool sums, cudaStream_t stream)
{
  const bool wide = (pl.depth > 8 ? pl.depth : 8) > 10;
  NlMeansParams p;

  if (row_end <= row_begin || pl.width <= 0)
    return cudaSuccess;
  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP)
    return cudaErrorInvalidValue;
  nlmeans_params_init (p, pl, f, row_begin, row_end);

  const dim3 grid ((pl.width + NL_TILE - 1) / NL_TILE,
      (row_end - row_begin + NL_TILE - 1) / NL_TILE, pl.n_comp);
  const dim3 block (NL_TILE, NL_TILE);
  /* the direct kernel: at most (16 + 2 (16 + 8))^2 ints, 16 KiB; by sums
   * 12 KiB more: under the default limit */
  const size_t smem = sums ? (wide ? nl_smem < unsigned long long > (p) :
      nl_smem < unsigned > (p)) :
      sizeof (int) * nl_tile_w (p) * (NL_TILE + 2 * p.ey);

  if (sums && wide)
    nlmeans_sums < unsigned long long > <<< grid, block, smem, stream >>> (p);
  else if (sums)
    nlmeans_sums < unsigned > <<< grid, block, smem, stream >>> (p);
  else if (wide)
    nlmeans_kernel < unsigned long long > <<< grid, block, smem,
        stream >>> (p);
  else
    nlmeans_kernel < unsigned > <<< grid, block, smem, stream >>> (p);
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
