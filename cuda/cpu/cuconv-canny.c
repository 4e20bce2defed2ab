/* gst-cudaconvolve: Canny's edges on the CPU (docs/semantics.md,
 * "Canny"), the definition: each filtered component of a plane smoothed
 * in fixed point, its 3x3 Sobel gradient, the suppression of what is not
 * a maximum along the gradient, then the edges above the high threshold
 * grown through the pixels above the low one (8-neighbours).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cuconv-canny.h"
#include "cuconv-sample.h"

/* One smoothing pass, in fixed point: out(x, y) = (sum_i q[i] in(x + (i -
 * r) dx, y + (i - r) dy) + 2^(SHIFT - 1)) >> SHIFT, through the border. */
static void
smooth (const int *in, int *out, int w, int h, const int *q, int r,
    int horizontal, CuconvBorder border)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int sum = 1 << (CUCONV_CANNY_TAP_SHIFT - 1);

      for (int i = -r; i <= r; i++) {
        const int k = horizontal ? cuconv_border_index (border, x + i, w) :
            cuconv_border_index (border, y + i, h);

        if (k >= 0)
          sum += q[i + r] * (horizontal ? in[y * w + k] : in[k * w + x]);
      }
      out[y * w + x] = sum >> CUCONV_CANNY_TAP_SHIFT;
    }
}

/* s at (x, y) through the border (0 outside with the zero border). */
static int
at (const int *s, int w, int h, int x, int y, CuconvBorder border)
{
  const int i = cuconv_border_index (border, x, w);
  const int j = cuconv_border_index (border, y, h);

  return i < 0 || j < 0 ? 0 : s[j * w + i];
}

/* m at (x, y), 0 outside the plane. */
static long long
mag_at (const long long *m, int w, int h, int x, int y)
{
  return x < 0 || y < 0 || x >= w || y >= h ? 0 : m[(size_t) y * w + x];
}

/* The edge map of component c of p into edge (1 on an edge). */
static void
component_edges (const CuconvPlane * p, const CuconvFilter * f, int c,
    int *a, int *b, long long *m, unsigned char *dir, unsigned char *edge,
    int *stack)
{
  const int w = p->width, h = p->height;
  const int sx = p->sub_x > 1 ? 2 : 1, sy = p->sub_y > 1 ? 2 : 1;
  const int depth = sample_depth (p), shift = sample_shift (p);
  const unsigned mask = (1u << depth) - 1;
  const double scale = ldexp (1.0, depth - 8);
  const long long low = (long long) floor (f->canny_low * scale *
      f->canny_low * scale);
  const long long high = (long long) floor (f->canny_high * scale *
      f->canny_high * scale);
  int n = 0;

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      a[y * w + x] = (int) ((sample_read (p, x, y, c) >> shift) & mask);
  smooth (a, b, w, h, f->canny_x[sx - 1], f->x[sx - 1].radius, 1, f->border);
  smooth (b, a, w, h, f->canny_y[sy - 1], f->y[sy - 1].radius, 0, f->border);

  /* the gradient: 3x3 Sobel of the smoothed component */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
#define S(i, j) at (a, w, h, x + (i), y + (j), f->border)
      const int gx = S (1, -1) + 2 * S (1, 0) + S (1, 1) - S (-1, -1) -
          2 * S (-1, 0) - S (-1, 1);
      const int gy = S (-1, 1) + 2 * S (0, 1) + S (1, 1) - S (-1, -1) -
          2 * S (0, -1) - S (1, -1);
#undef S
      m[(size_t) y * w + x] = (long long) gx * gx + (long long) gy * gy;
      dir[(size_t) y * w + x] = (unsigned char) cuconv_canny_direction (gx,
          gy);
    }

  /* the suppression and the thresholds: 2 strong, 1 weak, 0 none */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const size_t i = (size_t) y * w + x;
      int dx, dy;

      edge[i] = 0;
      if (m[i] <= low)
        continue;
      cuconv_canny_step (dir[i], &dx, &dy);
      if (!cuconv_canny_keep (m[i], mag_at (m, w, h, x + dx, y + dy),
              mag_at (m, w, h, x - dx, y - dy), dir[i]))
        continue;
      edge[i] = m[i] > high ? 2 : 1;
      if (edge[i] == 2)
        stack[n++] = (int) i;
    }

  /* the hysteresis: every weak pixel connected to a strong one */
  while (n > 0) {
    const int i = stack[--n], x = i % w, y = i / w;

    for (int j = -1; j <= 1; j++)
      for (int k = -1; k <= 1; k++) {
        const int u = x + k, v = y + j;

        if (u >= 0 && v >= 0 && u < w && v < h && edge[v * w + u] == 1) {
          edge[v * w + u] = 2;
          stack[n++] = v * w + u;
        }
      }
  }
}

int
cuconv_canny_plane (const CuconvPlane * p, const CuconvFilter * f)
{
  const size_t n = (size_t) (p->width > 0 ? p->width : 0) *
      (size_t) (p->height > 0 ? p->height : 0);
  const unsigned max = (1u << sample_depth (p)) - 1;
  int *a = malloc (sizeof (int) * n), *b = malloc (sizeof (int) * n);
  int *stack = malloc (sizeof (int) * n);
  long long *m = malloc (sizeof (long long) * n);
  unsigned char *dir = malloc (n), *edge = calloc (n ? n : 1, 1);
  int ret = -1;

  if (n == 0) {
    ret = 0;
    goto done;
  }
  if (!a || !b || !stack || !m || !dir || !edge)
    goto done;
  for (int c = 0; c < p->n_comp; c++) {
    if (p->op[c] == CUCONV_COMP_FILTER)
      component_edges (p, f, c, a, b, m, dir, edge, stack);
    for (int y = 0; y < p->height; y++)
      for (int x = 0; x < p->width; x++)
        sample_write_op (p, x, y, c,
            edge[(size_t) y * p->width + x] == 2 ? max : 0);
  }
  ret = 0;
done:
  free (a);
  free (b);
  free (stack);
  free (m);
  free (dir);
  free (edge);
  return ret;
}
