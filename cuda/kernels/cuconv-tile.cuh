/* gst-cudaconvolve: the tile toolkit every kernel family uses (CUDA C++,
 * internal): the interior test, the border tables a border tile builds
 * once, sample conversion, rounding, fitting a tile into the device's
 * shared memory and launching with dynamic shared memory.
 *
 * The border mode is a run-time value (SepParams.border, ...): it is read
 * only where a border tile builds its tables, through the one definition
 * of the modes in cuconv-border.h.  Interior tiles never see it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_TILE_CUH__
#define __CUCONV_TILE_CUH__

#include <atomic>
#include <utility>

#include "cuconv-kernels.cuh"
#include "cuconv-border.h"

namespace cuconv {

constexpr int TILE_W = 128;     /* output samples a tile row (tuned paths) */
constexpr int THREADS = 256;

__host__ __device__ constexpr int
round_up16 (int v)
{
  return (v + 15) & ~15;
}

/* The input a tuned tile reads: its rows plus the vertical apron, its
 * samples plus the horizontal apron rounded up to 16 bytes on each side.
 * sb: bytes a sample (1, or 2 for 16-bit words); all in samples. */
struct TileGeom
{
  int apron;                    /* samples read left and right: 16 bytes' worth */
  int span;                     /* TILE_W + 2 * apron */
  int rows;                     /* tile_h + 2 * ry */
  __host__ __device__ constexpr TileGeom (int rx, int ry, int nc, int tile_h,
      int sb = 1)
  : apron (round_up16 (rx * nc * sb) / sb),
      span (TILE_W + 2 * (round_up16 (rx * nc * sb) / sb)),
      rows (tile_h + 2 * ry)
  {
  }
  /* the border tables: one int a column, one a row */
  __host__ __device__ constexpr size_t maps_bytes () const
  {
    return (size_t) (span + rows) * sizeof (int);
  }
};

/* Interior test --------------------------------------------------------- */

/* A tile is interior when everything it reads lies inside the plane and
 * everything it writes inside the band: the columns [x_first, x_end) of a
 * row of row_len columns, the rows [y0 - ry, y0 + tile_h + ry) of height,
 * the output rows below row_end, and its pointers aligned for the wide
 * loads and stores (`aligned`).  Such a tile loads and stores with no
 * checks at all. */
__device__ __forceinline__ bool
tile_is_interior (bool aligned, int x_first, int x_end, int row_len, int y0,
    int tile_h, int ry, int height, int row_end)
{
  return aligned && x_first >= 0 && x_end <= row_len && y0 - ry >= 0
      && y0 + tile_h + ry <= height && y0 + tile_h <= row_end;
}

/* The tuned tiles: their 16-byte loads stay inside the allocation, since
 * the apron is rounded up to 16 bytes, which the pitch is a multiple of. */
__device__ __forceinline__ bool
is_interior (const SepParams & p, int x0, int y0, int tile_h)
{
  return tile_is_interior (p.src_aligned16 && p.dst_aligned,
      x0 - p.rx * p.nc, x0 + TILE_W + p.rx * p.nc, p.ws, y0, tile_h, p.ry,
      p.height, p.row_end);
}

/* Border tables --------------------------------------------------------- */

/* Where sample s of a row of `width` pixels of nc interleaved components
 * reads, for any s (outside the row too: each component is mapped on its
 * own through the border): an offset in the row, or -1 for a 0. */
__device__ __forceinline__ int
border_sample (CuconvBorder border, int s, int nc, int width)
{
  const int px = s >= 0 ? s / nc : -((-s + nc - 1) / nc);
  const int xi = cuconv_border_index (border, px, width);

  return xi < 0 ? -1 : xi * nc + (s - px * nc);
}

/* The row that row y outside the plane reads (-1: zeros), out of line:
 * the code of the border modes is large, and a kernel that walks rows
 * must keep its loop small for the instruction cache. */
static __device__ __noinline__ int
border_row_far (int border, int y, int height)
{
  return cuconv_border_index ((CuconvBorder) border, y, height);
}

/* Fills the tables of a border tile, once, with all its threads: colmap[c]
 * (c < span) is where column x_first + c of a row of nc interleaved
 * components reads (a column of the row, each component mapped on its
 * own; x_first may be negative), rowmap[r] (r < rows) the row that row
 * y_first + r reads; -1 reads 0.  width: pixels a row, height: rows of the
 * plane.  The caller synchronises before reading them. */
__device__ __forceinline__ void
build_border_tables (CuconvBorder border, int nc, int width, int height,
    int *colmap, int span, int x_first, int *rowmap, int rows, int y_first)
{
  for (int c = threadIdx.x; c < span; c += THREADS)
    colmap[c] = border_sample (border, x_first + c, nc, width);
  for (int r = threadIdx.x; r < rows; r += THREADS)
    rowmap[r] = cuconv_border_index (border, y_first + r, height);
}

