/* gst-cudaconvolve: frames in host memory (CuconvHostFrames): device buffers,
 * page-locked staging, three streams and their events.  Two ways through:
 * the strip pipeline (cuconv_host_frames_strips), synchronous, where upload,
 * compute and download of a frame's strips overlap; and for page-locked
 * frames the whole frame enqueued (cuconv_host_frames_enqueue), where the
 * upload of one frame overlaps the download of the one before.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"

/* A plane is cut into at most this many strips, each a multiple of the
 * tile height, so strip k+1 uploads while strip k is filtered and strip
 * k-1 downloads. */
#define CUCONV_MAX_STRIPS 8
#define CUCONV_EVENTS (CUCONV_MAX_PLANES * CUCONV_MAX_STRIPS)
/* Enqueued frames alternate between two sets of device buffers, so that
 * frame n uploads while frame n - 1 is still filtered or downloaded. */
#define CUCONV_SLOTS 2
/* An enqueued frame goes through in two groups of planes, the first plane
 * (luma) and the others, so that the luma downloads while the chroma is
 * filtered. */
#define CUCONV_GROUPS 2

/* A plane's buffers, kept while its geometry stays the same: on the
 * device, and page-locked host staging for frames in pageable memory. */
struct DevPlane
{
  cuconv::DeviceBuffer src, dst;
  uint8_t *stage_in, *stage_out;        /* wb * height, tight */
  int wb, height;               /* wb: bytes of a row */
};

struct _CuconvHostFrames
{
  cudaStream_t up, compute, down;
  /* one of each per plane and strip of a frame */
  cudaEvent_t uploaded[CUCONV_EVENTS], filtered[CUCONV_EVENTS];
  cudaEvent_t downloaded[CUCONV_EVENTS];
  /* enqueued frames: each group's steps (each waited for in the call that
   * records it), and each slot's last frame downloaded */
  cudaEvent_t group_uploaded[CUCONV_GROUPS];
  cudaEvent_t group_filtered[CUCONV_GROUPS], slot_done[CUCONV_SLOTS];
  /* slot 0 also serves the strip pipeline, the only one with staging */
  DevPlane planes[CUCONV_SLOTS][CUCONV_MAX_PLANES];
  int next_slot;
  bool in_flight;               /* enqueued since the streams were idle */
  cuconv::Scratch scratch;      /* the wide paths' intermediates */
};

using namespace cuconv;

#define CHECK(call, what) \
  do { cudaError_t _e = (call); \
    if (_e != cudaSuccess) return fail (st, what, _e); } while (0)

static cudaError_t
create_event (cudaEvent_t * e)
{
  return cudaEventCreateWithFlags (e, cudaEventDisableTiming);
}

extern "C" CuconvHostFrames *
cuconv_host_frames_new (CuconvStatus * st)
{
  CuconvHostFrames *cc;
  cudaError_t e = cudaSuccess;
  int i;

  cc = (CuconvHostFrames *) calloc (1, sizeof (CuconvHostFrames));
  if (!cc) {
    fail (st, "cannot allocate the strip pipeline",
        cudaErrorMemoryAllocation);
    return NULL;
  }
  e = cudaStreamCreateWithFlags (&cc->up, cudaStreamNonBlocking);
  if (!e)
    e = cudaStreamCreateWithFlags (&cc->compute, cudaStreamNonBlocking);
  if (!e)
    e = cudaStreamCreateWithFlags (&cc->down, cudaStreamNonBlocking);
  for (i = 0; i < CUCONV_EVENTS && !e; i++) {
    e = create_event (&cc->uploaded[i]);
    if (!e)
      e = create_event (&cc->filtered[i]);
    if (!e)
      e = create_event (&cc->downloaded[i]);
  }
  for (i = 0; i < CUCONV_GROUPS && !e; i++) {
    e = create_event (&cc->group_uploaded[i]);
    if (!e)
      e = create_event (&cc->group_filtered[i]);
  }
  for (i = 0; i < CUCONV_SLOTS && !e; i++)
    e = create_event (&cc->slot_done[i]);
  if (e) {
    fail (st, "cannot create CUDA streams", e);
    cuconv_host_frames_free (cc);
    return NULL;
  }
  return cc;
}

/* Frees the staging of d (none in flight). */
static void
stage_release (DevPlane * d)
{
  cudaFreeHost (d->stage_in);
  cudaFreeHost (d->stage_out);
  d->stage_in = d->stage_out = NULL;
}

static void
destroy_event (cudaEvent_t e)
{
  if (e)
    cudaEventDestroy (e);
}

