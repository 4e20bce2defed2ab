/* gst-cudaconvolve: the CPU engine's Canny, bit for bit the definition
 * (cuconv-canny.c, docs/semantics.md, "Canny") in bands of rows.
 *
 * Each filtered component of a plane goes through the stages below, a
 * pass each (cuconv_cpu_passes ()): every band on its own rows, the
 * passes one after the other, so that a stage reads what every band
 * wrote in the ones before.
 *
 *   LOAD      the samples, smoothed horizontally, into the smoothed plane
 *             s (or, with a vertical smoothing to come, into a);
 *   VERTICAL  a smoothed vertically into s (left out without it);
 *   EDGES     the 3x3 Sobel of s, the suppression and the thresholds into
 *             the edge map, then the hysteresis within the band's rows;
 *   GLOBAL    band 0 alone: the hysteresis across the bands;
 *   WRITE     the output rows.
 *
 * EDGES computes the magnitudes of the rows just outside its band again
 * from s, so that no band reads another's magnitudes, and its flood
 * stays in its own rows of the edge map.  A path from a strong pixel that
 * a band's flood did not follow leaves the band, so it crosses an edge
 * pixel on the first or last row of one: GLOBAL floods the whole plane
 * from those.
 *
 * Up to 12 bits a sample the gradient (|gx|, |gy| <= 4 4095) fits in 16
 * bits, and its squared magnitude and the direction's products (at most
 * 4 4095 (13573 + 65536)) in 32: those loops run with AVX2 where the
 * machine has it (16 pixels a step, picked at run time), else as plain
 * loops GCC vectorises.  Deeper samples take 64-bit loops on the
 * definition's own decisions (cuconv-canny.h).
 *
 * The memory is the engine's, grown only (cpu_canny_prepare ()): the
 * frame's s, a, edge map and GLOBAL's stack, and each band's rows of
 * magnitudes and directions and its stack.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <string.h>

#include "cuconv-border.h"
#include "cuconv-canny.h"
#include "cuconv-cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_AVX2 1
#include <immintrin.h>
#else
#define HAVE_AVX2 0
#endif

/* The edge map's states, as the definition's. */
enum
{
  NONE = 0,
  WEAK = 1,
  EDGE = 2,
};

enum
{
  STAGE_LOAD,
  STAGE_VERTICAL,
  STAGE_EDGES,
  STAGE_GLOBAL,
  STAGE_WRITE,
  N_STAGES
};

/* Memory is cut on this boundary (bytes). */
#define ALIGN 64

/* What one component of one plane is computed with. */
typedef struct
{
  const CuconvPlane *p;
  const CuconvFilter *f;
  int c, nc;
  int w, h, pw;                 /* pw: a row of s, m and the edge map */
  int depth, wide, shift;
  unsigned mask;
  int rx, ry;
  const int *qx, *qy;
  long long low, high;
  int avx2;                     /* the AVX2 loops run here */
  /* the frame's memory (cpu_canny_prepare ()) */
  uint16_t *s;                  /* h + 1 rows of pw: s framed by a column
                                 * each side (what the border reads there);
                                 * the last row zeros */
  uint16_t *a;                  /* h rows of w: the horizontal smoothing,
                                 * when a vertical one follows */
  uint8_t *edge;                /* h + 2 rows of pw: NONE on the frame */
  int *stack;                   /* w h: GLOBAL's flood, where a pixel is
                                 * pushed once at most (an EDGE seed, or a
                                 * WEAK one made EDGE) */
} Unit;

/* One band's memory. */
typedef struct
{
  int *map;                     /* the border's columns -rx .. w - 1 + rx */
  uint16_t *ext;                /* a row with rx samples of border */
  void *m[4];                   /* rows of magnitudes framed by 0 (int32_t
                                 * or long long): three, and one of 0 */
  int16_t *dir[3];              /* the directions of m[0..2]'s rows */
  int *stack;                   /* a pixel of the band's rows each */
} Scratch;

static size_t
align_up (size_t n)
{
  return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* The frame's memory for a plane of w x h, cut from base into u (NULL:
 * none); returns its bytes. */
static size_t
shared_layout (Unit * u, int w, int h, int vertical, uint8_t * base)
{
  const size_t pw = (size_t) w + 2;
  size_t at = 0, s, a, e, st;

  s = at;
  at += align_up (sizeof (uint16_t) * pw * ((size_t) h + 1));
  a = at;
  if (vertical)
    at += align_up (sizeof (uint16_t) * (size_t) w * h);
  e = at;
  at += align_up (pw * ((size_t) h + 2));
  st = at;
  at += align_up (sizeof (int) * (size_t) w * h);
  if (u) {
    u->s = (uint16_t *) (base + s);
    u->a = (uint16_t *) (base + a);
    u->edge = base + e;
    u->stack = (int *) (base + st);
  }
  return at;
}

/* A band's memory for a plane of w, rows at most a band, cut from base
 * into sc (NULL: none); returns its bytes. */
