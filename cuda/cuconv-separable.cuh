/* gst-cudaconvolve: the tiles of the tuned separable convolution with
 * boundary classification (docs/design.md), shared by its kernels
 * (cuconv-separable.cu) and the one launch of a 4:2:0 frame
 * (cuconv-frame420.cu).
 *
 * One fused pass per plane.  A block owns a TILE_W x TILE_H tile of output
 * bytes.  It filters the tile's rows plus the vertical apron horizontally
 * into a float buffer in shared memory (16 outputs a thread, from 16-byte
 * loads), then filters columns from that buffer (a 4-wide strip of rows a
 * thread, each buffered row read once and used for every output it feeds).
 * Each input byte comes from device memory once per tile and each output
 * byte is written once.
 *
 * Interior tiles, whose reads and writes all lie inside the plane, load
 * and store with no checks at all.  Only the ring of border tiles maps
 * coordinates through the border mode (a run-time value, resolved once
 * per tile into tables) and guards its writes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_SEPARABLE_CUH__
#define __CUCONV_SEPARABLE_CUH__

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int COL_GROUPS = TILE_W / 4;  /* vertical pass: 4 bytes a thread */
constexpr int ROW_GROUPS = THREADS / COL_GROUPS;
constexpr int H_CHUNK = 16;     /* horizontal pass: outputs a thread */
constexpr int CHUNKS = TILE_W / H_CHUNK;

/* Shared memory: the horizontally filtered rows (floats), then the border
 * tables. */
__host__ __device__ constexpr size_t
sep_smem_bytes (const TileGeom & g)
{
  return (size_t) g.rows * TILE_W * sizeof (float) + g.maps_bytes ();
}

/* The float4 columns of a row of the float buffer are permuted so that the
 * horizontal pass's stores, 64 bytes apart, fall in distinct banks; the
 * vertical pass reads whole rows, which any permutation keeps conflict
 * free. */
__device__ __forceinline__ int
swizzle4 (int c4)
{
  return c4 ^ ((c4 >> 2) & 7);
}

/* Horizontal pass, radius known at compile time: a thread filters 16
 * adjacent outputs of a row from 16 + 2 * R * NC inputs held in registers,
 * taps as immediate constant-bank operands.  Interior tiles read the
 * inputs with 16-byte loads straight from device memory (neighbouring
 * threads share them through L1); border tiles gather them through the
 * tables. */
template < int R, int NC, bool BORDER > __device__ void
hpass_fixed (const SepParams & p, const TileGeom & g, const int *colmap,
    const int *rowmap, float *hbuf, int x0, int y0)
{
  constexpr int A = round_up16 (R * NC);
  constexpr int NV = (H_CHUNK + 2 * A) / 16;
  constexpr int NF = H_CHUNK + 2 * R * NC;
  const int items = g.rows * CHUNKS;

  for (int it = threadIdx.x; it < items; it += THREADS) {
    const int r = it / CHUNKS, k = it - r * CHUNKS;
    float f[NF];

    if (!BORDER) {
      const uint4 *src = (const uint4 *) (p.src
          + (size_t) (y0 - R + r) * p.src_pitch + x0 - A) + k;
      uint32_t w[NV * 4];
#pragma unroll
      for (int v = 0; v < NV; v++) {
        const uint4 d = __ldg (src + v);
        w[4 * v] = d.x;
        w[4 * v + 1] = d.y;
        w[4 * v + 2] = d.z;
        w[4 * v + 3] = d.w;
      }
#pragma unroll
      for (int j = 0; j < NF; j++)
        f[j] = u8_to_f (w[(A - R * NC + j) / 4], (A - R * NC + j) % 4);
    } else {
      const int row = rowmap[r];
#pragma unroll
      for (int j = 0; j < NF; j++)
        f[j] = (float) mapped_byte (p, colmap, row,
            k * H_CHUNK + A - R * NC + j);
    }

    float4 *dst = (float4 *) (hbuf + r * TILE_W);
#pragma unroll
    for (int q = 0; q < H_CHUNK / 4; q++) {
      float a[4];
#pragma unroll
      for (int e = 0; e < 4; e++) {
        a[e] = 0.0f;
#pragma unroll
        for (int i = 0; i <= 2 * R; i++)
          a[e] = fmaf (p.kx[i], f[4 * q + e + i * NC], a[e]);
      }
      dst[swizzle4 (k * 4 + q)] = make_float4 (a[0], a[1], a[2], a[3]);
    }
  }
}

