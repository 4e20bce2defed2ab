/* gst-cudaconvolve: the box of whole planes by running sums through
 * global memory (launch_box_sums).
 *
 * For any radius up to CUCONV_MAX_RADIUS, on every device (docs/design.md,
 * "Wide filters through global memory"): the shared memory a block needs
 * follows the plane's width, not the radius.  Exact integer sums, as in
 * the box's tiles (cuconv-box.cu), of samples of up to 10 bits: a window
 * of 2049 x 2049 of them sums to less than 2^32, so every sum is kept
 * modulo 2^32 and the differences that give a window come out exact.
 *
 * With C(j) the sum of a column's (or a row's) first j samples, the sum of
 * its samples extended through the border over [0, k) is E(k), a
 * combination of a few C(j) (ext_terms), and a window [y - r, y + r] sums
 * to E(y + r + 1) - E(y - r).  Three kernels:
 *
 *   box_col_totals  each column's sum over segments of BS_SEG rows: a
 *                   thread 16 bytes of a row, the segment's rows loaded
 *                   at once
 *   box_col_scan    their prefix over the segments: C at every segment's
 *                   first row (32 groups of segments a block of 32
 *                   columns, each group's loads in flight at once, then a
 *                   scan of the groups)
 *   box_rows        a block a band of seg_out rows, all columns, as many
 *                   bands as the device holds at once: the vertical window
 *                   sums of its first row from the nearest segment
 *                   boundaries' prefixes (and at most BS_SEG / 2 rows
 *                   each), then for each row their prefix along the row (a
 *                   scan in each warp, then of the warps' totals, two
 *                   barriers) into shared memory (bs_pad: no bank
 *                   conflicts), each output's horizontal window from two
 *                   of its entries (a 4-byte word of outputs a thread,
 *                   strided across the block; an exact integer division,
 *                   the border's windows and COPY, FILL off the short
 *                   path), and the vertical sums slid one row down (an
 *                   addition and a subtraction a sample, their rows loaded
 *                   while the row is scanned).
 *
 * The plane is read about three times (the last two mostly from L2), the
 * output written once; the intermediates are a few per cent of it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int BS_SEG = 8;       /* rows a segment of the column prefix */
constexpr int BS_GROUPS = 32;   /* box_col_scan: groups of segments */
constexpr int BS_BATCH = 16;    /* box_col_scan: segments loaded at once */
/* box_rows: up to 512 threads, two such blocks a multiprocessor, so 64
 * registers a thread (four blocks of the usual 256) */
constexpr int BS_MAX_THREADS = 512;
constexpr int BS_MAX_WARPS = BS_MAX_THREADS / 32;
constexpr int BS_MIN_ROWS = 4;  /* box_rows: rows a block at least */

/* Pixels a thread of box_rows holds at most: 16 samples, 32 for 3 or 4
 * components, so that a 4K row of any format fits a block. */
__host__ __device__ constexpr int
bs_ppt_max (int nc)
{
  return nc <= 2 ? 16 / nc : 32 / nc;
}

/* Where entry i of a row's prefix lies in shared memory: a word of padding
 * every 32.  A warp's stores (each lane S consecutive entries, lanes S
 * apart) and its loads (each lane the 4 or 2 entries of a word of
 * outputs) then fall in distinct banks, or two lanes in one at most. */
__host__ __device__ constexpr int
bs_pad (int i)
{
  return i + (i >> 5);
}

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
  uint32_t n2_half;             /* (n2 - 1) / 2 */
  uint32_t n2_recip;            /* ceil (2^32 / n2), at most 2^32 - 1 */
  int nseg;                     /* segments of BS_SEG rows */
  uint32_t *carry;              /* [nseg + 1][ws]: C at each segment */
  int ppt;                      /* box_rows: pixels a thread */
  int seg_out;                  /* box_rows: rows a block */
  int fast_lo, fast_hi;         /* box_rows: see row_outputs */
  int src_vec, dst_vec;         /* pointer and pitch multiples of 4 */
  int src_vec16;                /* ... of 16 */
  int carry_vec16;              /* carry rows 16-byte aligned */
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

