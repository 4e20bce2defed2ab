/* gst-cudaconvolve: the global path (docs/design.md, "Wide filters through
 * global memory"): any filter of one or two separable terms with taps of
 * radius up to CUCONV_MAX_RADIUS, in two passes through a float
 * intermediate in global memory, so that no radius and no device ever
 * runs out of shared memory.  The box takes running sums instead
 * (launch_box_sums, cuconv-box-sums.cu) where they take the plane: the
 * dispatch's launch_global chooses.
 *
 * The horizontal pass filters every row the band reads (the band plus
 * the vertical apron, mapped through the border) into one float plane a
 * term; the vertical pass filters columns of those planes, combines the
 * terms, rounds and writes the band.  Each output accumulates its taps in
 * the reference's order, horizontal pass first.
 *
 * Both passes stage a window of their input in shared memory a chunk of
 * taps at a time, so the shared memory a block needs is fixed (about 40
 * KiB, under the 48 KiB every GPU gives without opting in) whatever the
 * radius.  In each, a thread slides a window of registers along the taps,
 * so every value it loads from shared memory feeds several outputs: QP
 * pixels of a row in the horizontal pass (the lanes of a warp take 32
 * rows, whose staged rows have an odd pitch, so their loads fall in 32
 * banks), RPT rows of a column in the vertical pass (the lanes take 32
 * adjacent columns).  The taps, padded with zeros to the widest term,
 * reach device memory through kernel parameters (upload_taps): no host
 * buffer has to outlive the call, nothing synchronises, and a CUDA graph
 * captures them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-terms.cuh"

namespace cuconv {

constexpr int GL_WARPS = THREADS / 32;
constexpr int H_ROWS = 32;      /* horizontal tile: a row a lane */
constexpr int V_COLS = 32;      /* vertical tile: a column a lane */

/* Horizontal pass: pixels a thread (QP, all components: at most 16
 * samples), pixels a tile (a warp's QP side by side), taps a chunk, and
 * the staged row: TW + CH - 1 pixels, an odd number of floats apart.
 * About 40 KiB for any number of components. */
__host__ __device__ constexpr int
h_qp (int nc)
{
  return nc == 3 ? 5 : 16 / nc;
}

__host__ __device__ constexpr int
h_tile (int nc)
{
  return GL_WARPS * h_qp (nc);
}

__host__ __device__ constexpr int
h_chunk (int nc)
{
  return nc == 1 ? 176 : nc == 2 ? 96 : nc == 3 ? 65 : 48;
}

__host__ __device__ constexpr int
h_span (int nc)
{
  return h_tile (nc) + h_chunk (nc) - 1;
}

/* Vertical pass: rows a thread, rows a tile, taps a chunk (about 40 KiB
 * of staged rows for one term or two). */
__host__ __device__ constexpr int
v_rpt (int nt)
{
  return nt == 1 ? 16 : 8;
}

__host__ __device__ constexpr int
v_tile (int nt)
{
  return GL_WARPS * v_rpt (nt);
}

__host__ __device__ constexpr int
v_chunk (int nt)
{
  return nt == 1 ? 192 : 96;
}

/* One plane's passes.  The intermediate h holds, for each term, the
 * horizontal pass of the plane rows [h_lo, h_lo + h_rows), h_pitch floats
 * a row. */
struct GlobalParams : TermsParams
{
  int bytes;                    /* of a sample: 1 or 2 */
  const float *kx;              /* [term][2 rx + 1], padded with zeros */
  const float *ky;              /* [term][2 ry + 1] */
  float *h;
  size_t h_pitch;               /* floats */
  size_t h_term;                /* floats: h_rows * h_pitch */
  int h_lo, h_rows;
};

static __device__ __forceinline__ float
sample_value (const GlobalParams & p, uint32_t word)
{
  return sample_to_float ((word >> p.shift) & p.mask);
}

/* Where coordinate i of a line of n reads (-1: zero), with no division
 * for the coordinates inside. */
static __device__ __forceinline__ int
border_at (int border, int i, int n)
{
  return i >= 0 && i < n ? i : cuconv_border_index ((CuconvBorder) border,
      i, n);
}

/* A pass sums its taps (type A) in the reference's order and precision:
 * in float up to the fused tiles' widest (CUCONV_TILE_MAX_TAPS), in
 * double beyond, where a float sum of up to 2049 products drifts past 1
 * LSB at 16 bits.
 *
 * h[term][r] for the rows of a tile: a lane a row, a warp QP adjacent
 * pixels (all NC components) of it; the taps in chunks of CH, summed in
 * A. */
