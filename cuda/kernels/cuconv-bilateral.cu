/* gst-cudaconvolve: the bilateral filter on the GPU (docs/design.md, "The
 * bilateral").  8-bit planes of equal radii 1..8 and symmetric taps (as
 * the gaussians are) take the byte kernel: a block of a grid sized to the
 * device filters tiles of 32 x 64 outputs, each thread a column of 8,
 * from the tile and its apron in shared memory and the range weights
 * copied once for each lane of a warp.
 * Every other plane takes the generic kernel: a tile of 32 x 16 outputs,
 * summed in the reference's order (cuconv_bilateral_rows,
 * cuconv-bilateral.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

#define BL_BX 32                /* threads across: outputs across a tile */
#define BL_BY 8                 /* threads down */
#define BL_ROWS 2               /* outputs a thread, BL_BY rows apart */
#define BL_TILE_H (BL_BY * BL_ROWS)
#define BL_MAX_SIDE (2 * CUCONV_MAX_BILATERAL_RADIUS + 1)
/* Range weights kept in shared memory up to 12-bit samples (16 KiB);
 * 16-bit ones are computed where they are needed. */
#define BL_MAX_LUT 4096
/* Samples a thread loads in the byte kernel's tile fill, at most:
 * (32 + 16) x (64 + 16) / 256. */
#define BB_FILL_MAX 15

struct BilateralParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch;
  size_t dst_pitch;
  int width;                    /* pixels */
  int height;                   /* rows of the whole plane, for the border */
  int row_begin;
  int row_end;
  int nc;                       /* interleaved components */
  int border;
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask;
  int rx, ry;
  int lut_n;                    /* range weights in shared memory: 2^depth
                                 * up to BL_MAX_LUT, else 0 */
  int lut_host;                 /* 8-bit: lut8 holds them, the reference's
                                 * own floats */
  int zero_range;               /* sigma_r 0: 1 for d = 0, else 0 */
  float inv2sr2;                /* 1 / (2 sigma_r^2), sigma_r in samples */
  uint8_t op[CUCONV_MAX_COMP];
  uint32_t fill;
  int tiles_x, tiles_y;         /* the byte kernel's tiles of a component */
  /* the byte kernel's tile fill: sample e + 256 m of a tile lies
   * fill_off[m] bytes after sample e, fill_wrap more where the column
   * carries into one more row */
  uint32_t fill_off[BB_FILL_MAX];
  uint32_t fill_wrap;
  uint32_t comp_m, tx_m;        /* t / (tiles_x tiles_y) and t / tiles_x */
  int comp_s, tx_s;             /* as (t m) >> s (magic_div) */
  float kx[BL_MAX_SIDE];        /* the unnormalised spatial gaussians */
  float ky[BL_MAX_SIDE];
  float lut8[256];
};

/* The range weight of a difference of d samples: exp (-d^2 / (2
 * sigma_r^2)) in float (the reference's is the double value rounded to
 * float: within a few ulps). */
__device__ __forceinline__ float
range_weight (const BilateralParams & p, int d)
{
  const float fd = (float) d;

  if (p.zero_range)
    return d == 0 ? 1.0f : 0.0f;
  return expf (-(fd * fd) * p.inv2sr2);
}

template < int SB > __device__ __forceinline__ uint32_t
read_word (const BilateralParams & p, int x, int y, int c)
{
  const uint8_t *a = p.src + (size_t) y * p.src_pitch +
      (size_t) SB * ((size_t) x * p.nc + c);

  return SB == 1 ? a[0] : a[0] | (uint32_t) a[1] << 8;
}

template < int SB > __device__ __forceinline__ void
write_word (const BilateralParams & p, int x, int y, int c, uint32_t v)
{
  uint8_t *a = p.dst + (size_t) y * p.dst_pitch +
      (size_t) SB * ((size_t) x * p.nc + c);

  a[0] = (uint8_t) v;
  if (SB == 2)
    a[1] = (uint8_t) (v >> 8);
}