/* round (S / n2), half up, exactly, for a window sum S of n2 samples: with
 * q0 = floor (S / n2) and r0 = S - q0 n2, it is q0 + (r0 > (n2 - 1) / 2)
 * (n2 is odd: never a half).  The high word of S ceil (2^32 / n2) is q0
 * or q0 + 1 (S < 2^32); for n2 = 1, whose reciprocal is clamped to
 * 2^32 - 1, it is S - 1 or S with r0 = 0.  The remainder r of that
 * estimate, which fits an int, tells which: q0 + 1 leaves r in [-n2, 0),
 * q0 - 1 leaves r = n2 = 1. */
__host__ __device__ __forceinline__ uint32_t
box_div (uint32_t s, uint32_t n2, uint32_t n2_half, uint32_t n2_recip)
{
#ifdef __CUDA_ARCH__
  const uint32_t q = __umulhi (s, n2_recip);
#else
  const uint32_t q = (uint32_t) (((uint64_t) s * n2_recip) >> 32);
#endif
  const int r = (int) (s - q * n2);

  return q + (r > (int) n2_half) - (r < -(int) n2_half);
}

/* Sample b of a word of samples as loaded: one byte (1-byte samples have
 * 8 bits: shift 0, mask 0xff), or (half >> shift) & mask. */
template < typename T > static __device__ __forceinline__ uint32_t
word_sample (const BoxSumParams & p, uint32_t w, int b)
{
  if (sizeof (T) == 1)
    return (w >> (8 * b)) & 0xffu;
  return (((w >> (16 * b)) & 0xffffu) >> p.shift) & p.mask;
}

/* The word of samples [s0 + k, s0 + k + PER) of row `row` (those below n
 * of them; zeros above), PER samples of T in 4 bytes as in memory.  vec:
 * one 4-byte load (src and its pitch are multiples of 4, s0 and k of PER).
 * Otherwise a sample at a time, one load in flight: that path is rare and
 * must not hold a register a byte in the hot loop's allocation. */
template < typename T > static __device__ __forceinline__ uint32_t
run_word (const uint8_t * row, int s0, int k, int n, bool vec)
{
  constexpr int PER = 4 / sizeof (T);
  uint32_t w = 0;

  if (vec && k + PER <= n)
    return __ldg ((const uint32_t *) (row + (size_t) (s0 + k) * sizeof (T)));
#pragma unroll 1
  for (int b = 0; b < PER && k + b < n; b++)
    w |= load_word (row, s0 + k + b, sizeof (T)) << (8 * sizeof (T) * b);
  return w;
}

/* acc[k] += coef * the value of sample s0 + k of row y, for k < n <=
 * MAXS; row -1 (the zero border) adds nothing. */
template < typename T, int MAXS > static __device__ __forceinline__ void
add_run (const BoxSumParams & p, int y, int s0, int n, bool vec,
    uint32_t coef, uint32_t * acc)
{
  constexpr int PER = 4 / sizeof (T);
  const uint8_t *row = p.src + (size_t) y * p.src_pitch;

  if (y < 0)
    return;
#pragma unroll
  for (int k = 0; k < MAXS; k += PER) {
    if (k >= n)
      break;
    const uint32_t w = run_word < T > (row, s0, k, n, vec);
#pragma unroll
    for (int b = 0; b < PER; b++)
      if (k + b < MAXS)
        acc[k + b] += coef * word_sample < T > (p, w, b);
  }
}

/* The words of samples [s0, s0 + n) of row y, n <= MAXS, as add_run reads
 * them, into w; zeros past n and for row -1 (the zero border). */
template < typename T, int MAXS > static __device__ __forceinline__ void
load_run (const BoxSumParams & p, int y, int s0, int n, bool vec,
    uint32_t * w)
{
  constexpr int PER = 4 / sizeof (T);
  const uint8_t *row = p.src + (size_t) y * p.src_pitch;

#pragma unroll
  for (int k = 0; k < MAXS; k += PER)
    w[k / PER] = y >= 0 && k < n ? run_word < T > (row, s0, k, n, vec) : 0u;
}

