/* gst-cudaconvolve: the engine of a stream of frames (cuconv-engine.h).
 *
 * Each frame goes one of two ways.  On the CPU: the temporal denoise into
 * the host state in bands of rows, then the CPU engine in bands where it
 * takes the filter (else the reference), then the source put back where
 * the regions leave it.  On the GPU: with the temporal denoise, the
 * device state (cuconv_temporal_state_filter), which runs the device
 * frames' filter after it; without, for host memory the strip pipeline
 * (the whole frame, then the source put back on the CPU), for page-locked
 * memory the whole frame enqueued and for device memory the device
 * frames' filter, both with the regions on the GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cuconv-engine.h"
#include "cuconv-bands.h"
#include "cuconv-motion.h"

/* The host temporal state's rows start on this boundary. */
#define HOST_ALIGN 64

/* The CPU backend's temporal state: one block, planes one after the
 * other; the compensated denoise writes the new state beside the previous
 * one (the other block), with the motion search's scratch. */
typedef struct
{
  uint8_t *data;
  uint8_t *other;
  uint8_t *motion;
  size_t size;
  size_t offset[CUCONV_MAX_PLANES];
  ptrdiff_t stride[CUCONV_MAX_PLANES];
  int rows[CUCONV_MAX_PLANES];
  int n_planes;
} HostState;

struct _CuconvEngine
{
  /* the CPU: its bands' threads and memory, for cpu_threads_asked */
  CuconvBands *bands;
  CuconvCpu *cpu;
  unsigned cpu_threads_asked;
  HostState host_state;

  /* the temporal denoise: whether a frame was denoised since the last
   * restart, and where */
  int have_last;
  int last_on_gpu;

  /* the GPU, in the caller's context; the temporal state made on the
   * first frame that needs it */
  CuconvHostFrames *host_frames;
  CuconvDeviceFrames *device_frames;
  CuconvTemporalState *temporal;
};

static int
fail (CuconvStatus * st, int code, const char *message)
{
  if (st) {
    st->code = code;
    g_strlcpy (st->message, message, sizeof (st->message));
  }
  return code;
}

CuconvEngine *
cuconv_engine_new (void)
{
  return calloc (1, sizeof (CuconvEngine));
}

void
cuconv_engine_free (CuconvEngine * e)
{
  if (!e)
    return;
  cuconv_engine_release_cpu (e);
  free (e);
}

int
cuconv_engine_open_gpu (CuconvEngine * e, CuconvStatus * st)
{
  e->host_frames = cuconv_host_frames_new (st);
  if (e->host_frames)
    e->device_frames = cuconv_device_frames_new (st);
  if (!e->device_frames) {
    cuconv_engine_close_gpu (e);
    return st->code ? st->code : -1;
  }
  return 0;
}

void
cuconv_engine_close_gpu (CuconvEngine * e)
{
  g_clear_pointer (&e->host_frames, cuconv_host_frames_free);
  g_clear_pointer (&e->device_frames, cuconv_device_frames_free);
  /* waits for the frames that still use it */
  g_clear_pointer (&e->temporal, cuconv_temporal_state_free);
}

static void
host_state_free (HostState * hs)
{
  g_clear_pointer (&hs->data, g_free);
  g_clear_pointer (&hs->other, g_free);
  g_clear_pointer (&hs->motion, g_free);
  hs->n_planes = 0;
}

void
cuconv_engine_release_cpu (CuconvEngine * e)
{
  g_clear_pointer (&e->bands, cuconv_bands_free);
  g_clear_pointer (&e->cpu, cuconv_cpu_free);
  host_state_free (&e->host_state);
  e->have_last = 0;
}

/* Bytes of a row of samples of p. */
static size_t
row_bytes (const CuconvPlane * p)
{
  return (size_t) p->width * p->n_comp * cuconv_plane_sample_bytes (p);
}

/* Copies the samples of each plane's src rows to its dst rows (host). */
static void
copy_planes (const CuconvPlane * planes, int n_planes)
{
  for (int p = 0; p < n_planes; p++) {
    const size_t n = row_bytes (&planes[p]);

    for (int y = 0; y < planes[p].height; y++)
      memcpy (planes[p].dst + (size_t) y * planes[p].dst_stride,
          planes[p].src + (size_t) y * planes[p].src_stride, n);
  }
}