/* The generic kernel: any radii and depth.  blockIdx.z is the
 * component. */
template < int SB > __global__ void
__launch_bounds__ (BL_BX * BL_BY)
bilateral_kernel (const BilateralParams p)
{
  extern __shared__ float smem[];
  const int rx = p.rx, ry = p.ry;
  const int sx = 2 * rx + 1, tw = BL_BX + 2 * rx, th = BL_TILE_H + 2 * ry;
  float *tile = smem;           /* th x tw samples */
  float *ws = tile + tw * th;   /* (2ry + 1) x sx: kx[i] * ky[j] */
  float *lut = ws + sx * (2 * ry + 1);  /* p.lut_n range weights */
  const int c = blockIdx.z;
  const bool filter = p.op[c] == CUCONV_COMP_FILTER;
  const int x0 = blockIdx.x * BL_BX;
  const int y0 = p.row_begin + blockIdx.y * BL_TILE_H;
  const int tid = threadIdx.y * BL_BX + threadIdx.x;
  const int nt = BL_BX * BL_BY;

  if (filter) {
    /* the zero border's outside reads 0, a sample like any other */
    for (int k = tid; k < tw * th; k += nt) {
      const int ty = k / tw, tx = k - ty * tw;
      const int gx = cuconv_border_index ((CuconvBorder) p.border,
          x0 - rx + tx, p.width);
      const int gy = cuconv_border_index ((CuconvBorder) p.border,
          y0 - ry + ty, p.height);

      tile[k] = gx < 0 || gy < 0 ? 0.0f :
          (float) ((read_word < SB > (p, gx, gy, c) >> p.shift) & p.mask);
    }
    /* the same float products as the reference's */
    for (int k = tid; k < sx * (2 * ry + 1); k += nt)
      ws[k] = p.kx[k % sx] * p.ky[k / sx];
    for (int d = tid; d < p.lut_n; d += nt)
      lut[d] = p.lut_host ? p.lut8[d] : range_weight (p, d);
  }
  __syncthreads ();

  for (int r = 0; r < BL_ROWS; r++) {
    const int ty = threadIdx.y + r * BL_BY, tx = threadIdx.x;
    const int x = x0 + tx, y = y0 + ty;

    if (x >= p.width || y >= p.row_end)
      continue;
    if (p.op[c] == CUCONV_COMP_COPY) {
      write_word < SB > (p, x, y, c, read_word < SB > (p, x, y, c));
    } else if (p.op[c] == CUCONV_COMP_FILL) {
      write_word < SB > (p, x, y, c, p.fill << p.shift);
    } else {
      const float pv = tile[(ty + ry) * tw + tx + rx];
      float num = 0.0f, den = 0.0f;

      /* rows outer, columns inner, as the reference sums */
#pragma unroll
      for (int j = 0; j <= 2 * ry; j++) {
        const float *row = tile + (ty + j) * tw + tx;
        const float *wrow = ws + j * sx;

#pragma unroll
        for (int i = 0; i < sx; i++) {
          const float q = row[i];
          const int d = (int) fabsf (q - pv);
          const float w = wrow[i] * (p.lut_n ? lut[d] : range_weight (p, d));

          num = fmaf (w, q, num);
          den += w;
        }
      }
      write_word < SB > (p, x, y, c,
          cuconv_round_sat (num / den, p.mask) << p.shift);
    }
  }
}

