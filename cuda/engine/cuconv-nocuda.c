/* gst-cudaconvolve: the engine's CUDA entry points (cuconv-cuda.h) in a
 * build without the CUDA toolkit, so that the element is one source for
 * both builds.  GstCudaVideoFilter never opens the CUDA backend in such a
 * build, so none of these is reached; each fails as a missing device
 * would.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>

#include "cuconv-cuda.h"
#include "cuconv-paths.h"

static void
no_cuda (CuconvStatus * st)
{
  if (st) {
    st->code = -1;
    snprintf (st->message, sizeof (st->message),
        "This build of the plugin has no CUDA support.");
  }
}

CuconvStrips *
cuconv_strips_new (CuconvStatus * st)
{
  no_cuda (st);
  return NULL;
}

void
cuconv_strips_free (CuconvStrips * s)
{
}

int
cuconv_strips_process (CuconvStrips * s, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

int
cuconv_strips_enqueue (CuconvStrips * s, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvRegionFilter * rf,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

int
cuconv_filter_device (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

int
cuconv_temporal_device (const CuconvPlane * planes, int n_planes,
    const uint8_t * k, int first, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

int
cuconv_filter_device_path (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvPath path, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

CuconvRegionFilter *
cuconv_region_filter_new (CuconvStatus * st)
{
  no_cuda (st);
  return NULL;
}

void
cuconv_region_filter_free (CuconvRegionFilter * rf)
{
}

int
cuconv_region_filter_device (CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

CuconvTemporalState *
cuconv_temporal_state_new (CuconvStatus * st)
{
  no_cuda (st);
  return NULL;
}

void
cuconv_temporal_state_free (CuconvTemporalState * ts)
{
}

int
cuconv_temporal_state_filter (CuconvTemporalState * ts,
    CuconvRegionFilter * rf, const CuconvPlane * planes, int n_planes,
    int on_host, const uint8_t * k, int first, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}
