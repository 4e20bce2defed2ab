/* gst-cudaconvolve: the tiled separable convolution with boundary
 * classification (docs/design.md).
 *
 * One fused pass per plane.  A block owns a TILE_W x TILE_H tile of output
 * bytes.  It stages the tile plus its apron in shared memory once (16-byte
 * loads), filters every staged row horizontally into a float buffer, then
 * filters columns from that buffer, each thread producing a 4-wide strip of
 * rows.  Each input byte is read from device memory once per tile and each
 * output byte written once.
 *
 * Interior tiles, whose reads and writes all lie inside the plane, stage
 * with plain vector loads and store without guards.  Only the ring of border
 * tiles maps coordinates through the border mode (a template parameter,
 * chosen once per block) and guards its writes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "ccv-kernels.cuh"

namespace ccv {

constexpr int TILE_W = 128;     /* output bytes per tile row */
constexpr int THREADS = 256;
constexpr int COL_GROUPS = TILE_W / 4;  /* vertical pass: 4 bytes a thread */
constexpr int ROW_GROUPS = THREADS / COL_GROUPS;
constexpr int H_CHUNK = 16;     /* horizontal pass: 16 outputs a thread */

__host__ __device__ constexpr int
round_up16 (int v)
{
  return (v + 15) & ~15;
}

/* Shared memory of one block: staged input bytes, then horizontally
 * filtered rows as floats. */
struct TileGeom
{
  int apron;                    /* bytes left and right of the tile, 16-aligned */
  int in_pitch;                 /* TILE_W + 2 * apron */
  int rows;                     /* tile_h + 2 * ry */
  __host__ __device__ TileGeom (int rx, int ry, int nc, int tile_h)
  : apron (round_up16 (rx * nc)), in_pitch (TILE_W + 2 * round_up16 (rx * nc)),
      rows (tile_h + 2 * ry)
  {
  }
  __host__ __device__ size_t in_bytes () const
  {
    return (size_t) rows * in_pitch;
  }
  __host__ __device__ size_t smem_bytes () const
  {
    return in_bytes () + (size_t) rows * TILE_W * sizeof (float);
  }
};

/* Byte (x, y) of an interleaved plane with nc components, through the
 * border mode: components are mapped on their own. */
template < CcvBorder B > __device__ __forceinline__ uint8_t
load_border (const SepParams & p, int xb, int y)
{
  int yi = ccv_border_index (B, y, p.height);
  int px = xb >= 0 ? xb / p.nc : -((-xb + p.nc - 1) / p.nc);
  int comp = xb - px * p.nc;
  int xi = ccv_border_index (B, px, p.width);
  if (xi < 0 || yi < 0)
    return 0;
  return p.src[(size_t) yi * p.src_pitch + xi * p.nc + comp];
}

template < CcvBorder B > __device__ void
stage_border (const SepParams & p, const TileGeom & g, uint8_t * in,
    int x0, int y0)
{
  const int n = g.rows * g.in_pitch;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    int r = i / g.in_pitch, c = i - r * g.in_pitch;
    in[i] = load_border < B > (p, x0 - g.apron + c, y0 - p.ry + r);
  }
}

/* Interior: every byte of the staged rectangle is inside the allocation
 * (see is_interior), and both ends are 16-byte aligned. */
__device__ void
stage_interior (const SepParams & p, const TileGeom & g, uint8_t * in,
    int x0, int y0)
{
  const int vpr = g.in_pitch / 16;
  const int n = g.rows * vpr;
  const uint8_t *base = p.src + (size_t) (y0 - p.ry) * p.src_pitch
      + (x0 - g.apron);
  for (int i = threadIdx.x; i < n; i += THREADS) {
    int r = i / vpr, v = i - r * vpr;
    uint4 d = __ldg ((const uint4 *) (base + (size_t) r * p.src_pitch) + v);
    *((uint4 *) (in + r * g.in_pitch) + v) = d;
  }
}

__device__ __forceinline__ float
u8_to_f (uint32_t word, int byte)
{
  /* 0x4B0000xx is 2^23 + xx as a float: two integer ops, no I2F */
  return __uint_as_float (__byte_perm (word, 0x4B000000u,
          0x7440u | byte)) - 8388608.0f;
}

