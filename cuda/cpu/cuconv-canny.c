/* gst-cudaconvolve: Canny's edges on the CPU (docs/semantics.md,
 * "Canny"), the definition: each filtered component of a plane smoothed
 * in fixed point, its 3x3 Sobel gradient, the suppression of what is not
 * a maximum along the gradient, then the edges above the high threshold
 * grown through the pixels above the low one (8-neighbours).
 *
 * The arrays carry a frame of one sample around the plane, so that the
 * inner loops index neighbours without tests: the smoothed component's
 * frame holds what the border reads there, the magnitudes' frame 0 and
 * the edge map's frame "no candidate".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "cuconv-canny.h"
#include "cuconv-sample.h"

/* The edge map's states. */
enum
{
  NONE = 0,
  WEAK = 1,
  EDGE = 2,
};

typedef struct
{
  int w, h;
  int pw;                       /* a padded row: w + 2 */
  int *a, *b;                   /* w x h: the smoothing's passes */
  int *s;                       /* (w + 2) x (h + 2): smoothed, framed */
  long long *m;                 /* (w + 2) x (h + 2): squared magnitudes */
  unsigned char *dir;           /* w x h */
  unsigned char *edge;          /* (w + 2) x (h + 2) */
  int *stack;                   /* w x h */
  int *bx;                      /* border maps: columns -r .. w - 1 + r */
  int *by;                      /* rows -r .. h - 1 + r */
} Work;

/* idx[k] = the coordinate that k - r reads on a side of n (-1: zero). */
static void
border_map (int *idx, int n, int r, CuconvBorder border)
{
  for (int k = 0; k < n + 2 * r; k++)
    idx[k] = cuconv_border_index (border, k - r, n);
}

/* One smoothing pass, in fixed point: out(x, y) = (sum_i q[i] in(x + (i -
 * r) dx, y + (i - r) dy) + 2^(SHIFT - 1)) >> SHIFT, through the border
 * (map: the border map of that direction for r). */
static void
smooth (const int *in, int *out, int w, int h, const int *q, int r,
    int horizontal, const int *map)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int sum = 1 << (CUCONV_CANNY_TAP_SHIFT - 1);

      for (int i = 0; i <= 2 * r; i++) {
        const int k = map[(horizontal ? x : y) + i];

        if (k >= 0)
          sum += q[i] * (horizontal ? in[y * w + k] : in[k * w + x]);
      }
      out[y * w + x] = sum >> CUCONV_CANNY_TAP_SHIFT;
    }
}

