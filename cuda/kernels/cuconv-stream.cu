/* gst-cudaconvolve: the streaming separable kernel's plane launcher: 8-bit
 * samples, a blur of one component (radius 1 to ST_MAX_RADIUS) or two
 * (1 and 2), the unsharp mask of one (1 and 2), two terms of one (sobel,
 * laplacian: 1 to 3) or the 2-D matrix of one (3x3, 5x5).  The strips are
 * in cuconv-stream.cuh.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include <algorithm>

#include <cuda_runtime.h>

#include "cuconv-stream.cuh"

namespace cuconv {

template < class Sh > __global__ void
__launch_bounds__ (ST_THREADS, Sh::MIN_BLOCKS)
sep_stream (const __grid_constant__ SepParams p)
{
  grid_dep_wait ();
  stream_thread < Sh > (p, blockIdx.x * ST_THREADS + threadIdx.x);
}

template < class Sh > static cudaError_t
launch_shape (const SepParams & p, cudaStream_t stream)
{
  return launch_pdl (sep_stream < Sh >, stream_blocks < Sh > (p),
      ST_THREADS, 0, stream, p);
}

template < int R, int NC, int OUT > static cudaError_t
launch_stream_r (const SepParams & p, cudaStream_t stream)
{
  return stream_small (p) ? launch_shape < StreamSmall < R, NC, OUT > > (p,
      stream) : launch_shape < StreamShape < R, NC, OUT > > (p, stream);
}

/* Whether the strips can walk p: 8-bit samples of 1 or 2 components,
 * one radius of 1 to max_r both ways, 16-byte aligned rows. */
static bool
stream_fits (const SepParams & p, int max_r)
{
  return p.sb == 1 && (p.nc == 1 || p.nc == 2) && p.rx == p.ry
      && p.rx >= 1 && p.rx <= max_r && p.src_aligned16
      && ((uintptr_t) p.dst | p.dst_pitch) % 16 == 0;
}

/* The largest radius with strips for p's filter (launch_stream's cases):
 * ST_MAX_RADIUS for the blur of one component, 3 for two terms of one,
 * else 2. */
static int
stream_max_radius (const SepParams & p)
{
  if (p.nc != 1)
    return 2;
  if (p.combine == CUCONV_COMBINE_NONE)
    return ST_MAX_RADIUS;
  return p.combine == CUCONV_COMBINE_SHARPEN ? 2 : 3;
}

/* How far (in samples) a streamed result may lie from the float taps'
 * sum, from its quantized horizontal taps, at most: past it the dispatch
 * keeps the tiles (docs/design.md, "The streaming kernel"). */
#define ST_MAX_ERROR (1.0 / 16)

/* The float whose bits are b. */
static double
bits_float (int b)
{
  float f;

  memcpy (&f, &b, sizeof (f));
  return f;
}

/* How far the n taps k rounded to multiples of 1 / s may move a sum of
 * 8-bit samples: 255 times the larger of the roundings' positive and
 * negative sums. */
static double
quantize_error (const float *k, int n, double s)
{
  double pos = 0.0, neg = 0.0;

  for (int i = 0; i < n; i++) {
    const double d = lrint (k[i] * s) / s - k[i];

    if (d > 0.0)
      pos += d;
    else
      neg -= d;
  }
  return 255.0 * std::max (pos, neg);
}

/* Quantizes the n taps k (n = 2R + 1) for stream_hsums: K_i = round (s
 * k_i) for a scale s whose K_i fit 16 bits and whose sums of 8-bit
 * samples fit the bias's range, [0, 2^23) for taps >= 0 (bias 2^23),
 * else [-2^22, 2^22) (bias 1.5 * 2^23); packed two to a word, the last
 * tap alone in the high half.  Sets kq, *bias (bits) and *scale; returns
 * quantize_error (). */
static double
quantize_taps (const float *k, int n, uint32_t * kq, int *bias,
    double *scale)
{
  double sum_abs = 0.0, max_abs = 0.0;
  bool nonneg = true;
  int q[2 * ST_MAX_RADIUS + 1];

  for (int i = 0; i < n; i++) {
    sum_abs += fabs (k[i]);
    max_abs = std::max (max_abs, (double) fabs (k[i]));
    nonneg &= k[i] >= 0.0f;
  }
  /* each rounding adds at most half a unit a tap: 255 n / 2 */
  const double s_max = max_abs > 0.0 ? std::min (32767.0 / max_abs,
      ((nonneg ? 1 << 23 : 1 << 22) - 255.0 * n) / (255.0 * sum_abs)) : 1.0;
  /* the largest such scale, or the power of two under it where that
   * rounds no worse: it keeps taps of few bits exact (sobel's 1, 2, 1 and
   * -1, 0, 1) */
  const double s_pow2 = exp2 (floor (log2 (s_max)));
  const double e_max = quantize_error (k, n, s_max);
  const double e_pow2 = quantize_error (k, n, s_pow2);
  const double s = e_pow2 <= e_max ? s_pow2 : s_max;

  for (int i = 0; i < n; i++)
    q[i] = (int) lrint (k[i] * s);
  for (int j = 0; j < n / 2; j++)
    kq[j] = (uint16_t) q[2 * j] | (uint32_t) (uint16_t) q[2 * j + 1] << 16;
  kq[n / 2] = (uint32_t) (uint16_t) q[n - 1] << 16;
  *bias = nonneg ? 0x4B000000 : 0x4B400000;
  *scale = s;
  return std::min (e_pow2, e_max);
}