/* Horizontal pass, radius known at compile time: 16 outputs a thread from
 * 16-byte shared loads, taps as immediate constant-bank operands. */
template < int R, int NC > __device__ void
hpass_fixed (const SepParams & p, const TileGeom & g, const uint8_t * in,
    float *hbuf)
{
  constexpr int A = round_up16 (R * NC);
  constexpr int NV = (H_CHUNK + 2 * A) / 16;    /* uint4 loads */
  constexpr int CHUNKS = TILE_W / H_CHUNK;
  const int items = g.rows * CHUNKS;

  for (int it = threadIdx.x; it < items; it += THREADS) {
    const int r = it / CHUNKS, k = it - r * CHUNKS;
    const uint4 *src = (const uint4 *) (in + r * g.in_pitch + k * H_CHUNK);
    uint32_t w[NV * 4];
    float f[H_CHUNK + 2 * R * NC];
    float acc[H_CHUNK];

#pragma unroll
    for (int v = 0; v < NV; v++) {
      uint4 d = src[v];
      w[4 * v] = d.x;
      w[4 * v + 1] = d.y;
      w[4 * v + 2] = d.z;
      w[4 * v + 3] = d.w;
    }
#pragma unroll
    for (int j = 0; j < H_CHUNK + 2 * R * NC; j++) {
      const int b = A - R * NC + j;
      f[j] = u8_to_f (w[b / 4], b % 4);
    }
#pragma unroll
    for (int j = 0; j < H_CHUNK; j++) {
      float a = 0.0f;
#pragma unroll
      for (int i = -R; i <= R; i++)
        a = fmaf (p.kx[i + R], f[j + (i + R) * NC], a);
      acc[j] = a;
    }
    float4 *dst = (float4 *) (hbuf + r * TILE_W + k * H_CHUNK);
#pragma unroll
    for (int q = 0; q < H_CHUNK / 4; q++)
      dst[q] = make_float4 (acc[4 * q], acc[4 * q + 1], acc[4 * q + 2],
          acc[4 * q + 3]);
  }
}

/* Horizontal pass, any radius: one output at a time. */
__device__ void
hpass_generic (const SepParams & p, const TileGeom & g, const uint8_t * in,
    float *hbuf)
{
  const int n = g.rows * TILE_W;
  const int off = g.apron - p.rx * p.nc;
  for (int i = threadIdx.x; i < n; i += THREADS) {
    int r = i / TILE_W, c = i - r * TILE_W;
    const uint8_t *s = in + r * g.in_pitch + off + c;
    float a = 0.0f;
    for (int t = 0; t <= 2 * p.rx; t++)
      a = fmaf (p.kx[t], (float) s[t * p.nc], a);
    hbuf[i] = a;
  }
}

__device__ __forceinline__ uint32_t
pack4 (float a, float b, float c, float d)
{
  return (uint32_t) ccv_round_sat_u8 (a) | (uint32_t) ccv_round_sat_u8 (b) << 8
      | (uint32_t) ccv_round_sat_u8 (c) << 16 | (uint32_t) ccv_round_sat_u8 (d)
      << 24;
}

/* Vertical pass: each thread filters 4 adjacent columns over RPT rows,
 * holding the float4 rows it needs in a register window.  When GUARD, the
 * tile may stick out of the plane (or the band being processed). */