/* Horizontal pass, any radius: a thread filters 4 outputs of one
 * component (x, x + nc, x + 2 nc, x + 3 nc), sliding a window of 4 inputs
 * along the taps, so that each input it reads feeds 4 outputs. */
template < bool BORDER > __device__ void
hpass_generic (const SepParams & p, const TileGeom & g, const int *colmap,
    const int *rowmap, float *hbuf, int x0, int y0)
{
  const int nc = p.nc, n = g.rows * (TILE_W / 4);

  for (int i = threadIdx.x; i < n; i += THREADS) {
    const int r = i / (TILE_W / 4), q = i % (TILE_W / 4);
    const int c0 = (q / nc) * 4 * nc + q % nc;
    /* input j of this thread's stream: byte c0 + (j - rx) * nc of the row */
    const int base = c0 - p.rx * nc;
    /* interior: the row itself; border: through the tables */
    const uint8_t *row = BORDER ? NULL : p.src
        + (size_t) (y0 - p.ry + r) * p.src_pitch + x0 + base;
    const int mrow = BORDER ? rowmap[r] : 0;
    auto in = [&](int j) -> float {
      return BORDER ? (float) mapped_byte (p, colmap, mrow,
          g.apron + base + j * nc) : (float) row[j * nc];
    };
    float f0 = in (0), f1 = in (1), f2 = in (2);
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;

#pragma unroll 4
    for (int t = 0; t <= 2 * p.rx; t++) {
      const float f3 = in (t + 3), k = p.kx[t];
      a0 = fmaf (k, f0, a0);
      a1 = fmaf (k, f1, a1);
      a2 = fmaf (k, f2, a2);
      a3 = fmaf (k, f3, a3);
      f0 = f1;
      f1 = f2;
      f2 = f3;
    }
    float *h = hbuf + r * TILE_W;
    const float a[4] = { a0, a1, a2, a3 };
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int c = c0 + e * nc;
      h[swizzle4 (c / 4) * 4 + c % 4] = a[e];
    }
  }
}

/* The unsharp mask of 4 blurred samples v at (x, y): in + amount *
 * (in - v), clamped to 0..255 so that pack4 rounds it exactly.  The source
 * bytes are read again (from L2: the tile read them a moment ago). */
__device__ __forceinline__ float4
sharpen4 (const SepParams & p, const float4 & v, int x, int y, bool guard)
{
  const uint8_t *s = p.src + (size_t) y * p.src_pitch + x;
  const float a = p.amount;
  uint32_t w = 0;
  float4 r;

  if (!guard && p.src_aligned16) {
    w = *(const uint32_t *) s;
  } else if (y < p.row_end) {
    for (int b = 0; b < 4 && x + b < p.wb; b++)
      w |= (uint32_t) s[b] << (8 * b);
  }
  r.x = u8_to_f (w, 0);
  r.y = u8_to_f (w, 1);
  r.z = u8_to_f (w, 2);
  r.w = u8_to_f (w, 3);
  r.x = fminf (fmaxf (r.x + a * (r.x - v.x), 0.0f), 255.0f);
  r.y = fminf (fmaxf (r.y + a * (r.y - v.y), 0.0f), 255.0f);
  r.z = fminf (fmaxf (r.z + a * (r.z - v.z), 0.0f), 255.0f);
  r.w = fminf (fmaxf (r.w + a * (r.w - v.w), 0.0f), 255.0f);
  return r;
}

/* Vertical pass: each thread filters 4 adjacent columns over RPT rows,
 * reusing each float4 row it reads for every output it contributes to.
 * GUARD: the tile may stick out of the plane or the band.  SHARP: the
 * blur becomes the unsharp mask of the source (kernel=sharpen). */
