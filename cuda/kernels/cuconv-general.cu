/* gst-cudaconvolve: the general tiled kernel, for every plane the tuned
 * 8-bit path (cuconv-separable.cu, cuconv-box.cu) does not take: 8- and 16-bit
 * samples, 1 to 4 interleaved components each filtered, copied or
 * filled, one separable term or two combined (sharpen, sobel, laplacian),
 * radii 0..64 in each direction (docs/design.md).
 *
 * The structure is the separable kernel's.  A block owns a tile of GW
 * output samples x tile_h rows.  It filters the tile's rows plus the
 * vertical apron horizontally into float rows in shared memory, one
 * buffer a term, then filters columns from them, combines the terms,
 * rounds, and writes each output sample once.  Interior tiles read and
 * write with no checks; border tiles map their columns and rows through
 * the border mode into tables, once per tile, and guard their stores.
 *
 * The radius is a run-time value.  Each thread slides a window of
 * registers along the taps, so that each input it loads feeds several
 * outputs: QP pixels (all NC components) in the horizontal pass, RPT rows
 * in the vertical pass.  The tap loop runs in chunks of the window's
 * length, so that the window's slots have compile-time names and stay in
 * registers.  The taps live in the kernel's parameter space (GenParams),
 * like SepParams' (docs/design.md, "Entry points and parameters").
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-terms.cuh"

namespace cuconv {

constexpr int GW = 128;         /* output samples a tile row */
constexpr int GCOLS = GW / 4;   /* vertical pass: 4 columns a thread */
constexpr int GROWS = THREADS / GCOLS;
constexpr int G_MAX_TILE_H = 64;

/* One launch's work: rows [row_begin, row_end) of one plane. */
struct GenParams : TermsParams
{
  int src_aligned;              /* src and src_pitch multiples of 8 */
  int dst_aligned;              /* dst and dst_pitch: of 4 samples */
  /* term m's taps; a term narrower than rx or ry is padded with zeros,
   * which adds exact zeros to its sums */
  float kx[2][CUCONV_TILE_MAX_TAPS];
  float ky[2][CUCONV_TILE_MAX_TAPS];
};

void
pad_taps (float *dst, const CuconvTaps & t, int r)
{
  memset (dst, 0, sizeof (float) * (2 * r + 1));
  memcpy (dst + r - t.radius, t.w, sizeof (float) * (2 * t.radius + 1));
}

static void
gen_params_init (GenParams & p, const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end)
{
  const int bytes = cuconv_plane_sample_bytes (&pl);
  const int nt = f.n_terms;
  const CuconvTaps *x[2] = { &f.x[pl.sub_x - 1], &f.x2[pl.sub_x - 1] };
  const CuconvTaps *y[2] = { &f.y[pl.sub_y - 1], &f.y2[pl.sub_y - 1] };

  terms_params_init (p, pl, f, row_begin, row_end);
  for (int m = 0; m < nt; m++) {
    pad_taps (p.kx[m], *x[m], p.rx);
    pad_taps (p.ky[m], *y[m], p.ry);
  }
  p.src_aligned = ((uintptr_t) pl.src | p.src_pitch) % 8 == 0;
  p.dst_aligned = ((uintptr_t) pl.dst | p.dst_pitch) % (4 * bytes) == 0;
}

/* Pixels a thread filters in the horizontal pass: all their components
 * are adjacent columns of the float rows, CPT = QP * NC of them. */
__host__ __device__ constexpr int
gen_qp (int nc)
{
  return nc <= 2 ? 8 : 4;
}

/* Columns the horizontal pass computes: GW, except for 3 components,
 * where the last thread's pixels stick out (and are not stored). */
__host__ __device__ constexpr int
gen_cols (int nc)
{
  return (GW + gen_qp (nc) * nc - 1) / (gen_qp (nc) * nc) * gen_qp (nc) * nc;
}

/* The float rows' float4 slots are permuted within each group of 8 (128
 * bytes, the 32 banks) so that the horizontal pass's float4 stores, CPT
 * floats apart, fall in distinct banks; the vertical pass reads whole
 * rows, which any such permutation keeps conflict free. */
template < int NC > __device__ __forceinline__ int
gen_swizzle (int s)
{
  constexpr int d = gen_qp (NC) * NC / 4;
  return s ^ ((s >> 3) & ((d & (d - 1)) == 0 ? d - 1 : 0));
}

