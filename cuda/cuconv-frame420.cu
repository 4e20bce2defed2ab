/* gst-cudaconvolve: a 4:2:0 frame (Y + U + V, or Y + interleaved UV) of
 * 8- or 16-bit samples (I420, NV12, I420_10LE, P010) through the tuned
 * separable tiles in one launch, which saves the ramp and tail of the
 * chroma planes' launches.  The radii are the tuned
 * kernel's (CUCONV_FIXED_RADII).  A whole 8-bit frame at luma radius 1
 * or 2, or 3 and 4 with a large luma plane, takes the streaming kernel
 * instead (cuconv-stream.cuh), in one launch too;
 * one whose luma plane the tensor cores take (4K, radius 5 and up:
 * cuconv-mma.cu) is declined, its planes launched one by one.  Here the
 * streaming launch and the choice; the tiles' kernels are in
 * cuconv-frame420-tiles.cuh, instantiated by the cuconv-frame420-r*.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-stream.cuh"

namespace cuconv {

/* The same frame through the streaming kernel at luma radius 1 to
 * ST_MAX_RADIUS (the chroma's (R + 1) / 2), in strips of shape Luma and
 * Chroma: each block takes ST_THREADS threads of one plane.  Capped at
 * 96 registers, 5 blocks an SM: the two walks of two shapes would take
 * up to 126 (H200, 3840x2160, us: I420 at r = 1 11.1 against 11.7 for
 * 113 registers, NV12 at r = 4 17.7 against 18.9 for 126). */
template < class Luma, class Chroma > __global__ void
__launch_bounds__ (ST_THREADS, 5)
stream_frame420 (const __grid_constant__ FrameParams fp)
{
  const int b = blockIdx.x;

  grid_dep_wait ();
  if (b < fp.first_block[1])
    stream_thread < Luma > (fp.plane[0], b * ST_THREADS + threadIdx.x);
  else if (b < fp.first_block[2])
    stream_thread < Chroma > (fp.plane[1], (b - fp.first_block[1])
        * ST_THREADS + threadIdx.x);
  else
    stream_thread < Chroma > (fp.plane[2], (b - fp.first_block[2])
        * ST_THREADS + threadIdx.x);
}

/* Host side ------------------------------------------------------------ */

template < class Luma, class Chroma > static cudaError_t
launch_stream420_shape (const FrameParams & fp0, cudaStream_t stream)
{
  FrameParams fp = fp0;
  int blocks = 0;

  for (int i = 0; i < 3; i++) {
    fp.first_block[i] = blocks;
    if (i == 0)
      blocks += stream_blocks < Luma > (fp.plane[0]);
    else if (i < fp.n)
      blocks += stream_blocks < Chroma > (fp.plane[i]);
  }
  fp.first_block[3] = blocks;
  return launch_pdl (stream_frame420 < Luma, Chroma >, blocks, ST_THREADS,
      0, stream, fp);
}

/* A plane of the frame of ST_MIN_SAMPLES or more, radius R, NC
 * components: strips of 10 rows at radius 1, not the plane launcher's 9,
 * as the chroma's blocks follow the luma's (H100, 3840x2160 I420: 12.5 us
 * against 13.3); at radius 3 the plane's 24 (H200, 3840x2160 I420 / NV12
 * 16.4 / 18.1 us against 16.5 / 18.4 in 16 rows). */
template < int R, int NC, bool PEEL >
using FrameShape = StreamShape < R, NC, OUT_BLUR, stream_cols (R, OUT_BLUR),
    R == 1 ? 10 : stream_rows (R, OUT_BLUR), false, PEEL >;

/* Each plane of the frame (luma radius R, chroma (R + 1) / 2) in the
 * shape of its own size: StreamSmall below ST_MIN_SAMPLES (the chroma
 * planes of a 4K frame too), else the blur's.  At luma radius 3 and 4
 * (large luma planes only) the chroma's shape is the 4K frame's whatever
 * the size: StreamSmall for I420's planes, the blur's for NV12's.  Up
 * to luma radius 2 every plane walks its first and last periods apart
 * (stream_peel), at 3 and 4 none does (H200, us, 3840x2160 I420 / NV12:
 * r = 1 10.8 / 10.6 against 11.2 / 11.2, r = 2 11.7 / 11.3 against
 * 12.3 / 12.2; r = 4 18.1 / 19.9 against 17.6 / 17.9). */
