/* gst-cudaconvolve: the top level's motion search a warp a block
 * (cuconv-motion.cu), callable on the host too: tests/test-motion-top.cu
 * checks it against the definition, cuconv_motion_best ().
 *
 * The top level searches every vector up to CUCONV_MOTION_TOP_RADIUS, 81
 * candidates, and has the fewest blocks: a thread a block leaves most of
 * the GPU idle while each thread walks its 81 sums one after the other.
 * Here lane l of a block's warp costs the candidates l, l + 32, ... with
 * the definition's own cuconv_motion_cost (), and the warp keeps the
 * least (cost, candidate): the candidate of the least cost, the first on
 * a tie, the vector cuconv_motion_best () returns.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_MOTION_CUH__
#define __CUCONV_MOTION_CUH__

#include "cuconv-motion.h"

namespace cuconv {

static_assert (CUCONV_MOTION_LEVELS > 1, "level 0 is never the top level");

/* The least (cost, candidate) so far of a lane or a warp. */
struct MotionPick
{
  unsigned cost;
  int candidate;
};

/* The lesser of a and b: the smaller cost, the earlier candidate on a
 * tie. */
CUCONV_HD MotionPick
motion_pick (MotionPick a, MotionPick b)
{
  return b.cost < a.cost || (b.cost == a.cost && b.candidate < a.candidate)
      ? b : a;
}

/* Lane `lane`'s pick among the candidates lane, lane + 32, ... of block
 * (bx, by) of the top level lv. */
CUCONV_HD MotionPick
motion_top_lane (const CuconvMotionLevel * lv, int bx, int by, int lane)
{
  const CuconvMotionVector none = { 0, 0 };
  MotionPick best = { 0xffffffffu, 0x7fffffff };
  CuconvMotionVector v;

  for (int i = lane; cuconv_motion_candidate (1, none, i, &v); i += 32) {
    const MotionPick p = { cuconv_motion_cost (lv, bx, by, v), i };
    best = motion_pick (best, p);
  }
  return best;
}

/* The vector of a pick. */
CUCONV_HD CuconvMotionVector
motion_top_vector (MotionPick p)
{
  const CuconvMotionVector none = { 0, 0 };
  CuconvMotionVector v = { 0, 0 };

  cuconv_motion_candidate (1, none, p.candidate, &v);
  return v;
}

}                               /* namespace cuconv */

#endif /* __CUCONV_MOTION_CUH__ */
