/* gst-cudaconvolve: regions of frames in device memory (docs/design.md,
 * "The region path"; the semantics in docs/semantics.md, "Regions").
 *
 * INSIDE: one launch copies the source to dst, every plane; then one
 * launch of the direct kernel filters the rectangles where they lie.  Its
 * work list, uploaded once a frame, holds an output tile (at most
 * DIRECT_W x tile_h) of one component of one rectangle of one plane a
 * block.  A block stages its tile's input with the filter's reach from
 * the source through the frame's border mode (exactly what the
 * whole-frame filter reads there), filters it in shared memory,
 * horizontally then vertically in the reference's order, combines the
 * terms and writes the samples of its tile, all inside the rectangle.
 * Overlapping rectangles write the same value twice.  A plane the direct
 * kernel does not take (direct_takes_filter, direct_takes_plane), or whose
 * rectangles would cost more than the plane itself, is filtered whole
 * into a scratch plane instead, and one launch copies its rectangles from
 * there to dst.
 *
 * OUTSIDE: the whole frame is filtered into dst, then one launch copies
 * the source back inside the rectangles.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

/* Planes of one frame the region path takes: every format's. */
#define REGION_MAX_PLANES 4

constexpr int WARPS = THREADS / 32;

/* Copies ---------------------------------------------------------------- */

constexpr int COPY_THREADS = 128;
constexpr int COPY_ROWS = 4;    /* rows of a rectangle one block copies */
/* Scratch rows start at multiples of this (the tuned kernels' interior
 * tiles want 16), and every scratch plane at a multiple of 256 bytes. */
constexpr size_t SCRATCH_PITCH_ALIGN = 128;
constexpr size_t SCRATCH_PLANE_ALIGN = 256;

/* One rectangle to copy: w x h pixels from (sx, sy) of its plane's source
 * to (dx, dy) of its destination.  first_block: the blocks of the jobs
 * before it. */
struct CopyJob
{
  int plane;
  int sx, sy;
  int dx, dy;
  int w, h;
  int first_block;
};

struct CopyPlane
{
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int bpp;                      /* bytes a pixel: components * sample */
};

struct CopyParams
{
  CopyPlane plane[REGION_MAX_PLANES];
  const CopyJob *jobs;
  int n_jobs;
};

/* Block b copies COPY_ROWS rows of the job it falls in, one byte a
 * thread. */
__global__ void
copy_rects (const __grid_constant__ CopyParams p)
{
  __shared__ int job_index;

  if (threadIdx.x == 0) {
    int lo = 0, hi = p.n_jobs - 1;

    /* the last job whose first block is at most this one */
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.jobs[mid].first_block <= (int) blockIdx.x)
        lo = mid;
      else
        hi = mid - 1;
    }
    job_index = lo;
  }
  __syncthreads ();

  const CopyJob job = p.jobs[job_index];
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
  FramePlane plane[REGION_MAX_PLANES];
  int first_row[REGION_MAX_PLANES + 1];
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
  int i = 0;

  if (row >= c.first_row[c.n])
    return;
  while (row >= c.first_row[i + 1])
    i++;

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

/* The direct kernel ------------------------------------------------------ */

constexpr int DIRECT_W = 32;    /* output pixels of a tile row */
constexpr int DIRECT_MAX_H = 64;
constexpr int DIRECT_MIN_H = 8;
/* The widest reach a tile holds; a wider filter takes the whole plane. */
constexpr int DIRECT_MAX_REACH = 64;

/* Taps and columns are handled 4 at a time (one float4). */
__host__ __device__ constexpr int
quad_up (int n)
{
  return (n + 3) & ~3;
}

/* A tile w x h of a plane whose filter reaches rx, ry, with taps padded
 * to t4x, t4y (matrix: rows of t4x) stages `direct_cols` columns and
 * `direct_rows` rows: its outputs, 4 a thread, and the taps' last chunk
 * past them. */
__host__ __device__ constexpr int
direct_cols (int w, int t4x)
{
  return quad_up (w) + t4x;
}

__host__ __device__ constexpr int
direct_rows (int nt, int h, int ry, int t4y)
{
  return nt == 0 ? h + 2 * ry : quad_up (h) + t4y;
}

/* Floats of one plane's taps: each term's horizontal taps, then each
 * term's vertical taps; or the matrix's side rows. */
__host__ __device__ constexpr int
direct_taps (int nt, int t4x, int t4y, int side)
{
  return nt == 0 ? side * t4x : nt * (t4x + t4y);
}

/* One block's work: a tile of one component of a plane, inside one of
 * its rectangles. */
struct DirectItem
{
  int x0, y0;                   /* the tile's first pixel */
  uint8_t plane, comp;
  uint8_t w, h;                 /* at most DIRECT_W x tile_h */
};

struct DirectPlane
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int width, height;            /* pixels, for the border */
  int row_begin, row_end;       /* the whole plane (band_params_init) */
  int nc, bytes, shift;
  uint32_t mask;                /* 2^depth - 1: the bits read, the saturation */
  uint32_t word_mask;           /* 0xff or 0xffff */
  uint32_t fill;                /* a FILL sample as it is stored */
  uint8_t op[CUCONV_MAX_COMP];  /* CuconvCompOp */
  int rx, ry;                   /* the filter's reach on the plane */
  int t4x, t4y;                 /* taps a term, 0-padded to a multiple of 4 */
  int taps;                     /* the first of them in DirectParams.taps */
};

/* Shared memory, in floats: the block's taps, the staged input, the
 * horizontal pass's rows of each term, the border tables. */
