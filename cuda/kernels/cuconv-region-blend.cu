/* gst-cudaconvolve: soft regions on the GPU (cuconv-device-frames.cuh):
 * the regions' weights, each the largest of the regions' at a sample
 * (cuconv-region-weight.h), into a float a sample, from a list of jobs in
 * device memory, a few rows of one rectangle a block; then every plane's
 * samples blended between the source and the filter's output by them, a
 * warp a row.  And the region-relative filters' write of each region's
 * filtered crop, a warp a row of its rectangle.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-region-weight.h"
#include "cuconv-tile.cuh"
#include "cuconv-device-frames.cuh"

namespace cuconv {

constexpr int WEIGH_THREADS = 128;
constexpr int WEIGH_ROWS = 4;   /* rows of a rectangle one block weighs */
constexpr int BLEND_WARPS = THREADS / 32;

/* Block b weighs WEIGH_ROWS rows of the job it falls in, a sample a
 * thread.  Weights are not negative: as integers their bits order as the
 * floats do. */
__global__ void
weigh_rects (const __grid_constant__ WeighParams p)
{
  const WeighJob job = p.jobs[block_job (p.jobs, p.n_jobs, blockIdx.x)];
  const WeighPlane & pl = p.plane[job.plane];
  const CuconvBox box = p.boxes[job.box];
  const int r0 = ((int) blockIdx.x - job.first_block) * WEIGH_ROWS;
  const int r1 = min (r0 + WEIGH_ROWS, job.h);

  for (int r = r0; r < r1; r++) {
    const int y = job.y + r;
    int *row = (int *) (pl.weight + (size_t) y * pl.width);

    for (int c = threadIdx.x; c < job.w; c += WEIGH_THREADS) {
      const int x = job.x + c;
      const float w = cuconv_region_weight (cuconv_region_depth (&box,
              (CuconvShape) p.shape, x, y, pl.sx, pl.sy), p.feather);

      if (w > 0.0f)
        atomicMax (row + x, __float_as_int (w));
    }
  }
}

/* Every sample of the planes, a warp a row: the source where the weight is
 * 0, dst (the filter's output) where it is 1, each component blended in
 * between (words read and written a byte at a time: 16-bit rows need not
 * be aligned). */
__global__ void
__launch_bounds__ (THREADS)
blend_planes (const __grid_constant__ BlendParams b)
{
  const int row = blockIdx.x * BLEND_WARPS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int i = row_plane (b.first_row, b.n, row);

  if (i < 0)
    return;

  const BlendPlane pl = b.plane[i];
  const size_t y = (size_t) (row - b.first_row[i]);
  const uint8_t *s = pl.src + y * pl.src_pitch;
  uint8_t *d = pl.dst + y * pl.dst_pitch;
  const float *weight = pl.weight + y * pl.width;

  for (int x = lane; x < pl.width; x += 32) {
    const float w = cuconv_region_mode_weight ((CuconvRegionMode) b.mode,
        weight[x]);

    if (w >= 1.0f)
      continue;
    for (int c = 0; c < pl.nc; c++) {
      const int k = x * pl.nc + c;
      const unsigned sw = load_word (s, k, pl.bytes);

      store_word (d, k, pl.bytes, w <= 0.0f ? sw :
          cuconv_region_blend (sw >> pl.shift, load_word (d, k,
                  pl.bytes) >> pl.shift, w, pl.max) << pl.shift);
    }
  }
}

/* A row of a region's rectangle on one of the planes a warp (words read
 * and written a byte at a time, as in blend_planes). */
__global__ void
__launch_bounds__ (THREADS)
write_region (const __grid_constant__ RegionParams p)
{
  const int row = blockIdx.x * BLEND_WARPS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int i = row_plane (p.first_row, p.n, row);

  if (i < 0)
    return;

  const RegionPlane pl = p.plane[i];
  const int y = pl.y + row - p.first_row[i];
  const uint8_t *s = pl.src + (size_t) y * pl.src_pitch;
  uint8_t *d = pl.dst + (size_t) y * pl.dst_pitch;
  const uint8_t *f = pl.crop + (size_t) (y - pl.cy) * pl.crop_pitch;

  for (int x = pl.x + lane; x < pl.x + pl.w; x += 32) {
    float w = 1.0f;

    if (p.soft) {
      float *largest = pl.weight + (size_t) y * pl.width + x;

      w = cuconv_region_weight (cuconv_region_depth (&p.box,
              (CuconvShape) p.shape, x, y, pl.sx, pl.sy), p.feather);
      if (!(w > 0.0f) || w < *largest)
        continue;
      *largest = w;
    }
    for (int c = 0; c < pl.nc; c++) {
      const int k = x * pl.nc + c;
      const unsigned fw = load_word (f, (x - pl.cx) * pl.nc + c, pl.bytes);

      store_word (d, k, pl.bytes, w >= 1.0f ? fw :
          cuconv_region_blend (load_word (s, k, pl.bytes) >> pl.shift,
              fw >> pl.shift, w, pl.max) << pl.shift);
    }
  }
}

cudaError_t
launch_write_region (const RegionParams & p, cudaStream_t stream)
{
  const int rows = p.first_row[p.n];

  if (rows == 0)
    return cudaSuccess;
  write_region <<< (rows + BLEND_WARPS - 1) / BLEND_WARPS, THREADS, 0,
      stream >>> (p);
  return cudaGetLastError ();
}

int
weigh_jobs_number_blocks (WeighJob * jobs, int n)
{
  return jobs_number_blocks (jobs, n, WEIGH_ROWS);
}

cudaError_t
launch_weigh_rects (const WeighParams & p, int blocks, cudaStream_t stream)
{
  if (p.n_jobs == 0 || blocks == 0)
    return cudaSuccess;
  weigh_rects <<< blocks, WEIGH_THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

cudaError_t
launch_blend_planes (const BlendParams & b, cudaStream_t stream)
{
  const int rows = b.first_row[b.n];

  if (rows == 0)
    return cudaSuccess;
  blend_planes <<< (rows + BLEND_WARPS - 1) / BLEND_WARPS, THREADS, 0,
      stream >>> (b);
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