/* The bands' threads and memory for cpu_threads (0: one a processor). */
static int
ensure_bands (CuconvEngine * e, unsigned cpu_threads)
{
  const unsigned n = cpu_threads ? cpu_threads : g_get_num_processors ();

  if (e->bands && e->cpu && cpu_threads == e->cpu_threads_asked)
    return 0;
  g_clear_pointer (&e->bands, cuconv_bands_free);
  g_clear_pointer (&e->cpu, cuconv_cpu_free);
  e->bands = cuconv_bands_new (n);
  e->cpu = cuconv_cpu_new (cuconv_bands_n (e->bands));
  e->cpu_threads_asked = cpu_threads;
  return e->cpu ? 0 : -1;
}

/* state[p] is planes[p] with dst the host state, (re)allocated for the
 * planes' geometry; *restart becomes 1 when it was.  -1 without memory. */
static int
host_state_planes (HostState * hs, const CuconvPlane * planes, int n_planes,
    CuconvPlane * state, int *restart)
{
  ptrdiff_t stride[CUCONV_MAX_PLANES];
  size_t offset[CUCONV_MAX_PLANES], size = 0;
  int same = hs->data && hs->n_planes == n_planes;

  for (int p = 0; p < n_planes; p++) {
    stride[p] = (ptrdiff_t) ((row_bytes (&planes[p]) + HOST_ALIGN - 1) /
        HOST_ALIGN * HOST_ALIGN);
    offset[p] = size;
    size += (size_t) stride[p] * (size_t) MAX (planes[p].height, 0);
    same = same && hs->stride[p] == stride[p] &&
        hs->rows[p] == planes[p].height;
  }
  if (!same) {
    host_state_free (hs);
    hs->data = g_try_malloc (MAX (size, 1));
    if (!hs->data)
      return -1;
    hs->size = MAX (size, 1);
    hs->n_planes = n_planes;
    for (int p = 0; p < n_planes; p++) {
      hs->offset[p] = offset[p];
      hs->stride[p] = stride[p];
      hs->rows[p] = planes[p].height;
    }
    *restart = 1;
  }
  for (int p = 0; p < n_planes; p++) {
    state[p] = planes[p];
    state[p].dst = hs->data + hs->offset[p];
    state[p].dst_stride = hs->stride[p];
  }
  return 0;
}

typedef struct
{
  CuconvEngine *e;
  const CuconvPlane *planes;
  int n_planes;
  const CuconvFilter *filter;
  int pass;
} CpuJob;

static gboolean
cpu_band (guint band, gpointer data)
{
  const CpuJob *job = data;

  return cuconv_cpu_frame_band (job->e->cpu, job->planes, job->n_planes,
      job->filter, job->pass, (int) band) == 0;
}

typedef struct
{
  const CuconvPlane *state;
  int n_planes;
  unsigned n_bands;
  const uint8_t *k;
  int restart;
  /* compensated: the previous state (the new one is state's dst) and the
   * vectors */
  const HostState *prev;
  const uint8_t *prev_data;
  const CuconvMotionVector *field;
} TemporalJob;

static gboolean
temporal_band (guint band, gpointer data)
{
  const TemporalJob *job = data;

  for (int p = 0; p < job->n_planes; p++) {
    const int64_t h = job->state[p].height;
    const int y0 = (int) (h * band / job->n_bands);
    const int y1 = (int) (h * (band + 1) / job->n_bands);

    if (job->prev)
      cuconv_temporal_rows_compensated (&job->state[p],
          job->prev_data + job->prev->offset[p], job->prev->stride[p],
          job->field, cuconv_motion_blocks (job->state[0].width), job->k,
          job->restart, y0, y1);
    else
      cuconv_temporal_rows (&job->state[p], job->k, job->restart, y0, y1);
  }
  return TRUE;
}

/* One level of the motion search: rows of blocks in bands. */
typedef struct
{
  int w, h, level;
  unsigned n_bands;
  void *scratch;
} MotionJob;

static gboolean
motion_band (guint band, gpointer data)
{
  const MotionJob *job = data;
  const int64_t n = cuconv_motion_blocks (cuconv_motion_level_size (job->h,
          job->level));

  cuconv_motion_level_rows (job->w, job->h, job->scratch, job->level,
      (int) (n * band / job->n_bands), (int) (n * (band + 1) / job->n_bands));
  return TRUE;
}

