/* gst-cudaconvolve: a plane's samples on the host, as the definitions
 * (the reference, the bilateral) read and write them: bytes at depth 8,
 * else little-endian 16-bit words (shifted left by the plane's shift).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_SAMPLE_H__
#define __CUCONV_SAMPLE_H__

#include "cuconv.h"

static inline int
sample_depth (const CuconvPlane * p)
{
  return p->depth > 8 ? p->depth : 8;
}

/* Depth 8 samples are bytes and never shifted. */
static inline int
sample_shift (const CuconvPlane * p)
{
  return sample_depth (p) == 8 ? 0 : p->shift;
}

/* The word of component comp of pixel (x, y) of p's source. */
static inline unsigned
sample_read (const CuconvPlane * p, int x, int y, int comp)
{
  const uint8_t *row = p->src + y * p->src_stride;
  const int k = x * p->n_comp + comp;

  if (sample_depth (p) == 8)
    return row[k];
  return row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

/* Writes word v as component comp of pixel (x, y) of p's destination. */
static inline void
sample_write (const CuconvPlane * p, int x, int y, int comp, unsigned v)
{
  uint8_t *row = p->dst + y * p->dst_stride;
  const int k = x * p->n_comp + comp;

  if (sample_depth (p) == 8) {
    row[k] = (uint8_t) v;
  } else {
    row[2 * k] = (uint8_t) v;
    row[2 * k + 1] = (uint8_t) (v >> 8);
  }
}

#endif /* __CUCONV_SAMPLE_H__ */