template < int RY, int RPT, bool GUARD > __device__ void
vpass_fixed (const SepParams & p, const float *hbuf, int x0, int y0)
{
  const int cg = threadIdx.x % COL_GROUPS, rg = threadIdx.x / COL_GROUPS;
  const int row0 = rg * RPT;
  const float4 *h = (const float4 *) hbuf + cg;
  float4 acc[RPT];

#pragma unroll
  for (int o = 0; o < RPT; o++)
    acc[o] = make_float4 (0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < RPT + 2 * RY; j++) {
    float4 v = h[(row0 + j) * COL_GROUPS];
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

  const int x = x0 + cg * 4;
#pragma unroll
  for (int o = 0; o < RPT; o++) {
    const int y = y0 + row0 + o;
    uint8_t *d = p.dst + (size_t) y * p.dst_pitch + x;
    const uint32_t v = pack4 (acc[o].x, acc[o].y, acc[o].z, acc[o].w);
    if (!GUARD) {
      *(uint32_t *) d = v;
    } else if (y < p.row_end) {
      if (x + 3 < p.wb && p.dst_aligned4)
        *(uint32_t *) d = v;
      else
        for (int b = 0; b < 4 && x + b < p.wb; b++)
          d[b] = (uint8_t) (v >> (8 * b));
    }
  }
}

/* Vertical pass, any radius: one output row at a time. */
__device__ void
vpass_generic (const SepParams & p, const float *hbuf, int x0, int y0,
    int tile_h)
{
  const int cg = threadIdx.x % COL_GROUPS;
  const float4 *h = (const float4 *) hbuf + cg;
  const int x = x0 + cg * 4;
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
    const int y = y0 + o;
    if (y < p.row_end) {
      uint8_t *d = p.dst + (size_t) y * p.dst_pitch + x;
      const uint32_t v = pack4 (a.x, a.y, a.z, a.w);
      for (int b = 0; b < 4 && x + b < p.wb; b++)
        d[b] = (uint8_t) (v >> (8 * b));
    }
  }
}

/* A tile is interior when everything it stages lies inside the plane's rows
 * [0, height) and bytes [0, wb), and all it writes lies inside the band.
 * Needs a 16-byte aligned source (p.src_aligned16). */
__device__ __forceinline__ bool
is_interior (const SepParams & p, const TileGeom & g, int x0, int y0,
    int tile_h)
{
  return p.src_aligned16 && x0 - p.rx * p.nc >= 0
      && x0 + TILE_W + p.rx * p.nc <= p.wb && y0 - p.ry >= 0
      && y0 + tile_h + p.ry <= p.height && y0 + tile_h <= p.row_end
      && p.dst_aligned4;
}

__device__ __forceinline__ void
tile_origin (const SepParams & p, int tile_h, int *x0, int *y0)
{
  *x0 = blockIdx.x * TILE_W;
  *y0 = p.row_begin + blockIdx.y * tile_h;
}

template < CcvBorder B > __device__ void
stage (const SepParams & p, const TileGeom & g, uint8_t * in, int x0, int y0,
    bool interior)
{
  if (interior)
    stage_interior (p, g, in, x0, y0);
  else
    stage_border < B > (p, g, in, x0, y0);
}

template < int R, int NC, CcvBorder B > __global__ void
__launch_bounds__ (THREADS)
sep_fixed (const __grid_constant__ SepParams p)
{
  constexpr int TILE_H = ROW_GROUPS * FIXED_RPT;
  extern __shared__ uint4 smem[];
  const TileGeom g (R, R, NC, TILE_H);
  uint8_t *in = (uint8_t *) smem;
  float *hbuf = (float *) ((uint8_t *) smem + g.in_bytes ());
  int x0, y0;

  tile_origin (p, TILE_H, &x0, &y0);
  const bool interior = is_interior (p, g, x0, y0, TILE_H);
  stage < B > (p, g, in, x0, y0, interior);
  __syncthreads ();
  hpass_fixed < R, NC > (p, g, in, hbuf);
  __syncthreads ();
  if (interior)
    vpass_fixed < R, FIXED_RPT, false > (p, hbuf, x0, y0);
  else
    vpass_fixed < R, FIXED_RPT, true > (p, hbuf, x0, y0);
}

template < CcvBorder B > __global__ void
__launch_bounds__ (THREADS)
sep_generic (const __grid_constant__ SepParams p, int tile_h)
{
  extern __shared__ uint4 smem[];
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  uint8_t *in = (uint8_t *) smem;
  float *hbuf = (float *) ((uint8_t *) smem + g.in_bytes ());
  int x0, y0;

  tile_origin (p, tile_h, &x0, &y0);
  stage < B > (p, g, in, x0, y0, is_interior (p, g, x0, y0, tile_h));
  __syncthreads ();
  hpass_generic (p, g, in, hbuf);
  __syncthreads ();
  vpass_generic (p, hbuf, x0, y0, tile_h);
}

