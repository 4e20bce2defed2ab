/* gst-cudaconvolve: Canny's edges (docs/semantics.md, "Canny"), the
 * decisions of one pixel defined once for the CPU and the GPU: the
 * direction its gradient is quantised to, and whether the suppression
 * keeps it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_CANNY_H__
#define __CUCONV_CANNY_H__

#include <math.h>

#include "cuconv.h"

/* The directions a gradient (gx, gy) is quantised to, y downwards: the
 * neighbours compared lie along it. */
typedef enum
{
  CUCONV_CANNY_HORIZONTAL = 0,     /* (x - 1, y) and (x + 1, y) */
  CUCONV_CANNY_DIAGONAL_DOWN,      /* (x - 1, y - 1) and (x + 1, y + 1) */
  CUCONV_CANNY_VERTICAL,           /* (x, y - 1) and (x, y + 1) */
  CUCONV_CANNY_DIAGONAL_UP,        /* (x + 1, y - 1) and (x - 1, y + 1) */
} CuconvCannyDirection;

/* tan (22.5 degrees) in 2^-15: 0.41421356 * 32768 = 13572.6 */
#define CUCONV_CANNY_TAN22 13573

/* Within 22.5 degrees of the x axis (|gy| < |gx| tan 22.5), of the y axis
 * (|gy| > |gx| tan 67.5, tan 67.5 = 2 + tan 22.5), else a diagonal: down
 * where gx and gy have the same sign. */
CUCONV_HD int
cuconv_canny_direction (int gx, int gy)
{
  const long long ax = gx < 0 ? -gx : gx, ay = gy < 0 ? -gy : gy;
  const long long t22 = ax * CUCONV_CANNY_TAN22;

  if (ay * 32768 < t22)
    return CUCONV_CANNY_HORIZONTAL;
  if (ay * 32768 > t22 + ax * 65536)
    return CUCONV_CANNY_VERTICAL;
  return (gx < 0) == (gy < 0) ? CUCONV_CANNY_DIAGONAL_DOWN :
      CUCONV_CANNY_DIAGONAL_UP;
}

/* The first neighbour along direction d: (x + dx, y + dy); the second is
 * (x - dx, y - dy). */
CUCONV_HD void
cuconv_canny_step (int d, int *dx, int *dy)
{
  *dx = d == CUCONV_CANNY_VERTICAL ? 0 : d == CUCONV_CANNY_DIAGONAL_UP ? 1 :
      -1;
  *dy = d == CUCONV_CANNY_HORIZONTAL ? 0 : -1;
}

/* A threshold t (8-bit gradient levels) on the squared magnitude of
 * samples of depth bits: floor ((t 2^(depth - 8))^2), in double. */
static inline long long
cuconv_canny_threshold (double t, int depth)
{
  const double scaled = ldexp (t, depth - 8);

  return (long long) floor (scaled * scaled);
}

/* Whether the suppression keeps a squared magnitude m between first and
 * second (the neighbours' along its direction d, 0 outside the plane):
 * above first; above or equal to second, or above both on a diagonal. */
CUCONV_HD int
cuconv_canny_keep (long long m, long long first, long long second, int d)
{
  if (d == CUCONV_CANNY_DIAGONAL_DOWN || d == CUCONV_CANNY_DIAGONAL_UP)
    return m > first && m > second;
  return m > first && m >= second;
}

#endif /* __CUCONV_CANNY_H__ */