struct DirectParams
{
  DirectPlane plane[REGION_MAX_PLANES];
  const float *taps;            /* device memory, uploaded with the items */
  const DirectItem *items;
  int border;
  int combine;
  float amount;
  int side;                     /* the matrix's, when n_terms is 0 */
  int taps_cap, stage_cap, hbuf_cap, cols_cap;
};

/* acc[o] += k[u] * w[u + o], u < 4, in tap order for every output. */
__device__ __forceinline__ void
fma_chunk (float acc[4], const float4 & k, const float w[8])
{
  const float kk[4] = { k.x, k.y, k.z, k.w };

#pragma unroll
  for (int u = 0; u < 4; u++)
#pragma unroll
    for (int o = 0; o < 4; o++)
      acc[o] = fmaf (kk[u], w[u + o], acc[o]);
}

/* acc[o] += sum_t k[t] * row[o + t], o < 4, over the n taps (a multiple
 * of 4; the padding taps are 0): a float4 of the row and one of the taps
 * a chunk.  row and k are 16-byte aligned; row[n + 3] is read. */
__device__ __forceinline__ void
hrow (const float *row, const float *k, int n, float acc[4])
{
  const float4 *r4 = (const float4 *) row, *k4 = (const float4 *) k;
  float4 a = r4[0];

  for (int q = 0; q < n / 4; q++) {
    const float4 b = r4[q + 1];
    const float w[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };

    fma_chunk (acc, k4[q], w);
    a = b;
  }
}

/* acc[o] += sum_t k[t] * col[(o + t) * stride], o < 4, likewise down a
 * column; col[(n + 3) * stride] is read. */
__device__ __forceinline__ void
vcol (const float *col, int stride, const float *k, int n, float acc[4])
{
  const float4 *k4 = (const float4 *) k;
  float w[8];

#pragma unroll
  for (int o = 0; o < 4; o++)
    w[4 + o] = col[o * stride];
  for (int q = 0; q < n / 4; q++) {
#pragma unroll
    for (int o = 0; o < 4; o++) {
      w[o] = w[4 + o];
      w[4 + o] = col[(4 * q + 4 + o) * stride];
    }
    fma_chunk (acc, k4[q], w);
  }
}

/* Sample k (a component of a pixel) of row `row`, as a value. */
__device__ __forceinline__ float
direct_load (const DirectPlane & pl, const uint8_t * row, size_t k)
{
  const uint32_t raw = pl.bytes == 1 ? row[k] : ((const uint16_t *) row)[k];

  return sample_to_float ((raw >> pl.shift) & pl.mask);
}

__device__ __forceinline__ void
direct_store (const DirectPlane & pl, int x, int y, int comp, uint32_t word)
{
  uint8_t *row = pl.dst + (size_t) y * pl.dst_pitch;
  const size_t k = (size_t) x * pl.nc + comp;

  if (pl.bytes == 1)
    row[k] = (uint8_t) word;
  else
    ((uint16_t *) row)[k] = (uint16_t) word;
}

/* A value rounded, saturated and shifted into the sample's word. */
__device__ __forceinline__ uint32_t
direct_word (const DirectPlane & pl, float v)
{
  return (cuconv_round_sat (v, pl.mask) << pl.shift) & pl.word_mask;
}

/* Loads a block has in flight at once, each thread STAGE_BATCH. */
constexpr int STAGE_BATCH = 8;

/* Stages component comp of the tile: stage[r * cols + c], r < rows,
 * c < cols, is the value of the pixel (colmap[c], rowmap[r]), 0 where
 * either is -1.  Each thread issues STAGE_BATCH loads before it stores
 * any, so a block waits for memory a few times, not once a row. */
__device__ __forceinline__ void
direct_stage (const DirectPlane & pl, int comp, float *stage, int cols,
    int rows, const int *colmap, const int *rowmap)
{
  const int n = rows * cols, dr = THREADS / cols, dc = THREADS % cols;
  int r = threadIdx.x / cols, c = threadIdx.x % cols;

  for (int e = threadIdx.x; e < n; e += STAGE_BATCH * THREADS) {
    float v[STAGE_BATCH];

#pragma unroll
    for (int u = 0; u < STAGE_BATCH; u++) {
      /* (r, c) is element e + u THREADS, row-major */
      v[u] = 0.0f;
      if (e + u * THREADS < n) {
        const int y = rowmap[r], x = colmap[c];

        if (y >= 0 && x >= 0)
          v[u] = direct_load (pl, pl.src + (size_t) y * pl.src_pitch,
              (size_t) x * pl.nc + comp);
      }
      r += dr;
      c += dc;
      if (c >= cols) {
        c -= cols;
        r++;
      }
    }
#pragma unroll
    for (int u = 0; u < STAGE_BATCH; u++)
      if (e + u * THREADS < n)
        stage[e + u * THREADS] = v[u];
  }
}

/* A block's tile in shared memory: its taps, its input staged with the
 * reach (cols x rows floats), the horizontal pass's rows of each term. */
struct DirectTile
{
  DirectItem it;
  int cols, rows, w4;
  const float *taps, *stage;
  float *hbuf;
};

/* The matrix, rows outer: 4 outputs of a row a thread. */
__device__ void
direct_matrix (const DirectParams & p, const DirectPlane & pl,
    const DirectTile & t)
{
  for (int i = threadIdx.x; i < t.it.h * t.w4; i += THREADS) {
    const int y = i / t.w4, x = 4 * (i - y * t.w4);
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

    for (int j = 0; j < p.side; j++)
      hrow (t.stage + (y + j) * t.cols + x, t.taps + j * pl.t4x, pl.t4x, acc);
#pragma unroll
    for (int o = 0; o < 4; o++)
      if (x + o < t.it.w)
        direct_store (pl, t.it.x0 + x + o, t.it.y0 + y, t.it.comp,
            direct_word (pl, acc[o]));
  }
}

