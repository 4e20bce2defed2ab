/* gst-cudaconvolve: the CPU reference (cuda/cpu/cuconv-reference.c) against an
 * independent naive 2-D convolution written here in double precision, with
 * its own taps and its own border rules, straight from docs/semantics.md.
 *
 * What is asserted, for every sample:
 * - a filtered component is within 1 of the naive result, written at its
 *   depth and shift with every other bit 0;
 * - a copied component is the source word unchanged, a filled one the fill
 *   value shifted; nothing outside the plane's samples is written.
 * A sample off by 1 is legitimate when the exact value lies within the
 * float32 error bound of the reference's sums (computed here, per sample)
 * of the rounding boundary between the two results: the reference
 * accumulates in float, so such a sum may round the other way.  That is
 * frequent where outputs are large (16-bit planes, where a float's spacing
 * is 1/256; gradient magnitudes).  Any other sample off by 1 is counted,
 * and at most 1% of a case's filtered samples may be.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "cuconv.h"

#define GUARD 0xC3

/* The first byte of row from wb up to stride (its padding) that no longer
 * holds GUARD, or -1. */
static int
padding_written (const guint8 * row, int wb, int stride)
{
  int i;

  for (i = wb; i < stride; i++)
    if (row[i] != GUARD)
      return i;
  return -1;
}

static guint32 rng_state;

static guint32
rnd (void)
{
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

/* A uniform double in [-1, 1). */
static double
rnd_unit (void)
{
  return (double) (rnd () & 0xffff) / 32768.0 - 1.0;
}

/* Border rules, written differently from cuconv-border.h: by repeated
 * reflection and shifting rather than by modular arithmetic. */
static int
naive_index (CuconvBorder b, int i, int n)
{
  switch (b) {
    case CUCONV_BORDER_CLAMP:
      return i < 0 ? 0 : (i >= n ? n - 1 : i);
    case CUCONV_BORDER_MIRROR:
      if (n == 1)
        return 0;
      while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
    case CUCONV_BORDER_WRAP:
      while (i < 0)
        i += n;
      while (i >= n)
        i -= n;
      return i;
    default:
      return (i < 0 || i >= n) ? -1 : i;
  }
}

/* The filter of one plane, from the formulas, in double. */
typedef struct
{
  int n_terms;                  /* 0: the matrix m */
  CuconvCombine combine;
  double amount;
  int rx[2], ry[2];
  double kx[2][CUCONV_MAX_TAPS], ky[2][CUCONV_MAX_TAPS];
  int rm;
  double m[CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE];
  /* an untruncated gaussian's directions, folded onto the plane: the
   * weight of sample i in output x is fold_x[x * width + i] (NULL: the
   * taps above) */
  double *fold_x, *fold_y;
} Naive;

typedef enum
{
  GAUSS, BOX, SOBEL_S, SOBEL_D, LOG_G, LOG_L
} NaiveKind;

/* One direction's radius and sigma, in luma samples. */
static void
naive_resolve (const CuconvSettings * s, gboolean vertical, int *r,
    double *sigma)
{
  double sg = vertical && s->sigma_y > 0.0 ? s->sigma_y : s->sigma;
  int radius = s->radius;

  if (radius == 0 && sg > 0.0)
    radius = (int) ceil (3.0 * sg);
  else if (radius == 0 && (s->kernel == CUCONV_KERNEL_SOBEL
          || s->kernel == CUCONV_KERNEL_LAPLACIAN))
    radius = 1;
  if (sg == 0.0)
    sg = 0.3 * (radius - 1) + 0.8;
  *r = radius;
  *sigma = sg;
}

/* Taps of a kind at the plane's radius r and sigma; returns r. */
static int
naive_kind_taps (NaiveKind kind, int r, double sigma, double *w)
{
  static const double s3[] = { 1, 2, 1 }, d3[] = { -1, 0, 1 };
  static const double l3[] = { 1, -2, 1 }, g3[] = { 0, 1, 0 };
  double g[CUCONV_MAX_TAPS], sum_g = 0.0, sum_i2g = 0.0, mean = 0.0;
  double moment = 0.0;
  int i;

  if (r == 0) {
    w[0] = 1.0;
    return 0;
  }
  if (r == 1 && kind >= SOBEL_S) {
    const double *t = kind == SOBEL_S ? s3 : kind == SOBEL_D ? d3 :
        kind == LOG_G ? g3 : l3;
    memcpy (w, t, 3 * sizeof (double));
    return 1;
  }
  for (i = -r; i <= r; i++) {
    g[i + r] = exp (-(double) i * i / (2.0 * sigma * sigma));
    sum_g += g[i + r];
    sum_i2g += (double) i * i * g[i + r];
  }
  for (i = -r; i <= r; i++) {
    switch (kind) {
      case BOX:
        w[i + r] = 1.0 / (2 * r + 1);
        break;
      case SOBEL_S:
        w[i + r] = 4.0 * g[i + r] / sum_g;
        break;
      case SOBEL_D:
        w[i + r] = 2.0 * i * g[i + r] / sum_i2g;
        break;
      case LOG_L:
        w[i + r] = ((double) i * i / (sigma * sigma) - 1.0) * g[i + r];
        mean += w[i + r] / (2 * r + 1);
        break;
      default:
        w[i + r] = g[i + r] / sum_g;
        break;
    }
  }
  if (kind == LOG_L) {
    for (i = -r; i <= r; i++)
      moment += (double) i * i * (w[i + r] - mean);
    for (i = -r; i <= r; i++)
      w[i + r] = 2.0 * (w[i + r] - mean) / moment;
  }
  return r;
}

/* The user's taps, divided by their sum when asked to and it is not 0. */
static int
naive_custom (const double *taps, int len, gboolean normalize, double *w)
{
  double sum = 0.0;
  int i;

  if (len == 0) {
    w[0] = 1.0;
    return 0;
  }
  for (i = 0; i < len; i++)
    sum += taps[i];
  for (i = 0; i < len; i++)
    w[i] = normalize && sum != 0.0 ? taps[i] / sum : taps[i];
  return len / 2;
}

/* The untruncated gaussian of sigma on a plane of n samples, folded: the
 * weight of sample i in output x, summed over every offset k out to 10
 * sigma that the border takes to i (past it the weights are below 2e-22),
 * over sigma sqrt (2 pi), the sum of the gaussian over every integer by
 * Poisson summation (exact in double from sigma 1 on). */
static double *
naive_fold (CuconvBorder b, int n, double sigma)
{
  const int k_max = (int) ceil (10.0 * sigma);
  const double norm = sigma * sqrt (2.0 * G_PI);
  double *w = g_new0 (double, (size_t) n * n);
  int x, k;

  for (x = 0; x < n; x++)
    for (k = -k_max; k <= k_max; k++) {
      const int i = naive_index (b, x + k, n);
      if (i >= 0)
        w[(size_t) x * n + i] += exp (-(double) k * k / (2 * sigma * sigma))
            / norm;
    }
  return w;
}

/* Whether s is the untruncated gaussian: a gaussian or sharpen of radius 0
 * whose ceil (3 sigma) passes 64 in either direction. */
static gboolean
naive_untruncated (const CuconvSettings * s)
{
  return s->radius == 0 && (s->kernel == CUCONV_KERNEL_GAUSSIAN ||
      s->kernel == CUCONV_KERNEL_SHARPEN) &&
      ceil (3.0 * MAX (s->sigma, s->sigma_y)) > 64;
}

static void
naive_setup (Naive * n, const CuconvSettings * s, int sub_x, int sub_y)
{
  NaiveKind kx[2] = { GAUSS, GAUSS }, ky[2] = { GAUSS, GAUSS };
  int r, t;
  double sigma;

  memset (n, 0, sizeof (*n));
  n->n_terms = 1;
  n->combine = CUCONV_COMBINE_NONE;
  n->amount = (float) s->amount;

  if (s->kernel == CUCONV_KERNEL_CUSTOM && s->matrix_side > 0) {
    n->n_terms = 0;
    naive_custom (s->matrix, s->matrix_side * s->matrix_side, s->normalize,
        n->m);
    n->rm = s->matrix_side / 2;
    return;
  }
  if (s->kernel == CUCONV_KERNEL_CUSTOM) {
    n->rx[0] = naive_custom (s->custom_x, s->custom_x_len, s->normalize,
        n->kx[0]);
    n->ry[0] = naive_custom (s->custom_y, s->custom_y_len, s->normalize,
        n->ky[0]);
    return;
  }

  switch (s->kernel) {
    case CUCONV_KERNEL_BOX:
      kx[0] = ky[0] = BOX;
      break;
    case CUCONV_KERNEL_SHARPEN:
      n->combine = CUCONV_COMBINE_SHARPEN;
      break;
    case CUCONV_KERNEL_SOBEL:
      n->n_terms = 2;
      n->combine = CUCONV_COMBINE_MAGNITUDE;
      kx[0] = ky[1] = SOBEL_D;
      ky[0] = kx[1] = SOBEL_S;
      break;
    case CUCONV_KERNEL_LAPLACIAN:
      n->n_terms = 2;
      n->combine = CUCONV_COMBINE_ABS_SUM;
      kx[0] = ky[1] = LOG_L;
      ky[0] = kx[1] = LOG_G;
      break;
    default:
      break;
  }
  for (t = 0; t < n->n_terms; t++) {
    naive_resolve (s, FALSE, &r, &sigma);
    n->rx[t] = naive_kind_taps (kx[t], (r + sub_x - 1) / sub_x,
        sigma / sub_x, n->kx[t]);
    naive_resolve (s, TRUE, &r, &sigma);
    n->ry[t] = naive_kind_taps (ky[t], (r + sub_y - 1) / sub_y,
        sigma / sub_y, n->ky[t]);
  }
}

/* A plane as the test lays it out: samples of `bytes` bytes, rows of
 * `stride` bytes with guarded padding. */
typedef struct
{
  int width, height, n_comp, sub_x, sub_y, depth, shift;
} Geometry;

static int
bytes_of (const Geometry * g)
{
  return g->depth > 8 ? 2 : 1;
}

static unsigned
word_at (const Geometry * g, const guint8 * buf, int stride, int x, int y,
    int c)
{
  const guint8 *s = buf + (size_t) y * stride + (x * g->n_comp + c) *
      bytes_of (g);

  return bytes_of (g) == 1 ? s[0] : s[0] + 256u * s[1];
}

/* The sample a word holds: depth bits from bit `shift` up. */
static double
naive_in (const Geometry * g, const guint8 * src, int stride, int x, int y,
    int c)
{
  unsigned w = word_at (g, src, stride, x, y, c);

  return (double) ((w / (1u << g->shift)) % (1u << g->depth));
}

/* The taps of term t at offset (i, j): ky[j] * kx[i], or the matrix. */
static double
naive_weight (const Naive * n, int t, int i, int j)
{
  if (n->n_terms == 0)
    return n->m[(j + n->rm) * (2 * n->rm + 1) + i + n->rm];
  return n->ky[t][j + n->ry[t]] * n->kx[t][i + n->rx[t]];
}

/* The source's samples, decoded once: v[(y * width + x) * n_comp + c]. */
typedef struct
{
  const Geometry *g;
  double *v;
} Source;

static void
source_decode (Source * s, const Geometry * g, const guint8 * src,
    int stride)
{
  int x, y, c;

  s->g = g;
  s->v = g_new (double, (size_t) g->width * g->height * g->n_comp);
  for (y = 0; y < g->height; y++)
    for (x = 0; x < g->width; x++)
      for (c = 0; c < g->n_comp; c++)
        s->v[((size_t) y * g->width + x) * g->n_comp + c] =
            naive_in (g, src, stride, x, y, c);
}

static double
source_at (const Source * s, int x, int y, int c)
{
  return s->v[((size_t) y * s->g->width + x) * s->g->n_comp + c];
}

/* One separable term (or the matrix) at (x, y) by the 2-D definition. */
static double
naive_term (const Naive * n, int t, const Source * src, CuconvBorder b, int x,
    int y, int c)
{
  const int rx = n->n_terms ? n->rx[t] : n->rm;
  const int ry = n->n_terms ? n->ry[t] : n->rm;
  const int w = src->g->width, h = src->g->height;
  int xi[CUCONV_MAX_TAPS], i, j;
  double acc = 0.0;

  if (n->fold_x || n->fold_y) {
    /* the untruncated gaussian: a direction without a fold is [1] */
    for (j = 0; j < h; j++) {
      const double wy = n->fold_y ? n->fold_y[(size_t) y * h + j] : j == y;
      double row = 0.0;

      if (wy == 0.0)
        continue;
      for (i = 0; i < w; i++)
        row += (n->fold_x ? n->fold_x[(size_t) x * w + i] : i == x) *
            source_at (src, i, j, c);
      acc += wy * row;
    }
    return acc;
  }

  for (i = -rx; i <= rx; i++)
    xi[i + rx] = naive_index (b, x + i, src->g->width);
  for (j = -ry; j <= ry; j++) {
    const int yj = naive_index (b, y + j, src->g->height);
    if (yj < 0)
      continue;
    for (i = -rx; i <= rx; i++)
      if (xi[i + rx] >= 0)
        acc += naive_weight (n, t, i, j) * source_at (src, xi[i + rx], yj,
            c);
  }
  return acc;
}

/* A bound on the rounding error of `acc += w[k] * v[k]` in float, k in
 * order, from acc = 0, with w rounded to float once: each product, tap
 * and sum errs by at most u times its magnitude (first order). */
typedef struct
{
  double sum, err;
} FloatSum;

static void
float_sum_add (FloatSum * fs, double w, double v, double v_err)
{
  const double u = 1.0 / (1 << 24);

  fs->sum += w * v;
  fs->err += fabs (w) * v_err + 2 * u * fabs (w * v) + u * fabs (fs->sum);
}

/* How far the reference's float evaluation of term t at (x, y) can be
 * from the exact value, following its order: rows filtered horizontally,
 * then the column; the matrix in one sum, rows outer. */
static double
naive_term_error (const Naive * n, int t, const Source * src, CuconvBorder b,
    int x, int y, int c)
{
  const int rx = n->n_terms ? n->rx[t] : n->rm;
  const int ry = n->n_terms ? n->ry[t] : n->rm;
  FloatSum col = { 0.0, 0.0 }, row;
  int i, j;

  /* the untruncated gaussian: sums in double, each row's sum kept in a
   * float (relative error u), weights summing to 1: the largest sample
   * bounds them */
  if (n->fold_x || n->fold_y)
    return (1.0 / (1 << 24)) * (1 << src->g->depth);

  for (j = -ry; j <= ry; j++) {
    const int yj = naive_index (b, y + j, src->g->height);
    if (yj < 0)
      continue;
    row.sum = row.err = 0.0;
    for (i = -rx; i <= rx; i++) {
      const int xi = naive_index (b, x + i, src->g->width);
      if (xi < 0)
        continue;
      if (n->n_terms == 0)
        float_sum_add (&col, naive_weight (n, t, i, j),
            source_at (src, xi, yj, c), 0.0);
      else
        float_sum_add (&row, n->kx[t][i + rx], source_at (src, xi, yj, c),
            0.0);
    }
    if (n->n_terms != 0)
      float_sum_add (&col, n->ky[t][j + ry], row.sum, row.err);
  }
  return col.err;
}

static double
naive_combine (const Naive * n, double in, const double *t)
{
  switch (n->combine) {
    case CUCONV_COMBINE_SHARPEN:
      return in + n->amount * (in - t[0]);
    case CUCONV_COMBINE_MAGNITUDE:
      return sqrt (t[0] * t[0] + t[1] * t[1]);
    case CUCONV_COMBINE_ABS_SUM:
      return fabs (t[0] + t[1]);
    default:
      return t[0];
  }
}

/* The exact output value at (x, y); with bound, also how far the
 * reference's float32 value can be from it (the terms' errors, the
 * combine's and the rounding's own), doubled for the second-order terms
 * left out. */
static double
naive_sample (const Naive * n, const Source * src, CuconvBorder b, int x, int y,
    int c, double *bound)
{
  const double u = 1.0 / (1 << 24);
  const double in = source_at (src, x, y, c);
  double t[2] = { 0.0, 0.0 }, e[2] = { 0.0, 0.0 }, v, err;
  int k;

  for (k = 0; k < MAX (n->n_terms, 1); k++)
    t[k] = naive_term (n, k, src, b, x, y, c);
  v = naive_combine (n, in, t);
  if (!bound)
    return v;

  for (k = 0; k < MAX (n->n_terms, 1); k++)
    e[k] = naive_term_error (n, k, src, b, x, y, c);
  switch (n->combine) {
    case CUCONV_COMBINE_SHARPEN:
      err = n->amount * e[0] + u * (2 * n->amount * fabs (in - t[0]) +
          fabs (v));
      break;
    case CUCONV_COMBINE_MAGNITUDE:
    case CUCONV_COMBINE_ABS_SUM:
      err = e[0] + e[1] + 2 * u * v;
      break;
    default:
      err = e[0];
      break;
  }
  *bound = 2.0 * (err + u * (fabs (v) + 0.5));
  return v;
}

/* Halves away from zero, then 0..max. */
static unsigned
naive_round (double v, unsigned max)
{
  double r = v < 0 ? -floor (-v + 0.5) : floor (v + 0.5);
  return r < 0 ? 0 : (r > max ? max : (unsigned) r);
}

static const guint8 all_filter[CUCONV_MAX_COMP] = { 0 };

/* Input values below 2^(depth - amp) (amp 0: the full range; a smaller
 * range keeps edge maps and sharpening off saturation), with garbage in
 * the bits of each word that are not the sample's. */
static void
fill_source (const Geometry * g, guint8 * src, int stride, int amp)
{
  const unsigned mask = (1u << g->depth) - 1;
  int x, y;

  for (y = 0; y < g->height; y++) {
    guint8 *row = src + (size_t) y * stride;

    for (x = 0; x < stride; x++)
      row[x] = rnd ();
    if (bytes_of (g) == 2) {
      for (x = 0; x < g->width * g->n_comp; x++) {
        unsigned v = (rnd () & mask) >> amp;
        unsigned w = (v << g->shift) | (rnd () & 0xffff & ~(mask << g->shift));
        row[2 * x] = w & 0xff;
        row[2 * x + 1] = w >> 8;
      }
    } else {
      for (x = 0; x < g->width * g->n_comp; x++)
        row[x] >>= amp;
    }
  }
}

/* The word got the reference wrote for component c at (x, y): a copied
 * component holds the source's word, a filled one the fill, a filtered
 * one no bits outside its sample.  Returns TRUE, with the sample in
 * *value, for a filtered component. */
static gboolean
filtered_value (const Geometry * g, const guint8 * src, int stride,
    const guint8 * op, unsigned fill, int x, int y, int c, unsigned got,
    unsigned *value)
{
  const unsigned max = (1u << g->depth) - 1;

  /* plain ifs: check's assertions cost a system call each */
  if (op[c] == CUCONV_COMP_COPY) {
    if (got != word_at (g, src, stride, x, y, c))
      fail ("copied component %d changed at %d,%d", c, x, y);
    return FALSE;
  }
  if (op[c] == CUCONV_COMP_FILL) {
    if (got != fill << g->shift)
      fail ("filled component %d is %u at %d,%d", c, got, x, y);
    return FALSE;
  }
  *value = (got >> g->shift) & max;
  if (got != *value << g->shift)
    fail ("%dx%d depth %d shift %d: word 0x%x at %d,%d has bits outside "
        "the sample", g->width, g->height, g->depth, g->shift, got, x, y);
  return TRUE;
}

/* Runs one case: the reference on a random plane, every sample checked.
 * Returns the number of samples off by 1. */
static guint64
check_case (const Geometry * g, const CuconvSettings * s, const guint8 * op,
    int amp)
{
  const int bytes = bytes_of (g);
  const int wb = g->width * g->n_comp * bytes;
  const int stride = wb + 7;    /* odd padding, guarded */
  const size_t size = (size_t) stride * g->height;
  const unsigned max = (1u << g->depth) - 1;
  const unsigned fill = max / 3;
  guint8 *src = g_malloc (size), *dst = g_malloc (size);
  Naive *n = g_new (Naive, 1);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvPlane p = { src, dst, stride, stride, g->width, g->height, g->n_comp,
    g->sub_x, g->sub_y, g->depth, g->shift
  };
  guint64 ones = 0, unexplained = 0, filtered = 0;
  Source source;
  int x, y, c, i;

  memcpy (p.op, op, sizeof (p.op));
  p.fill = fill;
  fill_source (g, src, stride, amp);
  memset (dst, GUARD, size);
  cuconv_filter_init (f, s);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
  naive_setup (n, s, g->sub_x, g->sub_y);
  if (naive_untruncated (s)) {
    const double sy = s->sigma_y > 0.0 ? s->sigma_y : s->sigma;

    if (s->sigma > 0.0)
      n->fold_x = naive_fold (s->border, g->width, s->sigma / g->sub_x);
    if (sy > 0.0)
      n->fold_y = naive_fold (s->border, g->height, sy / g->sub_y);
  }
  source_decode (&source, g, src, stride);

  for (y = 0; y < g->height; y++) {
    if ((i = padding_written (dst + (size_t) y * stride, wb, stride)) >= 0)
      fail ("padding written at byte %d of row %d", i, y);
    for (x = 0; x < g->width; x++) {
      for (c = 0; c < g->n_comp; c++) {
        const unsigned got = word_at (g, dst, stride, x, y, c);
        unsigned want, value;
        double v, bound = 0.0;
        int d;

        if (!filtered_value (g, src, stride, op, fill, x, y, c, got, &value))
          continue;
        v = naive_sample (n, &source, s->border, x, y, c, NULL);
        want = naive_round (v, max);
        d = abs ((int) value - (int) want);
        if (d == 1)
          naive_sample (n, &source, s->border, x, y, c, &bound);
        if (d > 1)
          fail ("%dx%d nc %d sub %d,%d depth %d kernel %d border %d r %u "
              "sigma %g,%g: (%d,%d,%d) is %u, expected %u (%.6f)", g->width,
              g->height, g->n_comp, g->sub_x, g->sub_y, g->depth, s->kernel,
              s->border, s->radius, s->sigma, s->sigma_y, x, y, c, value,
              want, v);
        if (d == 1 && fabs (v - (value + want) / 2.0) > bound)
          unexplained++;
        ones += d;
        filtered++;
      }
    }
  }
  fail_unless (unexplained * 100 <= filtered,
      "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " samples off by 1 "
      "beyond float rounding (kernel %d border %d r %u depth %d)",
      unexplained, filtered, s->kernel, s->border, s->radius, g->depth);
  g_free (src);
  g_free (dst);
  g_free (n->fold_x);
  g_free (n->fold_y);
  g_free (n);
  g_free (f);
  g_free (source.v);
  return ones;
}

static CuconvSettings
settings (CuconvKernel k, CuconvBorder b, unsigned radius, double sigma)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = k;
  s.border = b;
  s.radius = radius;
  s.sigma = sigma;
  s.amount = 1.0;
  return s;
}

