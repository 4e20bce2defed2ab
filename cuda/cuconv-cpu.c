/* gst-cudaconvolve: the CPU engine.  The reference's semantics
 * (cuconv-reference.c, docs/semantics.md) computed for speed: a frame is
 * cut into bands of rows that threads filter side by side; a band goes
 * row by row, each source row converted to floats once with its border
 * around it, filtered horizontally into a ring of the rows the vertical
 * taps read, and every component of an interleaved plane in the same
 * loops.  The tap loops keep their sums in vectors (GCC's vector
 * extension); on x86-64 they are also built for AVX2, picked at run time
 * (target_clones).  The sums run in the reference's order, in float:
 * results match it to within rounding (±1).
 *
 * It takes what the reference computes in float with taps of radius 64 or
 * less, separable or the 2-D matrix; the box of any radius, as running
 * sums; and the untruncated gaussian, by the GPU's recursive filter (the
 * end of this file).  Other taps wider than 64, which the reference sums
 * in double, are left to the reference (cuconv_cpu_takes ()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuconv.h"
#include "cuconv-border.h"
#include "cuconv-recursive.h"
#include "cuconv-recursive-border.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones ("avx2", "default")))
#define HAVE_FIXED 1
#include <immintrin.h>
#else
#define HOT
#define HAVE_FIXED 0
#endif

/* One band's memory, grown only. */
typedef struct
{
  float *mem;
  size_t size;                  /* floats */
} Band;

struct _CuconvCpu
{
  int n_bands;
  Band planes;                  /* the recursive gaussian's, for every band */
  Band band[];
};

CuconvCpu *
cuconv_cpu_new (int n_bands)
{
  CuconvCpu *cpu;

  if (n_bands < 1)
    n_bands = 1;
  cpu = calloc (1, sizeof (CuconvCpu) + sizeof (Band) * n_bands);
  if (cpu)
    cpu->n_bands = n_bands;
  return cpu;
}

void
cuconv_cpu_free (CuconvCpu * cpu)
{
  int i;

  if (!cpu)
    return;
  for (i = 0; i < cpu->n_bands; i++)
    free (cpu->band[i].mem);
  free (cpu->planes.mem);
  free (cpu);
}

static int
taps_take (const CuconvTaps * t)
{
  return !t->untruncated && t->radius >= 0 &&
      t->radius <= CUCONV_TRUNCATED_MAX_RADIUS;
}

/* The box, of any radius: running sums (band_box). */
static int
is_box (const CuconvFilter * f)
{
  return f->box && f->n_terms == 1 &&
      f->combine == CUCONV_COMBINE_NONE;
}

/* The untruncated gaussian in one direction or both, the other the tap
 * [1], alone or sharpened: what the GPU's recursive path takes too. */
static int
is_recursive (const CuconvFilter * f)
{
  int s;

  if (f->n_terms != 1 || (f->combine != CUCONV_COMBINE_NONE &&
          f->combine != CUCONV_COMBINE_SHARPEN))
    return 0;
  for (s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    const CuconvTaps *tx = &f->x[s], *ty = &f->y[s];

    if (!tx->untruncated && !ty->untruncated)
      return 0;
    if ((!tx->untruncated && (tx->radius != 0 || tx->w[0] != 1.0f)) ||
        (!ty->untruncated && (ty->radius != 0 || ty->w[0] != 1.0f)))
      return 0;
  }
  return 1;
}

int
cuconv_cpu_passes (const CuconvFilter * f)
{
  return is_recursive (f) ? 2 : 1;
}