/* The tables of a tuned border tile: its span of samples from
 * x0 - apron, its rows from y0 - ry. */
__device__ __forceinline__ void
build_maps (const SepParams & p, const TileGeom & g, int *colmap,
    int *rowmap, int x0, int y0)
{
  build_border_tables ((CuconvBorder) p.border, p.nc, p.width, p.height,
      colmap, g.span, x0 - g.apron, rowmap, g.rows, y0 - p.ry);
}

/* Sample conversion ----------------------------------------------------- */

/* v (< 2^23) as a float: 0x4B000000 | v is 2^23 + v as float bits; minus
 * 2^23 is exact, and cheaper than a conversion instruction. */
__device__ __forceinline__ float
sample_to_float (uint32_t v)
{
  return __uint_as_float (0x4B000000u | v) - 8388608.0f;
}

/* A raw sample of type T as a float: a byte as it is, a word's
 * (word >> shift) & mask (its depth bits). */
template < typename T > __device__ __forceinline__ float
raw_to_float (uint32_t raw, int shift, uint32_t mask)
{
  return sample_to_float (sizeof (T) == 1 ? raw : (raw >> shift) & mask);
}

/* Sample c of staged row `row` of a tuned border tile, through the
 * tables, as a float (0 outside the plane for the constant border). */
template < int SB > __device__ __forceinline__ float
mapped_sample (const SepParams & p, const int *colmap, int row, int c)
{
  const int xo = colmap[c];

  if (xo < 0 || row < 0)
    return 0.0f;
  const uint8_t *s = p.src + (size_t) row * p.src_pitch;
  if (SB == 1)
    return sample_to_float (s[xo]);
  return raw_to_float < uint16_t > (((const uint16_t *) s)[xo], p.shift,
      p.mask);
}

/* Byte `byte` (0..3) of word as a float, plus `plus` (exact for a plus of
 * 0 or 0.5): a byte permute and a subtraction, no I2F. */
__device__ __forceinline__ float
u8_to_f (uint32_t word, int byte, float plus = 0.0f)
{
  return __uint_as_float (__byte_perm (word, 0x4B000000u,
          0x7440u | byte)) - (8388608.0f - plus);
}

/* The raw word of sample s of a row of `bytes`-byte samples: a byte, or a
 * little-endian 16-bit word read a byte at a time, so that any alignment
 * works.  For the wide paths, whose cost lies elsewhere. */
__device__ __forceinline__ uint32_t
load_word (const uint8_t * row, int s, int bytes)
{
  if (bytes == 1)
    return __ldg (row + s);
  return __ldg (row + 2 * s) | (uint32_t) __ldg (row + 2 * s + 1) << 8;
}

__device__ __forceinline__ void
store_word (uint8_t * row, int s, int bytes, uint32_t w)
{
  if (bytes == 1) {
    row[s] = (uint8_t) w;
  } else {
    row[2 * s] = (uint8_t) w;
    row[2 * s + 1] = (uint8_t) (w >> 8);
  }
}

/* Tap loops ------------------------------------------------------------- */

/* Runs step (t, u) for the taps t = 0..n-1, where u = t % Q is a
 * compile-time constant once the chunks are unrolled: the slots of a
 * window of Q registers that slides along the taps get compile-time
 * names. */
template < int Q, typename F > __device__ __forceinline__ void
for_taps (int n, F step)
{
  int t0 = 0;

  for (; t0 + Q <= n; t0 += Q) {
#pragma unroll
    for (int u = 0; u < Q; u++)
      step (t0 + u, u);
  }
#pragma unroll
  for (int u = 0; u < Q; u++)
    if (t0 + u < n)
      step (t0 + u, u);
}

/* Combining ------------------------------------------------------------- */

/* An output sample's terms t0 (and t1) combined as the CPU reference
 * combines them (float32, no contraction into FMA), before rounding; s is
 * the source sample's value, read by the sharpen only. */
__device__ __forceinline__ float
combine_terms (int combine, float amount, float s, float t0, float t1)
{
  switch (combine) {
    case CUCONV_COMBINE_MAGNITUDE:
      return __fsqrt_rn (__fadd_rn (__fmul_rn (t0, t0), __fmul_rn (t1, t1)));
    case CUCONV_COMBINE_ABS_SUM:
      return fabsf (__fadd_rn (t0, t1));
    case CUCONV_COMBINE_SHARPEN:
      return __fadd_rn (s, __fmul_rn (amount, __fsub_rn (s, t0)));
    case CUCONV_COMBINE_NONE:
    default:
      return t0;
  }
}