/* NT separable terms: horizontally every staged row of every term, 4
 * outputs a thread; then vertically, 4 rows of a column a thread, and the
 * terms combined. */
template < int NT > __device__ void
direct_separable (const DirectParams & p, const DirectPlane & pl,
    const DirectTile & t)
{
  const int hs = 4 * t.w4, rows = t.rows, w = t.it.w, h = t.it.h;
  const float *ky = t.taps + NT * pl.t4x;

  for (int i = threadIdx.x; i < NT * rows * t.w4; i += THREADS) {
    const int m = NT == 1 ? 0 : i / (rows * t.w4);
    const int k = i - m * rows * t.w4, r = k / t.w4;
    const int x = 4 * (k - r * t.w4);
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

    hrow (t.stage + r * t.cols + x, t.taps + m * pl.t4x, pl.t4x, acc);
    *(float4 *) (t.hbuf + (m * rows + r) * hs + x) =
        make_float4 (acc[0], acc[1], acc[2], acc[3]);
  }
  __syncthreads ();

  for (int i = threadIdx.x; i < w * (quad_up (h) / 4); i += THREADS) {
    const int y = 4 * (i / w), x = i % w;
    float v[NT][4];

#pragma unroll
    for (int m = 0; m < NT; m++) {
#pragma unroll
      for (int o = 0; o < 4; o++)
        v[m][o] = 0.0f;
      vcol (t.hbuf + (m * rows + y) * hs + x, hs, ky + m * pl.t4y, pl.t4y,
          v[m]);
    }
#pragma unroll
    for (int o = 0; o < 4; o++) {
      if (y + o >= h)
        break;
      const float in = t.stage[(pl.ry + y + o) * t.cols + pl.rx + x];
      const float out = combine_terms (p.combine, p.amount, in,
          v[0][o], v[NT - 1][o]);
      direct_store (pl, t.it.x0 + x, t.it.y0 + y + o, t.it.comp,
          direct_word (pl, out));
    }
  }
}

/* NT: 1 or 2 separable terms, or 0 for the matrix. */
template < int NT > __global__ void
__launch_bounds__ (THREADS)
region_direct (const __grid_constant__ DirectParams p)
{
  extern __shared__ float4 direct_shared[];
  const DirectItem it = p.items[blockIdx.x];
  const DirectPlane & pl = p.plane[it.plane];
  float *taps = (float *) direct_shared;
  float *stage = taps + p.taps_cap;
  float *hbuf = stage + p.stage_cap;
  int *colmap = (int *) (hbuf + p.hbuf_cap);
  int *rowmap = colmap + p.cols_cap;

  /* a filled component (copied ones have no items: dst holds them) */
  if (pl.op[it.comp] != CUCONV_COMP_FILTER) {
    for (int i = threadIdx.x; i < it.w * it.h; i += THREADS)
      direct_store (pl, it.x0 + i % it.w, it.y0 + i / it.w, it.comp, pl.fill);
    return;
  }

  const int cols = direct_cols (it.w, pl.t4x);
  const int rows = direct_rows (NT, it.h, pl.ry, pl.t4y);
  const int n_taps = direct_taps (NT, pl.t4x, pl.t4y, p.side);

  /* the taps, and where each staged column and row reads */
  for (int i = threadIdx.x; i < n_taps; i += THREADS)
    taps[i] = p.taps[pl.taps + i];
  build_border_tables ((CuconvBorder) p.border, 1, pl.width, pl.height,
      colmap, cols, it.x0 - pl.rx, rowmap, rows, it.y0 - pl.ry);
  __syncthreads ();

  direct_stage (pl, it.comp, stage, cols, rows, colmap, rowmap);
  __syncthreads ();

  const DirectTile t = { it, cols, rows, quad_up (it.w) / 4, taps, stage,
    hbuf
  };
  if constexpr (NT == 0)
    direct_matrix (p, pl, t);
  else
    direct_separable < NT > (p, pl, t);
}

/* Which components of a plane the direct kernel writes: the filtered and
 * the filled ones (dst holds the copied ones already). */
static int
written_components (const CuconvPlane & pl)
{
  int n = 0;

  for (int c = 0; c < pl.n_comp; c++)
    n += pl.op[c] != CUCONV_COMP_COPY;
  return n;
}

static bool
has_filtered (const CuconvPlane & pl)
{
  for (int c = 0; c < pl.n_comp; c++)
    if (pl.op[c] == CUCONV_COMP_FILTER)
      return true;
  return false;
}

/* How far f reads from an output sample of pl, horizontally and
 * vertically: the widest of its terms' taps, or the matrix's radius. */
static void
plane_reach (const CuconvFilter & f, const CuconvPlane & pl, int *rx, int *ry)
{
  if (f.n_terms == 0) {
    *rx = *ry = f.m.radius;
    return;
  }
  *rx = cuconv_filter_taps_x (&f, &pl)->radius;
  *ry = cuconv_filter_taps_y (&f, &pl)->radius;
  if (f.n_terms == 2) {
    *rx = max (*rx, f.x2[pl.sub_x - 1].radius);
    *ry = max (*ry, f.y2[pl.sub_y - 1].radius);
  }
}

/* Whether the direct kernel computes f: one or two separable terms, or
 * the matrix, each a plain convolution of taps that reach at most
 * DIRECT_MAX_REACH.  A filter computed another way than by its taps must
 * be refused here. */
