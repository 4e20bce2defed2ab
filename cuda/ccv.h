/* gst-cudaconvolve: the convolution engine's C API, shared by the CPU
 * reference, the CUDA kernels and the GStreamer element.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CCV_H__
#define __CCV_H__

#include <stdint.h>
#include <stddef.h>

#include "ccv-border.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CCV_MAX_RADIUS 64
#define CCV_MAX_TAPS (2 * CCV_MAX_RADIUS + 1)
#define CCV_MAX_SIGMA 64.0
/* The largest chroma subsampling factor of a supported format. */
#define CCV_MAX_SUBSAMPLE 2

/* The kernel types, in one place: the engine's enum, the element's GEnum
 * (value, nick, description) and the coefficient switch in ccv-coeffs.c are
 * generated from or keyed on this list.  X (NAME, "nick", "description") */
#define CCV_KERNEL_TYPES(X) \
  X (GAUSSIAN, "gaussian", \
      "Gaussian blur (sigma 0 = 0.3 * (radius - 1) + 0.8)") \
  X (BOX, "box", "Box (mean) blur over (2 * radius + 1)^2 samples")

typedef enum
{
#define CCV_KERNEL_ENUM(name, nick, desc) CCV_KERNEL_##name,
  CCV_KERNEL_TYPES (CCV_KERNEL_ENUM)
#undef CCV_KERNEL_ENUM
  CCV_KERNEL_N
} CcvKernel;

/* What the user asked for, in luma samples. */
typedef struct
{
  CcvKernel kernel;
  CcvBorder border;
  unsigned radius;              /* 0..64; 0 = from sigma */
  double sigma;                 /* 0..64; 0 = from radius */
} CcvSettings;

/* A 1-D kernel of 2 * radius + 1 taps; w[radius] is the centre. */
typedef struct
{
  int radius;
  float w[CCV_MAX_TAPS];
} CcvTaps;

/* The taps for every plane geometry of a frame: x[s - 1] and y[s - 1] are
 * the horizontal and vertical taps of a plane subsampled by s in that
 * direction. */
typedef struct
{
  CcvSettings settings;
  CcvTaps x[CCV_MAX_SUBSAMPLE];
  CcvTaps y[CCV_MAX_SUBSAMPLE];
} CcvFilter;

/* One plane of 8-bit samples.  n_comp components are interleaved (1 for
 * planar formats, 2 for the UV plane of NV12/NV21) and each is filtered on
 * its own.  width counts samples of one component.  src and dst are host or
 * device pointers depending on the function they are passed to; they must
 * not overlap. */
typedef struct
{
  const uint8_t *src;
  uint8_t *dst;
  ptrdiff_t src_stride;
  ptrdiff_t dst_stride;
  int width;
  int height;
  int n_comp;
  int sub_x;                    /* subsampling factor, 1 or 2 */
  int sub_y;
} CcvPlane;

/* TRUE when the settings leave every frame unchanged (radius 0, sigma 0). */
int ccv_settings_is_identity (const CcvSettings * s);

/* The luma radius and sigma the settings resolve to: sigma 0 becomes
 * 0.3 * (r - 1) + 0.8, radius 0 becomes min (64, ceil (3 * sigma)). */
void ccv_settings_resolve (const CcvSettings * s, int *radius, double *sigma);

/* Fills t with the taps for a direction subsampled by factor sub (1 or 2):
 * radius ceil (r / sub), sigma / sub.  The taps sum to 1. */
void ccv_taps_init (CcvTaps * t, const CcvSettings * s, int sub);

/* Computes every CcvTaps of f from s. */
void ccv_filter_init (CcvFilter * f, const CcvSettings * s);

static inline const CcvTaps *
ccv_filter_taps_x (const CcvFilter * f, const CcvPlane * p)
{
  return &f->x[p->sub_x - 1];
}

static inline const CcvTaps *
ccv_filter_taps_y (const CcvFilter * f, const CcvPlane * p)
{
  return &f->y[p->sub_y - 1];
}

/* The CPU reference, which defines the semantics (docs/semantics.md):
 * out = sat (round (sum_j ky[j] * sum_i kx[i] * in (B (x + i), B (y + j)))),
 * accumulated in float, rounded half away from zero, saturated to 0..255.
 * Host pointers.  Returns 0, or -1 when memory for the row buffer could not
 * be allocated (dst is then untouched). */
int ccv_reference_plane (const CcvPlane * p, const CcvTaps * kx,
    const CcvTaps * ky, CcvBorder border);

int ccv_reference_frame (const CcvPlane * planes, int n_planes,
    const CcvFilter * f);

/* Round half away from zero, then saturate to 0..255. */
CCV_HD uint8_t
ccv_round_sat_u8 (float v)
{
  float r = v < 0.0f ? v - 0.5f : v + 0.5f;
  if (r <= 0.0f)
    return 0;
  if (r >= 255.0f)
    return 255;
  return (uint8_t) (int) r;
}

#ifdef __cplusplus
}
#endif
#endif /* __CCV_H__ */
