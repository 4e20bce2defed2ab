/* gst-cudaconvolve: the box kernel, whose cost does not grow with the
 * radius: running sums instead of 2r + 1 taps.
 *
 * A block owns a TILE_W x tile_h tile, as the separable kernel does, and
 * stages the tile plus its apron in shared memory (16-byte loads for
 * interior tiles, the border tables for border tiles).  The horizontal
 * pass slides a window along segments of 32 outputs of each staged row
 * (one addition and one subtraction an output), the vertical pass slides a
 * window down each column; both in exact integers.  The result is the
 * window sum S divided by (2r + 1)^2, rounded half up, computed exactly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int SEG = 32;         /* outputs a thread slides over in a row */
constexpr int MAX_TILE_H = 64;
constexpr int COL_GROUPS = TILE_W / 4;  /* vertical pass: 4 columns a thread */
constexpr int ROW_SEGS = THREADS / COL_GROUPS;

/* Staged rows are 4 bytes longer than the span so that a warp reading one
 * column of 32 consecutive rows hits 32 banks.  The rows of sums are 4 ints
 * longer than the tile so that 8 consecutive rows' 16-byte stores do. */
__host__ __device__ constexpr int
in_pitch (const TileGeom & g)
{
  return g.span + 4;
}

constexpr int H_PITCH = TILE_W + 4;

/* Shared memory: staged bytes, the sums (16-byte aligned), the tables. */
__host__ __device__ constexpr int
hsum_offset (const TileGeom & g)
{
  return round_up16 (g.rows * in_pitch (g));
}

__host__ __device__ constexpr size_t
box_smem_bytes (const TileGeom & g)
{
  return (size_t) hsum_offset (g) + (size_t) g.rows * H_PITCH * 4
      + g.maps_bytes ();
}

static __device__ void
box_stage (const SepParams & p, const TileGeom & g, uint8_t * in,
    int *colmap, int *rowmap, int x0, int y0, bool interior)
{
  const int pitch = in_pitch (g);

  if (interior) {
    const int vpr = g.span / 16, n = g.rows * vpr;
    const uint8_t *base = p.src + (size_t) (y0 - p.ry) * p.src_pitch
        + (x0 - g.apron);
    for (int i = threadIdx.x; i < n; i += THREADS) {
      const int r = i / vpr, v = i - r * vpr;
      const uint4 d =
          __ldg ((const uint4 *) (base + (size_t) r * p.src_pitch) + v);
      uint32_t *o = (uint32_t *) (in + r * pitch + 16 * v);
      o[0] = d.x;
      o[1] = d.y;
      o[2] = d.z;
      o[3] = d.w;
    }
    return;
  }
  build_maps (p, g, colmap, rowmap, x0, y0);
  __syncthreads ();
  for (int i = threadIdx.x; i < g.rows * g.span; i += THREADS) {
    const int r = i / g.span, c = i - r * g.span;
    in[r * pitch + c] = (uint8_t) mapped_byte (p, colmap, rowmap[r], c);
  }
}

/* Window sums along segments of SEG outputs of every staged row: one
 * addition and one subtraction an output.  Item i takes row i % rows, so a
 * warp reads one column of consecutive rows. */