extern "C" void
cuconv_host_frames_free (CuconvHostFrames * cc)
{
  int i, j;

  if (!cc)
    return;
  scratch_free (cc->scratch);
  /* enqueued frames may still use the buffers */
  for (i = 0; i < 3; i++) {
    cudaStream_t s = i == 0 ? cc->up : i == 1 ? cc->compute : cc->down;

    if (s) {
      cudaStreamSynchronize (s);
      cudaStreamDestroy (s);
    }
  }
  cudaGetLastError ();
  for (i = 0; i < CUCONV_SLOTS; i++)
    for (j = 0; j < CUCONV_MAX_PLANES; j++) {
      buffer_free (cc->planes[i][j].src);
      buffer_free (cc->planes[i][j].dst);
      stage_release (&cc->planes[i][j]);
    }
  for (i = 0; i < CUCONV_EVENTS; i++) {
    destroy_event (cc->uploaded[i]);
    destroy_event (cc->filtered[i]);
    destroy_event (cc->downloaded[i]);
  }
  for (i = 0; i < CUCONV_GROUPS; i++) {
    destroy_event (cc->group_uploaded[i]);
    destroy_event (cc->group_filtered[i]);
  }
  for (i = 0; i < CUCONV_SLOTS; i++)
    destroy_event (cc->slot_done[i]);
  free (cc);
}

/* Waits until nothing enqueued is left on the three streams.  Returns
 * the first error, cleared. */
static cudaError_t
wait_idle (CuconvHostFrames * cc)
{
  cudaError_t e = cudaStreamSynchronize (cc->up), e2;

  e2 = cudaStreamSynchronize (cc->compute);
  e = e ? e : e2;
  e2 = cudaStreamSynchronize (cc->down);
  e = e ? e : e2;
  cudaGetLastError ();
  cc->in_flight = false;
  return e;
}

/* Device buffers for plane i of slot, kept while its geometry stays the
 * same (tight rows where they are a multiple of 16 bytes); enqueued
 * frames are waited for before any buffer is freed. */
static int
ensure_plane (CuconvHostFrames * cc, int slot, int i, const CuconvPlane * pl,
    CuconvStatus * st)
{
  DevPlane *d = &cc->planes[slot][i];
  const int wb = pl->width * pl->n_comp * cuconv_plane_sample_bytes (pl);
  bool wait_failed = false, replaced = false;
  const auto wait_enqueued = [cc, &wait_failed] {
    const cudaError_t e = cc->in_flight ? wait_idle (cc) : cudaSuccess;

    wait_failed = e != cudaSuccess;
    return e;
  };
  cudaError_t e;

  e = buffer_fit_rows (d->src, wb, pl->height, BUFFER_ROWS_TIGHT_16,
      wait_enqueued, &replaced);
  if (e == cudaSuccess)
    e = buffer_fit_rows (d->dst, wb, pl->height, BUFFER_ROWS_TIGHT_16,
        wait_enqueued, &replaced);
  /* the staging has the shape of the device buffers */
  if (replaced)
    stage_release (d);
  if (e != cudaSuccess)
    return fail (st, wait_failed ? "the GPU failed to filter a frame" :
        "cannot allocate GPU memory for a frame", e);
  d->wb = wb;
  d->height = pl->height;
  return 0;
}

/* Page-locked staging for one direction, allocated the first time a frame
 * arrives in pageable memory. */
static int
ensure_stage (uint8_t ** stage, const DevPlane * d, CuconvStatus * st)
{
  if (!*stage)
    CHECK (cudaHostAlloc ((void **) stage, (size_t) d->wb * d->height,
            cudaHostAllocPortable), "cannot allocate page-locked memory");
  return 0;
}

/* Whether the DMA engines can read or write host memory at p directly:
 * page-locked memory (the element's pinned buffer pool). */