template < int NT, int NC, typename A > static __global__ void
__launch_bounds__ (THREADS)
global_hpass (const __grid_constant__ GlobalParams p)
{
  constexpr int QP = h_qp (NC), CH = h_chunk (NC), SPAN = h_span (NC);
  constexpr int PITCH = SPAN | 1;       /* odd: a warp's 32 rows, 32 banks */
  __shared__ float in[NC][H_ROWS][PITCH];
  __shared__ float tap[NT][CH];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int x0 = blockIdx.x * h_tile (NC);
  const int r0 = blockIdx.y * H_ROWS;
  const int taps = 2 * p.rx + 1;
  A acc[NT][QP][NC];

#pragma unroll
  for (int m = 0; m < NT; m++)
#pragma unroll
    for (int o = 0; o < QP; o++)
#pragma unroll
      for (int c = 0; c < NC; c++)
        acc[m][o][c] = 0;

  for (int t0 = 0; t0 < taps; t0 += CH) {
    const int n = min (CH, taps - t0);

    __syncthreads ();           /* the previous chunk is read */
    /* pixels x0 - rx + t0 + j of the tile's rows, a warp a row */
    for (int rr = warp; rr < H_ROWS && r0 + rr < p.h_rows; rr += GL_WARPS) {
      const uint8_t *row = p.src + (size_t) (p.h_lo + r0 + rr) * p.src_pitch;

      for (int e = lane; e < (h_tile (NC) + n - 1) * NC; e += 32) {
        const int j = e / NC, c = e - j * NC;
        const int xi = border_at (p.border, x0 - p.rx + t0 + j, p.width);

        in[c][rr][j] = xi < 0 ? 0.0f : sample_value (p, load_word (row,
                xi * NC + c, p.bytes));
      }
    }
    for (int e = threadIdx.x; e < NT * CH; e += THREADS) {
      const int m = e / CH, u = e - m * CH;
      tap[m][u] = u < n ? p.kx[m * taps + t0 + u] : 0.0f;
    }
    __syncthreads ();

    /* output pixel o of the thread reads staged pixel warp QP + o + t at
     * tap t, in slot (o + t) % QP of the window */
    const int j0 = warp * QP;
    float w[QP][NC];

#pragma unroll
    for (int o = 0; o < QP; o++)
#pragma unroll
      for (int c = 0; c < NC; c++)
        w[o][c] = in[c][lane][j0 + o];
    for_taps < QP > (n,[&](int t, int u) {
#pragma unroll
          for (int m = 0; m < NT; m++) {
            const float k = tap[m][t];
#pragma unroll
            for (int o = 0; o < QP; o++)
#pragma unroll
              for (int c = 0; c < NC; c++)
                acc[m][o][c] = fma ((A) k, (A) w[(u + o) % QP][c],
                    acc[m][o][c]);
          }
          if (t + 1 < n) {
#pragma unroll
            for (int c = 0; c < NC; c++)
              w[u][c] = in[c][lane][j0 + t + QP];
          }
        });
  }

  if (r0 + lane >= p.h_rows)
    return;
#pragma unroll
  for (int m = 0; m < NT; m++) {
    float *h = p.h + m * p.h_term + (size_t) (r0 + lane) * p.h_pitch;
#pragma unroll
    for (int o = 0; o < QP; o++) {
      const int x = x0 + warp * QP + o;
      if (x < p.width) {
#pragma unroll
        for (int c = 0; c < NC; c++)
          h[x * NC + c] = (float) acc[m][o][c];
      }
    }
  }
}

/* The band's rows of a tile of V_COLS samples: a lane a column, a warp
 * RPT adjacent rows; the taps in chunks of CH, summed in A.  Row y + j of
 * the plane is read through the border from h. */