static bool
direct_takes_filter (const CuconvFilter & f)
{
  if (filter_is_wide (f))
    return false;               /* untruncated, or taps past the tiles */
  if (f.n_terms == 0)
    return f.m.radius <= DIRECT_MAX_REACH;
  if (f.n_terms > 2)
    return false;
  for (int s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    if (f.x[s].radius > DIRECT_MAX_REACH || f.y[s].radius > DIRECT_MAX_REACH)
      return false;
    if (f.n_terms == 2 && (f.x2[s].radius > DIRECT_MAX_REACH ||
            f.y2[s].radius > DIRECT_MAX_REACH))
      return false;
  }
  return true;
}

/* Whether the direct kernel takes plane pl: 1 to 4 components, 16-bit
 * samples 2-byte aligned. */
static bool
direct_takes_plane (const CuconvPlane & pl)
{
  return pl.n_comp >= 1 && pl.n_comp <= CUCONV_MAX_COMP &&
      (cuconv_plane_sample_bytes (&pl) == 1 || ((uintptr_t) pl.src |
          (uintptr_t) pl.dst | (size_t) pl.src_stride |
          (size_t) pl.dst_stride) % 2 == 0);
}

/* The direct kernel's view of plane pl under f. */
static void
direct_plane_init (DirectPlane & d, const CuconvPlane & pl,
    const CuconvFilter & f)
{
  const int depth = pl.depth > 8 ? pl.depth : 8;

  band_params_init (d, pl, 0, pl.height);
  d.nc = pl.n_comp;
  d.bytes = cuconv_plane_sample_bytes (&pl);
  d.shift = depth > 8 ? pl.shift : 0;
  d.mask = (1u << depth) - 1;
  d.word_mask = d.bytes == 1 ? 0xffu : 0xffffu;
  /* words are stored as they fit, as the reference cuts them */
  d.fill = (pl.fill << d.shift) & d.word_mask;
  memcpy (d.op, pl.op, sizeof (d.op));
  if (!has_filtered (pl))
    return;
  plane_reach (f, pl, &d.rx, &d.ry);
  d.t4x = quad_up (2 * d.rx + 1);
  d.t4y = f.n_terms == 0 ? 0 : quad_up (2 * d.ry + 1);
}

/* Writes the taps of plane pl (direct_taps of them) to out: each term's
 * centred in the plane's reach, 0 around them, so a narrower term adds
 * exact zeros. */
static void
direct_taps_write (float *out, const DirectPlane & d, const CuconvPlane & pl,
    const CuconvFilter & f)
{
  const int nt = f.n_terms, side = 2 * f.m.radius + 1;

  memset (out, 0, sizeof (float) * direct_taps (nt, d.t4x, d.t4y, side));
  if (nt == 0) {
    for (int j = 0; j < side; j++)
      memcpy (out + j * d.t4x, f.m.w + j * side, sizeof (float) * side);
    return;
  }
  for (int m = 0; m < nt; m++) {
    const CuconvTaps *x = m == 0 ? &f.x[pl.sub_x - 1] : &f.x2[pl.sub_x - 1];
    const CuconvTaps *y = m == 0 ? &f.y[pl.sub_y - 1] : &f.y2[pl.sub_y - 1];

    memcpy (out + m * d.t4x + d.rx - x->radius, x->w,
        sizeof (float) * (2 * x->radius + 1));
    memcpy (out + nt * d.t4x + m * d.t4y + d.ry - y->radius, y->w,
        sizeof (float) * (2 * y->radius + 1));
  }
}

/* A length cut into n tiles of at most max: the first `extra` one longer
 * than the others, so that no tile is a sliver.  One tile, the common
 * case of many small rectangles, without a division. */
struct Split
{
  int n, len, extra;
  Split (int total, int max)
  : n (1), len (total), extra (0)
  {
    if (total > max) {
      n = (total + max - 1) / max;
      len = total / n;
      extra = total % n;
    }
  }
  int start (int i) const
  {
    return i * len + min (i, extra);
  }
  int size (int i) const
  {
    return len + (i < extra);
  }
};

/* Roughly the work of the direct tiles of a rectangle w x h cut into
 * nx x ny tiles: the samples they stage and their FMAs, each tile's
 * reach and padding counted (sums over the tiles, in closed form). */
static double
direct_rect_cost (const DirectPlane & d, int nt, int w, int h, int nx,
    int ny)
{
  const double rows = h + (double) ny * (nt == 0 ? 2 * d.ry : d.t4y + 3);
  const double cols = w + nx * (d.t4x + 3.0);

  if (nt == 0)
    return rows * cols + (double) h * (w + 3.0 * nx) * (2 * d.ry + 1) * d.t4x;
  return rows * cols + nt * (rows * (w + 3.0 * nx) * d.t4x +
      (double) w * (h + 3.0 * ny) * d.t4y);
}

/* How much a unit of direct_rect_cost costs against one of the whole
 * plane's: 1 takes both paths as equally efficient, so the whole plane
 * goes first as soon as the tiles (overlaps counted each time) would
 * stage and multiply more than it.  To be set from bench-kernel's
 * 64-rectangle rows. */
#define DIRECT_COST_WEIGHT 1.0

/* ... and the same count for the whole plane through the whole-plane
 * kernels (tiles of 64 rows), to compare with. */