/* A tile and its shared memory: the float rows of each term, then the
 * border tables. */
struct GenTile
{
  int x0, y0, tile_h;
  int rows;                     /* tile_h + 2 ry */
  int span;                     /* columns read: gen_cols + 2 rx nc */
  float *hbuf;                  /* [term][rows][GW] */
  int *colmap;                  /* [span]: sample in the row, -1: zero */
  int *rowmap;                  /* [rows]: row of the plane, -1: zero */
};

__host__ __device__ constexpr size_t
gen_smem_bytes (int nt, int nc, int rx, int ry, int tile_h)
{
  return sizeof (float) * ((size_t) nt * (tile_h + 2 * ry) * GW
      + gen_cols (nc) + 2 * rx * nc + tile_h + 2 * ry);
}

/* A sample's value as a float. */
template < typename T > __device__ __forceinline__ float
sample_f (const GenParams & p, uint32_t word)
{
  return raw_to_float < T > (word, p.shift, p.mask);
}

/* The NC samples of the pixel at s, in one load when they fill 2, 4 or 8
 * aligned bytes (interior tiles: src is 8-byte aligned). */
template < typename T, int NC > __device__ __forceinline__ void
load_pixel (const GenParams & p, const T * s, float *out)
{
  constexpr int B = NC * (int) sizeof (T);
  constexpr int BITS = 8 * sizeof (T);

  if constexpr (B == 2 || B == 4) {
    const uint32_t w = B == 2 ? (uint32_t) __ldg ((const uint16_t *) s)
        : __ldg ((const uint32_t *) s);
#pragma unroll
    for (int c = 0; c < NC; c++)
      out[c] = sample_f < T > (p, (w >> (BITS * c)) & ((1u << BITS) - 1));
  } else if constexpr (B == 8) {
    const uint2 w = __ldg ((const uint2 *) s);
#pragma unroll
    for (int c = 0; c < NC; c++)
      out[c] = sample_f < T > (p, ((c < 2 ? w.x : w.y) >> (16 * (c & 1)))
          & 0xffffu);
  } else {
#pragma unroll
    for (int c = 0; c < NC; c++)
      out[c] = sample_f < T > (p, __ldg (s + c));
  }
}

/* Horizontal pass: the tile's rows and the vertical apron, gen_cols (NC)
 * outputs each, into the float rows of each term.  A work item is QP
 * adjacent pixels of a row (CPT adjacent columns); its window holds QP
 * input pixels, and at tap t output pixel o reads input pixel o + t, in
 * slot (o + t) % QP.  Interior tiles load straight from the row, border
 * tiles through the tables. */
template < typename T, int NT, int NC, bool BORDER > __device__ void
gen_hpass (const GenParams & p, const GenTile & g)
{
  constexpr int QP = gen_qp (NC), CPT = QP * NC;
  constexpr int PER_ROW = gen_cols (NC) / CPT;
  const int n = g.rows * PER_ROW, taps = 2 * p.rx + 1;

  for (int it = threadIdx.x; it < n; it += THREADS) {
    const int r = it / PER_ROW, c0 = (it - r * PER_ROW) * CPT;
    const T *row;
    const int *cmap = g.colmap + c0;
    float w[QP][NC], acc[NT][QP][NC];

    if (BORDER) {
      const int y = g.rowmap[r];
      row = y < 0 ? NULL : (const T *) (p.src + (size_t) y * p.src_pitch);
    } else {
      row = (const T *) (p.src + (size_t) (g.y0 - p.ry + r) * p.src_pitch)
          + g.x0 - p.rx * NC + c0;
    }
    /* input pixel j: columns c0 + j NC .. of the span */
    auto load = [&](int j, float *v) {
      if (BORDER) {
#pragma unroll
        for (int c = 0; c < NC; c++) {
          const int xo = cmap[j * NC + c];
          v[c] = row && xo >= 0 ? sample_f < T > (p, row[xo]) : 0.0f;
        }
      } else {
        load_pixel < T, NC > (p, row + j * NC, v);
      }
    };

#pragma unroll
    for (int o = 0; o < QP; o++) {
      load (o, w[o]);
#pragma unroll
      for (int m = 0; m < NT; m++)
#pragma unroll
        for (int c = 0; c < NC; c++)
          acc[m][o][c] = 0.0f;
    }
    for_taps < QP > (taps,[&](int t, int u) {
#pragma unroll
          for (int m = 0; m < NT; m++) {
            const float k = p.kx[m][t];
#pragma unroll
            for (int o = 0; o < QP; o++)
#pragma unroll
              for (int c = 0; c < NC; c++)
                acc[m][o][c] = fmaf (k, w[(u + o) % QP][c], acc[m][o][c]);
          }
          if (t + 1 < taps)
            load (t + QP, w[u]);
        });

#pragma unroll
    for (int m = 0; m < NT; m++) {
      float4 *h = (float4 *) (g.hbuf + (m * g.rows + r) * GW);
      const float *a = &acc[m][0][0];
#pragma unroll
      for (int q = 0; q < CPT / 4; q++) {
        const int s = c0 / 4 + q;
        if (s < GW / 4)
          h[gen_swizzle < NC > (s)] = make_float4 (a[4 * q], a[4 * q + 1],
              a[4 * q + 2], a[4 * q + 3]);
      }
    }
  }
}

