/* gst-cudaconvolve: non-local means on the GPU (docs/semantics.md,
 * "Non-local means"): a block a tile of 16 x 16 outputs of one component,
 * the tile and its reach (search and patch radii) staged in shared memory
 * through the border, each thread an output: the patch distances exact
 * integers, the weights and the means float in the reference's order
 * (cuconv_nlmeans_rows, cuconv-nlmeans.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int NL_TILE = 16;

struct NlMeansParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int width, height;            /* the whole plane, for the border */
  int row_begin, row_end;
  int nc, bytes, shift;
  uint32_t mask;                /* 2^depth - 1 */
  uint32_t fill;                /* a FILL sample as it is stored */
  uint8_t op[CUCONV_MAX_COMP];
  int border;
  int sx, sy, px, py;           /* search and patch radii */
  int ex, ey;                   /* their sums: the reach */
  float k;                      /* 1 / (2 sr^2 n), n the patch's samples */
};

/* D: the patch distances are exact in Acc, 32-bit up to 10-bit samples
 * (at most 289 squares of 1023), else 64-bit. */
template < typename Acc > __global__ void
__launch_bounds__ (NL_TILE * NL_TILE)
nlmeans_kernel (const __grid_constant__ NlMeansParams p)
{
  extern __shared__ int tile[];
  const int c = blockIdx.z;
  const int x0 = blockIdx.x * NL_TILE;
  const int y0 = p.row_begin + blockIdx.y * NL_TILE;
  const int tw = NL_TILE + 2 * p.ex, th = NL_TILE + 2 * p.ey;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool out = x < p.width && y < p.row_end;

  if (p.op[c] != CUCONV_COMP_FILTER) {
    if (out) {
      uint8_t *d = p.dst + (size_t) y * p.dst_pitch;

      store_word (d, x * p.nc + c, p.bytes, p.op[c] == CUCONV_COMP_COPY ?
          load_word (p.src + (size_t) y * p.src_pitch, x * p.nc + c,
              p.bytes) : p.fill);
    }
    return;
  }
  for (int k = threadIdx.y * NL_TILE + threadIdx.x; k < tw * th;
      k += NL_TILE * NL_TILE) {
    const int xi = cuconv_border_index ((CuconvBorder) p.border,
        x0 - p.ex + k % tw, p.width);
    const int yi = cuconv_border_index ((CuconvBorder) p.border,
        y0 - p.ey + k / tw, p.height);

    tile[k] = xi < 0 || yi < 0 ? 0 : (int) (load_word (p.src +
            (size_t) yi * p.src_pitch, xi * p.nc + c, p.bytes) >> p.shift &
        p.mask);
  }
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

cudaError_t
launch_nlmeans (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, cudaStream_t stream)
{
  const int bytes = cuconv_plane_sample_bytes (&pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const int sub_x = pl.sub_x > 1 ? pl.sub_x : 1;
  const int sub_y = pl.sub_y > 1 ? pl.sub_y : 1;
  const double sr = cuconv_bilateral_sigma_range (&f, depth);
  NlMeansParams p;
  size_t smem;

  if (row_end <= row_begin || pl.width <= 0)
    return cudaSuccess;
  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP)
    return cudaErrorInvalidValue;
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
  /* at most (16 + 2 (16 + 8))^2 ints, 16 KiB: under the default limit */
  smem = sizeof (int) * (NL_TILE + 2 * p.ex) * (NL_TILE + 2 * p.ey);

  const dim3 grid ((pl.width + NL_TILE - 1) / NL_TILE,
      (row_end - row_begin + NL_TILE - 1) / NL_TILE, pl.n_comp);
  if (depth <= 10)
    nlmeans_kernel < unsigned > <<< grid, dim3 (NL_TILE, NL_TILE), smem,
        stream >>> (p);
  else
    nlmeans_kernel < unsigned long long > <<< grid, dim3 (NL_TILE, NL_TILE),
        smem, stream >>> (p);
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