/* The edge map of component c of p into wk->edge (EDGE on an edge). */
static void
component_edges (const CuconvPlane * p, const CuconvFilter * f, int c,
    Work * wk)
{
  const int w = wk->w, h = wk->h, pw = wk->pw;
  const int sx = p->sub_x > 1 ? 2 : 1, sy = p->sub_y > 1 ? 2 : 1;
  const int rx = f->x[sx - 1].radius, ry = f->y[sy - 1].radius;
  const int depth = sample_depth (p), shift = sample_shift (p);
  const unsigned mask = (1u << depth) - 1;
  const long long low = cuconv_canny_threshold (f->canny_low, depth);
  const long long high = cuconv_canny_threshold (f->canny_high, depth);
  /* the neighbours along each direction: first, then second */
  int step[4][2];
  int n = 0;

  for (int d = 0; d < 4; d++) {
    int dx, dy;

    cuconv_canny_step (d, &dx, &dy);
    step[d][0] = dy * pw + dx;
    step[d][1] = -step[d][0];
  }

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      wk->a[y * w + x] = (int) ((sample_read (p, x, y, c) >> shift) & mask);
  /* one tap of 2^SHIFT leaves the samples as they are */
  if (rx > 0) {
    border_map (wk->bx, w, rx, f->border);
    smooth (wk->a, wk->b, w, h, f->canny_x[sx - 1], rx, 1, wk->bx);
    memcpy (wk->a, wk->b, sizeof (int) * (size_t) w * h);
  }
  if (ry > 0) {
    border_map (wk->by, h, ry, f->border);
    smooth (wk->a, wk->b, w, h, f->canny_y[sy - 1], ry, 0, wk->by);
    memcpy (wk->a, wk->b, sizeof (int) * (size_t) w * h);
  }

  /* the smoothed component framed by what the border reads there */
  border_map (wk->bx, w, 1, f->border);
  border_map (wk->by, h, 1, f->border);
  for (int y = 0; y < h + 2; y++)
    for (int x = 0; x < w + 2; x++) {
      const int u = wk->bx[x], v = wk->by[y];

      wk->s[y * pw + x] = u < 0 || v < 0 ? 0 : wk->a[v * w + u];
    }

  /* the gradient: 3x3 Sobel of the smoothed component */
  for (int y = 0; y < h; y++) {
    const int *r0 = wk->s + y * pw + 1, *r1 = r0 + pw, *r2 = r1 + pw;
    long long *m = wk->m + (y + 1) * pw + 1;
    unsigned char *dir = wk->dir + y * w;

    for (int x = 0; x < w; x++) {
      const int gx = r0[x + 1] + 2 * r1[x + 1] + r2[x + 1] - r0[x - 1] -
          2 * r1[x - 1] - r2[x - 1];
      const int gy = r2[x - 1] + 2 * r2[x] + r2[x + 1] - r0[x - 1] -
          2 * r0[x] - r0[x + 1];

      m[x] = (long long) gx * gx + (long long) gy * gy;
      dir[x] = (unsigned char) cuconv_canny_direction (gx, gy);
    }
  }

  /* the suppression and the thresholds */
  for (int y = 0; y < h; y++) {
    const long long *m = wk->m + (y + 1) * pw + 1;
    const unsigned char *dir = wk->dir + y * w;
    unsigned char *edge = wk->edge + (y + 1) * pw + 1;

    for (int x = 0; x < w; x++) {
      const int d = dir[x];

      if (m[x] <= low || !cuconv_canny_keep (m[x], m[x + step[d][0]],
              m[x + step[d][1]], d))
        continue;
      edge[x] = m[x] > high ? EDGE : WEAK;
      if (edge[x] == EDGE)
        wk->stack[n++] = (int) (edge + x - wk->edge);
    }
  }

  /* the hysteresis: every candidate connected to a strong one */
  while (n > 0) {
    const int i = wk->stack[--n];
    static const int dy[8] = { -1, -1, -1, 0, 0, 1, 1, 1 };
    static const int dx[8] = { -1, 0, 1, -1, 1, -1, 0, 1 };

    for (int k = 0; k < 8; k++) {
      const int j = i + dy[k] * pw + dx[k];

      if (wk->edge[j] == WEAK) {
        wk->edge[j] = EDGE;
        wk->stack[n++] = j;
      }
    }
  }
}

int
cuconv_canny_plane (const CuconvPlane * p, const CuconvFilter * f)
{
  const int w = p->width > 0 ? p->width : 0, h = p->height > 0 ? p->height : 0;
  const size_t n = (size_t) w * h, np = (size_t) (w + 2) * (h + 2);
  const int r = CUCONV_MAX_CANNY_RADIUS;
  const unsigned max = (1u << sample_depth (p)) - 1;
  Work wk = { w, h, w + 2 };
  int ret = -1;

  if (n == 0)
    return 0;
  wk.a = malloc (sizeof (int) * n);
  wk.b = malloc (sizeof (int) * n);
  wk.s = malloc (sizeof (int) * np);
  wk.m = calloc (np, sizeof (long long));
  wk.dir = malloc (n);
  wk.edge = malloc (np);
  wk.stack = malloc (sizeof (int) * n);
  wk.bx = malloc (sizeof (int) * (size_t) (w + 2 * r));
  wk.by = malloc (sizeof (int) * (size_t) (h + 2 * r));
  if (!wk.a || !wk.b || !wk.s || !wk.m || !wk.dir || !wk.edge || !wk.stack
      || !wk.bx || !wk.by)
    goto done;
  for (int c = 0; c < p->n_comp; c++) {
    memset (wk.edge, NONE, np);
    if (p->op[c] == CUCONV_COMP_FILTER)
      component_edges (p, f, c, &wk);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        sample_write_op (p, x, y, c,
            wk.edge[(size_t) (y + 1) * wk.pw + x + 1] == EDGE ? max : 0);
  }
  ret = 0;
done:
  free (wk.a);
  free (wk.b);
  free (wk.s);
  free (wk.m);
  free (wk.dir);
  free (wk.edge);
  free (wk.stack);
  free (wk.bx);
  free (wk.by);
  return ret;
}