__device__ __forceinline__ void
fma4 (float4 & a, float k, const float4 & v)
{
  a.x = fmaf (k, v.x, a.x);
  a.y = fmaf (k, v.y, a.y);
  a.z = fmaf (k, v.z, a.z);
  a.w = fmaf (k, v.w, a.w);
}

/* Combines the terms of one output sample (combine_terms), rounds and
 * saturates, and applies its component's op; `in` is the source word. */
template < typename T, int NT > __device__ __forceinline__ uint32_t
gen_output (const GenParams & p, float t0, float t1, uint32_t in, int op)
{
  if (op == CUCONV_COMP_COPY)
    return in;
  if (op == CUCONV_COMP_FILL)
    return p.fill;
  const float v = combine_terms (p.combine, p.amount,
      NT == 1 && p.combine == CUCONV_COMBINE_SHARPEN ? sample_f < T > (p,
          in) : 0.0f, t0, NT == 2 ? t1 : 0.0f);
  return (cuconv_round_sat (v, p.mask) << p.shift) & p.word_mask;
}

/* Writes the 4 samples of row y from column x on.  GUARD: a border tile,
 * whose samples may lie outside the plane or the band; its source and
 * destination may be unaligned. */
template < typename T, int NT, bool GUARD > __device__ __forceinline__ void
gen_store (const GenParams & p, int x, int y, const float4 & a0,
    const float4 & a1, const int *ops)
{
  const float t0[4] = { a0.x, a0.y, a0.z, a0.w };
  const float t1[4] = { a1.x, a1.y, a1.z, a1.w };
  uint32_t in[4] = { 0, 0, 0, 0 };

  if (GUARD && y >= p.row_end)
    return;

  const T *s = (const T *) (p.src + (size_t) y * p.src_pitch) + x;
  T *d = (T *) (p.dst + (size_t) y * p.dst_pitch) + x;

  if (!GUARD) {
    if (p.need_src) {
      if (sizeof (T) == 1) {
        const uint32_t w = __ldg ((const uint32_t *) s);
#pragma unroll
        for (int e = 0; e < 4; e++)
          in[e] = (w >> (8 * e)) & 0xffu;
      } else {
        const uint2 w = __ldg ((const uint2 *) s);
        in[0] = w.x & 0xffffu;
        in[1] = w.x >> 16;
        in[2] = w.y & 0xffffu;
        in[3] = w.y >> 16;
      }
    }
    uint32_t o[4];
#pragma unroll
    for (int e = 0; e < 4; e++)
      o[e] = gen_output < T, NT > (p, t0[e], t1[e], in[e], ops[e]);
    if (sizeof (T) == 1)
      *(uint32_t *) d = o[0] | o[1] << 8 | o[2] << 16 | o[3] << 24;
    else
      *(uint2 *) d = make_uint2 (o[0] | o[1] << 16, o[2] | o[3] << 16);
  } else {
#pragma unroll
    for (int e = 0; e < 4; e++) {
      if (x + e >= p.ws)
        break;
      if (p.need_src)
        in[e] = s[e];
      d[e] = (T) gen_output < T, NT > (p, t0[e], t1[e], in[e], ops[e]);
    }
  }
}

