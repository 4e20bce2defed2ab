/* gst-cudaconvolve: a 4:2:0 frame (Y + U + V, or Y + interleaved UV) of
 * 8- or 16-bit samples (I420, NV12, I420_10LE, P010) in one launch, which
 * saves the ramp and tail of the chroma planes' launches: through the
 * tuned separable tiles at the tuned kernel's radii (CUCONV_FIXED_RADII),
 * or for 8-bit samples at luma radius 1 to ST_MAX_RADIUS through the
 * streaming kernel (cuconv-stream.cuh).  Which of them runs, or neither
 * (the planes launched one by one), the dispatch decides.  Here the
 * streaming launch and the launchers; the tiles' kernels are in
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
 * up to 126, which measured slower (docs/performance.md). */
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

/* A plane of the frame of CUCONV_LARGE_PLANE_SAMPLES or more, radius R,
 * NC components: strips of 10 rows at radius 1, not the plane launcher's
 * 9, as the chroma's blocks follow the luma's (measured faster); at
 * radius 3 the plane's 24. */
template < int R, int NC, bool PEEL >
using FrameShape = StreamShape < R, NC, OUT_BLUR, stream_cols (R, OUT_BLUR),
    R == 1 ? 10 : stream_rows (R, OUT_BLUR), false, PEEL >;

/* Each plane of the frame (luma radius R, chroma (R + 1) / 2) in the
 * shape of its own size: StreamSmall below CUCONV_LARGE_PLANE_SAMPLES
 * (the chroma planes of a 4K frame too), else the blur's.  At luma
 * radius 3 and 4 (large luma planes only) the chroma's shape is the 4K
 * frame's whatever the size: StreamSmall for I420's planes, the blur's
 * for NV12's.  Up to luma radius 2 every plane walks its first and last
 * periods apart (stream_peel), at 3 and 4 none does: each the faster
 * there (docs/performance.md). */
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

typedef cudaError_t (*FrameLauncher) (const FrameParams &, cudaStream_t);

/* The tiles' launcher for fp, or NULL where the one launch does not take
 * fp's geometry or radii. */
static FrameLauncher
pick_frame420 (const FrameParams & fp)
{
  const SepParams & l = fp.plane[0], &c = fp.plane[1];

  if (fp.n < 2 || fp.n > 3 || l.nc != 1 || l.rx != l.ry || c.rx != c.ry
      || c.rx != (l.rx + 1) / 2 || c.sb != l.sb || (fp.n == 3
          && (fp.plane[2].nc != c.nc || fp.plane[2].rx != c.rx
              || fp.plane[2].ry != c.ry || fp.plane[2].sb != l.sb)))
    return NULL;
  switch ((l.rx * 4 + c.nc) * 2 + l.sb - 1) {
#define CUCONV_FRAME_CASE(R) \
    case (R * 4 + 1) * 2: return launch_frame420_rn < R, 1, 1 >; \
    case (R * 4 + 2) * 2: return launch_frame420_rn < R, 2, 1 >; \
    case (R * 4 + 1) * 2 + 1: return launch_frame420_rn < R, 1, 2 >; \
    case (R * 4 + 2) * 2 + 1: return launch_frame420_rn < R, 2, 2 >;
      CUCONV_FIXED_RADII (CUCONV_FRAME_CASE)
#undef CUCONV_FRAME_CASE
    default:
      return NULL;
  }
}

bool
frame420_takes (const FrameParams & fp)
{
  return pick_frame420 (fp) != NULL;
}

cudaError_t
launch_frame420_tiles (const FrameParams & fp, cudaStream_t stream)
{
  const FrameLauncher launch = pick_frame420 (fp);

  return launch ? launch (fp, stream) : cudaErrorNotSupported;
}

cudaError_t
launch_frame420_stream (const FrameParams & fp, cudaStream_t stream)
{
  static const FrameLauncher by_radius[ST_MAX_RADIUS][2] = {
    {launch_stream420 < 1, 1 >, launch_stream420 < 1, 2 >},
    {launch_stream420 < 2, 1 >, launch_stream420 < 2, 2 >},
    {launch_stream420 < 3, 1 >, launch_stream420 < 3, 2 >},
    {launch_stream420 < 4, 1 >, launch_stream420 < 4, 2 >}
  };
  const SepParams & l = fp.plane[0], &c = fp.plane[1];
  /* q: the planes as the strips take them */
  FrameParams q = fp;
  bool streaming = frame420_takes (fp) && l.rx <= ST_MAX_RADIUS;

  for (int i = 0; i < fp.n; i++)
    streaming &= stream_takes (fp.plane[i], q.plane[i]);
  if (!streaming)
    return cudaErrorNotSupported;
  return by_radius[l.rx - 1][c.nc - 1] (q, stream);
}

}                               /* namespace cuconv */
