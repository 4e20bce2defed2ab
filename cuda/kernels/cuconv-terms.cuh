/* gst-cudaconvolve: what the general kernel (cuconv-general.cu) and the
 * global passes (cuconv-global.cu) both take of one plane and a filter
 * of one or two separable terms, and its one set-up.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_TERMS_CUH__
#define __CUCONV_TERMS_CUH__

#include "cuconv-kernels.cuh"

namespace cuconv {

/* Rows [row_begin, row_end) of one plane filtered by separable terms,
 * any depth and component ops.  Each path's parameters extend it with
 * the taps and what its passes need. */
struct TermsParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;  /* bytes */
  int width;                    /* pixels */
  int ws;                       /* samples a row: width * nc */
  int height;                   /* rows of the whole plane, for the border */
  int nc;
  int row_begin, row_end;       /* the band written */
  int border;
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask;                /* (1 << depth) - 1: also the saturation */
  uint32_t word_mask;           /* 0xff or 0xffff */
  uint32_t fill;                /* the FILL word as stored */
  int combine;
  float amount;
  int need_src;                 /* sharpen, or a COPY component */
  uint8_t op[CUCONV_MAX_COMP];  /* CuconvCompOp */
  int rx, ry;                   /* the widest radius of any term */
};

/* Zeroes p (all of P) and fills its TermsParams for rows
 * [row_begin, row_end) of plane pl (device pointers) filtered by f's
 * f.n_terms terms.  Words are stored as the sample's bytes: what does not
 * fit is cut, as the reference cuts it. */
template < typename P > static inline void
terms_params_init (P & p, const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end)
{
  const int bytes = cuconv_plane_sample_bytes (&pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const CuconvTaps *x[2] = { &f.x[pl.sub_x - 1], &f.x2[pl.sub_x - 1] };
  const CuconvTaps *y[2] = { &f.y[pl.sub_y - 1], &f.y2[pl.sub_y - 1] };

  band_params_init (p, pl, row_begin, row_end);
  p.ws = pl.width * pl.n_comp;
  p.nc = pl.n_comp;
  p.border = f.border;
  p.shift = depth > 8 ? pl.shift : 0;
  p.mask = (1u << depth) - 1;
  p.word_mask = bytes == 1 ? 0xffu : 0xffffu;
  p.fill = (pl.fill << p.shift) & p.word_mask;
  p.combine = f.combine;
  p.amount = f.amount;
  p.need_src = f.combine == CUCONV_COMBINE_SHARPEN;
  for (int c = 0; c < pl.n_comp; c++) {
    p.op[c] = pl.op[c];
    p.need_src |= pl.op[c] == CUCONV_COMP_COPY;
  }
  for (int m = 0; m < f.n_terms; m++) {
    p.rx = x[m]->radius > p.rx ? x[m]->radius : p.rx;
    p.ry = y[m]->radius > p.ry ? y[m]->radius : p.ry;
  }
}

}                               /* namespace cuconv */

#endif /* __CUCONV_TERMS_CUH__ */
