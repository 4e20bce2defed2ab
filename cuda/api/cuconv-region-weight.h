/* gst-cudaconvolve: a soft region's weight at a sample and the blend it
 * makes (docs/semantics.md, "Soft regions"), defined once for the CPU and
 * the GPU.  Each operation is one IEEE operation on both: the device's
 * are the _rn intrinsics, which the compiler never fuses into a
 * multiply-add, so that a sample lies in or out of a shape alike on both.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_REGION_WEIGHT_H__
#define __CUCONV_REGION_WEIGHT_H__

#include "cuconv.h"

#ifdef __CUDA_ARCH__
#define CUCONV_DADD(a, b) __dadd_rn ((a), (b))
#define CUCONV_DSUB(a, b) __dsub_rn ((a), (b))
#define CUCONV_DMUL(a, b) __dmul_rn ((a), (b))
#define CUCONV_DDIV(a, b) __ddiv_rn ((a), (b))
#define CUCONV_DSQRT(a) __dsqrt_rn (a)
#define CUCONV_DFLOOR(a) floor (a)
#define CUCONV_DCEIL(a) ceil (a)
#else
#include <math.h>
#define CUCONV_DADD(a, b) ((a) + (b))
#define CUCONV_DSUB(a, b) ((a) - (b))
#define CUCONV_DMUL(a, b) ((a) * (b))
#define CUCONV_DDIV(a, b) ((a) / (b))
#define CUCONV_DSQRT(a) sqrt (a)
#define CUCONV_DFLOOR(a) floor (a)
#define CUCONV_DCEIL(a) ceil (a)
#endif

CUCONV_HD double
cuconv_dmin (double a, double b)
{
  return a < b ? a : b;
}

/* How far inside the shape in box b the centre of sample (u, v) of a
 * plane subsampled by (sx, sy) lies, in luma pixels (0 or less: outside).
 * A box: to the nearest side of the box on the plane, rounded outward as
 * a rectangle is (cuconv_rect_on_plane), so that with no feather the box
 * covers the samples a rectangle does.  An ellipse: (1 - rho) times the
 * shorter half-axis, rho the centre's distance from the ellipse's centre
 * on the scale where the ellipse is the unit circle. */
CUCONV_HD double
cuconv_region_depth (const CuconvBox * b, CuconvShape shape, int u, int v,
    int sx, int sy)
{
  const double x0 = (double) b->x0, x1 = (double) b->x1;
  const double y0 = (double) b->y0, y1 = (double) b->y1;
  const double cu = CUCONV_DADD ((double) u, 0.5);
  const double cv = CUCONV_DADD ((double) v, 0.5);

  if (shape == CUCONV_SHAPE_ELLIPSE) {
    const double a = CUCONV_DMUL (0.5, CUCONV_DSUB (x1, x0));
    const double c = CUCONV_DMUL (0.5, CUCONV_DSUB (y1, y0));
    const double mx = CUCONV_DADD (CUCONV_DMUL (0.5, x0),
        CUCONV_DMUL (0.5, x1));
    const double my = CUCONV_DADD (CUCONV_DMUL (0.5, y0),
        CUCONV_DMUL (0.5, y1));
    double tx, ty, rho;

    if (!(a > 0.0) || !(c > 0.0))
      return 0.0;
    tx = CUCONV_DDIV (CUCONV_DSUB (CUCONV_DMUL (cu, (double) sx), mx), a);
    ty = CUCONV_DDIV (CUCONV_DSUB (CUCONV_DMUL (cv, (double) sy), my), c);
    rho = CUCONV_DSQRT (CUCONV_DADD (CUCONV_DMUL (tx, tx),
            CUCONV_DMUL (ty, ty)));
    return CUCONV_DMUL (CUCONV_DSUB (1.0, rho), cuconv_dmin (a, c));
  } else {
    const double px0 = CUCONV_DFLOOR (CUCONV_DDIV (x0, (double) sx));
    const double px1 = CUCONV_DCEIL (CUCONV_DDIV (x1, (double) sx));
    const double py0 = CUCONV_DFLOOR (CUCONV_DDIV (y0, (double) sy));
    const double py1 = CUCONV_DCEIL (CUCONV_DDIV (y1, (double) sy));
    const double dx = CUCONV_DMUL (cuconv_dmin (CUCONV_DSUB (cu, px0),
            CUCONV_DSUB (px1, cu)), (double) sx);
    const double dy = CUCONV_DMUL (cuconv_dmin (CUCONV_DSUB (cv, py0),
            CUCONV_DSUB (py1, cv)), (double) sy);

    return cuconv_dmin (dx, dy);
  }
}

/* The weight of a region at a sample lying `depth` inside its shape: 0
 * outside, 1 from `feather` luma pixels in (at once with no feather), and
 * between them t^2 (3 - 2 t) of t = depth / feather. */
CUCONV_HD float
cuconv_region_weight (double depth, double feather)
{
  double t;

  if (!(depth > 0.0))
    return 0.0f;
  if (!(feather > 0.0) || depth >= feather)
    return 1.0f;
  t = CUCONV_DDIV (depth, feather);
  return (float) CUCONV_DMUL (CUCONV_DMUL (t, t),
      CUCONV_DSUB (3.0, CUCONV_DMUL (2.0, t)));
}

/* What a sample weighed by w (the regions' weight there) becomes: from
 * its input s towards the filter's output f (words without their shift:
 * the bits above max are not the sample's), rounded and saturated as a
 * filtered sample is (cuconv_round_sat). */
CUCONV_HD unsigned
cuconv_region_blend (unsigned s, unsigned f, float w, unsigned max)
{
  s &= max;
  f &= max;
#ifdef __CUDA_ARCH__
  const float v = __fadd_rn ((float) s, __fmul_rn (w, (float) f - (float) s));
#else
  const float v = (float) s + w * ((float) f - (float) s);
#endif
  return cuconv_round_sat (v, max);
}

/* The weight a sample of regions of `mode` is blended by, from the
 * largest of the regions' weights there: that weight inside them
 * (CUCONV_REGION_INSIDE), its complement outside (CUCONV_REGION_OUTSIDE). */
CUCONV_HD float
cuconv_region_mode_weight (CuconvRegionMode mode, float largest)
{
  return mode == CUCONV_REGION_OUTSIDE ?
      (float) CUCONV_DSUB (1.0, (double) largest) : largest;
}

#endif /* __CUCONV_REGION_WEIGHT_H__ */
