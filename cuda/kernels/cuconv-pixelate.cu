/* gst-cudaconvolve: pixelate on the GPU (docs/semantics.md, "Pixelate"):
 * a thread a small block of the grid, a thread block a larger one, its
 * samples summed in 64-bit integers component by component, then each
 * written as the block's mean rounded half up.  Exact: the CPU's sums and the same rounding.  Words
 * are read and written a byte at a time: any alignment.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-pixelate.h"
#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int PIXELATE_THREADS = 256;
/* the most rows of blocks a launch spans (gridDim.y); more are looped */
constexpr int PIXELATE_MAX_GRID_Y = 65535;

struct PixelateParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int width, height, row_begin, row_end;        /* the whole plane */
  int nc, bytes, shift;
  uint32_t mask;                /* 2^depth - 1: the bits of a sample */
  uint32_t fill;                /* a FILL sample as it is stored */
  uint8_t op[CUCONV_MAX_COMP];
  int sx, sy, block;
  long long x0, y0;             /* the grid's origin (CuconvFilter) */
  long long bx0, by0, by1;      /* the plane's first blocks, its last row */
};

/* Writes the mean of block (ua..ub) x (va..vb) to its samples, n of them,
 * from the sums of its components: from thread t on, every `step`-th. */
__device__ static void
write_block (const PixelateParams & p, const unsigned long long *sum,
    int ua, int ub, int va, int n, int t, int step)
{
  const int bw = ub - ua;

  for (int k = t; k < n; k += step) {
    const size_t v = (size_t) (va + k / bw);
    const int u = ua + k % bw;

    for (int c = 0; c < p.nc; c++) {
      const int s = u * p.nc + c;
      uint32_t w;

      if (p.op[c] == CUCONV_COMP_COPY)
        w = load_word (p.src + v * p.src_pitch, s, p.bytes);
      else if (p.op[c] == CUCONV_COMP_FILL)
        w = p.fill;
      else
        w = (uint32_t) ((2 * sum[c] + (unsigned) n) /
            (2 * (unsigned long long) n)) << p.shift;
      store_word (p.dst + v * p.dst_pitch, s, p.bytes, w);
    }
  }
}

/* Small blocks (at most SMALL_BLOCK_SAMPLES samples): a thread a block. */
constexpr int SMALL_BLOCK_SAMPLES = 64;

__global__ void
__launch_bounds__ (PIXELATE_THREADS)
pixelate_small (const __grid_constant__ PixelateParams p, long long n_bx,
    long long n_blocks)
{
  const long long t = (long long) blockIdx.x * PIXELATE_THREADS + threadIdx.x;
  unsigned long long sum[CUCONV_MAX_COMP] = { 0, 0, 0, 0 };
  int ua, ub, va, vb;

  if (t >= n_blocks)
    return;
  cuconv_pixelate_span (p.bx0 + t % n_bx, p.sx, p.x0, p.block, p.width, &ua, &ub);
  cuconv_pixelate_span (p.by0 + t / n_bx, p.sy, p.y0, p.block, p.height, &va, &vb);
  if (ua >= ub || va >= vb)
    return;
  for (int v = va; v < vb; v++) {
    const uint8_t *row = p.src + (size_t) v * p.src_pitch;

    for (int u = ua; u < ub; u++)
      for (int c = 0; c < p.nc; c++)
        sum[c] += load_word (row, u * p.nc + c, p.bytes) >> p.shift & p.mask;
  }
  write_block (p, sum, ua, ub, va, (ub - ua) * (vb - va), 0, 1);
}

/* Larger blocks: a thread block a block, its threads' sums added in
 * shared memory. */
