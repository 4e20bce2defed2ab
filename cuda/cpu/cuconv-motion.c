/* gst-cudaconvolve: the motion search of the compensated temporal denoise
 * on the host (docs/semantics.md, "Motion compensation"), its definition:
 * the guide's two pyramids, then each level's vectors from the top down.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-motion.h"
#include "cuconv-sample.h"

void
cuconv_motion_layout (int w0, int h0, CuconvMotionLayout * l)
{
  size_t at = 0;

  for (int i = 0; i < CUCONV_MOTION_LEVELS; i++) {
    const int w = cuconv_motion_level_size (w0, i);
    const int h = cuconv_motion_level_size (h0, i);

    l->field[i] = at;
    at += (size_t) cuconv_motion_blocks (w) * cuconv_motion_blocks (h) *
        sizeof (CuconvMotionVector);
  }
  for (int i = 0; i < CUCONV_MOTION_LEVELS; i++) {
    const size_t n = (size_t) cuconv_motion_level_size (w0, i) *
        cuconv_motion_level_size (h0, i);

    l->a[i] = at;
    l->b[i] = at + n;
    at += 2 * n;
  }
  l->bytes = at;
}

/* Level 0 of a pyramid: the guide's 8-bit levels, from rows of stride. */
static void
guide_level (const CuconvPlane * p, int comp, const uint8_t * src,
    ptrdiff_t stride, uint8_t * dst)
{
  const int depth = sample_depth (p);
  const int shift = sample_shift (p);

  for (int y = 0; y < p->height; y++) {
    const uint8_t *row = src + y * stride;

    for (int x = 0; x < p->width; x++)
      dst[(size_t) y * p->width + x] = cuconv_motion_guide (row,
          x * p->n_comp + comp, depth, shift);
  }
}

static void
down_level (const uint8_t * src, int w, int h, uint8_t * dst)
{
  const int dw = (w + 1) / 2, dh = (h + 1) / 2;

  for (int y = 0; y < dh; y++)
    for (int x = 0; x < dw; x++)
      dst[(size_t) y * dw + x] = cuconv_motion_down (src, w, h, w, x, y);
}

void
cuconv_motion_pyramids (const CuconvPlane * p, int comp, const uint8_t * prev,
    ptrdiff_t prev_stride, void *scratch)
{
  uint8_t *s = scratch;
  CuconvMotionLayout l;

  cuconv_motion_layout (p->width, p->height, &l);
  guide_level (p, comp, p->src, p->src_stride, s + l.a[0]);
  guide_level (p, comp, prev, prev_stride, s + l.b[0]);
  for (int i = 1; i < CUCONV_MOTION_LEVELS; i++) {
    const int w = cuconv_motion_level_size (p->width, i - 1);
    const int h = cuconv_motion_level_size (p->height, i - 1);

    down_level (s + l.a[i - 1], w, h, s + l.a[i]);
    down_level (s + l.b[i - 1], w, h, s + l.b[i]);
  }
}

void
cuconv_motion_level_rows (int w0, int h0, void *scratch, int level,
    int by_begin, int by_end)
{
  uint8_t *s = scratch;
  CuconvMotionLayout l;
  const int top = level == CUCONV_MOTION_LEVELS - 1;

  cuconv_motion_layout (w0, h0, &l);
  {
    const CuconvMotionLevel lv = { s + l.a[level], s + l.b[level],
      cuconv_motion_level_size (w0, level),
      cuconv_motion_level_size (h0, level),
      cuconv_motion_level_size (w0, level)
    };
    const int nbx = cuconv_motion_blocks (lv.w);
    const int pbx = top ? 0 : cuconv_motion_blocks (cuconv_motion_level_size
        (w0, level + 1));
    CuconvMotionVector *field = (CuconvMotionVector *) (s + l.field[level]);
    const CuconvMotionVector *parent = top ? NULL :
        (const CuconvMotionVector *) (s + l.field[level + 1]);

    for (int by = by_begin; by < by_end; by++)
      for (int bx = 0; bx < nbx; bx++) {
        const CuconvMotionVector zero = { 0, 0 };
        const CuconvMotionVector v = cuconv_motion_best (&lv, bx, by, top,
            top ? zero : parent[(by / 2) * pbx + bx / 2]);

        field[by * nbx + bx] = level > 0 ? v :
            cuconv_motion_best_subpel (&lv, bx, by, v);
      }
  }
}

const CuconvMotionVector *
cuconv_motion_search (const CuconvPlane * p, int comp, const uint8_t * prev,
    ptrdiff_t prev_stride, void *scratch)
{
  CuconvMotionLayout l;

  cuconv_motion_pyramids (p, comp, prev, prev_stride, scratch);
  for (int i = CUCONV_MOTION_LEVELS - 1; i >= 0; i--)
    cuconv_motion_level_rows (p->width, p->height, scratch, i, 0,
        cuconv_motion_blocks (cuconv_motion_level_size (p->height, i)));
  cuconv_motion_layout (p->width, p->height, &l);
  return (const CuconvMotionVector *) ((uint8_t *) scratch + l.field[0]);
}
