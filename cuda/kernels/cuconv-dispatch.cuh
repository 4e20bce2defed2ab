/* gst-cudaconvolve: the dispatch's thresholds, in one place: the sizes
 * and radii from which one GPU path beats another (docs/performance.md
 * has the measurements).  They choose kernels, never results: every path
 * a threshold chooses between computes the same output.  The predicates
 * that apply them are in cuconv-dispatch.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_DISPATCH_CUH__
#define __CUCONV_DISPATCH_CUH__

/* A large plane: from this many samples (a 4K luma plane) the streaming
 * kernel's long strips fill the device and the tensor cores beat the
 * tiles; a smaller whole plane takes the streaming kernel's short strips
 * (StreamSmall) where it streams, and the tiles rather than the tensor
 * cores. */
#define CUCONV_LARGE_PLANE_SAMPLES (4 << 20)

/* On a large plane, the tensor cores beat the tiles from this radius
 * (both ways); below it the tiles win.  On smaller planes the tiles win
 * at every radius: a warp's band is too short to pay for its apron and
 * the launch's fixed costs. */
#define CUCONV_MMA_MIN_RADIUS 5

/* On a whole plane smaller than CUCONV_LARGE_PLANE_SAMPLES, launched on
 * its own, the streaming kernel beats the tiles for one component up to
 * this radius, and for the unsharp mask at every radius it takes; the
 * radius-2 blur is faster in the tiles.  A 4:2:0 frame in one launch
 * streams its smaller planes up to CUCONV_STREAM_SMALL_FRAME_MAX_RADIUS
 * (luma), whatever the filter: the launch the frame saves outweighs the
 * difference.  A large plane streams at every radius the kernel takes. */
#define CUCONV_STREAM_SMALL_PLANE_MAX_RADIUS 1
#define CUCONV_STREAM_SMALL_FRAME_MAX_RADIUS 2

/* From this plane radius the box runs as running sums; below it the tap
 * kernel, fed the box's equal taps, is faster. */
#define CUCONV_BOX_SUMS_MIN_RADIUS 17

/* Above this plane radius an 8-bit blur of one term (the box aside: its
 * sums do not grow with the radius) is faster through the global passes
 * than through the fused tiles. */
#define CUCONV_GLOBAL_MIN_RADIUS 27

#endif /* __CUCONV_DISPATCH_CUH__ */
