/* gst-cudaconvolve: the CPU reference.  It defines the engine's semantics
 * (docs/semantics.md); the CUDA kernels are tested against it.  Written for
 * clarity, not speed: one component at a time, read once into floats.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cuconv.h"
#include "cuconv-sample.h"

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

/* One direction of a term as the passes read it: the float taps, or for
 * an untruncated gaussian its weights in double out to the radius past
 * which they vanish in double. */
typedef struct
{
  int r;
  const float *w;               /* 2r + 1 float taps, or NULL */
  double *ideal;                /* 2r + 1 double weights, or NULL */
} Pass1D;

/* Memory for one plane, allocated before anything is written. */
typedef struct
{
  float *in;                    /* the component's samples, W x H */
  float *h[2];                  /* each term's horizontal pass, W x H */
  int *bx, *by;                 /* border maps of x in -r..W-1+r, y alike */
  int r;                        /* the widest radius the maps cover */
  Pass1D px[2], py[2];          /* each term's directions */
} Scratch;

/* The value a sample holds: its depth bits above `shift`; whatever else
 * the word carries is ignored. */
static unsigned
sample_value (const CuconvPlane * p, unsigned word)
{
  return (word >> sample_shift (p)) & ((1u << sample_depth (p)) - 1);
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

/* The reach of the untruncated gaussian of sigma in double: past 9
 * sigma a weight is below 3e-18 of the centre's and all of them together
 * below 1e-18 of the sum, under double's rounding of it. */
static int
ideal_radius (double sigma)
{
  return (int) ceil (9.0 * sigma);
}

/* Pass1D of taps t: its float taps, or for an untruncated t the sampled
 * gaussian normalised over every integer (the weights past the radius
 * add nothing in double).  Returns 0, or -1 without memory. */
static int
pass_init (Pass1D * d, const CuconvTaps * t)
{
  double sum = 0.0;
  int i;

  d->ideal = NULL;
  d->w = t->w;
  d->r = t->radius;
  if (!t->untruncated)
    return 0;
  d->w = NULL;
  d->r = ideal_radius (t->sigma);
  d->ideal = malloc (sizeof (double) * (2 * d->r + 1));
  if (!d->ideal)
    return -1;
  for (i = -d->r; i <= d->r; i++)
    sum += d->ideal[i + d->r] = exp (-(double) i * i / (2.0 * t->sigma *
            t->sigma));
  for (i = 0; i <= 2 * d->r; i++)
    d->ideal[i] /= sum;
  return 0;
}

/* sum_i k[i] * v[map[i] * step] over i = -r..r, map[] centred, -1
 * reading 0: in float with float taps up to radius 64, in double with
 * wider ones and the untruncated gaussian's. */
static float
pass_at (const Pass1D * k, const int *map, const float *v, size_t step)
{
  int i;

  if (k->ideal) {
    double acc = 0.0;

    for (i = -k->r; i <= k->r; i++)
      if (map[i] >= 0)
        acc += k->ideal[i + k->r] * v[map[i] * step];
    return (float) acc;
  } else if (k->r > CUCONV_TRUNCATED_MAX_RADIUS) {
    /* wide taps: a float sum of up to 2049 products drifts past 1 LSB
     * at 16 bits, so it is kept in double */
    double acc = 0.0;

    for (i = -k->r; i <= k->r; i++)
      if (map[i] >= 0)
        acc += (double) k->w[i + k->r] * v[map[i] * step];
    return (float) acc;
  } else {
    float acc = 0.0f;

    for (i = -k->r; i <= k->r; i++)
      if (map[i] >= 0)
        acc += k->w[i + k->r] * v[map[i] * step];
    return acc;
  }
}

/* Term t's horizontal pass: h = sum_i kx[i] * in (Bx (x + i), y). */
static void
pass_horizontal (const CuconvPlane * p, const Scratch * s, const Pass1D * kx,
    float *h)
{
  const int w = p->width;
  int x, y;

  for (y = 0; y < p->height; y++)
    for (x = 0; x < w; x++)
      h[(size_t) y * w + x] = pass_at (kx, s->bx + x + s->r,
          s->in + (size_t) y * w, 1);
}

/* The vertical pass at one sample: sum_j ky[j] * h (x, By (y + j)). */
static float
pass_vertical (const CuconvPlane * p, const Scratch * s, const Pass1D * ky,
    const float *h, int x, int y)
{
  return pass_at (ky, s->by + y + s->r, h + x, (size_t) p->width);
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
  const unsigned max = (1u << sample_depth (p)) - 1;
  int x, y, t;

  for (y = 0; y < ht; y++)
    for (x = 0; x < w; x++)
      s->in[(size_t) y * w + x] =
          (float) sample_value (p, sample_read (p, x, y, comp));

  for (t = 0; t < pf->n_terms; t++)
    pass_horizontal (p, s, &s->px[t], s->h[t]);

  for (y = 0; y < ht; y++) {
    for (x = 0; x < w; x++) {
      float t0 = 0.0f, t1 = 0.0f, v;

      if (pf->n_terms == 0)
        t0 = matrix_at (p, s, pf->m, x, y);
      if (pf->n_terms >= 1)
        t0 = pass_vertical (p, s, &s->py[0], s->h[0], x, y);
      if (pf->n_terms == 2)
        t1 = pass_vertical (p, s, &s->py[1], s->h[1], x, y);
      v = combine (pf, s->in[(size_t) y * w + x], t0, t1);
      sample_write (p, x, y, comp, cuconv_round_sat (v, max) << sample_shift (p));
    }
  }
}

/* The passes of pf's terms into s, and the widest radius any of them (or
 * the matrix) reads into s->r.  Returns 0, or -1 without memory. */
static int
scratch_passes (Scratch * s, const PlaneFilter * pf)
{
  int t;

  s->r = pf->n_terms == 0 ? pf->m->radius : 0;
  for (t = 0; t < pf->n_terms; t++) {
    if (pass_init (&s->px[t], pf->kx[t]) < 0
        || pass_init (&s->py[t], pf->ky[t]) < 0)
      return -1;
    if (s->px[t].r > s->r)
      s->r = s->px[t].r;
    if (s->py[t].r > s->r)
      s->r = s->py[t].r;
  }
  return 0;
}

static int
filter_plane (const CuconvPlane * p, const PlaneFilter * pf)
{
  const size_t n = (size_t) p->width * p->height;
  Scratch s = { NULL };
  int c, x, y, t, ret = -1;

  if (scratch_passes (&s, pf) < 0)
    goto done;
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
            sample_write (p, x, y, c, sample_read (p, x, y, c));
        break;
      case CUCONV_COMP_FILL:
        for (y = 0; y < p->height; y++)
          for (x = 0; x < p->width; x++)
            sample_write (p, x, y, c, p->fill << sample_shift (p));
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
  for (t = 0; t < 2; t++) {
    free (s.px[t].ideal);
    free (s.py[t].ideal);
  }
  return ret;
}

int
cuconv_reference_plane_filter (const CuconvPlane * p, const CuconvFilter * f)
{
  PlaneFilter pf = { f->n_terms, f->combine, f->amount,
    {&f->x[p->sub_x - 1], &f->x2[p->sub_x - 1]},
    {&f->y[p->sub_y - 1], &f->y2[p->sub_y - 1]},
    &f->m, f->border
  };

  /* not a sum of taps: its own definition */
  if (f->combine == CUCONV_COMBINE_BILATERAL)
    return cuconv_bilateral_rows (p, f, 0, p->height);
  if (f->combine == CUCONV_COMBINE_PIXELATE)
    return cuconv_pixelate_plane (p, f);
  if (f->combine == CUCONV_COMBINE_NLMEANS)
    return cuconv_nlmeans_rows (p, f, 0, p->height);
  if (f->combine == CUCONV_COMBINE_CANNY)
    return cuconv_canny_plane (p, f);
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
