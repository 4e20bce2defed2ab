/* gst-cudaconvolve: the register-window passes' kernels and their launch
 * (the passes themselves: cuconv-window.cuh).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-window.cuh"

namespace cuconv {

template < int NT, int NC > static __global__ void
__launch_bounds__ (WIN_H_THREADS)
window_hpass (const __grid_constant__ WindowParams p)
{
  __shared__ float in[NC * WIN_H_ROWS * WIN_H_PITCH];
  __shared__ float4 tap[NT * WIN_MAX_TAPS / 4];

  win_h_stage < NT, NC > (p, blockIdx.x, blockIdx.y, threadIdx.x, in,
      (float *) tap);
  __syncthreads ();
  win_h_compute < NT, NC > (p, blockIdx.x, blockIdx.y, threadIdx.x, in,
      (const float *) tap);
}

template < int NT > static __global__ void
__launch_bounds__ (win_v_threads (NT))
window_vpass (const __grid_constant__ WindowParams p)
{
  extern __shared__ float4 smem[];
  float *in = (float *) smem;
  const float *tap = in + NT * (win_v_tile (NT) + p.taps_y) * WIN_V_COLS;

  win_v_stage < NT > (p, blockIdx.x, blockIdx.y, threadIdx.x, in,
      (float *) tap);
  __syncthreads ();
  win_v_compute < NT > (p, blockIdx.x, blockIdx.y, threadIdx.x, in, tap,
      [&](int y, int s, float t0, float t1) {
        uint8_t *row = p.dst + (size_t) y * p.dst_pitch;
        const float src = p.combine == CUCONV_COMBINE_SHARPEN ?
            win_sample (p, p.src + (size_t) y * p.src_pitch, s) : 0.0f;
        const float v = combine_terms (p.combine, p.amount, src, t0, t1);
        store_word (row, s, p.bytes, cuconv_round_sat (v, p.mask)
            << p.shift);
      });
}

/* Host side ------------------------------------------------------------ */

/* Fills p's taps of one direction: the widest term's 2 r + 1 taps of
 * each term t[m] (zero where the term is narrower), zero up to taps. */
static void
window_taps (float (*k)[WIN_MAX_TAPS], const CuconvTaps * const *t, int nt,
    int r, int taps)
{
  for (int m = 0; m < nt; m++)
    for (int i = 0; i < taps; i++) {
      const int d = i - r;
      k[m][i] = i <= 2 * r && abs (d) <= t[m]->radius ?
          t[m]->w[d + t[m]->radius] : 0.0f;
    }
}

bool
window_takes (const CuconvPlane & pl, const CuconvFilter & f)
{
  const int sx = pl.sub_x - 1, sy = pl.sub_y - 1;
  const int bytes = cuconv_plane_sample_bytes (&pl);

  if (pl.n_comp < 1 || pl.n_comp > WIN_MAX_COMP || !all_ops (pl,
          CUCONV_COMP_FILTER) || (bytes != 1 && bytes != 2) || pl.width < 1
      || pl.height < 1 || sx < 0 || sx >= CUCONV_MAX_SUBSAMPLE || sy < 0
      || sy >= CUCONV_MAX_SUBSAMPLE)
    return false;
  switch (f.combine) {
    case CUCONV_COMBINE_NONE:
    case CUCONV_COMBINE_SHARPEN:
      if (f.n_terms != 1)
        return false;
      break;
    case CUCONV_COMBINE_MAGNITUDE:
    case CUCONV_COMBINE_ABS_SUM:
      if (f.n_terms != 2)
        return false;
      break;
    default:
      return false;
  }
  for (int m = 0; m < f.n_terms; m++) {
    const CuconvTaps & x = m == 0 ? f.x[sx] : f.x2[sx];
    const CuconvTaps & y = m == 0 ? f.y[sy] : f.y2[sy];
    if (x.untruncated || y.untruncated || x.radius < 0 || y.radius < 0
        || x.radius > WIN_MAX_RADIUS || y.radius > WIN_MAX_RADIUS)
      return false;
  }
  return true;
}

void
window_params_init (WindowParams & p, const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end)
{
  const int nt = f.n_terms;
  const int sx = pl.sub_x - 1, sy = pl.sub_y - 1;
  const CuconvTaps *x[2] = { &f.x[sx], &f.x2[sx] };
  const CuconvTaps *y[2] = { &f.y[sy], &f.y2[sy] };

  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.ws = pl.width * pl.n_comp;
  p.border = f.border;
  p.bytes = cuconv_plane_sample_bytes (&pl);
  p.shift = pl.depth > 8 ? pl.shift : 0;
  p.mask = (1u << (pl.depth > 8 ? pl.depth : 8)) - 1;
  p.combine = f.combine;
  p.amount = f.amount;
  p.nt = nt;
  for (int m = 0; m < nt; m++) {
    p.rx = max (p.rx, x[m]->radius);
    p.ry = max (p.ry, y[m]->radius);
  }
  p.taps_x = (2 * p.rx + 1 + WIN_OUT - 1) / WIN_OUT * WIN_OUT;
  p.taps_y = (2 * p.ry + 1 + WIN_OUT - 1) / WIN_OUT * WIN_OUT;
  window_taps (p.kx, x, nt, p.rx, p.taps_x);
  window_taps (p.ky, y, nt, p.ry, p.taps_y);

  h_plane_init (p, pl.height, row_begin, row_end);
}

cudaError_t
launch_window (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, Scratch & sc, cudaStream_t stream)
{
  static SmemLimit limit[2];
  const int nt = f.n_terms;
  WindowParams p;
  void *scratch;
  cudaError_t e;
  int optin;

  if (!window_takes (pl, f))
    return cudaErrorNotSupported;
  if (row_begin < 0 || row_end > pl.height)
    return cudaErrorInvalidValue;
  if (row_end <= row_begin)
    return cudaSuccess;
  window_params_init (p, pl, f, row_begin, row_end);

  const int smem = win_v_smem (nt, p.taps_y);
  e = device_smem_optin (&optin);
  if (e != cudaSuccess)
    return e;
  if (smem > optin)
    return cudaErrorNotSupported;
  e = scratch_take (sc, sizeof (float) * nt * p.h_term, stream, &scratch);
  if (e != cudaSuccess)
    return e;
  p.h = (float *) scratch;

  const dim3 hgrid = win_h_grid (p), vgrid = win_v_grid (p);
  const void *vk = nt == 1 ? (const void *) window_vpass < 1 >
      : (const void *) window_vpass < 2 >;

  if (nt == 1 && p.nc == 1)
    window_hpass < 1, 1 > <<< hgrid, WIN_H_THREADS, 0, stream >>> (p);
  else if (nt == 1)
    window_hpass < 1, 2 > <<< hgrid, WIN_H_THREADS, 0, stream >>> (p);
  else if (p.nc == 1)
    window_hpass < 2, 1 > <<< hgrid, WIN_H_THREADS, 0, stream >>> (p);
  else
    window_hpass < 2, 2 > <<< hgrid, WIN_H_THREADS, 0, stream >>> (p);
  e = cudaGetLastError ();
  if (e != cudaSuccess)
    return e;
  return launch_smem (vk, smem, limit[nt - 1],[&]() {
        if (nt == 1)
          window_vpass < 1 > <<< vgrid, win_v_threads (1), smem,
              stream >>> (p);
        else
          window_vpass < 2 > <<< vgrid, win_v_threads (2), smem,
              stream >>> (p);
      });
}

}                               /* namespace cuconv */
