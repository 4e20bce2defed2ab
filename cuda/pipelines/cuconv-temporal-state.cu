/* gst-cudaconvolve: the temporal denoise of a stream of frames on the GPU
 * (docs/design.md, "Temporal denoise"): the state, one previous output in
 * device memory, and the order of a frame's steps, temporal into the state
 * and the spatial filter from it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-cuda.h"
#include "cuconv-kernels.cuh"
#include "cuconv-motion.h"

using namespace cuconv;

struct _CuconvTemporalState
{
  cudaStream_t own = nullptr;   /* for calls given no stream */
  GpuUse use;                   /* the last frame's work */
  bool stale = true;            /* the state holds no previous output */
  /* planes of device memory, pitched, kept while the geometry stays */
  DeviceBuffer state[CUCONV_MAX_PLANES];
  /* compensated: the new state is written beside the previous one, the
   * motion search's pyramids and vectors in motion */
  DeviceBuffer other[CUCONV_MAX_PLANES];
  DeviceBuffer motion;
  DeviceBuffer in[CUCONV_MAX_PLANES];   /* frames in host memory: the input */
  DeviceBuffer out[CUCONV_MAX_PLANES];  /* and the spatial filter's output */
};

/* d holds height rows of row_bytes; *grown when it was (re)allocated.  A
 * buffer of another geometry is freed once the GPU is done with it. */
static cudaError_t
ts_plane_ensure (CuconvTemporalState * ts, DeviceBuffer & d,
    size_t row_bytes, int height, bool *grown)
{
  /* a failed wait is left to the allocation after it to report */
  const auto wait_idle = [ts] {
    gpu_use_wait (ts->use);
    return cudaSuccess;
  };

  return buffer_fit_rows (d, row_bytes, height, BUFFER_ROWS_PITCHED,
      wait_idle, grown);
}

static size_t
ts_row_bytes (const CuconvPlane & p)
{
  return (size_t) p.width * p.n_comp * cuconv_plane_sample_bytes (&p);
}

extern "C" CuconvTemporalState *
cuconv_temporal_state_new (CuconvStatus * st)
{
  CuconvTemporalState *ts = new CuconvTemporalState ();
  cudaError_t e;

  e = cudaStreamCreateWithFlags (&ts->own, cudaStreamNonBlocking);
  if (e == cudaSuccess)
    e = gpu_use_create (ts->use);
  if (e != cudaSuccess) {
    fail (st, "cannot create the temporal denoise's stream", e);
    cuconv_temporal_state_free (ts);
    return NULL;
  }
  return ts;
}

extern "C" void
cuconv_temporal_state_free (CuconvTemporalState * ts)
{
  if (!ts)
    return;
  gpu_use_wait (ts->use);
  for (int p = 0; p < CUCONV_MAX_PLANES; p++) {
    buffer_free (ts->state[p]);
    buffer_free (ts->other[p]);
    buffer_free (ts->in[p]);
    buffer_free (ts->out[p]);
  }
  buffer_free (ts->motion);
  gpu_use_destroy (ts->use);
  if (ts->own)
    cudaStreamDestroy (ts->own);
  cudaGetLastError ();
  delete ts;
}

/* Copies the rows of each plane of src to dst (any memory the context
 * reaches: device, pinned or pageable host), on stream. */
