/* gst-cudaconvolve: the CUDA engine's C API.
 *
 * One context: every entry point below works in the CUDA context that is
 * current on the calling thread (the element pushes its GstCudaContext
 * around each call; a test may make the device's primary context current
 * itself).  The engine never selects a device, never creates a context and
 * never falls back to the runtime's primary context: its device buffers,
 * streams, events and pinned host memory all belong to the caller's
 * context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_CUDA_H__
#define __CUCONV_CUDA_H__

#include "cuconv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The outcome of an engine call: code 0 on success, else the cudaError_t
 * (or another non-zero value for a refusal that is no CUDA error), with a
 * sentence for the user in message. */
typedef struct
{
  int code;
  char message[256];
} CuconvStatus;

/* Number of CUDA devices the driver reports; 0 without a driver or GPU.
 * Creates no context. */
int cuconv_device_count (void);

/* Frames whose planes are in host memory, uploaded, filtered and
 * downloaded on three streams of the current context: in strips and
 * synchronously (cuconv_host_frames_strips), or for page-locked frames
 * whole and asynchronously (cuconv_host_frames_enqueue).  Device and
 * pinned staging buffers are allocated on the first frame that needs
 * them, kept across calls and reallocated only when the frame's geometry
 * changes. */
typedef struct _CuconvHostFrames CuconvHostFrames;

/* Creates the streams and events in the current context.  NULL with st
 * filled on failure. */
CuconvHostFrames *cuconv_host_frames_new (CuconvStatus * st);

/* Frees everything; call in the context cuconv_host_frames_new ran in. */
void cuconv_host_frames_free (CuconvHostFrames * s);

/* Filters a frame synchronously: when it returns 0 every dst plane holds
 * the result.  Page-locked host memory (the element's pinned pool) is
 * uploaded straight from where it lies.  Returns non-zero with st filled
 * on any CUDA error; dst is then undefined and must not be pushed.  Waits
 * first for frames still enqueued by cuconv_host_frames_enqueue (). */
int cuconv_host_frames_strips (CuconvHostFrames * s,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    CuconvStatus * st);

/* Enqueues a whole frame whose src and dst planes are page-locked host
 * memory of the current context: each plane uploaded in one copy,
 * filtered as cuconv_filter_device () does (with regions that filter less
 * than the whole frame: as cuconv_device_frames_filter () does with df)
 * and downloaded in one copy, the first plane (luma) ahead of the others
 * when the whole frame is filtered, so that its download overlaps their
 * filtering; stream (a cudaStream_t of the context) is made to wait for
 * all of it.  Returns at once: src must stay unchanged and dst unread
 * until stream has reached that point.  The frame does not wait for the
 * work already on stream (which holds the previous frame's end): src must
 * be written when the call is made, and nothing else may use dst until
 * then.  Frames alternate between two sets of device buffers, so that one
 * frame's upload overlaps the previous one's download.  Pageable planes
 * give the same result, with copies that do not overlap.  Returns 0, or
 * non-zero with st filled, all that was enqueued then finished. */
typedef struct _CuconvDeviceFrames CuconvDeviceFrames;
int cuconv_host_frames_enqueue (CuconvHostFrames * s,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    CuconvDeviceFrames * df, const CuconvRegions * regions, void *stream,
    CuconvStatus * st);

/* Filters planes whose src and dst are device pointers of the current
 * context, asynchronously on stream (a cudaStream_t of that context).
 * The kernels alone, for the conformance suite and the benchmark: the
 * wide paths' intermediates are allocated for the call (stream-ordered);
 * a stream of frames goes through the pipelines that keep them
 * (CuconvDeviceFrames, CuconvHostFrames).  Each plane's src must be
 * readable for height * src_stride bytes, and up to the next multiple of
 * 16 past the last row's samples
 * when src and its stride are 16-byte aligned (as cudaMalloc and
 * cudaMallocPitch give).  Returns 0, or non-zero with st (when not NULL)
 * filled. */
int cuconv_filter_device (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *stream, CuconvStatus * st);

