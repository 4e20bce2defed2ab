/* gst-cudaconvolve: filter coefficients, computed here once for the CPU
 * reference and the CUDA kernels alike (docs/semantics.md, section 2).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "cuconv.h"

int
cuconv_settings_is_identity (const CuconvSettings * s)
{
  switch (s->kernel) {
    case CUCONV_KERNEL_GAUSSIAN:
    case CUCONV_KERNEL_BOX:
      return s->radius == 0 && s->sigma <= 0.0 && s->sigma_y <= 0.0;
    case CUCONV_KERNEL_BILATERAL:
      /* a range sigma of 0 averages equal samples only */
      return (s->radius == 0 && s->sigma <= 0.0 && s->sigma_y <= 0.0)
          || s->sigma_range <= 0.0;
    case CUCONV_KERNEL_SHARPEN:
      return (s->radius == 0 && s->sigma <= 0.0 && s->sigma_y <= 0.0)
          || s->amount == 0.0;
    case CUCONV_KERNEL_CUSTOM:
      return s->matrix_side <= 0 && s->custom_x_len <= 0
          && s->custom_y_len <= 0;
    case CUCONV_KERNEL_NLMEANS:
      /* a window of one patch, or weights for equal patches only */
      return s->radius == 0 || s->sigma_range <= 0.0;
    case CUCONV_KERNEL_PIXELATE:
      /* blocks of one pixel are the pixels themselves */
      return s->block_size <= 1;
    default:
      /* sobel and laplacian always change the picture */
      return 0;
  }
}

/* ceil (3 sigma): at most 768 for sigma up to CUCONV_MAX_SIGMA */
static int
radius_from_sigma (double sigma)
{
  int r = (int) ceil (3.0 * sigma);

  return r > CUCONV_MAX_RADIUS ? CUCONV_MAX_RADIUS : r;
}

int
cuconv_settings_untruncated (const CuconvSettings * s)
{
  const double sigma = s->sigma > s->sigma_y ? s->sigma : s->sigma_y;

  return s->radius == 0 && (s->kernel == CUCONV_KERNEL_GAUSSIAN
      || s->kernel == CUCONV_KERNEL_SHARPEN)
      && radius_from_sigma (sigma) > CUCONV_TRUNCATED_MAX_RADIUS;
}

/* The bilateral costs (2r + 1)^2 taps a sample: its window is cut to
 * CUCONV_MAX_BILATERAL_RADIUS; Canny's smoothing to
 * CUCONV_MAX_CANNY_RADIUS. */
static int
radius_cut (const CuconvSettings * s, int r)
{
  if (s->kernel == CUCONV_KERNEL_CANNY && r > CUCONV_MAX_CANNY_RADIUS)
    return CUCONV_MAX_CANNY_RADIUS;
  return s->kernel == CUCONV_KERNEL_BILATERAL
      && r > CUCONV_MAX_BILATERAL_RADIUS ? CUCONV_MAX_BILATERAL_RADIUS : r;
}

/* OpenCV's rule for an aperture of 2r + 1, as cv::getGaussianKernel */
static double
sigma_from_radius (int r)
{
  return 0.3 * (r - 1) + 0.8;
}

void
cuconv_settings_resolve (const CuconvSettings * s, int *radius, double *sigma)
{
  int r = (int) s->radius;
  double sg = s->sigma;

  if (r == 0 && sg > 0.0 && !cuconv_settings_untruncated (s))
    r = radius_from_sigma (sg);
  /* a derivative needs neighbours: the defaults are the 3x3 operators */
  if (r == 0 && (s->kernel == CUCONV_KERNEL_SOBEL
          || s->kernel == CUCONV_KERNEL_LAPLACIAN))
    r = 1;
  if (sg <= 0.0)
    sg = sigma_from_radius (r);

  *radius = radius_cut (s, r);
  *sigma = sg;
}

void
cuconv_settings_resolve_y (const CuconvSettings * s, int *radius, double *sigma)
{
  int r;
  double sg;

  if (s->sigma_y <= 0.0) {
    cuconv_settings_resolve (s, radius, sigma);
    return;
  }
  if (s->radius > 0)
    r = (int) s->radius;
  else if (cuconv_settings_untruncated (s))
    r = 0;
  else
    r = radius_from_sigma (s->sigma_y);
  sg = s->sigma_y;

  *radius = radius_cut (s, r);
  *sigma = sg;
}

/* The unnormalised gaussian g[i + r] = exp (-i^2 / (2 sigma^2)), the one
 * place every gaussian-based set of taps starts from. */