/* Host side ------------------------------------------------------------ */

typedef void (*FixedKernel) (SepParams);

template < int R, int NC > static FixedKernel
pick_border (CcvBorder b)
{
  switch (b) {
    case CCV_BORDER_MIRROR:
      return sep_fixed < R, NC, CCV_BORDER_MIRROR >;
    case CCV_BORDER_WRAP:
      return sep_fixed < R, NC, CCV_BORDER_WRAP >;
    case CCV_BORDER_ZERO:
      return sep_fixed < R, NC, CCV_BORDER_ZERO >;
    case CCV_BORDER_CLAMP:
    default:
      return sep_fixed < R, NC, CCV_BORDER_CLAMP >;
  }
}

template < int NC > static FixedKernel
pick_fixed (int r, CcvBorder b)
{
  switch (r) {
#define CCV_FIXED_CASE(R) case R: return pick_border < R, NC > (b);
      CCV_FIXED_RADII (CCV_FIXED_CASE)
#undef CCV_FIXED_CASE
    default:
      return NULL;
  }
}

static cudaError_t
launch_fixed (FixedKernel k, const SepParams & p, cudaStream_t stream)
{
  constexpr int tile_h = ROW_GROUPS * FIXED_RPT;
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  const size_t smem = g.smem_bytes ();
  cudaError_t err;

  err = cudaFuncSetAttribute ((const void *) k,
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
  if (err != cudaSuccess)
    return err;
  dim3 grid ((p.wb + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);
  k <<< grid, THREADS, smem, stream >>> (p);
  return cudaGetLastError ();
}

static cudaError_t
launch_generic (const SepParams & p, cudaStream_t stream)
{
  void (*k) (SepParams, int);
  int dev, max_smem, tile_h;
  cudaError_t err;

  switch (p.border) {
    case CCV_BORDER_MIRROR:
      k = sep_generic < CCV_BORDER_MIRROR >;
      break;
    case CCV_BORDER_WRAP:
      k = sep_generic < CCV_BORDER_WRAP >;
      break;
    case CCV_BORDER_ZERO:
      k = sep_generic < CCV_BORDER_ZERO >;
      break;
    default:
      k = sep_generic < CCV_BORDER_CLAMP >;
      break;
  }
  if ((err = cudaGetDevice (&dev)) != cudaSuccess ||
      (err = cudaDeviceGetAttribute (&max_smem,
              cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess)
    return err;
  /* the tallest tile (multiple of ROW_GROUPS) whose buffers fit */
  for (tile_h = 8 * ROW_GROUPS; tile_h > ROW_GROUPS; tile_h /= 2)
    if (TileGeom (p.rx, p.ry, p.nc, tile_h).smem_bytes () <= (size_t) max_smem)
      break;
  const size_t smem = TileGeom (p.rx, p.ry, p.nc, tile_h).smem_bytes ();
  if (smem > (size_t) max_smem)
    return cudaErrorInvalidConfiguration;
  err = cudaFuncSetAttribute ((const void *) k,
      cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
  if (err != cudaSuccess)
    return err;
  dim3 grid ((p.wb + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);
  k <<< grid, THREADS, smem, stream >>> (p, tile_h);
  return cudaGetLastError ();
}

int
separable_tile_rows (void)
{
  return ROW_GROUPS * FIXED_RPT;
}

cudaError_t
launch_separable (const SepParams & p, cudaStream_t stream)
{
  FixedKernel k = NULL;

  if (p.rx == p.ry && p.nc == 1)
    k = pick_fixed < 1 > (p.rx, (CcvBorder) p.border);
  else if (p.rx == p.ry && p.nc == 2)
    k = pick_fixed < 2 > (p.rx, (CcvBorder) p.border);
  if (k)
    return launch_fixed (k, p, stream);
  return launch_generic (p, stream);
}

}                               /* namespace ccv */
