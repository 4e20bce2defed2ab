/* gst-cudaconvolve: a 4:2:0 frame's tiles in one launch at luma radius 1
 * to 7 (cuconv-frame420-tiles.cuh).  The radii of CUCONV_FIXED_RADII are
 * split between this and cuconv-frame420-r8-16.cu so that each takes
 * about half the compile time (sm_75, one core: about 15 s and 12 s, the
 * kernels' time growing with the radius).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-frame420-tiles.cuh"

namespace cuconv {

CUCONV_FRAME420_INSTANTIATE (1)
CUCONV_FRAME420_INSTANTIATE (2)
CUCONV_FRAME420_INSTANTIATE (3)
CUCONV_FRAME420_INSTANTIATE (4)
CUCONV_FRAME420_INSTANTIATE (5)
CUCONV_FRAME420_INSTANTIATE (6)
CUCONV_FRAME420_INSTANTIATE (7)

}                               /* namespace cuconv */