template < int NC > __device__ void
box_hpass (const SepParams & p, const TileGeom & g, const uint8_t * in,
    int *hsum)
{
  const int pitch = in_pitch (g), d = (2 * p.rx + 1) * NC;
  const int n = g.rows * (TILE_W / SEG);

  for (int i = threadIdx.x; i < n; i += THREADS) {
    const int r = i % g.rows, x0 = (i / g.rows) * SEG;
    /* the window of output x is lo[x], lo[x + NC], ... lo[x + d - NC] */
    const uint8_t *lo = in + r * pitch + g.apron - p.rx * NC + x0;
    const uint8_t *hi = lo + d - NC;
    int4 *out = (int4 *) (hsum + r * H_PITCH + x0);
    int s[NC], v[SEG];

#pragma unroll
    for (int c = 0; c < NC; c++) {
      s[c] = 0;
      for (int t = 0; t < d; t += NC)
        s[c] += lo[c + t];
      v[c] = s[c];
    }
#pragma unroll
    for (int x = NC; x < SEG; x++) {
      s[x % NC] += hi[x] - lo[x - NC];
      v[x] = s[x % NC];
    }
#pragma unroll
    for (int q = 0; q < SEG / 4; q++)
      out[q] = make_int4 (v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
  }
}

/* round (S / n2) for a window of n2 = (2 rx + 1)(2 ry + 1) samples, in
 * the low byte.  n2 is odd, so S / n2 is never a half: it lies at least
 * 1 / (2 n2) >= 3e-5 from one, more than the error of this float
 * evaluation (< 2.5e-5 for S < 2^22), so the result is exact. */
__device__ __forceinline__ uint32_t
box_round (int s, float inv_n2)
{
  return __float_as_uint (__fadd_rd (fmaf ((float) s, inv_n2, 0.5f),
          8388608.0f));
}

/* Window sums down each column: a thread slides 4 columns down a segment
 * of the tile's rows and writes 4 bytes a row. */
__device__ void
box_vpass (const SepParams & p, const int *hsum, int x0, int y0, int tile_h,
    bool guard)
{
  const int d = 2 * p.ry + 1;
  const float inv_n2 = 1.0f / (float) (d * (2 * p.rx + 1));
  const int len = tile_h / ROW_SEGS;
  const int cg = threadIdx.x % COL_GROUPS;
  const int o0 = (threadIdx.x / COL_GROUPS) * len;
  const int4 *h = (const int4 *) hsum + cg;
  const int x = x0 + cg * 4;
  int4 s = make_int4 (0, 0, 0, 0);

  for (int t = 0; t < d; t++) {
    const int4 v = h[(o0 + t) * (H_PITCH / 4)];
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  }
  for (int o = o0; o < o0 + len; o++) {
    if (o > o0) {
      const int4 a = h[(o + d - 1) * (H_PITCH / 4)];
      const int4 b = h[(o - 1) * (H_PITCH / 4)];
      s.x += a.x - b.x;
      s.y += a.y - b.y;
      s.z += a.z - b.z;
      s.w += a.w - b.w;
    }
    const uint32_t lo = __byte_perm (box_round (s.x, inv_n2),
        box_round (s.y, inv_n2), 0x0040);
    const uint32_t hi = __byte_perm (box_round (s.z, inv_n2),
        box_round (s.w, inv_n2), 0x0040);
    store4 (p, x, y0 + o, __byte_perm (lo, hi, 0x5410), guard);
  }
}

__global__ void
__launch_bounds__ (THREADS)
box_kernel (const __grid_constant__ SepParams p, int tile_h)
{
  const TileGeom g (p.rx, p.ry, p.nc, tile_h);
  extern __shared__ uint4 smem[];
  uint8_t *in = (uint8_t *) smem;
  int *hsum = (int *) (in + hsum_offset (g));
  int *colmap = hsum + g.rows * H_PITCH, *rowmap = colmap + g.span;
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = p.row_begin + blockIdx.y * tile_h;
  const bool interior = is_interior (p, x0, y0, tile_h);

  box_stage (p, g, in, colmap, rowmap, x0, y0, interior);
  __syncthreads ();
  if (p.nc == 1)
    box_hpass < 1 > (p, g, in, hsum);
  else
    box_hpass < 2 > (p, g, in, hsum);
  __syncthreads ();
  box_vpass (p, hsum, x0, y0, tile_h, !interior);
}

cudaError_t
launch_box (const SepParams & p, cudaStream_t stream)
{
  static SmemLimit smem_limit;
  size_t smem;
  int tile_h;
  const cudaError_t e = fit_tile (MAX_TILE_H, 8,[&](int h) {
        return box_smem_bytes (TileGeom (p.rx, p.ry, p.nc, h));
      }, &tile_h, &smem);

  if (e != cudaSuccess)
    return e;
  if (tile_h == 0)
    return cudaErrorNotSupported;       /* too little shared memory */
  return launch_tiled (box_kernel, p, tile_h, smem, smem_limit, stream);
}


/* Whole planes by running sums through global memory -------------------
 *
 * For any radius up to CUCONV_MAX_RADIUS, on every device (docs/design.md,
 * "Wide filters through global memory"): the shared memory a block needs
 * follows the plane's width, not the radius.  Exact integer sums, as
 * above, of samples of up to 10 bits: a window of 2049 x 2049 of them
 * sums to less than 2^32, so every sum is kept modulo 2^32 and the
 * differences that give a window come out exact.
 *
 * With C(j) the sum of a column's (or a row's) first j samples, the sum of
 * its samples extended through the border over [0, k) is E(k), a
 * combination of a few C(j) (ext_terms), and a window [y - r, y + r] sums
 * to E(y + r + 1) - E(y - r).  Three kernels:
 *
 *   box_col_totals  each column's sum over segments of BS_SEG rows
 *   box_col_scan    their prefix over the segments: C at every segment's
 *                   first row (block-parallel: 16 groups of segments a
 *                   column, then a scan of the groups)
 *   box_rows        a block a band of seg_out rows, all columns: the
 *                   vertical window sums of its first row from the
 *                   segments' prefixes (and at most BS_SEG - 1 rows each),
 *                   then for each row their prefix along the row (a
 *                   block-wide scan into shared memory), the horizontal
 *                   window of each output from two of its entries, and
 *                   the vertical sums slid one row down (one addition and
 *                   one subtraction a sample).
 *
 * The plane is read about three times (the last two mostly from L2), the
 * output written once; the intermediates are a few per cent of it. */

constexpr int BS_SEG = 8;       /* rows a segment of the column prefix */
constexpr int BS_GROUPS = 16;   /* box_col_scan: groups of segments */
constexpr int BS_MAX_THREADS = 512;     /* box_rows: 128 registers a thread */

/* Pixels a thread of box_rows holds at most: 16 samples, 32 for 3 or 4
 * components, so that a 4K row of any format fits a block. */
__host__ __device__ constexpr int
bs_ppt_max (int nc)
{
  return nc <= 2 ? 16 / nc : 32 / nc;
}
constexpr int BS_TOTALS_RUN = 4;        /* box_col_totals: samples a thread */

struct BoxSumParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;  /* bytes */
  int width, height;            /* pixels, rows */
  int row_begin, row_end;
  int ws;                       /* samples a row: width * nc */
  int nc;
  int border;
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask;
  uint32_t word_mask;           /* 0xff or 0xffff */
  uint32_t fill;                /* the FILL word as stored */
  uint8_t op[CUCONV_MAX_COMP];  /* CuconvCompOp */
  int rx, ry;
  uint32_t n2;                  /* (2 rx + 1) (2 ry + 1) */
  float inv_n2;
  int nseg;                     /* segments of BS_SEG rows */
  uint32_t *carry;              /* [nseg + 1][ws]: C at each segment */
  int ppt;                      /* box_rows: pixels a thread */
  int seg_out;                  /* box_rows: rows a block */
  int src_vec, dst_vec;         /* pointer and pitch multiples of 4 */
};