template < int RY, int RPT, bool GUARD, bool SHARP > __device__ void
vpass_fixed (const SepParams & p, const float *hbuf, int x0, int y0)
{
  const int cg = threadIdx.x % COL_GROUPS, rg = threadIdx.x / COL_GROUPS;
  const int row0 = rg * RPT;
  const float4 *h = (const float4 *) hbuf + swizzle4 (cg);
  float4 acc[RPT];

#pragma unroll
  for (int o = 0; o < RPT; o++)
    acc[o] = make_float4 (0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < RPT + 2 * RY; j++) {
    const float4 v = h[(row0 + j) * COL_GROUPS];
#pragma unroll
    for (int o = 0; o < RPT; o++) {
      const int t = j - o;
      if (t >= 0 && t <= 2 * RY) {
        const float k = p.ky[t];
        acc[o].x = fmaf (k, v.x, acc[o].x);
        acc[o].y = fmaf (k, v.y, acc[o].y);
        acc[o].z = fmaf (k, v.z, acc[o].z);
        acc[o].w = fmaf (k, v.w, acc[o].w);
      }
    }
  }
#pragma unroll
  for (int o = 0; o < RPT; o++) {
    const int x = x0 + cg * 4, y = y0 + row0 + o;

    store4 (p, x, y, pack4 (SHARP ? sharpen4 (p, acc[o], x, y, GUARD) :
            acc[o]), GUARD);
  }
}

/* Vertical pass, any radius: one output row at a time. */
static __device__ void
vpass_generic (const SepParams & p, const float *hbuf, int x0, int y0,
    int tile_h)
{
  const int cg = threadIdx.x % COL_GROUPS;
  const float4 *h = (const float4 *) hbuf + swizzle4 (cg);

  for (int o = threadIdx.x / COL_GROUPS; o < tile_h; o += ROW_GROUPS) {
    float4 a = make_float4 (0.f, 0.f, 0.f, 0.f);
    for (int t = 0; t <= 2 * p.ry; t++) {
      const float4 v = h[(o + t) * COL_GROUPS];
      const float k = p.ky[t];
      a.x = fmaf (k, v.x, a.x);
      a.y = fmaf (k, v.y, a.y);
      a.z = fmaf (k, v.z, a.z);
      a.w = fmaf (k, v.w, a.w);
    }
    store4 (p, x0 + cg * 4, y0 + o, pack4 (a), true);
  }
}

struct TileSmem
{
  float *hbuf;
  int *colmap, *rowmap;
  __device__ TileSmem (void *smem, const TileGeom & g)
  : hbuf ((float *) smem),
      colmap ((int *) smem + g.rows * TILE_W),
      rowmap ((int *) smem + g.rows * TILE_W + g.span)
  {
  }
};

/* Output rows per thread of the vertical pass: short tiles, and a register
 * cap that keeps 5 blocks resident, suit small radii (measured on an H200:
 * 4K r = 1 in 12.6 us against 13.7 us with 8 rows); tall tiles cut the
 * apron of large ones, whose unrolled taps need the registers. */
__host__ __device__ constexpr int
fixed_rpt (int r)
{
  return r <= 4 ? 4 : 8;
}

__host__ __device__ constexpr int
fixed_min_blocks (int r)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  return r <= 4 ? 4 : 1;        /* Turing: 1024 threads an SM */
#else
  return r <= 4 ? 5 : 1;
#endif
}

/* One tile (bx, by) of plane p with the unrolled radius R. */
template < int R, int NC, bool SHARP = false >
    __device__ __forceinline__ void
tile_fixed (const SepParams & p, int bx, int by)
{
  constexpr int RPT = fixed_rpt (R);
  constexpr int TILE_H = ROW_GROUPS * RPT;
  constexpr TileGeom g (R, R, NC, TILE_H);
  extern __shared__ uint4 smem[];
  const TileSmem sm (smem, g);
  const int x0 = bx * TILE_W;
  const int y0 = p.row_begin + by * TILE_H;

  if (is_interior (p, x0, y0, TILE_H)) {
    hpass_fixed < R, NC, false > (p, g, sm.colmap, sm.rowmap, sm.hbuf, x0,
        y0);
    __syncthreads ();
    vpass_fixed < R, RPT, false, SHARP > (p, sm.hbuf, x0, y0);
  } else {
    build_maps (p, g, sm.colmap, sm.rowmap, x0, y0);
    __syncthreads ();
    hpass_fixed < R, NC, true > (p, g, sm.colmap, sm.rowmap, sm.hbuf, x0,
        y0);
    __syncthreads ();
    vpass_fixed < R, RPT, true, SHARP > (p, sm.hbuf, x0, y0);
  }
}

}                               /* namespace cuconv */

#endif /* __CUCONV_SEPARABLE_CUH__ */
