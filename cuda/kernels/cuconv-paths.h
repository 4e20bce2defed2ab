/* gst-cudaconvolve: forcing a GPU path, for the conformance tests and the
 * benchmark only (internal: the element and the engine's users see
 * cuconv-cuda.h alone, where the dispatch chooses).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_PATHS_H__
#define __CUCONV_PATHS_H__

#include "cuconv-cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which GPU path filters a plane (docs/design.md): the dispatch's choice,
 * or one forced, for tests and benchmarks. */
typedef enum
{
  CUCONV_PATH_AUTO = 0,         /* the dispatch's choice */
  CUCONV_PATH_GLOBAL,           /* passes through global memory (any filter
                                 * of one or two separable terms with
                                 * explicit taps; others as AUTO) */
  CUCONV_PATH_RECURSIVE,        /* recursive filtering (the untruncated
                                 * gaussian; whole planes) */
  CUCONV_PATH_TILED,            /* the fused tile kernels where AUTO would
                                 * take the streaming kernel; others as
                                 * AUTO (tests, the benchmark) */
  CUCONV_PATH_STREAM,           /* the streaming kernel wherever it takes
                                 * the plane and filter, whatever the
                                 * plane's size; others as AUTO */
  CUCONV_PATH_MMA,              /* the tensor-core blur wherever it takes
                                 * the plane and filter; others as
                                 * TILED */
  CUCONV_PATH_WINDOW,           /* the register-window passes wherever
                                 * they take the plane and filter
                                 * (window_takes); others as GLOBAL */
  CUCONV_PATH_NLMEANS_SUMS,     /* non-local means by sums; others as
                                 * TILED */
} CuconvPath;

/* cuconv_filter_device () with the path forced for every plane it
 * applies to; CUCONV_PATH_AUTO is cuconv_filter_device () itself. */
int cuconv_filter_device_path (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvPath path, void *stream, CuconvStatus * st);

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_PATHS_H__ */
