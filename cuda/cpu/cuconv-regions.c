/* gst-cudaconvolve: regions on the CPU (docs/semantics.md, "Regions"):
 * clipping a rectangle to the frame, its footprint on a subsampled plane,
 * and the restore that, after a whole-frame filter, puts the input back
 * where it stays.  The reference's definition of regions is the
 * whole-frame reference followed by that restore.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <limits.h>
#include <string.h>

#include "cuconv.h"
#include "cuconv-region-weight.h"
#include "cuconv-sample.h"

/* a + b, saturated to the range of long long */
static long long
sat_add (long long a, long long b)
{
  long long r;

  if (__builtin_add_overflow (a, b, &r))
    return b > 0 ? LLONG_MAX : LLONG_MIN;
  return r;
}

static long long
sat_sub (long long a, long long b)
{
  long long r;

  if (__builtin_sub_overflow (a, b, &r))
    return b < 0 ? LLONG_MAX : LLONG_MIN;
  return r;
}

/* Clips [x0, x1) x [y0, y1) to [0, width) x [0, height). */
static int
clip_to (long long x0, long long y0, long long x1, long long y1, int width,
    int height, CuconvRect * out)
{
  if (x0 < 0)
    x0 = 0;
  if (y0 < 0)
    y0 = 0;
  if (x1 > width)
    x1 = width;
  if (y1 > height)
    y1 = height;
  if (x0 >= x1 || y0 >= y1)
    return 0;
  out->x = (int) x0;
  out->y = (int) y0;
  out->w = (int) (x1 - x0);
  out->h = (int) (y1 - y0);
  return 1;
}

int
cuconv_rect_clip (long long x, long long y, long long w, long long h,
    long long margin, int width, int height, CuconvRect * out)
{
  /* an empty rectangle stays empty, whatever the margin */
  if (w <= 0 || h <= 0 || width <= 0 || height <= 0)
    return 0;
  return clip_to (sat_sub (x, margin), sat_sub (y, margin),
      sat_add (sat_add (x, w), margin), sat_add (sat_add (y, h), margin),
      width, height, out);
}

/* floor (a / d) and ceil (a / d) for d >= 1, any sign of a; the usual
 * factors without a division (the GPU path clips every rectangle to
 * every plane, up to thousands a frame) */
static long long
floor_div (long long a, int d)
{
  if (d == 1)
    return a;
  if (d == 2)                   /* a constant divisor: a shift */
    return a >= 0 ? a / 2 : -((-a + 1) / 2);
  return a >= 0 ? a / d : -((-a + d - 1) / d);
}

static long long
ceil_div (long long a, int d)
{
  return -floor_div (-a, d);
}

int
cuconv_rect_on_plane (const CuconvRect * r, const CuconvPlane * p,
    CuconvRect * out)
{
  const int sx = p->sub_x > 1 ? p->sub_x : 1;
  const int sy = p->sub_y > 1 ? p->sub_y : 1;

  if (r->w <= 0 || r->h <= 0)
    return 0;
  return clip_to (floor_div (r->x, sx), floor_div (r->y, sy),
      ceil_div ((long long) r->x + r->w, sx),
      ceil_div ((long long) r->y + r->h, sy), p->width, p->height, out);
}

/* Columns of a row handled at once by the restore: a mask of this many
 * bytes lives on the stack, so the restore allocates nothing. */
#define ROW_CHUNK 4096

/* The columns [*a, *b) of row y of p, within [c0, c1), that rectangle r
 * covers on the plane; 0 when there are none. */
static int
rect_span (const CuconvRect * r, const CuconvPlane * p, int y, int c0,
    int c1, int *a, int *b)
{
  CuconvRect pr;

  if (!cuconv_rect_on_plane (r, p, &pr) || y < pr.y || y >= pr.y + pr.h)
    return 0;
  *a = pr.x > c0 ? pr.x : c0;
  *b = pr.x + pr.w < c1 ? pr.x + pr.w : c1;
  return *a < *b;
}

/* Copies the source samples of columns [x0, x1) of row y of p to dst. */
static void
copy_span (const CuconvPlane * p, int y, int x0, int x1)
{
  const size_t bpp = (size_t) p->n_comp * cuconv_plane_sample_bytes (p);

  if (x1 > x0)
    memcpy (p->dst + y * p->dst_stride + x0 * bpp,
        p->src + y * p->src_stride + x0 * bpp, (x1 - x0) * bpp);
}

/* Copies the source back into dst where the union of the rectangles is
 * `covered` (1: inside it, 0: outside it), row by row. */