static double
whole_plane_cost (const DirectPlane & d, int nt, const CuconvPlane & pl)
{
  const double px = (double) pl.width * pl.height / DIRECT_COST_WEIGHT;

  if (nt == 0)
    return px * (1.0 + (2 * d.rx + 1) * (2 * d.ry + 1));
  return px * (1.0 + nt * ((2 * d.rx + 1) * (64.0 + 2 * d.ry) / 64.0 +
          2 * d.ry + 1));
}

/* The shared memory of a launch whose tiles are at most tile_h high, for
 * the planes in `on`: fills the caps of p, returns the bytes. */
static size_t
direct_smem (DirectParams & p, const CuconvFilter & f, const bool *on,
    int n_planes, int tile_h)
{
  const int nt = f.n_terms, side = 2 * f.m.radius + 1;
  int rows = 0, cols = 0;

  p.taps_cap = 0;
  for (int i = 0; i < n_planes; i++) {
    const DirectPlane & d = p.plane[i];

    if (!on[i] || d.t4x == 0)
      continue;
    p.taps_cap = max (p.taps_cap, direct_taps (nt, d.t4x, d.t4y, side));
    rows = max (rows, direct_rows (nt, tile_h, d.ry, d.t4y));
    cols = max (cols, direct_cols (DIRECT_W, d.t4x));
  }
  p.stage_cap = rows * cols;
  p.hbuf_cap = nt * rows * DIRECT_W;
  p.cols_cap = cols;
  return sizeof (float) * ((size_t) p.taps_cap + p.stage_cap + p.hbuf_cap +
      cols + rows);
}

typedef void (*DirectKernel) (DirectParams);

static cudaError_t
launch_direct (const DirectParams & p, int nt, int blocks, size_t smem,
    cudaStream_t stream)
{
  static SmemLimit limits[3];
  const DirectKernel k = nt == 0 ? region_direct < 0 > : nt == 1 ?
      region_direct < 1 > : region_direct < 2 >;

  if (blocks == 0)
    return cudaSuccess;
  return launch_smem ((const void *) k, (int) smem, limits[nt],[&]{
        k <<< blocks, THREADS, smem, stream >>> (p);});
}

}                               /* namespace cuconv */

using namespace cuconv;

/* Page-locked memory the host writes a frame's work in, uploaded from
 * there: a few, used in turn, so that the host may write a frame while
 * the previous ones' uploads still wait in the stream. */
#define WORK_SLOTS 4

struct WorkSlot
{
  uint8_t *host;
  size_t size;
  cudaEvent_t uploaded;         /* recorded after its upload */
};

struct _CuconvRegionFilter
{
  uint8_t *scratch;             /* planes filtered whole (INSIDE) */
  size_t scratch_size;
  uint8_t *d_work;              /* a frame's taps, tiles and copy jobs */
  size_t d_work_size;
  WorkSlot slot[WORK_SLOTS];
  int next_slot;
  CuconvRect *clipped;          /* the rectangles on each plane */
  size_t clipped_cap;
  cudaStream_t last_stream;     /* the previous frame's */
  bool any_frame;
  cudaEvent_t done;             /* recorded after the last launch */
  cuconv::Scratch wide;         /* the wide paths' intermediates */
};

