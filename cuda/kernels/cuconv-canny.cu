/* gst-cudaconvolve: Canny's edges on the GPU (docs/semantics.md, "Canny"),
 * bit for bit the definition's (cuconv-canny.c).  For each filtered
 * component: the two fixed-point smoothing passes when there is
 * smoothing; then one launch a tile of CN_TX x CN_TY pixels that stages
 * the smoothed component with a margin of 2, computes the gradient and
 * its quantised direction (cuconv-canny.h) on the tile and a margin of 1,
 * suppresses and thresholds the tile's pixels, and joins the tile's
 * candidates (above the low threshold, kept by the suppression) to their
 * candidate 8-neighbours by union-find in shared memory.  The hysteresis
 * then goes on as connected components over the plane, on the device:
 * the candidates on the tiles' edges joined to their neighbours across
 * them, every candidate pointed at its root, the roots of the components
 * that hold a pixel above the high threshold marked, and the edges
 * written.  Four launches a component (six with smoothing), none waiting
 * on the host; a pixel's state is a byte, and only candidates, a small
 * share of a plane, have a union-find label.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <limits.h>

#include <cuda_runtime.h>

#include "cuconv-canny.h"
#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

#define CN_TX 32
#define CN_TY 8

/* A pixel's state (CannyParams.state), bits: a candidate, above the high
 * threshold, the local root of a tile's component with a pixel above the
 * high threshold, and (on a component's root) an edge. */
enum
{
  CN_CANDIDATE = 1,
  CN_STRONG = 2,
  CN_ROOT_STRONG = 4,
  CN_EDGE = 8,
};

/* The tile's staged smoothed component (a margin of 2) and its gradient
 * (a margin of 1). */
#define CN_SW (CN_TX + 4)
#define CN_SH (CN_TY + 4)
#define CN_MW (CN_TX + 2)
#define CN_MH (CN_TY + 2)

/* One component of a plane and the scratch its steps share. */
struct CannyParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch;
  size_t dst_pitch;
  int w;
  int h;
  int nc;
  int comp;
  int bytes;                    /* a sample's: 1 or 2 */
  int shift;
  unsigned mask;
  CuconvBorder border;
  long long low;                /* squared thresholds at this depth */
  long long high;
  int *a;                       /* the smoothing's passes, w x h each; */
  int *b;                       /* NULL without smoothing */
  int *label;                   /* candidates: union-find parents */
  uint8_t *state;               /* the CN_ bits, a byte a pixel; whole
                                 * 32-bit words */
};

struct CannyTaps
{
  int rx, ry;
  int x[CUCONV_MAX_CANNY_TAPS];
  int y[CUCONV_MAX_CANNY_TAPS];
};

#define CN_PIXEL() \
  const int x = blockIdx.x * blockDim.x + threadIdx.x; \
  const int y = blockIdx.y * blockDim.y + threadIdx.y; \
  if (x >= p.w || y >= p.h) \
    return; \
  const size_t i = (size_t) y * p.w + x

/* The horizontal pass from the component's samples. */
__global__ void
canny_smooth_x (const CannyParams p, const __grid_constant__ CannyTaps t)
{
  CN_PIXEL ();
  const uint8_t *row = p.src + y * p.src_pitch;
  int sum = 1 << (CUCONV_CANNY_TAP_SHIFT - 1);

  for (int k = -t.rx; k <= t.rx; k++) {
    const int u = cuconv_border_index (p.border, x + k, p.w);

    if (u >= 0)
      sum += t.x[k + t.rx] * (int) ((load_word (row, u * p.nc + p.comp,
                  p.bytes) >> p.shift) & p.mask);
  }
  p.a[i] = sum >> CUCONV_CANNY_TAP_SHIFT;
}

