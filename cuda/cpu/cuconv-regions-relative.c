/* gst-cudaconvolve: region-relative filters on the CPU (docs/semantics.md,
 * "Strength that follows the region"): each rectangle filtered with a
 * filter of its own strength from a crop of the frame around it, written
 * where it applies.  The reference and the CPU engine differ only in the
 * function that filters a crop.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuconv-pixelate.h"
#include "cuconv-region-weight.h"
#include "cuconv-sample.h"

typedef struct
{
  double strength;
  int index;
} Order;

static int
order_compare (const void *pa, const void *pb)
{
  const Order *a = pa, *b = pb;

  if (a->strength != b->strength)
    return a->strength < b->strength ? -1 : 1;
  return a->index - b->index;
}

int
cuconv_regions_relative_order (const CuconvRegions * r, int *order)
{
  Order *o = malloc (sizeof (Order) * (size_t) (r->n_rects > 0 ?
          r->n_rects : 1));
  int i;

  if (!o)
    return -1;
  for (i = 0; i < r->n_rects; i++) {
    o[i].strength = r->strength[i];
    o[i].index = i;
  }
  qsort (o, (size_t) r->n_rects, sizeof (Order), order_compare);
  for (i = 0; i < r->n_rects; i++)
    order[i] = o[i].index;
  free (o);
  return 0;
}

/* The untruncated gaussian's reach a crop gives it when it need not be
 * exact, in sigmas: the gaussian's mass past 6 sigma on both sides is
 * 2e-9, under 1/1000 of a 16-bit sample's step. */
#define UNTRUNCATED_REACH_SIGMAS 6.0

/* How far filter f reads from a sample of a plane in one direction (its x
 * or y taps t, t2); -1: without limit (the untruncated gaussian, when
 * exact). */
static int
reach (const CuconvFilter * f, const CuconvTaps * t, const CuconvTaps * t2,
    int exact)
{
  int r;

  if (f->n_terms == 0)
    return f->m.radius;
  if (t->untruncated && !exact)
    return (int) ceil (UNTRUNCATED_REACH_SIGMAS * t->sigma);
  if (t->untruncated || (f->n_terms > 1 && t2->untruncated))
    return -1;
  r = t->radius;
  if (f->n_terms > 1 && t2->radius > r)
    r = t2->radius;
  return r;
}

/* [lo - h, hi + h) when it lies in [0, n), else [0, n). */
static void
grow (int lo, int hi, int h, int n, int *a, int *b)
{
  if (h < 0 || lo - h < 0 || (long long) hi + h > n) {
    *a = 0;
    *b = n;
  } else {
    *a = lo - h;
    *b = hi + h;
  }
}

/* The whole blocks of pixelate f that samples [lo, hi) of a plane
 * subsampled by s (n samples) lie in, as [*a, *b). */
static void
whole_blocks (const CuconvFilter * f, int lo, int hi, int s, long long x0,
    int n, int *a, int *b)
{
  int unused;

  cuconv_pixelate_span (cuconv_pixelate_block_of (lo, s, x0, f->block), s,
      x0, f->block, n, a, &unused);
  cuconv_pixelate_span (cuconv_pixelate_block_of (hi - 1, s, x0, f->block),
      s, x0, f->block, n, &unused, b);
}

/* The crop of plane p that f reads for the rectangle pr on it: pr grown
 * by the filter's reach in each direction where that stays on the plane,
 * the plane's whole width or height where it does not (so that borders
 * see the plane's edges) and for the untruncated gaussian; for pixelate,
 * the whole blocks pr lies in. */