/* floor (k / n) for n > 0, with no division for k in [-n, n). */
__host__ __device__ __forceinline__ int
floor_div (int k, int n)
{
  if (k >= 0)
    return k < n ? 0 : k / n;
  return k >= -n ? -1 : -((-k + n - 1) / n);
}

/* The sum E(k) of the samples at [0, k) of a line of n samples extended
 * through border (minus those at [k, 0) for k < 0), as sum_i c[i] C(j[i])
 * of the line's prefix sums C(j), j in [0, n], C(0) = 0; exact modulo
 * 2^32.  Returns the number of terms, at most 4. */
__host__ __device__ __forceinline__ int
ext_terms (int border, int k, int n, int *j, uint32_t * c)
{
  if (k >= 0 && k <= n) {
    j[0] = k;
    c[0] = 1;
    return 1;
  }
  switch (border) {
    case CUCONV_BORDER_ZERO:
      j[0] = n;
      c[0] = k < 0 ? 0 : 1;
      return 1;
    case CUCONV_BORDER_CLAMP:
      /* k copies of the first sample, or C(n) and k - n of the last */
      if (k < 0) {
        j[0] = 1;
        c[0] = (uint32_t) k;
        return 1;
      }
      j[0] = n;
      c[0] = 1u + (uint32_t) (k - n);
      j[1] = n - 1;
      c[1] = (uint32_t) (n - k);
      return 2;
    case CUCONV_BORDER_WRAP:{
      const int q = floor_div (k, n);
      j[0] = n;
      c[0] = (uint32_t) q;
      j[1] = k - q * n;
      c[1] = 1;
      return 2;
    }
    case CUCONV_BORDER_MIRROR:
    default:{
      if (n == 1) {
        j[0] = 1;
        c[0] = (uint32_t) k;
        return 1;
      }
      /* q periods 0..n-1, n-2..1 of C(n) + C(n-1) - C(1), then m samples
       * of one: C(m), or C(n) and the way back down to p - m + 1 */
      const int p = 2 * (n - 1), q = floor_div (k, p), m = k - q * p;
      const uint32_t up = m > n;
      j[0] = n;
      c[0] = (uint32_t) q + up;
      j[1] = n - 1;
      c[1] = (uint32_t) q + up;
      j[2] = 1;
      c[2] = (uint32_t) - q;
      j[3] = up ? p - m + 1 : m;
      c[3] = up ? (uint32_t) - 1 : 1u;
      return 4;
    }
  }
}