/* The vertical pass. */
__global__ void
canny_smooth_y (const CannyParams p, const __grid_constant__ CannyTaps t)
{
  CN_PIXEL ();
  int sum = 1 << (CUCONV_CANNY_TAP_SHIFT - 1);

  for (int k = -t.ry; k <= t.ry; k++) {
    const int v = cuconv_border_index (p.border, y + k, p.h);

    if (v >= 0)
      sum += t.y[k + t.ry] * p.a[(size_t) v * p.w + x];
  }
  p.b[i] = sum >> CUCONV_CANNY_TAP_SHIFT;
}

/* The smoothed component at (x, y) of the plane, anywhere: what the
 * border reads there, 0 where it reads nothing. */
__device__ __forceinline__ int
smoothed (const CannyParams & p, int x, int y)
{
  const int u = cuconv_border_index (p.border, x, p.w);
  const int v = cuconv_border_index (p.border, y, p.h);

  if (u < 0 || v < 0)
    return 0;
  if (p.b)
    return p.b[(size_t) v * p.w + u];
  return (int) ((load_word (p.src + (size_t) v * p.src_pitch, u * p.nc +
              p.comp, p.bytes) >> p.shift) & p.mask);
}

__device__ __forceinline__ int
find_root (int *label, int i)
{
  int r = label[i];

  while (r != i) {
    i = r;
    r = label[i];
  }
  return r;
}

/* Joins the trees of a and b: the larger root goes under the smaller,
 * by compare-and-swap, again from the new roots when another thread
 * moved one first.  label in shared or global memory. */
__device__ void
unite (int *label, int a, int b)
{
  for (;;) {
    a = find_root (label, a);
    b = find_root (label, b);
    if (a == b)
      return;
    if (a > b) {
      const int t = a;

      a = b;
      b = t;
    }
    if (atomicCAS (&label[b], b, a) == b)
      return;
  }
}

/* One tile: the gradient, the suppression and the thresholds, and the
 * tile's candidates joined into components, each candidate's label its
 * component's root in the tile (as a pixel of the plane). */
__global__ void
__launch_bounds__ (CN_TX * CN_TY)
canny_tile (const CannyParams p)
{
  __shared__ int s[CN_SH][CN_SW];
  __shared__ long long m[CN_MH][CN_MW];
  __shared__ uint8_t dir[CN_MH][CN_MW];
  __shared__ int lab[CN_TY * CN_TX];
  __shared__ int strong[CN_TY * CN_TX];
  const int x0 = blockIdx.x * CN_TX, y0 = blockIdx.y * CN_TY;
  const int t = threadIdx.y * CN_TX + threadIdx.x;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool inside = x < p.w && y < p.h;
  int st = 0, root = -1;

  for (int k = t; k < CN_SH * CN_SW; k += CN_TX * CN_TY)
    s[k / CN_SW][k % CN_SW] = smoothed (p, x0 - 2 + k % CN_SW,
        y0 - 2 + k / CN_SW);
  __syncthreads ();

  /* the gradient; 0 outside the plane, where the suppression reads it */
  for (int k = t; k < CN_MH * CN_MW; k += CN_TX * CN_TY) {
    const int r = k / CN_MW, c = k % CN_MW;
    const int u = x0 - 1 + c, v = y0 - 1 + r;

    if (u < 0 || v < 0 || u >= p.w || v >= p.h) {
      m[r][c] = 0;
      dir[r][c] = 0;
      continue;
    }
#define S(du, dv) s[r + 1 + (dv)][c + 1 + (du)]
    const int gx = S (1, -1) + 2 * S (1, 0) + S (1, 1) - S (-1, -1) -
        2 * S (-1, 0) - S (-1, 1);
    const int gy = S (-1, 1) + 2 * S (0, 1) + S (1, 1) - S (-1, -1) -
        2 * S (0, -1) - S (1, -1);
#undef S
    m[r][c] = (long long) gx * gx + (long long) gy * gy;
    dir[r][c] = (uint8_t) cuconv_canny_direction (gx, gy);
  }
  __syncthreads ();

  if (inside) {
    const int r = threadIdx.y + 1, c = threadIdx.x + 1;
    const long long mc = m[r][c];
    const int d = dir[r][c];
    int dx, dy;

    cuconv_canny_step (d, &dx, &dy);
    if (mc > p.low && cuconv_canny_keep (mc, m[r + dy][c + dx],
            m[r - dy][c - dx], d))
      st = CN_CANDIDATE | (mc > p.high ? CN_STRONG : 0);
  }
  lab[t] = st ? t : -1;
  strong[t] = 0;
  __syncthreads ();

  /* each candidate with its candidate neighbours in the tile right,
   * below left, below and below right: every pair once */
  if (st) {
    if (threadIdx.x + 1 < CN_TX && lab[t + 1] >= 0)
      unite (lab, t, t + 1);
    if (threadIdx.y + 1 < CN_TY) {
      for (int k = -1; k <= 1; k++) {
        const int u = (int) threadIdx.x + k;

        if (u >= 0 && u < CN_TX && lab[t + CN_TX + k] >= 0)
          unite (lab, t, t + CN_TX + k);
      }
    }
  }
  __syncthreads ();
  if (st) {
    root = find_root (lab, t);
    if (st & CN_STRONG)
      strong[root] = 1;
  }
  __syncthreads ();

  if (!inside)
    return;
  if (st) {
    p.label[(size_t) y * p.w + x] = (y0 + root / CN_TX) * p.w + x0 +
        root % CN_TX;
    if (root == t && strong[t])
      st |= CN_ROOT_STRONG;
  }
  p.state[(size_t) y * p.w + x] = (uint8_t) st;
}