/* The 8-bit geometries of the blurs' full radius matrix. */
static const Geometry geometries[] = {
  {1, 1, 1, 1, 1, 8}, {2, 3, 1, 1, 1, 8}, {17, 9, 1, 1, 1, 8},
  {385, 289, 1, 1, 1, 8},
  {1, 1, 2, 2, 2, 8}, {2, 3, 2, 2, 2, 8}, {17, 9, 2, 2, 2, 8},
  {193, 145, 2, 2, 2, 8},
  {9, 9, 1, 2, 1, 8}, {193, 289, 1, 2, 1, 8},
};

/* Every depth and packing of the formats, small. */
static const Geometry small_geometries[] = {
  {1, 1, 1, 1, 1, 8}, {2, 3, 1, 1, 1, 8}, {17, 9, 1, 1, 1, 8},
  {3, 2, 2, 2, 2, 8}, {9, 5, 2, 2, 2, 8}, {9, 9, 1, 2, 1, 8},
  {13, 7, 4, 1, 1, 8},          /* RGBA, AYUV */
  {11, 6, 1, 1, 1, 10}, {12, 5, 1, 2, 2, 12},   /* I420_10LE, I420_12LE */
  {13, 7, 1, 1, 1, 10, 6}, {7, 4, 2, 2, 2, 10, 6},      /* P010 */
  {12, 7, 1, 1, 1, 16}, {7, 4, 2, 2, 2, 16},    /* GRAY16, P016 */
};

/* And larger, for the interior paths. */
static const Geometry large_geometries[] = {
  {385, 289, 1, 1, 1, 8}, {193, 145, 2, 2, 2, 8}, {97, 61, 4, 1, 1, 8},
  {161, 97, 1, 1, 1, 10, 6}, {121, 67, 1, 1, 1, 16},
};

static void
run_matrix (const int *radii, int n_radii, gboolean large)
{
  guint64 ones = 0, cases = 0;
  int gi, k, b, ri;

  rng_state = 20261122;
  for (gi = 0; gi < (int) G_N_ELEMENTS (geometries); gi++) {
    const Geometry *g = &geometries[gi];

    if ((g->width * g->height > 1000) != large)
      continue;
    for (k = CUCONV_KERNEL_GAUSSIAN; k <= CUCONV_KERNEL_BOX; k++)
      for (b = 0; b < CUCONV_BORDER_N; b++)
        for (ri = 0; ri < n_radii; ri++, cases++) {
          CuconvSettings s = settings (k, b, radii[ri], 0.0);
          ones += check_case (g, &s, all_filter, 0);
        }
  }
  GST_INFO ("%" G_GUINT64_FORMAT " cases, %" G_GUINT64_FORMAT
      " samples off by 1", cases, ones);
}

static const int all_radii[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
  14, 15, 16
};

/* Small planes, frames smaller than the kernel among them: radii 1..16. */
GST_START_TEST (test_small_all_radii)
{
  run_matrix (all_radii, G_N_ELEMENTS (all_radii), FALSE);
}

GST_END_TEST;

GST_START_TEST (test_large)
{
  run_matrix (all_radii, G_N_ELEMENTS (all_radii), TRUE);
}

GST_END_TEST;

/* Sigma only, both given, and a radius of 64 on small planes. */
GST_START_TEST (test_sigma)
{
  static const Geometry g = { 37, 23, 1, 1, 1, 8 }, g2 = { 19, 12, 2, 2, 2,
    8
  };
  int b;

  rng_state = 7;
  for (b = 0; b < CUCONV_BORDER_N; b++) {
    CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, b, 0, 1.5);

    check_case (&g, &s, all_filter, 0);
    s.sigma = 2.7;
    check_case (&g2, &s, all_filter, 0);
    s = settings (CUCONV_KERNEL_GAUSSIAN, b, 3, 4.0);
    check_case (&g, &s, all_filter, 0);
    s = settings (CUCONV_KERNEL_GAUSSIAN, b, 64, 0.0);
    check_case (&g, &s, all_filter, 0);
    s = settings (CUCONV_KERNEL_BOX, b, 64, 0.0);
    check_case (&g2, &s, all_filter, 0);
  }
}

GST_END_TEST;

/* The untruncated gaussian (radius 0, ceil (3 sigma) above 64): planes
 * from 1x1, far smaller than sigma, to larger than the kernel's bulk,
 * every border, depth and subsampling, sharpen, and sigma_y beside it. */