static void
restore_plane (const CuconvPlane * p, const CuconvRect * rects, int n_rects,
    int covered)
{
  unsigned char mask[ROW_CHUNK];
  int y, c0, i;

  for (y = 0; y < p->height; y++) {
    for (c0 = 0; c0 < p->width; c0 += ROW_CHUNK) {
      const int c1 = p->width - c0 < ROW_CHUNK ? p->width : c0 + ROW_CHUNK;
      int x, run;

      memset (mask, 0, (size_t) (c1 - c0));
      for (i = 0; i < n_rects; i++) {
        int a, b;

        if (rect_span (&rects[i], p, y, c0, c1, &a, &b))
          memset (mask + (a - c0), 1, (size_t) (b - a));
      }
      /* copy the runs of columns whose mask is `covered` */
      for (x = c0; x < c1; x = run) {
        for (run = x; run < c1 && mask[run - c0] == mask[x - c0]; run++);
        if (mask[x - c0] == covered)
          copy_span (p, y, x, run);
      }
    }
  }
}

/* Blends one sample of p: the source where w is 0, the filter's output
 * (in dst) where it is 1, between them every component by
 * cuconv_region_blend. */
static void
blend_sample (const CuconvPlane * p, int x, int y, float w)
{
  const int depth = sample_depth (p), shift = sample_shift (p);
  const unsigned max = (1u << depth) - 1;
  int c;

  if (w >= 1.0f)
    return;
  if (w <= 0.0f) {
    copy_span (p, y, x, x + 1);
    return;
  }
  for (c = 0; c < p->n_comp; c++) {
    const unsigned s = sample_read (p, x, y, c) >> shift;
    const unsigned f = sample_row_read (p->dst + y * p->dst_stride,
        x * p->n_comp + c, depth) >> shift;

    sample_write (p, x, y, c, cuconv_region_blend (s, f, w, max) << shift);
  }
}

/* Soft regions: each sample blended by the largest weight of the regions
 * there (cuconv_region_mode_weight), row by row. */
static void
blend_plane (const CuconvPlane * p, const CuconvRegions * r)
{
  const int sx = p->sub_x > 1 ? p->sub_x : 1;
  const int sy = p->sub_y > 1 ? p->sub_y : 1;
  float largest[ROW_CHUNK];
  int y, c0, i, x;

  for (y = 0; y < p->height; y++) {
    for (c0 = 0; c0 < p->width; c0 += ROW_CHUNK) {
      const int c1 = p->width - c0 < ROW_CHUNK ? p->width : c0 + ROW_CHUNK;

      for (x = c0; x < c1; x++)
        largest[x - c0] = 0.0f;
      for (i = 0; i < r->n_rects; i++) {
        int a, b;

        if (!rect_span (&r->rects[i], p, y, c0, c1, &a, &b))
          continue;
        for (x = a; x < b; x++) {
          const float w = cuconv_region_weight (cuconv_region_depth
              (&r->boxes[i], r->shape, x, y, sx, sy), r->feather);

          if (w > largest[x - c0])
            largest[x - c0] = w;
        }
      }
      for (x = c0; x < c1; x++)
        blend_sample (p, x, y, cuconv_region_mode_weight (r->mode,
                largest[x - c0]));
    }
  }
}

void
cuconv_regions_restore (const CuconvPlane * planes, int n_planes,
    const CuconvRegions * regions)
{
  const int soft = cuconv_regions_soft (regions);
  CuconvRegions r;
  int i;

  if (!regions || regions->mode == CUCONV_REGION_FRAME)
    return;
  r = *regions;
  if (!r.rects || r.n_rects < 0)
    r.n_rects = 0;
  for (i = 0; i < n_planes; i++) {
    if (soft)
      blend_plane (&planes[i], &r);
    else
      restore_plane (&planes[i], r.rects, r.n_rects,
          r.mode == CUCONV_REGION_OUTSIDE);
  }
}

static int
reference_crop (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *data)
{
  return cuconv_reference_frame (planes, n_planes, f);
}

int
cuconv_reference_frame_regions (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, const CuconvRegions * regions)
{
  int ret;

  if (cuconv_regions_relative (regions))
    return cuconv_regions_relative_filter (planes, n_planes, regions, 1,
        reference_crop, NULL);
  /* nothing to filter: the restore alone gives the input */
  if (cuconv_regions_filter_nothing (regions)) {
    cuconv_regions_restore (planes, n_planes, regions);
    return 0;
  }
  ret = cuconv_reference_frame (planes, n_planes, f);
  if (ret == 0)
    cuconv_regions_restore (planes, n_planes, regions);
  return ret;
}