namespace cuconv {

static size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Bytes of one pixel of pl. */
static int
pixel_bytes (const CuconvPlane & pl)
{
  return pl.n_comp * cuconv_plane_sample_bytes (&pl);
}

/* The next slot, at least `bytes` large, once the upload it served
 * WORK_SLOTS frames ago is done. */
static cudaError_t
work_begin (CuconvRegionFilter * rf, size_t bytes, uint8_t ** host)
{
  WorkSlot & w = rf->slot[rf->next_slot];
  cudaError_t e = cudaEventSynchronize (w.uploaded);
  uint8_t *p = NULL;

  *host = w.host;
  if (e != cudaSuccess || bytes <= w.size)
    return e;
  bytes = align_up (bytes + bytes / 4, 4096);
  e = cudaHostAlloc ((void **) &p, bytes, cudaHostAllocPortable);
  if (e != cudaSuccess)
    return e;
  cudaFreeHost (w.host);
  w.host = *host = p;
  w.size = bytes;
  return cudaSuccess;
}

/* Grows a device buffer of rf to at least `bytes` (25 % more).  The old
 * one may still be read by the previous frame's launches: waits for them
 * first. */
static cudaError_t
device_grow (CuconvRegionFilter * rf, uint8_t ** buf, size_t * size,
    size_t bytes)
{
  cudaError_t e;

  if (bytes <= *size)
    return cudaSuccess;
  e = cudaEventSynchronize (rf->done);
  if (e != cudaSuccess)
    return e;
  cudaFree (*buf);
  *buf = NULL;
  *size = 0;
  bytes = align_up (bytes + bytes / 4, 1 << 16);
  e = cudaMalloc ((void **) buf, bytes);
  if (e != cudaSuccess) {
    *buf = NULL;
    return e;
  }
  *size = bytes;
  return cudaSuccess;
}

/* Uploads the first `bytes` of the slot work_begin gave to d_work, after
 * the previous frame's launches, which read d_work: the stream's order
 * keeps them apart, or the wait when the frame came on another stream. */
static cudaError_t
work_upload (CuconvRegionFilter * rf, size_t bytes, cudaStream_t stream)
{
  WorkSlot & w = rf->slot[rf->next_slot];
  cudaError_t e = cudaSuccess;

  if (rf->any_frame && stream != rf->last_stream)
    e = cudaStreamWaitEvent (stream, rf->done, 0);
  if (e == cudaSuccess)
    e = device_grow (rf, &rf->d_work, &rf->d_work_size, bytes);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync (rf->d_work, w.host, bytes, cudaMemcpyHostToDevice,
        stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (w.uploaded, stream);
  if (e != cudaSuccess)
    return e;
  rf->next_slot = (rf->next_slot + 1) % WORK_SLOTS;
  return cudaSuccess;
}

/* The end of a frame that used rf's device buffers. */
static cudaError_t
work_end (CuconvRegionFilter * rf, cudaStream_t stream)
{
  rf->last_stream = stream;
  rf->any_frame = true;
  return cudaEventRecord (rf->done, stream);
}

/* The rectangles on each plane (cuconv_rect_on_plane), the empty ones
 * dropped: those of plane i are rf->clipped[first[i]] to
 * rf->clipped[first[i + 1] - 1]. */
static cudaError_t
clip_rects (CuconvRegionFilter * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, int *first)
{
  const size_t need = (size_t) n_planes * reg.n_rects;
  int n = 0;

  if (need > rf->clipped_cap) {
    CuconvRect *c = (CuconvRect *) realloc (rf->clipped,
        sizeof (CuconvRect) * need);

    if (!c)
      return cudaErrorMemoryAllocation;
    rf->clipped = c;
    rf->clipped_cap = need;
  }
  for (int i = 0; i < n_planes; i++) {
    first[i] = n;
    for (int k = 0; k < reg.n_rects; k++)
      n += cuconv_rect_on_plane (&reg.rects[k], &planes[i], &rf->clipped[n]);
  }
  first[n_planes] = n;
  return cudaSuccess;
}

/* Numbers the blocks of jobs [0, n); returns how many there are. */
static int
number_blocks (CopyJob * jobs, int n)
{
  int blocks = 0;

  for (int i = 0; i < n; i++) {
    jobs[i].first_block = blocks;
    blocks += (jobs[i].h + COPY_ROWS - 1) / COPY_ROWS;
  }
  return blocks;
}

/* The jobs that copy each rectangle of the planes marked in `on` from
 * src to dst, the same place in both, numbered; returns how many. */
static int
rect_jobs (const CuconvRegionFilter * rf, const int *first, int n_planes,
    const bool *on, CopyJob * out)
{
  int n = 0;

  for (int i = 0; i < n_planes; i++) {
    for (int k = first[i]; on[i] && k < first[i + 1]; k++) {
      const CuconvRect & r = rf->clipped[k];

      out[n++] = { i, r.x, r.y, r.x, r.y, r.w, r.h, 0 };
    }
  }
  return n;
}

/* One launch of copy_rects over the jobs uploaded to p.jobs, numbered
 * (number_blocks) before. */
static cudaError_t
launch_copy (const CopyParams & p, int blocks, cudaStream_t stream)
{
  if (p.n_jobs == 0 || blocks == 0)
    return cudaSuccess;
  copy_rects <<< blocks, COPY_THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

/* The source of every plane to dst, in one launch. */
static cudaError_t
copy_planes (const CuconvPlane * planes, int n_planes, cudaStream_t stream)
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

/* INSIDE: which planes take the direct kernel and which are filtered
 * whole, the tile height, and the sizes of the work. */
struct InsidePlan
{
  int first[REGION_MAX_PLANES + 1];     /* the rectangles (clip_rects) */
  bool direct[REGION_MAX_PLANES];
  bool whole[REGION_MAX_PLANES];
  int tile_h;
  size_t smem;
  long long n_items, n_taps;
  int n_jobs;
};

/* The multiprocessors of the current device; 66 (half an H100) when the
 * runtime cannot say. */
static int
sm_count (void)
{
  int sms;

  if (device_sm_count (&sms) != cudaSuccess) {
    cudaGetLastError ();
    return 66;
  }
  return sms;
}

/* The items of the direct planes' rectangles in tiles of plan.tile_h
 * rows: a tile a written component. */
static long long
direct_item_count (const InsidePlan & plan, const CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes)
{
  long long n = 0;

  for (int i = 0; i < n_planes; i++) {
    long long tiles = 0;

    for (int k = plan.first[i]; plan.direct[i] && k < plan.first[i + 1];
        k++) {
      const CuconvRect & r = rf->clipped[k];

      tiles += (long long) Split (r.w, DIRECT_W).n *
          Split (r.h, plan.tile_h).n;
    }
    n += tiles * written_components (planes[i]);
  }
  return n;
}

/* Decides, for each plane with a written component: the direct kernel
 * where it takes the filter and the plane, and the plane's rectangles
 * cost less than the plane; else the whole plane. */
static cudaError_t
plan_inside (InsidePlan & plan, DirectParams & dp, CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter & f,
    const CuconvRegions & reg)
{
  const bool takes = direct_takes_filter (f);
  bool filtered[REGION_MAX_PLANES];
  int ry = 0;
  cudaError_t e;

  memset (&plan, 0, sizeof (plan));
  e = clip_rects (rf, planes, n_planes, reg, plan.first);
  if (e != cudaSuccess)
    return e;
  for (int i = 0; i < n_planes; i++) {
    direct_plane_init (dp.plane[i], planes[i], f);
    filtered[i] = has_filtered (planes[i]);
    /* a plane without a filtered component is cheap to write directly */
    plan.direct[i] = written_components (planes[i]) > 0 &&
        plan.first[i + 1] > plan.first[i] &&
        (!filtered[i] || (takes && direct_takes_plane (planes[i])));
    plan.whole[i] = filtered[i] && !plan.direct[i] &&
        plan.first[i + 1] > plan.first[i];
    if (plan.direct[i])
      ry = max (ry, dp.plane[i].ry);
  }

  /* the tallest tile that fits; tall ones cut the share of a long
   * vertical reach, short ones make more blocks */
  e = fit_tile (ry > 16 ? DIRECT_MAX_H : DIRECT_MAX_H / 2, DIRECT_MIN_H,
      [&](int h) {
        return direct_smem (dp, f, plan.direct, n_planes, h);
      }, &plan.tile_h, &plan.smem);
  if (e != cudaSuccess)
    return e;

  for (int i = 0; i < n_planes; i++) {
    const DirectPlane & d = dp.plane[i];
    const int tile_h = max (plan.tile_h, DIRECT_MIN_H);
    double cost = 0.0;

    if (!plan.direct[i] || !filtered[i])
      continue;
    for (int k = plan.first[i]; k < plan.first[i + 1]; k++) {
      const CuconvRect & r = rf->clipped[k];

      cost += direct_rect_cost (d, f.n_terms, r.w, r.h,
          Split (r.w, DIRECT_W).n, Split (r.h, tile_h).n);
    }
    if (plan.tile_h == 0 || cost > whole_plane_cost (d, f.n_terms,
            planes[i])) {
      plan.direct[i] = false;
      plan.whole[i] = true;
      continue;
    }
    plan.n_taps += direct_taps (f.n_terms, d.t4x, d.t4y, 2 * f.m.radius + 1);
  }
  /* a launch of a fraction of a wave lasts as long as its slowest block:
   * shorter tiles, down to DIRECT_MIN_H, while there are fewer than two
   * a multiprocessor (fill_two_waves' rule) */
  plan.tile_h = max (plan.tile_h, DIRECT_MIN_H);
  plan.n_items = direct_item_count (plan, rf, planes, n_planes);
  while (plan.tile_h > DIRECT_MIN_H && plan.n_items > 0 &&
      plan.n_items < 2LL * sm_count ()) {
    plan.tile_h /= 2;
    plan.n_items = direct_item_count (plan, rf, planes, n_planes);
  }
  for (int i = 0; i < n_planes; i++)
    if (plan.whole[i])
      plan.n_jobs += plan.first[i + 1] - plan.first[i];
  /* the shared memory of the planes that stayed direct (none when only
   * filled ones did) */
  plan.smem = direct_smem (dp, f, plan.direct, n_planes, plan.tile_h);
  return cudaSuccess;
}

/* The tiles of the rectangles of the direct planes, every written
 * component of each; returns how many. */
static long long
direct_items (const InsidePlan & plan, const CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes, DirectItem * out)
{
  const int tile_h = plan.tile_h;
  long long n = 0;

  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    for (int k = plan.first[i]; plan.direct[i] && k < plan.first[i + 1];
        k++) {
      const CuconvRect & r = rf->clipped[k];
      const Split sx (r.w, DIRECT_W), sy (r.h, tile_h);

      for (int ty = 0; ty < sy.n; ty++)
        for (int tx = 0; tx < sx.n; tx++)
          for (int c = 0; c < pl.n_comp; c++)
            if (pl.op[c] != CUCONV_COMP_COPY)
              out[n++] = { r.x + sx.start (tx), r.y + sy.start (ty),
                (uint8_t) i, (uint8_t) c, (uint8_t) sx.size (tx),
                (uint8_t) sy.size (ty) };
    }
  }
  return n;
}

static int
filter_inside (CuconvRegionFilter * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  InsidePlan plan;
  DirectParams dp;
  CopyParams sp;
  CuconvPlane whole[REGION_MAX_PLANES];
  size_t pitch[REGION_MAX_PLANES], offset[REGION_MAX_PLANES];
  size_t scratch = 0, items_at, jobs_at, bytes;
  uint8_t *work;
  int n_whole = 0, taps = 0, blocks, ret;
  cudaError_t e;

  memset (&dp, 0, sizeof (dp));
  memset (&sp, 0, sizeof (sp));
  e = plan_inside (plan, dp, rf, planes, n_planes, f, reg);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions", e);
  if (plan.n_items > INT_MAX)
    return fail (st, "too many regions for the GPU", cudaErrorInvalidValue);

  /* the source where the input stays */
  e = copy_planes (planes, n_planes, stream);
  if (e != cudaSuccess)
    return fail (st, "the GPU failed to copy a frame", e);
  if (plan.n_items == 0 && plan.n_jobs == 0)
    return 0;

  /* the work, one upload: taps, tiles, the whole planes' copy jobs */
  items_at = align_up (sizeof (float) * plan.n_taps, 16);
  jobs_at = align_up (items_at + sizeof (DirectItem) * plan.n_items, 16);
  bytes = jobs_at + sizeof (CopyJob) * plan.n_jobs;
  e = work_begin (rf, bytes, &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  for (int i = 0; i < n_planes; i++) {
    DirectPlane & d = dp.plane[i];

    if (!plan.direct[i] || d.t4x == 0)
      continue;
    d.taps = taps;
    direct_taps_write ((float *) work + taps, d, planes[i], f);
    taps += direct_taps (f.n_terms, d.t4x, d.t4y, 2 * f.m.radius + 1);
  }
  direct_items (plan, rf, planes, n_planes, (DirectItem *) (work + items_at));
  sp.n_jobs = rect_jobs (rf, plan.first, n_planes, plan.whole,
      (CopyJob *) (work + jobs_at));

  /* the whole planes' scratch */
  for (int i = 0; i < n_planes; i++) {
    pitch[i] = align_up ((size_t) planes[i].width * pixel_bytes (planes[i]),
        SCRATCH_PITCH_ALIGN);
    offset[i] = scratch;
    if (plan.whole[i])
      scratch += align_up (pitch[i] * planes[i].height, SCRATCH_PLANE_ALIGN);
  }

  blocks = number_blocks ((CopyJob *) (work + jobs_at), sp.n_jobs);
  e = work_upload (rf, bytes, stream);
  if (e == cudaSuccess)
    e = device_grow (rf, &rf->scratch, &rf->scratch_size, scratch);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions on the GPU", e);

  /* the whole planes into the scratch, their rectangles from there */
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    uint8_t *s = rf->scratch + offset[i];

    if (!plan.whole[i])
      continue;
    whole[n_whole] = pl;
    whole[n_whole].dst = s;
    whole[n_whole++].dst_stride = (ptrdiff_t) pitch[i];
    sp.plane[i] = { s, pitch[i], pl.dst, (size_t) pl.dst_stride,
        pixel_bytes (pl) };
  }
  sp.jobs = (const CopyJob *) (rf->d_work + jobs_at);
  if (n_whole > 0) {
    ret = filter_frame (whole, n_whole, &f, CUCONV_PATH_AUTO, rf->wide,
        stream, st);
    if (ret != 0)
      return ret;
    e = launch_copy (sp, blocks, stream);
  }

  /* the direct planes' rectangles */
  dp.taps = (const float *) rf->d_work;
  dp.items = (const DirectItem *) (rf->d_work + items_at);
  dp.border = f.border;
  dp.combine = f.combine;
  dp.amount = f.amount;
  dp.side = 2 * f.m.radius + 1;
  if (e == cudaSuccess)
    e = launch_direct (dp, f.n_terms, (int) plan.n_items, plan.smem, stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

static int
filter_outside (CuconvRegionFilter * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  int first[REGION_MAX_PLANES + 1];
  bool on[REGION_MAX_PLANES];
  CopyParams sp;
  uint8_t *work;
  int blocks, ret;
  cudaError_t e;

  e = clip_rects (rf, planes, n_planes, reg, first);
  if (e == cudaSuccess)
    e = work_begin (rf, sizeof (CopyJob) * first[n_planes], &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  ret = filter_frame (planes, n_planes, &f, CUCONV_PATH_AUTO, rf->wide,
      stream, st);
  if (ret != 0)
    return ret;

  /* the source back inside the rectangles (the filter copied the planes
   * that only copy) */
  memset (&sp, 0, sizeof (sp));
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    on[i] = !all_ops (pl, CUCONV_COMP_COPY);
    sp.plane[i] = { pl.src, (size_t) pl.src_stride, pl.dst,
        (size_t) pl.dst_stride, pixel_bytes (pl) };
  }
  sp.n_jobs = rect_jobs (rf, first, n_planes, on, (CopyJob *) work);
  if (sp.n_jobs == 0)
    return 0;
  blocks = number_blocks ((CopyJob *) work, sp.n_jobs);

  e = work_upload (rf, sizeof (CopyJob) * sp.n_jobs, stream);
  sp.jobs = (const CopyJob *) rf->d_work;
  if (e == cudaSuccess)
    e = launch_copy (sp, blocks, stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

}                               /* namespace cuconv */

extern "C" void
cuconv_region_filter_free (CuconvRegionFilter * rf)
{
  if (!rf)
    return;
  /* the last frame's launches may still read the buffers */
  if (rf->done)
    cudaEventSynchronize (rf->done);
  for (int i = 0; i < WORK_SLOTS; i++) {
    if (rf->slot[i].uploaded) {
      cudaEventSynchronize (rf->slot[i].uploaded);
      cudaEventDestroy (rf->slot[i].uploaded);
    }
    cudaFreeHost (rf->slot[i].host);
  }
  scratch_free (rf->wide);
  cudaFree (rf->scratch);
  cudaFree (rf->d_work);
  if (rf->done)
    cudaEventDestroy (rf->done);
  cudaGetLastError ();
  free (rf->clipped);
  free (rf);
}

extern "C" CuconvRegionFilter *
cuconv_region_filter_new (CuconvStatus * st)
{
  CuconvRegionFilter *rf =
      (CuconvRegionFilter *) calloc (1, sizeof (CuconvRegionFilter));
  cudaError_t e;

  if (!rf) {
    fail (st, "out of host memory for the regions", cudaErrorMemoryAllocation);
    return NULL;
  }
  e = cudaEventCreateWithFlags (&rf->done, cudaEventDisableTiming);
  for (int i = 0; i < WORK_SLOTS && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags (&rf->slot[i].uploaded,
        cudaEventDisableTiming);
  if (e != cudaSuccess) {
    fail (st, "cannot create a CUDA event for the regions", e);
    cuconv_region_filter_free (rf);
    return NULL;
  }
  return rf;
}

extern "C" int
cuconv_region_filter_device (CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  const cudaStream_t s = (cudaStream_t) stream;
  CuconvRegions reg;

  if (cuconv_regions_whole_frame (regions))
    return rf ? filter_frame (planes, n_planes, f, CUCONV_PATH_AUTO, rf->wide,
        s, st) : cuconv_filter_device (planes, n_planes, f, stream, st);
  if (!rf || n_planes < 1 || n_planes > REGION_MAX_PLANES)
    return fail (st, "the region filter takes 1 to 4 planes",
        cudaErrorInvalidValue);
  reg = *regions;
  if (!reg.rects || reg.n_rects < 0)
    reg.n_rects = 0;
  if (reg.mode == CUCONV_REGION_OUTSIDE)
    return filter_outside (rf, planes, n_planes, *f, reg, s, st);
  return filter_inside (rf, planes, n_planes, *f, reg, s, st);
}
