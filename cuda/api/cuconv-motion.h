/* gst-cudaconvolve: the motion search of the compensated temporal denoise
 * (docs/semantics.md, "Motion compensation"), defined once for the CPU
 * and the GPU: the guide's pyramid, a block's cost for a candidate
 * vector, the candidates of each level and the vector a sample of any
 * plane follows.
 *
 * A pyramid holds CUCONV_MOTION_LEVELS levels of 8-bit samples, level 0
 * the guide itself, each next one half the size (rounded up).  Blocks are
 * CUCONV_MOTION_BLOCK samples a side at every level; the top level
 * searches every vector up to CUCONV_MOTION_TOP_RADIUS, each lower level
 * twice its parent's vector and the 8 around it, and the zero vector;
 * level 0's vector is then refined to a quarter of a sample.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_MOTION_H__
#define __CUCONV_MOTION_H__

#include "cuconv.h"

#define CUCONV_MOTION_LEVELS 4
#define CUCONV_MOTION_BLOCK 8
#define CUCONV_MOTION_TOP_RADIUS 4
/* the cost of a vector: the blocks' sum of absolute differences plus
 * this much for each step of |vx| + |vy| (level units) */
#define CUCONV_MOTION_LAMBDA 8
/* level 0's vectors are in 1/CUCONV_MOTION_SUBPEL of a sample, found
 * around the whole-sample one; a sample between four is their bilinear
 * mix */
#define CUCONV_MOTION_SUBPEL 4
#define CUCONV_MOTION_SUBPEL_SHIFT 4    /* log2 (SUBPEL^2) */

/* Loops over a block's fixed sizes unrolled on the GPU, so that their
 * small arrays stay in registers. */
#ifdef __CUDA_ARCH__
#define CUCONV_MOTION_UNROLL _Pragma ("unroll")
#else
#define CUCONV_MOTION_UNROLL
#endif

/* One level of the two pyramids: the input's (a) and the previous
 * output's (b), w x h samples, rows of stride bytes. */
typedef struct
{
  const uint8_t *a;
  const uint8_t *b;
  int w;
  int h;
  int stride;
} CuconvMotionLevel;

/* A vector, in samples of its level. */
typedef struct
{
  short x;
  short y;
} CuconvMotionVector;

/* Samples a side of level l of a w0 x h0 guide: n halved l times,
 * rounding up. */
CUCONV_HD int
cuconv_motion_level_size (int n0, int l)
{
  int n = n0;

  for (int i = 0; i < l; i++)
    n = (n + 1) / 2;
  return n;
}

/* Blocks a side of a level n samples a side. */
CUCONV_HD int
cuconv_motion_blocks (int n)
{
  return (n + CUCONV_MOTION_BLOCK - 1) / CUCONV_MOTION_BLOCK;
}

