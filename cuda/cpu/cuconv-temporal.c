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

/* The new state of a filtered sample: word a of the input, b of the
 * previous output (its depth bits at shift). */
static unsigned
blend (unsigned wa, unsigned wb, const uint8_t * k, int depth, int shift)
{
  const unsigned mask = (1u << depth) - 1;
  const int a = (int) ((wa >> shift) & mask);
  const int b = (int) ((wb >> shift) & mask);
  const int t = k[(a > b ? a - b : b - a) >> (depth - 8)];

  /* t / 256 of the way to the previous output, rounded half up (>>
   * floors) */
  return (unsigned) (a + ((t * (b - a) + 128) >> 8)) << shift;
}

void
cuconv_temporal_rows (const CuconvPlane * p, const uint8_t * k, int first,
    int row_begin, int row_end)
{
  const int depth = sample_depth (p);
  const int shift = sample_shift (p);
  int x, y, c;

  for (y = row_begin; y < row_end; y++) {
    const uint8_t *in = p->src + y * p->src_stride;
    uint8_t *st = p->dst + y * p->dst_stride;

    for (x = 0; x < p->width; x++) {
      for (c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const unsigned w = sample_row_read (in, i, depth);

        sample_row_write (st, i, depth, first || p->op[c] !=
            CUCONV_COMP_FILTER ? w : blend (w, sample_row_read (st, i,
                    depth), k, depth, shift));
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
  int x, y, c;

#define SAMPLE(row, k) ((sample_row_read (row, k, depth) >> shift) & mask)
  for (y = row_begin; y < row_end; y++) {
    const uint8_t *in = p->src + y * p->src_stride;
    uint8_t *st = p->dst + y * p->dst_stride;

    for (x = 0; x < p->width; x++) {
      const CuconvMotionVector v = first ? (CuconvMotionVector) {
      0, 0} : cuconv_motion_at (field, nbx, x, y, p->sub_x, p->sub_y);
      const int wx = cuconv_motion_whole (v.x), wy = cuconv_motion_whole (v.y);
      const int fx = v.x - wx * CUCONV_MOTION_SUBPEL;
      const int fy = v.y - wy * CUCONV_MOTION_SUBPEL;
      const uint8_t *r0 = prev +
          cuconv_motion_clamp (y + wy, p->height) * prev_stride;
      const uint8_t *r1 = prev +
          cuconv_motion_clamp (y + wy + 1, p->height) * prev_stride;
      const int x0 = cuconv_motion_clamp (x + wx, p->width) * p->n_comp;
      const int x1 = cuconv_motion_clamp (x + wx + 1, p->width) * p->n_comp;

      for (c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const unsigned w = sample_row_read (in, i, depth);
        unsigned b;

        if (first || p->op[c] != CUCONV_COMP_FILTER) {
          sample_row_write (st, i, depth, w);
          continue;
        }
        /* the mix of the four samples, shifted back into a word */
        b = cuconv_motion_mix (SAMPLE (r0, x0 + c), SAMPLE (r0, x1 + c),
            SAMPLE (r1, x0 + c), SAMPLE (r1, x1 + c), fx, fy);
        sample_row_write (st, i, depth, blend (w, b << shift, k, depth,
                shift));
      }
    }
  }
}
#undef SAMPLE