/* Vertical pass: each thread owns 4 adjacent columns (one float4) and
 * blocks of RPT rows; at tap t output row o reads buffered row o + t, in
 * slot (o + t) % RPT of its window, so each buffered row is read once a
 * block. */
template < typename T, int NT, int NC, int RPT, bool BORDER > __device__ void
gen_vpass (const GenParams & p, const GenTile & g)
{
  const int cg = threadIdx.x % GCOLS;
  const int x = g.x0 + cg * 4;
  const float4 *h = (const float4 *) g.hbuf + gen_swizzle < NC > (cg);
  const int term = g.rows * GCOLS, taps = 2 * p.ry + 1;
  int ops[4];

#pragma unroll
  for (int e = 0; e < 4; e++)
    ops[e] = p.op[(x + e) % NC];

  for (int ob = (threadIdx.x / GCOLS) * RPT; ob < g.tile_h;
      ob += GROWS * RPT) {
    float4 w[NT][RPT], acc[NT][RPT];

#pragma unroll
    for (int m = 0; m < NT; m++)
#pragma unroll
      for (int o = 0; o < RPT; o++) {
        acc[m][o] = make_float4 (0.f, 0.f, 0.f, 0.f);
        w[m][o] = h[m * term + (ob + o) * GCOLS];
      }
    for_taps < RPT > (taps,[&](int t, int u) {
#pragma unroll
          for (int m = 0; m < NT; m++) {
            const float k = p.ky[m][t];
#pragma unroll
            for (int o = 0; o < RPT; o++)
              fma4 (acc[m][o], k, w[m][(u + o) % RPT]);
          }
          if (t + 1 < taps) {
#pragma unroll
            for (int m = 0; m < NT; m++)
              w[m][u] = h[m * term + (ob + t + RPT) * GCOLS];
          }
        });
#pragma unroll
    for (int o = 0; o < RPT; o++)
      gen_store < T, NT, BORDER > (p, x, g.y0 + ob + o, acc[0][o],
          acc[NT - 1][o], ops);
  }
}

/* Two terms: registers capped for 3 blocks an SM (a few bytes spill),
 * measured faster than 2 blocks for sobel and laplacian on large planes;
 * capping one term's registers measured slightly slower. */
__host__ __device__ constexpr int
gen_min_blocks (int nt)
{
  return nt == 2 ? 3 : 1;
}

template < typename T, int NT, int NC, int RPT > __global__ void
__launch_bounds__ (THREADS, gen_min_blocks (NT))
gen_kernel (const __grid_constant__ GenParams p, int tile_h)
{
  extern __shared__ float4 gen_smem[];
  GenTile g;

  g.x0 = blockIdx.x * GW;
  g.y0 = p.row_begin + blockIdx.y * tile_h;
  g.tile_h = tile_h;
  g.rows = tile_h + 2 * p.ry;
  g.span = gen_cols (NC) + 2 * p.rx * NC;
  g.hbuf = (float *) gen_smem;
  g.colmap = (int *) g.hbuf + NT * g.rows * GW;
  g.rowmap = g.colmap + g.span;

  if (tile_is_interior (p.src_aligned && p.dst_aligned, g.x0 - p.rx * NC,
          g.x0 + gen_cols (NC) + p.rx * NC, p.ws, g.y0, g.tile_h, p.ry,
          p.height, p.row_end)) {
    gen_hpass < T, NT, NC, false > (p, g);
    __syncthreads ();
    gen_vpass < T, NT, NC, RPT, false > (p, g);
  } else {
    build_border_tables ((CuconvBorder) p.border, NC, p.width, p.height,
        g.colmap, g.span, g.x0 - p.rx * NC, g.rowmap, g.rows, g.y0 - p.ry);
    __syncthreads ();
    gen_hpass < T, NT, NC, true > (p, g);
    __syncthreads ();
    gen_vpass < T, NT, NC, RPT, true > (p, g);
  }
}

/* Writes the FILL word into rows [y0, y0 + gridDim.y) of a plane of
 * 16-bit samples. */
__global__ void
fill16_kernel (uint8_t * dst, size_t pitch, int ws, int y0, uint16_t v)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x < ws)
    ((uint16_t *) (dst + (size_t) (y0 + blockIdx.y) * pitch))[x] = v;
}