/* The byte kernel.  A thread sums the windows of BB_K outputs of a
 * column: each sample it reads from the tile serves every one of them
 * whose window holds it, so a window sample costs one shared load (its
 * range weight) and four instructions besides:
 *
 *   VABSDIFF  the load's address, 128 |q - p| + this lane's copy
 *   LDS       wr[|q - p|]
 *   FMUL      w = ws[j][i] * wr
 *   FFMA      num += w * q
 *   FADD      den += w
 *
 * A tile sample is kept as the bits of the float 2^23 + 128 q, so that
 * the difference of two of them is 128 (q - p) and the float minus 2^23
 * is 128 q exactly: num is 128 times the sum of w q, scaled back at the
 * end (exactly: a power of two).  The range weights are stored once for
 * each lane, entry d of lane l at word 32 d + l: a warp's 32 look-ups
 * fall in 32 banks whatever the differences.  Columns are the outer loop,
 * rows the inner one, the centre column last: there a centre's own
 * weight starts its sums, and two outputs of a thread that lie in each
 * other's windows share one look-up and one product (byte_column).  The
 * result is num times an approximate reciprocal of den.  The float error
 * of any such order and of the reciprocal is within the bound of
 * docs/semantics.md, "The bilateral".
 *
 * A block fills a tile that lies inside the plane with consecutive
 * samples a thread (byte_fill_inside), one at the plane's edges a row a
 * warp through the border (byte_fill_border); it walks the tiles of a
 * grid of BB_BLOCKS_PER_SM blocks an SM, the range weights written once. */
#define BB_BX 32                /* threads across: outputs across a tile */
#define BB_BY 8
#define BB_K 8                  /* outputs a thread, down a column */
#define BB_TILE_H (BB_BY * BB_K)
#define BB_THREADS (BB_BX * BB_BY)
#define BB_BLOCKS_PER_SM 4
#define BB_MAX_RADIUS 8
#define BB_LANES 32
#define BB_LUT (256 * BB_LANES)
#define BB_MAGIC 0x4b000000u    /* the bits of 2^23 */

/* Shared memory of the byte kernel at radius R, in floats: the range
 * weights, the spatial weights by column (rows padded to 4) and the
 * tile. */
#define BB_WS_ROW(R) ((2 * (R) + 1 + 3) / 4 * 4)
#define BB_SMEM_FLOATS(R) (BB_LUT + (2 * (R) + 1) * BB_WS_ROW (R) + \
    (BB_TILE_H + 2 * (R)) * (BB_BX + 2 * (R)))
/* Rows of the tile a thread fills. */
#define BB_FILL_ROWS(R) ((BB_TILE_H + 2 * (R) + BB_BY - 1) / BB_BY)

/* The byte at a, in global memory that no thread writes: zero-extended
 * by the load itself. */
__device__ __forceinline__ uint32_t
load_byte (const uint8_t * a)
{
  uint32_t v;

  asm ("ld.global.nc.u8 %0, [%1];":"=r" (v)
      :"l" (__cvta_generic_to_global (a)));
  return v;
}

/* Fills the byte kernel's tile of a component, whose top left corner is
 * (x0 - R, y0 - R) in the plane, where it lies wholly in the plane: the
 * block's threads take consecutive samples, so that a warp's loads are
 * neighbouring samples of a row or two and its stores consecutive words.
 * Every load is issued before the first store. */
template < int R > __device__ __forceinline__ void
byte_fill_inside (const BilateralParams & p, uint32_t * tile, int x0, int y0,
    int c)
{
  constexpr int TW = BB_BX + 2 * R, TH = BB_TILE_H + 2 * R;
  constexpr int N = (TW * TH + BB_THREADS - 1) / BB_THREADS;
  static_assert (N <= BB_FILL_MAX, "p.fill_off holds a thread's samples");
  uint32_t tid = threadIdx.y * BB_BX + threadIdx.x;

  /* recomputed for each tile: kept from tile to tile, the offsets would
   * take registers that the sums need */
  asm volatile ("":"+r" (tid));
  /* a tile spans far less than 4 GiB of the plane: 32-bit offsets */
  const uint32_t pitch = (uint32_t) p.src_pitch, nc = (uint32_t) p.nc;
  const uint8_t *s = p.src + (size_t) (uint32_t) (y0 - R) * pitch +
      (uint32_t) ((x0 - R) * p.nc + c);
  /* sample tid + m BB_THREADS lies p.fill_off[m] bytes after sample tid
   * (column q0), p.fill_wrap more where the column carries into one more
   * row */
  const uint32_t r0 = tid / TW, q0 = tid - r0 * TW;
  const uint8_t *s0 = s + (r0 * pitch + q0 * nc);
  uint32_t v[N];

  /* one register pair, each address one 64-bit add from it */
  asm ("":"+l" (s0));
#pragma unroll
  for (int m = 0; m < N; m++) {
    const uint32_t dq = m * BB_THREADS % TW;

    v[m] = 0;
    if ((m + 1) * BB_THREADS <= TW * TH || tid + m * BB_THREADS < TW * TH)
      v[m] = load_byte (s0 + (size_t) p.fill_off[m] +
          (q0 >= TW - dq ? (size_t) p.fill_wrap : 0));
  }
#pragma unroll
  for (int m = 0; m < N; m++) {
    if ((m + 1) * BB_THREADS <= TW * TH || tid + m * BB_THREADS < TW * TH)
      tile[tid + m * BB_THREADS] = BB_MAGIC + (v[m] << 7);
  }
}