static size_t
band_layout (Scratch * sc, int w, int rows, uint8_t * base)
{
  const size_t pw = (size_t) w + 2, ew = (size_t) w +
      2 * CUCONV_MAX_CANNY_RADIUS;
  size_t at = 0, map, ext, m, dir, st;

  map = at;
  at += align_up (sizeof (int) * ew);
  ext = at;
  at += align_up (sizeof (uint16_t) * ew);
  m = at;
  at += 4 * align_up (sizeof (long long) * pw);
  dir = at;
  at += 3 * align_up (sizeof (int16_t) * (size_t) w);
  st = at;
  at += align_up (sizeof (int) * (size_t) w * rows);
  if (sc) {
    sc->map = (int *) (base + map);
    sc->ext = (uint16_t *) (base + ext);
    for (int i = 0; i < 4; i++)
      sc->m[i] = base + m + i * align_up (sizeof (long long) * pw);
    for (int i = 0; i < 3; i++)
      sc->dir[i] = (int16_t *) (base + dir + i * align_up (sizeof (int16_t) *
              (size_t) w));
    sc->stack = (int *) (base + st);
  }
  return at;
}

/* The smoothing's radius across the rows of p. */
static int
vertical_radius (const CuconvPlane * p, const CuconvFilter * f)
{
  return f->y[p->sub_y > 1 ? 1 : 0].radius;
}

/* The passes of each component of p. */
static int
plane_stages (const CuconvPlane * p, const CuconvFilter * f)
{
  return vertical_radius (p, f) > 0 ? N_STAGES : N_STAGES - 1;
}

static int
plane_used (const CuconvPlane * p)
{
  return p->width > 0 && p->height > 0;
}

int
cpu_canny_passes (const CuconvFilter * f, const CuconvPlane * planes,
    int n_planes)
{
  int n = 0;

  for (int i = 0; i < n_planes; i++)
    if (plane_used (&planes[i]))
      n += plane_stages (&planes[i], f) * planes[i].n_comp;
  return n;
}

static size_t
bytes_to_floats (size_t bytes)
{
  return (bytes + sizeof (float) - 1) / sizeof (float);
}

int
cpu_canny_prepare (Band * shared, Band * bands, int n_bands,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f)
{
  size_t frame = 0, band = 0;

  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane *p = &planes[i];
    const int rows = (p->height + n_bands - 1) / n_bands;
    size_t n;

    if (!plane_used (p))
      continue;
    n = shared_layout (NULL, p->width, p->height,
        vertical_radius (p, f) > 0, NULL);
    frame = n > frame ? n : frame;
    n = band_layout (NULL, p->width, rows, NULL);
    band = n > band ? n : band;
  }
  if (cpu_band_memory (shared, bytes_to_floats (frame)) < 0)
    return -1;
  for (int b = 0; b < n_bands; b++)
    if (cpu_band_memory (&bands[b], bytes_to_floats (band)) < 0)
      return -1;
  return 0;
}

static void
unit_init (Unit * u, const CuconvPlane * p, const CuconvFilter * f, int c,
    Band * shared)
{
  const int sx = p->sub_x > 1 ? 1 : 0, sy = p->sub_y > 1 ? 1 : 0;

  memset (u, 0, sizeof (*u));
  u->p = p;
  u->f = f;
  u->c = c;
  u->nc = p->n_comp;
  u->w = p->width;
  u->h = p->height;
  u->pw = p->width + 2;
  u->depth = p->depth > 8 ? p->depth : 8;
  u->wide = u->depth > 8;
  u->shift = u->wide ? p->shift : 0;
  u->mask = (1u << u->depth) - 1;
  u->rx = f->x[sx].radius;
  u->ry = f->y[sy].radius;
  u->qx = f->canny_x[sx];
  u->qy = f->canny_y[sy];
  u->low = cuconv_canny_threshold (f->canny_low, u->depth);
  u->high = cuconv_canny_threshold (f->canny_high, u->depth);
#if HAVE_AVX2
  u->avx2 = __builtin_cpu_supports ("avx2");
#endif
  shared_layout (u, u->w, u->h, u->ry > 0, (uint8_t *) shared->mem);
}

/* ---------------------------------------------------------------------- */
/* LOAD and VERTICAL */

/* Component c of n pixels of a row (nc components, bytes or 16-bit
 * little-endian words) as samples, into out. */
HOT static void
load_row (const uint8_t *restrict src, int wide, int shift, unsigned mask,
    int nc, int c, int n, uint16_t *restrict out)
{
  if (!wide) {
    if (nc == 1)
      for (int x = 0; x < n; x++)
        out[x] = src[x];
    else
      for (int x = 0; x < n; x++)
        out[x] = src[x * nc + c];
  } else {
    for (int x = 0; x < n; x++) {
      const uint8_t *word = src + 2 * ((size_t) x * nc + c);

      out[x] = (uint16_t) (((word[0] | (unsigned) word[1] << 8) >> shift) &
          mask);
    }
  }
}

/* Eight 32-bit sums, and eight samples (GCC's vector extension: an AVX
 * register in the AVX2 build, two SSE ones in the other). */
typedef int32_t vi32x8 __attribute__ ((vector_size (32)));
typedef uint16_t vu16x8 __attribute__ ((vector_size (16)));

/* The smoothing's sums of a block of pixels stay in registers across the
 * taps: TAPS_VECS vectors of them. */
