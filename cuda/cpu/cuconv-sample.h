/* gst-cudaconvolve: a plane's samples on the host, as the definitions
 * (the reference, the bilateral, the temporal denoise) read and write
 * them: bytes at depth 8, else little-endian 16-bit words (shifted left by
 * the plane's shift).
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

/* Word k of a row of samples of depth. */
static inline unsigned
sample_row_read (const uint8_t * row, int k, int depth)
{
  return depth == 8 ? row[k] : row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

/* Writes word v as word k of a row of samples of depth. */
static inline void
sample_row_write (uint8_t * row, int k, int depth, unsigned v)
{
  if (depth == 8) {
    row[k] = (uint8_t) v;
  } else {
    row[2 * k] = (uint8_t) v;
    row[2 * k + 1] = (uint8_t) (v >> 8);
  }
}

/* The word of component comp of pixel (x, y) of p's source. */
static inline unsigned
sample_read (const CuconvPlane * p, int x, int y, int comp)
{
  return sample_row_read (p->src + y * p->src_stride, x * p->n_comp + comp,
      sample_depth (p));
}

/* Writes word v as component comp of pixel (x, y) of p's destination. */
static inline void
sample_write (const CuconvPlane * p, int x, int y, int comp, unsigned v)
{
  sample_row_write (p->dst + y * p->dst_stride, x * p->n_comp + comp,
      sample_depth (p), v);
}

/* Writes component comp of pixel (x, y) of p's destination as p->op
 * says: the source's word, the fill, or v (a filtered sample, without
 * the shift). */
static inline void
sample_write_op (const CuconvPlane * p, int x, int y, int comp, unsigned v)
{
  switch (p->op[comp]) {
    case CUCONV_COMP_COPY:
      sample_write (p, x, y, comp, sample_read (p, x, y, comp));
      break;
    case CUCONV_COMP_FILL:
      sample_write (p, x, y, comp, p->fill << sample_shift (p));
      break;
    default:
      sample_write (p, x, y, comp, v << sample_shift (p));
      break;
  }
}

/* Component comp of rows [row_begin - ry, row_begin + rows + ry) of p,
 * border-extended, into ext: ext row k holds plane row B (row_begin - ry
 * + k), its sample i the one at bx[i] (the border map of columns -rx ..
 * width - 1 + rx, ew of them), without p's shift; 0 wherever the zero
 * border reads outside the plane. */
static inline void
sample_extend (const CuconvPlane * p, CuconvBorder border, int comp,
    int row_begin, int rows, int ry, const int *bx, int ew, uint16_t * ext)
{
  const unsigned mask = (1u << sample_depth (p)) - 1;
  int k, i;

  for (k = 0; k < rows + 2 * ry; k++) {
    const int y = cuconv_border_index (border, row_begin - ry + k, p->height);
    uint16_t *e = ext + (size_t) k * ew;

    for (i = 0; i < ew; i++) {
      const int x = bx[i];

      e[i] = y < 0 || x < 0 ? 0 :
          (uint16_t) ((sample_read (p, x, y, comp) >> sample_shift (p)) & mask);
    }
  }
}

#endif /* __CUCONV_SAMPLE_H__ */
