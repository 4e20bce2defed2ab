/* gst-cudaconvolve: region-relative filters of separable taps, every
 * region in the same two launches (cuconv-device-frames.cuh,
 * "Region-relative filters, batched").  A job is one plane of one
 * region, with the taps of the region's own filter.  The first launch
 * sums each job's rows horizontally, a warp a row of up to RELATIVE_TW
 * outputs, into float rows of the scratch that reach past the rectangle
 * by the vertical taps; the second sums them vertically, four rows of a
 * column a thread, and writes every sample of the rectangle where the job
 * is the one that applies: the largest weight there, and among equal
 * weights the last region in the order (docs/semantics.md, "Strength
 * that follows the region").  So every sample is written once, by one
 * thread, whatever the overlaps.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-region-weight.h"
#include "cuconv-tile.cuh"
#include "cuconv-tap-rows.cuh"
#include "cuconv-device-frames.cuh"

namespace cuconv {

constexpr int RELATIVE_HROWS = THREADS / 32;    /* rows a block, a warp each */
constexpr int RELATIVE_VW = 32;                 /* columns of a written tile */
constexpr int RELATIVE_VH = 4 * (THREADS / 32); /* rows: 4 a thread */
constexpr int RELATIVE_T4_MAX = (2 * RELATIVE_MAX_REACH + 1 + 3) & ~3;
constexpr int RELATIVE_SPAN = RELATIVE_TW + RELATIVE_T4_MAX + 4;

/* The job block b belongs to: the last whose first block (first[]) is at
 * most b. */
__device__ __forceinline__ int
relative_job (const int *first, int n, int b)
{
  return block_find (n, b,[first] (int i) {
        return first[i];});
}

/* The value of component c of pixel (x, y) of a plane, any x and y:
 * through the border, 0 where it reads none. */
__device__ __forceinline__ float
relative_sample (const DirectPlane & pl, int border, int x, int y, int c)
{
  const int u = cuconv_border_index ((CuconvBorder) border, x, pl.width);
  const int v = cuconv_border_index ((CuconvBorder) border, y, pl.height);
  const uint8_t *row;
  size_t k;

  if (u < 0 || v < 0)
    return 0.0f;
  row = pl.src + (size_t) v * pl.src_pitch;
  k = (size_t) u * pl.nc + c;
  return sample_to_float (((pl.bytes == 1 ? row[k] :
              ((const uint16_t *) row)[k]) >> pl.shift) & pl.mask);
}

/* The horizontal pass: block b takes RELATIVE_HROWS rows and RELATIVE_TW
 * columns of its job's rows, for each filtered component; row v of a job
 * is the plane's row y - ry + v. */
__global__ void
__launch_bounds__ (THREADS)
relative_rows (const __grid_constant__ RelativeParams p)
{
  __shared__ float4 taps4[RELATIVE_T4_MAX / 4];
  __shared__ float4 stage4[RELATIVE_HROWS][RELATIVE_SPAN / 4];
  const int j = relative_job (p.h_first, p.n_jobs, blockIdx.x);
  const RelativeJob job = p.jobs[j];
  const DirectPlane & pl = p.plane[job.plane];
  const int tiles_x = (job.w + RELATIVE_TW - 1) / RELATIVE_TW;
  const int b = blockIdx.x - p.h_first[j];
  const int v0 = b / tiles_x * RELATIVE_HROWS;
  const int u0 = b % tiles_x * RELATIVE_TW;
  const int span = RELATIVE_TW + job.t4x + 4;
  const int warp = threadIdx.x / 32, u = 4 * (threadIdx.x % 32);
  float *taps = (float *) taps4;
  int slot = 0;

  for (int i = threadIdx.x; i < job.t4x; i += THREADS)
    taps[i] = p.taps[job.taps + i];
  for (int c = 0; c < pl.nc; c++) {
    if (pl.op[c] != CUCONV_COMP_FILTER)
      continue;
    __syncthreads ();
    for (int e = threadIdx.x; e < RELATIVE_HROWS * span; e += THREADS) {
      const int r = e / span, s = e - r * span;

      ((float *) stage4[r])[s] = v0 + r < job.rows ?
          relative_sample (pl, p.border, job.x + u0 - job.rx + s,
          job.y - job.ry + v0 + r, c) : 0.0f;
    }
    __syncthreads ();
    if (v0 + warp < job.rows && u0 + u < job.w) {
      float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

      hrow ((const float *) stage4[warp] + u, taps, job.t4x, acc);
      *(float4 *) (p.hbuf + job.hbuf + ((size_t) slot * job.rows + v0 +
              warp) * job.pitch + u0 + u) =
          make_float4 (acc[0], acc[1], acc[2], acc[3]);
    }
    slot++;
  }
}

/* The weight of region k at sample (x, y) of plane i: 1 inside its
 * rectangle there for hard regions, the soft weight for soft ones; 0
 * outside. */