/* Host side ------------------------------------------------------------ */

typedef void (*GenKernel) (GenParams, int);

template < typename T, int NT, int NC > static GenKernel
pick_rpt (int rpt, SmemLimit ** limit)
{
  static SmemLimit limits[2];   /* one a kernel: rpt 4, 8 */

  *limit = &limits[rpt == 8];
  if constexpr (NT == 1) {
    if (rpt == 8)
      return gen_kernel < T, NT, NC, 8 >;
  }
  return gen_kernel < T, NT, NC, 4 >;
}

template < typename T, int NT > static GenKernel
pick_nc (int nc, int rpt, SmemLimit ** limit)
{
  switch (nc) {
    case 1:
      return pick_rpt < T, NT, 1 > (rpt, limit);
    case 2:
      return pick_rpt < T, NT, 2 > (rpt, limit);
    case 3:
      return pick_rpt < T, NT, 3 > (rpt, limit);
    default:
      return pick_rpt < T, NT, 4 > (rpt, limit);
  }
}

cudaError_t
launch_general (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, cudaStream_t stream)
{
  const int bytes = cuconv_plane_sample_bytes (&pl), nt = f.n_terms;
  GenParams p;
  SmemLimit *limit;
  GenKernel k;
  int tile_h, rpt;
  size_t smem = 0;
  cudaError_t e;

  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || nt < 1 || nt > 2)
    return cudaErrorInvalidValue;
  /* 16-bit samples are loaded and stored as such */
  if (bytes == 2 && ((uintptr_t) pl.src | (uintptr_t) pl.dst
          | (size_t) pl.src_stride | (size_t) pl.dst_stride) % 2 != 0)
    return cudaErrorInvalidValue;
  if (row_end <= row_begin)
    return cudaSuccess;
  gen_params_init (p, pl, f, row_begin, row_end);

  /* short tiles for small radii (more blocks, as the tuned path), tall
   * ones to cut the apron of large ones; shorter where the device has
   * too little shared memory */
  e = fit_tile (p.ry <= 4 ? 32 : G_MAX_TILE_H, 8,[&](int h) {
        return gen_smem_bytes (nt, p.nc, p.rx, p.ry, h);
      }, &tile_h, &smem);
  if (e != cudaSuccess)
    return e;
  if (tile_h == 0)
    return cudaErrorInvalidConfiguration;
  /* one term: 8 rows a thread in tall tiles; two: the registers of both
   * windows allow 4 */
  rpt = tile_h == G_MAX_TILE_H && nt == 1 ? 8 : 4;

  if (bytes == 1)
    k = nt == 1 ? pick_nc < uint8_t, 1 > (p.nc, rpt, &limit)
        : pick_nc < uint8_t, 2 > (p.nc, rpt, &limit);
  else
    k = nt == 1 ? pick_nc < uint16_t, 1 > (p.nc, rpt, &limit)
        : pick_nc < uint16_t, 2 > (p.nc, rpt, &limit);

  dim3 grid ((p.ws + GW - 1) / GW, (row_end - row_begin + tile_h - 1) /
      tile_h);
  return launch_smem ((const void *) k, (int) smem, *limit,[&]{
        k <<< grid, THREADS, smem, stream >>> (p, tile_h);});
}

cudaError_t
launch_fill (const CuconvPlane & pl, int row_begin, int row_end,
    cudaStream_t stream)
{
  const int ws = pl.width * pl.n_comp;
  uint8_t *d = pl.dst + (size_t) row_begin * pl.dst_stride;

  if (row_end <= row_begin)
    return cudaSuccess;
  if (cuconv_plane_sample_bytes (&pl) == 1)
    return cudaMemset2DAsync (d, pl.dst_stride, (int) (pl.fill & 0xff), ws,
        row_end - row_begin, stream);
  if (((uintptr_t) pl.dst | (size_t) pl.dst_stride) % 2 != 0)
    return cudaErrorInvalidValue;
  dim3 grid ((ws + 255) / 256, row_end - row_begin);
  fill16_kernel <<< grid, 256, 0, stream >>> (pl.dst, pl.dst_stride, ws,
      row_begin, (uint16_t) (pl.fill << pl.shift));
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
