/* gst-cudaconvolve: the tests' seeded random numbers (xorshift32): the
 * same sequence on every machine for a seed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __XORSHIFT_H__
#define __XORSHIFT_H__

#include <stdint.h>

/* The next number after *state (not 0), which becomes the state. */
static inline uint32_t
xorshift32 (uint32_t * state)
{
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

#endif /* __XORSHIFT_H__ */
