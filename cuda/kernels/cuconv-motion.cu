/* gst-cudaconvolve: the compensated temporal denoise on the GPU
 * (docs/semantics.md, "Motion compensation"): the guide's two pyramids,
 * each level's vectors from the top down, then every plane blended with
 * the previous output where its vectors point.  Every step calls the
 * definition's own functions (cuconv-motion.h), so that the CPU and the
 * GPU agree to the bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-motion.h"
#include "cuconv-motion.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

#define MO_TX 32
#define MO_TY 8

/* Level 0 of both pyramids: the guide's 8-bit levels of the input and of
 * the previous output. */
struct GuideParams
{
  const uint8_t *in;
  const uint8_t *prev;
  ptrdiff_t in_pitch;
  ptrdiff_t prev_pitch;
  uint8_t *a;
  uint8_t *b;
  int w;
  int h;
  int n_comp;
  int comp;
  int depth;
  int shift;
};

__global__ void
guide_kernel (const GuideParams p)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = x * p.n_comp + p.comp;

  if (x >= p.w || y >= p.h)
    return;
  p.a[(size_t) y * p.w + x] = cuconv_motion_guide (p.in + y * p.in_pitch, k,
      p.depth, p.shift);
  p.b[(size_t) y * p.w + x] = cuconv_motion_guide (p.prev +
      y * p.prev_pitch, k, p.depth, p.shift);
}

/* The next level of both pyramids (blockIdx.z: a, b). */
__global__ void
down_kernel (const uint8_t * a, const uint8_t * b, int w, int h,
    uint8_t * da, uint8_t * db)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int dw = (w + 1) / 2, dh = (h + 1) / 2;

  if (x >= dw || y >= dh)
    return;
  if (blockIdx.z == 0)
    da[(size_t) y * dw + x] = cuconv_motion_down (a, w, h, w, x, y);
  else
    db[(size_t) y * dw + x] = cuconv_motion_down (b, w, h, w, x, y);
}

/* The vectors of a level below the top, a thread a block, from the
 * parent level's; level 0's in fractions of a sample. */
__global__ void
search_kernel (const CuconvMotionLevel lv, CuconvMotionVector * field,
    const CuconvMotionVector * parent, int pbx, int level0)
{
  const int bx = blockIdx.x * blockDim.x + threadIdx.x;
  const int by = blockIdx.y * blockDim.y + threadIdx.y;
  const int nbx = cuconv_motion_blocks (lv.w);
  CuconvMotionVector v;

  if (bx >= nbx || by >= cuconv_motion_blocks (lv.h))
    return;
  v = cuconv_motion_best (&lv, bx, by, 0,
      parent[(size_t) (by / 2) * pbx + bx / 2]);
  field[(size_t) by * nbx + bx] = level0 ?
      cuconv_motion_best_subpel (&lv, bx, by, v) : v;
}

/* The top level's vectors, a warp a block (cuconv-motion.cuh). */
__global__ void
search_top_kernel (const CuconvMotionLevel lv, CuconvMotionVector * field)
{
  const int lane = threadIdx.x % 32;
  const int b = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int nbx = cuconv_motion_blocks (lv.w);

  if (b >= nbx * cuconv_motion_blocks (lv.h))
    return;                     /* the whole warp */
  MotionPick best = motion_top_lane (&lv, b % nbx, b / nbx, lane);

  for (int o = 16; o > 0; o /= 2) {
    const MotionPick other = {
      __shfl_xor_sync (0xffffffffu, best.cost, o),
      __shfl_xor_sync (0xffffffffu, best.candidate, o)
    };
    best = motion_pick (best, other);
  }
  if (lane == 0)
    field[b] = motion_top_vector (best);
}

/* One plane: the input (src) blended into the new state (dst) with the
 * previous output where each pixel's vector points. */
struct CompensateParams
{
  const uint8_t *src;
  uint8_t *dst;
  ptrdiff_t src_pitch;
  ptrdiff_t dst_pitch;
  CuconvMotionPrev prev;
  const CuconvMotionVector *field;
  int nbx;
  int sub_x;
  int sub_y;
  int first;
  uint8_t filter[CUCONV_MAX_COMP];
  uint8_t k[CUCONV_TEMPORAL_LUT];
};

__global__ void
compensate_kernel (const __grid_constant__ CompensateParams p)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int depth = p.prev.depth, shift = p.prev.shift;
  const unsigned mask = (1u << depth) - 1;
  const uint8_t *in = p.src + y * p.src_pitch;
  uint8_t *st = p.dst + y * p.dst_pitch;
  CuconvMotionVector v = { 0, 0 };

  if (x >= p.prev.w || y >= p.prev.h)
    return;
  if (!p.first)
    v = cuconv_motion_at (p.field, p.nbx, x, y, p.sub_x, p.sub_y);
  for (int c = 0; c < p.prev.n_comp; c++) {
    const int i = x * p.prev.n_comp + c;
    unsigned w = cuconv_motion_word (in, i, depth);

    if (!p.first && p.filter[c])
      w = cuconv_temporal_blend ((int) ((w >> shift) & mask),
          (int) cuconv_motion_fetch (&p.prev, x, y, c, v), p.k,
          depth - 8) << shift;
    store_word (st, i, depth <= 8 ? 1 : 2, w);
  }
}

