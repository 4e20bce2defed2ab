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

CuconvHostFrames *
cuconv_host_frames_new (CuconvStatus * st)
{
  no_cuda (st);
  return NULL;
}

void
cuconv_host_frames_free (CuconvHostFrames * s)
{
}

int
cuconv_host_frames_strips (CuconvHostFrames * s, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}

int
cuconv_host_frames_enqueue (CuconvHostFrames * s, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvDeviceFrames * rf,
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
cuconv_temporal_compensated_device (const CuconvPlane * planes,
    int n_planes, const uint8_t * const *prev, const ptrdiff_t * prev_stride,
    int guide, void *scratch, const uint8_t * k, int first, void *stream,
    CuconvStatus * st)
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

CuconvDeviceFrames *
cuconv_device_frames_new (CuconvStatus * st)
{
  no_cuda (st);
  return NULL;
}

void
cuconv_device_frames_free (CuconvDeviceFrames * rf)
{
}

int
cuconv_device_frames_filter (CuconvDeviceFrames * rf,
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
    CuconvDeviceFrames * rf, const CuconvPlane * planes, int n_planes,
    int on_host, const uint8_t * k, int guide, int first,
    const CuconvFilter * f, const CuconvRegions * regions, void *stream,
    CuconvStatus * st)
{
  no_cuda (st);
  return -1;
}