/* The candidates on a tile's last row and last column joined to their
 * candidate neighbours in the tiles below and to the right: with the
 * tiles' own joins, every 8-neighbour pair of candidates. */
__global__ void
canny_stitch (const CannyParams p)
{
  const int x0 = blockIdx.x * CN_TX, y0 = blockIdx.y * CN_TY;
  int x, y, n[3][2];

  if (threadIdx.x < CN_TX) {
    x = x0 + threadIdx.x;
    y = y0 + CN_TY - 1;
    for (int k = 0; k < 3; k++) {
      n[k][0] = x + k - 1;
      n[k][1] = y + 1;
    }
  } else {
    x = x0 + CN_TX - 1;
    y = y0 + threadIdx.x - CN_TX;
    for (int k = 0; k < 3; k++) {
      n[k][0] = x + 1;
      n[k][1] = y + k - 1;
    }
  }
  if (x >= p.w || y >= p.h || !(p.state[(size_t) y * p.w + x] & CN_CANDIDATE))
    return;
  for (int k = 0; k < 3; k++) {
    const int u = n[k][0], v = n[k][1];

    if (u >= 0 && v >= 0 && u < p.w && v < p.h &&
        (p.state[(size_t) v * p.w + u] & CN_CANDIDATE))
      unite (p.label, y * p.w + x, v * p.w + u);
  }
}

/* Every candidate pointed at its component's root; a tile's component
 * with a pixel above the high threshold marks the root an edge. */
__global__ void
canny_resolve (const CannyParams p)
{
  CN_PIXEL ();
  const int st = p.state[i];

  if (!(st & CN_CANDIDATE))
    return;
  const int r = find_root (p.label, (int) i);

  p.label[i] = r;
  if (st & CN_ROOT_STRONG)
    atomicOr ((unsigned *) (p.state + (r & ~3)), CN_EDGE << 8 * (r & 3));
}

/* The component's samples: the maximum on a candidate whose root is an
 * edge, 0 elsewhere. */
__global__ void
canny_write (const CannyParams p)
{
  CN_PIXEL ();
  const unsigned v = (p.state[i] & CN_CANDIDATE) &&
      (p.state[p.label[i]] & CN_EDGE) ? p.mask : 0;

  store_word (p.dst + y * p.dst_pitch, x * p.nc + p.comp, p.bytes,
      v << p.shift);
}

