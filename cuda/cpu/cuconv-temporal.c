/* gst-cudaconvolve: the temporal denoise's definition (docs/semantics.md,
 * "Temporal denoise"): a causal recursive filter in integers, so that the
 * CPU and the GPU give the same sequence bit for bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "cuconv.h"
#include "cuconv-motion.h"
#include "cuconv-sample.h"

void
cuconv_temporal_lut (uint8_t * k, double strength, double threshold)
{
  int d;

  for (d = 0; d < CUCONV_TEMPORAL_LUT; d++) {
    const double u = threshold > 0.0 ? 1.0 - d / threshold : 0.0;

    k[d] = u > 0.0 ? (uint8_t) floor (255.0 * strength * u * u + 0.5) : 0;
  }
}

int
cuconv_temporal_is_off (const uint8_t * k)
{
  return k[0] == 0;
}

void
cuconv_temporal_rows (const CuconvPlane * p, const uint8_t * k, int first,
    int row_begin, int row_end)
{
  const int depth = sample_depth (p);
  const int shift = sample_shift (p);
  const unsigned mask = (1u << depth) - 1;
  int x, y, c;

  for (y = row_begin; y < row_end; y++) {
    const uint8_t *in = p->src + y * p->src_stride;
    uint8_t *st = p->dst + y * p->dst_stride;

    for (x = 0; x < p->width; x++) {
      for (c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const unsigned w = sample_row_read (in, i, depth);
        const unsigned b = sample_row_read (st, i, depth);

        sample_row_write (st, i, depth, first || p->op[c] !=
            CUCONV_COMP_FILTER ? w : cuconv_temporal_blend ((int) ((w >>
                        shift) & mask), (int) ((b >> shift) & mask), k,
                depth - 8) << shift);
      }
    }
  }
}

void
cuconv_temporal_rows_compensated (const CuconvPlane * p,
    const uint8_t * prev, ptrdiff_t prev_stride,
    const CuconvMotionVector * field, int nbx, const uint8_t * k, int first,
    int row_begin, int row_end)
{
  const int depth = sample_depth (p);
  const int shift = sample_shift (p);
  const unsigned mask = (1u << depth) - 1;
  const CuconvMotionPrev pv = { prev, prev_stride, p->width, p->height,
    p->n_comp, depth, shift
  };
  int x, y, c;

  for (y = row_begin; y < row_end; y++) {
    const uint8_t *in = p->src + y * p->src_stride;
    uint8_t *st = p->dst + y * p->dst_stride;

    for (x = 0; x < p->width; x++) {
      const CuconvMotionVector v = first ? (CuconvMotionVector) {
      0, 0} : cuconv_motion_at (field, nbx, x, y, p->sub_x, p->sub_y);

      for (c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const unsigned w = sample_row_read (in, i, depth);

        if (first || p->op[c] != CUCONV_COMP_FILTER) {
          sample_row_write (st, i, depth, w);
          continue;
        }
        sample_row_write (st, i, depth,
            cuconv_temporal_blend ((int) ((w >> shift) & mask),
                (int) cuconv_motion_fetch (&pv, x, y, c, v), k,
                depth - 8) << shift);
      }
    }
  }
}