static void
crop_of (const CuconvRect * pr, const CuconvPlane * p, const CuconvFilter * f,
    int exact, CuconvRect * crop)
{
  const int sx = p->sub_x > 1 ? p->sub_x : 1, sy = p->sub_y > 1 ? p->sub_y : 1;
  int a, b;

  if (f->combine == CUCONV_COMBINE_PIXELATE)
    whole_blocks (f, pr->x, pr->x + pr->w, sx, f->block_x0[sx - 1],
        p->width, &a, &b);
  else
    grow (pr->x, pr->x + pr->w, reach (f, &f->x[sx - 1], &f->x2[sx - 1],
            exact), p->width, &a, &b);
  crop->x = a;
  crop->w = b - a;
  if (f->combine == CUCONV_COMBINE_PIXELATE)
    whole_blocks (f, pr->y, pr->y + pr->h, sy, f->block_y0[sy - 1],
        p->height, &a, &b);
  else
    grow (pr->y, pr->y + pr->h, reach (f, &f->y[sy - 1], &f->y2[sy - 1],
            exact), p->height, &a, &b);
  crop->y = a;
  crop->h = b - a;
}

void
cuconv_regions_relative_make (const CuconvRegions * r, const int *order,
    int k, CuconvFilter * f)
{
  const int i = order[k];
  CuconvBox box;

  if (k > 0 && r->strength[i] == r->strength[order[k - 1]] &&
      f->combine != CUCONV_COMBINE_PIXELATE)
    return;
  if (r->boxes) {
    box = r->boxes[i];
  } else {
    box.x0 = r->rects[i].x;
    box.y0 = r->rects[i].y;
    box.x1 = (long long) r->rects[i].x + r->rects[i].w;
    box.y1 = (long long) r->rects[i].y + r->rects[i].h;
  }
  r->make_filter (f, r->strength[i], &box, r->make_data);
}

int
cuconv_regions_relative_crops (const CuconvRect * rect,
    const CuconvPlane * planes, int n_planes, CuconvFilter * f, int exact,
    CuconvRect * pr, CuconvRect * cr)
{
  int p;

  for (p = 0; p < n_planes; p++) {
    /* (a rectangle clipped to the frame is on every plane) */
    if (!cuconv_rect_on_plane (rect, &planes[p], &pr[p]))
      return 0;
    crop_of (&pr[p], &planes[p], f, exact, &cr[p]);
  }
  /* the grid from each crop's first sample (planes alike subsampled have
   * alike crops) */
  if (f->combine == CUCONV_COMBINE_PIXELATE) {
    int done_x[CUCONV_MAX_SUBSAMPLE] = { 0 }, done_y[CUCONV_MAX_SUBSAMPLE] = {
    0};

    for (p = 0; p < n_planes; p++) {
      const int sx = planes[p].sub_x > 1 ? planes[p].sub_x : 1;
      const int sy = planes[p].sub_y > 1 ? planes[p].sub_y : 1;

      if (!done_x[sx - 1])
        f->block_x0[sx - 1] -= (long long) cr[p].x * sx;
      if (!done_y[sy - 1])
        f->block_y0[sy - 1] -= (long long) cr[p].y * sy;
      done_x[sx - 1] = done_y[sy - 1] = 1;
    }
  }
  return 1;
}

static size_t
pixel_bytes (const CuconvPlane * p)
{
  return (size_t) p->n_comp * cuconv_plane_sample_bytes (p);
}

/* Writes the filtered crop c (a plane at cr of p whose dst holds the
 * filter's output) into p's dst inside the rectangle pr of region i: all
 * of it for hard regions; for soft ones each sample whose weight is at
 * least the largest written there so far (weights, a float a sample of
 * p). */