/* vs[k] += coef * C(j) of the columns s0 + k, k < n: from the segment
 * boundary nearest j, its prefix plus the rows down to j or minus those
 * up to it (at most BS_SEG / 2), all loaded at once. */
template < typename T, int MAXS > static __device__ void
col_prefix_add (const BoxSumParams & p, int j, uint32_t coef, int s0, int n,
    bool vec, uint32_t * vs)
{
  int seg = j / BS_SEG, y = seg * BS_SEG, rows = j - y;
  uint32_t rcoef = coef;

  if (coef == 0)
    return;
  if (j == p.height) {
    /* the column's total; height may not be a whole number of segments */
    seg = p.nseg;
    rows = 0;
  } else if (rows > BS_SEG / 2) {
    /* the next boundary, the total at the last: minus rows [j, it) */
    seg++;
    y = j;
    rows = min (seg * BS_SEG, p.height) - j;
    rcoef = 0u - coef;
  }

  const uint32_t *cr = p.carry + (size_t) seg * p.ws + s0;
#pragma unroll
  for (int k = 0; k < MAXS; k++)
    if (k < n)
      vs[k] += coef * __ldg (cr + k);
#pragma unroll
  for (int r = 0; r < BS_SEG / 2; r++)
    if (r < rows)
      add_run < T, MAXS > (p, y + r, s0, n, vec, rcoef, vs);
}

/* The vertical window sums of row y0 of the columns s0 + k, k < n, into
 * vs: E(y0 + ry + 1) - E(y0 - ry).  Once a block, out of line: its many
 * loads in flight stay out of the row loop's register allocation, and vs
 * comes back through local memory once. */
template < typename T, int MAXS > static __device__ __noinline__ void
col_window_sums (const BoxSumParams & p, int y0, int s0, int n, bool vec,
    uint32_t * vs)
{
  int jj[4];
  uint32_t cc[4];

#pragma unroll
  for (int k = 0; k < MAXS; k++)
    vs[k] = 0;
  for (int e = 0; e < 2; e++) {
    const int nt = ext_terms (p.border, e == 0 ? y0 + p.ry + 1 : y0 - p.ry,
        p.height, jj, cc);
    for (int i = 0; i < nt; i++)
      col_prefix_add < T, MAXS > (p, jj[i], e == 0 ? cc[i] : 0u - cc[i],
          s0, n, vec, vs);
  }
}

/* Each column's sum over each segment: a thread RUN adjacent samples (16
 * bytes) of one segment, whose BS_SEG rows it loads at once. */
