/* gst-cudaconvolve: the engine of a stream of frames.
 *
 * One object holds everything a stream of frames keeps between them: the
 * CPU's band threads and memory, the temporal denoise's state (host or
 * device), and in the caller's CUDA context the host and device frames'
 * pipelines and their buffers.  The caller hands over one frame at a
 * time, saying where its planes live; the engine composes the temporal
 * denoise, the filter and the regions for it (docs/design.md, "The
 * engine of a stream of frames").
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_ENGINE_H__
#define __CUCONV_ENGINE_H__

#include "cuconv.h"
#include "cuconv-cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a frame's planes live, which says where it is computed and when
 * the call's work is done. */
typedef enum
{
  CUCONV_MEMORY_CPU = 0,        /* host memory, filtered on the CPU; done
                                 * when the call returns */
  CUCONV_MEMORY_HOST,           /* host memory, through the GPU; done when
                                 * the call returns */
  CUCONV_MEMORY_PINNED,         /* page-locked host memory of the context
                                 * (in and out), through the GPU, enqueued
                                 * on the frame's stream */
  CUCONV_MEMORY_DEVICE,         /* device memory of the context, enqueued
                                 * on the frame's stream */
} CuconvMemory;

/* One frame handed to the engine. */
typedef struct
{
  const CuconvPlane *planes;    /* 1 to CUCONV_MAX_PLANES */
  int n_planes;
  CuconvMemory memory;
  /* A cudaStream_t of the context, for PINNED and DEVICE: src must stay
   * unchanged and dst unread until the stream has reached the call's
   * work. */
  void *stream;
  /* The spatial filter, or NULL: none (the temporal denoise alone, or a
   * copy). */
  const CuconvFilter *filter;
  /* Which pixels the filter applies to; NULL: the whole frame. */
  const CuconvRegions *regions;
  /* The temporal denoise's table (cuconv_temporal_lut), or NULL: off. */
  const uint8_t *temporal;
  /* The temporal state starts afresh with this frame (a reset). */
  int temporal_restart;
  /* The temporal denoise follows the motion (docs/semantics.md, "Motion
   * compensation"), found on component temporal_guide of plane 0 (its
   * luma, or green); 0: each sample blends with the state in its place. */
  int temporal_compensate;
  int temporal_guide;
  /* CUCONV_MEMORY_CPU: the bands a frame is cut into, each on a thread of
   * its own; 0: one a processor. */
  unsigned cpu_threads;
} CuconvFrame;

typedef struct _CuconvEngine CuconvEngine;

/* An engine without GPU resources; NULL without memory. */
CuconvEngine *cuconv_engine_new (void);

/* Frees everything; the GPU's must have been closed before. */
void cuconv_engine_free (CuconvEngine * e);

/* Makes the GPU's resources in the current context.  Returns 0, or
 * non-zero with st filled. */
int cuconv_engine_open_gpu (CuconvEngine * e, CuconvStatus * st);

/* Frees the GPU's resources, waiting for the frames that still use them;
 * in the context open_gpu ran in. */
void cuconv_engine_close_gpu (CuconvEngine * e);

/* Frees the CPU's threads and memory and the host temporal state: the
 * stream of frames stopped.  The next frame makes them anew. */
void cuconv_engine_release_cpu (CuconvEngine * e);

/* Filters one frame (docs/semantics.md): the temporal denoise of the
 * input into the state when f->temporal is set, then the filter from
 * there (or from the input) into dst where the regions say, the source
 * elsewhere; with no filter, the denoised source copied (a frame has a
 * filter, a temporal table or both).  The state
 * starts afresh on the first frame, on temporal_restart, after a frame
 * without the denoise, when the frame is computed elsewhere (CPU or GPU)
 * than the last one, and when the planes' geometry changes.  Returns 0,
 * or non-zero with st filled: CUCONV_ENGINE_NO_MEMORY for host memory
 * that runs out, else the CUDA error. */
#define CUCONV_ENGINE_NO_MEMORY (-1)
int cuconv_engine_filter (CuconvEngine * e, const CuconvFrame * f,
    CuconvStatus * st);

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_ENGINE_H__ */