/* acc[k] += coef * the value of sample s0 + k of row y, for k < n <=
 * MAXS; row -1 (the zero border) adds nothing.  vec: 4-byte loads (src
 * and its pitch are multiples of 4, s0 of the samples in 4 bytes). */
template < typename T, int MAXS > static __device__ __forceinline__ void
add_run (const BoxSumParams & p, int y, int s0, int n, bool vec,
    uint32_t coef, uint32_t * acc)
{
  constexpr int PER = 4 / sizeof (T);
  constexpr int BITS = 8 * sizeof (T);
  const uint8_t *row = p.src + (size_t) y * p.src_pitch;

  if (y < 0)
    return;
#pragma unroll
  for (int k = 0; k < MAXS; k += PER) {
    if (vec && k + PER <= n) {
      const uint32_t w = __ldg ((const uint32_t *) (row + (size_t) (s0 + k)
              * sizeof (T)));
#pragma unroll
      for (int b = 0; b < PER; b++)
        if (k + b < MAXS)
          acc[k + b] += coef * ((((w >> (BITS * b)) & p.word_mask) >> p.shift)
              & p.mask);
    } else {
#pragma unroll
      for (int b = 0; b < PER; b++)
        if (k + b < MAXS && k + b < n)
          acc[k + b] += coef * ((load_word (row, s0 + k + b, sizeof (T)) >>
                  p.shift) & p.mask);
    }
  }
}

/* vs[k] += coef * C(j) of the columns s0 + k, k < n: the segment's prefix
 * plus its rows above j. */
template < typename T, int MAXS > static __device__ void
col_prefix_add (const BoxSumParams & p, int j, uint32_t coef, int s0, int n,
    bool vec, uint32_t * vs)
{
  const int seg = j == p.height ? p.nseg : j / BS_SEG;
  const uint32_t *cr = p.carry + (size_t) seg * p.ws + s0;

  if (coef == 0)
    return;
#pragma unroll
  for (int k = 0; k < MAXS; k++)
    if (k < n)
      vs[k] += coef * __ldg (cr + k);
  for (int y = seg * BS_SEG; y < j; y++)
    add_run < T, MAXS > (p, y, s0, n, vec, coef, vs);
}

