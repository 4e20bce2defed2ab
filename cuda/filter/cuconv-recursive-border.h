/* gst-cudaconvolve: the recursive gaussian's states at the plane's
 * border (docs/design.md, "The recursive gaussian"), written once for
 * the CPU engine (cuconv-cpu.c, double) and the kernels
 * (cuconv-recursive.cu, float or double).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_RECURSIVE_BORDER_H__
#define __CUCONV_RECURSIVE_BORDER_H__

#include "cuconv-border.h"

/* CUCONV_REC_BORDER_STATES defines the function NAME, which gives section
 * s's initial states *sc = z[-1] and *sa = w[n] of a line read through
 * border, from the zero-initial totals zc (the causal state at n - 1) and
 * za (the anticausal state at 0) and the edge samples x0 = x[0] and
 * xn = x[n - 1]; d holds the direction's constants (CuconvRecDir's n,
 * clamp, wrap, pinv, mirror_p and mirror_d, or the kernels' copy of
 * them).  Each user gives its own complex arithmetic, so that each keeps
 * its rounding: the kernels fuse products and sums (fma), the CPU rounds
 * each product and sum on its own.
 *
 *   QUAL          the function's qualifiers
 *   R, CX, DIR    the real, complex and direction types
 *   RE, IM        the names of CX's real and imaginary parts
 *   MK (re, im)   the complex number re + i im
 *   MUL (m, u)    m u
 *   MAD (m, u, v) v + m u
 *   SCALE (m, x)  m x, x real
 *
 * With zero the states are 0.  With wrap the line is periodic:
 * z[-1] = z[n - 1] = zc + p^n z[-1].  With mirror (two samples or more)
 * it is reflected about 0 and n - 1: z[-1] = w[1], w[n] = z[n - 2].  With
 * clamp, and mirror of one sample (every read is sample 0), the states
 * of a constant line: x0 / (1 - p) and xn / (1 - p). */
#define CUCONV_REC_BORDER_STATES(QUAL, NAME, R, CX, DIR, RE, IM, MK, MUL, \
    MAD, SCALE) \
QUAL void \
NAME (const DIR * d, int s, int border, R x0, R xn, CX zc, CX za, \
    CX * sc, CX * sa) \
{ \
  if (border == CUCONV_BORDER_ZERO) { \
    *sc = *sa = MK (0, 0); \
  } else if (border == CUCONV_BORDER_WRAP) { \
    *sc = MUL (d->wrap[s], zc); \
    *sa = MUL (d->wrap[s], za); \
  } else if (border == CUCONV_BORDER_MIRROR && d->n >= 2) { \
    const CX za1 = MUL (d->pinv[s], MK (za.RE - x0, za.IM)); \
    const CX zc2 = MUL (d->pinv[s], MK (zc.RE - xn, zc.IM)); \
    *sc = MUL (d->mirror_d[s], MAD (d->mirror_p[s], zc2, za1)); \
    *sa = MUL (d->mirror_d[s], MAD (d->mirror_p[s], za1, zc2)); \
  } else { \
    *sc = SCALE (d->clamp[s], x0); \
    *sa = SCALE (d->clamp[s], xn); \
  } \
}

#endif /* __CUCONV_RECURSIVE_BORDER_H__ */