GST_START_TEST (test_untruncated)
{
  static const Geometry gs[] = {
    {1, 1, 1, 1, 1, 8}, {2, 1, 1, 1, 1, 8}, {3, 2, 1, 1, 1, 8},
    {3, 2, 2, 2, 2, 8}, {5, 7, 1, 1, 1, 16}, {9, 5, 1, 2, 2, 10, 6},
    {13, 7, 4, 1, 1, 8}, {97, 3, 1, 1, 1, 8}, {150, 41, 1, 1, 1, 8},
  };
  static const struct
  {
    CuconvKernel k;
    double sigma, sigma_y;
  } cases[] = {
    {CUCONV_KERNEL_GAUSSIAN, 21.4, 0.0}, {CUCONV_KERNEL_GAUSSIAN, 64.0, 0.0},
    {CUCONV_KERNEL_GAUSSIAN, 200.0, 0.0}, {CUCONV_KERNEL_GAUSSIAN, 256.0, 0.0},
    {CUCONV_KERNEL_GAUSSIAN, 0.0, 100.0}, {CUCONV_KERNEL_GAUSSIAN, 30.0, 4.0},
    {CUCONV_KERNEL_SHARPEN, 40.0, 0.0},
  };
  int gi, i, b;

  rng_state = 21;
  for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++)
    for (i = 0; i < (int) G_N_ELEMENTS (cases); i++)
      for (b = 0; b < CUCONV_BORDER_N; b++) {
        CuconvSettings s = settings (cases[i].k, b, 0, cases[i].sigma);

        /* the largest planes with the quicker sigmas only */
        if (gs[gi].width * gs[gi].height > 1000 && cases[i].sigma > 64.0)
          continue;
        s.sigma_y = cases[i].sigma_y;
        s.amount = 0.7;
        check_case (&gs[gi], &s, all_filter, cases[i].k ==
            CUCONV_KERNEL_SHARPEN ? 2 : 0);
      }
}

GST_END_TEST;

/* Explicit radii past 64, up to 1024: truncated kernels, sigma from the
 * radius or given, on planes smaller and larger than them. */
GST_START_TEST (test_wide_radii)
{
  static const Geometry gs[] = {
    {1, 1, 1, 1, 1, 8}, {3, 2, 2, 2, 2, 8}, {7, 4, 1, 1, 1, 16},
    {40, 3, 1, 1, 1, 8},
  };
  static const unsigned radii[] = { 65, 300, 1024 };
  int gi, i, b, k;

  rng_state = 23;
  for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++)
    for (i = 0; i < (int) G_N_ELEMENTS (radii); i++)
      for (b = 0; b < CUCONV_BORDER_N; b++)
        for (k = CUCONV_KERNEL_GAUSSIAN; k <= CUCONV_KERNEL_LAPLACIAN; k++) {
          CuconvSettings s = settings (k, b, radii[i], i == 1 ? 40.0 : 0.0);

          /* the naive sum costs radius^2 a sample */
          if (gs[gi].width * gs[gi].height > 30 && radii[i] > 300)
            continue;
          s.amount = 0.5;
          check_case (&gs[gi], &s, all_filter, k >= CUCONV_KERNEL_SHARPEN ?
              3 : 0);
        }
}

GST_END_TEST;

/* Sharpen, sobel and laplacian: radius 0 (sobel, laplacian: 1; sharpen:
 * the identity taps), the 3x3 operators, larger radii, sigma only; every
 * depth and packing, every border, full-range and small inputs. */
GST_START_TEST (test_kernel_types)
{
  static const struct
  {
    unsigned radius;
    double sigma;
  } small[] = { {0, 0.0}, {1, 0.0}, {2, 0.0}, {3, 0.0}, {5, 0.0},
  {16, 0.0}, {0, 1.2}, {4, 0.6}
  }, large[] = { {1, 0.0}, {2, 0.0}, {7, 0.0}, {0, 2.0} };
  int gi, k, b, i;

  rng_state = 5;
  for (k = CUCONV_KERNEL_SHARPEN; k <= CUCONV_KERNEL_LAPLACIAN; k++)
    for (b = 0; b < CUCONV_BORDER_N; b++) {
      for (gi = 0; gi < (int) G_N_ELEMENTS (small_geometries); gi++)
        for (i = 0; i < (int) G_N_ELEMENTS (small); i++) {
          CuconvSettings s = settings (k, b, small[i].radius, small[i].sigma);

          s.amount = i % 2 ? 1.5 : 0.7;
          check_case (&small_geometries[gi], &s, all_filter, (i + gi) % 2 ?
              3 : 0);
        }
      for (gi = 0; gi < (int) G_N_ELEMENTS (large_geometries); gi++)
        for (i = 0; i < (int) G_N_ELEMENTS (large); i++) {
          CuconvSettings s = settings (k, b, large[i].radius, large[i].sigma);

          s.amount = 2.0;
          check_case (&large_geometries[gi], &s, all_filter, i % 2 ? 4 : 0);
        }
    }

  /* the strongest sharpening, and a radius of 64 */
  for (b = 0; b < CUCONV_BORDER_N; b++) {
    CuconvSettings s = settings (CUCONV_KERNEL_SHARPEN, b, 3, 0.0);

    s.amount = CUCONV_MAX_AMOUNT;
    check_case (&small_geometries[2], &s, all_filter, 2);
    check_case (&small_geometries[11], &s, all_filter, 2);
    for (k = CUCONV_KERNEL_SOBEL; k <= CUCONV_KERNEL_LAPLACIAN; k++) {
      s = settings (k, b, 64, 0.0);
      check_case (&small_geometries[2], &s, all_filter, 0);
      check_case (&small_geometries[10], &s, all_filter, 0);
    }
  }
}

GST_END_TEST;

/* sigma_y: a different blur vertically, a vertical-only blur (the
 * horizontal direction resolves to radius 0), and the edge maps. */
GST_START_TEST (test_anisotropic)
{
  static const struct
  {
    CuconvKernel k;
    unsigned radius;
    double sigma, sigma_y;
  } cases[] = {
    {CUCONV_KERNEL_GAUSSIAN, 0, 1.0, 3.0}, {CUCONV_KERNEL_GAUSSIAN, 0, 0.0, 2.0},
    {CUCONV_KERNEL_GAUSSIAN, 4, 0.0, 0.5}, {CUCONV_KERNEL_BOX, 0, 0.0, 1.5},
    {CUCONV_KERNEL_BOX, 0, 2.0, 0.4}, {CUCONV_KERNEL_SHARPEN, 0, 0.8, 2.0},
    {CUCONV_KERNEL_SOBEL, 0, 2.0, 0.7}, {CUCONV_KERNEL_SOBEL, 0, 0.0, 1.5},
    {CUCONV_KERNEL_LAPLACIAN, 3, 0.0, 2.0}, {CUCONV_KERNEL_LAPLACIAN, 0, 0.9, 3.0},
  };
  static const Geometry gs[] = {
    {17, 9, 1, 1, 1, 8}, {40, 31, 2, 2, 2, 8}, {31, 23, 1, 2, 1, 8},
    {29, 21, 1, 2, 2, 10}, {15, 13, 2, 2, 2, 10, 6},
  };
  int i, b, gi;

  rng_state = 11;
  for (i = 0; i < (int) G_N_ELEMENTS (cases); i++)
    for (b = 0; b < CUCONV_BORDER_N; b++)
      for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++) {
        CuconvSettings s = settings (cases[i].k, b, cases[i].radius,
            cases[i].sigma);

        s.sigma_y = cases[i].sigma_y;
        check_case (&gs[gi], &s, all_filter, gi % 2 ? 2 : 0);
      }
}

GST_END_TEST;

/* Custom separable kernels: random taps of both signs, one direction or
 * both, normalised or not, a zero-sum kernel normalised (left as is), the
 * identity.  The same taps on every plane, subsampled or not. */
GST_START_TEST (test_custom_separable)
{
  static const Geometry gs[] = {
    {1, 1, 1, 1, 1, 8}, {23, 14, 1, 1, 1, 8}, {12, 7, 2, 2, 2, 8},
    {13, 7, 4, 1, 1, 8}, {19, 8, 1, 2, 2, 12}, {9, 6, 2, 2, 2, 10, 6},
    {64, 48, 1, 1, 1, 8},
  };
  static const int lens[][2] = { {3, 3}, {5, 0}, {0, 7}, {1, 9}, {15, 3},
  {31, 31}, {0, 0}
  };
  int li, b, gi, norm, i;

  rng_state = 13;
  for (li = 0; li < (int) G_N_ELEMENTS (lens); li++)
    for (norm = 0; norm <= 1; norm++)
      for (b = 0; b < CUCONV_BORDER_N; b++)
        for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++) {
          CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, b, 0, 0.0);

          s.normalize = norm;
          s.custom_x_len = lens[li][0];
          s.custom_y_len = lens[li][1];
          /* mostly positive, so that normalised sums stay away from 0 */
          for (i = 0; i < s.custom_x_len; i++)
            s.custom_x[i] = rnd_unit () + 0.4;
          for (i = 0; i < s.custom_y_len; i++)
            s.custom_y[i] = rnd_unit () + 0.4;
          check_case (&gs[gi], &s, all_filter, norm ? 0 : 3);
        }

  /* a derivative: its sum is 0, so normalize leaves it as it is */
  for (b = 0; b < CUCONV_BORDER_N; b++) {
    CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, b, 0, 0.0);

    s.normalize = 1;
    s.custom_x_len = s.custom_y_len = 3;
    s.custom_x[0] = -1.0;
    s.custom_x[2] = 1.0;
    s.custom_y[0] = s.custom_y[2] = 0.5;
    s.custom_y[1] = 1.0;
    for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++)
      check_case (&gs[gi], &s, all_filter, 1);
  }
}

GST_END_TEST;

/* Custom 2-D matrices that are not separable: random, of every side from
 * 1 to 31, normalised (a positive sum) or not, a zero sum; on planes
 * smaller than the matrix too. */
GST_START_TEST (test_custom_matrix)
{
  static const int sides[] = { 1, 3, 5, 7, 9, 15, 31 };
  static const Geometry gs[] = {
    {1, 1, 1, 1, 1, 8}, {2, 3, 1, 1, 1, 8}, {17, 9, 1, 1, 1, 8},
    {9, 5, 2, 2, 2, 8}, {13, 7, 4, 1, 1, 8}, {11, 6, 1, 1, 1, 16},
    {7, 4, 2, 2, 2, 10, 6}, {70, 41, 1, 1, 1, 8},
  };
  int si, b, gi, norm, i;

  rng_state = 17;
  for (si = 0; si < (int) G_N_ELEMENTS (sides); si++)
    for (norm = 0; norm <= 2; norm++)
      for (b = 0; b < CUCONV_BORDER_N; b++)
        for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++) {
          const int side = sides[si], n = side * side;
          CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, b, 0, 0.0);
          double sum = 0.0;

          if (side == 31 && gs[gi].width * gs[gi].height > 1000 &&
              b != CUCONV_BORDER_MIRROR)
            continue;           /* the slowest cases: one border is enough */
          s.matrix_side = side;
          for (i = 0; i < n; i++)
            s.matrix[i] = rnd_unit ();
          /* an off-centre tap, to see the orientation */
          s.matrix[side > 1 ? side + side / 2 - 1 : 0] += 1.0;
          for (i = 0; i < n; i++)
            sum += s.matrix[i];
          if (norm == 1) {
            s.matrix[n / 2] += 2.0 - sum;       /* sum 2, then normalised */
            s.normalize = 1;
          } else if (norm == 2) {
            s.matrix[n / 2] -= sum;     /* sum 0: normalize leaves it */
            s.normalize = 1;
          } else {
            for (i = 0; i < n; i++)
              s.matrix[i] *= 4.0 / side;
          }
          check_case (&gs[gi], &s, all_filter, norm == 1 ? 0 : 2);
        }
}

GST_END_TEST;

/* Components copied, filled or filtered, in every mix; the copied ones
 * keep the garbage bits of their words. */
GST_START_TEST (test_component_ops)
{
  static const guint8 ops4[][CUCONV_MAX_COMP] = {
    {CUCONV_COMP_FILTER, CUCONV_COMP_COPY, CUCONV_COMP_FILTER, CUCONV_COMP_FILL},
    {CUCONV_COMP_COPY, CUCONV_COMP_FILTER, CUCONV_COMP_FILL, CUCONV_COMP_FILTER},
    {CUCONV_COMP_COPY, CUCONV_COMP_COPY, CUCONV_COMP_COPY, CUCONV_COMP_COPY},
    {CUCONV_COMP_FILL, CUCONV_COMP_FILL, CUCONV_COMP_FILTER, CUCONV_COMP_COPY},
  };
  static const Geometry gs[] = {
    {1, 1, 4, 1, 1, 8}, {13, 7, 4, 1, 1, 8}, {5, 3, 4, 1, 1, 16},
    {9, 5, 2, 2, 2, 8}, {9, 5, 2, 2, 2, 10, 6}, {9, 5, 1, 2, 2, 12},
  };
  const CuconvKernel kernels[] = { CUCONV_KERNEL_GAUSSIAN, CUCONV_KERNEL_SOBEL,
    CUCONV_KERNEL_SHARPEN
  };
  int oi, gi, k, b;

  rng_state = 19;
  for (oi = 0; oi < (int) G_N_ELEMENTS (ops4); oi++)
    for (gi = 0; gi < (int) G_N_ELEMENTS (gs); gi++)
      for (k = 0; k < (int) G_N_ELEMENTS (kernels); k++)
        for (b = 0; b < CUCONV_BORDER_N; b++) {
          CuconvSettings s = settings (kernels[k], b, 2, 0.0);
          guint8 op[CUCONV_MAX_COMP];

          /* planes of fewer components take the first ops, rotated so
           * that each op lands on each component */
          memcpy (op, ops4[(oi + gi) % G_N_ELEMENTS (ops4)], sizeof (op));
          check_case (&gs[gi], &s, op, 1);
        }
}

GST_END_TEST;

/* A known answer, worked out by hand: box radius 1 on a 3x3 plane. */
GST_START_TEST (test_known_box)
{
  static const guint8 in[9] = { 0, 0, 0, 0, 90, 0, 0, 0, 0 };
  guint8 out[9];
  CuconvSettings s = settings (CUCONV_KERNEL_BOX, CUCONV_BORDER_ZERO, 1, 0.0);
  CuconvFilter f;
  CuconvPlane p = { in, out, 3, 3, 3, 3, 1, 1, 1 };
  int i;

  cuconv_filter_init (&f, &s);
  fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
  for (i = 0; i < 9; i++)
    fail_unless_equals_int (out[i], 10);        /* 90 / 9 everywhere */

  s.border = CUCONV_BORDER_CLAMP;
  cuconv_filter_init (&f, &s);
  fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
  fail_unless_equals_int (out[0], 10);
  fail_unless_equals_int (out[4], 10);
}

GST_END_TEST;