/* The same at the plane's edges, through the border: warp ty takes the
 * rows ty, ty + BB_BY, ... of the tile, lane tx the columns tx and BB_BX +
 * tx (tx < 2R) of each, so that the border maps a column once a tile and
 * a row once a row. */
template < int R > __device__ __forceinline__ void
byte_fill_border (const BilateralParams & p, uint32_t * tile, int x0,
    int y0, int c)
{
  constexpr int TW = BB_BX + 2 * R, TH = BB_TILE_H + 2 * R;
  constexpr int N = BB_FILL_ROWS (R);
  const CuconvBorder border = (CuconvBorder) p.border;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int gx0 = cuconv_border_index (border, x0 - R + tx, p.width);
  const int gx1 = tx < 2 * R ?
      cuconv_border_index (border, x0 - R + BB_BX + tx, p.width) : -1;
  const uint8_t *s0 = p.src + (uint32_t) (max (gx0, 0) * p.nc + c);
  const uint8_t *s1 = p.src + (uint32_t) (max (gx1, 0) * p.nc + c);
  const uint32_t pitch = (uint32_t) p.src_pitch;
  uint32_t v0[N], v1[N];

#pragma unroll
  for (int k = 0; k < N; k++) {
    const int r = ty + k * BB_BY;
    const int gy = cuconv_border_index (border, y0 - R + r, p.height);

    /* the zero border's outside reads 0, a sample like any other; rows
     * below 64 are in every tile (ty < BB_BY) */
    v0[k] = 0;
    v1[k] = 0;
    if (((k + 1) * BB_BY <= TH || r < TH) && gy >= 0) {
      if (gx0 >= 0)
        v0[k] = load_byte (s0 + (size_t) (uint32_t) gy * pitch);
      if (gx1 >= 0)
        v1[k] = load_byte (s1 + (size_t) (uint32_t) gy * pitch);
    }
  }
#pragma unroll
  for (int k = 0; k < N; k++) {
    const int r = ty + k * BB_BY;

    if ((k + 1) * BB_BY <= TH || r < TH) {
      tile[r * TW + tx] = BB_MAGIC + (v0[k] << 7);
      if (tx < 2 * R)
        tile[r * TW + BB_BX + tx] = BB_MAGIC + (v1[k] << 7);
    }
  }
}

/* Adds column i of the windows of a thread's BB_K outputs, down col (the
 * tile's column i for the first output) with the spatial weights wcol =
 * ws[i][*].  A sample's look-up address is one VABSDIFF: 128 |q - p| plus
 * the lane's copy of the table.  In the centre column (CENTRE, i = R) the
 * samples at the outputs themselves are paired: outputs k and k2 weigh each
 * other's sample alike (ws[R][R + d] = ws[R][R - d]: the taps are
 * symmetric, which the launch checks), so a pair takes one look-up and one
 * product, and a centre weighs itself in the sums' first values. */