CUCONV_HD int
cuconv_motion_clamp (int v, int n)
{
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

/* Sample (x, y) of the next level down from src (w x h, rows of stride):
 * the rounded mean of the 2x2 samples at (2x, 2y), the coordinates
 * clamped to the plane. */
CUCONV_HD uint8_t
cuconv_motion_down (const uint8_t * src, int w, int h, int stride, int x,
    int y)
{
  const int x0 = 2 * x, x1 = cuconv_motion_clamp (2 * x + 1, w);
  const int y0 = 2 * y, y1 = cuconv_motion_clamp (2 * y + 1, h);
  const uint8_t *r0 = src + (size_t) y0 * stride;
  const uint8_t *r1 = src + (size_t) y1 * stride;

  return (uint8_t) ((r0[x0] + r0[x1] + r1[x0] + r1[x1] + 2) >> 2);
}

/* floor (v / CUCONV_MOTION_SUBPEL), any sign. */
CUCONV_HD int
cuconv_motion_whole (int v)
{
  return v >= 0 ? v / CUCONV_MOTION_SUBPEL :
      -((-v + CUCONV_MOTION_SUBPEL - 1) / CUCONV_MOTION_SUBPEL);
}

/* The bilinear mix of the samples p00 (at the whole part), p10 (one to
 * the right), p01 (one down) and p11, at fractions fx, fy of
 * CUCONV_MOTION_SUBPEL, rounded half up: the samples themselves at 0. */
CUCONV_HD unsigned
cuconv_motion_mix (unsigned p00, unsigned p10, unsigned p01, unsigned p11,
    int fx, int fy)
{
  const unsigned gx = CUCONV_MOTION_SUBPEL - fx, gy = CUCONV_MOTION_SUBPEL - fy;

  return (p00 * gx * gy + p10 * fx * gy + p01 * gx * fy + p11 * fx * fy +
      (1u << (CUCONV_MOTION_SUBPEL_SHIFT - 1))) >> CUCONV_MOTION_SUBPEL_SHIFT;
}

/* The sum over block (bx, by)'s samples inside level lv of |a(x, y) -
 * b'|, b' the sample of b at (x + wx + fx / SUBPEL, y + wy + fy / SUBPEL):
 * the mix of the four around it, their coordinates clamped to the level
 * (fx = fy = 0: b (x + wx, y + wy) itself). */
CUCONV_HD unsigned
cuconv_motion_sad (const CuconvMotionLevel * lv, int bx, int by, int wx,
    int wy, int fx, int fy)
{
  const int x0 = bx * CUCONV_MOTION_BLOCK, y0 = by * CUCONV_MOTION_BLOCK;
  const int x1 = x0 + CUCONV_MOTION_BLOCK < lv->w ?
      x0 + CUCONV_MOTION_BLOCK : lv->w;
  const int y1 = y0 + CUCONV_MOTION_BLOCK < lv->h ?
      y0 + CUCONV_MOTION_BLOCK : lv->h;
  unsigned sad = 0;

  for (int y = y0; y < y1; y++) {
    const uint8_t *ra = lv->a + (size_t) y * lv->stride;
    const uint8_t *r0 = lv->b +
        (size_t) cuconv_motion_clamp (y + wy, lv->h) * lv->stride;
    const uint8_t *r1 = lv->b +
        (size_t) cuconv_motion_clamp (y + wy + 1, lv->h) * lv->stride;

    for (int x = x0; x < x1; x++) {
      const int c0 = cuconv_motion_clamp (x + wx, lv->w);
      const int c1 = cuconv_motion_clamp (x + wx + 1, lv->w);
      const int b = fx == 0 && fy == 0 ? r0[c0] :
          (int) cuconv_motion_mix (r0[c0], r0[c1], r1[c0], r1[c1], fx, fy);
      const int d = ra[x] - b;

      sad += (unsigned) (d < 0 ? -d : d);
    }
  }
  return sad;
}

/* The cost of vector v (level samples) for block (bx, by) of level lv:
 * the sum of absolute differences along it plus its penalty. */
CUCONV_HD unsigned
cuconv_motion_cost (const CuconvMotionLevel * lv, int bx, int by,
    CuconvMotionVector v)
{
  return cuconv_motion_sad (lv, bx, by, v.x, v.y, 0, 0) +
      CUCONV_MOTION_LAMBDA * (unsigned) ((v.x < 0 ? -v.x : v.x) +
      (v.y < 0 ? -v.y : v.y));
}

/* Candidate i of a block whose parent's vector is parent (level units of
 * the parent's level), at the top level (top: parent unused) or below.
 * Returns 0 past the last candidate.  The top level: every vector with
 * |x|, |y| <= CUCONV_MOTION_TOP_RADIUS, rows of y then x ascending.
 * Below: the zero vector, then 2 parent + (dx, dy) for dy, dx = -1, 0, 1
 * in that order. */
CUCONV_HD int
cuconv_motion_candidate (int top, CuconvMotionVector parent, int i,
    CuconvMotionVector * v)
{
  const int side = 2 * CUCONV_MOTION_TOP_RADIUS + 1;

  if (top) {
    if (i >= side * side)
      return 0;
    v->x = (short) (i % side - CUCONV_MOTION_TOP_RADIUS);
    v->y = (short) (i / side - CUCONV_MOTION_TOP_RADIUS);
    return 1;
  }
  if (i > 9)
    return 0;
  if (i == 0) {
    v->x = v->y = 0;
    return 1;
  }
  v->x = (short) (2 * parent.x + (i - 1) % 3 - 1);
  v->y = (short) (2 * parent.y + (i - 1) / 3 - 1);
  return 1;
}

/* The vector of block (bx, by) of level lv: the candidate of the least
 * cost, the first of them on a tie. */
CUCONV_HD CuconvMotionVector
cuconv_motion_best (const CuconvMotionLevel * lv, int bx, int by, int top,
    CuconvMotionVector parent)
{
  CuconvMotionVector v, best = { 0, 0 };
  unsigned least = 0xffffffffu;

  for (int i = 0; cuconv_motion_candidate (top, parent, i, &v); i++) {
    const unsigned c = cuconv_motion_cost (lv, bx, by, v);

    if (c < least) {
      least = c;
      best = v;
    }
  }
  return best;
}

/* The cost of v, in 1/CUCONV_MOTION_SUBPEL of a sample, for block (bx,
 * by) of level 0: the sum of absolute differences along it (the mix
 * between samples), the penalty LAMBDA / SUBPEL a step. */
CUCONV_HD unsigned
cuconv_motion_cost_subpel (const CuconvMotionLevel * lv, int bx, int by,
    CuconvMotionVector v)
{
  const int wx = cuconv_motion_whole (v.x), wy = cuconv_motion_whole (v.y);

  return cuconv_motion_sad (lv, bx, by, wx, wy, v.x - wx *
      CUCONV_MOTION_SUBPEL, v.y - wy * CUCONV_MOTION_SUBPEL) +
      CUCONV_MOTION_LAMBDA / CUCONV_MOTION_SUBPEL *
      (unsigned) ((v.x < 0 ? -v.x : v.x) + (v.y < 0 ? -v.y : v.y));
}

/* The vector of block (bx, by) of level 0 in 1/SUBPEL of a sample, from
 * its whole-sample vector whole: the least cost_subpel () of SUBPEL whole
 * + (dx, dy), dy, dx from -SUBPEL / 2 to SUBPEL / 2 ascending, the first
 * on a tie.  The same sums computed with fewer reads: the mix is
 * separable in exact integers, (h0 (S - fy) + h1 fy + S^2 / 2) >> SHIFT
 * with h0, h1 the horizontal mixes of two rows, so each of the block's
 * BLOCK + 2 rows of b that its candidates reach is read once (its BLOCK +
 * 2 samples, each coordinate clamped as the definition clamps it), mixed
 * at the 5 horizontal phases, and every pair of rows adds to the sums it
 * serves.  Candidate (dx, dy): whole part whole + (d < 0 ? -1 : 0),
 * fraction d & (SUBPEL - 1). */
CUCONV_HD CuconvMotionVector
cuconv_motion_best_subpel (const CuconvMotionLevel * lv, int bx, int by,
    CuconvMotionVector whole)
{
#define CUCONV_MOTION_N (CUCONV_MOTION_SUBPEL + 1)
  const int S = CUCONV_MOTION_SUBPEL, B = CUCONV_MOTION_BLOCK;
  const int x0 = bx * B, y0 = by * B;
  const int nx = B < lv->w - x0 ? B : lv->w - x0;
  const int ny = B < lv->h - y0 ? B : lv->h - y0;
  /* [dy + S / 2][dx + S / 2] */
  unsigned sad[CUCONV_MOTION_N][CUCONV_MOTION_N];
  int hp[CUCONV_MOTION_N][CUCONV_MOTION_BLOCK];
  int hc[CUCONV_MOTION_N][CUCONV_MOTION_BLOCK];
  CuconvMotionVector best = { 0, 0 };
  unsigned least = 0xffffffffu;

  CUCONV_MOTION_UNROLL
  for (int i = 0; i < CUCONV_MOTION_N; i++) {
    CUCONV_MOTION_UNROLL
    for (int j = 0; j < CUCONV_MOTION_N; j++)
      sad[i][j] = 0;
    CUCONV_MOTION_UNROLL
    for (int j = 0; j < B; j++)
      hc[i][j] = 0;
  }
  /* rows y0 + whole.y - 1 + r: row r with row r - 1 serves output row j
   * = r - 1 of dy < 0 (whole part whole.y - 1) and j = r - 2 of dy >= 0 */
  CUCONV_MOTION_UNROLL
  for (int r = 0; r < B + 2; r++) {
    const uint8_t *row = lv->b +
        (size_t) cuconv_motion_clamp (y0 + whole.y - 1 + r, lv->h) *
        lv->stride;
    int s[CUCONV_MOTION_BLOCK + 2];

    CUCONV_MOTION_UNROLL
    for (int i = 0; i < B + 2; i++)
      s[i] = row[cuconv_motion_clamp (x0 + whole.x - 1 + i, lv->w)];
    /* the horizontal mixes: dx < 0 from column whole.x - 1, the others
     * from whole.x */
    CUCONV_MOTION_UNROLL
    for (int i = 0; i < B; i++)
      CUCONV_MOTION_UNROLL
      for (int d = 0; d < CUCONV_MOTION_N; d++) {
        const int f = (d + S / 2) & (S - 1), o = d < S / 2 ? 0 : 1;

        hp[d][i] = hc[d][i];
        hc[d][i] = s[o + i] * (S - f) + s[o + i + 1] * f;
      }
    if (r == 0)
      continue;
    CUCONV_MOTION_UNROLL
    for (int dy = 0; dy < CUCONV_MOTION_N; dy++) {
      const int fy = (dy + S / 2) & (S - 1);
      const int j = dy < S / 2 ? r - 1 : r - 2;
      const uint8_t *ra;

      if (j < 0 || j >= ny)
        continue;
      ra = lv->a + (size_t) (y0 + j) * lv->stride + x0;
      CUCONV_MOTION_UNROLL
      for (int i = 0; i < nx; i++)
        CUCONV_MOTION_UNROLL
        for (int dx = 0; dx < CUCONV_MOTION_N; dx++) {
          const int m = (hp[dx][i] * (S - fy) + hc[dx][i] * fy +
              (1 << (CUCONV_MOTION_SUBPEL_SHIFT - 1))) >>
              CUCONV_MOTION_SUBPEL_SHIFT;
          const int d = ra[i] - m;

          sad[dy][dx] += (unsigned) (d < 0 ? -d : d);
        }
    }
  }

  CUCONV_MOTION_UNROLL
  for (int dy = 0; dy < CUCONV_MOTION_N; dy++)
    CUCONV_MOTION_UNROLL
    for (int dx = 0; dx < CUCONV_MOTION_N; dx++) {
      CuconvMotionVector v;
      unsigned c;

      v.x = (short) (whole.x * S + dx - S / 2);
      v.y = (short) (whole.y * S + dy - S / 2);
      c = sad[dy][dx] + CUCONV_MOTION_LAMBDA / S *
          (unsigned) ((v.x < 0 ? -v.x : v.x) + (v.y < 0 ? -v.y : v.y));
      if (c < least) {
        least = c;
        best = v;
      }
    }
  return best;
#undef CUCONV_MOTION_N
}

/* A level-0 vector's component in a plane subsampled by s (1 or 2): v / s
 * rounded half away from zero. */
CUCONV_HD int
cuconv_motion_scale (int v, int s)
{
  if (s == 1)
    return v;
  return v < 0 ? -((-v + 1) / 2) : (v + 1) / 2;
}

/* The vector sample (x, y) of a plane subsampled by (sx, sy) follows, in
 * that plane's samples: the level-0 vector of the block holding the luma
 * pixel (x sx, y sy), scaled.  field: the level-0 vectors, nbx a row. */
CUCONV_HD CuconvMotionVector
cuconv_motion_at (const CuconvMotionVector * field, int nbx, int x, int y,
    int sx, int sy)
{
  const CuconvMotionVector v = field[(size_t) (y * sy / CUCONV_MOTION_BLOCK)
      * nbx + x * sx / CUCONV_MOTION_BLOCK];
  CuconvMotionVector r;

  r.x = (short) cuconv_motion_scale (v.x, sx);
  r.y = (short) cuconv_motion_scale (v.y, sy);
  return r;
}

/* Word k of a row of samples of depth: a byte at 8 bits, else a
 * little-endian 16-bit word. */
CUCONV_HD unsigned
cuconv_motion_word (const uint8_t * row, int k, int depth)
{
  return depth <= 8 ? row[k] : row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

/* The guide's 8-bit level of word k of a row of samples of depth bits
 * (8 to 16) at shift: ((word >> shift) & (2^depth - 1)) >> (depth - 8). */
CUCONV_HD uint8_t
cuconv_motion_guide (const uint8_t * row, int k, int depth, int shift)
{
  return (uint8_t) (((cuconv_motion_word (row, k, depth) >> shift) &
          ((1u << depth) - 1)) >> (depth - 8));
}

/* A plane of the previous output: rows of stride, w x h pixels of n_comp
 * samples of depth bits (8 to 16) at shift. */
typedef struct
{
  const uint8_t *data;
  ptrdiff_t stride;
  int w;
  int h;
  int n_comp;
  int depth;
  int shift;
} CuconvMotionPrev;

/* The sample of component c of prev that pixel (x, y) follows along v (in
 * 1/SUBPEL of a sample of its plane): the mix of the four samples around
 * (x + v.x / SUBPEL, y + v.y / SUBPEL), their coordinates clamped. */
CUCONV_HD unsigned
cuconv_motion_fetch (const CuconvMotionPrev * pv, int x, int y, int c,
    CuconvMotionVector v)
{
  const int wx = cuconv_motion_whole (v.x), wy = cuconv_motion_whole (v.y);
  const int fx = v.x - wx * CUCONV_MOTION_SUBPEL;
  const int fy = v.y - wy * CUCONV_MOTION_SUBPEL;
  const uint8_t *r0 = pv->data +
      (ptrdiff_t) cuconv_motion_clamp (y + wy, pv->h) * pv->stride;
  const uint8_t *r1 = pv->data +
      (ptrdiff_t) cuconv_motion_clamp (y + wy + 1, pv->h) * pv->stride;
  const int k0 = cuconv_motion_clamp (x + wx, pv->w) * pv->n_comp + c;
  const int k1 = cuconv_motion_clamp (x + wx + 1, pv->w) * pv->n_comp + c;
  const unsigned mask = (1u << pv->depth) - 1;

#define CUCONV_MOTION_SAMPLE(row, k) \
  ((cuconv_motion_word (row, k, pv->depth) >> pv->shift) & mask)
  return cuconv_motion_mix (CUCONV_MOTION_SAMPLE (r0, k0),
      CUCONV_MOTION_SAMPLE (r0, k1), CUCONV_MOTION_SAMPLE (r1, k0),
      CUCONV_MOTION_SAMPLE (r1, k1), fx, fy);
#undef CUCONV_MOTION_SAMPLE
}

#ifdef __cplusplus
extern "C" {
#endif

/* Where the levels and vector fields of a w0 x h0 guide lie in a
 * scratch block: level l of the pyramids at a[l] and b[l] (rows of its
 * width), its vectors at field[l] (cuconv_motion_blocks () of its width a
 * row); bytes in all. */
typedef struct
{
  size_t a[CUCONV_MOTION_LEVELS];
  size_t b[CUCONV_MOTION_LEVELS];
  size_t field[CUCONV_MOTION_LEVELS];
  size_t bytes;
} CuconvMotionLayout;

void cuconv_motion_layout (int w0, int h0, CuconvMotionLayout * l);

/* The level-0 vector field of the guide (component comp of plane p, p->src
 * the input, prev the previous output of the same layout, rows of
 * prev_stride), into scratch (cuconv_motion_layout ()'s bytes for the
 * plane's size, aligned for a vector); the field, cuconv_motion_blocks (width)
 * vectors a row, lies in it.  Host pointers. */
const CuconvMotionVector *cuconv_motion_search (const CuconvPlane * p,
    int comp, const uint8_t * prev, ptrdiff_t prev_stride, void *scratch);

/* cuconv_motion_search () in steps, for threads: the pyramids, then each
 * level from the top down, its rows of blocks [by_begin, by_end) at a
 * time (a level's rows once the level above is done). */
void cuconv_motion_pyramids (const CuconvPlane * p, int comp,
    const uint8_t * prev, ptrdiff_t prev_stride, void *scratch);
void cuconv_motion_level_rows (int w0, int h0, void *scratch, int level,
    int by_begin, int by_end);

/* The compensated temporal denoise of rows row_begin..row_end - 1 of p
 * (docs/semantics.md, "Motion compensation"): p->src the input, p->dst
 * the new state, prev the previous one (p's layout, rows of prev_stride),
 * each filtered sample blended (cuconv_temporal_rows ()) with the
 * previous output where its vector of field (nbx a row) points.  Host
 * pointers. */
void cuconv_temporal_rows_compensated (const CuconvPlane * p,
    const uint8_t * prev, ptrdiff_t prev_stride,
    const CuconvMotionVector * field, int nbx, const uint8_t * k, int first,
    int row_begin, int row_end);

#ifdef __cplusplus
}
#endif

#endif /* __CUCONV_MOTION_H__ */