template < typename T > static __global__ void
__launch_bounds__ (THREADS)
box_col_totals (const __grid_constant__ BoxSumParams p)
{
  constexpr int RUN = 16 / sizeof (T);
  constexpr int PER = 4 / sizeof (T);
  const int s0 = (blockIdx.x * THREADS + threadIdx.x) * RUN;
  const int y0 = blockIdx.y * BS_SEG;
  uint32_t t[RUN];

  if (s0 >= p.ws)
    return;
  const int n = min (RUN, p.ws - s0);
#pragma unroll
  for (int k = 0; k < RUN; k++)
    t[k] = 0;
  if (p.src_vec16 && n == RUN) {
    uint4 w[BS_SEG];

#pragma unroll
    for (int r = 0; r < BS_SEG; r++)
      w[r] = y0 + r < p.height ? __ldg ((const uint4 *) (p.src + (size_t) (y0
                  + r) * p.src_pitch + (size_t) s0 * sizeof (T))) :
          make_uint4 (0, 0, 0, 0);
#pragma unroll
    for (int r = 0; r < BS_SEG; r++) {
      const uint32_t v[4] = { w[r].x, w[r].y, w[r].z, w[r].w };
#pragma unroll
      for (int k = 0; k < RUN; k++)
        t[k] += word_sample < T > (p, v[k / PER], k % PER);
    }
  } else {
#pragma unroll
    for (int r = 0; r < BS_SEG; r++)
      if (y0 + r < p.height)
        add_run < T, RUN > (p, y0 + r, s0, n, p.src_vec, 1u, t);
  }

  uint32_t *out = p.carry + (size_t) blockIdx.y * p.ws + s0;
  if (p.carry_vec16 && n == RUN) {
#pragma unroll
    for (int k = 0; k < RUN; k += 4)
      *(uint4 *) (out + k) = make_uint4 (t[k], t[k + 1], t[k + 2], t[k + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < RUN; k++)
      if (k < n)
        out[k] = t[k];
  }
}

/* The segments' totals into their exclusive prefix, and the column's total
 * into row nseg: a lane a column, a warp (threadIdx.y) a group of
 * consecutive segments, the groups' totals scanned in shared memory.  A
 * group's segments are loaded BS_BATCH at a time, all in flight, and held
 * for the prefix where they fit one batch. */
static __global__ void
__launch_bounds__ (32 * BS_GROUPS)
box_col_scan (uint32_t * carry, int ws, int nseg)
{
  __shared__ uint32_t tot[BS_GROUPS][32];
  const int s = blockIdx.x * 32 + threadIdx.x, g = threadIdx.y;
  const int per = (nseg + BS_GROUPS - 1) / BS_GROUPS;
  const int a = min (g * per, nseg), b = min (a + per, nseg);
  uint32_t *col = carry + s;
  uint32_t v[BS_BATCH], sum = 0, base = 0;

  if (s < ws) {
    for (int q0 = a; q0 < b; q0 += BS_BATCH) {
#pragma unroll
      for (int u = 0; u < BS_BATCH; u++)
        v[u] = q0 + u < b ? col[(size_t) (q0 + u) * ws] : 0u;
#pragma unroll
      for (int u = 0; u < BS_BATCH; u++)
        sum += v[u];
    }
  }
  tot[g][threadIdx.x] = sum;
  __syncthreads ();
  for (int h = 0; h < g; h++)
    base += tot[h][threadIdx.x];
  if (s >= ws)
    return;
  for (int q0 = a; q0 < b; q0 += BS_BATCH) {
    /* a group of one batch still holds its totals in v */
    if (b - a > BS_BATCH) {
#pragma unroll
      for (int u = 0; u < BS_BATCH; u++)
        if (q0 + u < b)
          v[u] = col[(size_t) (q0 + u) * ws];
    }
#pragma unroll
    for (int u = 0; u < BS_BATCH; u++)
      if (q0 + u < b) {
        col[(size_t) (q0 + u) * ws] = base;
        base += v[u];
      }
  }
  if (g == BS_GROUPS - 1)
    col[(size_t) nseg * ws] = base;
}

/* The block's prefix of the row's vertical sums vs (the thread's samples
 * [s0, s0 + n), n <= MAXS <= 32) along the row, into pre: pre[bs_pad (s)]
 * is the sum of the samples up to s of s's component.  A scan in each
 * warp of the threads' totals; after a barrier each warp sums the totals
 * of the warps before it (no second pass through warp 0); a second
 * barrier before pre is read.  The barriers also order each row's use of
 * wsum and pre after the row before's.  The thread's entries lie from
 * bs_pad (s0) on, one word further from the 32-entry boundary `cross`
 * within them on: a base and a comparison, not MAXS addresses held in
 * registers. */
template < int NC, int MAXS > static __device__ __forceinline__ void
row_prefix (const uint32_t * vs, int s0, int n, uint32_t * pre,
    uint32_t * wsum)
{
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int cross = 32 - s0 % 32;
  uint32_t *out = pre + bs_pad (s0);
  uint32_t run[NC];

#pragma unroll
  for (int c = 0; c < NC; c++)
    run[c] = 0;
#pragma unroll
  for (int k = 0; k < MAXS; k++)
    run[k % NC] += vs[k];
#pragma unroll
  for (int c = 0; c < NC; c++) {
    uint32_t x = run[c];
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const uint32_t o = __shfl_up_sync (0xffffffffu, x, d);
      if (lane >= d)
        x += o;
    }
    if (lane == 31)
      wsum[warp * NC + c] = x;
    run[c] = x - run[c];
  }
  __syncthreads ();
#pragma unroll
  for (int c = 0; c < NC; c++) {
    uint32_t o = lane < warp ? wsum[lane * NC + c] : 0u;
#pragma unroll
    for (int d = 16; d > 0; d /= 2)
      o += __shfl_xor_sync (0xffffffffu, o, d);
    run[c] += o;
  }
#pragma unroll
  for (int k = 0; k < MAXS; k++) {
    run[k % NC] += vs[k];
    if (k < n)
      out[k < cross ? k : k + 1] = run[k % NC];
  }
  __syncthreads ();
}

