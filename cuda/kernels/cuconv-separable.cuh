/* gst-cudaconvolve: the tiles of the tuned separable convolution with
 * boundary classification (docs/design.md), shared by its kernels
 * (cuconv-separable.cu, cuconv-separable-fixed.cuh) and the one launch of
 * a 4:2:0 frame (cuconv-frame420-tiles.cuh).
 *
 * One fused pass per plane, of 8- or 16-bit samples.  A block owns a
 * TILE_W x TILE_H tile of output samples.  It filters the tile's rows plus
 * the vertical apron horizontally into a float buffer in shared memory, one
 * a term (16 outputs a thread, from 16-byte loads), then filters columns
 * from those buffers (a 4-wide strip of rows a thread, each buffered row
 * read once and used for every output it feeds), and combines the terms
 * where there are two (sobel, laplacian).  Each input sample comes from
 * device memory once per tile and each output sample is written once.
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

constexpr int COL_GROUPS = TILE_W / 4;  /* vertical pass: 4 samples a thread */
constexpr int ROW_GROUPS = THREADS / COL_GROUPS;
constexpr int H_CHUNK = 16;     /* horizontal pass: outputs a thread */
constexpr int CHUNKS = TILE_W / H_CHUNK;

/* What a tuned tile writes: the blur, the unsharp mask of it
 * (kernel=sharpen), or two terms combined as p.combine says (sobel,
 * laplacian); the streaming kernel also the 2-D matrix (n_terms 0),
 * whose rows are in p.kx, and it takes the combination of two terms as
 * part of its shape: OUT_TWO_TERMS the magnitude, OUT_ABS_SUM the
 * absolute sum. */
enum SepOut
{ OUT_BLUR, OUT_SHARPEN, OUT_TWO_TERMS, OUT_MATRIX, OUT_ABS_SUM };

__host__ __device__ constexpr int
out_terms (int out)
{
  return out == OUT_TWO_TERMS || out == OUT_ABS_SUM ? 2 : 1;
}

/* Shared memory: the horizontally filtered rows (floats) of each term,
 * then the border tables. */