/* Each column's sum over each segment: a thread BS_TOTALS_RUN adjacent
 * columns of one segment. */
template < typename T > static __global__ void
__launch_bounds__ (THREADS)
box_col_totals (const __grid_constant__ BoxSumParams p)
{
  const int s0 = (blockIdx.x * THREADS + threadIdx.x) * BS_TOTALS_RUN;
  const int y0 = blockIdx.y * BS_SEG;
  const int y1 = min (y0 + BS_SEG, p.height);
  uint32_t t[BS_TOTALS_RUN];

  if (s0 >= p.ws)
    return;
  const int n = min (BS_TOTALS_RUN, p.ws - s0);
#pragma unroll
  for (int k = 0; k < BS_TOTALS_RUN; k++)
    t[k] = 0;
  for (int y = y0; y < y1; y++)
    add_run < T, BS_TOTALS_RUN > (p, y, s0, n, p.src_vec, 1, t);
#pragma unroll
  for (int k = 0; k < BS_TOTALS_RUN; k++)
    if (k < n)
      p.carry[(size_t) blockIdx.y * p.ws + s0 + k] = t[k];
}

/* The segments' totals into their exclusive prefix, and the column's total
 * into row nseg: a lane a column, a warp (threadIdx.y) a group of
 * consecutive segments, the groups' totals scanned in shared memory. */
static __global__ void
__launch_bounds__ (32 * BS_GROUPS)
box_col_scan (uint32_t * carry, int ws, int nseg)
{
  __shared__ uint32_t tot[BS_GROUPS][32];
  const int s = blockIdx.x * 32 + threadIdx.x, g = threadIdx.y;
  const int per = (nseg + BS_GROUPS - 1) / BS_GROUPS;
  const int a = min (g * per, nseg), b = min (a + per, nseg);
  uint32_t sum = 0, base = 0;

  if (s < ws)
    for (int q = a; q < b; q++)
      sum += carry[(size_t) q * ws + s];
  tot[g][threadIdx.x] = sum;
  __syncthreads ();
  for (int h = 0; h < g; h++)
    base += tot[h][threadIdx.x];
  if (s >= ws)
    return;
  for (int q = a; q < b; q++) {
    const uint32_t t = carry[(size_t) q * ws + s];
    carry[(size_t) q * ws + s] = base;
    base += t;
  }
  if (g == BS_GROUPS - 1)
    carry[(size_t) nseg * ws + s] = base;
}

/* round (S / n2), half up, exactly: S / n2 is never a half (n2 is odd).
 * The float estimate is off by at most 1 (S < 2^32, the quotient below
 * 1024); the remainder of 2 S + n2 by 2 n2, which fits an int once the
 * estimate is that close, corrects it. */
static __device__ __forceinline__ uint32_t
box_div (const BoxSumParams & p, uint32_t s)
{
  uint32_t q = __float2uint_rd (fmaf (__uint2float_rn (s), p.inv_n2, 0.5f));
  const int rem = (int) (2u * s + p.n2 - 2u * p.n2 * q);

  if (rem < 0)
    q--;
  else if (rem >= (int) (2u * p.n2))
    q++;
  return q;
}

/* Exclusive prefix over the block of each thread's NC totals v[c], in
 * place: a scan in each warp, then of the warps' totals by warp 0.  Three
 * barriers' worth of shared memory use (wsum, woff) is fenced by the two
 * here and the caller's barrier between its reads and the next call. */
