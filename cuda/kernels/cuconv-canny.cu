/* gst-cudaconvolve: Canny's edges on the GPU (docs/semantics.md, "Canny"),
 * bit for bit the definition's (cuconv-canny.c): for each filtered
 * component the two fixed-point smoothing passes, the gradient with its
 * quantised direction (cuconv-canny.h), the suppression and the
 * thresholds, then the hysteresis as connected components on the device:
 * every candidate pixel (above the low threshold, kept by the
 * suppression) joined to its candidate 8-neighbours by union-find, and a
 * component is edges where one of its pixels is above the high
 * threshold.  Eight launches a component, none waiting on the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <cuda_runtime.h>

#include "cuconv-canny.h"
#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

#define CN_TX 32
#define CN_TY 8

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
  int *a;                       /* the smoothing's passes, w x h each */
  int *b;
  long long *m;                 /* squared magnitudes */
  uint8_t *dir;                 /* directions; then 1 on a strong root */
  int *label;                   /* union-find parents, -1: no candidate */
  uint8_t *strong;              /* above the high threshold */
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

__device__ __forceinline__ int
smoothed (const CannyParams & p, int x, int y)
{
  const int u = cuconv_border_index (p.border, x, p.w);
  const int v = cuconv_border_index (p.border, y, p.h);

  return u < 0 || v < 0 ? 0 : p.b[(size_t) v * p.w + u];
}

/* The 3x3 Sobel gradient: its squared magnitude and direction. */
__global__ void
canny_gradient (const CannyParams p)
{
  CN_PIXEL ();
#define S(u, v) smoothed (p, x + (u), y + (v))
  const int gx = S (1, -1) + 2 * S (1, 0) + S (1, 1) - S (-1, -1) -
      2 * S (-1, 0) - S (-1, 1);
  const int gy = S (-1, 1) + 2 * S (0, 1) + S (1, 1) - S (-1, -1) -
      2 * S (0, -1) - S (1, -1);
#undef S

  p.m[i] = (long long) gx * gx + (long long) gy * gy;
  p.dir[i] = (uint8_t) cuconv_canny_direction (gx, gy);
}

__device__ __forceinline__ long long
mag_at (const CannyParams & p, int x, int y)
{
  return x < 0 || y < 0 || x >= p.w || y >= p.h ? 0 :
      p.m[(size_t) y * p.w + x];
}

/* The suppression and the thresholds: a candidate is its own parent. */
__global__ void
canny_candidates (const CannyParams p)
{
  CN_PIXEL ();
  const long long m = p.m[i];
  const int d = p.dir[i];
  int dx, dy, keep;

  cuconv_canny_step (d, &dx, &dy);
  keep = m > p.low && cuconv_canny_keep (m, mag_at (p, x + dx, y + dy),
      mag_at (p, x - dx, y - dy), d);
  p.label[i] = keep ? (int) i : -1;
  p.strong[i] = keep && m > p.high;
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
 * moved one first. */
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

/* Each candidate with its candidate neighbours right, below left, below
 * and below right: every 8-neighbour pair once. */
__global__ void
canny_merge (const CannyParams p)
{
  CN_PIXEL ();
  if (p.label[i] < 0)
    return;
  if (x + 1 < p.w && p.label[i + 1] >= 0)
    unite (p.label, (int) i, (int) i + 1);
  if (y + 1 < p.h) {
    for (int k = -1; k <= 1; k++) {
      const int u = x + k;

      if (u >= 0 && u < p.w && p.label[i + p.w + k] >= 0)
        unite (p.label, (int) i, (int) (i + p.w + k));
    }
  }
}

/* Every candidate's parent becomes its root; a strong one marks it
 * (dir, no longer needed, holds the marks). */
__global__ void
canny_roots (const CannyParams p)
{
  CN_PIXEL ();
  p.dir[i] = 0;
}

__global__ void
canny_mark (const CannyParams p)
{
  CN_PIXEL ();
  if (p.label[i] < 0)
    return;
  const int r = find_root (p.label, (int) i);

  p.label[i] = r;
  if (p.strong[i])
    p.dir[r] = 1;
}

/* The component's samples: the maximum where its root is marked. */
__global__ void
canny_write (const CannyParams p)
{
  CN_PIXEL ();
  const int r = p.label[i];
  const unsigned v = r >= 0 && p.dir[r] ? p.mask : 0;

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
  CannyParams p;
  CannyTaps t;
  void *mem;
  cudaError_t e;

  if (n == 0)
    return cudaSuccess;
  if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP)
    return cudaErrorInvalidValue;
  /* m (8 bytes, first for its alignment), a, b, label (4 each), dir,
   * strong (1 each): 22 bytes a pixel */
  e = scratch_take (sc, 22 * n, stream, &mem);
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
  p.m = (long long *) mem;
  p.a = (int *) (p.m + n);
  p.b = p.a + n;
  p.label = p.b + n;
  p.dir = (uint8_t *) (p.label + n);
  p.strong = p.dir + n;

  memset (&t, 0, sizeof (t));
  t.rx = f.x[sx - 1].radius;
  t.ry = f.y[sy - 1].radius;
  if (t.rx > CUCONV_MAX_CANNY_RADIUS || t.ry > CUCONV_MAX_CANNY_RADIUS)
    return cudaErrorInvalidValue;
  memcpy (t.x, f.canny_x[sx - 1], sizeof (int) * (2 * t.rx + 1));
  memcpy (t.y, f.canny_y[sy - 1], sizeof (int) * (2 * t.ry + 1));

  for (int c = 0; c < pl.n_comp; c++) {
    p.comp = c;
    if (pl.op[c] != CUCONV_COMP_FILTER) {
      canny_other <<< grid, threads, 0, stream >>> (p,
          (CuconvCompOp) pl.op[c], pl.fill);
      continue;
    }
    canny_smooth_x <<< grid, threads, 0, stream >>> (p, t);
    canny_smooth_y <<< grid, threads, 0, stream >>> (p, t);
    canny_gradient <<< grid, threads, 0, stream >>> (p);
    canny_candidates <<< grid, threads, 0, stream >>> (p);
    canny_merge <<< grid, threads, 0, stream >>> (p);
    canny_roots <<< grid, threads, 0, stream >>> (p);
    canny_mark <<< grid, threads, 0, stream >>> (p);
    canny_write <<< grid, threads, 0, stream >>> (p);
  }
  return cudaGetLastError ();
}

}                               /* namespace cuconv */