template < int R, bool CENTRE > __device__ __forceinline__ void
byte_column (const uint32_t * col, const float *wcol_s, uint32_t lane_lut,
    const uint32_t (&centre)[BB_K], float (&num)[BB_K], float (&den)[BB_K])
{
  constexpr int S = 2 * R + 1, WR = BB_WS_ROW (R), TW = BB_BX + 2 * R;
  float wcol[WR];

#pragma unroll
  for (int j = 0; j < WR; j += 4)
    *(float4 *) (wcol + j) = *(const float4 *) (wcol_s + j);
#pragma unroll
  for (int r = 0; r < BB_K + 2 * R; r++) {
    const uint32_t b = col[r * TW];
    const float q128 = __uint_as_float (b) - 8388608.0f;
    /* the output whose centre this sample is, in the centre column */
    const int k2 = r - R;

#pragma unroll
    for (int k = 0; k < BB_K; k++) {
      const int j = r - k;
      const bool paired = CENTRE && k2 >= 0 && k2 < BB_K;

      /* outside the window, a centre, or the second of a pair */
      if (j < 0 || j >= S || (paired && j <= R))
        continue;

      float wr;

      /* the table is written before the first barrier and never again */
      asm volatile ("ld.shared.f32 %0, [%1];":"=f" (wr)
          :"r" (__usad (b, centre[k], lane_lut)));
      const float w = wcol[j] * wr;

      num[k] = fmaf (w, q128, num[k]);
      den[k] += w;
      if (paired) {
        num[k2] = fmaf (w, __uint_as_float (centre[k]) - 8388608.0f,
            num[k2]);
        den[k2] += w;
      }
    }
  }
}

/* n / d as (n m) >> s for every n < 2^31, m and s from magic_div (d). */
__device__ __forceinline__ int
div_magic (int n, uint32_t m, int s)
{
  return (int) ((uint64_t) (uint32_t) n * m >> s);
}

