/* gst-cudaconvolve: the region filter's copies (cuconv-device-frames.cuh): the
 * source of every plane to dst in one launch, a warp a row; and
 * rectangles of planes from one buffer to another in one launch, a few
 * rows of one rectangle a block, from a list of jobs in device memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-device-frames.cuh"

namespace cuconv {

constexpr int WARPS = THREADS / 32;

constexpr int COPY_THREADS = 128;
constexpr int COPY_ROWS = 4;    /* rows of a rectangle one block copies */

/* Block b copies COPY_ROWS rows of the job it falls in, one byte a
 * thread. */
__global__ void
copy_rects (const __grid_constant__ CopyParams p)
{
  const CopyJob job = p.jobs[block_job (p.jobs, p.n_jobs, blockIdx.x)];
  const CopyPlane & pl = p.plane[job.plane];
  const int r0 = ((int) blockIdx.x - job.first_block) * COPY_ROWS;
  const int r1 = min (r0 + COPY_ROWS, job.h);
  const int rb = job.w * pl.bpp;

  for (int r = r0; r < r1; r++) {
    const uint8_t *s = pl.src + (size_t) (job.sy + r) * pl.src_pitch +
        (size_t) job.sx * pl.bpp;
    uint8_t *d = pl.dst + (size_t) (job.dy + r) * pl.dst_pitch +
        (size_t) job.dx * pl.bpp;

    for (int c = threadIdx.x; c < rb; c += COPY_THREADS)
      d[c] = s[c];
  }
}

/* The source of every plane to dst, a warp a row: the rows of the planes
 * one after the other. */
struct FramePlane
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int row_bytes;
  int unit;                     /* 16, 4 or 1: what both rows align to */
};

struct FrameCopy
{
  FramePlane plane[CUCONV_MAX_PLANES];
  int first_row[CUCONV_MAX_PLANES + 1];
  int n;
};

template < typename U > __device__ __forceinline__ void
copy_row_as (const uint8_t * s, uint8_t * d, int bytes, int lane)
{
  const int n = bytes / (int) sizeof (U);

  /* memory-bound: unrolled, it spills and gains nothing */
#pragma unroll 1
  for (int k = lane; k < n; k += 32)
    ((U *) d)[k] = ((const U *) s)[k];
  for (int k = n * (int) sizeof (U) + lane; k < bytes; k += 32)
    d[k] = s[k];
}

__global__ void
__launch_bounds__ (THREADS)
copy_frame (const __grid_constant__ FrameCopy c)
{
  const int row = blockIdx.x * WARPS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int i = row_plane (c.first_row, c.n, row);

  if (i < 0)
    return;

  const FramePlane pl = c.plane[i];
  const size_t y = (size_t) (row - c.first_row[i]);
  const uint8_t *s = pl.src + y * pl.src_pitch;
  uint8_t *d = pl.dst + y * pl.dst_pitch;

  if (pl.unit == 16)
    copy_row_as < uint4 > (s, d, pl.row_bytes, lane);
  else if (pl.unit == 4)
    copy_row_as < uint32_t > (s, d, pl.row_bytes, lane);
  else
    copy_row_as < uint8_t > (s, d, pl.row_bytes, lane);
}

int
copy_jobs_number_blocks (CopyJob * jobs, int n)
{
  return jobs_number_blocks (jobs, n, COPY_ROWS);
}

cudaError_t
launch_copy_rects (const CopyParams & p, int blocks, cudaStream_t stream)
{
  if (p.n_jobs == 0 || blocks == 0)
    return cudaSuccess;
  copy_rects <<< blocks, COPY_THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

cudaError_t
launch_copy_planes (const CuconvPlane * planes, int n_planes,
    cudaStream_t stream)
{
  FrameCopy c;
  int rows = 0;

  memset (&c, 0, sizeof (c));
  c.n = n_planes;
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    const size_t a = (uintptr_t) pl.src | (uintptr_t) pl.dst |
        (size_t) pl.src_stride | (size_t) pl.dst_stride;

    c.plane[i] = { pl.src, pl.dst, (size_t) pl.src_stride,
        (size_t) pl.dst_stride, pl.width * pixel_bytes (pl),
        a % 16 == 0 ? 16 : a % 4 == 0 ? 4 : 1 };
    c.first_row[i] = rows;
    rows += pl.height;
  }
  c.first_row[n_planes] = rows;
  if (rows == 0)
    return cudaSuccess;
  copy_frame <<< (rows + WARPS - 1) / WARPS, THREADS, 0, stream >>> (c);
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