/* Known answers of the edge maps and the sharpen, at every radius: a ramp
 * of slope 3 gives |gx| = 24 (and gy = 0), a parabola x^2 gives a
 * laplacian of 2, a flat area is left as it is by a sharpen. */
GST_START_TEST (test_known_edges)
{
  enum
  { W = 40, H = 9 };
  guint8 in[W * H], out[W * H];
  CuconvPlane p = { in, out, W, W, W, H, 1, 1, 1 };
  CuconvFilter f;
  int r, x, y;

  for (r = 1; r <= 8; r++) {
    CuconvSettings s = settings (CUCONV_KERNEL_SOBEL, CUCONV_BORDER_WRAP, r, 0.0);

    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        in[y * W + x] = 3 * x;
    cuconv_filter_init (&f, &s);
    fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
    /* wrap keeps the rows equal, so gy = 0 everywhere */
    for (y = 0; y < H; y++)
      for (x = r; x < W - r; x++)
        fail_unless_equals_int (out[y * W + x], 24);

    s.kernel = CUCONV_KERNEL_LAPLACIAN;
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        in[y * W + x] = (x % 16) * (x % 16);
    cuconv_filter_init (&f, &s);
    fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
    for (y = 0; y < H; y++)
      for (x = r; x < 16 - r; x++)
        fail_unless_equals_int (out[y * W + x], 2);

    s.kernel = CUCONV_KERNEL_SHARPEN;
    s.amount = 3.0;
    memset (in, 77, sizeof (in));
    cuconv_filter_init (&f, &s);
    fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
    for (x = 0; x < W * H; x++)
      fail_unless_equals_int (out[x], 77);
  }
}

GST_END_TEST;

/* P010: the sample is the top 10 bits; the low 6 bits of the input are
 * ignored and written 0.  depth 10 without shift: the top 6 bits are. */
GST_START_TEST (test_known_words)
{
  static const guint16 in[4] = { 0xffff, 0x003f, 0x8015, 0x4fc0 };
  guint8 src[8], dst[8];
  CuconvSettings s = settings (CUCONV_KERNEL_CUSTOM, CUCONV_BORDER_CLAMP, 0, 0.0);
  CuconvFilter f;
  CuconvPlane p = { src, dst, 8, 8, 4, 1, 1, 1, 1, 10, 6 };
  int i;

  for (i = 0; i < 4; i++) {
    src[2 * i] = in[i] & 0xff;
    src[2 * i + 1] = in[i] >> 8;
  }
  cuconv_filter_init (&f, &s);     /* nothing set: the identity */
  fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (dst[2 * i] | dst[2 * i + 1] << 8,
        in[i] & 0xffc0);

  p.shift = 0;
  fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (dst[2 * i] | dst[2 * i + 1] << 8, in[i] & 0x3ff);

  /* saturation at the depth: 1023 * 2 */
  s.custom_x_len = 1;
  s.custom_x[0] = 2.0;
  cuconv_filter_init (&f, &s);
  p.shift = 6;
  fail_unless (cuconv_reference_frame (&p, 1, &f) == 0);
  fail_unless_equals_int (dst[0] | dst[1] << 8, 0xffc0);
  fail_unless_equals_int (dst[2] | dst[3] << 8, 0);
  fail_unless_equals_int (dst[4] | dst[5] << 8, 0xffc0);
  fail_unless_equals_int (dst[6] | dst[7] << 8, (2 * 0x13f) << 6);
}

GST_END_TEST;

/* cuconv_reference_plane () is the reference with one term of the given
 * taps: the same output as the filter they come from. */
GST_START_TEST (test_reference_plane)
{
  static const Geometry g = { 31, 17, 2, 2, 2, 10, 6 };
  const int stride = 31 * 2 * 2 + 3;
  guint8 *src = g_malloc (stride * 17), *a = g_malloc (stride * 17),
      *b = g_malloc (stride * 17);
  CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, CUCONV_BORDER_MIRROR, 5, 0.0);
  CuconvFilter f;
  CuconvPlane p = { src, a, stride, stride, 31, 17, 2, 2, 2, 10, 6,
    {CUCONV_COMP_FILTER, CUCONV_COMP_FILL}, 512
  };

  rng_state = 23;
  fill_source (&g, src, stride, 0);
  memset (a, 0, stride * 17);
  memset (b, 0, stride * 17);
  s.sigma_y = 3.0;
  cuconv_filter_init (&f, &s);
  fail_unless (cuconv_reference_plane_filter (&p, &f) == 0);
  p.dst = b;
  fail_unless (cuconv_reference_plane (&p, cuconv_filter_taps_x (&f, &p),
          cuconv_filter_taps_y (&f, &p), CUCONV_BORDER_MIRROR) == 0);
  fail_unless (memcmp (a, b, stride * 17) == 0);
  g_free (src);
  g_free (a);
  g_free (b);
}

GST_END_TEST;

/* Regions (docs/semantics.md, "Regions") --------------------------------- */

/* The bilateral, from docs/semantics.md in double: its own radius rule
 * (cut to 16, sigma from the uncut radius), weights, border and range
 * sigma scaled to the depth; the zero border reads samples of value 0. */
static void
naive_bilateral_radius (const CuconvSettings * s, gboolean vertical, int *r,
    double *sigma)
{
  const double sg = vertical && s->sigma_y > 0.0 ? s->sigma_y : s->sigma;
  int rr = (int) s->radius;

  if (rr == 0 && sg > 0.0)
    rr = (int) ceil (3.0 * sg);
  *sigma = sg > 0.0 ? sg : 0.3 * (rr - 1) + 0.8;
  *r = rr > 16 ? 16 : rr;
}

static double
naive_bilateral_at (const Geometry * g, const guint8 * src, int stride,
    const CuconvSettings * s, int x, int y, int c)
{
  const double sr = s->sigma_range * pow (2.0, g->depth - 8);
  double num = 0.0, den = 0.0, sx, sy, p;
  int rx, ry, i, j;

  naive_bilateral_radius (s, FALSE, &rx, &sx);
  naive_bilateral_radius (s, TRUE, &ry, &sy);
  rx = (rx + g->sub_x - 1) / g->sub_x;
  ry = (ry + g->sub_y - 1) / g->sub_y;
  sx /= g->sub_x;
  sy /= g->sub_y;
  p = naive_in (g, src, stride, x, y, c);
  for (j = -ry; j <= ry; j++) {
    for (i = -rx; i <= rx; i++) {
      const int xi = naive_index (s->border, x + i, g->width);
      const int yj = naive_index (s->border, y + j, g->height);
      const double q = xi < 0 || yj < 0 ? 0.0 :
          naive_in (g, src, stride, xi, yj, c);
      const double wr = sr > 0.0 ? exp (-(q - p) * (q - p) / (2 * sr * sr)) :
          q == p ? 1.0 : 0.0;
      const double w = exp (-i * i / (2 * sx * sx) - j * j / (2 * sy * sy))
          * wr;

      num += w * q;
      den += w;
    }
  }
  return num / den;
}

/* The reference's bilateral on a random plane against the naive one:
 * within 1, at most 1% of the filtered samples off by 1; copied and
 * filled components, bits outside the sample and padding as for the
 * other kernels. */
static void
check_bilateral_case (const Geometry * g, const CuconvSettings * s,
    const guint8 * op)
{
  const int bytes = bytes_of (g);
  const int wb = g->width * g->n_comp * bytes;
  const int stride = wb + 5;
  const size_t size = (size_t) stride * g->height;
  const unsigned max = (1u << g->depth) - 1;
  const unsigned fill = max / 3;
  guint8 *src = g_malloc (size), *dst = g_malloc (size);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  CuconvPlane p = { src, dst, stride, stride, g->width, g->height, g->n_comp,
    g->sub_x, g->sub_y, g->depth, g->shift
  };
  guint64 unexplained = 0, filtered = 0;
  double bound;
  int x, y, c, i, rx, ry;

  memcpy (p.op, op, sizeof (p.op));
  p.fill = fill;
  fill_source (g, src, stride, 0);
  /* the float sums' first-order error bound, relative: a sample off by 1
   * whose exact value lies that close to a half is float rounding */
  naive_bilateral_radius (s, FALSE, &rx, &bound);
  naive_bilateral_radius (s, TRUE, &ry, &bound);
  bound = (2.0 * (2 * rx + 1) * (2 * ry + 1) + 4.0) * ldexp (1.0, -24);
  memset (dst, GUARD, size);
  cuconv_filter_init (f, s);
  fail_unless (f->combine == CUCONV_COMBINE_BILATERAL);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);

  for (y = 0; y < g->height; y++) {
    if ((i = padding_written (dst + (size_t) y * stride, wb, stride)) >= 0)
      fail ("padding written at byte %d of row %d", i, y);
    for (x = 0; x < g->width; x++) {
      for (c = 0; c < g->n_comp; c++) {
        const unsigned got = word_at (g, dst, stride, x, y, c);
        unsigned want, value;
        double v;
        int d;

        if (!filtered_value (g, src, stride, op, fill, x, y, c, got, &value))
          continue;
        v = naive_bilateral_at (g, src, stride, s, x, y, c);
        want = naive_round (v, max);
        d = abs ((int) value - (int) want);
        if (d > 1)
          fail ("bilateral %dx%d nc %d sub %d,%d depth %d border %d r %u "
              "sigma %g,%g sigma-range %g: (%d,%d,%d) is %u, expected %u "
              "(%.6f)", g->width, g->height, g->n_comp, g->sub_x, g->sub_y,
              g->depth, s->border, s->radius, s->sigma, s->sigma_y,
              s->sigma_range, x, y, c, value, want, v);
        if (d == 1 && fabs (v - (value + want) / 2.0) > bound * MAX (v, 1.0))
          unexplained++;
        filtered++;
      }
    }
  }
  fail_unless (unexplained * 100 <= filtered, "bilateral: %" G_GUINT64_FORMAT
      " of %" G_GUINT64_FORMAT " samples off by 1 beyond float rounding "
      "(border %d r %u depth %d)", unexplained, filtered, s->border,
      s->radius, g->depth);
  g_free (src);
  g_free (dst);
  g_free (f);
}

GST_START_TEST (test_bilateral)
{
  static const struct
  {
    unsigned radius;
    double sigma, sigma_y, sigma_range;
  } cases[] = {
    {1, 0, 0, 20}, {2, 0, 0, 8}, {5, 0, 0, 30}, {3, 0, 0, 0},
    {0, 1.2, 2.5, 50}, {0, 7.0, 0, 15},   /* ceil (21) cut to 16 */
    {20, 0, 0, 300},            /* cut to 16, sigma 6.5 */
  };
  static const Geometry large[] = {
    {97, 61, 1, 1, 1, 8}, {49, 31, 2, 2, 2, 8}, {41, 23, 1, 1, 1, 16},
  };
  guint8 op[CUCONV_MAX_COMP];
  guint g, k, b, n = 0;

  rng_state = 7;
  for (g = 0; g < G_N_ELEMENTS (small_geometries) + G_N_ELEMENTS (large);
      g++) {
    const Geometry *geo = g < G_N_ELEMENTS (small_geometries) ?
        &small_geometries[g] : &large[g - G_N_ELEMENTS (small_geometries)];

    for (k = 0; k < G_N_ELEMENTS (cases); k++) {
      for (b = 0; b < CUCONV_BORDER_N; b++) {
        CuconvSettings s = settings (CUCONV_KERNEL_BILATERAL, b,
            cases[k].radius, cases[k].sigma);
        int c;

        /* the large planes with the narrow windows only */
        if (g >= G_N_ELEMENTS (small_geometries) && cases[k].radius != 2
            && cases[k].radius != 5)
          continue;
        s.sigma_y = cases[k].sigma_y;
        s.sigma_range = cases[k].sigma_range;
        for (c = 0; c < CUCONV_MAX_COMP; c++)
          op[c] = geo->n_comp == 1 || (n + c) % 3 == 0 ?
              CUCONV_COMP_FILTER : (n + c) % 3;
        n++;
        check_bilateral_case (geo, &s, op);
      }
    }
  }
}

GST_END_TEST;

/* A known answer: a step 10 | 200 with sigma-range 30 keeps its edge
 * (the far side weighs exp (-190^2 / 1800), nothing), and a ramp of
 * steps of 1 is smoothed as the gaussian would. */
GST_START_TEST (test_bilateral_known)
{
  guint8 src[8] = { 10, 10, 10, 10, 200, 200, 200, 200 }, dst[8];
  CuconvPlane p = { src, dst, 8, 8, 8, 1, 1, 1, 1, 8, 0 };
  CuconvSettings s = settings (CUCONV_KERNEL_BILATERAL, CUCONV_BORDER_CLAMP,
      2, 0);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  int x;

  s.sigma_range = 30;
  cuconv_filter_init (f, &s);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
  for (x = 0; x < 8; x++)
    fail_unless (dst[x] == src[x], "the step moved at %d: %u", x, dst[x]);

  /* sigma-range 0: equal samples only, the identity */
  s.sigma_range = 0;
  fail_unless (cuconv_settings_is_identity (&s));
  cuconv_filter_init (f, &s);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
  fail_unless (memcmp (dst, src, 8) == 0);
  g_free (f);
}

GST_END_TEST;

/* The temporal denoise's table and integer steps (docs/semantics.md,
 * "Temporal denoise"), by hand. */