template < int NC > static __device__ __forceinline__ void
block_scan (uint32_t * v, uint32_t * wsum, uint32_t * woff)
{
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int nw = blockDim.x / 32;
  uint32_t inc[NC];

#pragma unroll
  for (int c = 0; c < NC; c++) {
    uint32_t x = v[c];
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const uint32_t o = __shfl_up_sync (0xffffffffu, x, d);
      if (lane >= d)
        x += o;
    }
    inc[c] = x;
    if (lane == 31)
      wsum[warp * NC + c] = x;
  }
  __syncthreads ();
  if (warp == 0) {
#pragma unroll
    for (int c = 0; c < NC; c++) {
      const uint32_t t = lane < nw ? wsum[lane * NC + c] : 0u;
      uint32_t x = t;
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const uint32_t o = __shfl_up_sync (0xffffffffu, x, d);
        if (lane >= d)
          x += o;
      }
      if (lane < nw)
        woff[lane * NC + c] = x - t;
    }
  }
  __syncthreads ();
#pragma unroll
  for (int c = 0; c < NC; c++)
    v[c] = woff[warp * NC + c] + inc[c] - v[c];
}

/* The horizontal window sum of pixel x, component c, whose window
 * reaches past the row: E(x + rx + 1) - E(x - rx) from the row's prefix
 * pre.  Loops, not unrolled: the interior pixels' hot loop stays small. */
static __device__ __forceinline__ uint32_t
row_window_border (const BoxSumParams & p, const uint32_t * pre, int x,
    int c)
{
  uint32_t sum = 0, cc[4];
  int jj[4];

#pragma unroll 1
  for (int e = 0; e < 2; e++) {
    const int nt = ext_terms (p.border, e == 0 ? x + p.rx + 1 : x - p.rx,
        p.width, jj, cc);
#pragma unroll 1
    for (int i = 0; i < nt; i++)
      sum += (e == 0 ? cc[i] : 0u - cc[i]) * pre[jj[i] * p.nc + c];
  }
  return sum;
}

/* The rows [y0, y0 + seg_out) of the plane, all columns: a thread ppt
 * adjacent pixels (S = ppt * NC samples from s0 = threadIdx.x * S). */