template < int R > __global__ void
__launch_bounds__ (BB_THREADS, BB_BLOCKS_PER_SM)
bilateral_byte_kernel (const __grid_constant__ BilateralParams p)
{
  constexpr int S = 2 * R + 1, WR = BB_WS_ROW (R), TW = BB_BX + 2 * R;
  /* the column loop unrolled at the small radii, where its own
   * instructions count */
  constexpr int COLUMNS_UNROLLED = R <= 2 ? 2 * R : 1;
  extern __shared__ __align__ (16) float smem[];
  float *lut = smem;            /* BB_LUT: wr[d] at 32 d + lane */
  float *ws = lut + BB_LUT;     /* S x WR: ws[i * WR + j] = kx[i] ky[j] */
  uint32_t *tile = (uint32_t *) (ws + S * WR);  /* TH x TW */
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BB_BX + tx;

  /* 4 lanes' copies of one weight a store */
  for (int e = tid; e < BB_LUT / 4; e += BB_THREADS) {
    const float w = p.lut8[e / (BB_LANES / 4)];

    ((float4 *) lut)[e] = make_float4 (w, w, w, w);
  }
  for (int e = tid; e < S * WR; e += BB_THREADS) {
    const int i = e / WR, j = e - i * WR;

    /* the same float products as the reference's */
    ws[e] = j < S ? p.kx[i] * p.ky[j] : 0.0f;
  }
  const uint32_t lane_lut = (uint32_t) __cvta_generic_to_shared (lut) +
      4 * tx;
  /* a centre's own weight, ws[R][R] wr[0] */
  const float wc = p.kx[R] * p.ky[R] * p.lut8[0];
  const int per_comp = p.tiles_x * p.tiles_y;

  for (int t = blockIdx.x; t < per_comp * p.nc; t += gridDim.x) {
    const int c = div_magic (t, p.comp_m, p.comp_s), tt = t - c * per_comp;
    const int by = div_magic (tt, p.tx_m, p.tx_s), bx = tt - by * p.tiles_x;
    const int x0 = bx * BB_BX, y0 = p.row_begin + by * BB_TILE_H;
    const int x = x0 + tx, yt = y0 + ty * BB_K;

    if (p.op[c] != CUCONV_COMP_FILTER) {
      for (int k = 0; k < BB_K; k++) {
        if (x >= p.width || yt + k >= p.row_end)
          break;
        write_word < 1 > (p, x, yt + k, c, p.op[c] == CUCONV_COMP_COPY ?
            read_word < 1 > (p, x, yt + k, c) : p.fill);
      }
      continue;
    }

    /* the previous tile's sums are done with the tile */
    __syncthreads ();
    if (x0 >= R && x0 + BB_BX + R <= p.width && y0 >= R
        && y0 + BB_TILE_H + R <= p.height)
      byte_fill_inside < R > (p, tile, x0, y0, c);
    else
      byte_fill_border < R > (p, tile, x0, y0, c);
    __syncthreads ();

    const uint32_t *col = tile + ty * BB_K * TW + tx;
    uint32_t centre[BB_K];
    float num[BB_K], den[BB_K];

    /* the sums start from the centre's own term */
#pragma unroll
    for (int k = 0; k < BB_K; k++) {
      centre[k] = col[(k + R) * TW + R];
      num[k] = wc * (__uint_as_float (centre[k]) - 8388608.0f);
      den[k] = wc;
    }
    /* the columns but the centre one, then the centre one */
#pragma unroll COLUMNS_UNROLLED
    for (int n = 0; n < 2 * R; n++) {
      const int i = n < R ? n : n + 1;

      byte_column < R, false > (col + i, ws + i * WR, lane_lut, centre, num,
          den);
    }
    byte_column < R, true > (col + R, ws + R * WR, lane_lut, centre, num,
        den);
    uint8_t *out = p.dst + (size_t) yt * p.dst_pitch +
        (size_t) (x * p.nc + c);

#pragma unroll
    for (int k = 0; k < BB_K; k++) {
      if (x < p.width && yt + k < p.row_end) {
        float rcp;

        /* den >= 1: rcp.approx (within 1 ulp) keeps the result within
         * the error bound */
        asm ("rcp.approx.ftz.f32 %0, %1;":"=f" (rcp):"f" (den[k]));
        *out = (uint8_t) round_sat_bits (num[k] * (rcp * (1.0f / 128.0f)));
      }
      out += p.dst_pitch;
    }
  }
}

/* m and s such that n / d = (n m) >> s for every n < 2^31, d >= 1: s =
 * 31 + l, 2^l >= d, and m = ceil (2^s / d), below 2^32.  As m d - 2^s <
 * d, n m / 2^s exceeds n / d by less than n / 2^s < 2^-l <= 1 / d: too
 * little to reach the next integer. */
static void
magic_div (int d, uint32_t * m, int *s)
{
  int l = 0;

  while ((1 << l) < d)
    l++;
  *s = 31 + l;
  *m = (uint32_t) ((((uint64_t) 1 << *s) + d - 1) / d);
}

#define BB_CASE(r) case r: \
    return launch_byte < r > (p, stream);
#define BB_RADII(X) X (1) X (2) X (3) X (4) X (5) X (6) X (7) X (8)

template < int R > static cudaError_t
launch_byte (BilateralParams & p, cudaStream_t stream)
{
  static SmemLimit limit;
  const int smem = (int) sizeof (float) * BB_SMEM_FLOATS (R);
  int sms;
  cudaError_t e = device_sm_count (&sms);

  if (e != cudaSuccess)
    return e;
  p.tiles_x = (p.width + BB_BX - 1) / BB_BX;
  p.tiles_y = (p.row_end - p.row_begin + BB_TILE_H - 1) / BB_TILE_H;
  const int tiles = p.tiles_x * p.tiles_y * p.nc;
  const int grid = tiles < sms * BB_BLOCKS_PER_SM ? tiles :
      sms * BB_BLOCKS_PER_SM;

  /* sample e + m BB_THREADS of the tile, from sample e */
  for (int m = 0; m < BB_FILL_MAX; m++) {
    const int tw = BB_BX + 2 * R, d = m * BB_THREADS;

    p.fill_off[m] = (uint32_t) (d / tw * p.src_pitch + d % tw * p.nc);
  }
  p.fill_wrap = (uint32_t) (p.src_pitch - (BB_BX + 2 * R) * p.nc);
  magic_div (p.tiles_x * p.tiles_y, &p.comp_m, &p.comp_s);
  magic_div (p.tiles_x, &p.tx_m, &p.tx_s);

  return launch_smem ((const void *) bilateral_byte_kernel < R >, smem,
      limit,[&]{
        bilateral_byte_kernel < R > <<< grid, dim3 (BB_BX, BB_BY), smem,
            stream >>> (p);});
}

