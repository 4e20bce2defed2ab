/* gst-cudaconvolve: border modes, defined once for the CPU and the GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_BORDER_H__
#define __CUCONV_BORDER_H__

#ifdef __CUDACC__
#define CUCONV_HD __host__ __device__ __forceinline__
#else
#define CUCONV_HD static inline
#endif

/* Values match GstCudaConvolveBorder (gst/gstcudaconvolve.h). */
typedef enum
{
  CUCONV_BORDER_CLAMP = 0,         /* aaa|abcd|ddd */
  CUCONV_BORDER_MIRROR = 1,        /* dcb|abcd|cba: edge sample not repeated */
  CUCONV_BORDER_WRAP = 2,          /* bcd|abcd|abc */
  CUCONV_BORDER_ZERO = 3,          /* 000|abcd|000 */
  CUCONV_BORDER_N
} CuconvBorder;

/* Maps a coordinate i, which may lie any distance outside [0, n), onto the
 * sample it reads, for n >= 1.  Returns -1 for CUCONV_BORDER_ZERO outside the
 * plane: the caller reads 0 there.  Works for kernels wider than the plane. */
CUCONV_HD int
cuconv_border_index (CuconvBorder border, int i, int n)
{
  if (i >= 0 && i < n)
    return i;
  switch (border) {
    case CUCONV_BORDER_CLAMP:
      return i < 0 ? 0 : n - 1;
    case CUCONV_BORDER_MIRROR:{
      int period;
      if (n == 1)
        return 0;
      period = 2 * (n - 1);
      i %= period;
      if (i < 0)
        i += period;
      return i < n ? i : period - i;
    }
    case CUCONV_BORDER_WRAP:
      i %= n;
      return i < 0 ? i + n : i;
    case CUCONV_BORDER_ZERO:
    default:
      return -1;
  }
}

#endif /* __CUCONV_BORDER_H__ */