__device__ __forceinline__ float
relative_weight (const RelativeParams & p, int k, int i, int x, int y)
{
  const CuconvRect r = p.rects[k * p.n_planes + i];

  if (x < r.x || x >= r.x + r.w || y < r.y || y >= r.y + r.h)
    return 0.0f;
  if (!p.soft)
    return 1.0f;
  return cuconv_region_weight (cuconv_region_depth (&p.boxes[k],
          (CuconvShape) p.shape, x, y, p.sx[i], p.sy[i]), p.feather);
}

/* Whether job's region is the one that applies at (x, y) of its plane,
 * and its weight there in *w. */
__device__ __forceinline__ bool
relative_applies (const RelativeParams & p, const RelativeJob & job, int x,
    int y, float *w)
{
  const float own = relative_weight (p, job.region, job.plane, x, y);

  if (!(own > 0.0f))
    return false;
  for (int i = p.rivals_first[job.region]; i < p.rivals_first[job.region +
          1]; i++) {
    const int k = p.rivals[i];
    const float other = relative_weight (p, k, job.plane, x, y);

    if (other > own || (other == own && k > job.region))
      return false;
  }
  *w = own;
  return true;
}

/* The vertical pass and the write: block b takes a tile of RELATIVE_VW x
 * RELATIVE_VH samples of its job's rectangle, a column of 4 rows a
 * thread. */
__global__ void
__launch_bounds__ (THREADS)
relative_write (const __grid_constant__ RelativeParams p)
{
  __shared__ float4 taps4[RELATIVE_T4_MAX / 4];
  const int j = relative_job (p.v_first, p.n_jobs, blockIdx.x);
  const RelativeJob job = p.jobs[j];
  const DirectPlane & pl = p.plane[job.plane];
  const int tiles_x = (job.w + RELATIVE_VW - 1) / RELATIVE_VW;
  const int b = blockIdx.x - p.v_first[j];
  const int u = b % tiles_x * RELATIVE_VW + threadIdx.x % 32;
  const int v = b / tiles_x * RELATIVE_VH + 4 * (threadIdx.x / 32);
  float *taps = (float *) taps4;
  float w[4];
  bool any = false, applies[4];
  int slot = 0;

  for (int i = threadIdx.x; i < job.t4y; i += THREADS)
    taps[i] = p.taps[job.taps + job.t4x + i];
  __syncthreads ();
  if (u >= job.w || v >= job.h)
    return;
#pragma unroll
  for (int o = 0; o < 4; o++) {
    applies[o] = v + o < job.h &&
        relative_applies (p, job, job.x + u, job.y + v + o, &w[o]);
    any |= applies[o];
  }
  if (!any)
    return;

  for (int c = 0; c < pl.nc; c++) {
    uint32_t fw[4] = { pl.fill, pl.fill, pl.fill, pl.fill };

    if (pl.op[c] == CUCONV_COMP_FILTER) {
      float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

      vcol (p.hbuf + job.hbuf + ((size_t) slot * job.rows + v) * job.pitch +
          u, job.pitch, taps, job.t4y, acc);
#pragma unroll
      for (int o = 0; o < 4; o++)
        fw[o] = (cuconv_round_sat (acc[o], pl.mask) << pl.shift) &
            pl.word_mask;
      slot++;
    }
#pragma unroll
    for (int o = 0; o < 4; o++) {
      if (!applies[o])
        continue;
      const int k = (job.x + u) * pl.nc + c;
      const size_t y = (size_t) (job.y + v + o);
      const uint32_t sw = load_word (pl.src + y * pl.src_pitch, k, pl.bytes);
      const uint32_t f = pl.op[c] == CUCONV_COMP_COPY ? sw : fw[o];

      store_word (pl.dst + y * pl.dst_pitch, k, pl.bytes, w[o] >= 1.0f ? f :
          cuconv_region_blend (sw >> pl.shift, f >> pl.shift, w[o],
              pl.mask) << pl.shift);
    }
  }
}

void
relative_number_blocks (const RelativeJob * jobs, int n, int *h_first,
    int *v_first)
{
  int h = 0, v = 0;

  for (int i = 0; i < n; i++) {
    h_first[i] = h;
    v_first[i] = v;
    if (jobs[i].hbuf != RELATIVE_NO_ROWS)
      h += (jobs[i].rows + RELATIVE_HROWS - 1) / RELATIVE_HROWS *
          ((jobs[i].w + RELATIVE_TW - 1) / RELATIVE_TW);
    v += (jobs[i].h + RELATIVE_VH - 1) / RELATIVE_VH *
        ((jobs[i].w + RELATIVE_VW - 1) / RELATIVE_VW);
  }
  h_first[n] = h;
  v_first[n] = v;
}

cudaError_t
launch_relative (const RelativeParams & p, int h_blocks, int v_blocks,
    cudaStream_t stream)
{
  if (h_blocks > 0)
    relative_rows <<< h_blocks, THREADS, 0, stream >>> (p);
  if (v_blocks > 0)
    relative_write <<< v_blocks, THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
