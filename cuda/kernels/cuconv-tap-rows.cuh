/* gst-cudaconvolve: the inner loops of the region kernels' direct sums
 * (cuconv-region-direct.cu, cuconv-region-relative.cu): 4 outputs a
 * thread along a row or down a column, the taps and the row read 4 at a
 * time.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_TAP_ROWS_CUH__
#define __CUCONV_TAP_ROWS_CUH__

#include <cuda_runtime.h>

namespace cuconv {

/* acc[o] += k[u] * w[u + o], u < 4, in tap order for every output. */
__device__ __forceinline__ void
fma_chunk (float acc[4], const float4 & k, const float w[8])
{
  const float kk[4] = { k.x, k.y, k.z, k.w };

#pragma unroll
  for (int u = 0; u < 4; u++)
#pragma unroll
    for (int o = 0; o < 4; o++)
      acc[o] = fmaf (kk[u], w[u + o], acc[o]);
}

/* acc[o] += sum_t k[t] * row[o + t], o < 4, over the n taps (a multiple
 * of 4; the padding taps are 0): a float4 of the row and one of the taps
 * a chunk.  row and k are 16-byte aligned; row[n + 3] is read. */
__device__ __forceinline__ void
hrow (const float *row, const float *k, int n, float acc[4])
{
  const float4 *r4 = (const float4 *) row, *k4 = (const float4 *) k;
  float4 a = r4[0];

  for (int q = 0; q < n / 4; q++) {
    const float4 b = r4[q + 1];
    const float w[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };

    fma_chunk (acc, k4[q], w);
    a = b;
  }
}

/* acc[o] += sum_t k[t] * col[(o + t) * stride], o < 4, likewise down a
 * column; col[(n + 3) * stride] is read. */
__device__ __forceinline__ void
vcol (const float *col, int stride, const float *k, int n, float acc[4])
{
  const float4 *k4 = (const float4 *) k;
  float w[8];

#pragma unroll
  for (int o = 0; o < 4; o++)
    w[4 + o] = col[o * stride];
  for (int q = 0; q < n / 4; q++) {
#pragma unroll
    for (int o = 0; o < 4; o++) {
      w[o] = w[4 + o];
      w[4 + o] = col[(4 * q + 4 + o) * stride];
    }
    fma_chunk (acc, k4[q], w);
  }
}

}                               /* namespace cuconv */

#endif /* __CUCONV_TAP_ROWS_CUH__ */
