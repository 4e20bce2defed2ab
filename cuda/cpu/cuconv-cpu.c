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
 * sums (cuconv-cpu-box.c); the untruncated gaussian, by the GPU's
 * recursive filter (cuconv-cpu-recursive.c); the bilateral and non-local
 * means, their definitions on each band's rows; and Canny, bit for bit,
 * in passes of bands (cuconv-cpu-canny.c).  Pixelate's definition is
 * already the CPU's way, and other taps wider than 64, which the
 * reference sums in double, are left to the reference (cuconv_cpu_takes
 * ()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuconv.h"
#include "cuconv-border.h"
#include "cuconv-cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_FIXED 1
#include <immintrin.h>
#else
#define HAVE_FIXED 0
#endif

struct _CuconvCpu
{
  int n_bands;
  Band planes;                  /* the recursive gaussian's, for every band */
  Band canny;                   /* Canny's frame, for every band */
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
  free (cpu->canny.mem);
  free (cpu);
}

static int
taps_take (const CuconvTaps * t)
{
  return !t->untruncated && t->radius >= 0 &&
      t->radius <= CUCONV_TRUNCATED_MAX_RADIUS;
}

/* The box, of any radius: running sums (cpu_band_box). */
static int
is_box (const CuconvFilter * f)
{
  return f->box && f->n_terms == 1 &&
      f->combine == CUCONV_COMBINE_NONE;
}

int
cuconv_cpu_passes (const CuconvFilter * f, const CuconvPlane * planes,
    int n_planes)
{
  if (f->combine == CUCONV_COMBINE_CANNY)
    return cpu_canny_passes (f, planes, n_planes);
  return cpu_is_recursive (f) ? 2 : 1;
}

int
cuconv_cpu_takes (const CuconvFilter * f)
{
  int s;

  /* the reference's block sums are the CPU's way */
  if (f->combine == CUCONV_COMBINE_PIXELATE)
    return 0;
  if (is_box (f) || cpu_is_recursive (f)
      || f->combine == CUCONV_COMBINE_BILATERAL
      || f->combine == CUCONV_COMBINE_NLMEANS
      || f->combine == CUCONV_COMBINE_CANNY)
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
HOT void
cpu_row_to_float (const uint8_t *restrict src, int wide, int shift,
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

/* Source row y (any integer) as floats with rx samples of border on each
 * side, into ext ((w + 2 rx) * nc floats); a row outside a zero border,
 * or a sample, reads 0.  A border sample copies one of the row's own. */
void
cpu_ext_row (const Plane * pl, int y, float *ext)
{
  const int nc = pl->nc, rx = pl->rx, w = pl->w;
  const int sy = cuconv_border_index (pl->border, y, pl->p->height);
  int k, c;

  if (sy < 0) {
    memset (ext, 0, sizeof (float) * (w + 2 * rx) * nc);
    return;
  }
  cpu_row_to_float (pl->p->src + sy * pl->p->src_stride, pl->wide, pl->shift,
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
void
cpu_write_row (const Plane * pl, int y, const float *v)
{
  row_store (v, pl->wide, pl->shift, (float) pl->mask, pl->n,
      pl->p->dst + y * pl->p->dst_stride);
  write_ops (pl, y);
}

/* t0 (and t1) combined as the filter says, into t0; in: the source row,
 * read when sharpening. */
void
cpu_combine_row (const Plane * pl, int y, float *t0, const float *t1, float *in)
{
  int x;

  switch (pl->combine) {
    case CUCONV_COMBINE_SHARPEN:
      cpu_row_to_float (pl->p->src + y * pl->p->src_stride, pl->wide, pl->shift,
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

int
cpu_band_memory (Band * b, size_t floats)
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
  if (cpu_band_memory (b, (size_t) ext_n + (size_t) n * (terms * taps_y + 3))
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

    cpu_ext_row (pl, y, ext);
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
      cpu_combine_row (pl, yo, t[0], t[1], in);
      cpu_write_row (pl, yo, t[0]);
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
 * cpu_ext_row (). */
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
 * components copied or filled are put back by cpu_write_row ()'s loop. */
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
  if (cpu_band_memory (b, (size_t) ext_n / 4 + 1
          + ((size_t) n * taps_y + 1) / 2) < 0)
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

/* Rows y0..y1 - 1 of the 2-D matrix: rows outer, columns inner, one sum,
 * as the reference. */
static int
band_matrix (const Plane * pl, Band * b, int y0, int y1)
{
  const int n = pl->n, r = pl->m->radius, side = 2 * r + 1;
  const int ext_n = (pl->w + 2 * pl->rx) * pl->nc;
  float *ext, *acc;
  int y, j;

  if (cpu_band_memory (b, (size_t) ext_n * side + (size_t) n) < 0)
    return -1;
  ext = b->mem;
  acc = ext + (size_t) ext_n * side;

  for (y = y0; y < y1; y++) {
    memset (acc, 0, sizeof (float) * n);
    for (j = -r; j <= r; j++) {
      float *e = ext + (size_t) (j + r) * ext_n;
      const float *w = pl->m->w + (size_t) (j + r) * side;

      cpu_ext_row (pl, y + j, e);
      /* one row of the matrix added to the running sum, in the
       * reference's order */
      row_taps_into (e, w, side, pl->nc, n, 1, acc);
    }
    cpu_write_row (pl, y, acc);
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

int
cuconv_cpu_prepare (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f)
{
  size_t floats = 0;
  int i;

  if (f->combine == CUCONV_COMBINE_CANNY)
    return cpu_canny_prepare (&cpu->canny, cpu->band, cpu->n_bands, planes,
        n_planes, f);
  if (!cpu_is_recursive (f))
    return 0;
  for (i = 0; i < n_planes; i++)
    floats += 2 * (size_t) planes[i].width * planes[i].n_comp *
        planes[i].height;
  return cpu_band_memory (&cpu->planes, floats);
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

void
cpu_band_rows (int band, int n_bands, int count, int *from, int *to)
{
  *from = (int) ((long long) count * band / n_bands);
  *to = (int) ((long long) count * (band + 1) / n_bands);
}

int
cuconv_cpu_frame_band (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, int pass, int band)
{
  Band *b = &cpu->band[band];
  const int recursive = cpu_is_recursive (f);
  int i;

  if (f->combine == CUCONV_COMBINE_CANNY)
    return cpu_canny_frame_band (&cpu->canny, b, band, cpu->n_bands, planes,
        n_planes, f, pass);
  for (i = 0; i < n_planes; i++) {
    const CuconvPlane *p = &planes[i];
    Plane pl;
    int from, to, ret;

    if (p->width <= 0 || p->height <= 0)
      continue;
    if (f->combine == CUCONV_COMBINE_BILATERAL
        || f->combine == CUCONV_COMBINE_NLMEANS) {
      /* the definition itself, on the band's rows, bit-exact with the
       * reference */
      cpu_band_rows (band, cpu->n_bands, p->height, &from, &to);
      if ((f->combine == CUCONV_COMBINE_BILATERAL ?
              cuconv_bilateral_rows (p, f, from, to) :
              cuconv_nlmeans_rows (p, f, from, to)) < 0)
        return -1;
      continue;
    }
    plane_init (&pl, p, f);
    if (recursive) {
      float *xp, *yp;

      rec_planes (cpu, planes, i, &xp, &yp);
      cpu_band_rows (band, cpu->n_bands, pass == 0 ? pl.n : p->height,
          &from, &to);
      ret = cpu_rec_band (&pl, xp, yp, pass, from, to, b);
    } else {
      cpu_band_rows (band, cpu->n_bands, p->height, &from, &to);
      if (to <= from)
        continue;
      ret = f->n_terms == 0 ? band_matrix (&pl, b, from, to) : is_box (f) ?
          cpu_band_box (&pl, b, from, to) : plane_fixed (&pl) ?
          band_fixed (&pl, b, from, to) : band_separable (&pl, b, from, to);
    }
    if (ret < 0)
      return -1;
  }
  return 0;
}