static cudaError_t
ts_copy (const CuconvPlane * dst, const CuconvPlane * src, int n_planes,
    cudaStream_t stream)
{
  for (int p = 0; p < n_planes; p++) {
    const size_t row_bytes = ts_row_bytes (src[p]);
    cudaError_t e;

    if (row_bytes == 0 || src[p].height <= 0)
      continue;
    e = cudaMemcpy2DAsync (dst[p].dst, (size_t) dst[p].dst_stride,
        src[p].src, (size_t) src[p].src_stride, row_bytes,
        (size_t) src[p].height, cudaMemcpyDefault, stream);
    if (e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

static int
ts_enqueue (CuconvTemporalState * ts, CuconvDeviceFrames * rf,
    const CuconvPlane * planes, int n_planes, int on_host, const uint8_t * k,
    int guide, int first, const CuconvFilter * f,
    const CuconvRegions * regions, cudaStream_t s, CuconvStatus * st)
{
  CuconvPlane tp[CUCONV_MAX_PLANES], sp[CUCONV_MAX_PLANES];
  CuconvPlane cp[CUCONV_MAX_PLANES];
  bool grown = false;
  cudaError_t e;

  /* the previous frame's work on another stream reads and writes the
   * same buffers: this frame's comes after it on the GPU */
  e = gpu_use_follow (ts->use, s);
  if (e != cudaSuccess)
    return fail (st, "cannot order the temporal denoise", e);

  for (int p = 0; p < n_planes; p++) {
    const size_t row_bytes = ts_row_bytes (planes[p]);
    const int h = planes[p].height;

    e = ts_plane_ensure (ts, ts->state[p], row_bytes, h, &grown);
    if (e == cudaSuccess && guide >= 0)
      e = ts_plane_ensure (ts, ts->other[p], row_bytes, h, NULL);
    if (e == cudaSuccess && on_host)
      e = ts_plane_ensure (ts, ts->in[p], row_bytes, h, NULL);
    if (e == cudaSuccess && on_host && f)
      e = ts_plane_ensure (ts, ts->out[p], row_bytes, h, NULL);
    if (e != cudaSuccess)
      return fail (st, "cannot allocate the temporal denoise's state", e);
  }
  if (guide >= 0) {
    CuconvMotionLayout l;

    cuconv_motion_layout (planes[0].width, planes[0].height, &l);
    e = buffer_grow (ts->motion, l.bytes, 256, [ts] {
          gpu_use_wait (ts->use);
          return cudaSuccess;
        });
    if (e != cudaSuccess)
      return fail (st, "cannot allocate the motion search's buffers", e);
    /* the previous output stays where it is; the new one goes beside */
    for (int p = 0; p < n_planes; p++) {
      const DeviceBuffer t = ts->state[p];

      ts->state[p] = ts->other[p];
      ts->other[p] = t;
    }
  }
  /* a state of another geometry, or none, holds no previous output */
  if (grown || ts->stale)
    first = 1;

  /* temporal: input (uploaded first from host memory) into the state */
  for (int p = 0; p < n_planes; p++) {
    tp[p] = planes[p];
    if (on_host) {
      tp[p].src = ts->in[p].ptr;
      tp[p].src_stride = (ptrdiff_t) ts->in[p].pitch;
      /* the upload: from the frame to in */
      cp[p] = planes[p];
      cp[p].dst = ts->in[p].ptr;
      cp[p].dst_stride = (ptrdiff_t) ts->in[p].pitch;
    }
    tp[p].dst = ts->state[p].ptr;
    tp[p].dst_stride = (ptrdiff_t) ts->state[p].pitch;
  }
  if (on_host && (e = ts_copy (cp, cp, n_planes, s)) != cudaSuccess)
    return fail (st, "cannot upload a frame to denoise", e);
  if (guide >= 0) {
    const uint8_t *prev[CUCONV_MAX_PLANES];
    ptrdiff_t prev_stride[CUCONV_MAX_PLANES];

    for (int p = 0; p < n_planes; p++) {
      prev[p] = ts->other[p].ptr;
      prev_stride[p] = (ptrdiff_t) ts->other[p].pitch;
    }
    if (cuconv_temporal_compensated_device (tp, n_planes, prev, prev_stride,
            guide, ts->motion.ptr, k, first, s, st) != 0)
      return st ? st->code : -1;
  } else if (cuconv_temporal_device (tp, n_planes, k, first, s, st) != 0) {
    return st ? st->code : -1;
  }

  /* spatial: the state to the output (through out for host memory) */
  for (int p = 0; p < n_planes; p++) {
    sp[p] = planes[p];
    sp[p].src = ts->state[p].ptr;
    sp[p].src_stride = (ptrdiff_t) ts->state[p].pitch;
    if (on_host && f) {
      sp[p].dst = ts->out[p].ptr;
      sp[p].dst_stride = (ptrdiff_t) ts->out[p].pitch;
    }
  }
  if (f) {
    if (cuconv_device_frames_filter (rf, sp, n_planes, f, regions, s,
            st) != 0)
      return st ? st->code : -1;
    if (on_host) {
      /* the download: from out to the frame */
      for (int p = 0; p < n_planes; p++) {
        cp[p] = planes[p];
        cp[p].src = ts->out[p].ptr;
        cp[p].src_stride = (ptrdiff_t) ts->out[p].pitch;
      }
      if ((e = ts_copy (cp, cp, n_planes, s)) != cudaSuccess)
        return fail (st, "cannot download a denoised frame", e);
    }
  } else if ((e = ts_copy (sp, sp, n_planes, s)) != cudaSuccess) {
    return fail (st, "cannot copy a denoised frame", e);
  }

  e = gpu_use_record (ts->use, s);
  if (e != cudaSuccess)
    return fail (st, "cannot order the temporal denoise", e);
  ts->stale = false;
  return 0;
}

extern "C" int
cuconv_temporal_state_filter (CuconvTemporalState * ts,
    CuconvDeviceFrames * rf, const CuconvPlane * planes, int n_planes,
    int on_host, const uint8_t * k, int guide, int first,
    const CuconvFilter * f, const CuconvRegions * regions, void *stream,
    CuconvStatus * st)
{
  cudaStream_t s = stream ? (cudaStream_t) stream : ts->own;
  int ret;

  if (n_planes < 0 || n_planes > CUCONV_MAX_PLANES)
    return fail (st, "the temporal denoise takes 4 planes at most",
        cudaErrorInvalidValue);
  ret = ts_enqueue (ts, rf, planes, n_planes, on_host, k, guide, first, f,
      regions, s, st);
  if (ret != 0) {
    /* whatever was enqueued finishes; the state is not trusted again */
    cudaStreamSynchronize (s);
    cudaGetLastError ();
    ts->stale = true;
    return ret;
  }
  if (!stream) {
    const cudaError_t e = cudaStreamSynchronize (s);

    if (e != cudaSuccess) {
      ts->stale = true;
      return fail (st, "the GPU failed to denoise a frame", e);
    }
  }
  return 0;
}
