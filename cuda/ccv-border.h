/* gst-cudaconvolve: border modes, defined once for the CPU and the GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CCV_BORDER_H__
#define __CCV_BORDER_H__

#ifdef __CUDACC__
#define CCV_HD __host__ __device__ __forceinline__
#else
#define CCV_HD static inline
#endif

/* Values match GstCudaConvolveBorder (gst/gstcudaconvolve.h). */
typedef enum
{
  CCV_BORDER_CLAMP = 0,         /* aaa|abcd|ddd */
  CCV_BORDER_MIRROR = 1,        /* dcb|abcd|cba: edge sample not repeated */
  CCV_BORDER_WRAP = 2,          /* bcd|abcd|abc */
  CCV_BORDER_ZERO = 3,          /* 000|abcd|000 */
  CCV_BORDER_N
} CcvBorder;

/* Maps a coordinate i, which may lie any distance outside [0, n), onto the
 * sample it reads, for n >= 1.  Returns -1 for CCV_BORDER_ZERO outside the
 * plane: the caller reads 0 there.  Works for kernels wider than the plane. */
CCV_HD int
ccv_border_index (CcvBorder border, int i, int n)
{
  if (i >= 0 && i < n)
    return i;
  switch (border) {
    case CCV_BORDER_CLAMP:
      return i < 0 ? 0 : n - 1;
    case CCV_BORDER_MIRROR:{
      int period;
      if (n == 1)
        return 0;
      period = 2 * (n - 1);
      i %= period;
      if (i < 0)
        i += period;
      return i < n ? i : period - i;
    }
    case CCV_BORDER_WRAP:
      i %= n;
      return i < 0 ? i + n : i;
    case CCV_BORDER_ZERO:
    default:
      return -1;
  }
}

#endif /* __CCV_BORDER_H__ */