template < typename T, int NC > static __global__ void
__launch_bounds__ (BS_MAX_THREADS)
box_rows (const __grid_constant__ BoxSumParams p)
{
  constexpr int MAXS = bs_ppt_max (NC) * NC;
  constexpr int PER = 4 / sizeof (T);
  extern __shared__ uint32_t bs_smem[];
  /* pre[x * NC + c]: component c's vertical sums summed over pixels < x */
  uint32_t *pre = bs_smem;
  uint32_t *wsum = pre + p.ws + NC, *woff = wsum + 32 * NC;
  const int S = p.ppt * NC, s0 = threadIdx.x * S;
  const int n = max (0, min (S, p.ws - s0));
  const bool vec_in = p.src_vec && S % PER == 0;
  const bool vec_out = p.dst_vec && S % PER == 0;
  const int y0 = p.row_begin + blockIdx.x * p.seg_out;
  const int y1 = min (y0 + p.seg_out, p.row_end);
  uint32_t vs[MAXS], a[MAXS];
  int jj[4];
  uint32_t cc[4];

  if (threadIdx.x < NC)
    pre[threadIdx.x] = 0;
  /* the vertical windows of row y0: E(y0 + ry + 1) - E(y0 - ry) */
#pragma unroll
  for (int k = 0; k < MAXS; k++)
    vs[k] = 0;
  for (int e = 0; e < 2; e++) {
    const int nt = ext_terms (p.border, e == 0 ? y0 + p.ry + 1 : y0 - p.ry,
        p.height, jj, cc);
    for (int i = 0; i < nt; i++)
      col_prefix_add < T, MAXS > (p, jj[i], e == 0 ? cc[i] : 0u - cc[i],
          s0, n, vec_in, vs);
  }

  for (int y = y0; y < y1; y++) {
    uint32_t tot[NC];

    /* the thread's prefix along the row, then the block's */
#pragma unroll
    for (int c = 0; c < NC; c++)
      tot[c] = 0;
#pragma unroll
    for (int k = 0; k < MAXS; k++) {
      tot[k % NC] += vs[k];
      a[k] = tot[k % NC];
    }
    block_scan < NC > (tot, wsum, woff);
#pragma unroll
    for (int k = 0; k < MAXS; k++)
      if (k < n)
        pre[s0 + NC + k] = tot[k % NC] + a[k];
    __syncthreads ();

    /* the outputs, PER at a time (a loop: the window sums stay in
     * registers, nothing else does) */
    uint8_t *drow = p.dst + (size_t) y * p.dst_pitch;
    const uint8_t *srow = p.src + (size_t) y * p.src_pitch;
#pragma unroll 1
    for (int k0 = 0; k0 < n; k0 += PER) {
      uint32_t w[PER];
#pragma unroll
      for (int b = 0; b < PER; b++) {
        const int k = k0 + b, c = k % NC, x = (s0 + k) / NC;
        w[b] = 0;
        if (k >= n)
          continue;
        if (p.op[c] == CUCONV_COMP_FILTER) {
          uint32_t sum;

          if (x >= p.rx && x + p.rx + 1 <= p.width)
            sum = pre[(x + p.rx + 1) * NC + c] - pre[(x - p.rx) * NC + c];
          else
            sum = row_window_border (p, pre, x, c);
          w[b] = (box_div (p, sum) << p.shift) & p.word_mask;
        } else if (p.op[c] == CUCONV_COMP_FILL) {
          w[b] = p.fill;
        } else {
          w[b] = load_word (srow, s0 + k, sizeof (T));
        }
      }
      if (vec_out && k0 + PER <= n) {
        uint32_t packed = 0;
#pragma unroll
        for (int b = 0; b < PER; b++)
          packed |= w[b] << (8 * sizeof (T) * b);
        *(uint32_t *) (drow + (size_t) (s0 + k0) * sizeof (T)) = packed;
      } else {
#pragma unroll
        for (int b = 0; b < PER; b++)
          if (k0 + b < n)
            store_word (drow, s0 + k0 + b, sizeof (T), w[b]);
      }
    }

    /* the windows one row down */
    if (y + 1 < y1) {
      add_run < T, MAXS > (p, cuconv_border_index ((CuconvBorder) p.border,
              y + p.ry + 1, p.height), s0, n, vec_in, 1u, vs);
      add_run < T, MAXS > (p, cuconv_border_index ((CuconvBorder) p.border,
              y - p.ry, p.height), s0, n, vec_in, ~0u, vs);
    }
  }
}

/* Host side of the running sums ------------------------------------------ */

static bool
taps_are_box (const CuconvTaps & t)
{
  const float w = (float) (1.0 / (2 * t.radius + 1));

  if (t.untruncated || t.radius < 0 || t.radius > CUCONV_MAX_RADIUS)
    return false;
  for (int i = 0; i <= 2 * t.radius; i++)
    if (t.w[i] != w)
      return false;
  return true;
}

typedef void (*BoxSumKernel) (BoxSumParams);

template < typename T > static BoxSumKernel
pick_box_rows (int nc, SmemLimit ** limit)
{
  static SmemLimit limits[CUCONV_MAX_COMP];

  *limit = &limits[nc - 1];
  switch (nc) {
    case 1:
      return box_rows < T, 1 >;
    case 2:
      return box_rows < T, 2 >;
    case 3:
      return box_rows < T, 3 >;
    default:
      return box_rows < T, 4 >;
  }
}