/* The square root of the sobel magnitude in the tuned kernels: the
 * approximate instruction (relative error about 2^-22), well inside the
 * +-1 of the output; the general kernel keeps the reference's sqrtf. */
__device__ __forceinline__ float
sqrt_approx (float v)
{
  float r;

  asm ("sqrt.approx.ftz.f32 %0, %1;":"=f" (r):"f" (v));
  return r;
}

/* Two terms combined as combine says (MAGNITUDE or ABS_SUM) in the tuned
 * kernels, the magnitude's square root approximate (sqrt_approx). */
__device__ __forceinline__ float
two_terms_approx (int combine, float t0, float t1)
{
  return combine == CUCONV_COMBINE_MAGNITUDE ?
      sqrt_approx (fmaf (t0, t0, t1 * t1)) : fabsf (t0 + t1);
}

/* Rounding -------------------------------------------------------------- */

/* floor (v) in the low bits, for v in [0, 2^23): adding 2^23 rounding
 * down leaves it in the mantissa. */
__device__ __forceinline__ uint32_t
floor_bits (float v)
{
  return __float_as_uint (__fadd_rd (v, 8388608.0f));
}

/* The low bytes of a, b, c and d, in that order, as one word. */
__device__ __forceinline__ uint32_t
pack_low_bytes (uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
  return __byte_perm (__byte_perm (a, b, 0x0040), __byte_perm (c, d,
          0x0040), 0x5410);
}

/* Rounds half away from zero and saturates to 0..255, exactly as
 * cuconv_round_sat_u8, for v in [0, 255.5): the byte lands in the low bits
 * of the result.  The tuned kernels' taps are non-negative and sum to at
 * most 1 (the dispatch checks), so their results need no clamp.  The
 * general and matrix kernels round with cuconv_round_sat (cuconv.h), the
 * CPU reference's own function. */
__device__ __forceinline__ uint32_t
round_sat_bits (float v)
{
  return floor_bits (v + 0.5f);
}

__device__ __forceinline__ uint32_t
pack4 (const float4 & a)
{
  return pack_low_bytes (round_sat_bits (a.x), round_sat_bits (a.y),
      round_sat_bits (a.z), round_sat_bits (a.w));
}

/* The 4 16-bit words of samples a (each in [0, 65535.5), clamped by the
 * caller), shifted into place, two to a 32-bit word. */
__device__ __forceinline__ uint2
pack4_16 (const float4 & a, int shift)
{
  return make_uint2 (__byte_perm (round_sat_bits (a.x) << shift,
          round_sat_bits (a.y) << shift, 0x5410),
      __byte_perm (round_sat_bits (a.z) << shift,
          round_sat_bits (a.w) << shift, 0x5410));
}

/* Writes 4 output samples of row y from x on: SB = 1, the bytes of v.x;
 * SB = 2, the words of v.x, then v.y.  guard: the tile may stick out of
 * the plane or the band, or the destination may be unaligned. */
template < int SB > __device__ __forceinline__ void
store4 (const SepParams & p, int x, int y, uint2 v, bool guard)
{
  uint8_t *d = p.dst + (size_t) y * p.dst_pitch + (size_t) x * SB;

  if (guard && y >= p.row_end)
    return;
  if (!guard || (x + 3 < p.ws && p.dst_aligned)) {
    if (SB == 1)
      *(uint32_t *) d = v.x;
    else
      *(uint2 *) d = v;
    return;
  }
  for (int b = 0; b < 4 && x + b < p.ws; b++) {
    if (SB == 1)
      d[b] = (uint8_t) (v.x >> (8 * b));
    else
      ((uint16_t *) d)[b] = (uint16_t) ((b < 2 ? v.x : v.y) >> (16 * (b & 1)));
  }
}

/* 4 output bytes packed in a word. */
__device__ __forceinline__ void
store4 (const SepParams & p, int x, int y, uint32_t v, bool guard)
{
  store4 < 1 > (p, x, y, make_uint2 (v, 0u), guard);
}

/* Host side: fitting and launching -------------------------------------- */

/* The most dynamic shared memory a block of the current device may opt
 * in to. */
cudaError_t device_smem_optin (int *bytes);

/* The multiprocessors of the current device. */
cudaError_t device_sm_count (int *sms);

/* The compute capability's major number of the current device. */
cudaError_t device_cc_major (int *major);

/* The largest tile, in units (rows, or groups of rows) from max_units
 * halved down to no fewer than min_units, whose dynamic shared memory
 * smem_for (units) fits a block of the current device: *units and *smem,
 * or *units = 0 when none fits. */