/* Fills q with p as the strips take it: the horizontal taps quantized
 * (stream_hsums), each term's vertical taps divided by its horizontal
 * scale, and the vertical sums' start, which takes the biases back out
 * (and holds the rounding's 0.5 for the blur and sharpen).  The sharpen
 * s + amount (s - blur) becomes (1 + amount) s plus the blur's taps times
 * -amount: no source row kept for the store.  False when the quantized
 * taps may move a result by more than ST_MAX_ERROR. */
static bool
stream_prepare (const SepParams & p, SepParams & q)
{
  const int n = 2 * p.rx + 1;
  const bool two = p.combine == CUCONV_COMBINE_MAGNITUDE
      || p.combine == CUCONV_COMBINE_ABS_SUM;
  double err = 0.0;

  q = p;
  if (p.combine == CUCONV_COMBINE_SHARPEN) {
    for (int t = 0; t < n; t++)
      q.ky[t] = -p.amount * p.ky[t];
    q.amount = 1.0f + p.amount;
  }
  for (int m = 0; m < (two ? 2 : 1); m++) {
    float *ky = q.ky + m * SEP_TERM2;
    double s, start = two ? 0.0 : 0.5, ky_abs = 0.0;
    const double e = quantize_taps (q.kx + m * SEP_TERM2, n, q.kq[m],
        &q.hbias[m], &s);

    for (int t = 0; t < n; t++) {
      ky_abs += fabs (ky[t]);
      ky[t] = (float) (ky[t] / s);
      start -= bits_float (q.hbias[m]) * ky[t];
    }
    q.vinit[m] = (float) start;
    err += e * ky_abs;
  }
  return err <= ST_MAX_ERROR;
}

bool
stream_takes (const SepParams & p, SepParams & q)
{
  /* a blur's rounding has no clamp below 0 (launch_separable) */
  return stream_fits (p, stream_max_radius (p))
      && (p.combine != CUCONV_COMBINE_NONE || p.taps_nonneg)
      && stream_prepare (p, q);
}

/* Whether p is a whole plane: the strips' bands of a host-memory frame
 * keep the tiles, which their tests cover. */
static bool
stream_whole (const SepParams & p)
{
  return p.row_begin == 0 && p.row_end == p.height;
}

bool
stream_fills (const SepParams & p)
{
  return stream_whole (p)
      && (double) p.ws * p.height >= CUCONV_LARGE_PLANE_SAMPLES;
}

bool
stream_small (const SepParams & p)
{
  return stream_whole (p)
      && (double) p.ws * p.height < CUCONV_LARGE_PLANE_SAMPLES;
}

cudaError_t
launch_stream (const SepParams & p, cudaStream_t stream)
{
  typedef cudaError_t (*Launcher) (const SepParams &, cudaStream_t);
  const int out = p.combine == CUCONV_COMBINE_SHARPEN ? OUT_SHARPEN
      : p.combine == CUCONV_COMBINE_NONE ? OUT_BLUR
      : p.combine == CUCONV_COMBINE_ABS_SUM ? OUT_ABS_SUM : OUT_TWO_TERMS;
  Launcher launch = NULL;
  SepParams q;

  if (!stream_takes (p, q))
    return cudaErrorNotSupported;
  switch ((p.rx * 2 + p.nc - 1) * 8 + out) {
#define CUCONV_STREAM_CASE(R, NC, OUT) \
    case (R * 2 + NC - 1) * 8 + OUT: \
      launch = launch_stream_r < R, NC, OUT >; \
      break;
#define CUCONV_STREAM_CASES(R) \
    CUCONV_STREAM_CASE (R, 1, OUT_BLUR) CUCONV_STREAM_CASE (R, 2, OUT_BLUR) \
    CUCONV_STREAM_CASE (R, 1, OUT_SHARPEN) \
    CUCONV_STREAM_CASE (R, 1, OUT_TWO_TERMS) \
    CUCONV_STREAM_CASE (R, 1, OUT_ABS_SUM)
      CUCONV_STREAM_CASES (1) CUCONV_STREAM_CASES (2)
      CUCONV_STREAM_CASE (3, 1, OUT_TWO_TERMS)
      CUCONV_STREAM_CASE (3, 1, OUT_ABS_SUM)
      CUCONV_STREAM_CASE (3, 1, OUT_BLUR) CUCONV_STREAM_CASE (4, 1, OUT_BLUR)
#undef CUCONV_STREAM_CASES
#undef CUCONV_STREAM_CASE
    default:
      return cudaErrorNotSupported;
  }
  return launch (q, stream);
}

cudaError_t
launch_stream_matrix (const CuconvPlane & pl, const CuconvMatrix & m,
    CuconvBorder border, int row_begin, int row_end, bool forced,
    cudaStream_t stream)
{
  const int k = 2 * m.radius + 1;
  SepParams p;

  if (pl.n_comp != 1 || pl.op[0] != CUCONV_COMP_FILTER)
    return cudaErrorNotSupported;
  sep_plane_init (p, pl, border, row_begin, row_end);
  p.rx = p.ry = m.radius;
  /* whole planes, the smaller ones in StreamSmall's strips, where the
   * 3x3 and 5x5 beat their tiles (docs/performance.md) */
  if (!stream_fits (p, 2) || (!forced && !stream_whole (p)))
    return cudaErrorNotSupported;
  memcpy (p.kx, m.w, sizeof (float) * k * k);
  p.vinit[0] = 0.5f;
  /* taps >= 0 summing to at most 1 (plus float error) keep a sum + 0.5
   * of 8-bit samples under 255.6: no clamp (stream_store_row) */
  p.taps_nonneg = taps_bounded (m.w, k * k);
  return m.radius == 2 ? launch_stream_r < 2, 1, OUT_MATRIX > (p, stream)
      : launch_stream_r < 1, 1, OUT_MATRIX > (p, stream);
}

}                               /* namespace cuconv */