/* Components copied or filled. */
__global__ void
canny_other (const CannyParams p, CuconvCompOp op, unsigned fill)
{
  CN_PIXEL ();
  const int k = x * p.nc + p.comp;

  (void) i;                     /* CN_PIXEL's */
  store_word (p.dst + y * p.dst_pitch, k, p.bytes, op == CUCONV_COMP_FILL ?
      fill << p.shift : load_word (p.src + y * p.src_pitch, k, p.bytes));
}

cudaError_t
launch_canny (const CuconvPlane & pl, const CuconvFilter & f, Scratch & sc,
    cudaStream_t stream)
{
  const size_t n = (size_t) pl.width * (size_t) pl.height;
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const dim3 threads (CN_TX, CN_TY);
  const dim3 grid ((unsigned) ((pl.width + CN_TX - 1) / CN_TX),
      (unsigned) ((pl.height + CN_TY - 1) / CN_TY));
  const int sx = pl.sub_x > 1 ? 2 : 1, sy = pl.sub_y > 1 ? 2 : 1;
  bool smooth;
  CannyParams p;
  CannyTaps t;
  void *mem;
  cudaError_t e;

  if (n == 0)
    return cudaSuccess;
  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || n > INT_MAX ||
      grid.y > 65535)
    return cudaErrorInvalidValue;
  memset (&t, 0, sizeof (t));
  t.rx = f.x[sx - 1].radius;
  t.ry = f.y[sy - 1].radius;
  if (t.rx > CUCONV_MAX_CANNY_RADIUS || t.ry > CUCONV_MAX_CANNY_RADIUS)
    return cudaErrorInvalidValue;
  memcpy (t.x, f.canny_x[sx - 1], sizeof (int) * (2 * t.rx + 1));
  memcpy (t.y, f.canny_y[sy - 1], sizeof (int) * (2 * t.ry + 1));
  /* one tap of 2^SHIFT leaves the samples as they are */
  smooth = t.rx > 0 || t.ry > 0;

  /* label (4 bytes), with smoothing a and b (4 each), state (1, in whole
   * words): 5 or 13 bytes a pixel */
  e = scratch_take (sc, (smooth ? 12 : 4) * n + ((n + 3) & ~(size_t) 3),
      stream, &mem);
  if (e != cudaSuccess)
    return e;

  memset (&p, 0, sizeof (p));
  p.src = pl.src;
  p.dst = pl.dst;
  p.src_pitch = (size_t) pl.src_stride;
  p.dst_pitch = (size_t) pl.dst_stride;
  p.w = pl.width;
  p.h = pl.height;
  p.nc = pl.n_comp;
  p.bytes = cuconv_plane_sample_bytes (&pl);
  p.shift = p.bytes == 1 ? 0 : pl.shift;
  p.mask = (1u << depth) - 1;
  p.border = f.border;
  p.low = cuconv_canny_threshold (f.canny_low, depth);
  p.high = cuconv_canny_threshold (f.canny_high, depth);
  p.label = (int *) mem;
  p.a = smooth ? p.label + n : NULL;
  p.b = smooth ? p.a + n : NULL;
  p.state = (uint8_t *) (p.label + (smooth ? 3 : 1) * n);

  for (int c = 0; c < pl.n_comp; c++) {
    p.comp = c;
    if (pl.op[c] != CUCONV_COMP_FILTER) {
      canny_other <<< grid, threads, 0, stream >>> (p,
          (CuconvCompOp) pl.op[c], pl.fill);
      continue;
    }
    if (smooth) {
      canny_smooth_x <<< grid, threads, 0, stream >>> (p, t);
      canny_smooth_y <<< grid, threads, 0, stream >>> (p, t);
    }
    canny_tile <<< grid, threads, 0, stream >>> (p);
    canny_stitch <<< grid, CN_TX + CN_TY, 0, stream >>> (p);
    canny_resolve <<< grid, threads, 0, stream >>> (p);
    canny_write <<< grid, threads, 0, stream >>> (p);
  }
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