#define TAPS_VECS 4
#define TAPS_BLOCK (8 * TAPS_VECS)

/* out[x] = (sum over i of q[i] rows[i][x] + 2^(SHIFT - 1)) >> SHIFT, i =
 * 0 .. taps - 1, from x0 on, in 32 bits: the samples and the taps are
 * below 2^16 and 2^13, the sums below 2^29. */
HOT static void
taps_row (const uint16_t *const *rows, const int *q, int taps, int x0, int n,
    uint16_t *restrict out)
{
  for (; x0 + TAPS_BLOCK <= n; x0 += TAPS_BLOCK) {
    vi32x8 acc[TAPS_VECS];

    for (int v = 0; v < TAPS_VECS; v++)
      acc[v] = (vi32x8) { } + (1 << (CUCONV_CANNY_TAP_SHIFT - 1));
    for (int i = 0; i < taps; i++) {
      const vi32x8 k = (vi32x8) { } + q[i];

#pragma GCC unroll 4
      for (int v = 0; v < TAPS_VECS; v++) {
        vu16x8 r;

        memcpy (&r, rows[i] + x0 + 8 * v, sizeof (r));
        acc[v] += k * __builtin_convertvector (r, vi32x8);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < TAPS_VECS; v++) {
      const vu16x8 r = __builtin_convertvector (acc[v] >>
          CUCONV_CANNY_TAP_SHIFT, vu16x8);

      memcpy (out + x0 + 8 * v, &r, sizeof (r));
    }
  }
  for (; x0 < n; x0++) {
    int32_t sum = 1 << (CUCONV_CANNY_TAP_SHIFT - 1);

    for (int i = 0; i < taps; i++)
      sum += q[i] * rows[i][x0];
    out[x0] = (uint16_t) (sum >> CUCONV_CANNY_TAP_SHIFT);
  }
}

#if HAVE_AVX2
/* taps_row () for samples below 2^15, with AVX2, 16 pixels a step: two
 * taps at a time by pmaddwd of their interleaved samples; returns the
 * columns done. */
__attribute__ ((target ("avx2")))
static int
taps_avx2 (const uint16_t * const *rows, const int *q, int taps, int n,
    uint16_t * out)
{
  const __m256i half = _mm256_set1_epi32 (1 << (CUCONV_CANNY_TAP_SHIFT - 1));
  int x;

  for (x = 0; x + 16 <= n; x += 16) {
    /* the sums of pixels 0-3 and 8-11, and of 4-7 and 12-15 */
    __m256i lo = half, hi = half;

    for (int i = 0; i < taps; i += 2) {
      const __m256i a = _mm256_loadu_si256 ((const __m256i *) (rows[i] + x));
      const __m256i b = i + 1 < taps ?
          _mm256_loadu_si256 ((const __m256i *) (rows[i + 1] + x)) :
          _mm256_setzero_si256 ();
      const __m256i k = _mm256_set1_epi32 ((int) ((unsigned) q[i] & 0xffff) |
          (int) ((unsigned) (i + 1 < taps ? q[i + 1] : 0) << 16));

      lo = _mm256_add_epi32 (lo, _mm256_madd_epi16 (_mm256_unpacklo_epi16 (a,
                  b), k));
      hi = _mm256_add_epi32 (hi, _mm256_madd_epi16 (_mm256_unpackhi_epi16 (a,
                  b), k));
    }
    /* packed in each half: pixels 0-7, then 8-15 */
    _mm256_storeu_si256 ((__m256i *) (out + x),
        _mm256_packus_epi32 (_mm256_srai_epi32 (lo, CUCONV_CANNY_TAP_SHIFT),
            _mm256_srai_epi32 (hi, CUCONV_CANNY_TAP_SHIFT)));
  }
  return x;
}
#endif

/* The smoothing of a row: out[x] the sum of q[i] rows[i][x], i = 0 ..
 * taps - 1, rounded. */
static void
smooth_row (const Unit * u, const uint16_t * const *rows, const int *q,
    int taps, uint16_t * out)
{
  int x = 0;

#if HAVE_AVX2
  if (u->avx2 && u->depth <= 12)
    x = taps_avx2 (rows, q, taps, u->w, out);
#endif
  taps_row (rows, q, taps, x, u->w, out);
}

/* s's row y framed: the columns -1 and w as the border reads them. */
static void
frame_row (const Unit * u, uint16_t * row)
{
  const int l = cuconv_border_index (u->f->border, -1, u->w);
  const int r = cuconv_border_index (u->f->border, u->w, u->w);

  row[0] = l < 0 ? 0 : row[1 + l];
  row[u->w + 1] = r < 0 ? 0 : row[1 + r];
}

/* Rows y0..y1 - 1: the samples, smoothed horizontally, into s (framed)
 * or, with a vertical smoothing to come, into a. */
static void
stage_load (const Unit * u, Scratch * sc, int y0, int y1)
{
  const CuconvPlane *p = u->p;
  const int w = u->w, rx = u->rx;

  if (rx > 0)
    for (int k = 0; k < w + 2 * rx; k++)
      sc->map[k] = cuconv_border_index (u->f->border, k - rx, w);
  for (int y = y0; y < y1; y++) {
    const uint8_t *src = p->src + (ptrdiff_t) y * p->src_stride;
    uint16_t *out = u->ry > 0 ? u->a + (size_t) y * w :
        u->s + (size_t) y * u->pw + 1;

    if (rx == 0) {
      /* one tap of 2^SHIFT leaves the samples as they are */
      load_row (src, u->wide, u->shift, u->mask, u->nc, u->c, w, out);
    } else {
      uint16_t *ext = sc->ext;
      const uint16_t *taps[CUCONV_MAX_CANNY_TAPS];

      load_row (src, u->wide, u->shift, u->mask, u->nc, u->c, w, ext + rx);
      for (int k = 0; k < rx; k++) {
        const int l = sc->map[k], r = sc->map[w + rx + k];

        ext[k] = l < 0 ? 0 : ext[rx + l];
        ext[w + rx + k] = r < 0 ? 0 : ext[rx + r];
      }
      for (int i = 0; i <= 2 * rx; i++)
        taps[i] = ext + i;
      smooth_row (u, taps, u->qx, 2 * rx + 1, out);
    }
    if (u->ry == 0)
      frame_row (u, out - 1);
  }
}

/* Rows y0..y1 - 1 of a smoothed vertically into s (framed). */
static void
stage_vertical (const Unit * u, Scratch * sc, int y0, int y1)
{
  const uint16_t *rows[CUCONV_MAX_CANNY_TAPS];
  const uint16_t *zero = u->s + (size_t) u->h * u->pw;
  const int ry = u->ry;

  for (int y = y0; y < y1; y++) {
    uint16_t *out = u->s + (size_t) y * u->pw + 1;

    for (int j = 0; j <= 2 * ry; j++) {
      const int k = cuconv_border_index (u->f->border, y + j - ry, u->h);

      rows[j] = k < 0 ? zero : u->a + (size_t) k * u->w;
    }
    smooth_row (u, rows, u->qy, 2 * ry + 1, out);
    frame_row (u, out - 1);
  }
}

/* ---------------------------------------------------------------------- */
/* EDGES */

/* The gradient of a row from the framed rows of s above (r0), at (r1) and
 * below (r2) it, from column x on: m[1 + x] its squared magnitude, dir[x]
 * its direction (cuconv_canny_direction (), in 32 bits). */
static void
gradient_row32 (const uint16_t * r0, const uint16_t * r1,
    const uint16_t * r2, int x, int w, int32_t * m, int16_t * dir)
{
  for (; x < w; x++) {
    const int32_t gx = r0[x + 2] + 2 * r1[x + 2] + r2[x + 2] - r0[x] -
        2 * r1[x] - r2[x];
    const int32_t gy = r2[x] + 2 * r2[x + 1] + r2[x + 2] - r0[x] -
        2 * r0[x + 1] - r0[x + 2];
    const int32_t ax = gx < 0 ? -gx : gx, ay = gy < 0 ? -gy : gy;
    const int32_t t22 = ax * CUCONV_CANNY_TAN22, ay15 = ay * 32768;
    const int diagonal = (gx ^ gy) < 0 ? CUCONV_CANNY_DIAGONAL_UP :
        CUCONV_CANNY_DIAGONAL_DOWN;

    m[x + 1] = gx * gx + gy * gy;
    dir[x] = (int16_t) (ay15 < t22 ? CUCONV_CANNY_HORIZONTAL :
        ay15 > t22 + ax * 65536 ? CUCONV_CANNY_VERTICAL : diagonal);
  }
}

/* The suppression and the thresholds of a row from column x on: e[x]
 * NONE, WEAK or EDGE from its magnitudes mc, those of the rows above (mp)
 * and below (mn), all framed by 0, and its directions (cuconv_canny_keep
 * (), in 32 bits: a diagonal's second neighbour compared strictly). */
static void
suppress_row32 (const int32_t * mp, const int32_t * mc, const int32_t * mn,
    const int16_t * dir, int x, int w, int32_t low, int32_t high, uint8_t * e)
{
  /* every neighbour read, then picked, and no branch: GCC vectorises it */
  for (; x < w; x++) {
    const int32_t m = mc[x + 1], left = mc[x], right = mc[x + 2];
    const int32_t up_left = mp[x], up = mp[x + 1], up_right = mp[x + 2];
    const int32_t down_left = mn[x], down = mn[x + 1], down_right = mn[x + 2];
    const int d = dir[x];
    /* the neighbours (x + dx, y + dy) and (x - dx, y - dy) of
     * cuconv_canny_step () */
    const int32_t first = d == CUCONV_CANNY_HORIZONTAL ? left :
        d == CUCONV_CANNY_DIAGONAL_DOWN ? up_left :
        d == CUCONV_CANNY_VERTICAL ? up : up_right;
    const int32_t second = d == CUCONV_CANNY_HORIZONTAL ? right :
        d == CUCONV_CANNY_DIAGONAL_DOWN ? down_right :
        d == CUCONV_CANNY_VERTICAL ? down : down_left;
    const int keep = (m > low) & (m > first) & (m - (d & 1) >= second);

    e[x] = (uint8_t) (keep * (WEAK + (m > high)));
  }
}

#if HAVE_AVX2
/* The same with AVX2, 16 pixels a step; return the columns done.
 *
 * The gradient in 16-bit lanes (|gx|, |gy| <= 4 4095), its squared
 * magnitude by pmaddwd of (gx, gy) pairs.  The direction's tests in 16
 * bits, with k = floor (ax 13573 / 2^15) (pmulhw by 2 13573):
 * ay 2^15 < ax 13573 is ay < k + 1 for ax > 0 (ax 13573 is then no
 * multiple of 2^15, 13573 being odd), never for ax = 0; ay 2^15 > ax
 * (13573 + 65536) is ay - 2 ax > k. */
__attribute__ ((target ("avx2")))
static int
gradient_avx2 (const uint16_t * r0, const uint16_t * r1,
    const uint16_t * r2, int w, int32_t * m, int16_t * dir)
{
  const __m256i tan22 = _mm256_set1_epi16 (2 * CUCONV_CANNY_TAN22);
  const __m256i zero = _mm256_setzero_si256 ();
  const __m256i down = _mm256_set1_epi16 (CUCONV_CANNY_DIAGONAL_DOWN);
  const __m256i up_bit = _mm256_set1_epi16 (CUCONV_CANNY_DIAGONAL_UP ^
      CUCONV_CANNY_DIAGONAL_DOWN);
  const __m256i vertical = _mm256_set1_epi16 (CUCONV_CANNY_VERTICAL);
  int x;

  for (x = 0; x + 16 <= w; x += 16) {
#define LOAD(p) _mm256_loadu_si256 ((const __m256i *) (p))
    const __m256i a0 = LOAD (r0 + x), a1 = LOAD (r0 + x + 1);
    const __m256i a2 = LOAD (r0 + x + 2), b0 = LOAD (r1 + x);
    const __m256i b2 = LOAD (r1 + x + 2), c0 = LOAD (r2 + x);
    const __m256i c1 = LOAD (r2 + x + 1), c2 = LOAD (r2 + x + 2);
#undef LOAD
    const __m256i gx = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_sub_epi16
            (a2, a0), _mm256_sub_epi16 (c2, c0)),
        _mm256_slli_epi16 (_mm256_sub_epi16 (b2, b0), 1));
    const __m256i gy = _mm256_add_epi16 (_mm256_add_epi16 (_mm256_sub_epi16
            (c0, a0), _mm256_sub_epi16 (c2, a2)),
        _mm256_slli_epi16 (_mm256_sub_epi16 (c1, a1), 1));
    const __m256i ax = _mm256_abs_epi16 (gx), ay = _mm256_abs_epi16 (gy);
    const __m256i k = _mm256_mulhi_epi16 (ax, tan22);
    /* lanes all ones where true; (ax > 0) is -1 */
    const __m256i is_h = _mm256_cmpgt_epi16 (_mm256_sub_epi16 (k,
            _mm256_cmpgt_epi16 (ax, zero)), ay);
    const __m256i is_v = _mm256_cmpgt_epi16 (_mm256_sub_epi16
        (_mm256_sub_epi16 (ay, ax), ax), k);
    const __m256i signs_differ = _mm256_srai_epi16 (_mm256_xor_si256 (gx,
            gy), 15);
    const __m256i diagonal = _mm256_or_si256 (down,
        _mm256_and_si256 (signs_differ, up_bit));
    const __m256i d = _mm256_andnot_si256 (is_h,
        _mm256_blendv_epi8 (diagonal, vertical, is_v));
    /* the pairs of pixels 0-3 and 8-11, then of 4-7 and 12-15 */
    const __m256i lo = _mm256_unpacklo_epi16 (gx, gy);
    const __m256i hi = _mm256_unpackhi_epi16 (gx, gy);
    const __m256i mlo = _mm256_madd_epi16 (lo, lo);
    const __m256i mhi = _mm256_madd_epi16 (hi, hi);

    _mm256_storeu_si256 ((__m256i *) (dir + x), d);
    _mm256_storeu_si256 ((__m256i *) (m + x + 1),
        _mm256_permute2x128_si256 (mlo, mhi, 0x20));
    _mm256_storeu_si256 ((__m256i *) (m + x + 9),
        _mm256_permute2x128_si256 (mlo, mhi, 0x31));
  }
  return x;
}