__global__ void
__launch_bounds__ (PIXELATE_THREADS)
pixelate_blocks (const __grid_constant__ PixelateParams p)
{
  __shared__ unsigned long long sum[CUCONV_MAX_COMP];
  const long long bx = p.bx0 + blockIdx.x;
  int ua, ub;

  cuconv_pixelate_span (bx, p.sx, p.x0, p.block, p.width, &ua, &ub);
  for (long long by = p.by0 + blockIdx.y; by <= p.by1; by += gridDim.y) {
    unsigned long long local[CUCONV_MAX_COMP] = { 0, 0, 0, 0 };
    int va, vb, bw, n;

    cuconv_pixelate_span (by, p.sy, p.y0, p.block, p.height, &va, &vb);
    if (ua >= ub || va >= vb)
      continue;
    bw = ub - ua;
    n = bw * (vb - va);
    if (threadIdx.x < CUCONV_MAX_COMP)
      sum[threadIdx.x] = 0;
    __syncthreads ();
    for (int k = threadIdx.x; k < n; k += PIXELATE_THREADS) {
      const uint8_t *row = p.src + (size_t) (va + k / bw) * p.src_pitch;
      const int u = ua + k % bw;

      for (int c = 0; c < p.nc; c++)
        local[c] += load_word (row, u * p.nc + c, p.bytes) >> p.shift &
            p.mask;
    }
    for (int c = 0; c < p.nc; c++)
      atomicAdd (&sum[c], local[c]);
    __syncthreads ();
    write_block (p, sum, ua, ub, va, n, threadIdx.x, PIXELATE_THREADS);
    /* the sums are read before the next row of blocks clears them */
    __syncthreads ();
  }
}

cudaError_t
launch_pixelate (const CuconvPlane & pl, const CuconvFilter & f,
    cudaStream_t stream)
{
  const int bytes = cuconv_plane_sample_bytes (&pl);
  PixelateParams p;
  long long bx1, n_by;

  if (pl.width <= 0 || pl.height <= 0)
    return cudaSuccess;
  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || f.block < 1)
    return cudaErrorInvalidValue;
  band_params_init (p, pl, 0, pl.height);
  p.nc = pl.n_comp;
  p.bytes = bytes;
  p.shift = bytes == 1 ? 0 : pl.shift;
  p.mask = (1u << (pl.depth > 8 ? pl.depth : 8)) - 1;
  p.fill = pl.fill << p.shift;
  memcpy (p.op, pl.op, sizeof (p.op));
  p.sx = pl.sub_x > 1 ? pl.sub_x : 1;
  p.sy = pl.sub_y > 1 ? pl.sub_y : 1;
  p.block = f.block;
  p.x0 = f.block_x0[p.sx - 1];
  p.y0 = f.block_y0[p.sy - 1];
  p.bx0 = cuconv_pixelate_block_of (0, p.sx, p.x0, f.block);
  bx1 = cuconv_pixelate_block_of (pl.width - 1, p.sx, p.x0, f.block);
  p.by0 = cuconv_pixelate_block_of (0, p.sy, p.y0, f.block);
  p.by1 = cuconv_pixelate_block_of (pl.height - 1, p.sy, p.y0, f.block);
  n_by = p.by1 - p.by0 + 1;

  /* a block's samples on this plane, at most */
  const long long most = (long long) ((f.block + p.sx - 1) / p.sx + 1) *
      ((f.block + p.sy - 1) / p.sy + 1);
  if (most <= SMALL_BLOCK_SAMPLES) {
    const long long n_bx = bx1 - p.bx0 + 1, n = n_bx * n_by;

    pixelate_small <<< (unsigned) ((n + PIXELATE_THREADS - 1) /
            PIXELATE_THREADS), PIXELATE_THREADS, 0, stream >>> (p, n_bx, n);
  } else {
    const dim3 grid ((unsigned) (bx1 - p.bx0 + 1),
        (unsigned) (n_by < PIXELATE_MAX_GRID_Y ? n_by : PIXELATE_MAX_GRID_Y));

    pixelate_blocks <<< grid, PIXELATE_THREADS, 0, stream >>> (p);
  }
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