static bool
is_pinned (const void *p)
{
  cudaPointerAttributes a;

  if (cudaPointerGetAttributes (&a, p) != cudaSuccess) {
    cudaGetLastError ();        /* not a sticky error: clear it */
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

static void
copy_rows (uint8_t * dst, size_t dst_stride, const uint8_t * src,
    size_t src_stride, size_t wb, int rows)
{
  for (int y = 0; y < rows; y++)
    memcpy (dst + y * dst_stride, src + y * src_stride, wb);
}

/* Rows above and below an output row that filtering it reads: the
 * largest vertical radius of any term, or the matrix's; 0 for a plane
 * that is only copied or filled. */
static int
vertical_reach (const CuconvPlane * pl, const CuconvFilter * f)
{
  int r;

  if (all_ops (*pl, CUCONV_COMP_COPY) || all_ops (*pl, CUCONV_COMP_FILL))
    return 0;
  if (f->n_terms == 0)
    return f->m.radius;
  r = cuconv_filter_taps_y (f, pl)->radius;
  if (f->n_terms == 2 && f->y2[pl->sub_y - 1].radius > r)
    r = f->y2[pl->sub_y - 1].radius;
  return r;
}

/* Whether each side of a plane is page-locked, asked once a frame. */
struct PlanePinned
{
  bool in, out;
};

/* One plane of a frame in host memory, in strips: strip k uploads while
 * strip k - 1 is filtered and strip k - 2 downloads (three streams,
 * ordered by events).  Pageable memory goes through page-locked staging,
 * copied by the CPU a strip at a time while the DMA engines move the
 * previous one, so that the CPU's copies and the transfers overlap
 * (docs/performance.md compares it with cudaMemcpy from pageable
 * memory).  Returns with the downloads enqueued; pageable
 * output still has to be copied out (finish_plane). */
static int
enqueue_plane (CuconvHostFrames * cc, int pi, const CuconvPlane * pl,
    PlanePinned pinned, const CuconvFilter * f, int *n_strips_out,
    int *strip_out, CuconvStatus * st)
{
  const CuconvBorder border = f->border;
  const int reach = vertical_reach (pl, f);
  const int tile_rows = separable_tile_rows ();
  DevPlane *d = &cc->planes[0][pi];
  cudaEvent_t *uploaded = cc->uploaded + pi * CUCONV_MAX_STRIPS;
  cudaEvent_t *filtered = cc->filtered + pi * CUCONV_MAX_STRIPS;
  cudaEvent_t *downloaded = cc->downloaded + pi * CUCONV_MAX_STRIPS;
  int strip, n_strips, k, next_up = 0, r;

  if ((r = ensure_plane (cc, 0, pi, pl, st)) != 0)
    return r;
  if (!pinned.in && (r = ensure_stage (&d->stage_in, d, st)) != 0)
    return r;
  if (!pinned.out && (r = ensure_stage (&d->stage_out, d, st)) != 0)
    return r;

  /* strips of whole tiles, each at least as tall as the vertical apron
   * (tile_rows >= CUCONV_TILE_MAX_RADIUS >= reach), so strip k only needs
   * k - 1 .. k + 1, and only strip k when nothing reaches across rows;
   * a wide filter reaches further: one strip */
  strip = filter_is_wide (*f) ? pl->height :
      (pl->height + CUCONV_MAX_STRIPS - 1) / CUCONV_MAX_STRIPS;
  strip = (strip + tile_rows - 1) / tile_rows * tile_rows;
  n_strips = (pl->height + strip - 1) / strip;
  *n_strips_out = n_strips;
  *strip_out = strip;

  for (k = 0; k < n_strips; k++) {
    const int y0 = k * strip;
    const int y1 = y0 + strip < pl->height ? y0 + strip : pl->height;
    /* filtering strip k needs the apron below, in strip k + 1; wrap's top
     * rows read the bottom of the plane */
    int need = reach > 0 && k + 1 < n_strips ? k + 1 : k;
    CuconvPlane dev = *pl;

    if (reach > 0 && border == CUCONV_BORDER_WRAP && k == 0)
      need = n_strips - 1;
    for (; next_up <= need; next_up++) {
      const int u0 = next_up * strip;
      const int u1 = u0 + strip < pl->height ? u0 + strip : pl->height;
      const uint8_t *from = pl->src + (size_t) u0 * pl->src_stride;
      size_t from_stride = pl->src_stride;

      if (!pinned.in) {
        copy_rows (d->stage_in + (size_t) u0 * d->wb, d->wb, from,
            pl->src_stride, d->wb, u1 - u0);
        from = d->stage_in + (size_t) u0 * d->wb;
        from_stride = d->wb;
      }
      CHECK (cudaMemcpy2DAsync (d->src.ptr + (size_t) u0 * d->src.pitch,
              d->src.pitch, from, from_stride, d->wb, u1 - u0,
              cudaMemcpyHostToDevice, cc->up),
          "cannot upload a frame to the GPU");
      CHECK (cudaEventRecord (uploaded[next_up], cc->up),
          "cannot record a CUDA event");
    }

    CHECK (cudaStreamWaitEvent (cc->compute, uploaded[need], 0),
        "cannot order CUDA streams");
    dev.src = d->src.ptr;
    dev.dst = d->dst.ptr;
    dev.src_stride = (ptrdiff_t) d->src.pitch;
    dev.dst_stride = (ptrdiff_t) d->dst.pitch;
    CHECK (launch_plane (dev, *f, y0, y1, cc->scratch, cc->compute),
        "cannot launch the convolution kernel");
    CHECK (scratch_done (cc->scratch), "cannot record a CUDA event");
    CHECK (cudaEventRecord (filtered[k], cc->compute),
        "cannot record a CUDA event");

    CHECK (cudaStreamWaitEvent (cc->down, filtered[k], 0),
        "cannot order CUDA streams");
    CHECK (cudaMemcpy2DAsync (pinned.out ? pl->dst + (size_t) y0 *
            pl->dst_stride : d->stage_out + (size_t) y0 * d->wb,
            pinned.out ? (size_t) pl->dst_stride : (size_t) d->wb,
            d->dst.ptr + (size_t) y0 * d->dst.pitch, d->dst.pitch, d->wb,
            y1 - y0, cudaMemcpyDeviceToHost, cc->down),
        "cannot download a frame from the GPU");
    if (!pinned.out)
      CHECK (cudaEventRecord (downloaded[k], cc->down),
          "cannot record a CUDA event");
  }
  return 0;
}


/* Copies pageable output out of staging as each strip lands. */
static int
finish_plane (CuconvHostFrames * cc, int pi, const CuconvPlane * pl,
    int n_strips, int strip, CuconvStatus * st)
{
  const DevPlane *d = &cc->planes[0][pi];

  for (int k = 0; k < n_strips; k++) {
    const int y0 = k * strip;
    const int y1 = y0 + strip < pl->height ? y0 + strip : pl->height;

    CHECK (cudaEventSynchronize (cc->downloaded[pi * CUCONV_MAX_STRIPS + k]),
        "the GPU failed to filter a frame");
    copy_rows (pl->dst + (size_t) y0 * pl->dst_stride, pl->dst_stride,
        d->stage_out + (size_t) y0 * d->wb, d->wb, d->wb, y1 - y0);
  }
  return 0;
}

/* After a failure: waits for what was enqueued, which may still read
 * and write the caller's frame, before the caller gets it back. */
static int
drain (CuconvHostFrames * cc, int r)
{
  wait_idle (cc);
  return r;
}

extern "C" int
cuconv_host_frames_strips (CuconvHostFrames * cc, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvStatus * st)
{
  int n_strips[CUCONV_MAX_PLANES], strip[CUCONV_MAX_PLANES], i, r;
  PlanePinned pinned[CUCONV_MAX_PLANES];

  if (n_planes > CUCONV_MAX_PLANES)
    return fail (st, "too many planes", cudaErrorInvalidValue);
  /* an enqueued frame may still use slot 0's buffers */
  if (cc->in_flight)
    CHECK (wait_idle (cc), "the GPU failed to filter a frame");
  for (i = 0; i < n_planes; i++) {
    pinned[i].in = is_pinned (planes[i].src);
    pinned[i].out = is_pinned (planes[i].dst);
  }
  for (i = 0; i < n_planes; i++)
    if ((r = enqueue_plane (cc, i, &planes[i], pinned[i], f, &n_strips[i],
                &strip[i], st)) != 0)
      return drain (cc, r);
  for (i = 0; i < n_planes; i++)
    if (!pinned[i].out && (r = finish_plane (cc, i, &planes[i], n_strips[i],
                strip[i], st)) != 0)
      return drain (cc, r);
  CHECK (cudaStreamSynchronize (cc->down), "the GPU failed to filter a frame");
  CHECK (cudaStreamSynchronize (cc->compute),
      "the GPU failed to filter a frame");
  CHECK (cudaGetLastError (), "the GPU failed to filter a frame");
  return 0;
}

/* The planes of a frame in slot's device buffers. */
static void
slot_planes (const CuconvHostFrames * cc, int slot, const CuconvPlane * planes,
    int n_planes, CuconvPlane * dev)
{
  for (int i = 0; i < n_planes; i++) {
    const DevPlane *d = &cc->planes[slot][i];

    dev[i] = planes[i];
    dev[i].src = d->src.ptr;
    dev[i].dst = d->dst.ptr;
    dev[i].src_stride = (ptrdiff_t) d->src.pitch;
    dev[i].dst_stride = (ptrdiff_t) d->dst.pitch;
  }
}

/* Planes [first, last) of a frame up to slot's src buffers, or down from
 * its dst buffers, each whole, on stream s. */
static cudaError_t
copy_planes (const CuconvHostFrames * cc, int slot, const CuconvPlane * planes,
    int first, int last, bool up, cudaStream_t s)
{
  cudaError_t e = cudaSuccess;

  for (int i = first; i < last && !e; i++) {
    const DevPlane *d = &cc->planes[slot][i];
    const CuconvPlane *pl = &planes[i];

    if (up)
      e = cudaMemcpy2DAsync (d->src.ptr, d->src.pitch, pl->src,
          (size_t) pl->src_stride, d->wb, d->height, cudaMemcpyHostToDevice,
          s);
    else
      e = cudaMemcpy2DAsync (pl->dst, (size_t) pl->dst_stride, d->dst.ptr,
          d->dst.pitch, d->wb, d->height, cudaMemcpyDeviceToHost, s);
  }
  return e;
}

/* A whole frame through slot, each group of planes (the first plane, then
 * the others) up, filtered and down on the three streams in turn, so that
 * a group downloads while the next is filtered, and the frame uploads
 * while the previous frame (the other slot) downloads.  up starts once the
 * slot's previous frame is downloaded: its kernels had read src and its
 * download had read dst by then.  The caller's stream waits for the last
 * download, which comes after everything else of the frame; up does not
 * wait for the caller's stream, which holds the previous frame's wait: it
 * would start no upload before the previous frame is done. */
static int
enqueue_frame (CuconvHostFrames * cc, int slot, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvDeviceFrames * rf,
    const CuconvRegions * regions, cudaStream_t stream, CuconvStatus * st)
{
  /* regions: one group, one work list for the region filter */
  const int n_groups = n_planes > 1 && !regions ? 2 : 1;
  int first[CUCONV_GROUPS + 1] = { 0, 1, n_planes }, g, r;
  CuconvPlane dev[CUCONV_MAX_PLANES];

  first[n_groups] = n_planes;
  slot_planes (cc, slot, planes, n_planes, dev);
  CHECK (cudaStreamWaitEvent (cc->up, cc->slot_done[slot], 0),
      "cannot order CUDA streams");
  for (g = 0; g < n_groups; g++) {
    CHECK (copy_planes (cc, slot, planes, first[g], first[g + 1], true,
            cc->up), "cannot upload a frame to the GPU");
    CHECK (cudaEventRecord (cc->group_uploaded[g], cc->up),
        "cannot record a CUDA event");
  }
  for (g = 0; g < n_groups; g++) {
    CHECK (cudaStreamWaitEvent (cc->compute, cc->group_uploaded[g], 0),
        "cannot order CUDA streams");
    if (regions)
      r = cuconv_device_frames_filter (rf, dev, n_planes, f, regions,
          cc->compute, st);
    else
      r = filter_frame (dev + first[g], first[g + 1] - first[g], f,
          CUCONV_PATH_AUTO, cc->scratch, cc->compute, st);
    if (r != 0)
      return r;
    CHECK (cudaEventRecord (cc->group_filtered[g], cc->compute),
        "cannot record a CUDA event");
  }
  for (g = 0; g < n_groups; g++) {
    CHECK (cudaStreamWaitEvent (cc->down, cc->group_filtered[g], 0),
        "cannot order CUDA streams");
    CHECK (copy_planes (cc, slot, planes, first[g], first[g + 1], false,
            cc->down), "cannot download a frame from the GPU");
  }
  CHECK (cudaEventRecord (cc->slot_done[slot], cc->down),
      "cannot record a CUDA event");
  CHECK (cudaStreamWaitEvent (stream, cc->slot_done[slot], 0),
      "cannot order CUDA streams");
  return 0;
}

extern "C" int
cuconv_host_frames_enqueue (CuconvHostFrames * cc, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, CuconvDeviceFrames * rf,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  const int slot = cc->next_slot;
  int i, r;

  if (n_planes > CUCONV_MAX_PLANES)
    return fail (st, "too many planes", cudaErrorInvalidValue);
  for (i = 0; i < n_planes; i++)
    if ((r = ensure_plane (cc, slot, i, &planes[i], st)) != 0)
      return r;
  cc->in_flight = true;
  if (cuconv_regions_whole_frame (regions))
    regions = NULL;
  else if (!rf)
    return fail (st, "regions need a region filter", cudaErrorInvalidValue);
  if ((r = enqueue_frame (cc, slot, planes, n_planes, f, rf, regions,
              (cudaStream_t) stream, st)) != 0)
    return drain (cc, r);
  cc->next_slot = (slot + 1) % CUCONV_SLOTS;
  return 0;
}