/* The states of 8 pixels from column x, of magnitudes m, in 32-bit
 * lanes. */
__attribute__ ((target ("avx2")))
static inline __m256i
suppress8_avx2 (const int32_t * mp, const int32_t * mc, const int32_t * mn,
    const int16_t * dir, int x, __m256i m, __m256i low, __m256i high)
{
#define LOAD(p) _mm256_loadu_si256 ((const __m256i *) (p))
  const __m256i one = _mm256_set1_epi32 (1);
  const __m256i d = _mm256_cvtepi16_epi32 (_mm_loadu_si128 ((const __m128i *)
          (dir + x)));
  const __m256i h = _mm256_cmpeq_epi32 (d,
      _mm256_set1_epi32 (CUCONV_CANNY_HORIZONTAL));
  const __m256i dd = _mm256_cmpeq_epi32 (d,
      _mm256_set1_epi32 (CUCONV_CANNY_DIAGONAL_DOWN));
  const __m256i v = _mm256_cmpeq_epi32 (d,
      _mm256_set1_epi32 (CUCONV_CANNY_VERTICAL));
  /* the neighbours (x + dx, y + dy) and (x - dx, y - dy) of
   * cuconv_canny_step () */
  const __m256i first = _mm256_blendv_epi8 (_mm256_blendv_epi8
      (_mm256_blendv_epi8 (LOAD (mp + x + 2), LOAD (mp + x + 1), v),
          LOAD (mp + x), dd), LOAD (mc + x), h);
  const __m256i second = _mm256_blendv_epi8 (_mm256_blendv_epi8
      (_mm256_blendv_epi8 (LOAD (mn + x), LOAD (mn + x + 1), v),
          LOAD (mn + x + 2), dd), LOAD (mc + x + 2), h);
#undef LOAD
  /* m - strict >= second: m + 1 - strict > second */
  const __m256i keep = _mm256_and_si256 (_mm256_and_si256
      (_mm256_cmpgt_epi32 (m, low), _mm256_cmpgt_epi32 (m, first)),
      _mm256_cmpgt_epi32 (_mm256_sub_epi32 (_mm256_add_epi32 (m, one),
              _mm256_and_si256 (d, one)), second));

  /* WEAK, or EDGE above high */
  return _mm256_and_si256 (keep, _mm256_sub_epi32 (one,
          _mm256_cmpgt_epi32 (m, high)));
}