__host__ __device__ constexpr size_t
sep_smem_bytes (const TileGeom & g, int terms = 1)
{
  return (size_t) terms * g.rows * TILE_W * sizeof (float) + g.maps_bytes ();
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

/* Sample j of the 32-bit words w of 16-byte loads as a float: byte j, or
 * 16-bit word j's (word >> shift) & mask.  j is a compile-time constant
 * once the callers' loops are unrolled. */
template < int SB > __device__ __forceinline__ float
loaded_sample (const uint32_t * w, int j, const SepParams & p)
{
  if (SB == 1)
    return u8_to_f (w[j / 4], j % 4);
  return sample_to_float ((w[j / 2] >> (16 * (j % 2) + p.shift)) & p.mask);
}

/* Horizontal pass, radius known at compile time: a thread filters 16
 * adjacent outputs of a row (each term) from 16 + 2 * R * NC inputs held
 * in registers, taps as immediate constant-bank operands.  The inputs
 * come in 16-byte loads straight from device memory (neighbouring threads
 * share them through L1), in a border tile from the row the table maps
 * the row to, with only the samples outside the row gathered through the
 * tables.  The border tiles of an unaligned plane, and a chunk whose
 * outputs pass the row's end, gather every sample. */
template < int R, int NC, int SB, int NT, bool BORDER > __device__ void
hpass_fixed (const SepParams & p, const TileGeom & g, const int *colmap,
    const int *rowmap, float *hbuf, int x0, int y0)
{
  constexpr int A = round_up16 (R * NC * SB) / SB;      /* apron, samples */
  constexpr int PER_LOAD = 16 / SB;
  constexpr int NV = (H_CHUNK + 2 * A) / PER_LOAD;
  constexpr int NF = H_CHUNK + 2 * R * NC;
  const int items = g.rows * CHUNKS;

  for (int it = threadIdx.x; it < items; it += THREADS) {
    const int r = it / CHUNKS, k = it - r * CHUNKS;
    float f[NF];

    /* the row read (through the table in a border tile), the sample that
     * f[0] is, and the chunk's first output */
    const int row = BORDER ? rowmap[r] : y0 - R + r;
    const int xs = x0 + k * H_CHUNK - R * NC, xo = xs + R * NC;
    const int c0 = A - R * NC + k * H_CHUNK;    /* f[0]'s index in colmap */
    /* in a border tile: f reaches past the row's start (only its first
     * R * NC can), past its end (only its last R * NC, unless ragged: the
     * chunk's outputs pass the row's end) */
    const bool left = BORDER && xs < 0, right = BORDER && xs + NF > p.ws;
    const bool ragged = right && xo + H_CHUNK > p.ws;

    if (BORDER && (row < 0 || xo >= p.ws)) {
      /* a row of zeros (the constant border), or no output in the row */
#pragma unroll
      for (int j = 0; j < NF; j++)
        f[j] = 0.0f;
    } else if (!BORDER || (p.src_aligned16 && !ragged)) {
      /* 16-byte loads of the row (at its ends, those that start inside
       * it: they end inside its pitch, as an interior tile's do), the
       * samples outside it then taken through the table */
      const int sv = x0 - A + k * H_CHUNK;
      const uint4 *src = (const uint4 *) (p.src + (size_t) row * p.src_pitch
          + (ptrdiff_t) sv * SB);
      uint32_t w[NV * 4];
#pragma unroll
      for (int v = 0; v < NV; v++) {
        uint4 d = make_uint4 (0u, 0u, 0u, 0u);

        if (!(left || right) || (sv + v * PER_LOAD >= 0
                && sv + v * PER_LOAD < p.ws))
          d = __ldg (src + v);
        w[4 * v] = d.x;
        w[4 * v + 1] = d.y;
        w[4 * v + 2] = d.z;
        w[4 * v + 3] = d.w;
      }
#pragma unroll
      for (int j = 0; j < NF; j++)
        f[j] = loaded_sample < SB > (w, A - R * NC + j, p);
      /* gathered unconditionally, then selected: all in flight at once */
      if (left) {
#pragma unroll
        for (int j = 0; j < R * NC; j++) {
          const float m = mapped_sample < SB > (p, colmap, row, c0 + j);
          f[j] = xs + j < 0 ? m : f[j];
        }
      }
      if (right) {
#pragma unroll
        for (int j = NF - R * NC; j < NF; j++) {
          const float m = mapped_sample < SB > (p, colmap, row, c0 + j);
          f[j] = xs + j >= p.ws ? m : f[j];
        }
      }
    } else {
      /* an unaligned plane, or a chunk whose outputs pass the row's end:
       * every sample through the table */
#pragma unroll
      for (int j = 0; j < NF; j++)
        f[j] = mapped_sample < SB > (p, colmap, row, c0 + j);
    }

#pragma unroll
    for (int m = 0; m < NT; m++) {
      const float *kx = p.kx + m * SEP_TERM2;
      float4 *dst = (float4 *) (hbuf + (m * g.rows + r) * TILE_W);
#pragma unroll
      for (int q = 0; q < H_CHUNK / 4; q++) {
        float a[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
          a[e] = 0.0f;
#pragma unroll
          for (int i = 0; i <= 2 * R; i++)
            a[e] = fmaf (kx[i], f[4 * q + e + i * NC], a[e]);
        }
        dst[swizzle4 (k * 4 + q)] = make_float4 (a[0], a[1], a[2], a[3]);
      }
    }
  }
}

/* Horizontal pass, any radius (8-bit, one term): a thread filters 4
 * outputs of one component (x, x + nc, x + 2 nc, x + 3 nc), sliding a
 * window of 4 inputs along the taps, so that each input it reads feeds 4
 * outputs. */
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
      return BORDER ? mapped_sample < 1 > (p, colmap, mrow,
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

/* The 4 source samples of row y from x on, as floats, for the unsharp
 * mask: read again (from L2: the tile read them a moment ago). */
template < int SB > __device__ __forceinline__ float4
source4 (const SepParams & p, int x, int y, bool guard)
{
  const uint8_t *s = p.src + (size_t) y * p.src_pitch + (size_t) x * SB;
  uint32_t w[2] = { 0, 0 };

  if (!guard && p.src_aligned16) {
    if (SB == 1) {
      w[0] = *(const uint32_t *) s;
    } else {
      const uint2 v = *(const uint2 *) s;
      w[0] = v.x;
      w[1] = v.y;
    }
  } else if (y < p.row_end) {
    for (int b = 0; b < 4 && x + b < p.ws; b++) {
      if (SB == 1)
        w[0] |= (uint32_t) s[b] << (8 * b);
      else
        w[b / 2] |= (uint32_t) ((const uint16_t *) s)[b] << (16 * (b & 1));
    }
  }
  return make_float4 (loaded_sample < SB > (w, 0, p),
      loaded_sample < SB > (w, 1, p), loaded_sample < SB > (w, 2, p),
      loaded_sample < SB > (w, 3, p));
}

/* One output sample from its terms, clamped to [0, maxv] so that the
 * rounding is exact: the unsharp mask of the source sample s, or two
 * terms combined (two_terms_approx). */
template < int OUT > __device__ __forceinline__ float
sep_output (const SepParams & p, float s, float t0, float t1)
{
  if (OUT == OUT_SHARPEN)
    return fminf (fmaxf (s + p.amount * (s - t0), 0.0f), p.maxv);
  return fminf (two_terms_approx (p.combine, t0, t1), p.maxv);
}

/* The 4 output samples at (x, y) of a blur (t0) or as OUT combines t0 and
 * t1, rounded, shifted and packed for store4 < SB >. */
template < int SB, int OUT > __device__ __forceinline__ uint2
sep_pack (const SepParams & p, float4 t0, const float4 & t1, int x, int y,
    bool guard)
{
  if (OUT == OUT_SHARPEN) {
    const float4 s = source4 < SB > (p, x, y, guard);
    t0 = make_float4 (sep_output < OUT > (p, s.x, t0.x, 0.0f),
        sep_output < OUT > (p, s.y, t0.y, 0.0f),
        sep_output < OUT > (p, s.z, t0.z, 0.0f),
        sep_output < OUT > (p, s.w, t0.w, 0.0f));
  } else if (OUT == OUT_TWO_TERMS) {
    t0 = make_float4 (sep_output < OUT > (p, 0.0f, t0.x, t1.x),
        sep_output < OUT > (p, 0.0f, t0.y, t1.y),
        sep_output < OUT > (p, 0.0f, t0.z, t1.z),
        sep_output < OUT > (p, 0.0f, t0.w, t1.w));
  } else if (SB == 2) {
    /* a blur: taps >= 0 summing to at most 1 plus float error, which
     * could pass a 16-bit maximum by more than half */
    t0 = make_float4 (fminf (t0.x, p.maxv), fminf (t0.y, p.maxv),
        fminf (t0.z, p.maxv), fminf (t0.w, p.maxv));
  }
  if (SB == 1)
    return make_uint2 (pack4 (t0), 0u);
  return pack4_16 (t0, p.shift);
}

/* Vertical pass: each thread filters 4 adjacent columns over RPT rows,
 * reusing each float4 row it reads for every output it contributes to.
 * GUARD: the tile may stick out of the plane or the band. */
template < int RY, int RPT, int SB, int OUT, bool GUARD > __device__ void
vpass_fixed (const SepParams & p, const float *hbuf, int rows, int x0,
    int y0)
{
  constexpr int NT = out_terms (OUT);
  const int cg = threadIdx.x % COL_GROUPS, rg = threadIdx.x / COL_GROUPS;
  const int row0 = rg * RPT;
  const float4 *h = (const float4 *) hbuf + swizzle4 (cg);
  float4 acc[NT][RPT];

#pragma unroll
  for (int m = 0; m < NT; m++)
#pragma unroll
    for (int o = 0; o < RPT; o++)
      acc[m][o] = make_float4 (0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < RPT + 2 * RY; j++) {
#pragma unroll
    for (int m = 0; m < NT; m++) {
      const float4 v = h[(m * rows + row0 + j) * COL_GROUPS];
#pragma unroll
      for (int o = 0; o < RPT; o++) {
        const int t = j - o;
        if (t >= 0 && t <= 2 * RY) {
          const float k = p.ky[m * SEP_TERM2 + t];
          acc[m][o].x = fmaf (k, v.x, acc[m][o].x);
          acc[m][o].y = fmaf (k, v.y, acc[m][o].y);
          acc[m][o].z = fmaf (k, v.z, acc[m][o].z);
          acc[m][o].w = fmaf (k, v.w, acc[m][o].w);
        }
      }
    }
  }
#pragma unroll
  for (int o = 0; o < RPT; o++) {
    const int x = x0 + cg * 4, y = y0 + row0 + o;

    store4 < SB > (p, x, y, sep_pack < SB, OUT > (p, acc[0][o],
            acc[NT - 1][o], x, y, GUARD), GUARD);
  }
}

/* Vertical pass, any radius (8-bit, one term): one output row at a
 * time. */
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
  __device__ TileSmem (void *smem, const TileGeom & g, int terms = 1)
  : hbuf ((float *) smem),
      colmap ((int *) smem + terms * g.rows * TILE_W),
      rowmap ((int *) smem + terms * g.rows * TILE_W + g.span)
  {
  }
};

/* Output rows per thread of the vertical pass of output out from nc
 * components of sb bytes: short tiles, and a register cap that keeps 5
 * blocks resident, suit small radii; tall tiles cut the apron of large
 * ones, whose unrolled taps need the registers.  The 16-bit blur of one
 * component at radius 4 takes 7, a plane launched on its own only from
 * CUCONV_LARGE_PLANE_SAMPLES; not with two components nor as a frame's
 * chroma (frame_chroma_rpt), where 7 measured no faster.  6 rows from
 * radius 5 lost, and the 16-bit sharpen spills in 7
 * (docs/performance.md). */
__host__ __device__ constexpr int
fixed_rpt (int r, int nc, int sb, int out)
{
  return r == 4 && nc == 1 && sb == 2 && out == OUT_BLUR ? 7 : r <= 4 ? 4
      : 8;
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

/* The tile geometry of the unrolled radius R, RPT rows a thread. */
template < int R, int NC, int SB, int RPT > __host__ __device__ constexpr
    TileGeom
fixed_geom ()
{
  return TileGeom (R, R, NC, ROW_GROUPS * RPT, SB);
}

/* One tile (bx, by) of plane p with the unrolled radius R. */
template < int R, int NC, int SB, int OUT,
    int RPT = fixed_rpt (R, NC, SB, OUT) > __device__ __forceinline__ void
tile_fixed (const SepParams & p, int bx, int by)
{
  constexpr int TILE_H = ROW_GROUPS * RPT;
  constexpr int NT = out_terms (OUT);
  constexpr TileGeom g = fixed_geom < R, NC, SB, RPT > ();
  extern __shared__ uint4 smem[];
  const TileSmem sm (smem, g, NT);
  const int x0 = bx * TILE_W;
  const int y0 = p.row_begin + by * TILE_H;

  if (is_interior (p, x0, y0, TILE_H)) {
    hpass_fixed < R, NC, SB, NT, false > (p, g, sm.colmap, sm.rowmap,
        sm.hbuf, x0, y0);
    __syncthreads ();
    vpass_fixed < R, RPT, SB, OUT, false > (p, sm.hbuf, g.rows, x0, y0);
  } else {
    build_maps (p, g, sm.colmap, sm.rowmap, x0, y0);
    __syncthreads ();
    hpass_fixed < R, NC, SB, NT, true > (p, g, sm.colmap, sm.rowmap,
        sm.hbuf, x0, y0);
    __syncthreads ();
    vpass_fixed < R, RPT, SB, OUT, true > (p, sm.hbuf, g.rows, x0, y0);
  }
}

/* The launchers of the unrolled tiles at a radius R of CUCONV_FIXED_RADII:
 * of one plane (cuconv-separable-fixed.cuh) and of a 4:2:0 frame
 * (cuconv-frame420-tiles.cuh).  Their kernels take about 40% of the
 * engine's compile time: the dispatchers (cuconv-separable.cu,
 * cuconv-frame420.cu) see these declarations only, and each radius is
 * instantiated once, in one of the cuconv-separable-r*.cu and
 * cuconv-frame420-r*.cu, which split them into translation units of
 * about equal compile time, so that the cores of a small machine share
 * them (a radius left out fails to link). */
template < int R, int NC, int SB, int OUT > cudaError_t
launch_fixed (const SepParams & p, cudaStream_t stream);

template < int R, int NC, int SB > cudaError_t
launch_frame420_rn (const FrameParams & fp, cudaStream_t stream);

}                               /* namespace cuconv */

#endif /* __CUCONV_SEPARABLE_CUH__ */
