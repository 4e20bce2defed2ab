/* gst-cudaconvolve: the temporal denoise's definition (docs/semantics.md,
 * "Temporal denoise"): a causal recursive filter in integers, so that the
 * CPU and the GPU give the same sequence bit for bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "cuconv.h"

void
cuconv_temporal_lut (uint8_t * k, double strength, double threshold)
{
  int d;

  for (d = 0; d < CUCONV_TEMPORAL_LUT; d++) {
    const double u = threshold > 0.0 ? 1.0 - d / threshold : 0.0;

    k[d] = u > 0.0 ? (uint8_t) floor (255.0 * strength * u * u + 0.5) : 0;
  }
}

int
cuconv_temporal_is_off (const uint8_t * k)
{
  return k[0] == 0;
}

static unsigned
read_word (const uint8_t * row, int k, int bytes)
{
  return bytes == 1 ? row[k] : row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

static void
write_word (uint8_t * row, int k, int bytes, unsigned v)
{
  if (bytes == 1) {
    row[k] = (uint8_t) v;
  } else {
    row[2 * k] = (uint8_t) v;
    row[2 * k + 1] = (uint8_t) (v >> 8);
  }
}

void
cuconv_temporal_rows (const CuconvPlane * p, const uint8_t * k, int first,
    int row_begin, int row_end)
{
  const int depth = p->depth > 8 ? p->depth : 8;
  const int shift = depth == 8 ? 0 : p->shift;
  const int bytes = cuconv_plane_sample_bytes (p);
  const unsigned mask = (1u << depth) - 1;
  int x, y, c;

  for (y = row_begin; y < row_end; y++) {
    const uint8_t *in = p->src + y * p->src_stride;
    uint8_t *st = p->dst + y * p->dst_stride;

    for (x = 0; x < p->width; x++) {
      for (c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const unsigned w = read_word (in, i, bytes);
        int a, b, t;

        if (first || p->op[c] != CUCONV_COMP_FILTER) {
          write_word (st, i, bytes, w);
          continue;
        }
        a = (int) ((w >> shift) & mask);
        b = (int) ((read_word (st, i, bytes) >> shift) & mask);
        t = k[(a > b ? a - b : b - a) >> (depth - 8)];
        /* t / 256 of the way to the previous output, rounded half up
         * (>> floors) */
        write_word (st, i, bytes, (unsigned) (a + ((t * (b - a) + 128) >> 8))
            << shift);
      }
    }
  }
}