/* Pushes at + x + i for each bit i of bits on stack[*n]. */
static inline void
push_bits (unsigned bits, int at, int *stack, int *n)
{
  while (bits) {
    stack[(*n)++] = at + __builtin_ctz (bits);
    bits &= bits - 1;
  }
}

__attribute__ ((target ("avx2")))
static int
suppress_avx2 (const int32_t * mp, const int32_t * mc, const int32_t * mn,
    const int16_t * dir, int w, int32_t low, int32_t high, uint8_t * e,
    int at, int *stack, int *n)
{
  const __m256i lo = _mm256_set1_epi32 (low), hi = _mm256_set1_epi32 (high);
  int x;

  for (x = 0; x + 16 <= w; x += 16) {
    const __m256i m0 = _mm256_loadu_si256 ((const __m256i *) (mc + x + 1));
    const __m256i m1 = _mm256_loadu_si256 ((const __m256i *) (mc + x + 9));
    const __m256i any = _mm256_or_si256 (_mm256_cmpgt_epi32 (m0, lo),
        _mm256_cmpgt_epi32 (m1, lo));
    __m256i s0, s1, s16;
    __m128i states;

    /* most pixels are no candidates */
    if (_mm256_testz_si256 (any, any)) {
      _mm_storeu_si128 ((__m128i *) (e + x), _mm_setzero_si128 ());
      continue;
    }
    s0 = suppress8_avx2 (mp, mc, mn, dir, x, m0, lo, hi);
    s1 = suppress8_avx2 (mp, mc, mn, dir, x + 8, m1, lo, hi);
    /* to 16 bits: pixels 0-3, 8-11, 4-7, 12-15; in order, then bytes */
    s16 = _mm256_permute4x64_epi64 (_mm256_packs_epi32 (s0, s1), 0xd8);
    states = _mm_packus_epi16 (_mm256_castsi256_si128 (s16),
        _mm256_extracti128_si256 (s16, 1));
    _mm_storeu_si128 ((__m128i *) (e + x), states);
    push_bits ((unsigned) _mm_movemask_epi8 (_mm_cmpeq_epi8 (states,
                _mm_set1_epi8 (EDGE))), at + x, stack, n);
  }
  return x;
}
#endif