static void
gaussian_weights (double *g, int r, double sigma)
{
  int i;

  for (i = -r; i <= r; i++)
    g[i + r] = exp (-(double) (i * i) / (2.0 * sigma * sigma));
}

/* Rounds w (2 r + 1 doubles) to float once, scaled by 1 / div. */
static void
taps_store (CuconvTaps * t, const double *w, double div)
{
  int i;

  for (i = 0; i <= 2 * t->radius; i++)
    t->w[i] = (float) (w[i] / div);
}

static void
taps_gaussian (CuconvTaps * t, double sigma)
{
  double g[CUCONV_MAX_TAPS], sum = 0.0;
  int i;

  gaussian_weights (g, t->radius, sigma);
  for (i = 0; i <= 2 * t->radius; i++)
    sum += g[i];
  taps_store (t, g, sum);
}

static void
taps_box (CuconvTaps * t)
{
  int i, n = 2 * t->radius + 1;

  for (i = 0; i < n; i++)
    t->w[i] = (float) (1.0 / n);
}

/* Sobel's smoothing S (sum 4) or derivative D (sum i D[i] = 2), so that a
 * ramp of slope 1 gives 8 at every radius, as the 3x3 operator does. */
static void
taps_sobel (CuconvTaps * t, double sigma, int derivative)
{
  static const float smooth3[] = { 1.0f, 2.0f, 1.0f };
  static const float deriv3[] = { -1.0f, 0.0f, 1.0f };
  double g[CUCONV_MAX_TAPS], w[CUCONV_MAX_TAPS], sum = 0.0;
  int i, r = t->radius;

  if (r == 1) {
    memcpy (t->w, derivative ? deriv3 : smooth3, sizeof (smooth3));
    return;
  }
  gaussian_weights (g, r, sigma);
  for (i = -r; i <= r; i++) {
    w[i + r] = derivative ? i * g[i + r] : g[i + r];
    sum += derivative ? (double) i * i * g[i + r] : g[i + r];
  }
  taps_store (t, w, derivative ? sum / 2.0 : sum / 4.0);
}

/* The Laplacian of Gaussian's smoothing G (sum 1) or second derivative L
 * (sum 0, sum i^2 L[i] = 2: x^2 / 2 gives 1, as [1, -2, 1] does). */
static void
taps_laplacian (CuconvTaps * t, double sigma, int second)
{
  static const float smooth3[] = { 0.0f, 1.0f, 0.0f };
  static const float second3[] = { 1.0f, -2.0f, 1.0f };
  double g[CUCONV_MAX_TAPS], mean = 0.0, moment = 0.0;
  int i, r = t->radius, n = 2 * r + 1;

  if (r == 1) {
    memcpy (t->w, second ? second3 : smooth3, sizeof (smooth3));
    return;
  }
  if (!second) {
    taps_gaussian (t, sigma);
    return;
  }
  gaussian_weights (g, r, sigma);
  for (i = -r; i <= r; i++) {
    g[i + r] *= (double) (i * i) / (sigma * sigma) - 1.0;
    mean += g[i + r];
  }
  mean /= n;
  for (i = -r; i <= r; i++) {
    g[i + r] -= mean;
    moment += (double) i * i * g[i + r];
  }
  taps_store (t, g, moment / 2.0);
}

/* Which set of taps a direction of a term takes. */
typedef enum
{
  TAPS_GAUSSIAN,
  TAPS_BOX,
  TAPS_SOBEL_SMOOTH,
  TAPS_SOBEL_DERIV,
  TAPS_LAPLACIAN_SMOOTH,
  TAPS_LAPLACIAN_SECOND,
  TAPS_SPATIAL,                 /* the bilateral's: exp (-i^2 / (2 sigma^2)) */
} TapsKind;

/* The taps of one kind for a direction of luma radius r and sigma sigma,
 * subsampled by sub: radius ceil (r / sub), sigma / sub (at least
 * CUCONV_MIN_SIGMA).  A radius of 0 is
 * the one tap [1] whatever the kind, unless untruncated: then the
 * untruncated gaussian of sigma / sub. */