/* The compensated denoise's set-up: the new state in the other block, the
 * previous one's vectors (none on a restart), each level's in bands.  -1
 * without memory. */
static int
compensate_prepare (CuconvEngine * e, const CuconvFrame * fr,
    CuconvPlane * state, TemporalJob * tj)
{
  HostState *hs = &e->host_state;
  MotionJob mj = { state[0].width, state[0].height, 0,
    cuconv_bands_n (e->bands), NULL
  };
  CuconvMotionLayout l;

  if (!hs->other && !(hs->other = g_try_malloc (hs->size)))
    return -1;
  tj->prev = hs;
  tj->prev_data = hs->data;
  for (int p = 0; p < fr->n_planes; p++)
    state[p].dst = hs->other + hs->offset[p];
  if (tj->restart)
    return 0;
  cuconv_motion_layout (mj.w, mj.h, &l);
  if (!hs->motion && !(hs->motion = g_try_malloc (MAX (l.bytes, 1))))
    return -1;
  mj.scratch = hs->motion;
  cuconv_motion_pyramids (&state[0], fr->temporal_guide, hs->data,
      hs->stride[0], hs->motion);
  for (mj.level = CUCONV_MOTION_LEVELS - 1; mj.level >= 0; mj.level--)
    cuconv_bands_run (e->bands, motion_band, &mj);
  tj->field = (const CuconvMotionVector *) (hs->motion + l.field[0]);
  return 0;
}

/* Filters planes with f on the CPU: in bands where the CPU engine takes
 * f, else with the reference.  0, or -1 without memory. */
static int
cpu_planes (const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    void *data)
{
  CuconvEngine *e = data;
  CpuJob job = { e, planes, n_planes, f, 0 };
  int n_passes, ok;

  if (!cuconv_cpu_takes (f))
    return cuconv_reference_frame (planes, n_planes, f);
  ok = cuconv_cpu_prepare (e->cpu, planes, n_planes, f) == 0;
  n_passes = cuconv_cpu_passes (f, planes, n_planes);
  for (job.pass = 0; ok && job.pass < n_passes; job.pass++)
    ok = cuconv_bands_run (e->bands, cpu_band, &job);
  return ok ? 0 : -1;
}

/* Region-relative filters on host memory, on the CPU. */
static int
relative_cpu (CuconvEngine * e, const CuconvPlane * planes, int n_planes,
    const CuconvRegions * regions, unsigned cpu_threads)
{
  if (ensure_bands (e, cpu_threads) != 0)
    return -1;
  return cuconv_regions_relative_filter (planes, n_planes, regions, 0,
      cpu_planes, e);
}

/* A frame on the CPU: the denoise into the host state, which then is the
 * filter's source; the filter in bands (or the reference); the source
 * back where the regions leave it. */
static int
filter_cpu (CuconvEngine * e, const CuconvFrame * fr, int restart,
    CuconvStatus * st)
{
  CuconvPlane planes[CUCONV_MAX_PLANES];
  int ok;

  memcpy (planes, fr->planes, sizeof (CuconvPlane) * fr->n_planes);
  if (ensure_bands (e, fr->cpu_threads) != 0)
    goto no_memory;
  if (fr->temporal) {
    CuconvPlane state[CUCONV_MAX_PLANES];
    TemporalJob tj = { state, fr->n_planes, cuconv_bands_n (e->bands),
      fr->temporal, restart
    };

    if (host_state_planes (&e->host_state, planes, fr->n_planes, state,
            &tj.restart) != 0)
      goto no_memory;
    if (fr->temporal_compensate) {
      if (compensate_prepare (e, fr, state, &tj) != 0)
        goto no_memory;
    }
    cuconv_bands_run (e->bands, temporal_band, &tj);
    if (fr->temporal_compensate) {
      uint8_t *t = e->host_state.data;

      e->host_state.data = e->host_state.other;
      e->host_state.other = t;
    }
    for (int p = 0; p < fr->n_planes; p++) {
      planes[p].src = state[p].dst;
      planes[p].src_stride = state[p].dst_stride;
    }
  }

  if (!fr->filter || cuconv_regions_filter_nothing (fr->regions)) {
    copy_planes (planes, fr->n_planes);
    return 0;
  }
  if (cuconv_regions_relative (fr->regions))
    ok = cuconv_regions_relative_filter (planes, fr->n_planes, fr->regions,
        0, cpu_planes, e) == 0;
  else if ((ok = cpu_planes (planes, fr->n_planes, fr->filter, e) == 0))
    cuconv_regions_restore (planes, fr->n_planes, fr->regions);
  if (ok)
    return 0;

no_memory:
  return fail (st, CUCONV_ENGINE_NO_MEMORY,
      "out of memory while filtering a frame on the CPU");
}