/* gradient_row32 () and suppress_row32 () in 64 bits, on the
 * definition's own decisions. */
static void
gradient_row64 (const uint16_t * r0, const uint16_t * r1,
    const uint16_t * r2, int w, long long *m, int16_t * dir)
{
  for (int x = 0; x < w; x++) {
    const int gx = r0[x + 2] + 2 * r1[x + 2] + r2[x + 2] - r0[x] -
        2 * r1[x] - r2[x];
    const int gy = r2[x] + 2 * r2[x + 1] + r2[x + 2] - r0[x] -
        2 * r0[x + 1] - r0[x + 2];

    m[x + 1] = (long long) gx * gx + (long long) gy * gy;
    dir[x] = (int16_t) cuconv_canny_direction (gx, gy);
  }
}

static void
suppress_row64 (const long long *mp, const long long *mc,
    const long long *mn, const int16_t * dir, int w, long long low,
    long long high, uint8_t * e)
{
  const long long *rows[3] = { mp, mc, mn };

  for (int x = 0; x < w; x++) {
    const long long m = mc[x + 1];
    const int d = dir[x];
    int dx, dy;

    cuconv_canny_step (d, &dx, &dy);
    e[x] = NONE;
    if (m > low && cuconv_canny_keep (m, rows[1 + dy][x + 1 + dx],
            rows[1 - dy][x + 1 - dx], d))
      e[x] = m > high ? EDGE : WEAK;
  }
}

/* Pushes the EDGE pixels of row e (w, at index at of the edge map) on
 * stack[*n]. */