GST_START_TEST (test_temporal_known)
{
  guint8 k[CUCONV_TEMPORAL_LUT], in[4], state[4];
  guint16 win[2], wstate[2];
  CuconvPlane p = { in, state, 4, 4, 4, 1, 1, 1, 1, 8, 0 };
  int t;

  cuconv_temporal_lut (k, 0.5, 4.0);
  fail_unless (k[0] == 128 && k[1] == 72 && k[2] == 32 && k[3] == 8
      && k[4] == 0 && k[255] == 0, "k = %u %u %u %u %u", k[0], k[1], k[2],
      k[3], k[4]);
  cuconv_temporal_lut (k, 1.0, 255.0);
  fail_unless (k[0] == 255 && k[10] == 235 && k[254] == 0 && k[255] == 0);
  cuconv_temporal_lut (k, 0.0, 20.0);
  fail_unless (cuconv_temporal_is_off (k));
  cuconv_temporal_lut (k, 1.0, 0.0);
  fail_unless (cuconv_temporal_is_off (k));

  /* 100 after 110: 100 + floor ((235 * 10 + 128) / 256) = 109, and the
   * other way 110 + floor ((-2350 + 128) / 256) = 101; 200 apart, k[200]
   * = 12: 20 + floor ((12 * 200 + 128) / 256) = 29 */
  cuconv_temporal_lut (k, 1.0, 255.0);
  in[0] = 100, state[0] = 110, in[1] = 110, state[1] = 100;
  in[2] = 20, state[2] = 220, in[3] = 7, state[3] = 7;
  cuconv_temporal_rows (&p, k, 0, 0, 1);
  fail_unless (k[200] == 12);
  fail_unless (state[0] == 109 && state[1] == 101 && state[2] == 29
      && state[3] == 7, "%u %u %u %u", state[0], state[1], state[2],
      state[3]);
  /* the first frame: the input itself */
  cuconv_temporal_rows (&p, k, 1, 0, 1);
  fail_unless (memcmp (in, state, 4) == 0);
  /* a copied component keeps the input */
  p.n_comp = 2;
  p.width = 2;
  p.op[1] = CUCONV_COMP_COPY;
  in[0] = 50, state[0] = 60, in[1] = 50, state[1] = 60;
  cuconv_temporal_rows (&p, k, 0, 0, 1);
  fail_unless (state[0] > 50 && state[1] == 50);

  /* P010: the sample in the top 10 bits, a difference of 64 10-bit steps
   * indexes k[16]; the low 6 bits written 0, the first frame's kept */
  p.src = (const guint8 *) win;
  p.dst = (guint8 *) wstate;
  p.width = 1;
  p.n_comp = 1;
  p.op[1] = 0;
  p.depth = 10;
  p.shift = 6;
  win[0] = GUINT16_TO_LE (512 << 6 | 0x15);
  cuconv_temporal_rows (&p, k, 1, 0, 1);
  fail_unless (GUINT16_FROM_LE (wstate[0]) == (512 << 6 | 0x15));
  win[0] = GUINT16_TO_LE (576 << 6 | 0x2a);
  cuconv_temporal_rows (&p, k, 0, 0, 1);
  t = 576 + ((k[16] * (512 - 576) + 128) >> 8);
  fail_unless (GUINT16_FROM_LE (wstate[0]) == (guint) t << 6, "0x%x, not %d",
      GUINT16_FROM_LE (wstate[0]), t);
}

GST_END_TEST;

/* Still noisy samples average over frames: the state's noise shrinks;
 * a jump past the threshold is taken at once. */
GST_START_TEST (test_temporal_sequence)
{
  guint8 k[CUCONV_TEMPORAL_LUT], in[64], state[64];
  CuconvPlane p = { in, state, 64, 64, 64, 1, 1, 1, 1, 8, 0 };
  double err_in = 0.0, err_out = 0.0;
  int t, x;

  rng_state = 3;
  cuconv_temporal_lut (k, 0.9, 20.0);
  for (t = 0; t < 40; t++) {
    for (x = 0; x < 64; x++)
      in[x] = 100 + rnd () % 11 - 5;
    cuconv_temporal_rows (&p, k, t == 0, 0, 1);
    if (t >= 20) {
      for (x = 0; x < 64; x++) {
        err_in += (in[x] - 100.0) * (in[x] - 100.0);
        err_out += (state[x] - 100.0) * (state[x] - 100.0);
      }
    }
  }
  fail_unless (err_out * 3 < err_in, "noise %g of %g", err_out, err_in);
  memset (in, 200, sizeof (in));
  cuconv_temporal_rows (&p, k, 0, 0, 1);
  for (x = 0; x < 64; x++)
    fail_unless (state[x] == 200, "motion kept the past at %d: %u", x,
        state[x]);
}

GST_END_TEST;

/* Canny by hand (docs/semantics.md, "Canny"): a step from 0 to 100 on
 * the left and to 30 on the right; the tie between the two rows beside
 * the step keeps the upper one; the weak right part is kept through its
 * connection to the strong left one, and alone it is no edge.  The same
 * at 16 bits, the thresholds scaled. */
GST_START_TEST (test_canny_known)
{
  enum
  { W = 40, H = 20 };
  static guint8 in[W * H], out[W * H];
  static guint16 in16[W * H], out16[W * H];
  CuconvPlane p = { in, out, W, W, W, H, 1, 1, 1, 8, 0 };
  CuconvPlane p16 = { (guint8 *) in16, (guint8 *) out16, 2 * W, 2 * W, W, H,
    1, 1, 1, 16, 0
  };
  CuconvSettings st = settings (CUCONV_KERNEL_CANNY, CUCONV_BORDER_CLAMP, 0,
      0.0);
  CuconvFilter *f = g_new0 (CuconvFilter, 1);
  int x, y, outside = 0;

  st.threshold_low = 150.0;     /* the larger: the high one */
  st.threshold_high = 50.0;
  cuconv_filter_init (f, &st);
  fail_unless (f->canny_low == 50.0 && f->canny_high == 150.0);
  fail_unless (f->x[0].radius == 0 && f->canny_x[0][0] == 4096);
  for (int right = 100; right >= 30; right -= 70) {
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++) {
        in[y * W + x] = y < 10 ? 0 : x < 20 ? right : 30;
        in16[y * W + x] = GUINT16_TO_LE (in[y * W + x] * 256);
      }
    fail_unless (cuconv_canny_plane (&p, f) == 0);
    fail_unless (cuconv_canny_plane (&p16, f) == 0);
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++) {
        fail_unless ((GUINT16_FROM_LE (out16[y * W + x]) == 65535) ==
            (out[y * W + x] == 255), "16 bit differs at (%d, %d)", x, y);
        /* columns 17 to 22: the corner, where an edge of its own runs
         * down between 100 and 30 */
        outside += y != 9 && (x < 17 || x > 22) && out[y * W + x] != 0;
      }
    if (right == 100) {
      for (x = 0; x < W; x++)
        fail_unless (out[9 * W + x] == 255 || (x >= 17 && x <= 22),
            "no edge at (%d, 9)", x);
      fail_unless (outside == 0, "%d edges off row 9", outside);
    } else {
      for (x = 0; x < W; x++)
        fail_unless (out[9 * W + x] == 0, "an edge at (%d, 9)", x);
    }
  }
  g_free (f);
}

GST_END_TEST;

GST_START_TEST (test_rect_clip)
{
  CuconvRect r = { -7, -7, -7, -7 };

  fail_unless (cuconv_rect_clip (10, 20, 30, 40, 0, 100, 100, &r));
  fail_unless (r.x == 10 && r.y == 20 && r.w == 30 && r.h == 40);
  /* the margin grows every side, then the frame clips */
  fail_unless (cuconv_rect_clip (10, 20, 30, 40, 16, 100, 50, &r));
  fail_unless (r.x == 0 && r.y == 4 && r.w == 56 && r.h == 46);
  fail_unless (cuconv_rect_clip (-5, 97, 10, 10, 0, 100, 100, &r));
  fail_unless (r.x == 0 && r.y == 97 && r.w == 5 && r.h == 3);
  /* a 1x1 rectangle at the last pixel */
  fail_unless (cuconv_rect_clip (99, 99, 1, 1, 0, 100, 100, &r));
  fail_unless (r.x == 99 && r.y == 99 && r.w == 1 && r.h == 1);
  /* overflowing guint and 64-bit arithmetic: clipped, never wrapped */
  fail_unless (cuconv_rect_clip (4294967295LL, 0, 4294967295LL, 5,
          4294967295LL, 100, 100, &r));
  fail_unless (r.x == 0 && r.y == 0 && r.w == 100 && r.h == 100);
  fail_unless (cuconv_rect_clip (LLONG_MIN, LLONG_MIN, LLONG_MAX, LLONG_MAX,
          LLONG_MAX, 7, 3, &r));
  fail_unless (r.x == 0 && r.y == 0 && r.w == 7 && r.h == 3);
  fail_unless (cuconv_rect_clip (2, 1, LLONG_MAX, LLONG_MAX, 0, 7, 3, &r));
  fail_unless (r.x == 2 && r.y == 1 && r.w == 5 && r.h == 2);

  /* nothing left: 0, and out untouched */
  r.x = r.y = r.w = r.h = -7;
  fail_if (cuconv_rect_clip (10, 10, 0, 5, 16, 100, 100, &r));
  fail_if (cuconv_rect_clip (10, 10, 5, -1, 16, 100, 100, &r));
  fail_if (cuconv_rect_clip (100, 0, 5, 5, 0, 100, 100, &r));
  fail_if (cuconv_rect_clip (0, -5, 5, 5, 0, 100, 100, &r));
  fail_if (cuconv_rect_clip (LLONG_MAX, 0, LLONG_MAX, 5, 0, 100, 100, &r));
  fail_if (cuconv_rect_clip (4294967295LL, 0, 4294967295LL, 5, 0, 100, 100,
          &r));
  fail_if (cuconv_rect_clip (0, 0, 5, 5, 0, 0, 100, &r));
  fail_if (cuconv_rect_clip (0, 0, 5, 5, -3, 100, 100, &r));
  fail_unless (r.x == -7 && r.y == -7 && r.w == -7 && r.h == -7);
  /* a negative margin shrinks, down to nothing */
  fail_unless (cuconv_rect_clip (0, 0, 10, 10, -3, 100, 100, &r));
  fail_unless (r.x == 3 && r.y == 3 && r.w == 4 && r.h == 4);
  fail_if (cuconv_rect_clip (0, 0, 6, 10, -3, 100, 100, &r));
}

GST_END_TEST;

static gboolean
rect_is (const CuconvRect * r, int x, int y, int w, int h)
{
  return r->x == x && r->y == y && r->w == w && r->h == h;
}

GST_START_TEST (test_rect_on_plane)
{
  /* a 5x5 frame: 4:2:0 chroma 3x3, 4:2:2 chroma 3x5 */
  CuconvPlane luma = { NULL, NULL, 0, 0, 5, 5, 1, 1, 1, 8 };
  CuconvPlane c420 = { NULL, NULL, 0, 0, 3, 3, 1, 2, 2, 8 };
  CuconvPlane c422 = { NULL, NULL, 0, 0, 3, 5, 2, 2, 1, 8 };
  CuconvRect r = { 3, 3, 2, 2 }, o;

  fail_unless (cuconv_rect_on_plane (&r, &luma, &o) && rect_is (&o, 3, 3, 2,
          2));
  /* [3, 5) / 2 = [1.5, 2.5): outward [1, 3) */
  fail_unless (cuconv_rect_on_plane (&r, &c420, &o) && rect_is (&o, 1, 1, 2,
          2));
  fail_unless (cuconv_rect_on_plane (&r, &c422, &o) && rect_is (&o, 1, 3, 2,
          2));
  /* a 1x1 rectangle at an odd luma pixel still covers one chroma pixel */
  r = (CuconvRect) {
  1, 3, 1, 1};
  fail_unless (cuconv_rect_on_plane (&r, &c420, &o) && rect_is (&o, 0, 1, 1,
          1));
  fail_unless (cuconv_rect_on_plane (&r, &c422, &o) && rect_is (&o, 0, 3, 1,
          1));
  /* the last luma pixel of an odd frame: the last chroma pixel */
  r = (CuconvRect) {
  4, 4, 1, 1};
  fail_unless (cuconv_rect_on_plane (&r, &c420, &o) && rect_is (&o, 2, 2, 1,
          1));
  /* the whole frame */
  r = (CuconvRect) {
  0, 0, 5, 5};
  fail_unless (cuconv_rect_on_plane (&r, &c420, &o) && rect_is (&o, 0, 0, 3,
          3));
  fail_unless (cuconv_rect_on_plane (&r, &c422, &o) && rect_is (&o, 0, 0, 3,
          5));
  /* clipped to the plane; outside or empty: nothing */
  r = (CuconvRect) {
  -3, 2, 10, 9};
  fail_unless (cuconv_rect_on_plane (&r, &c420, &o) && rect_is (&o, 0, 1, 3,
          2));
  r = (CuconvRect) {
  6, 0, 2, 2};
  fail_if (cuconv_rect_on_plane (&r, &c420, &o));
  r = (CuconvRect) {
  2, 2, 0, 2};
  fail_if (cuconv_rect_on_plane (&r, &c420, &o));
}

GST_END_TEST;

/* Whether sample (px, py) of a plane subsampled by sx, sy lies in a
 * region: the luma pixels it stands for, [px * sx, (px + 1) * sx) x
 * [py * sy, (py + 1) * sy), meet one of the rectangles.  Written from the
 * footprint, not from the outward rounding of cuconv_rect_on_plane (). */
static gboolean
naive_in_region (const CuconvRect * rects, int n, int sx, int sy, int px,
    int py)
{
  int i;

  for (i = 0; i < n; i++)
    if (px * sx < rects[i].x + rects[i].w && (px + 1) * sx > rects[i].x &&
        py * sy < rects[i].y + rects[i].h && (py + 1) * sy > rects[i].y)
      return TRUE;
  return FALSE;
}

/* A frame format, as planes of Geometry with the frame's luma size. */
typedef struct
{
  const char *name;
  int n_planes;
  int n_comp[3], sub_x[3], sub_y[3];
  int depth, shift;
  guint8 op[3][CUCONV_MAX_COMP];
} RegionFormat;