static void
taps_make (CuconvTaps * t, TapsKind kind, int r, double sigma, int sub,
    int untruncated)
{
  memset (t, 0, sizeof (*t));
  t->radius = (r + sub - 1) / sub;
  sigma /= sub;
  if (sigma < CUCONV_MIN_SIGMA)
    sigma = CUCONV_MIN_SIGMA;
  if (kind != TAPS_BOX)
    t->sigma = sigma;
  if (untruncated) {
    t->untruncated = 1;
    return;
  }
  if (t->radius == 0) {
    t->w[0] = 1.0f;
    return;
  }
  switch (kind) {
    case TAPS_GAUSSIAN:
      taps_gaussian (t, sigma);
      break;
    case TAPS_BOX:
      taps_box (t);
      break;
    case TAPS_SOBEL_SMOOTH:
    case TAPS_SOBEL_DERIV:
      taps_sobel (t, sigma, kind == TAPS_SOBEL_DERIV);
      break;
    case TAPS_LAPLACIAN_SMOOTH:
    case TAPS_LAPLACIAN_SECOND:
      taps_laplacian (t, sigma, kind == TAPS_LAPLACIAN_SECOND);
      break;
    case TAPS_SPATIAL:{
      double g[CUCONV_MAX_TAPS];

      /* unnormalised, 1 at the centre: the bilateral divides by the sum
       * of its weights anyway */
      gaussian_weights (g, t->radius, sigma);
      taps_store (t, g, 1.0);
      break;
    }
  }
}

/* Whether a direction the settings give sigma (0: none) is the
 * untruncated gaussian; without a sigma it stays the one tap [1]. */
static int
direction_untruncated (const CuconvSettings * s, double sigma)
{
  return sigma > 0.0 && cuconv_settings_untruncated (s);
}

void
cuconv_taps_init (CuconvTaps * t, const CuconvSettings * s, int sub)
{
  int r;
  double sigma;

  cuconv_settings_resolve (s, &r, &sigma);
  taps_make (t, s->kernel == CUCONV_KERNEL_BOX ? TAPS_BOX : TAPS_GAUSSIAN, r,
      sigma, sub, direction_untruncated (s, s->sigma));
}

/* What normalize divides the n values w of a custom kernel by: their sum,
 * unless it is 0 or so near 0 that a value divided by it would exceed
 * CUCONV_MAX_CUSTOM_TAP; then 1, the values as given. */
static double
custom_divisor (const double *w, int n, int normalize)
{
  double sum = 0.0, largest = 0.0;
  int i;

  for (i = 0; i < n; i++) {
    sum += w[i];
    largest = fmax (largest, fabs (w[i]));
  }
  if (!normalize || sum == 0.0
      || !(largest / fabs (sum) <= CUCONV_MAX_CUSTOM_TAP))
    return 1.0;
  return sum;
}

/* A custom direction: the user's taps, normalised (custom_divisor ());
 * length 0 is the one tap [1]. */
static void
taps_custom (CuconvTaps * t, const double *w, int len, int normalize)
{
  memset (t, 0, sizeof (*t));
  if (len <= 0) {
    t->w[0] = 1.0f;
    return;
  }
  t->radius = len / 2;
  taps_store (t, w, custom_divisor (w, len, normalize));
}

static void
matrix_custom (CuconvMatrix * m, const CuconvSettings * s)
{
  const int n = s->matrix_side * s->matrix_side;
  const double div = custom_divisor (s->matrix, n, s->normalize);
  int i;

  m->radius = s->matrix_side / 2;
  for (i = 0; i < n; i++)
    m->w[i] = (float) (s->matrix[i] / div);
}

/* q: t's taps in fixed point, each rounded half up from w * 2^SHIFT, the
 * centre then taking what makes them sum to 2^SHIFT exactly. */
static void
taps_fixed (int *q, const CuconvTaps * t)
{
  const int n = 2 * t->radius + 1;
  int sum = 0, i;

  for (i = 0; i < n; i++) {
    q[i] = (int) floor ((double) t->w[i] * (1 << CUCONV_CANNY_TAP_SHIFT) +
        0.5);
    sum += q[i];
  }
  q[t->radius] += (1 << CUCONV_CANNY_TAP_SHIFT) - sum;
}