static void
push_edges (const uint8_t * e, int w, int at, int *stack, int *n)
{
  int x = 0;

  /* most pixels are not edges: eight at a time */
  for (; x + 8 <= w; x += 8) {
    uint64_t v;

    memcpy (&v, e + x, sizeof (v));
    if (!(v & 0x0202020202020202ull))
      continue;
    for (int k = x; k < x + 8; k++)
      if (e[k] == EDGE)
        stack[(*n)++] = at + k;
  }
  for (; x < w; x++)
    if (e[x] == EDGE)
      stack[(*n)++] = at + x;
}

/* The gradient of row y (within the plane) into m and dir. */
static void
gradient (const Unit * u, int y, void *m, int16_t * dir)
{
  const uint16_t *zero = u->s + (size_t) u->h * u->pw;
  const uint16_t *r[3];

  for (int k = 0; k < 3; k++) {
    const int v = cuconv_border_index (u->f->border, y + k - 1, u->h);

    r[k] = v < 0 ? zero : u->s + (size_t) v * u->pw;
  }
  if (u->depth <= 12) {
    int32_t *m32 = m;
    int x = 0;

    m32[0] = m32[u->w + 1] = 0;
#if HAVE_AVX2
    if (u->avx2)
      x = gradient_avx2 (r[0], r[1], r[2], u->w, m32, dir);
#endif
    gradient_row32 (r[0], r[1], r[2], x, u->w, m32, dir);
  } else {
    long long *m64 = m;

    m64[0] = m64[u->w + 1] = 0;
    gradient_row64 (r[0], r[1], r[2], u->w, m64, dir);
  }
}

/* The edge states of a row into e (at index at of the edge map) from the
 * magnitudes of the rows around it and its directions; its EDGE pixels
 * pushed on stack[*n]. */
static void
suppress (const Unit * u, const void *mp, const void *mc, const void *mn,
    const int16_t * dir, uint8_t * e, int at, int *stack, int *n)
{
  const int32_t low = (int32_t) (u->low < INT32_MAX ? u->low : INT32_MAX);
  const int32_t high = (int32_t) (u->high < INT32_MAX ? u->high : INT32_MAX);
  int x = 0;

  if (u->depth > 12) {
    suppress_row64 (mp, mc, mn, dir, u->w, u->low, u->high, e);
    push_edges (e, u->w, at, stack, n);
    return;
  }
  /* the squared magnitudes stay below 2^30: thresholds past INT32_MAX
   * keep nothing either way */
#if HAVE_AVX2
  if (u->avx2)
    x = suppress_avx2 (mp, mc, mn, dir, u->w, low, high, e, at, stack, n);
#endif
  suppress_row32 (mp, mc, mn, dir, x, u->w, low, high, e);
  push_edges (e + x, u->w - x, at + x, stack, n);
}

/* Makes the pixels j + k (k = 0 .. count - 1) of edge that are WEAK
 * EDGE, pushed on stack[*n]. */
static inline void
grow (uint8_t * edge, int j, int count, int *stack, int *n)
{
  for (int k = 0; k < count; k++) {
    if (edge[j + k] == WEAK) {
      edge[j + k] = EDGE;
      stack[(*n)++] = j + k;
    }
  }
}

/* The hysteresis from stack[0..n - 1] over edge's indices lo..hi - 1
 * (whole rows): every WEAK pixel connected to one on the stack becomes
 * an EDGE.  Most pixels have no WEAK neighbour: each row of three is
 * tested at once. */
static void
flood (uint8_t * edge, int pw, int lo, int hi, int *stack, int n)
{
  while (n > 0) {
    const int i = stack[--n];
    const uint8_t *e = edge + i;

    if ((e[-1] | e[1]) & WEAK) {
      grow (edge, i - 1, 1, stack, &n);
      grow (edge, i + 1, 1, stack, &n);
    }
    if (i - pw >= lo && ((e[-pw - 1] | e[-pw] | e[-pw + 1]) & WEAK))
      grow (edge, i - pw - 1, 3, stack, &n);
    if (i + pw < hi && ((e[pw - 1] | e[pw] | e[pw + 1]) & WEAK))
      grow (edge, i + pw - 1, 3, stack, &n);
  }
}

/* Rows y0..y1 - 1 of the edge map, and the hysteresis within them. */
static void
stage_edges (const Unit * u, Scratch * sc, int y0, int y1)
{
  const int w = u->w, pw = u->pw, deep = u->depth > 12;
  void *zero = sc->m[3];
  int n = 0;

  /* the magnitudes of row r in slot (r - y0 + 1) % 3, the rows outside
   * the plane 0 */
  memset (zero, 0, (deep ? sizeof (long long) : sizeof (int32_t)) * pw);
  for (int r = y0 - 1; r <= y0; r++)
    if (r >= 0)
      gradient (u, r, sc->m[(r - y0 + 1) % 3], sc->dir[(r - y0 + 1) % 3]);

  for (int y = y0; y < y1; y++) {
    const int k = y - y0 + 1;
    uint8_t *e = u->edge + (size_t) (y + 1) * pw;
    void *mp = y > 0 ? sc->m[(k - 1) % 3] : zero;
    void *mc = sc->m[k % 3];
    void *mn = y + 1 < u->h ? sc->m[(k + 1) % 3] : zero;

    if (y + 1 < u->h)
      gradient (u, y + 1, mn, sc->dir[(k + 1) % 3]);
    e[0] = e[w + 1] = NONE;
    suppress (u, mp, mc, mn, sc->dir[k % 3], e + 1, (y + 1) * pw + 1,
        sc->stack, &n);
  }
  flood (u->edge, pw, (y0 + 1) * pw, (y1 + 1) * pw, sc->stack, n);
}

