/* gst-cudaconvolve: the CPU reference.  It defines the engine's semantics
 * (docs/semantics.md); the CUDA kernels are tested against it.  Written for
 * clarity, not speed: one component at a time, read once into floats.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cuconv.h"

/* What one plane is filtered with: the filter's taps for the plane's
 * subsampling, or the taps cuconv_reference_plane () was given. */
typedef struct
{
  int n_terms;                  /* 0 (the matrix m), 1 or 2 */
  CuconvCombine combine;
  float amount;
  const CuconvTaps *kx[2], *ky[2];
  const CuconvMatrix *m;
  CuconvBorder border;
} PlaneFilter;

/* Memory for one plane, allocated before anything is written. */
typedef struct
{
  float *in;                    /* the component's samples, W x H */
  float *h[2];                  /* each term's horizontal pass, W x H */
  int *bx, *by;                 /* border maps of x in -r..W-1+r, y alike */
  int r;                        /* the widest radius the maps cover */
} Scratch;

static int
depth_of (const CuconvPlane * p)
{
  return p->depth > 8 ? p->depth : 8;
}

/* Depth 8 samples are bytes and never shifted. */
static int
shift_of (const CuconvPlane * p)
{
  return depth_of (p) == 8 ? 0 : p->shift;
}

static unsigned
read_word (const CuconvPlane * p, int x, int y, int comp)
{
  const uint8_t *row = p->src + y * p->src_stride;
  const int k = x * p->n_comp + comp;

  if (depth_of (p) == 8)
    return row[k];
  return row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

static void
write_word (const CuconvPlane * p, int x, int y, int comp, unsigned v)
{
  uint8_t *row = p->dst + y * p->dst_stride;
  const int k = x * p->n_comp + comp;

  if (depth_of (p) == 8) {
    row[k] = (uint8_t) v;
  } else {
    row[2 * k] = (uint8_t) v;
    row[2 * k + 1] = (uint8_t) (v >> 8);
  }
}

/* The value a sample holds: its depth bits above `shift`; whatever else
 * the word carries is ignored. */
static unsigned
sample_value (const CuconvPlane * p, unsigned word)
{
  return (word >> shift_of (p)) & ((1u << depth_of (p)) - 1);
}

/* cuconv_border_index () for every coordinate a kernel of radius r reads:
 * map[i + r] for i in -r..n-1+r. */
static void
border_map (int *map, CuconvBorder border, int n, int r)
{
  int i;

  for (i = -r; i < n + r; i++)
    map[i + r] = cuconv_border_index (border, i, n);
}

/* Term t's horizontal pass: h = sum_i kx[i] * in (Bx (x + i), y). */
static void
pass_horizontal (const CuconvPlane * p, const Scratch * s, const CuconvTaps * kx,
    float *h)
{
  const int w = p->width, r = kx->radius;
  int x, y, i;

  for (y = 0; y < p->height; y++) {
    const float *row = s->in + (size_t) y * w;

    for (x = 0; x < w; x++) {
      float acc = 0.0f;

      for (i = -r; i <= r; i++) {
        const int xi = s->bx[x + i + s->r];
        if (xi >= 0)
          acc += kx->w[i + r] * row[xi];
      }
      h[(size_t) y * w + x] = acc;
    }
  }
}

/* The vertical pass at one sample: sum_j ky[j] * h (x, By (y + j)). */
static float
pass_vertical (const CuconvPlane * p, const Scratch * s, const CuconvTaps * ky,
    const float *h, int x, int y)
{
  const int r = ky->radius;
  float acc = 0.0f;
  int j;

  for (j = -r; j <= r; j++) {
    const int yj = s->by[y + j + s->r];
    if (yj >= 0)
      acc += ky->w[j + r] * h[(size_t) yj * p->width + x];
  }
  return acc;
}

/* The 2-D matrix at one sample: rows outer, columns inner, one sum. */
static float
matrix_at (const CuconvPlane * p, const Scratch * s, const CuconvMatrix * m,
    int x, int y)
{
  const int r = m->radius, side = 2 * r + 1;
  float acc = 0.0f;
  int i, j;

  for (j = -r; j <= r; j++) {
    const int yj = s->by[y + j + s->r];
    if (yj < 0)
      continue;
    for (i = -r; i <= r; i++) {
      const int xi = s->bx[x + i + s->r];
      if (xi >= 0)
        acc += m->w[(j + r) * side + i + r] *
            s->in[(size_t) yj * p->width + xi];
    }
  }
  return acc;
}

static float
combine (const PlaneFilter * pf, float in, float t0, float t1)
{
  switch (pf->combine) {
    case CUCONV_COMBINE_SHARPEN:
      return in + pf->amount * (in - t0);
    case CUCONV_COMBINE_MAGNITUDE:
      return sqrtf (t0 * t0 + t1 * t1);
    case CUCONV_COMBINE_ABS_SUM:
      return fabsf (t0 + t1);
    case CUCONV_COMBINE_NONE:
    default:
      return t0;
  }
}

static void
filter_component (const CuconvPlane * p, const PlaneFilter * pf,
    const Scratch * s, int comp)
{
  const int w = p->width, ht = p->height;
  const unsigned max = (1u << depth_of (p)) - 1;
  int x, y, t;

  for (y = 0; y < ht; y++)
    for (x = 0; x < w; x++)
      s->in[(size_t) y * w + x] =
          (float) sample_value (p, read_word (p, x, y, comp));

  for (t = 0; t < pf->n_terms; t++)
    pass_horizontal (p, s, pf->kx[t], s->h[t]);

  for (y = 0; y < ht; y++) {
    for (x = 0; x < w; x++) {
      float t0 = 0.0f, t1 = 0.0f, v;

      if (pf->n_terms == 0)
        t0 = matrix_at (p, s, pf->m, x, y);
      if (pf->n_terms >= 1)
        t0 = pass_vertical (p, s, pf->ky[0], s->h[0], x, y);
      if (pf->n_terms == 2)
        t1 = pass_vertical (p, s, pf->ky[1], s->h[1], x, y);
      v = combine (pf, s->in[(size_t) y * w + x], t0, t1);
      write_word (p, x, y, comp, cuconv_round_sat (v, max) << shift_of (p));
    }
  }
}

/* The widest radius any pass of pf reads. */
static int
plane_filter_radius (const PlaneFilter * pf)
{
  int t, r = pf->n_terms == 0 ? pf->m->radius : 0;

  for (t = 0; t < pf->n_terms; t++) {
    if (pf->kx[t]->radius > r)
      r = pf->kx[t]->radius;
    if (pf->ky[t]->radius > r)
      r = pf->ky[t]->radius;
  }
  return r;
}

static int
filter_plane (const CuconvPlane * p, const PlaneFilter * pf)
{
  const size_t n = (size_t) p->width * p->height;
  Scratch s = { NULL };
  int c, x, y, ret = -1;

  s.r = plane_filter_radius (pf);
  s.in = malloc (sizeof (float) * n);
  s.h[0] = malloc (sizeof (float) * n);
  s.h[1] = pf->n_terms == 2 ? malloc (sizeof (float) * n) : NULL;
  s.bx = malloc (sizeof (int) * (p->width + 2 * s.r));
  s.by = malloc (sizeof (int) * (p->height + 2 * s.r));
  if (!s.in || !s.h[0] || (pf->n_terms == 2 && !s.h[1]) || !s.bx || !s.by)
    goto done;
  border_map (s.bx, pf->border, p->width, s.r);
  border_map (s.by, pf->border, p->height, s.r);

  for (c = 0; c < p->n_comp; c++) {
    switch (p->op[c]) {
      case CUCONV_COMP_COPY:
        for (y = 0; y < p->height; y++)
          for (x = 0; x < p->width; x++)
            write_word (p, x, y, c, read_word (p, x, y, c));
        break;
      case CUCONV_COMP_FILL:
        for (y = 0; y < p->height; y++)
          for (x = 0; x < p->width; x++)
            write_word (p, x, y, c, p->fill << shift_of (p));
        break;
      case CUCONV_COMP_FILTER:
      default:
        filter_component (p, pf, &s, c);
        break;
    }
  }
  ret = 0;

done:
  free (s.in);
  free (s.h[0]);
  free (s.h[1]);
  free (s.bx);
  free (s.by);
  return ret;
}

int
cuconv_reference_plane_filter (const CuconvPlane * p, const CuconvFilter * f)
{
  PlaneFilter pf = { f->n_terms, f->combine, f->amount,
    {&f->x[p->sub_x - 1], &f->x2[p->sub_x - 1]},
    {&f->y[p->sub_y - 1], &f->y2[p->sub_y - 1]},
    &f->m, f->settings.border
  };

  return filter_plane (p, &pf);
}

int
cuconv_reference_plane (const CuconvPlane * p, const CuconvTaps * kx,
    const CuconvTaps * ky, CuconvBorder border)
{
  PlaneFilter pf = { 1, CUCONV_COMBINE_NONE, 0.0f, {kx, NULL}, {ky, NULL},
    NULL, border
  };

  return filter_plane (p, &pf);
}

int
cuconv_reference_frame (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f)
{
  int i;

  for (i = 0; i < n_planes; i++)
    if (cuconv_reference_plane_filter (&planes[i], f) < 0)
      return -1;
  return 0;
}