static const RegionFormat region_formats[] = {
  {"I420", 3, {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, 8},
  {"NV12", 2, {1, 2}, {1, 2}, {1, 2}, 8},
  {"Y42B", 3, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, 8},
  {"P010", 2, {1, 2}, {1, 2}, {1, 2}, 10, 6},
  {"I420_12LE", 3, {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, 12},
  {"AYUV", 1, {4}, {1}, {1}, 8, 0, {{CUCONV_COMP_COPY}}},
  {"sobel NV12", 2, {1, 2}, {1, 2}, {1, 2}, 8, 0,
      {{0}, {CUCONV_COMP_FILL, CUCONV_COMP_FILL}}},
};

/* One regions case: cuconv_reference_frame_regions () against the
 * whole-frame reference inside the regions and the input outside, sample
 * by sample, with the padding guarded.  Returns the samples inside. */
static guint64
check_regions_case (const RegionFormat * rf, int w, int h,
    const CuconvSettings * s, const CuconvRegions * regions)
{
  CuconvPlane planes[3], whole[3];
  guint8 *src[3], *dst[3], *ref[3];
  int stride[3], wb[3], ph[3], pw[3];
  CuconvFilter *f = g_new (CuconvFilter, 1);
  const int bytes = rf->depth > 8 ? 2 : 1;
  guint64 inside = 0;
  int i, x, y;

  cuconv_filter_init (f, s);
  for (i = 0; i < rf->n_planes; i++) {
    Geometry g = { 0 };

    pw[i] = (w + rf->sub_x[i] - 1) / rf->sub_x[i];
    ph[i] = (h + rf->sub_y[i] - 1) / rf->sub_y[i];
    wb[i] = pw[i] * rf->n_comp[i] * bytes;
    stride[i] = wb[i] + 5;
    g.width = pw[i];
    g.height = ph[i];
    g.n_comp = rf->n_comp[i];
    g.depth = rf->depth;
    g.shift = rf->shift;
    src[i] = g_malloc ((size_t) stride[i] * ph[i]);
    dst[i] = g_malloc ((size_t) stride[i] * ph[i]);
    ref[i] = g_malloc ((size_t) stride[i] * ph[i]);
    fill_source (&g, src[i], stride[i], 0);
    memset (dst[i], GUARD, (size_t) stride[i] * ph[i]);
    planes[i] = (CuconvPlane) {
    src[i], dst[i], stride[i], stride[i], pw[i], ph[i], rf->n_comp[i],
          rf->sub_x[i], rf->sub_y[i], rf->depth, rf->shift};
    memcpy (planes[i].op, rf->op[i], CUCONV_MAX_COMP);
    planes[i].fill = 1u << (rf->depth - 1);
    whole[i] = planes[i];
    whole[i].dst = ref[i];
  }
  fail_unless (cuconv_reference_frame (whole, rf->n_planes, f) == 0);
  fail_unless (cuconv_reference_frame_regions (planes, rf->n_planes, f,
          regions) == 0);

  for (i = 0; i < rf->n_planes; i++) {
    const int bpp = rf->n_comp[i] * bytes;

    for (y = 0; y < ph[i]; y++) {
      const guint8 *d = dst[i] + (size_t) y * stride[i];

      if ((x = padding_written (d, wb[i], stride[i])) >= 0)
        fail ("%s %dx%d: padding written at byte %d of row %d of plane %d",
            rf->name, w, h, x, y, i);
      for (x = 0; x < pw[i]; x++) {
        gboolean in = regions->mode == CUCONV_REGION_FRAME ||
            naive_in_region (regions->rects, regions->n_rects, rf->sub_x[i],
            rf->sub_y[i], x, y);
        const guint8 *want;

        if (regions->mode == CUCONV_REGION_OUTSIDE)
          in = !in;
        want = (in ? ref[i] : src[i]) + (size_t) y * stride[i] + x * bpp;
        inside += in;
        if (memcmp (d + x * bpp, want, bpp) != 0)
          fail ("%s %dx%d mode %d kernel %d border %d, %d rects: plane %d "
              "sample (%d,%d) %s: not the %s", rf->name, w, h, regions->mode,
              s->kernel, s->border, regions->n_rects, i, x, y,
              in ? "filtered" : "kept", in ? "whole-frame reference" :
              "input");
      }
    }
    g_free (src[i]);
    g_free (dst[i]);
    g_free (ref[i]);
  }
  g_free (f);
  return inside;
}

/* Rectangle sets: n random ones (some overlapping, some outside, some
 * empty once clipped), or the special sets. */
static int
random_rects (CuconvRect * out, int n, int w, int h)
{
  int i, k = 0;

  for (i = 0; i < n; i++) {
    const long long x = (long long) (rnd () % (w + 8)) - 4;
    const long long y = (long long) (rnd () % (h + 8)) - 4;
    const long long rw = rnd () % (w / 2 + 2), rh = rnd () % (h / 2 + 2);

    k += cuconv_rect_clip (x, y, rw, rh, rnd () % 3, w, h, &out[k]);
  }
  return k;
}

GST_START_TEST (test_regions)
{
  static const struct
  {
    int w, h;
  } sizes[] = { {1, 1}, {3, 7}, {16, 9}, {33, 21} };
  const CuconvKernel kernels[] = { CUCONV_KERNEL_GAUSSIAN, CUCONV_KERNEL_BOX,
    CUCONV_KERNEL_SHARPEN, CUCONV_KERNEL_SOBEL, CUCONV_KERNEL_CUSTOM
  };
  CuconvRect rects[64];
  guint64 inside = 0, total = 0;
  int fi, si, k, b, m, set;

  rng_state = 1010;
  for (fi = 0; fi < (int) G_N_ELEMENTS (region_formats); fi++)
    for (si = 0; si < (int) G_N_ELEMENTS (sizes); si++)
      for (k = 0; k < (int) G_N_ELEMENTS (kernels); k++)
        for (b = 0; b < CUCONV_BORDER_N; b++)
          for (m = CUCONV_REGION_INSIDE; m <= CUCONV_REGION_OUTSIDE; m++)
            for (set = 0; set < 5; set++) {
              const int w = sizes[si].w, h = sizes[si].h;
              CuconvSettings s = settings (kernels[k], b, 2, 0.0);
              CuconvRegions regions = { m, rects, 0 };

              if (kernels[k] == CUCONV_KERNEL_CUSTOM)
                s.matrix_side = 3, s.matrix[4] = 2.0, s.matrix[1] = -0.5;
              switch (set) {
                case 0:        /* none */
                  break;
                case 1:        /* odd corners, 1x1 and the last pixel */
                  regions.n_rects = 0;
                  regions.n_rects += cuconv_rect_clip (1, 1, 1, 1, 0, w, h,
                      &rects[regions.n_rects]);
                  regions.n_rects += cuconv_rect_clip (w - 1, h - 1, 1, 1, 0,
                      w, h, &rects[regions.n_rects]);
                  regions.n_rects += cuconv_rect_clip (w / 2 | 1, 0, 3,
                      h / 2 | 1, 0, w, h, &rects[regions.n_rects]);
                  break;
                case 2:        /* the whole frame, twice */
                  regions.n_rects = cuconv_rect_clip (0, 0, w, h, 0, w, h,
                      &rects[0]);
                  rects[1] = rects[0];
                  regions.n_rects *= 2;
                  break;
                default:
                  regions.n_rects = random_rects (rects, set == 3 ? 4 : 40,
                      w, h);
                  break;
              }
              inside += check_regions_case (&region_formats[fi], w, h, &s,
                  &regions);
              total++;
            }
  /* the sets must have had samples of both kinds */
  fail_unless (inside > 0);
  GST_INFO ("%" G_GUINT64_FORMAT " region cases, %" G_GUINT64_FORMAT
      " filtered samples", total, inside);
}

GST_END_TEST;

/* The restore on its own: INSIDE with no rectangle copies the frame,
 * OUTSIDE with none and FRAME touch nothing; a 2-row frame of 5000
 * columns takes more than one of the restore's row chunks. */
GST_START_TEST (test_regions_restore)
{
  const int w = 5000, h = 2;
  guint8 *src = g_malloc (w * h), *dst = g_malloc (w * h);
  CuconvPlane p = { src, dst, w, w, w, h, 1, 1, 1, 8 };
  CuconvRect r[2] = { {4090, 1, 10, 1}, {4095, 0, 905, 1} };
  CuconvRegions regions = { CUCONV_REGION_OUTSIDE, r, 0 };
  int x;

  for (x = 0; x < w * h; x++)
    src[x] = x % 251;
  memset (dst, 7, w * h);
  cuconv_regions_restore (&p, 1, &regions);
  regions.mode = CUCONV_REGION_FRAME;
  regions.n_rects = 2;
  cuconv_regions_restore (&p, 1, &regions);
  for (x = 0; x < w * h; x++)
    fail_unless (dst[x] == 7);
  cuconv_regions_restore (&p, 1, NULL);

  regions.mode = CUCONV_REGION_OUTSIDE;
  cuconv_regions_restore (&p, 1, &regions);
  for (x = 0; x < w * h; x++) {
    const int px = x % w, py = x / w;
    const gboolean in = naive_in_region (r, 2, 1, 1, px, py);

    fail_unless (dst[x] == (in ? src[x] : 7), "byte %d", x);
  }
  memset (dst, 7, w * h);
  regions.mode = CUCONV_REGION_INSIDE;
  cuconv_regions_restore (&p, 1, &regions);
  for (x = 0; x < w * h; x++) {
    const gboolean in = naive_in_region (r, 2, 1, 1, x % w, x / w);

    fail_unless (dst[x] == (in ? 7 : src[x]), "byte %d", x);
  }
  memset (dst, 7, w * h);
  regions.n_rects = 0;
  cuconv_regions_restore (&p, 1, &regions);
  fail_unless (memcmp (dst, src, w * h) == 0);
  g_free (src);
  g_free (dst);
}

GST_END_TEST;

/* Soft regions, from docs/semantics.md alone ("Soft regions"): a
 * sample's depth in a box or ellipse, its weight, the largest over the
 * regions, the blend. */
static double
doc_depth (const CuconvBox * b, CuconvShape shape, int u, int v, int sx,
    int sy)
{
  if (shape == CUCONV_SHAPE_ELLIPSE) {
    const double a = 0.5 * ((double) b->x1 - (double) b->x0);
    const double c = 0.5 * ((double) b->y1 - (double) b->y0);
    const double mx = 0.5 * (double) b->x0 + 0.5 * (double) b->x1;
    const double my = 0.5 * (double) b->y0 + 0.5 * (double) b->y1;
    const double tx = ((u + 0.5) * sx - mx) / a, ty = ((v + 0.5) * sy - my) / c;

    return (1 - sqrt (tx * tx + ty * ty)) * MIN (a, c);
  } else {
    const double x0 = floor ((double) b->x0 / sx), x1 = ceil ((double) b->x1 / sx);
    const double y0 = floor ((double) b->y0 / sy), y1 = ceil ((double) b->y1 / sy);

    return MIN (MIN (u + 0.5 - x0, x1 - u - 0.5) * sx,
        MIN (v + 0.5 - y0, y1 - v - 0.5) * sy);
  }
}

static float
doc_weight (const CuconvRegions * r, int sx, int sy, int u, int v)
{
  float largest = 0;
  int i;

  for (i = 0; i < r->n_rects; i++) {
    const double d = doc_depth (&r->boxes[i], r->shape, u, v, sx, sy);
    double t;
    float w;

    if (d <= 0)
      continue;
    t = d / r->feather;
    w = r->feather == 0 || d >= r->feather ? 1.0f :
        (float) (t * t * (3 - 2 * t));
    largest = MAX (largest, w);
  }
  return r->mode == CUCONV_REGION_OUTSIDE ? (float) (1.0 - largest) :
      largest;
}

/* The worked example of the document: 100 in, 200 filtered, a 20x20
 * region with a feather of 4; and its 4:2:0 chroma plane. */
GST_START_TEST (test_regions_soft_example)
{
  const int w = 64, h = 48;
  guint8 *src = g_malloc (w * h), *dst = g_malloc (w * h);
  CuconvPlane p = { src, dst, w, w, w, h, 1, 1, 1, 8 };
  const CuconvRect rect = { 10, 10, 20, 20 };
  const CuconvBox box = { 10, 10, 30, 30 };
  const CuconvRegions r = { CUCONV_REGION_INSIDE, &rect, 1, &box,
    CUCONV_SHAPE_BOX, 4.0
  };
  const guint8 row20[] = { 100, 104, 132, 168, 196, 200, 200, 200, 200, 200,
    200, 200, 200, 200, 200, 200, 200, 196, 168, 132, 104, 100
  };
  guint x;

  memset (src, 100, w * h);
  memset (dst, 200, w * h);
  cuconv_regions_restore (&p, 1, &r);
  for (x = 0; x < G_N_ELEMENTS (row20); x++)
    fail_unless_equals_int (dst[20 * w + 9 + x], row20[x]);
  /* the chroma plane: the box is [5, 15) there */
  p.width = w / 2;
  p.height = h / 2;
  p.sub_x = p.sub_y = 2;
  memset (dst, 200, w * h);
  cuconv_regions_restore (&p, 1, &r);
  fail_unless_equals_int (dst[10 * w + 4], 100);
  fail_unless_equals_int (dst[10 * w + 5], 116);
  g_free (src);
  g_free (dst);
}

GST_END_TEST;

/* A plane of random geometry, 1 to max_w - 1 by 1 to max_h - 1 samples of
 * 1 to 4 components, 8, 10 (with P010's shift or without) or 16 bits,
 * subsampled by 1 or 2 each way, rows padded by 0 to 4 bytes: src random
 * bytes, dst allocated (the caller frees both). */
static CuconvPlane
random_plane (GRand * rand, int max_w, int max_h)
{
  CuconvPlane p = { 0 };
  guint8 *src;
  int i;

  p.width = g_rand_int_range (rand, 1, max_w);
  p.height = g_rand_int_range (rand, 1, max_h);
  p.n_comp = g_rand_int_range (rand, 1, 5);
  p.depth = (int[]) {8, 10, 16}[g_rand_int_range (rand, 0, 3)];
  p.shift = p.depth == 10 && g_rand_boolean (rand) ? 6 : 0;
  p.sub_x = g_rand_int_range (rand, 1, 3);
  p.sub_y = g_rand_int_range (rand, 1, 3);
  p.src_stride = p.dst_stride = p.width * p.n_comp *
      cuconv_plane_sample_bytes (&p) + g_rand_int_range (rand, 0, 5);
  src = g_malloc (p.src_stride * p.height);
  for (i = 0; i < p.src_stride * p.height; i++)
    src[i] = g_rand_int (rand);
  p.src = src;
  p.dst = g_malloc (p.dst_stride * p.height);
  return p;
}

/* Random soft regions on planes of 1 to 4 components, 8 and 16 bits
 * (P010's shift too), subsampled or not, against the document's
 * formulas sample by sample. */
GST_START_TEST (test_regions_soft)
{
  GRand *rand = g_rand_new_with_seed (0x50f7);
  int round, checked_between = 0;

  for (round = 0; round < 400; round++) {
    CuconvPlane p = random_plane (rand, 70, 50);
    const int w = p.width, h = p.height, nc = p.n_comp, depth = p.depth;
    const int shift = p.shift, sx = p.sub_x, sy = p.sub_y;
    const int bytes = cuconv_plane_sample_bytes (&p);
    const int stride = (int) p.src_stride;
    const int n = g_rand_int_range (rand, 1, 5);
    const guint8 *src = p.src;
    guint8 *dst = p.dst, *filtered = g_malloc (stride * h);
    CuconvRect rects[4];
    CuconvBox boxes[4];
    CuconvRegions r = { g_rand_boolean (rand) ? CUCONV_REGION_INSIDE :
      CUCONV_REGION_OUTSIDE, rects, 0, boxes,
      g_rand_boolean (rand) ? CUCONV_SHAPE_ELLIPSE : CUCONV_SHAPE_BOX,
      (double[]) {0, 0.5, 3.7, 40}[g_rand_int_range (rand, 0, 4)]
    };
    int i, u, v, c;

    for (i = 0; i < stride * h; i++)
      filtered[i] = g_rand_int (rand);
    for (i = 0; i < n; i++) {
      const long long x = g_rand_int_range (rand, -20, w * sx + 10);
      const long long y = g_rand_int_range (rand, -20, h * sy + 10);
      const long long bw = g_rand_int_range (rand, 1, 60);
      const long long bh = g_rand_int_range (rand, 1, 60);

      if (cuconv_rect_clip (x, y, bw, bh, 0, w * sx, h * sy, &rects[r.n_rects])) {
        boxes[r.n_rects] = (CuconvBox) {
        x, y, x + bw, y + bh};
        r.n_rects++;
      }
    }
    memcpy (dst, filtered, stride * h);
    cuconv_regions_restore (&p, 1, &r);
    for (v = 0; v < h; v++)
      for (u = 0; u < w; u++) {
        const float wt = doc_weight (&r, sx, sy, u, v);

        for (c = 0; c < nc; c++) {
          const int k = v * stride + (u * nc + c) * bytes;
          const unsigned sw = bytes == 1 ? src[k] : src[k] | src[k + 1] << 8;
          const unsigned fw = bytes == 1 ? filtered[k] :
              filtered[k] | filtered[k + 1] << 8;
          const unsigned out = bytes == 1 ? dst[k] : dst[k] | dst[k + 1] << 8;
          unsigned want;

          if (wt <= 0) {
            want = sw;
          } else if (wt >= 1) {
            want = fw;
          } else {
            /* the samples without the bits outside them */
            const unsigned mask = (1u << depth) - 1;
            const float in = (float) (sw >> shift & mask);
            const float f = (float) (fw >> shift & mask);

            want = cuconv_round_sat (in + wt * (f - in),
                (1u << depth) - 1) << shift;
            checked_between++;
          }
          fail_unless (out == want, "round %d (%dx%d, %d comp, depth %d, "
              "sub %dx%d, %s, %s, feather %g): (%d, %d) comp %d is %u, not "
              "%u (weight %g)", round, w, h, nc, depth, sx, sy,
              r.mode == CUCONV_REGION_INSIDE ? "inside" : "outside",
              r.shape == CUCONV_SHAPE_BOX ? "box" : "ellipse", r.feather, u,
              v, c, out, want, wt);
        }
      }
    g_free ((guint8 *) src);
    g_free (dst);
    g_free (filtered);
  }
  fail_unless (checked_between > 1000);
  g_rand_free (rand);
}

GST_END_TEST;

/* Region-relative filters, from docs/semantics.md alone ("Strength that
 * follows the region"): each region's gaussian of its own sigma computed
 * for the whole frame, and at each sample the region of the largest
 * weight, then of the largest sigma, blended by that weight. */
typedef struct
{
  CuconvBorder border;
} RelativeData;

static void
relative_gaussian (CuconvFilter * f, double sigma, const CuconvBox * box,
    void *data)
{
  const RelativeData *d = data;
  CuconvSettings s = settings (CUCONV_KERNEL_GAUSSIAN, d->border, 0, sigma);

  s.sigma_y = sigma;
  cuconv_filter_init (f, &s);
}

/* A mosaic of blocks of `side` on the grid of the region's box. */
static void
relative_pixelate (CuconvFilter * f, double side, const CuconvBox * box,
    void *data)
{
  CuconvSettings s = settings (CUCONV_KERNEL_PIXELATE, CUCONV_BORDER_CLAMP,
      0, 0.0);
  int i;

  s.block_size = (unsigned) side;
  cuconv_filter_init (f, &s);
  for (i = 0; i < CUCONV_MAX_SUBSAMPLE; i++) {
    f->block_x0[i] = box->x0;
    f->block_y0[i] = box->y0;
  }
}

static float
doc_region_weight (const CuconvRegions * r, int i, int sx, int sy, int u,
    int v)
{
  const double d = doc_depth (&r->boxes[i], r->shape, u, v, sx, sy);
  const double t = d / r->feather;

  if (!cuconv_regions_soft (r))
    return naive_in_region (&r->rects[i], 1, sx, sy, u, v) ? 1.0f : 0.0f;
  if (d <= 0)
    return 0.0f;
  return r->feather == 0 || d >= r->feather ? 1.0f :
      (float) (t * t * (3 - 2 * t));
}

static unsigned
word_of (const guint8 * p, int bytes)
{
  return bytes == 1 ? p[0] : p[0] | (unsigned) p[1] << 8;
}

/* One case: cuconv_reference_frame_regions () against the document's
 * definition, every sample of every plane.  Returns the samples some
 * region reached. */
static guint64
check_relative_case (const RegionFormat * rf, int w, int h, CuconvBorder b,
    const CuconvRegions * r)
{
  CuconvPlane planes[3], whole[3];
  guint8 *src[3], *dst[3], *ref[3][4];
  int stride[3], ph[3], pw[3];
  CuconvFilter *f = g_new (CuconvFilter, 1);
  const int bytes = rf->depth > 8 ? 2 : 1;
  const unsigned max = (1u << rf->depth) - 1;
  guint64 reached = 0;
  int i, k, x, y, c;

  g_assert (r->n_rects <= 4);
  for (i = 0; i < rf->n_planes; i++) {
    Geometry g = { 0 };

    pw[i] = (w + rf->sub_x[i] - 1) / rf->sub_x[i];
    ph[i] = (h + rf->sub_y[i] - 1) / rf->sub_y[i];
    stride[i] = pw[i] * rf->n_comp[i] * bytes + 3;
    g.width = pw[i];
    g.height = ph[i];
    g.n_comp = rf->n_comp[i];
    g.depth = rf->depth;
    g.shift = rf->shift;
    src[i] = g_malloc ((size_t) stride[i] * ph[i]);
    dst[i] = g_malloc0 ((size_t) stride[i] * ph[i]);
    fill_source (&g, src[i], stride[i], 0);
    planes[i] = (CuconvPlane) {
    src[i], dst[i], stride[i], stride[i], pw[i], ph[i], rf->n_comp[i],
          rf->sub_x[i], rf->sub_y[i], rf->depth, rf->shift};
    memcpy (planes[i].op, rf->op[i], CUCONV_MAX_COMP);
    planes[i].fill = 1u << (rf->depth - 1);
  }
  /* each region's filter over the whole frame */
  for (k = 0; k < r->n_rects; k++) {
    r->make_filter (f, r->strength[k], &r->boxes[k], r->make_data);
    for (i = 0; i < rf->n_planes; i++) {
      ref[i][k] = g_malloc ((size_t) stride[i] * ph[i]);
      whole[i] = planes[i];
      whole[i].dst = ref[i][k];
    }
    fail_unless (cuconv_reference_frame (whole, rf->n_planes, f) == 0);
  }
  fail_unless (cuconv_reference_frame_regions (planes, rf->n_planes, NULL,
          r) == 0);

  for (i = 0; i < rf->n_planes; i++) {
    const int bpp = rf->n_comp[i] * bytes;

    for (y = 0; y < ph[i]; y++)
      for (x = 0; x < pw[i]; x++) {
        const size_t at = (size_t) y * stride[i] + (size_t) x * bpp;
        float wk = 0.0f;
        int best = -1;

        for (k = 0; k < r->n_rects; k++) {
          const float wt = doc_region_weight (r, k, rf->sub_x[i],
              rf->sub_y[i], x, y);

          /* the largest weight, then strength, then the later region */
          if (wt > 0 && (best < 0 || wt > wk || (wt == wk &&
                      r->strength[k] >= r->strength[best]))) {
            best = k;
            wk = wt;
          }
        }
        reached += best >= 0;
        for (c = 0; c < rf->n_comp[i]; c++) {
          const guint8 *sp = src[i] + at + c * bytes;
          const unsigned out = word_of (dst[i] + at + c * bytes, bytes);
          unsigned want;

          if (best < 0) {
            want = word_of (sp, bytes);
          } else {
            const unsigned fw = word_of (ref[i][best] + at + c * bytes, bytes);
            const int sh = bytes == 1 ? 0 : rf->shift;
            const float in = (float) (word_of (sp, bytes) >> sh & max);

            want = wk >= 1.0f ? fw : cuconv_round_sat (in + wk *
                ((float) (fw >> sh) - in), max) << sh;
          }
          fail_unless (out == want, "%s %dx%d border %d, %d regions, %s, "
              "feather %g: plane %d (%d, %d) comp %d is %u, not %u (region "
              "%d, weight %g)", rf->name, w, h, b, r->n_rects,
              r->shape == CUCONV_SHAPE_BOX ? "box" : "ellipse", r->feather,
              i, x, y, c, out, want, best, wk);
        }
      }
  }
  for (i = 0; i < rf->n_planes; i++) {
    for (k = 0; k < r->n_rects; k++)
      g_free (ref[i][k]);
    g_free (src[i]);
    g_free (dst[i]);
  }
  g_free (f);
  return reached;
}

/* Random regions with random sigmas (truncated and untruncated, some
 * equal) or mosaics on their boxes' grids (some of equal blocks), hard
 * and soft, every border, the region formats, frames from 1x1 to 70x50:
 * crops that reach an edge, cover the frame or not. */
GST_START_TEST (test_regions_relative)
{
  GRand *rand = g_rand_new_with_seed (0x5ca1e);
  guint64 reached = 0;
  int round;

  for (round = 0; round < 160; round++) {
    const RegionFormat *rf =
        &region_formats[round % G_N_ELEMENTS (region_formats)];
    const int w = g_rand_int_range (rand, 1, 71);
    const int h = g_rand_int_range (rand, 1, 51);
    const int n = g_rand_int_range (rand, 1, 5);
    const double sigmas[] = { 0.05, 0.7, 1.5, 3, 3, 6.4, 25 };
    const double sides[] = { 1, 2, 3, 3, 5, 8, 64 };
    const gboolean pixelate = round % 3 == 2;
    CuconvRect rects[4];
    CuconvBox boxes[4];
    double strength[4];
    RelativeData data = { (CuconvBorder) (round / 7 % CUCONV_BORDER_N) };
    CuconvRegions r = { CUCONV_REGION_INSIDE, rects, 0, boxes,
      g_rand_boolean (rand) ? CUCONV_SHAPE_ELLIPSE : CUCONV_SHAPE_BOX,
      (double[]) {0, 0, 2.5, 9}[g_rand_int_range (rand, 0, 4)],
      strength, pixelate ? relative_pixelate : relative_gaussian, &data
    };
    int i;

    for (i = 0; i < n; i++) {
      const long long x = g_rand_int_range (rand, -10, w + 5);
      const long long y = g_rand_int_range (rand, -10, h + 5);
      const long long bw = g_rand_int_range (rand, 1, w + 10);
      const long long bh = g_rand_int_range (rand, 1, h + 10);

      if (cuconv_rect_clip (x, y, bw, bh, 0, w, h, &rects[r.n_rects])) {
        boxes[r.n_rects] = (CuconvBox) {
        x, y, x + bw, y + bh};
        strength[r.n_rects] = (pixelate ? sides : sigmas)[g_rand_int_range
            (rand, 0, G_N_ELEMENTS (sigmas))];
        r.n_rects++;
      }
    }
    if (r.n_rects == 0)
      continue;
    reached += check_relative_case (rf, w, h, data.border, &r);
  }
  fail_unless (reached > 20000, "only %" G_GUINT64_FORMAT " samples reached",
      reached);
  g_rand_free (rand);
}

GST_END_TEST;

/* The document's example: sigma 4 in the first box, sigma 6 in the
 * second and in the overlap, the input elsewhere. */
GST_START_TEST (test_regions_relative_example)
{
  const int w = 200, h = 200;
  guint8 *src = g_malloc (w * h), *dst = g_malloc (w * h);
  guint8 *g4 = g_malloc (w * h), *g6 = g_malloc (w * h);
  RelativeData data = { CUCONV_BORDER_CLAMP };
  const CuconvRect rects[] = { {10, 10, 40, 40}, {30, 30, 100, 60} };
  const CuconvBox boxes[] = { {10, 10, 50, 50}, {30, 30, 130, 90} };
  double strength[2];
  const double scale = 0.1;
  CuconvRegions r = { CUCONV_REGION_INSIDE, rects, 2, boxes,
    CUCONV_SHAPE_BOX, 0, strength, relative_gaussian, &data
  };
  CuconvPlane p = { src, dst, w, w, w, h, 1, 1, 1, 8 };
  CuconvFilter *f = g_new (CuconvFilter, 1);
  int i;

  for (i = 0; i < 2; i++)
    strength[i] = scale * MIN (boxes[i].x1 - boxes[i].x0,
        boxes[i].y1 - boxes[i].y0);
  fail_unless (strength[0] == 4.0 && strength[1] == 6.0);
  /* a ramp with noise: the two blurs differ */
  rng_state = 4;
  for (i = 0; i < w * h; i++)
    src[i] = (i % w) + rnd () % 50;
  relative_gaussian (f, 4.0, NULL, &data);
  fail_unless_equals_int (f->x[0].radius, 12);
  p.dst = g4;
  cuconv_reference_frame (&p, 1, f);
  relative_gaussian (f, 6.0, NULL, &data);
  fail_unless_equals_int (f->x[0].radius, 18);
  p.dst = g6;
  cuconv_reference_frame (&p, 1, f);
  p.dst = dst;
  fail_unless (cuconv_reference_frame_regions (&p, 1, NULL, &r) == 0);
  /* the first box only, the overlap, the second only, outside */
  fail_unless_equals_int (dst[15 * w + 15], g4[15 * w + 15]);
  fail_unless_equals_int (dst[40 * w + 40], g6[40 * w + 40]);
  fail_unless_equals_int (dst[80 * w + 120], g6[80 * w + 120]);
  fail_unless_equals_int (dst[100 * w + 20], src[100 * w + 20]);
  fail_unless (g4[15 * w + 15] != src[15 * w + 15] &&
      g4[40 * w + 40] != g6[40 * w + 40]);
  g_free (src);
  g_free (dst);
  g_free (g4);
  g_free (g6);
  g_free (f);
}

GST_END_TEST;

/* Pixelate from docs/semantics.md alone ("Pixelate"): a sample's block
 * on its plane, the mean of the block's samples found by scanning the
 * whole plane, rounded half up; random planes of 1 to 4 components, 8,
 * 10 (P010's shift too) and 16 bits, subsampled or not, copied and filled
 * components, blocks of 1 to 40 on grids anywhere. */
GST_START_TEST (test_pixelate)
{
  GRand *rand = g_rand_new_with_seed (0x9e1a);
  int round, checked = 0;

  for (round = 0; round < 300; round++) {
    CuconvPlane p = random_plane (rand, 40, 30);
    const int w = p.width, h = p.height, nc = p.n_comp, depth = p.depth;
    const int shift = p.shift, sx = p.sub_x, sy = p.sub_y;
    const int bytes = cuconv_plane_sample_bytes (&p);
    const int stride = (int) p.src_stride;
    const guint8 *src = p.src, *dst = p.dst;
    const int block = (int[]) {1, 2, 3, 4, 7, 16, 40}[g_rand_int_range (rand,
          0, 7)];
    const long long x0 = g_rand_int_range (rand, -50, 50);
    const long long y0 = g_rand_int_range (rand, -50, 50);
    CuconvSettings st = settings (CUCONV_KERNEL_PIXELATE, CUCONV_BORDER_CLAMP,
        0, 0.0);
    CuconvFilter *f = g_new (CuconvFilter, 1);
    int u, v, c, a, b;

    for (c = 0; c < nc; c++)
      p.op[c] = g_rand_int_range (rand, 0, 5) == 0 ? CUCONV_COMP_COPY :
          g_rand_int_range (rand, 0, 5) == 0 ? CUCONV_COMP_FILL :
          CUCONV_COMP_FILTER;
    p.fill = 1u << (depth - 1);
    st.block_size = block;
    cuconv_filter_init (f, &st);
    fail_unless (f->combine == CUCONV_COMBINE_PIXELATE && f->block == block);
    f->block_x0[sx - 1] = x0;
    f->block_y0[sy - 1] = y0;
    fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
    for (v = 0; v < h; v++)
      for (u = 0; u < w; u++) {
        /* the block of the sample's first luma pixel */
        const long long bu = (long long) floor ((double) (u * sx - x0) / block);
        const long long bv = (long long) floor ((double) (v * sy - y0) / block);

        for (c = 0; c < nc; c++) {
          const int k = v * stride + (u * nc + c) * bytes;
          const unsigned out = word_of (dst + k, bytes);
          unsigned long long sum = 0, n = 0;
          unsigned want;

          for (b = 0; b < h; b++)
            for (a = 0; a < w; a++)
              if ((long long) floor ((double) (a * sx - x0) / block) == bu &&
                  (long long) floor ((double) (b * sy - y0) / block) == bv) {
                sum += word_of (src + b * stride + (a * nc + c) * bytes,
                    bytes) >> (bytes == 1 ? 0 : shift) & ((1u << depth) - 1);
                n++;
              }
          if (p.op[c] == CUCONV_COMP_COPY)
            want = word_of (src + k, bytes);
          else if (p.op[c] == CUCONV_COMP_FILL)
            want = p.fill << (bytes == 1 ? 0 : shift);
          else
            want = (unsigned) ((sum + n / 2.0) / n) << (bytes == 1 ? 0 :
                shift);
          fail_unless (out == want, "round %d (%dx%d, %d comp, depth %d, "
              "sub %dx%d, block %d at %lld,%lld): (%d, %d) comp %d is %u, "
              "not %u (%llu samples)", round, w, h, nc, depth, sx, sy, block,
              x0, y0, u, v, c, out, want, n);
          checked++;
        }
      }
    g_free ((guint8 *) src);
    g_free ((guint8 *) dst);
    g_free (f);
  }
  fail_unless (checked > 50000);
  g_rand_free (rand);
}

GST_END_TEST;

/* The document's pixelate example. */
GST_START_TEST (test_pixelate_example)
{
  /* 6x2 gray, block 4 on the frame's grid: [0, 4) and [4, 6) */
  const guint8 src[] = { 10, 20, 30, 40, 50, 61, 11, 21, 31, 41, 51, 60 };
  const guint8 want[] = { 26, 26, 26, 26, 56, 56, 26, 26, 26, 26, 56, 56 };
  guint8 dst[12];
  CuconvPlane p = { src, dst, 6, 6, 6, 2, 1, 1, 1, 8 };
  CuconvSettings st = settings (CUCONV_KERNEL_PIXELATE, CUCONV_BORDER_CLAMP,
      0, 0.0);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  int i;

  st.block_size = 4;
  cuconv_filter_init (f, &st);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
  for (i = 0; i < 12; i++)
    fail_unless_equals_int (dst[i], want[i]);
  st.block_size = 1;
  fail_unless (cuconv_settings_is_identity (&st));
  g_free (f);
}

GST_END_TEST;

/* Non-local means from docs/semantics.md alone ("Non-local means"), in
 * double: each sample the mean of its search window's samples, weighted
 * exp (-(mean squared patch difference) / (2 sr^2)), read through the
 * border; the reference (float) within ±1.  Random planes, every border,
 * search and patch radii 0 to 3, subsampled planes (the radii halved),
 * copied and filled components. */
static unsigned
doc_nl_sample (const CuconvPlane * p, CuconvBorder b, int x, int y, int c)
{
  const int bytes = cuconv_plane_sample_bytes (p);
  const int xi = cuconv_border_index (b, x, p->width);
  const int yi = cuconv_border_index (b, y, p->height);

  if (xi < 0 || yi < 0)
    return 0;
  return word_of (p->src + (size_t) yi * p->src_stride + (size_t) (xi *
          p->n_comp + c) * bytes, bytes) >> (bytes == 1 ? 0 : p->shift) &
      ((1u << (p->depth > 8 ? p->depth : 8)) - 1);
}

GST_START_TEST (test_nlmeans)
{
  GRand *rand = g_rand_new_with_seed (0x71e4);
  int round, checked = 0, off = 0;

  for (round = 0; round < 120; round++) {
    CuconvPlane p = random_plane (rand, 24, 18);
    const int bytes = cuconv_plane_sample_bytes (&p);
    const int shift = bytes == 1 ? 0 : p.shift;
    const CuconvBorder b = (CuconvBorder) (round % CUCONV_BORDER_N);
    CuconvSettings st = settings (CUCONV_KERNEL_NLMEANS, b,
        g_rand_int_range (rand, 0, 4), 0.0);
    CuconvFilter *f = g_new (CuconvFilter, 1);
    const double sr = ldexp ((double[]) {3, 12, 40}[round % 3],
        (p.depth > 8 ? p.depth : 8) - 8);
    /* the radii on this plane: halved, rounded up, where subsampled */
    int rx, ry, px, py, u, v, c, i, j, di, dj;

    st.patch_radius = g_rand_int_range (rand, 0, 4);
    st.sigma_range = sr / ldexp (1.0, (p.depth > 8 ? p.depth : 8) - 8);
    for (c = 0; c < p.n_comp; c++)
      p.op[c] = g_rand_int_range (rand, 0, 6) == 0 ? CUCONV_COMP_COPY :
          g_rand_int_range (rand, 0, 6) == 0 ? CUCONV_COMP_FILL :
          CUCONV_COMP_FILTER;
    p.fill = 1u << (p.depth - 1);
    cuconv_filter_init (f, &st);
    fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
    rx = ((int) st.radius + p.sub_x - 1) / p.sub_x;
    ry = ((int) st.radius + p.sub_y - 1) / p.sub_y;
    px = ((int) st.patch_radius + p.sub_x - 1) / p.sub_x;
    py = ((int) st.patch_radius + p.sub_y - 1) / p.sub_y;
    for (v = 0; v < p.height; v++)
      for (u = 0; u < p.width; u++)
        for (c = 0; c < p.n_comp; c++) {
          const size_t at = (size_t) v * p.dst_stride + (size_t) (u *
              p.n_comp + c) * bytes;
          const unsigned out = word_of (p.dst + at, bytes);
          double num = 0, den = 0;
          float fnum = 0, fden = 0;
          const float k = (float) (1.0 / (2.0 * sr * sr * (2 * px + 1) *
                  (2 * py + 1)));
          unsigned want;

          if (p.op[c] != CUCONV_COMP_FILTER) {
            want = p.op[c] == CUCONV_COMP_COPY ? word_of (p.src + at, bytes)
                : p.fill << shift;
            fail_unless (out == want);
            continue;
          }
          for (dj = -ry; dj <= ry; dj++)
            for (di = -rx; di <= rx; di++) {
              const unsigned q = doc_nl_sample (&p, b, u + di, v + dj, c);
              guint64 d = 0;
              double w;
              float fw;

              for (j = -py; j <= py; j++)
                for (i = -px; i <= px; i++) {
                  const gint64 e =
                      (gint64) doc_nl_sample (&p, b, u + i, v + j, c) -
                      (gint64) doc_nl_sample (&p, b, u + di + i, v + dj + j,
                      c);

                  d += (guint64) (e * e);
                }
              /* in double, the mean squared difference */
              w = exp (-(double) d / ((2 * px + 1) * (2 * py + 1)) /
                  (2 * sr * sr));
              num += w * q;
              den += w;
              /* the document's float32 steps */
              fw = expf (-(float) d * k);
              fnum += fw * (float) q;
              fden += fw;
            }
          fail_unless_equals_int (out >> shift,
              cuconv_round_sat (fnum / fden, (1u << p.depth) - 1));
          want = (unsigned) floor (num / den + 0.5);
          fail_unless (ABS ((int) (out >> shift) - (int) want) <= 1,
              "round %d (%dx%d, %d comp, depth %d, sub %dx%d, border %d, "
              "radius %u, patch %u, sr %g): (%d, %d) comp %d is %u, not %u",
              round, p.width, p.height, p.n_comp, p.depth, p.sub_x, p.sub_y,
              b, st.radius, st.patch_radius, sr, u, v, c, out >> shift,
              want);
          fail_unless ((out & ((1u << shift) - 1)) == 0);
          off += (out >> shift) != want;
          checked++;
        }
    g_free ((guint8 *) p.src);
    g_free (p.dst);
    g_free (f);
  }
  fail_unless (checked > 10000 && off < checked / 100, "%d checked, %d off "
      "by one", checked, off);
  g_rand_free (rand);
}

GST_END_TEST;

/* The document's example: a step of 10 and 80, radius 1, patch 0,
 * sigma-range 20. */
GST_START_TEST (test_nlmeans_example)
{
  guint8 src[12 * 5], dst[12 * 5];
  CuconvPlane p = { src, dst, 12, 12, 12, 5, 1, 1, 1, 8 };
  CuconvSettings st = settings (CUCONV_KERNEL_NLMEANS, CUCONV_BORDER_CLAMP,
      1, 0.0);
  CuconvFilter *f = g_new (CuconvFilter, 1);
  int i;

  for (i = 0; i < 12 * 5; i++)
    src[i] = i % 12 < 6 ? 10 : 80;
  st.sigma_range = 20.0;
  cuconv_filter_init (f, &st);
  fail_unless (cuconv_reference_frame (&p, 1, f) == 0);
  for (i = 0; i < 12 * 5; i++)
    fail_unless_equals_int (dst[i], src[i]);
  st.radius = 0;
  fail_unless (cuconv_settings_is_identity (&st));
  g_free (f);
}

GST_END_TEST;

static Suite *
reference_suite (void)
{
  Suite *s = suite_create ("reference");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_known_box);
  tcase_add_test (tc, test_known_edges);
  tcase_add_test (tc, test_known_words);
  tcase_add_test (tc, test_reference_plane);
  tcase_add_test (tc, test_small_all_radii);
  tcase_add_test (tc, test_large);
  tcase_add_test (tc, test_sigma);
  tcase_add_test (tc, test_kernel_types);
  tcase_add_test (tc, test_anisotropic);
  tcase_add_test (tc, test_custom_separable);
  tcase_add_test (tc, test_custom_matrix);
  tcase_add_test (tc, test_component_ops);
  tcase_add_test (tc, test_untruncated);
  tcase_add_test (tc, test_wide_radii);
  tcase_add_test (tc, test_rect_clip);
  tcase_add_test (tc, test_bilateral);
  tcase_add_test (tc, test_bilateral_known);
  tcase_add_test (tc, test_temporal_known);
  tcase_add_test (tc, test_temporal_sequence);
  tcase_add_test (tc, test_canny_known);
  tcase_add_test (tc, test_rect_on_plane);
  tcase_add_test (tc, test_regions);
  tcase_add_test (tc, test_regions_restore);
  tcase_add_test (tc, test_regions_soft_example);
  tcase_add_test (tc, test_regions_soft);
  tcase_add_test (tc, test_regions_relative);
  tcase_add_test (tc, test_regions_relative_example);
  tcase_add_test (tc, test_pixelate);
  tcase_add_test (tc, test_pixelate_example);
  tcase_add_test (tc, test_nlmeans);
  tcase_add_test (tc, test_nlmeans_example);
  return s;
}

GST_CHECK_MAIN (reference);