/* A frame through the GPU. */
static int
filter_gpu (CuconvEngine * e, const CuconvFrame * fr, int restart,
    CuconvStatus * st)
{
  const int on_host = fr->memory != CUCONV_MEMORY_DEVICE;
  /* host memory: synchronously, on a stream of the engine's */
  void *stream = fr->memory == CUCONV_MEMORY_HOST ? NULL : fr->stream;

  if (!e->host_frames)
    return fail (st, -1, "the engine's GPU side is not open");
  if (fr->temporal) {
    if (!e->temporal && !(e->temporal = cuconv_temporal_state_new (st)))
      return st->code ? st->code : -1;
    return cuconv_temporal_state_filter (e->temporal, e->device_frames,
        fr->planes, fr->n_planes, on_host, fr->temporal,
        fr->temporal_compensate ? fr->temporal_guide : -1, restart,
        fr->filter, fr->regions, stream, st);
  }

  /* region-relative filters on host memory: on the CPU, at the cost of
   * the regions' area (the frame is done when the call returns) */
  if (on_host && cuconv_regions_relative (fr->regions))
    return relative_cpu (e, fr->planes, fr->n_planes, fr->regions,
        fr->cpu_threads) == 0 ? 0 : fail (st, CUCONV_ENGINE_NO_MEMORY,
        "out of memory while filtering regions on the CPU");

  switch (fr->memory) {
    case CUCONV_MEMORY_HOST:
      /* the whole frame through the strip pipeline, the source put back
       * on the CPU where the regions leave it */
      if (cuconv_regions_filter_nothing (fr->regions)) {
        copy_planes (fr->planes, fr->n_planes);
        return 0;
      }
      if (cuconv_host_frames_strips (e->host_frames, fr->planes,
              fr->n_planes, fr->filter, st) != 0)
        return st->code;
      cuconv_regions_restore (fr->planes, fr->n_planes, fr->regions);
      return 0;
    case CUCONV_MEMORY_PINNED:
      return cuconv_host_frames_enqueue (e->host_frames, fr->planes,
          fr->n_planes, fr->filter, e->device_frames, fr->regions, stream,
          st);
    default:
      return cuconv_device_frames_filter (e->device_frames, fr->planes,
          fr->n_planes, fr->filter, fr->regions, stream, st);
  }
}

int
cuconv_engine_filter (CuconvEngine * e, const CuconvFrame * fr,
    CuconvStatus * st)
{
  const int on_gpu = fr->memory != CUCONV_MEMORY_CPU;
  int restart = 0;

  if (fr->n_planes < 1 || fr->n_planes > CUCONV_MAX_PLANES)
    return fail (st, -1, "a frame has 1 to 4 planes");
  if (!fr->filter && !fr->temporal)
    return fail (st, -1, "a frame with neither filter nor denoise");
  if (fr->temporal && fr->temporal_compensate &&
      (fr->temporal_guide < 0 || fr->temporal_guide >= fr->planes[0].n_comp
          || fr->planes[0].sub_x != 1 || fr->planes[0].sub_y != 1))
    return fail (st, -1, "the motion's guide is not a component of the "
        "first plane");
  if (fr->temporal) {
    restart = fr->temporal_restart || !e->have_last || e->last_on_gpu != on_gpu;
    e->have_last = 1;
    e->last_on_gpu = on_gpu;
    /* frames denoised on the GPU: the host state is stale for good */
    if (on_gpu)
      host_state_free (&e->host_state);
  } else {
    e->have_last = 0;
  }
  if (on_gpu)
    return filter_gpu (e, fr, restart, st);
  return filter_cpu (e, fr, restart, st);
}