int
cuconv_cpu_takes (const CuconvFilter * f)
{
  int s;

  if (is_box (f) || is_recursive (f)
      || f->combine == CUCONV_COMBINE_BILATERAL)
    return 1;
  if (f->n_terms == 0)
    return f->m.radius <= CUCONV_TRUNCATED_MAX_RADIUS;
  for (s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    if (!taps_take (&f->x[s]) || !taps_take (&f->y[s]))
      return 0;
    if (f->n_terms == 2 && (!taps_take (&f->x2[s]) || !taps_take (&f->y2[s])))
      return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------------- */
/* The loops: n contiguous floats. */

/* The sums of BLOCK samples are kept in VECS vectors of 8 floats across
 * the taps (GCC's vector extension: AVX registers in the AVX2 build, two
 * SSE ones each in the other), in registers rather than memory. */
typedef float vf8 __attribute__ ((vector_size (32)));
#define VECS 8
#define BLOCK (8 * VECS)

/* acc[] += w * src[] over one block (vectors passed by address only: as
 * values they would need AVX in the other build's calling convention). */
static inline void
block_add (vf8 * acc, float w, const float *src)
{
  const vf8 wv = { w, w, w, w, w, w, w, w };
  int v;

#pragma GCC unroll 8
  for (v = 0; v < VECS; v++) {
    vf8 x;

    memcpy (&x, src + 8 * v, sizeof (x));
    acc[v] += wv * x;
  }
}

/* h[j] (+)= sum over i of k[i] * ext[j + i * step], i from 0 to taps - 1
 * in order (the reference's -r..r): added to h when add is not 0, else
 * in place of it. */
HOT static void
row_taps_into (const float *restrict ext, const float *restrict k, int taps,
    int step, int n, int add, float *restrict h)
{
  int i, j, j0;

  for (j0 = 0; j0 + BLOCK <= n; j0 += BLOCK) {
    vf8 acc[VECS];

    if (add)
      memcpy (acc, h + j0, sizeof (acc));
    else
      memset (acc, 0, sizeof (acc));
    for (i = 0; i < taps; i++)
      block_add (acc, k[i], ext + (size_t) i * step + j0);
    memcpy (h + j0, acc, sizeof (acc));
  }
  if (!add)
    for (j = j0; j < n; j++)
      h[j] = 0.0f;
  for (i = 0; i < taps; i++)
    for (j = j0; j < n; j++)
      h[j] += k[i] * ext[(size_t) i * step + j];
}

/* out[j] = sum over i of k[i] * rows[i][j], in order. */
HOT static void
column_taps (const float *const *rows, const float *restrict k, int taps,
    int n, float *restrict out)
{
  int i, j, j0;

  for (j0 = 0; j0 + BLOCK <= n; j0 += BLOCK) {
    vf8 acc[VECS];

    memset (acc, 0, sizeof (acc));
    for (i = 0; i < taps; i++)
      block_add (acc, k[i], rows[i] + j0);
    memcpy (out + j0, acc, sizeof (acc));
  }
  for (j = j0; j < n; j++)
    out[j] = 0.0f;
  for (i = 0; i < taps; i++)
    for (j = j0; j < n; j++)
      out[j] += k[i] * rows[i][j];
}

/* The values of a row of n words (8-bit, or 16-bit little-endian holding
 * depth bits above shift) as floats.  The words may lie at any address
 * (a plane in a memory at an odd byte): read through memcpy (), which
 * compiles to plain loads. */
HOT static void
row_to_float (const uint8_t *restrict src, int wide, int shift,
    unsigned mask, int n, float *restrict dst)
{
  int j;

  if (!wide) {
    for (j = 0; j < n; j++)
      dst[j] = (float) src[j];
  } else {
    for (j = 0; j < n; j++) {
      uint16_t w;

      memcpy (&w, src + 2 * j, sizeof (w));
      dst[j] = (float) ((w >> shift) & mask);
    }
  }
}

/* cuconv_round_sat () of n floats, shifted, into words.  Rounding half
 * away from zero then saturating to 0..max is v + 0.5 clamped to 0..max
 * and truncated: below zero either gives 0.  The clamps are written so
 * that a NaN gives 0, never an undefined conversion. */
HOT static void
row_store (const float *restrict v, int wide, int shift, float max, int n,
    uint8_t *restrict dst)
{
  int j;

  if (!wide) {
    for (j = 0; j < n; j++) {
      float r = v[j] + 0.5f;

      r = r > 0.0f ? r : 0.0f;
      r = r < max ? r : max;
      dst[j] = (uint8_t) (int) r;
    }
  } else {
    for (j = 0; j < n; j++) {
      float r = v[j] + 0.5f;
      uint16_t w;

      r = r > 0.0f ? r : 0.0f;
      r = r < max ? r : max;
      w = (uint16_t) ((unsigned) (int) r << shift);
      memcpy (dst + 2 * j, &w, sizeof (w));
    }
  }
}

/* ---------------------------------------------------------------------- */

/* What one plane is filtered with, as the reference takes it. */
typedef struct
{
  const CuconvPlane *p;
  int nc, w, n;                 /* components, samples a row, floats a row */
  int wide, shift;
  unsigned mask;
  CuconvBorder border;
  int n_terms;                  /* 0: the matrix */
  CuconvCombine combine;
  float amount;
  const CuconvTaps *kx[2], *ky[2];
  const CuconvMatrix *m;
  int rx, ry;                   /* the widest radii read */
  /* the sample each border position of a row copies (cuconv_border_index,
   * -1: 0): x = -rx..-1, then w..w + rx - 1 */
  int border_x[2 * CUCONV_MAX_RADIUS];
} Plane;

/* Source row y (any integer) as floats with rx samples of border on each
 * side, into ext ((w + 2 rx) * nc floats); a row outside a zero border,
 * or a sample, reads 0.  A border sample copies one of the row's own. */
static void
ext_row (const Plane * pl, int y, float *ext)
{
  const int nc = pl->nc, rx = pl->rx, w = pl->w;
  const int sy = cuconv_border_index (pl->border, y, pl->p->height);
  int k, c;

  if (sy < 0) {
    memset (ext, 0, sizeof (float) * (w + 2 * rx) * nc);
    return;
  }
  row_to_float (pl->p->src + sy * pl->p->src_stride, pl->wide, pl->shift,
      pl->mask, pl->n, ext + rx * nc);
  for (k = 0; k < 2 * rx; k++) {
    const int at = k < rx ? k : w + k, sx = pl->border_x[k];

    for (c = 0; c < nc; c++)
      ext[at * nc + c] = sx < 0 ? 0.0f : ext[(sx + rx) * nc + c];
  }
}

/* In output row y, the components not filtered: the source, or the fill
 * value. */
static void
write_ops (const Plane * pl, int y)
{
  const CuconvPlane *p = pl->p;
  const int nc = pl->nc, bytes = pl->wide ? 2 : 1;
  uint8_t *dst = p->dst + y * p->dst_stride;
  const uint8_t *src = p->src + y * p->src_stride;
  int x, c;

  for (c = 0; c < nc; c++) {
    if (p->op[c] == CUCONV_COMP_FILTER)
      continue;
    for (x = 0; x < pl->w; x++) {
      const int k = (x * nc + c) * bytes;

      if (p->op[c] == CUCONV_COMP_COPY) {
        memcpy (dst + k, src + k, bytes);
      } else {
        unsigned word = p->fill << pl->shift;

        dst[k] = (uint8_t) word;
        if (bytes == 2)
          dst[k + 1] = (uint8_t) (word >> 8);
      }
    }
  }
}

/* Writes the output row y: the filtered values v where a component is
 * filtered, the source or the fill value elsewhere. */
static void
write_row (const Plane * pl, int y, const float *v)
{
  row_store (v, pl->wide, pl->shift, (float) pl->mask, pl->n,
      pl->p->dst + y * pl->p->dst_stride);
  write_ops (pl, y);
}

/* t0 (and t1) combined as the filter says, into t0; in: the source row,
 * read when sharpening. */
static void
combine_row (const Plane * pl, int y, float *t0, const float *t1, float *in)
{
  int x;

  switch (pl->combine) {
    case CUCONV_COMBINE_SHARPEN:
      row_to_float (pl->p->src + y * pl->p->src_stride, pl->wide, pl->shift,
          pl->mask, pl->n, in);
      for (x = 0; x < pl->n; x++)
        t0[x] = in[x] + pl->amount * (in[x] - t0[x]);
      break;
    case CUCONV_COMBINE_MAGNITUDE:
      for (x = 0; x < pl->n; x++)
        t0[x] = sqrtf (t0[x] * t0[x] + t1[x] * t1[x]);
      break;
    case CUCONV_COMBINE_ABS_SUM:
      for (x = 0; x < pl->n; x++)
        t0[x] = fabsf (t0[x] + t1[x]);
      break;
    case CUCONV_COMBINE_NONE:
    default:
      break;
  }
}

static int
band_memory (Band * b, size_t floats)
{
  float *mem;

  if (floats <= b->size)
    return 0;
  mem = realloc (b->mem, sizeof (float) * floats);
  if (!mem)
    return -1;
  b->mem = mem;
  b->size = floats;
  return 0;
}

/* Rows y0..y1 - 1 of a separable filter. */
static int
band_separable (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, ext_n = (pl->w + 2 * pl->rx) * pl->nc;
  const int taps_y = 2 * pl->ry + 1, terms = pl->n_terms;
  const float *rows[2 * CUCONV_TRUNCATED_MAX_RADIUS + 1];
  float *ext, *ring[2], *in, *t[2];
  int y, i, k;

  /* the ring holds the horizontal pass of virtual rows y - ry .. y + ry
   * at slot (row + ry) % taps_y, each term's taps padded to the widest */
  if (band_memory (b, (size_t) ext_n + (size_t) n * (terms * taps_y + 3))
      < 0)
    return -1;
  ext = b->mem;
  in = ext + ext_n;
  t[0] = in + n;
  t[1] = t[0] + n;
  ring[0] = t[1] + n;
  ring[1] = ring[0] + (size_t) n * taps_y;

  for (y = y0 - pl->ry; y < y1 + pl->ry; y++) {
    const int slot = (y + pl->ry) % taps_y;

    ext_row (pl, y, ext);
    for (k = 0; k < terms; k++) {
      const CuconvTaps *kx = pl->kx[k];

      row_taps_into (ext + (pl->rx - kx->radius) * pl->nc, kx->w,
          2 * kx->radius + 1, pl->nc, n, 0, ring[k] + (size_t) slot * n);
    }
    if (y < y0 + pl->ry)
      continue;

    /* output row yo = y - ry: every ring row is in */
    {
      const int yo = y - pl->ry;

      for (k = 0; k < terms; k++) {
        const CuconvTaps *ky = pl->ky[k];

        for (i = -ky->radius; i <= ky->radius; i++)
          rows[i + ky->radius] = ring[k] + (size_t) ((yo + i + pl->ry) %
              taps_y) * n;
        column_taps (rows, ky->w, 2 * ky->radius + 1, n, t[k]);
      }
      combine_row (pl, yo, t[0], t[1], in);
      write_row (pl, yo, t[0]);
    }
  }
  return 0;
}

/* ---------------------------------------------------------------------- */
/* 8-bit planes, one term of non-negative taps below 1, radius 8 or less
 * (the gaussian, mostly): 16-bit fixed point, 16 samples a vector, on
 * machines with AVX2.  A sample s enters as s << 7 and each product is
 * (s << 7) * round (k * 2^15) / 2^15 rounded (pmulhrsw): the horizontal
 * sums and then the vertical ones are 1/128ths of a level, rounded once at
 * the end.  Each product is off by 1/256 of a level at most and each tap
 * by 2^-16: over 17 taps twice, the result is within 0.3 of the exact
 * value, so within ±1 of the reference's. */

#define FIXED_MAX_RADIUS 8

#if HAVE_FIXED
/* Taps that fit: each in 0..0.99, summing to 1 at most, so that no sum
 * leaves 16 bits. */
static int
taps_fixed (const CuconvTaps * t)
{
  double sum = 0.0;
  int i;

  if (t->untruncated || t->radius > FIXED_MAX_RADIUS)
    return 0;
  for (i = 0; i <= 2 * t->radius; i++) {
    if (!(t->w[i] >= 0.0f && t->w[i] < 0.99f))
      return 0;
    sum += t->w[i];
  }
  return sum <= 1.0 + 1e-6;
}
#endif

static int
plane_fixed (const Plane * pl)
{
#if HAVE_FIXED
  return !pl->wide && pl->n_terms == 1 &&
      pl->combine == CUCONV_COMBINE_NONE && taps_fixed (pl->kx[0]) &&
      taps_fixed (pl->ky[0]) && __builtin_cpu_supports ("avx2");
#else
  return 0;
#endif
}

#if HAVE_FIXED
static void
taps_q15 (const CuconvTaps * t, int16_t * q)
{
  int i;

  for (i = 0; i <= 2 * t->radius; i++)
    q[i] = (int16_t) (t->w[i] * 32768.0f + 0.5f);
}

/* pmulhrsw of one sample */
static inline int16_t
mulhrs (int16_t a, int16_t b)
{
  return (int16_t) (((int32_t) a * b + 16384) >> 15);
}

/* h[j] = sum over i of q[i] * (ext[j + i * step] << 7), in 1/128ths. */
__attribute__ ((target ("avx2")))
static void
fixed_row (const uint8_t * ext, const int16_t * q, int taps, int step, int n,
    int16_t * h)
{
  int i, j, j0;

  for (j0 = 0; j0 + 64 <= n; j0 += 64) {
    __m256i acc[4] = { _mm256_setzero_si256 (), _mm256_setzero_si256 (),
      _mm256_setzero_si256 (), _mm256_setzero_si256 ()
    };

    for (i = 0; i < taps; i++) {
      const __m256i w = _mm256_set1_epi16 (q[i]);
      const uint8_t *src = ext + (size_t) i * step + j0;
      int v;

      for (v = 0; v < 4; v++) {
        const __m256i x = _mm256_slli_epi16 (_mm256_cvtepu8_epi16
            (_mm_loadu_si128 ((const __m128i *) (src + 16 * v))), 7);

        acc[v] = _mm256_add_epi16 (acc[v], _mm256_mulhrs_epi16 (x, w));
      }
    }
    for (i = 0; i < 4; i++)
      _mm256_storeu_si256 ((__m256i *) (h + j0 + 16 * i), acc[i]);
  }
  for (j = j0; j < n; j++) {
    int16_t acc = 0;

    for (i = 0; i < taps; i++)
      acc += mulhrs ((int16_t) (ext[(size_t) i * step + j] << 7), q[i]);
    h[j] = acc;
  }
}

/* out[j] = the sum over i of q[i] * rows[i][j], rounded to a level and
 * saturated to 0..255. */
__attribute__ ((target ("avx2")))
static void
fixed_column (const int16_t * const *rows, const int16_t * q, int taps,
    int n, uint8_t * out)
{
  const __m256i half = _mm256_set1_epi16 (64);
  int i, j, j0;

  for (j0 = 0; j0 + 64 <= n; j0 += 64) {
    __m256i acc[4] = { _mm256_setzero_si256 (), _mm256_setzero_si256 (),
      _mm256_setzero_si256 (), _mm256_setzero_si256 ()
    };
    int v;

    for (i = 0; i < taps; i++) {
      const __m256i w = _mm256_set1_epi16 (q[i]);

      for (v = 0; v < 4; v++)
        acc[v] = _mm256_add_epi16 (acc[v], _mm256_mulhrs_epi16
            (_mm256_loadu_si256 ((const __m256i *) (rows[i] + j0 + 16 * v)),
                w));
    }
    for (v = 0; v < 4; v++)
      acc[v] = _mm256_srai_epi16 (_mm256_add_epi16 (acc[v], half), 7);
    _mm256_storeu_si256 ((__m256i *) (out + j0),
        _mm256_permute4x64_epi64 (_mm256_packus_epi16 (acc[0], acc[1]),
            0xd8));
    _mm256_storeu_si256 ((__m256i *) (out + j0 + 32),
        _mm256_permute4x64_epi64 (_mm256_packus_epi16 (acc[2], acc[3]),
            0xd8));
  }
  for (j = j0; j < n; j++) {
    int16_t acc = 0;

    for (i = 0; i < taps; i++)
      acc += mulhrs (rows[i][j], q[i]);
    acc = (int16_t) ((acc + 64) >> 7);
    out[j] = acc < 0 ? 0 : acc > 255 ? 255 : (uint8_t) acc;
  }
}

/* Source row y as bytes with rx samples of border on each side, as
 * ext_row (). */
static void
fixed_ext_row (const Plane * pl, int y, uint8_t * ext)
{
  const int nc = pl->nc, rx = pl->rx, w = pl->w;
  const int sy = cuconv_border_index (pl->border, y, pl->p->height);
  int k, c;

  if (sy < 0) {
    memset (ext, 0, (size_t) (w + 2 * rx) * nc);
    return;
  }
  memcpy (ext + rx * nc, pl->p->src + sy * pl->p->src_stride, pl->n);
  for (k = 0; k < 2 * rx; k++) {
    const int at = k < rx ? k : w + k, sx = pl->border_x[k];

    for (c = 0; c < nc; c++)
      ext[at * nc + c] = sx < 0 ? 0 : ext[(sx + rx) * nc + c];
  }
}

/* Rows y0..y1 - 1, as band_separable () with one term, in fixed point;
 * components copied or filled are put back by write_row ()'s loop. */
static int
band_fixed (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, ext_n = (pl->w + 2 * pl->rx) * pl->nc;
  const int taps_y = 2 * pl->ry + 1;
  const CuconvTaps *kx = pl->kx[0], *ky = pl->ky[0];
  const int16_t *rows[2 * FIXED_MAX_RADIUS + 1];
  int16_t qx[2 * FIXED_MAX_RADIUS + 1], qy[2 * FIXED_MAX_RADIUS + 1];
  uint8_t *ext;
  int16_t *ring;
  int y, i;

  /* in floats: the byte row, then the ring of 16-bit rows */
  if (band_memory (b, (size_t) ext_n / 4 + 1 + ((size_t) n * taps_y + 1) / 2)
      < 0)
    return -1;
  ring = (int16_t *) b->mem;
  ext = (uint8_t *) (ring + (size_t) n * taps_y);
  taps_q15 (kx, qx);
  taps_q15 (ky, qy);

  for (y = y0 - pl->ry; y < y1 + pl->ry; y++) {
    fixed_ext_row (pl, y, ext);
    fixed_row (ext + (pl->rx - kx->radius) * pl->nc, qx, 2 * kx->radius + 1,
        pl->nc, n, ring + (size_t) ((y + pl->ry) % taps_y) * n);
    if (y < y0 + pl->ry)
      continue;
    {
      const int yo = y - pl->ry;
      uint8_t *dst = pl->p->dst + yo * pl->p->dst_stride;

      for (i = -ky->radius; i <= ky->radius; i++)
        rows[i + ky->radius] = ring + (size_t) ((yo + i + pl->ry) %
            taps_y) * n;
      fixed_column (rows, qy, 2 * ky->radius + 1, n, dst);
      write_ops (pl, yo);
    }
  }
  return 0;
}
#else
static int
band_fixed (const Plane * pl, Band * b, int y0, int y1)
{
  return -1;
}
#endif

/* The horizontal sums of source row y over 2 rx + 1 samples, each
 * component on its own: a running sum, exact in double (the samples are
 * integers), into h. */
static void
box_row (const Plane * pl, int y, float *ext, double *h)
{
  const int nc = pl->nc, taps = 2 * pl->rx + 1;
  int x, c, i;

  ext_row (pl, y, ext);
  for (c = 0; c < nc; c++) {
    double sum = 0.0;

    for (i = 0; i < taps; i++)
      sum += ext[i * nc + c];
    h[c] = sum;
    for (x = 1; x < pl->w; x++) {
      sum += ext[(x - 1 + taps) * nc + c] - ext[(x - 1) * nc + c];
      h[x * nc + c] = sum;
    }
  }
}

/* Rows y0..y1 - 1 of the box, at a cost that does not grow with the
 * radius: each column's sum of the horizontal sums, slid down a row by
 * adding the row that comes in and taking off the one that leaves, both
 * summed again (exact: integers in double); the mean rounded.  The
 * reference's float taps of 1 / (2r + 1) round the same mean within a
 * fraction of the last bit. */
static int
band_box (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, ry = pl->ry;
  const size_t ext_n = (size_t) (pl->w + 2 * pl->rx) * pl->nc;
  const double scale = 1.0 / ((2.0 * pl->rx + 1.0) * (2.0 * ry + 1.0));
  float *ext, *out;
  double *h, *col;
  int y, x;

  /* h and col are doubles: two floats each, 8-byte aligned after ext_n
   * rounded up to an even count */
  if (band_memory (b, ext_n + 1 + 5 * (size_t) n) < 0)
    return -1;
  ext = b->mem;
  h = (double *) (b->mem + ((ext_n + 1) & ~(size_t) 1));
  col = h + n;
  out = (float *) (col + n);

  memset (col, 0, sizeof (double) * n);
  for (y = y0 - ry; y <= y0 + ry; y++) {
    box_row (pl, y, ext, h);
    for (x = 0; x < n; x++)
      col[x] += h[x];
  }
  for (y = y0; y < y1; y++) {
    for (x = 0; x < n; x++)
      out[x] = (float) (col[x] * scale);
    write_row (pl, y, out);
    if (y + 1 == y1)
      break;
    box_row (pl, y + ry + 1, ext, h);
    for (x = 0; x < n; x++)
      col[x] += h[x];
    box_row (pl, y - ry, ext, h);
    for (x = 0; x < n; x++)
      col[x] -= h[x];
  }
  return 0;
}

/* Rows y0..y1 - 1 of the 2-D matrix: rows outer, columns inner, one sum,
 * as the reference. */
static int
band_matrix (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, r = pl->m->radius, side = 2 * r + 1;
  const int ext_n = (pl->w + 2 * pl->rx) * pl->nc;
  float *ext, *acc;
  int y, j;

  if (band_memory (b, (size_t) ext_n * side + (size_t) n) < 0)
    return -1;
  ext = b->mem;
  acc = ext + (size_t) ext_n * side;

  for (y = y0; y < y1; y++) {
    memset (acc, 0, sizeof (float) * n);
    for (j = -r; j <= r; j++) {
      float *e = ext + (size_t) (j + r) * ext_n;
      const float *w = pl->m->w + (size_t) (j + r) * side;

      ext_row (pl, y + j, e);
      /* one row of the matrix added to the running sum, in the
       * reference's order */
      row_taps_into (e, w, side, pl->nc, n, 1, acc);
    }
    write_row (pl, y, acc);
  }
  return 0;
}

static void
plane_init (Plane * pl, const CuconvPlane * p, const CuconvFilter * f)
{
  const int depth = p->depth > 8 ? p->depth : 8;
  int k;

  memset (pl, 0, sizeof (*pl));
  pl->p = p;
  pl->nc = p->n_comp;
  pl->w = p->width;
  pl->n = p->width * p->n_comp;
  pl->wide = depth > 8;
  pl->shift = depth > 8 ? p->shift : 0;
  pl->mask = (1u << depth) - 1;
  pl->border = f->border;
  pl->n_terms = f->n_terms;
  pl->combine = f->combine;
  pl->amount = f->amount;
  pl->m = &f->m;
  pl->kx[0] = &f->x[p->sub_x - 1];
  pl->ky[0] = &f->y[p->sub_y - 1];
  pl->kx[1] = &f->x2[p->sub_x - 1];
  pl->ky[1] = &f->y2[p->sub_y - 1];
  if (f->n_terms == 0) {
    pl->rx = pl->ry = f->m.radius;
  } else {
    for (k = 0; k < f->n_terms; k++) {
      if (pl->kx[k]->radius > pl->rx)
        pl->rx = pl->kx[k]->radius;
      if (pl->ky[k]->radius > pl->ry)
        pl->ry = pl->ky[k]->radius;
    }
  }
  for (k = 0; k < 2 * pl->rx; k++)
    pl->border_x[k] = cuconv_border_index (pl->border, k < pl->rx ?
        k - pl->rx : pl->w + k - pl->rx, pl->w);
}

/* ---------------------------------------------------------------------- */
/* The untruncated gaussian: the GPU's recursive filter (cuconv-recursive.h:
 * complex one-pole sections, causal and anticausal, started from the
 * border's states), at a cost that does not grow with sigma.  Two passes
 * over the frame: the columns (each band a range of them, side by side),
 * into a float plane the engine keeps for every band, then the rows (each
 * band a range of them).  Sums and states in double. */

typedef CuconvCplx Cx;

static inline Cx
cmul (Cx a, Cx b)
{
  Cx r = { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
  return r;
}

static inline Cx
cadd (Cx a, Cx b)
{
  Cx r = { a.re + b.re, a.im + b.im };
  return r;
}

/* The arithmetic of border_states: every product and sum rounded on its
 * own. */
#define CX_MK(re, im) ((Cx) { (re), (im) })
#define CX_MAD(m, u, v) cadd (cmul ((m), (u)), (v))
#define CX_SCALE(m, x) cmul ((m), CX_MK ((x), 0.0))

/* Section s's states z[-1] and w[n] at the border, as the kernels'
 * (cuconv-recursive-border.h). */
CUCONV_REC_BORDER_STATES (static, border_states, double, Cx, CuconvRecDir,
    re, im, CX_MK, cmul, CX_MAD, CX_SCALE)

/* The directions of a plane: each untruncated one's sections. */
typedef struct
{
  int rows, cols;               /* filtered along rows, along columns */
  CuconvRecDir dx, dy;
} Rec;

static void
rec_init (Rec * r, const Plane * pl)
{
  const CuconvTaps *tx = pl->kx[0], *ty = pl->ky[0];
  const int depth = pl->wide ? (pl->p->depth) : 8;
  int ns;

  r->rows = tx->untruncated;
  r->cols = ty->untruncated;
  ns = cuconv_recursive_sections (depth, pl->combine ==
      CUCONV_COMBINE_SHARPEN ? pl->amount : 1.0, r->rows + r->cols);
  if (r->rows)
    cuconv_recursive_dir_init (&r->dx, tx->sigma, ns, pl->w,
        CUCONV_REC_MAX_SEG, 1);
  if (r->cols)
    cuconv_recursive_dir_init (&r->dy, ty->sigma, ns, pl->p->height,
        CUCONV_REC_MAX_SEG, 1);
}

/* One line of n samples x[k * step] filtered into acc[k] (double). */
static void
rec_line (const CuconvRecDir * d, CuconvBorder border, const float *x,
    size_t step, int n, double *acc)
{
  int s, k;

  for (k = 0; k < n; k++)
    acc[k] = -d->c * x[k * step];
  for (s = 0; s < d->n_sections; s++) {
    const Cx p = d->p[s], a = d->a[s];
    Cx zc = { 0.0, 0.0 }, za = { 0.0, 0.0 }, z, w;

    for (k = 0; k < n; k++)
      zc = cadd (cmul (p, zc), (Cx) { x[k * step], 0.0 });
    for (k = n - 1; k >= 0; k--)
      za = cadd (cmul (p, za), (Cx) { x[k * step], 0.0 });
    border_states (d, s, border, x[0], x[(size_t) (n - 1) * step], zc, za,
        &z, &w);
    for (k = 0; k < n; k++) {
      z = cadd (cmul (p, z), (Cx) { x[k * step], 0.0 });
      acc[k] += a.re * z.re - a.im * z.im;
    }
    for (k = n - 1; k >= 0; k--) {
      w = cadd (cmul (p, w), (Cx) { x[k * step], 0.0 });
      acc[k] += a.re * w.re - a.im * w.im;
    }
  }
}

/* Pass 0: columns j0..j1 - 1 of the plane (n = width * n_comp of them),
 * its samples as floats into xp and the columns filtered into yp (both n
 * x height), the lines side by side so that the loops run across them. */
static int
rec_columns (const Plane * pl, const Rec * r, float *xp, float *yp, int j0,
    int j1, Band * b)
{
  const int m = j1 - j0, h = pl->p->height, n = pl->n;
  const int bytes = pl->wide ? 2 : 1;
  const CuconvRecDir *d = &r->dy;
  double *acc, *st;
  int s, y, j;

  if (m <= 0)
    return 0;
  for (y = 0; y < h; y++)
    row_to_float (pl->p->src + y * pl->p->src_stride + (size_t) j0 * bytes,
        pl->wide, pl->shift, pl->mask, m, xp + (size_t) y * n + j0);
  if (!r->cols) {
    for (y = 0; y < h; y++)
      memcpy (yp + (size_t) y * n + j0, xp + (size_t) y * n + j0,
          sizeof (float) * m);
    return 0;
  }
  /* acc: the sums, h x m; st: four complex states a column */
  if (band_memory (b, 2 * ((size_t) h * m + 8 * (size_t) m)) < 0)
    return -1;
  acc = (double *) b->mem;
  st = acc + (size_t) h * m;

  for (y = 0; y < h; y++)
    for (j = 0; j < m; j++)
      acc[(size_t) y * m + j] = -d->c * xp[(size_t) y * n + j0 + j];
  for (s = 0; s < d->n_sections; s++) {
    const Cx p = d->p[s], a = d->a[s];
    double *zr = st, *zi = st + m, *wr = st + 2 * m, *wi = st + 3 * m;

    /* the zero-initial totals, then the border's states in their place */
    memset (st, 0, sizeof (double) * 4 * m);
    for (y = 0; y < h; y++) {
      const float *x = xp + (size_t) y * n + j0;

      for (j = 0; j < m; j++) {
        const double re = p.re * zr[j] - p.im * zi[j] + x[j];

        zi[j] = p.re * zi[j] + p.im * zr[j];
        zr[j] = re;
      }
    }
    for (y = h - 1; y >= 0; y--) {
      const float *x = xp + (size_t) y * n + j0;

      for (j = 0; j < m; j++) {
        const double re = p.re * wr[j] - p.im * wi[j] + x[j];

        wi[j] = p.re * wi[j] + p.im * wr[j];
        wr[j] = re;
      }
    }
    for (j = 0; j < m; j++) {
      Cx sc, sa;

      border_states (d, s, pl->border, xp[j0 + j],
          xp[(size_t) (h - 1) * n + j0 + j], (Cx) { zr[j], zi[j] },
          (Cx) { wr[j], wi[j] }, &sc, &sa);
      zr[j] = sc.re;
      zi[j] = sc.im;
      wr[j] = sa.re;
      wi[j] = sa.im;
    }
    /* the runs from the true states */
    for (y = 0; y < h; y++) {
      const float *x = xp + (size_t) y * n + j0;
      double *o = acc + (size_t) y * m;

      for (j = 0; j < m; j++) {
        const double re = p.re * zr[j] - p.im * zi[j] + x[j];

        zi[j] = p.re * zi[j] + p.im * zr[j];
        zr[j] = re;
        o[j] += a.re * zr[j] - a.im * zi[j];
      }
    }
    for (y = h - 1; y >= 0; y--) {
      const float *x = xp + (size_t) y * n + j0;
      double *o = acc + (size_t) y * m;

      for (j = 0; j < m; j++) {
        const double re = p.re * wr[j] - p.im * wi[j] + x[j];

        wi[j] = p.re * wi[j] + p.im * wr[j];
        wr[j] = re;
        o[j] += a.re * wr[j] - a.im * wi[j];
      }
    }
  }
  for (y = 0; y < h; y++)
    for (j = 0; j < m; j++)
      yp[(size_t) y * n + j0 + j] = (float) acc[(size_t) y * m + j];
  return 0;
}

/* Pass 1: rows y0..y1 - 1 from yp, each component along the row, then
 * sharpened if asked, rounded and written. */
static int
rec_rows (const Plane * pl, const Rec * r, const float *yp, int y0, int y1,
    Band * b)
{
  const int n = pl->n, nc = pl->nc, w = pl->w;
  double *acc;
  float *out, *in;
  int y, c, x;

  if (band_memory (b, 2 * (size_t) w + 2 * (size_t) n) < 0)
    return -1;
  acc = (double *) b->mem;
  out = (float *) (acc + w);
  in = out + n;
  for (y = y0; y < y1; y++) {
    const float *line = yp + (size_t) y * n;

    if (r->rows) {
      for (c = 0; c < nc; c++) {
        rec_line (&r->dx, pl->border, line + c, nc, w, acc);
        for (x = 0; x < w; x++)
          out[x * nc + c] = (float) acc[x];
      }
    } else {
      memcpy (out, line, sizeof (float) * n);
    }
    combine_row (pl, y, out, NULL, in);
    write_row (pl, y, out);
  }
  return 0;
}

int
cuconv_cpu_prepare (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f)
{
  size_t floats = 0;
  int i;

  if (!is_recursive (f))
    return 0;
  for (i = 0; i < n_planes; i++)
    floats += 2 * (size_t) planes[i].width * planes[i].n_comp *
        planes[i].height;
  return band_memory (&cpu->planes, floats);
}

/* Plane i's xp and yp in the engine's planes (cuconv_cpu_prepare ()). */
static void
rec_planes (CuconvCpu * cpu, const CuconvPlane * planes, int i, float **xp,
    float **yp)
{
  size_t at = 0;
  int k;

  for (k = 0; k < i; k++)
    at += 2 * (size_t) planes[k].width * planes[k].n_comp * planes[k].height;
  *xp = cpu->planes.mem + at;
  *yp = *xp + (size_t) planes[i].width * planes[i].n_comp * planes[i].height;
}

/* The share of count that band takes. */
static void
band_range (const CuconvCpu * cpu, int band, int count, int *from, int *to)
{
  *from = (int) ((long long) count * band / cpu->n_bands);
  *to = (int) ((long long) count * (band + 1) / cpu->n_bands);
}

int
cuconv_cpu_frame_band (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, int pass, int band)
{
  Band *b = &cpu->band[band];
  const int recursive = is_recursive (f);
  int i;

  for (i = 0; i < n_planes; i++) {
    const CuconvPlane *p = &planes[i];
    Plane pl;
    int from, to, ret;

    if (p->width <= 0 || p->height <= 0)
      continue;
    if (f->combine == CUCONV_COMBINE_BILATERAL) {
      /* the definition itself, on the band's rows: a window of weights
       * and a table of range weights, bit-exact with the reference */
      band_range (cpu, band, p->height, &from, &to);
      if (cuconv_bilateral_rows (p, f, from, to) < 0)
        return -1;
      continue;
    }
    plane_init (&pl, p, f);
    if (recursive) {
      float *xp, *yp;
      Rec r;

      rec_init (&r, &pl);
      rec_planes (cpu, planes, i, &xp, &yp);
      band_range (cpu, band, pass == 0 ? pl.n : p->height, &from, &to);
      ret = pass == 0 ? rec_columns (&pl, &r, xp, yp, from, to, b) :
          rec_rows (&pl, &r, yp, from, to, b);
    } else {
      band_range (cpu, band, p->height, &from, &to);
      if (to <= from)
        continue;
      ret = f->n_terms == 0 ? band_matrix (&pl, b, from, to) : is_box (f) ?
          band_box (&pl, b, from, to) : plane_fixed (&pl) ?
          band_fixed (&pl, b, from, to) : band_separable (&pl, b, from, to);
    }
    if (ret < 0)
      return -1;
  }
  return 0;
}