/* GLOBAL: the hysteresis across the bands, from the EDGE pixels on the
 * first and last row of each (the flood within a band stopped there
 * only). */
static void
stage_global (const Unit * u, int n_bands)
{
  int n = 0;

  for (int b = 0; b < n_bands; b++) {
    int y0, y1;

    cpu_band_rows (b, n_bands, u->h, &y0, &y1);
    if (y1 <= y0)
      continue;
    push_edges (u->edge + (size_t) (y0 + 1) * u->pw + 1, u->w,
        (y0 + 1) * u->pw + 1, u->stack, &n);
    if (y1 - 1 > y0)
      push_edges (u->edge + (size_t) y1 * u->pw + 1, u->w, y1 * u->pw + 1,
          u->stack, &n);
  }
  flood (u->edge, u->pw, 0, (u->h + 2) * u->pw, u->stack, n);
}

/* ---------------------------------------------------------------------- */
/* WRITE */

/* 8-bit words of one component: 255 on an EDGE, else 0. */
HOT static void
write_row8 (const uint8_t *restrict e, int w, uint8_t *restrict dst)
{
  for (int x = 0; x < w; x++)
    dst[x] = (uint8_t) (0 - (e[x] >> 1));
}

/* Output rows y0..y1 - 1 of the unit's component: max on an EDGE else 0
 * where it is filtered; the source or the fill elsewhere. */
static void
stage_write (const Unit * u, int y0, int y1)
{
  const CuconvPlane *p = u->p;
  const int nc = u->nc, c = u->c, bytes = u->wide ? 2 : 1;
  const CuconvCompOp op = p->op[c];
  const unsigned fill = p->fill << u->shift;

  for (int y = y0; y < y1; y++) {
    const uint8_t *e = u->edge + (size_t) (y + 1) * u->pw + 1;
    const uint8_t *src = p->src + (ptrdiff_t) y * p->src_stride;
    uint8_t *dst = p->dst + (ptrdiff_t) y * p->dst_stride;

    if (op == CUCONV_COMP_FILTER && bytes == 1 && nc == 1) {
      write_row8 (e, u->w, dst);
      continue;
    }
    for (int x = 0; x < u->w; x++) {
      const size_t k = ((size_t) x * nc + c) * bytes;
      unsigned v;

      if (op == CUCONV_COMP_COPY) {
        memcpy (dst + k, src + k, bytes);
        continue;
      }
      v = op == CUCONV_COMP_FILL ? fill : e[x] == EDGE ? u->mask << u->shift :
          0;
      dst[k] = (uint8_t) v;
      if (bytes == 2)
        dst[k + 1] = (uint8_t) (v >> 8);
    }
  }
}

/* ---------------------------------------------------------------------- */

int
cpu_canny_frame_band (Band * shared, Band * b, int band, int n_bands,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f, int pass)
{
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane *p = &planes[i];
    const int stages = plane_stages (p, f);
    Unit u;
    Scratch sc;
    int stage, y0, y1;

    if (!plane_used (p))
      continue;
    /* the passes: each plane's components in turn, each its stages */
    if (pass >= stages * p->n_comp) {
      pass -= stages * p->n_comp;
      continue;
    }
    /* without a vertical smoothing its stage is left out */
    stage = pass % stages;
    if (stages < N_STAGES && stage >= STAGE_VERTICAL)
      stage++;
    unit_init (&u, p, f, pass / stages, shared);
    cpu_band_rows (band, n_bands, u.h, &y0, &y1);
    band_layout (&sc, u.w, y1 - y0, (uint8_t *) b->mem);
    if (p->op[u.c] != CUCONV_COMP_FILTER && stage != STAGE_WRITE)
      return 0;
    switch (stage) {
      case STAGE_LOAD:
        if (band == 0) {
          /* what no band writes: the zero row below s, the frame of
           * the edge map above and below the plane */
          memset (u.s + (size_t) u.h * u.pw, 0, sizeof (uint16_t) * u.pw);
          memset (u.edge, NONE, u.pw);
          memset (u.edge + (size_t) (u.h + 1) * u.pw, NONE, u.pw);
        }
        if (y1 > y0)
          stage_load (&u, &sc, y0, y1);
        break;
      case STAGE_VERTICAL:
        if (y1 > y0)
          stage_vertical (&u, &sc, y0, y1);
        break;
      case STAGE_EDGES:
        if (y1 > y0)
          stage_edges (&u, &sc, y0, y1);
        break;
      case STAGE_GLOBAL:
        if (band == 0)
          stage_global (&u, n_bands);
        break;
      default:
        stage_write (&u, y0, y1);
        break;
    }
    return 0;
  }
  return 0;
}
