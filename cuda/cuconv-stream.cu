/* gst-cudaconvolve: the streaming separable kernel's plane launcher: 8-bit
 * samples, radius 1 to ST_MAX_RADIUS, a blur of one or two components,
 * the unsharp mask of one, two terms of one (sobel, laplacian) or the 2-D
 * matrix of one.  The strips are in cuconv-stream.cuh.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-stream.cuh"

namespace cuconv {

template < class Sh > __global__ void
__launch_bounds__ (ST_THREADS)
sep_stream (const __grid_constant__ SepParams p)
{
  stream_thread < Sh > (p, blockIdx.x * ST_THREADS + threadIdx.x);
}

/* The fewest samples of a plane for the large shapes: their threads walk
 * strips of many rows, so a smaller plane has too few of them to fill the
 * device and takes StreamSmall's (measured on an H200: at 1920x1080 the
 * radius-1 blur took 8.3 us in the large shape, 4.6 in StreamSmall's). */
#define ST_MIN_SAMPLES (4 << 20)

template < class Sh > static cudaError_t
launch_shape (const SepParams & p, cudaStream_t stream)
{
  sep_stream < Sh > <<< stream_blocks < Sh > (p), ST_THREADS, 0,
      stream >>> (p);
  return cudaGetLastError ();
}

template < int R, int NC, int OUT > static cudaError_t
launch_stream_r (const SepParams & p, cudaStream_t stream)
{
  return stream_small (p) ? launch_shape < StreamSmall < R, NC, OUT > > (p,
      stream) : launch_shape < StreamShape < R, NC, OUT > > (p, stream);
}

/* Whether the strips can walk p: 8-bit samples of 1 or 2 components,
 * one radius of 1 to ST_MAX_RADIUS both ways, 16-byte aligned rows. */
static bool
stream_fits (const SepParams & p)
{
  return p.sb == 1 && (p.nc == 1 || p.nc == 2) && p.rx == p.ry
      && p.rx >= 1 && p.rx <= ST_MAX_RADIUS && p.src_aligned16
      && ((uintptr_t) p.dst | p.dst_pitch) % 16 == 0;
}

bool
stream_takes (const SepParams & p)
{
  /* a blur's rounding has no clamp below 0 (launch_separable) */
  return stream_fits (p) && (p.combine != CUCONV_COMBINE_NONE
      || p.taps_nonneg);
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
  return stream_whole (p) && (double) p.ws * p.height >= ST_MIN_SAMPLES;
}

bool
stream_small (const SepParams & p)
{
  return stream_whole (p) && (double) p.ws * p.height < ST_MIN_SAMPLES;
}

bool
stream_pays (const SepParams & p)
{
  /* on a smaller plane, StreamSmall's strips beat the tiles at radius 1
   * and for the sharpen at radius 2, not for the radius-2 blur (H200,
   * 1920x1080, us: blur 4.2 against 5.1, sobel 5.3 against 6.2, sharpen
   * 6.0 against 6.5; the radius-2 blur 5.9 against 5.5) */
  return stream_fills (p) || (stream_small (p) && p.nc == 1
      && (p.ry == 1 || p.combine == CUCONV_COMBINE_SHARPEN));
}

cudaError_t
launch_stream (const SepParams & p, cudaStream_t stream)
{
  typedef cudaError_t (*Launcher) (const SepParams &, cudaStream_t);
  const int out = p.combine == CUCONV_COMBINE_SHARPEN ? OUT_SHARPEN
      : p.combine == CUCONV_COMBINE_NONE ? OUT_BLUR : OUT_TWO_TERMS;
  Launcher launch = NULL;

  if (!stream_takes (p))
    return cudaErrorNotSupported;
  switch ((p.rx * 2 + p.nc - 1) * 4 + out) {
#define CUCONV_STREAM_CASE(R, NC, OUT) \
    case (R * 2 + NC - 1) * 4 + OUT: \
      launch = launch_stream_r < R, NC, OUT >; \
      break;
#define CUCONV_STREAM_CASES(R) \
    CUCONV_STREAM_CASE (R, 1, OUT_BLUR) CUCONV_STREAM_CASE (R, 2, OUT_BLUR) \
    CUCONV_STREAM_CASE (R, 1, OUT_SHARPEN) \
    CUCONV_STREAM_CASE (R, 1, OUT_TWO_TERMS)
      CUCONV_STREAM_CASES (1) CUCONV_STREAM_CASES (2)
#undef CUCONV_STREAM_CASES
#undef CUCONV_STREAM_CASE
    default:
      return cudaErrorNotSupported;
  }
  if (out == OUT_SHARPEN) {
    /* the strips sum s + amount (s - blur) as (1 + amount) s plus the
     * blur's taps times -amount: no source row kept for the store */
    SepParams q = p;

    for (int t = 0; t <= 2 * p.ry; t++)
      q.ky[t] = -p.amount * p.ky[t];
    q.amount = 1.0f + p.amount;
    return launch (q, stream);
  }
  return launch (p, stream);
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
  if (!stream_fits (p))
    return cudaErrorNotSupported;
  memcpy (p.kx, m.w, sizeof (float) * k * k);
  /* whole planes, the smaller ones in StreamSmall's strips (H200,
   * 1920x1080, us: the 3x3 4.6 against 7.7 for its tiles, the 5x5 8.7
   * against 9.4) */
  if (!forced && !stream_whole (p))
    return cudaErrorNotSupported;
  return m.radius == 2 ? launch_stream_r < 2, 1, OUT_MATRIX > (p, stream)
      : launch_stream_r < 1, 1, OUT_MATRIX > (p, stream);
}

}                               /* namespace cuconv */