template < int R, int NC > static cudaError_t
launch_stream420 (const FrameParams & fp, cudaStream_t stream)
{
  constexpr int RC = (R + 1) / 2;
  constexpr bool PEEL = R <= 2;
  typedef FrameShape < R, 1, PEEL > Luma;
  typedef FrameShape < RC, NC, PEEL > Chroma;
  typedef StreamSmall < R, 1, OUT_BLUR, PEEL > SmallLuma;
  typedef StreamSmall < RC, NC, OUT_BLUR, PEEL > SmallChroma;

  if constexpr (R > 2 && NC == 1)
    return launch_stream420_shape < Luma, SmallChroma > (fp, stream);
  else if constexpr (R > 2)
    return launch_stream420_shape < Luma, Chroma > (fp, stream);
  else if (stream_small (fp.plane[0]))
    return launch_stream420_shape < SmallLuma, SmallChroma > (fp, stream);
  else if (stream_small (fp.plane[1]))
    return launch_stream420_shape < Luma, SmallChroma > (fp, stream);
  else
    return launch_stream420_shape < Luma, Chroma > (fp, stream);
}

cudaError_t
launch_frame420 (const FrameParams & fp, CuconvPath path, cudaStream_t stream)
{
  typedef cudaError_t (*Launcher) (const FrameParams &, cudaStream_t);
  const SepParams & l = fp.plane[0], &c = fp.plane[1];
  Launcher launch = NULL;

  /* a luma plane the tensor cores take goes on its own (the chroma
   * planes then launch one by one too) */
  if (path == CUCONV_PATH_MMA || (path == CUCONV_PATH_AUTO && mma_pays (l)))
    return cudaErrorNotSupported;
  if (fp.n < 2 || fp.n > 3 || l.nc != 1 || l.rx != l.ry || c.rx != c.ry
      || c.rx != (l.rx + 1) / 2 || c.sb != l.sb || (fp.n == 3
          && (fp.plane[2].nc != c.nc || fp.plane[2].rx != c.rx
              || fp.plane[2].ry != c.ry || fp.plane[2].sb != l.sb)))
    return cudaErrorNotSupported;
  switch ((l.rx * 4 + c.nc) * 2 + l.sb - 1) {
#define CUCONV_FRAME_CASE(R) \
    case (R * 4 + 1) * 2: launch = launch_frame420_rn < R, 1, 1 >; break; \
    case (R * 4 + 2) * 2: launch = launch_frame420_rn < R, 2, 1 >; break; \
    case (R * 4 + 1) * 2 + 1: launch = launch_frame420_rn < R, 1, 2 >; break; \
    case (R * 4 + 2) * 2 + 1: launch = launch_frame420_rn < R, 2, 2 >; break;
      CUCONV_FIXED_RADII (CUCONV_FRAME_CASE)
#undef CUCONV_FRAME_CASE
    default:
      return cudaErrorNotSupported;
  }
  /* whole frames at luma radius 1 and 2 stream, at any size (H100, I420
   * at r = 2, us: 3840x2160 13.8 against 18.5 for the tiles, 1920x1080
   * 6.6 against 7.9), at 3 and 4 with a large luma plane (H200, 3840x2160
   * at r = 4, us: I420 17.8 against 21.5, NV12 19.0 against 21.8), and
   * any on CUCONV_PATH_STREAM (the tests' small frames); q: the planes as
   * the strips take them */
  bool streaming = l.rx <= ST_MAX_RADIUS && (path == CUCONV_PATH_STREAM
      || (path == CUCONV_PATH_AUTO && (stream_fills (l)
              || (stream_small (l) && l.rx <= 2))));
  FrameParams q = fp;

  for (int i = 0; i < fp.n; i++)
    streaming &= stream_takes (fp.plane[i], q.plane[i]);
  if (streaming) {
    static const Launcher by_radius[ST_MAX_RADIUS][2] = {
      {launch_stream420 < 1, 1 >, launch_stream420 < 1, 2 >},
      {launch_stream420 < 2, 1 >, launch_stream420 < 2, 2 >},
      {launch_stream420 < 3, 1 >, launch_stream420 < 3, 2 >},
      {launch_stream420 < 4, 1 >, launch_stream420 < 4, 2 >}
    };
    return by_radius[l.rx - 1][c.nc - 1] (q, stream);
  }
  return launch (fp, stream);
}

}                               /* namespace cuconv */