/* Whether taps w[0..2r] are the same either side of the centre. */
static bool
taps_symmetric (const float *w, int r)
{
  for (int i = 1; i <= r; i++)
    if (w[r - i] != w[r + i])
      return false;
  return true;
}

template < int SB > static cudaError_t
launch (const BilateralParams & p, cudaStream_t stream)
{
  const int tw = BL_BX + 2 * p.rx, th = BL_TILE_H + 2 * p.ry;
  const size_t smem = sizeof (float) * ((size_t) tw * th +
      (2 * p.rx + 1) * (2 * p.ry + 1) + p.lut_n);
  const dim3 block (BL_BX, BL_BY);
  const dim3 grid ((p.width + BL_BX - 1) / BL_BX,
      (p.row_end - p.row_begin + BL_TILE_H - 1) / BL_TILE_H, p.nc);

  bilateral_kernel < SB > <<<grid, block, smem, stream>>> (p);
  return cudaGetLastError ();
}

cudaError_t
launch_bilateral (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, cudaStream_t stream)
{
  const CuconvTaps *tx = cuconv_filter_taps_x (&f, &pl);
  const CuconvTaps *ty = cuconv_filter_taps_y (&f, &pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const int sb = cuconv_plane_sample_bytes (&pl);
  const double sr = cuconv_bilateral_sigma_range (&f, depth);
  BilateralParams p;

  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || tx->untruncated
      || ty->untruncated || tx->radius > CUCONV_MAX_BILATERAL_RADIUS
      || ty->radius > CUCONV_MAX_BILATERAL_RADIUS || depth > 16
      || row_begin < 0 || row_end > pl.height)
    return cudaErrorInvalidValue;
  if (row_end <= row_begin || pl.width <= 0)
    return cudaSuccess;

  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.border = f.border;
  p.shift = depth == 8 ? 0 : pl.shift;
  p.mask = (1u << depth) - 1;
  p.rx = tx->radius;
  p.ry = ty->radius;
  p.lut_n = depth <= 12 ? 1 << depth : 0;
  p.lut_host = depth == 8;
  p.zero_range = !(sr > 0.0);
  p.inv2sr2 = p.zero_range ? 0.0f : (float) (1.0 / (2.0 * sr * sr));
  for (int c = 0; c < CUCONV_MAX_COMP; c++)
    p.op[c] = c < pl.n_comp ? pl.op[c] : (uint8_t) CUCONV_COMP_COPY;
  p.fill = pl.fill;
  memcpy (p.kx, tx->w, sizeof (float) * (2 * p.rx + 1));
  memcpy (p.ky, ty->w, sizeof (float) * (2 * p.ry + 1));
  if (p.lut_host)
    cuconv_bilateral_range_lut (p.lut8, 256, sr);

  if (sb == 2)
    return launch < 2 > (p, stream);
  /* the byte kernel pairs outputs by the symmetry of ky */
  if (p.rx == p.ry && taps_symmetric (p.ky, p.ry)) {
    switch (p.rx) {
        BB_RADII (BB_CASE)
      default:
        break;
    }
  }
  return launch < 1 > (p, stream);
}

}                               /* namespace cuconv */