/* Frames in device memory, whole or by regions
 * (pipelines/cuconv-device-frames.cu).  INSIDE:
 * the source is copied to dst, then one launch filters the rectangles in
 * place, tile by tile, each reading its reach from the source through the
 * border mode: past that copy the cost follows the regions' area, not the
 * frame's.  A plane whose rectangles would cost more than the plane, or
 * a filter the tiles cannot hold, is filtered whole into a scratch plane
 * and the rectangles copied from there.  OUTSIDE: the whole frame, then
 * the source back inside the rectangles.  The work lists and the scratch
 * (the wide paths' intermediates too) are kept across frames in the
 * current context and only grow: the engine of a stream of frames. */
CuconvDeviceFrames *cuconv_device_frames_new (CuconvStatus * st);
void cuconv_device_frames_free (CuconvDeviceFrames * df);

/* Filters planes (device pointers of the current context) as regions
 * says, asynchronously on stream: dst holds the source where the input
 * stays and the filter's output elsewhere (CUCONV_REGION_FRAME, or
 * regions NULL: cuconv_filter_device with df's scratch).  Returns 0, or
 * non-zero with st filled. */
int cuconv_device_frames_filter (CuconvDeviceFrames * df,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st);

/* The temporal denoise of planes in device memory of the current context
 * (cuconv_temporal_rows for every row, bit for bit), asynchronously on
 * stream: each plane's src is the input, its dst the state, the previous
 * output overwritten with the new one (first: the input copied).  Returns
 * 0, or non-zero with st (when not NULL) filled. */
int cuconv_temporal_device (const CuconvPlane * planes, int n_planes,
    const uint8_t * k, int first, void *stream, CuconvStatus * st);

/* The compensated temporal denoise of planes in device memory of the
 * current context (cuconv_motion_search () on component guide of plane 0,
 * then cuconv_temporal_rows_compensated () for every row, bit for bit),
 * asynchronously on stream: each plane's src is the input, prev[p] (rows
 * of prev_stride[p]) the previous output, dst the new one; scratch holds
 * cuconv_motion_layout ()'s bytes for plane 0 (unused on a first frame:
 * the input copied).  Returns 0, or non-zero with st (when not NULL)
 * filled. */
int cuconv_temporal_compensated_device (const CuconvPlane * planes,
    int n_planes, const uint8_t * const *prev, const ptrdiff_t * prev_stride,
    int guide, void *scratch, const uint8_t * k, int first, void *stream,
    CuconvStatus * st);

/* The temporal denoise of a stream of frames, composed with the spatial
 * filter (cuconv-temporal-state.cu, docs/design.md): the state, one
 * previous output of each plane in device memory of the current context,
 * allocated on the first frame and again only when the planes' geometry
 * changes.  A frame's work is ordered on the GPU after the previous
 * frame's, whatever streams they ran on. */
typedef struct _CuconvTemporalState CuconvTemporalState;

/* Creates its stream and event in the current context; no buffer yet.
 * NULL with st filled on failure. */
CuconvTemporalState *cuconv_temporal_state_new (CuconvStatus * st);

/* Waits until the GPU is done with its buffers, then frees everything;
 * call in the context cuconv_temporal_state_new ran in. */
void cuconv_temporal_state_free (CuconvTemporalState * ts);

/* One frame: each plane's src denoised into the state with table k
 * (cuconv_temporal_device, or with guide >= 0
 * cuconv_temporal_compensated_device, the new state then beside the
 * previous one; first: the input becomes the state, as it does on the
 * first frame, after a failure and when the geometry changed), then the state filtered into dst by df with f and regions
 * (cuconv_device_frames_filter), or, f NULL, copied to dst.  src and dst
 * are device memory of the context, or with on_host host memory (the
 * input uploaded, the output downloaded through device buffers of ts).
 * Enqueued on stream (a cudaStream_t of the context): src must stay
 * unchanged and dst unread until stream has reached that point.  stream
 * NULL: on a stream of ts, and done when the call returns.  Returns 0, or
 * non-zero with st filled, all that was enqueued then finished. */
int cuconv_temporal_state_filter (CuconvTemporalState * ts,
    CuconvDeviceFrames * df, const CuconvPlane * planes, int n_planes,
    int on_host, const uint8_t * k, int guide, int first,
    const CuconvFilter * f, const CuconvRegions * regions, void *stream,
    CuconvStatus * st);

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_CUDA_H__ */