template < int NT, typename A > static __global__ void
__launch_bounds__ (THREADS)
global_vpass (const __grid_constant__ GlobalParams p)
{
  constexpr int RPT = v_rpt (NT), CH = v_chunk (NT);
  constexpr int SPAN = v_tile (NT) + CH - 1;
  __shared__ float in[NT][SPAN][V_COLS];
  __shared__ float tap[NT][CH];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int s = blockIdx.x * V_COLS + lane;
  const int y0 = p.row_begin + blockIdx.y * v_tile (NT);
  const int taps = 2 * p.ry + 1;
  const int ob = warp * RPT;
  A acc[NT][RPT];

#pragma unroll
  for (int m = 0; m < NT; m++)
#pragma unroll
    for (int o = 0; o < RPT; o++)
      acc[m][o] = 0;

  for (int t0 = 0; t0 < taps; t0 += CH) {
    const int n = min (CH, taps - t0);

    __syncthreads ();
    /* rows y0 - ry + t0 + j, a warp a row; rows only the tile's outputs
     * past the band read may lie outside h: they read 0 */
    for (int j = warp; j < v_tile (NT) + n - 1; j += GL_WARPS) {
      const int y = border_at (p.border, y0 - p.ry + t0 + j, p.height);
      const int hr = y - p.h_lo;
      const bool in_h = y >= 0 && hr < p.h_rows && hr >= 0 && s < p.ws;
#pragma unroll
      for (int m = 0; m < NT; m++)
        in[m][j][lane] = in_h ? __ldg (p.h + m * p.h_term + (size_t) hr *
            p.h_pitch + s) : 0.0f;
    }
    for (int e = threadIdx.x; e < NT * CH; e += THREADS) {
      const int m = e / CH, u = e - m * CH;
      tap[m][u] = u < n ? p.ky[m * taps + t0 + u] : 0.0f;
    }
    __syncthreads ();

    float w[NT][RPT];
#pragma unroll
    for (int m = 0; m < NT; m++)
#pragma unroll
      for (int o = 0; o < RPT; o++)
        w[m][o] = in[m][ob + o][lane];
    for_taps < RPT > (n,[&](int t, int u) {
#pragma unroll
          for (int m = 0; m < NT; m++) {
            const float k = tap[m][t];
#pragma unroll
            for (int o = 0; o < RPT; o++)
              acc[m][o] = fma ((A) k, (A) w[m][(u + o) % RPT],
                  acc[m][o]);
          }
          if (t + 1 < n) {
#pragma unroll
            for (int m = 0; m < NT; m++)
              w[m][u] = in[m][ob + t + RPT][lane];
          }
        });
  }

  if (s >= p.ws)
    return;
  const int op = p.op[s % p.nc];
#pragma unroll
  for (int o = 0; o < RPT; o++) {
    const int y = y0 + ob + o;
    uint32_t in_word = 0, out;

    if (y >= p.row_end)
      break;
    if (p.need_src)
      in_word = load_word (p.src + (size_t) y * p.src_pitch, s, p.bytes);
    if (op == CUCONV_COMP_COPY) {
      out = in_word;
    } else if (op == CUCONV_COMP_FILL) {
      out = p.fill;
    } else {
      const float v = combine_terms (p.combine, p.amount,
          sample_value (p, in_word), (float) acc[0][o],
          (float) acc[NT - 1][o]);
      out = (cuconv_round_sat (v, p.mask) << p.shift) & p.word_mask;
    }
    store_word (p.dst + (size_t) y * p.dst_pitch, s, p.bytes, out);
  }
}

/* Taps to device memory through kernel parameters: a chunk a launch. */
constexpr int TAPS_CHUNK = 1000;        /* 4 KiB of parameters */

struct TapsChunk
{
  float *dst;
  int n;
  float w[TAPS_CHUNK];
};

static __global__ void
upload_taps (const __grid_constant__ TapsChunk c)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < c.n)
    c.dst[i] = c.w[i];
}

/* Host side ------------------------------------------------------------ */

/* The taps of term m of a direction (r: the widest term's radius), tap i
 * of 2 r + 1: zero where the term is narrower. */
static float
padded_tap (const CuconvTaps * const *t, int r, int i)
{
  const int m = i / (2 * r + 1), k = i % (2 * r + 1) - r;

  return abs (k) <= t[m]->radius ? t[m]->w[k + t[m]->radius] : 0.0f;
}