cudaError_t
launch_box_sums (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, cudaStream_t stream)
{
  const CuconvTaps & kx = *cuconv_filter_taps_x (&f, &pl);
  const CuconvTaps & ky = *cuconv_filter_taps_y (&f, &pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const int bytes = cuconv_plane_sample_bytes (&pl), nc = pl.n_comp;
  const int ppt_max = bs_ppt_max (nc);
  BoxSumParams p;
  SmemLimit *limit;
  BoxSumKernel rows;
  int optin, dev, sms, nth, per;
  size_t smem;
  cudaError_t e, ef;

  /* exact sums below 2^32 (10 bits), whole planes (their prefixes), rows
   * a block can hold */
  if (f.settings.kernel != CUCONV_KERNEL_BOX || f.n_terms != 1
      || f.combine != CUCONV_COMBINE_NONE || depth > 10 || nc < 1
      || nc > CUCONV_MAX_COMP || row_begin != 0 || row_end != pl.height
      || pl.width > BS_MAX_THREADS * ppt_max || !taps_are_box (kx)
      || !taps_are_box (ky))
    return cudaErrorNotSupported;
  smem = sizeof (uint32_t) * ((size_t) pl.width * nc + nc + 2 * 32 * nc);
  e = device_smem_optin (&optin);
  if (e == cudaSuccess)
    e = cudaGetDevice (&dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess)
    return e;
  if (smem > (size_t) optin)
    return cudaErrorNotSupported;

  band_params_init (p, pl, 0, pl.height);
  p.ws = pl.width * nc;
  p.nc = nc;
  p.border = f.settings.border;
  p.shift = depth > 8 ? pl.shift : 0;
  p.mask = (1u << depth) - 1;
  p.word_mask = bytes == 1 ? 0xffu : 0xffffu;
  p.fill = (pl.fill << p.shift) & p.word_mask;
  for (int c = 0; c < nc; c++)
    p.op[c] = pl.op[c];
  p.rx = kx.radius;
  p.ry = ky.radius;
  p.n2 = (uint32_t) (2 * p.rx + 1) * (uint32_t) (2 * p.ry + 1);
  p.inv_n2 = 1.0f / (float) p.n2;
  p.nseg = (pl.height + BS_SEG - 1) / BS_SEG;
  p.src_vec = ((uintptr_t) pl.src | p.src_pitch) % 4 == 0;
  p.dst_vec = ((uintptr_t) pl.dst | p.dst_pitch) % 4 == 0;
  /* box_rows: a row in about 256 threads (up to 1024 for the widest),
   * whole 4-byte words a thread where it can; bands of rows for about 4
   * blocks a multiprocessor */
  per = 4 / bytes;
  p.ppt = (pl.width + 255) / 256;
  p.ppt = p.ppt > ppt_max ? ppt_max : p.ppt;
  while ((p.ppt * nc) % per != 0 && p.ppt < ppt_max)
    p.ppt++;
  nth = ((pl.width + p.ppt - 1) / p.ppt + 31) / 32 * 32;
  p.seg_out = pl.height / (4 * sms);
  p.seg_out = p.seg_out < 4 ? 4 : p.seg_out > 32 ? 32 : p.seg_out;

  e = cudaMallocAsync ((void **) &p.carry, sizeof (uint32_t) * (p.nseg + 1)
      * (size_t) p.ws, stream);
  if (e != cudaSuccess)
    return e;
  {
    dim3 grid ((p.ws + THREADS * BS_TOTALS_RUN - 1) / (THREADS *
            BS_TOTALS_RUN), p.nseg);
    if (bytes == 1)
      box_col_totals < uint8_t > <<< grid, THREADS, 0, stream >>> (p);
    else
      box_col_totals < uint16_t > <<< grid, THREADS, 0, stream >>> (p);
    e = cudaGetLastError ();
  }
  if (e == cudaSuccess) {
    box_col_scan <<< (p.ws + 31) / 32, dim3 (32, BS_GROUPS), 0, stream >>>
        (p.carry, p.ws, p.nseg);
    e = cudaGetLastError ();
  }
  if (e == cudaSuccess) {
    const unsigned blocks = (pl.height + p.seg_out - 1) / p.seg_out;

    rows = bytes == 1 ? pick_box_rows < uint8_t > (nc, &limit) :
        pick_box_rows < uint16_t > (nc, &limit);
    e = launch_smem ((const void *) rows, (int) smem, *limit,[&]{
          rows <<< blocks, nth, smem, stream >>> (p);});
  }
  ef = cudaFreeAsync (p.carry, stream);
  return e != cudaSuccess ? e : ef;
}

}                               /* namespace cuconv */
