/* gst-cudaconvolve: the tuned separable kernel of one plane at radius 1
 * to 7 (cuconv-separable-fixed.cuh).  The radii of CUCONV_FIXED_RADII are
 * split between this and cuconv-separable-r8-16.cu so that each takes
 * about half the compile time (sm_75, one core: about 15 s and 14 s, the
 * kernels' time growing with the radius).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-separable-fixed.cuh"

namespace cuconv {

CUCONV_SEPARABLE_INSTANTIATE (1)
CUCONV_SEPARABLE_INSTANTIATE (2)
CUCONV_SEPARABLE_INSTANTIATE (3)
CUCONV_SEPARABLE_INSTANTIATE (4)
CUCONV_SEPARABLE_INSTANTIATE (5)
CUCONV_SEPARABLE_INSTANTIATE (6)
CUCONV_SEPARABLE_INSTANTIATE (7)

}                               /* namespace cuconv */