/* Writes the padded taps of both directions, kx then ky, to d. */
static cudaError_t
send_taps (float *d, const CuconvTaps * const *x, int rx,
    const CuconvTaps * const *y, int ry, int nt, cudaStream_t stream)
{
  const int nx = nt * (2 * rx + 1), total = nx + nt * (2 * ry + 1);
  TapsChunk c;

  for (int i0 = 0; i0 < total; i0 += TAPS_CHUNK) {
    c.dst = d + i0;
    c.n = total - i0 < TAPS_CHUNK ? total - i0 : TAPS_CHUNK;
    for (int k = 0; k < c.n; k++) {
      const int i = i0 + k;
      c.w[k] = i < nx ? padded_tap (x, rx, i) : padded_tap (y, ry, i - nx);
    }
    upload_taps <<< (c.n + 255) / 256, 256, 0, stream >>> (c);
    const cudaError_t e = cudaGetLastError ();
    if (e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

void
rows_read (CuconvBorder border, int height, int row_begin, int row_end,
    int ry, int *lo, int *hi)
{
  const int a = row_begin - ry, b = row_end + ry;
  auto take = [&](int v) {
    const int y = cuconv_border_index (border, v, height);
    if (y >= 0 && y < *lo)
      *lo = y;
    if (y >= *hi)
      *hi = y + 1;
  };

  *lo = a > 0 ? a : 0;
  *hi = b < height ? b : height;
  if (*lo == 0 && *hi == height)
    return;                     /* every row already */
  for (int v = a; v < b && v < 0; v++)
    take (v);                   /* above the plane */
  for (int v = a > height ? a : height; v < b; v++)
    take (v);                   /* below it */
}

typedef void (*GlobalKernel) (GlobalParams);

template < int NT, typename A > static GlobalKernel
pick_hpass (int nc)
{
  switch (nc) {
    case 1:
      return global_hpass < NT, 1, A >;
    case 2:
      return global_hpass < NT, 2, A >;
    case 3:
      return global_hpass < NT, 3, A >;
    default:
      return global_hpass < NT, 4, A >;
  }
}

template < typename A > static GlobalKernel
pick_hpass (int nt, int nc)
{
  return nt == 1 ? pick_hpass < 1, A > (nc) : pick_hpass < 2, A > (nc);
}

template < typename A > static GlobalKernel
pick_vpass (int nt)
{
  return nt == 1 ? global_vpass < 1, A > : global_vpass < 2, A >;
}

/* The two passes with the taps. */
cudaError_t
launch_global_taps (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream)
{
  const int nt = f.n_terms, bytes = cuconv_plane_sample_bytes (&pl);
  const CuconvTaps *x[2] = { &f.x[pl.sub_x - 1], &f.x2[pl.sub_x - 1] };
  const CuconvTaps *y[2] = { &f.y[pl.sub_y - 1], &f.y2[pl.sub_y - 1] };
  GlobalParams p;
  size_t n_taps, bytes_all;
  void *scratch;
  cudaError_t e;

  terms_params_init (p, pl, f, row_begin, row_end);
  p.bytes = bytes;
  h_plane_init (p, pl.height, row_begin, row_end);

  /* one allocation: the taps, then the terms' planes */
  n_taps = ((size_t) nt * (2 * p.rx + 1 + 2 * p.ry + 1) + 63) / 64 * 64;
  bytes_all = sizeof (float) * (n_taps + nt * p.h_term);
  e = scratch_take (sc, bytes_all, stream, &scratch);
  if (e != cudaSuccess)
    return e;
  p.kx = (const float *) scratch;
  p.ky = p.kx + nt * (2 * p.rx + 1);
  p.h = (float *) scratch + n_taps;

  e = send_taps ((float *) scratch, x, p.rx, y, p.ry, nt, stream);
  if (e == cudaSuccess) {
    const GlobalKernel hk = 2 * p.rx + 1 <= CUCONV_TILE_MAX_TAPS ?
        pick_hpass < float > (nt, p.nc) : pick_hpass < double > (nt, p.nc);
    const GlobalKernel vk = 2 * p.ry + 1 <= CUCONV_TILE_MAX_TAPS ?
        pick_vpass < float > (nt) : pick_vpass < double > (nt);
    const int vt = v_tile (nt), ht = h_tile (p.nc);
    dim3 hgrid ((pl.width + ht - 1) / ht, (p.h_rows + H_ROWS - 1) / H_ROWS);
    dim3 vgrid ((p.ws + V_COLS - 1) / V_COLS, (row_end - row_begin + vt - 1)
        / vt);

    hk <<< hgrid, THREADS, 0, stream >>> (p);
    e = cudaGetLastError ();
    if (e == cudaSuccess) {
      vk <<< vgrid, THREADS, 0, stream >>> (p);
      e = cudaGetLastError ();
    }
  }
  return e;
}

static bool
taps_explicit (const CuconvTaps & t)
{
  return !t.untruncated && t.radius >= 0 && t.radius <= CUCONV_MAX_RADIUS;
}

bool
global_args_valid (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end)
{
  const int sx = pl.sub_x - 1, sy = pl.sub_y - 1;

  return !(pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || f.n_terms < 1
      || f.n_terms > 2 || sx < 0 || sx >= CUCONV_MAX_SUBSAMPLE || sy < 0
      || sy >= CUCONV_MAX_SUBSAMPLE || row_begin < 0
      || row_end > pl.height || !taps_explicit (f.x[sx])
      || !taps_explicit (f.y[sy]) || (f.n_terms == 2
          && (!taps_explicit (f.x2[sx]) || !taps_explicit (f.y2[sy]))));
}

}                               /* namespace cuconv */
