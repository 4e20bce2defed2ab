/* gst-cudaconvolve: what the launchers share (CUDA C++, internal).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CCV_KERNELS_CUH__
#define __CCV_KERNELS_CUH__

#include <cuda_runtime.h>

#include "ccv.h"

namespace ccv {

/* Radii with fully unrolled instantiations (equal in x and y, planar or
 * 2-component interleaved); every other radius takes the generic path. */
#define CCV_FIXED_RADII(X) X (1) X (2) X (3) X (4) X (5) X (6) X (7) X (8) \
  X (12) X (16)

/* One launch's work: the rows [row_begin, row_end) of one plane.  Lives in
 * the kernel's parameter space, so the taps are in constant memory and each
 * launch carries its own. */
struct SepParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch;
  size_t dst_pitch;
  int width;                    /* samples of one component */
  int wb;                       /* bytes of a row: width * nc */
  int height;                   /* rows of the whole plane, for the border */
  int nc;                       /* interleaved components */
  int row_begin;
  int row_end;
  int rx, ry;
  int border;
  int src_aligned16;            /* src and src_pitch are multiples of 16 */
  int dst_aligned4;             /* dst and dst_pitch are multiples of 4 */
  int taps_nonneg;              /* all taps >= 0: results need no clamp */
  float kx[CCV_MAX_TAPS];
  float ky[CCV_MAX_TAPS];
};

/* Fills p for rows [row_begin, row_end) of plane pl (device pointers). */
void sep_params_init (SepParams & p, const CcvPlane & pl, const CcvTaps & kx,
    const CcvTaps & ky, CcvBorder border, int row_begin, int row_end);

/* The planes of one frame, for a single launch (ccv-separable.cu). */
struct FrameParams
{
  SepParams plane[3];
  int n;
  int first_block[4];           /* filled by the launcher */
  int tiles_x[3];
};

/* Luma radii whose 4:2:0 frames (luma R, chroma (R + 1) / 2, both in
 * CCV_FIXED_RADII) run in one launch. */
#define CCV_FRAME_RADII(X) X (1) X (2) X (3) X (4) X (5) X (6) X (7) X (8) \
  X (12) X (16)

/* A 4:2:0 frame (Y + U + V, or Y + interleaved UV) in one launch;
 * cudaErrorNotSupported for any other geometry or radius. */
cudaError_t launch_frame420 (const FrameParams & fp, cudaStream_t stream);

/* Filters with the taps, 2r + 1 of them a direction (ccv-separable.cu). */
cudaError_t launch_separable (const SepParams & p, cudaStream_t stream);

/* A box of p.rx, p.ry with running sums, whatever the radius; the taps
 * are not read (ccv-box.cu).  cudaErrorNotSupported when the device has
 * too little shared memory for the radius. */
cudaError_t launch_box (const SepParams & p, cudaStream_t stream);

/* Rows a tile of the path that p takes covers: bands of a frame cut into
 * strips should be multiples of it so no tile straddles two bands. */
int separable_tile_rows (void);

}                               /* namespace ccv */

#endif /* __CCV_KERNELS_CUH__ */
