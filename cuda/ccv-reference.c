/* gst-cudaconvolve: the CPU reference.  It defines the engine's semantics
 * (docs/semantics.md); the CUDA kernels are tested against it.  Written for
 * clarity, not speed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include "ccv.h"

/* One component: rows filtered horizontally into h (float), then columns. */
static void
filter_component (const CcvPlane * p, int comp, float *h, const CcvTaps * kx,
    const CcvTaps * ky, CcvBorder border)
{
  const int w = p->width, ht = p->height, n = p->n_comp;
  int x, y, i;

  for (y = 0; y < ht; y++) {
    const uint8_t *row = p->src + y * p->src_stride + comp;

    for (x = 0; x < w; x++) {
      float acc = 0.0f;

      for (i = -kx->radius; i <= kx->radius; i++) {
        int xi = ccv_border_index (border, x + i, w);
        if (xi >= 0)
          acc += kx->w[i + kx->radius] * row[xi * n];
      }
      h[(size_t) y * w + x] = acc;
    }
  }

  for (y = 0; y < ht; y++) {
    uint8_t *out = p->dst + y * p->dst_stride + comp;

    for (x = 0; x < w; x++) {
      float acc = 0.0f;

      for (i = -ky->radius; i <= ky->radius; i++) {
        int yi = ccv_border_index (border, y + i, ht);
        if (yi >= 0)
          acc += ky->w[i + ky->radius] * h[(size_t) yi * w + x];
      }
      out[x * n] = ccv_round_sat_u8 (acc);
    }
  }
}

int
ccv_reference_plane (const CcvPlane * p, const CcvTaps * kx,
    const CcvTaps * ky, CcvBorder border)
{
  float *h = malloc (sizeof (float) * (size_t) p->width * p->height);
  int c;

  if (!h)
    return -1;
  for (c = 0; c < p->n_comp; c++)
    filter_component (p, c, h, kx, ky, border);
  free (h);
  return 0;
}

int
ccv_reference_frame (const CcvPlane * planes, int n_planes,
    const CcvFilter * f)
{
  int i;

  for (i = 0; i < n_planes; i++) {
    const CcvPlane *p = &planes[i];

    if (ccv_reference_plane (p, ccv_filter_taps_x (f, p),
            ccv_filter_taps_y (f, p), f->settings.border) < 0)
      return -1;
  }
  return 0;
}