static dim3
grid_for (int w, int h, int z = 1)
{
  return dim3 ((unsigned) ((w + MO_TX - 1) / MO_TX),
      (unsigned) ((h + MO_TY - 1) / MO_TY), (unsigned) z);
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" int
cuconv_temporal_compensated_device (const CuconvPlane * planes,
    int n_planes, const uint8_t * const *prev, const ptrdiff_t * prev_stride,
    int guide, void *scratch, const uint8_t * k, int first, void *stream,
    CuconvStatus * st)
{
  const cudaStream_t s = (cudaStream_t) stream;
  const dim3 threads (MO_TX, MO_TY);
  const CuconvPlane & g = planes[0];
  uint8_t *sc = (uint8_t *) scratch;
  CuconvMotionLayout l;
  cudaError_t e;

  for (int i = 0; i < n_planes; i++)
    if (planes[i].n_comp < 1 || planes[i].n_comp > CUCONV_MAX_COMP ||
        planes[i].depth > 16)
      return fail (st, "the GPU cannot denoise this plane",
          cudaErrorInvalidValue);
  if (n_planes < 1 || guide < 0 || guide >= g.n_comp || g.sub_x != 1 ||
      g.sub_y != 1)
    return fail (st, "the motion has no guide in the first plane",
        cudaErrorInvalidValue);

  cuconv_motion_layout (g.width, g.height, &l);
  if (!first && g.width > 0 && g.height > 0) {
    GuideParams gp = { g.src, prev[0], g.src_stride, prev_stride[0],
      sc + l.a[0], sc + l.b[0], g.width, g.height, g.n_comp, guide,
      g.depth > 8 ? g.depth : 8, g.depth > 8 ? g.shift : 0
    };

    guide_kernel <<< grid_for (g.width, g.height), threads, 0, s >>> (gp);
    for (int i = 1; i < CUCONV_MOTION_LEVELS; i++) {
      const int w = cuconv_motion_level_size (g.width, i - 1);
      const int h = cuconv_motion_level_size (g.height, i - 1);

      down_kernel <<< grid_for ((w + 1) / 2, (h + 1) / 2, 2), threads, 0,
          s >>> (sc + l.a[i - 1], sc + l.b[i - 1], w, h, sc + l.a[i],
          sc + l.b[i]);
    }
    for (int i = CUCONV_MOTION_LEVELS - 1; i >= 0; i--) {
      const int w = cuconv_motion_level_size (g.width, i);
      const int h = cuconv_motion_level_size (g.height, i);
      const CuconvMotionLevel lv = { sc + l.a[i], sc + l.b[i], w, h, w };
      const int top = i == CUCONV_MOTION_LEVELS - 1;

      CuconvMotionVector *field = (CuconvMotionVector *) (sc + l.field[i]);

      if (top) {
        const int n = cuconv_motion_blocks (w) * cuconv_motion_blocks (h);

        /* a warp a block, 4 warps a thread block */
        search_top_kernel <<< (n + 3) / 4, 128, 0, s >>> (lv, field);
        continue;
      }
      /* about 128 registers a thread: small blocks, several an SM */
      search_kernel <<< dim3 ((cuconv_motion_blocks (w) + 15) / 16,
          (cuconv_motion_blocks (h) + 3) / 4), dim3 (16, 4), 0, s >>> (lv,
          field, (const CuconvMotionVector *) (sc + l.field[i + 1]),
          cuconv_motion_blocks (cuconv_motion_level_size (g.width, i + 1)),
          i == 0);
    }
  }

  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    CompensateParams cp;

    if (pl.width <= 0 || pl.height <= 0)
      continue;
    memset (&cp, 0, sizeof (cp));
    cp.src = pl.src;
    cp.dst = pl.dst;
    cp.src_pitch = pl.src_stride;
    cp.dst_pitch = pl.dst_stride;
    cp.prev.data = prev[i];
    cp.prev.stride = prev_stride[i];
    cp.prev.w = pl.width;
    cp.prev.h = pl.height;
    cp.prev.n_comp = pl.n_comp;
    cp.prev.depth = pl.depth > 8 ? pl.depth : 8;
    cp.prev.shift = pl.depth > 8 ? pl.shift : 0;
    cp.field = (const CuconvMotionVector *) (sc + l.field[0]);
    cp.nbx = cuconv_motion_blocks (g.width);
    cp.sub_x = pl.sub_x;
    cp.sub_y = pl.sub_y;
    cp.first = first;
    for (int c = 0; c < pl.n_comp; c++)
      cp.filter[c] = pl.op[c] == CUCONV_COMP_FILTER;
    memcpy (cp.k, k, CUCONV_TEMPORAL_LUT);
    compensate_kernel <<< grid_for (pl.width, pl.height), threads, 0,
        s >>> (cp);
  }
  e = cudaGetLastError ();
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to denoise a frame",
      e);
}