void
cuconv_filter_init (CuconvFilter * f, const CuconvSettings * s)
{
  TapsKind x = TAPS_GAUSSIAN, y = TAPS_GAUSSIAN, x2 = x, y2 = y;
  int rx, ry, sub, ux, uy;
  double sx, sy;

  memset (f, 0, sizeof (*f));
  f->border = s->border;
  f->box = s->kernel == CUCONV_KERNEL_BOX;
  f->sigma_range = s->sigma_range;
  f->n_terms = 1;
  f->combine = CUCONV_COMBINE_NONE;
  f->amount = (float) s->amount;

  if (s->kernel == CUCONV_KERNEL_PIXELATE) {
    f->combine = CUCONV_COMBINE_PIXELATE;
    f->block = s->block_size < 1 ? 1 : s->block_size > CUCONV_MAX_BLOCK ?
        CUCONV_MAX_BLOCK : (int) s->block_size;
    for (sub = 0; sub < CUCONV_MAX_SUBSAMPLE; sub++) {
      f->x[sub].w[0] = 1.0f;
      f->y[sub].w[0] = 1.0f;
    }
    return;
  }
  if (s->kernel == CUCONV_KERNEL_NLMEANS) {
    const int r = s->radius > CUCONV_MAX_NLMEANS_RADIUS ?
        CUCONV_MAX_NLMEANS_RADIUS : (int) s->radius;
    const int pr = s->patch_radius > CUCONV_MAX_PATCH_RADIUS ?
        CUCONV_MAX_PATCH_RADIUS : (int) s->patch_radius;

    f->combine = CUCONV_COMBINE_NLMEANS;
    /* on a subsampled plane both radii scale as a kernel's does */
    for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
      f->patch[sub - 1] = (pr + sub - 1) / sub;
      f->x[sub - 1].radius = f->y[sub - 1].radius = (r + sub - 1) / sub +
          f->patch[sub - 1];
    }
    return;
  }
  if (s->kernel == CUCONV_KERNEL_CANNY) {
    cuconv_settings_resolve (s, &rx, &sx);
    cuconv_settings_resolve_y (s, &ry, &sy);
    f->combine = CUCONV_COMBINE_CANNY;
    f->canny_low = s->threshold_low < s->threshold_high ?
        s->threshold_low : s->threshold_high;
    f->canny_high = s->threshold_low < s->threshold_high ?
        s->threshold_high : s->threshold_low;
    for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
      taps_make (&f->x[sub - 1], TAPS_GAUSSIAN, rx, sx, sub, 0);
      taps_make (&f->y[sub - 1], TAPS_GAUSSIAN, ry, sy, sub, 0);
      taps_fixed (f->canny_x[sub - 1], &f->x[sub - 1]);
      taps_fixed (f->canny_y[sub - 1], &f->y[sub - 1]);
    }
    return;
  }
  if (s->kernel == CUCONV_KERNEL_CUSTOM) {
    if (s->matrix_side > 0) {
      f->n_terms = 0;
      matrix_custom (&f->m, s);
      return;
    }
    /* the same taps for every plane: no subsampling scaling */
    for (sub = 0; sub < CUCONV_MAX_SUBSAMPLE; sub++) {
      taps_custom (&f->x[sub], s->custom_x, s->custom_x_len, s->normalize);
      taps_custom (&f->y[sub], s->custom_y, s->custom_y_len, s->normalize);
    }
    return;
  }

  switch (s->kernel) {
    case CUCONV_KERNEL_BOX:
      x = y = TAPS_BOX;
      break;
    case CUCONV_KERNEL_SHARPEN:
      f->combine = CUCONV_COMBINE_SHARPEN;
      break;
    case CUCONV_KERNEL_SOBEL:
      /* gx = D (x) S (y), gy = S (x) D (y) */
      f->n_terms = 2;
      f->combine = CUCONV_COMBINE_MAGNITUDE;
      x = y2 = TAPS_SOBEL_DERIV;
      y = x2 = TAPS_SOBEL_SMOOTH;
      break;
    case CUCONV_KERNEL_BILATERAL:
      f->combine = CUCONV_COMBINE_BILATERAL;
      x = y = TAPS_SPATIAL;
      break;
    case CUCONV_KERNEL_LAPLACIAN:
      /* d2/dx2 + d2/dy2 = L (x) G (y) + G (x) L (y) */
      f->n_terms = 2;
      f->combine = CUCONV_COMBINE_ABS_SUM;
      x = y2 = TAPS_LAPLACIAN_SECOND;
      y = x2 = TAPS_LAPLACIAN_SMOOTH;
      break;
    default:
      break;
  }

  cuconv_settings_resolve (s, &rx, &sx);
  cuconv_settings_resolve_y (s, &ry, &sy);
  ux = direction_untruncated (s, s->sigma);
  uy = direction_untruncated (s, s->sigma_y > 0.0 ? s->sigma_y : s->sigma);
  for (sub = 1; sub <= CUCONV_MAX_SUBSAMPLE; sub++) {
    taps_make (&f->x[sub - 1], x, rx, sx, sub, ux);
    taps_make (&f->y[sub - 1], y, ry, sy, sub, uy);
    if (f->n_terms == 2) {
      taps_make (&f->x2[sub - 1], x2, rx, sx, sub, 0);
      taps_make (&f->y2[sub - 1], y2, ry, sy, sub, 0);
    }
  }
}