template < typename F > static cudaError_t
fit_tile (int max_units, int min_units, F smem_for, int *units,
    size_t * smem)
{
  int max_smem;
  const cudaError_t e = device_smem_optin (&max_smem);

  *units = 0;
  if (e != cudaSuccess)
    return e;
  for (int u = max_units; u >= min_units && u > 0; u /= 2) {
    *smem = smem_for (u);
    if (*smem <= (size_t) max_smem) {
      *units = u;
      break;
    }
  }
  return cudaSuccess;
}

/* The tile height, halved from tile_h down to min_h while a grid of cols
 * tiles across and rows rows would have fewer than two blocks a
 * multiprocessor of the current device.  Halving keeps a height that
 * divides the tallest tile, so strips of whole tallest tiles still hold
 * whole tiles. */
int fill_two_waves (int tile_h, int min_h, int cols, int rows);

/* The row of tiles or strips that the k-th of n runs: the first and the
 * last (which read rows through the border, more slowly) come first, so
 * that they do not end last (stream_thread). */
__device__ __forceinline__ int
border_rows_first (int k, int n)
{
  return k == 0 || k >= n ? k : k == 1 ? n - 1 : k - 1;
}

/* Programmatic dependent launch (sm_90; launched by launch_pdl): the
 * grid's blocks may be launched before the grid ahead of it in the stream
 * has finished, and wait here, before their first access to memory,
 * until it has and its writes are visible.  The launch of back-to-back
 * grids overlaps the end of the one before, which saves a few percent
 * on whole planes at small radii.  Used by the kernels of
 * whole planes and frames at small radii (streamed, tiled, tensor
 * cores); the others launch as usual.  A grid lets the next one go only
 * as it ends (no griddepcontrol.launch_dependents): released at its
 * start, the next grid's blocks filled the SMs that finished first,
 * unevenly, and the launches were slower. */
__device__ __forceinline__ void
grid_dep_wait (void)
{
#if defined (__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.wait;":::"memory");
#endif
}

/* Whether the current device takes programmatic dependent launches
 * (compute capability 9.0 and up). */
bool device_takes_pdl (void);

/* Launches kernel k (which calls grid_dep_wait before it touches memory)
 * over grid blocks of block threads with smem bytes of dynamic shared
 * memory on stream, its launch allowed to overlap the end of the grid
 * before it where the device takes that. */
template < typename ... P, typename ... A > static inline cudaError_t
launch_pdl (void (*k) (P ...), dim3 grid, dim3 block, size_t smem,
    cudaStream_t stream, A && ... args)
{
  cudaLaunchConfig_t cfg = { };
  cudaLaunchAttribute attr;

  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = device_takes_pdl ()? 1 : 0;
  return cudaLaunchKernelEx (&cfg, k, std::forward < A > (args) ...);
}

/* What a kernel's dynamic shared memory limit has been raised to, and in
 * which context: one per kernel, a static of its launcher. */
struct SmemLimit
{
  /* context id << 20 | bytes allowed there; 0: not yet raised */
  std::atomic < unsigned long long > raised;
  /* the most any launch of the kernel has needed, on any device */
  std::atomic < int > most;
};

/* Makes sure kernel may use `bytes` of dynamic shared memory in the
 * current context (the limit belongs to a function in one context).  The
 * attribute call costs microseconds, far more than a small frame's work,
 * so it is made only when the context differs from the one it was last
 * made in, or more is needed. */
cudaError_t allow_smem (const void *kernel, int bytes, SmemLimit & limit);

/* Launches a kernel that needs `bytes` of dynamic shared memory: launch ()
 * does the <<< >>> call. */
template < typename L > static inline cudaError_t
launch_smem (const void *kernel, int bytes, SmemLimit & limit, L launch)
{
  const cudaError_t e = allow_smem (kernel, bytes, limit);

  if (e != cudaSuccess)
    return e;
  launch ();
  return cudaGetLastError ();
}

/* Launches k (kernel of (params, tile rows)) over the band of p in tiles of
 * tile_h rows, with smem bytes of dynamic shared memory. */
typedef void (*TiledKernel) (SepParams, int);

static inline cudaError_t
launch_tiled (TiledKernel k, const SepParams & p, int tile_h, size_t smem,
    SmemLimit & limit, cudaStream_t stream)
{
  dim3 grid ((p.ws + TILE_W - 1) / TILE_W,
      (p.row_end - p.row_begin + tile_h - 1) / tile_h);

  return launch_smem ((const void *) k, (int) smem, limit,[&]{
        k <<< grid, THREADS, smem, stream >>> (p, tile_h);});
}

}                               /* namespace cuconv */

#endif /* __CUCONV_TILE_CUH__ */
