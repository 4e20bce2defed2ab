/* gst-cudaconvolve: the tuned separable kernel of one plane at radius 8,
 * 12 and 16 (cuconv-separable-fixed.cuh); radius 1 to 7 are in
 * cuconv-separable-r1-7.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-separable-fixed.cuh"

namespace cuconv {

CUCONV_SEPARABLE_INSTANTIATE (8)
CUCONV_SEPARABLE_INSTANTIATE (12)
CUCONV_SEPARABLE_INSTANTIATE (16)

}                               /* namespace cuconv */