/* C(x) of component c of the row: its sum over the pixels before x. */
static __device__ __forceinline__ uint32_t
row_prefix_at (const uint32_t * pre, int x, int c, int nc)
{
  return x > 0 ? pre[bs_pad ((x - 1) * nc + c)] : 0u;
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
      sum += (e == 0 ? cc[i] : 0u - cc[i]) * row_prefix_at (pre, jj[i], c,
          p.nc);
  }
  return sum;
}

/* The output word of a window sum: the mean in the sample's bits. */
template < typename T > static __device__ __forceinline__ uint32_t
box_word (const BoxSumParams & p, uint32_t sum)
{
  const uint32_t q = box_div (sum, p.n2, p.n2_half, p.n2_recip);

  return sizeof (T) == 1 ? q : (q << p.shift) & p.word_mask;
}

/* The output word of sample s of a row (srow: its source), for any op,
 * window or border. */
template < typename T, int NC > static __device__ __forceinline__ uint32_t
output_word (const BoxSumParams & p, const uint32_t * pre,
    const uint8_t * srow, int s)
{
  const int c = s % NC, x = s / NC;

  if (p.op[c] == CUCONV_COMP_FILL)
    return p.fill;
  if (p.op[c] != CUCONV_COMP_FILTER)
    return load_word (srow, s, sizeof (T));
  if (x >= p.rx && x + p.rx + 1 <= p.width)
    return box_word < T > (p, row_prefix_at (pre, x + p.rx + 1, c, NC)
        - row_prefix_at (pre, x - p.rx, c, NC));
  return box_word < T > (p, row_window_border (p, pre, x, c));
}

/* The outputs of row y from its prefix pre, a 4-byte word (PER samples) a
 * thread at a time, the words strided across the block: a warp's loads of
 * pre fall on entries PER apart, which bs_pad spreads over the banks.
 * The words of samples [fast_lo, fast_hi), which all filter with windows
 * inside the row (and not starting at its first pixel, whose C(0) has no
 * entry) to a 4-byte aligned destination, take the short path: two loads
 * and an exact division a sample, one store. */
template < typename T, int NC > static __device__ __forceinline__ void
row_outputs (const BoxSumParams & p, const uint32_t * pre, int y)
{
  constexpr int PER = 4 / sizeof (T);
  uint8_t *drow = p.dst + (size_t) y * p.dst_pitch;
  const uint8_t *srow = p.src + (size_t) y * p.src_pitch;
  /* the entries C(x + rx + 1) and C(x - rx) of sample s = x NC + c */
  const int hi = p.rx * NC, lo = (p.rx + 1) * NC;

#pragma unroll 1
  for (int s = threadIdx.x * PER; s < p.ws; s += blockDim.x * PER) {
    uint32_t w = 0;

    if (s >= p.fast_lo && s + PER <= p.fast_hi) {
#pragma unroll
      for (int b = 0; b < PER; b++)
        w |= box_word < T > (p, pre[bs_pad (s + b + hi)]
            - pre[bs_pad (s + b - lo)]) << (8 * sizeof (T) * b);
      *(uint32_t *) (drow + (size_t) s * sizeof (T)) = w;
    } else if (p.dst_vec && s + PER <= p.ws) {
#pragma unroll
      for (int b = 0; b < PER; b++)
        w |= output_word < T, NC > (p, pre, srow, s + b)
            << (8 * sizeof (T) * b);
      *(uint32_t *) (drow + (size_t) s * sizeof (T)) = w;
    } else {
#pragma unroll
      for (int b = 0; b < PER; b++)
        if (s + b < p.ws)
          store_word (drow, s + b, sizeof (T),
              output_word < T, NC > (p, pre, srow, s + b));
    }
  }
}