static void
write_region (const CuconvPlane * p, const CuconvPlane * c,
    const CuconvRect * cr, const CuconvRect * pr, const CuconvRegions * r,
    int i, float *weights)
{
  const size_t bpp = pixel_bytes (p);
  const int depth = sample_depth (p), shift = sample_shift (p);
  const unsigned max = (1u << depth) - 1;
  const int sx = p->sub_x > 1 ? p->sub_x : 1;
  const int sy = p->sub_y > 1 ? p->sub_y : 1;
  int u, v, k;

  for (v = pr->y; v < pr->y + pr->h; v++) {
    const uint8_t *frow = c->dst + (v - cr->y) * c->dst_stride;

    if (!weights) {
      memcpy (p->dst + v * p->dst_stride + pr->x * bpp,
          frow + (pr->x - cr->x) * bpp, (size_t) pr->w * bpp);
      continue;
    }
    for (u = pr->x; u < pr->x + pr->w; u++) {
      float *largest = &weights[(size_t) v * p->width + u];
      const float w = cuconv_region_weight (cuconv_region_depth
          (&r->boxes[i], r->shape, u, v, sx, sy), r->feather);
      const int fu = u - cr->x;

      if (!(w > 0.0f) || w < *largest)
        continue;
      *largest = w;
      for (k = 0; k < p->n_comp; k++) {
        const unsigned f = sample_row_read (frow, fu * p->n_comp + k,
            depth);
        const unsigned s = sample_read (p, u, v, k);

        sample_write (p, u, v, k, w >= 1.0f ? f :
            cuconv_region_blend (s >> shift, f >> shift, w, max) << shift);
      }
    }
  }
}

int
cuconv_regions_relative_filter (const CuconvPlane * planes, int n_planes,
    const CuconvRegions * r, int exact, CuconvPlanesFilter filter,
    void *data)
{
  const int soft = cuconv_regions_soft (r);
  CuconvPlane crop[CUCONV_MAX_PLANES];
  CuconvRect pr[CUCONV_MAX_PLANES], cr[CUCONV_MAX_PLANES];
  float *weights[CUCONV_MAX_PLANES] = { NULL };
  CuconvFilter *f = malloc (sizeof (CuconvFilter));
  int *order = malloc (sizeof (int) * (size_t) r->n_rects);
  uint8_t *scratch = NULL;
  size_t scratch_size = 0;
  int ret = -1, p, k, y;

  if (!f || !order || cuconv_regions_relative_order (r, order) != 0)
    goto done;
  for (p = 0; p < n_planes; p++) {
    const CuconvPlane *pl = &planes[p];

    for (y = 0; y < pl->height; y++)
      memcpy (pl->dst + y * pl->dst_stride, pl->src + y * pl->src_stride,
          (size_t) pl->width * pixel_bytes (pl));
    if (soft && !(weights[p] = calloc ((size_t) pl->width * pl->height,
                sizeof (float))))
      goto done;
  }

  for (k = 0; k < r->n_rects; k++) {
    const int i = order[k];
    size_t need = 0, at;

    cuconv_regions_relative_make (r, order, k, f);
    if (!cuconv_regions_relative_crops (&r->rects[i], planes, n_planes, f,
            exact, pr, cr))
      continue;
    for (p = 0; p < n_planes; p++) {
      const CuconvRect *c = &cr[p];

      crop[p] = planes[p];
      crop[p].src = planes[p].src + c->y * planes[p].src_stride +
          c->x * pixel_bytes (&planes[p]);
      crop[p].width = c->w;
      crop[p].height = c->h;
      crop[p].dst_stride = (ptrdiff_t) (c->w * pixel_bytes (&planes[p]));
      need += (size_t) crop[p].dst_stride * c->h;
    }
    if (need > scratch_size) {
      free (scratch);
      scratch_size = need;
      if (!(scratch = malloc (need)))
        goto done;
    }
    for (p = 0, at = 0; p < n_planes; p++) {
      crop[p].dst = scratch + at;
      at += (size_t) crop[p].dst_stride * crop[p].height;
    }
    if ((ret = filter (crop, n_planes, f, data)) != 0)
      goto done;
    ret = -1;
    for (p = 0; p < n_planes; p++)
      write_region (&planes[p], &crop[p], &cr[p], &pr[p], r, i,
          weights[p]);
  }
  ret = 0;

done:
  for (p = 0; p < n_planes; p++)
    free (weights[p]);
  free (scratch);
  free (order);
  free (f);
  return ret;
}
