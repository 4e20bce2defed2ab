/* gst-cudaconvolve: the temporal denoise on the GPU (docs/design.md,
 * "Temporal denoise"): one thread for 4 samples of a row, the integer
 * arithmetic of cuconv_temporal_rows (cuconv-temporal.c) to the bit, the
 * table of factors in the kernel's parameters.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-engine.cuh"

namespace cuconv {

#define TM_BX 64                /* threads across: 4 samples each */
#define TM_BY 4
#define TM_SAMPLES 4

struct TemporalParams
{
  const uint8_t *src;
  uint8_t *dst;                 /* the state: previous output, then new */
  size_t src_pitch;
  size_t dst_pitch;
  int ws;                       /* samples of a row: width * nc */
  int height;
  int nc;
  int shift;
  int down;                     /* depth - 8: |a - b| >> down indexes k */
  uint32_t mask;
  int first;
  uint8_t op[CUCONV_MAX_COMP];
  uint8_t k[CUCONV_TEMPORAL_LUT];
};

template < int SB > __global__ void
__launch_bounds__ (TM_BX * TM_BY)
temporal_kernel (const TemporalParams p)
{
  const int y = blockIdx.y * TM_BY + threadIdx.y;
  const int i0 = (blockIdx.x * TM_BX + threadIdx.x) * TM_SAMPLES;

  if (y >= p.height)
    return;
  const uint8_t *in = p.src + (size_t) y * p.src_pitch;
  uint8_t *st = p.dst + (size_t) y * p.dst_pitch;

#pragma unroll
  for (int s = 0; s < TM_SAMPLES; s++) {
    const int i = i0 + s;

    if (i >= p.ws)
      break;
    const uint32_t w = SB == 1 ? in[i] : in[2 * i] | (uint32_t) in[2 * i + 1]
        << 8;
    uint32_t out = w;

    if (!p.first && p.op[i % p.nc] == CUCONV_COMP_FILTER) {
      const uint32_t sw = SB == 1 ? st[i] :
          st[2 * i] | (uint32_t) st[2 * i + 1] << 8;
      const int a = (int) ((w >> p.shift) & p.mask);
      const int b = (int) ((sw >> p.shift) & p.mask);
      const int t = p.k[abs (a - b) >> p.down];

      out = (uint32_t) (a + ((t * (b - a) + 128) >> 8)) << p.shift;
    }
    if (SB == 1) {
      st[i] = (uint8_t) out;
    } else {
      st[2 * i] = (uint8_t) out;
      st[2 * i + 1] = (uint8_t) (out >> 8);
    }
  }
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" int
cuconv_temporal_device (const CuconvPlane * planes, int n_planes,
    const uint8_t * k, int first, void *stream, CuconvStatus * st)
{
  for (int n = 0; n < n_planes; n++) {
    const CuconvPlane & pl = planes[n];
    const int depth = pl.depth > 8 ? pl.depth : 8;
    TemporalParams p;

    if (pl.width <= 0 || pl.height <= 0)
      continue;
    if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || depth > 16)
      return fail (st, "the GPU cannot denoise this plane",
          cudaErrorInvalidValue);
    memset (&p, 0, sizeof (p));
    p.src = pl.src;
    p.dst = pl.dst;
    p.src_pitch = (size_t) pl.src_stride;
    p.dst_pitch = (size_t) pl.dst_stride;
    p.ws = pl.width * pl.n_comp;
    p.height = pl.height;
    p.nc = pl.n_comp;
    p.shift = depth == 8 ? 0 : pl.shift;
    p.down = depth - 8;
    p.mask = (1u << depth) - 1;
    p.first = first;
    memcpy (p.op, pl.op, sizeof (p.op));
    memcpy (p.k, k, CUCONV_TEMPORAL_LUT);

    const dim3 block (TM_BX, TM_BY);
    const dim3 grid ((p.ws + TM_BX * TM_SAMPLES - 1) / (TM_BX * TM_SAMPLES),
        (p.height + TM_BY - 1) / TM_BY);

    if (depth == 8)
      temporal_kernel < 1 > <<<grid, block, 0, (cudaStream_t) stream>>> (p);
    else
      temporal_kernel < 2 > <<<grid, block, 0, (cudaStream_t) stream>>> (p);
    const cudaError_t e = cudaGetLastError ();
    if (e != cudaSuccess)
      return fail (st, "the GPU failed to denoise a frame", e);
  }
  return 0;
}