/* The rows [y0, y0 + seg_out) of the plane, all columns: a thread holds
 * the vertical window sums vs of ppt adjacent pixels (S = ppt * NC
 * samples from s0 = threadIdx.x * S). */
template < typename T, int NC > static __global__ void
__launch_bounds__ (BS_MAX_THREADS, 2)
box_rows (const __grid_constant__ BoxSumParams p)
{
  constexpr int MAXS = bs_ppt_max (NC) * NC;
  constexpr int PER = 4 / sizeof (T);
  constexpr int WORDS = (MAXS + PER - 1) / PER;
  extern __shared__ uint32_t bs_smem[];
  /* pre[bs_pad (x * NC + c)]: component c's vertical sums summed over
   * pixels <= x; wsum: the warps' totals */
  uint32_t *pre = bs_smem;
  uint32_t *wsum = pre + bs_pad (p.ws);
  const int S = p.ppt * NC, s0 = threadIdx.x * S;
  const int n = max (0, min (S, p.ws - s0));
  const bool vec_in = p.src_vec && S % PER == 0;
  const int y0 = p.row_begin + blockIdx.x * p.seg_out;
  const int y1 = min (y0 + p.seg_out, p.row_end);
  uint32_t vs[MAXS];

  col_window_sums < T, MAXS > (p, y0, s0, n, vec_in, vs);

  for (int y = y0; y < y1; y++) {
    const bool next = y + 1 < y1;
    uint32_t in[WORDS], out[WORDS];

    /* the rows entering and leaving the windows one row down, in flight
     * while this row is scanned and written */
    if (next) {
      load_run < T, MAXS > (p, cuconv_border_index ((CuconvBorder) p.border,
              y + p.ry + 1, p.height), s0, n, vec_in, in);
      load_run < T, MAXS > (p, cuconv_border_index ((CuconvBorder) p.border,
              y - p.ry, p.height), s0, n, vec_in, out);
    }
    row_prefix < NC, MAXS > (vs, s0, n, pre, wsum);
    if (next) {
#pragma unroll
      for (int k = 0; k < MAXS; k++)
        vs[k] += word_sample < T > (p, in[k / PER], k % PER)
            - word_sample < T > (p, out[k / PER], k % PER);
    }
    row_outputs < T, NC > (p, pre, y);
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

/* box_rows over the plane in bands of seg_out rows: the fewest rows a
 * block (but BS_MIN_ROWS, which share a block's start) for which every
 * block is resident at once, so that no second wave trails the first. */
static cudaError_t
launch_box_rows (BoxSumParams & p, int bytes, int nth, size_t smem, int sms,
    cudaStream_t stream)
{
  SmemLimit *limit;
  const BoxSumKernel rows = bytes == 1 ? pick_box_rows < uint8_t > (p.nc,
      &limit) : pick_box_rows < uint16_t > (p.nc, &limit);
  int per_sm = 0;
  cudaError_t e = allow_smem ((const void *) rows, (int) smem, *limit);

  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, rows, nth,
        smem);
  if (e != cudaSuccess)
    return e;
  const int resident = (per_sm > 0 ? per_sm : 1) * sms;
  p.seg_out = (p.height + resident - 1) / resident;
  p.seg_out = p.seg_out < BS_MIN_ROWS ? BS_MIN_ROWS : p.seg_out;
  rows <<< (p.height + p.seg_out - 1) / p.seg_out, nth, smem, stream >>> (p);
  return cudaGetLastError ();
}

cudaError_t
launch_box_sums (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream)
{
  const CuconvTaps & kx = *cuconv_filter_taps_x (&f, &pl);
  const CuconvTaps & ky = *cuconv_filter_taps_y (&f, &pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const int bytes = cuconv_plane_sample_bytes (&pl), nc = pl.n_comp;
  const int ppt_max = bs_ppt_max (nc);
  BoxSumParams p;
  int optin, sms, nth, per;
  bool all_filter = true;
  size_t smem;
  cudaError_t e;

  /* exact sums below 2^32 (10 bits), whole planes (their prefixes), rows
   * a block can hold */
  if (!f.box || f.n_terms != 1
      || f.combine != CUCONV_COMBINE_NONE || depth > 10 || nc < 1
      || nc > CUCONV_MAX_COMP || row_begin != 0 || row_end != pl.height
      || pl.width > BS_MAX_THREADS * ppt_max || !taps_are_box (kx)
      || !taps_are_box (ky))
    return cudaErrorNotSupported;
  smem = sizeof (uint32_t) * ((size_t) bs_pad (pl.width * nc)
      + BS_MAX_WARPS * nc);
  e = device_smem_optin (&optin);
  if (e == cudaSuccess)
    e = device_sm_count (&sms);
  if (e != cudaSuccess)
    return e;
  if (smem > (size_t) optin)
    return cudaErrorNotSupported;

  band_params_init (p, pl, 0, pl.height);
  p.ws = pl.width * nc;
  p.nc = nc;
  p.border = f.border;
  p.shift = depth > 8 ? pl.shift : 0;
  p.mask = (1u << depth) - 1;
  p.word_mask = bytes == 1 ? 0xffu : 0xffffu;
  p.fill = (pl.fill << p.shift) & p.word_mask;
  for (int c = 0; c < nc; c++) {
    p.op[c] = pl.op[c];
    all_filter = all_filter && pl.op[c] == CUCONV_COMP_FILTER;
  }
  p.rx = kx.radius;
  p.ry = ky.radius;
  p.n2 = (uint32_t) (2 * p.rx + 1) * (uint32_t) (2 * p.ry + 1);
  p.n2_half = (p.n2 - 1) / 2;
  p.n2_recip = p.n2 == 1 ? 0xffffffffu :
      (uint32_t) (((1ull << 32) + p.n2 - 1) / p.n2);
  p.nseg = (pl.height + BS_SEG - 1) / BS_SEG;
  p.src_vec = ((uintptr_t) pl.src | p.src_pitch) % 4 == 0;
  p.dst_vec = ((uintptr_t) pl.dst | p.dst_pitch) % 4 == 0;
  p.src_vec16 = ((uintptr_t) pl.src | p.src_pitch) % 16 == 0;
  p.carry_vec16 = p.ws % 4 == 0;
  /* row_outputs' short path: the samples whose windows lie in the row,
   * from its second pixel */
  p.fast_lo = (p.rx + 1) * nc;
  p.fast_hi = all_filter && p.dst_vec ? p.ws - p.rx * nc : 0;
  /* box_rows: a row in about 256 threads (up to 512 for the widest),
   * whole 4-byte words a thread where it can */
  per = 4 / bytes;
  p.ppt = (pl.width + 255) / 256;
  p.ppt = p.ppt > ppt_max ? ppt_max : p.ppt;
  while ((p.ppt * nc) % per != 0 && p.ppt < ppt_max)
    p.ppt++;
  nth = ((pl.width + p.ppt - 1) / p.ppt + 31) / 32 * 32;

  e = scratch_take (sc, sizeof (uint32_t) * (p.nseg + 1) * (size_t) p.ws,
      stream, (void **) &p.carry);
  if (e != cudaSuccess)
    return e;
  {
    const int run = 16 / bytes;
    dim3 grid ((p.ws + THREADS * run - 1) / (THREADS * run), p.nseg);

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
  if (e == cudaSuccess)
    e = launch_box_rows (p, bytes, nth, smem, sms, stream);
  return e;
}

}                               /* namespace cuconv */
