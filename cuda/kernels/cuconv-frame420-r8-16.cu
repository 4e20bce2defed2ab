/* gst-cudaconvolve: a 4:2:0 frame's tiles in one launch at luma radius 8,
 * 12 and 16 (cuconv-frame420-tiles.cuh); radius 1 to 7 are in
 * cuconv-frame420-r1-7.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "cuconv-frame420-tiles.cuh"

namespace cuconv {

CUCONV_FRAME420_INSTANTIATE (8)
CUCONV_FRAME420_INSTANTIATE (12)
CUCONV_FRAME420_INSTANTIATE (16)

}                               /* namespace cuconv */
