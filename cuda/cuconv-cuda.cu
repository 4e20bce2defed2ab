/* gst-cudaconvolve: the CUDA engine's host side: device buffers, pinned
 * memory, streams, and the strip pipeline that overlaps upload, compute
 * and download.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-cuda.h"
#include "cuconv-kernels.cuh"

#define CUCONV_MAX_PLANES 4
/* A plane is cut into at most this many strips, each a multiple of the
 * tile height, so strip k+1 uploads while strip k is filtered and strip
 * k-1 downloads. */
#ifndef CUCONV_MAX_STRIPS
#define CUCONV_MAX_STRIPS 8
#endif
#define CUCONV_EVENTS (CUCONV_MAX_PLANES * CUCONV_MAX_STRIPS)

/* A plane's buffers, kept while its geometry stays the same: on the
 * device, and page-locked host staging for frames in pageable memory. */
struct DevPlane
{
  uint8_t *src, *dst;
  size_t src_pitch, dst_pitch;
  uint8_t *stage_in, *stage_out;        /* wb * height, tight */
  int wb, height;               /* wb: bytes of a row */
};

struct _CuconvStrips
{
  int device;
  cudaStream_t up, compute, down;
  /* one of each per plane and strip of a frame */
  cudaEvent_t uploaded[CUCONV_EVENTS], filtered[CUCONV_EVENTS];
  cudaEvent_t downloaded[CUCONV_EVENTS];
  DevPlane planes[CUCONV_MAX_PLANES];
};

namespace cuconv {

void
sep_params_init (SepParams & p, const CuconvPlane & pl, const CuconvTaps & kx,
    const CuconvTaps & ky, CuconvBorder border, int row_begin, int row_end)
{
  band_params_init (p, pl, row_begin, row_end);
  p.nc = pl.n_comp;
  p.wb = pl.width * pl.n_comp;
  p.rx = kx.radius;
  p.ry = ky.radius;
  p.border = border;
  p.src_aligned16 = ((uintptr_t) pl.src % 16 == 0) && (p.src_pitch % 16 == 0);
  p.dst_aligned4 = ((uintptr_t) pl.dst % 4 == 0) && (p.dst_pitch % 4 == 0);
  memcpy (p.kx, kx.w, sizeof (float) * (2 * kx.radius + 1));
  memcpy (p.ky, ky.w, sizeof (float) * (2 * ky.radius + 1));
  p.taps_nonneg = 1;
  for (int i = 0; i <= 2 * kx.radius; i++)
    p.taps_nonneg &= kx.w[i] >= 0.0f;
  for (int i = 0; i <= 2 * ky.radius; i++)
    p.taps_nonneg &= ky.w[i] >= 0.0f;
}

/* Above this radius the box runs as running sums; up to it the tap kernel,
 * fed the box's equal taps, is faster (docs/performance.md). */
#define CUCONV_BOX_SUMS_MIN_RADIUS 17

/* Whether a box of f's luma radius runs as running sums. */
static bool
box_takes_sums (const CuconvFilter * f)
{
  return f->x[0].radius >= CUCONV_BOX_SUMS_MIN_RADIUS
      || f->y[0].radius >= CUCONV_BOX_SUMS_MIN_RADIUS;
}

/* The tuned 8-bit path: the box by radius, every other kernel with its
 * taps. */
static cudaError_t
launch_tuned (const SepParams & p, CuconvKernel kernel, cudaStream_t stream)
{
  switch (kernel) {
    case CUCONV_KERNEL_BOX:
      if (p.rx >= CUCONV_BOX_SUMS_MIN_RADIUS || p.ry >= CUCONV_BOX_SUMS_MIN_RADIUS) {
        const cudaError_t e = launch_box (p, stream);
        if (e != cudaErrorNotSupported)
          return e;
      }
      /* the taps are the box's */
      [[fallthrough]];
    case CUCONV_KERNEL_GAUSSIAN:
    default:
      return launch_separable (p, stream);
  }
}

static bool
all_ops (const CuconvPlane & pl, int op)
{
  for (int c = 0; c < pl.n_comp; c++)
    if (pl.op[c] != op)
      return false;
  return true;
}

/* Taps the tuned kernels round exactly: their rounding has no clamp, so
 * every result must lie in [0, 255.5), which non-negative taps summing to
 * at most 1 (plus float error) in each direction guarantee: gaussian, box
 * and normalised custom blurs. */
static bool
taps_bounded (const CuconvTaps & t)
{
  float sum = 0.0f;

  for (int i = 0; i <= 2 * t.radius; i++) {
    if (t.w[i] < 0.0f)
      return false;
    sum += t.w[i];
  }
  return sum <= 1.0001f;
}

/* Whether plane pl is one the tuned 8-bit kernels (cuconv-separable.cu,
 * cuconv-box.cu) can filter with combine: one term, every component
 * filtered, at most 2 of them. */
static bool
takes_tuned_as (const CuconvPlane & pl, const CuconvFilter & f, CuconvCombine combine)
{
  return cuconv_plane_sample_bytes (&pl) == 1 && f.n_terms == 1
      && f.combine == combine && pl.n_comp <= 2
      && all_ops (pl, CUCONV_COMP_FILTER)
      && taps_bounded (*cuconv_filter_taps_x (&f, &pl))
      && taps_bounded (*cuconv_filter_taps_y (&f, &pl));
}

/* The plain blurs: every tuned path, the one launch for 4:2:0 frames
 * included. */
static bool
takes_tuned (const CuconvPlane & pl, const CuconvFilter & f)
{
  return takes_tuned_as (pl, f, CUCONV_COMBINE_NONE);
}

/* The one place that maps a plane and a filter to a GPU path
 * (docs/design.md, section 7): rows [row_begin, row_end) of pl (device
 * pointers). */
static cudaError_t
launch_plane (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, cudaStream_t stream)
{
  const size_t rb = (size_t) pl.width * pl.n_comp *
      cuconv_plane_sample_bytes (&pl);

  if (row_end <= row_begin)
    return cudaSuccess;
  if (all_ops (pl, CUCONV_COMP_COPY))
    return cudaMemcpy2DAsync (pl.dst + (size_t) row_begin * pl.dst_stride,
        pl.dst_stride, pl.src + (size_t) row_begin * pl.src_stride,
        pl.src_stride, rb, row_end - row_begin, cudaMemcpyDeviceToDevice,
        stream);
  if (all_ops (pl, CUCONV_COMP_FILL))
    return launch_fill (pl, row_begin, row_end, stream);
  if (f.n_terms == 0) {
    /* the 2-D matrix (cuconv-matrix.cu) */
    MatrixParams mp;

    matrix_params_init (mp, pl, f.m, f.settings.border, row_begin, row_end);
    return launch_matrix (mp, stream);
  }
  if (takes_tuned (pl, f)) {
    SepParams p;

    sep_params_init (p, pl, *cuconv_filter_taps_x (&f, &pl),
        *cuconv_filter_taps_y (&f, &pl), f.settings.border, row_begin, row_end);
    return launch_tuned (p, f.settings.kernel, stream);
  }
  /* an 8-bit sharpen of an unrolled radius: the tuned kernel with the
   * unsharp mask in its stores */
  if (f.amount > 0.0f && takes_tuned_as (pl, f, CUCONV_COMBINE_SHARPEN)) {
    SepParams p;
    cudaError_t e;

    sep_params_init (p, pl, *cuconv_filter_taps_x (&f, &pl),
        *cuconv_filter_taps_y (&f, &pl), f.settings.border, row_begin, row_end);
    p.amount = f.amount;
    e = launch_separable (p, stream);
    if (e != cudaErrorNotSupported)
      return e;
  }
  return launch_general (pl, f, row_begin, row_end, stream);
}

}                               /* namespace cuconv */

using namespace cuconv;

/* Fills st (when not NULL) for a failed CUDA call and returns its code. */
static int
fail (CuconvStatus * st, const char *what, cudaError_t e)
{
  cudaGetLastError ();          /* not sticky: clear it */
  if (st) {
    st->code = (int) e;
    snprintf (st->message, sizeof (st->message), "%s: %s (%s)", what,
        cudaGetErrorString (e), cudaGetErrorName (e));
  }
  return (int) e;
}

#define CHECK(call, what) \
  do { cudaError_t _e = (call); \
    if (_e != cudaSuccess) return fail (st, what, _e); } while (0)

extern "C" CuconvStrips *
cuconv_strips_new (CuconvStatus * st)
{
  CuconvStrips *cc;
  cudaError_t e = cudaSuccess;
  int i;

  cc = (CuconvStrips *) calloc (1, sizeof (CuconvCuda));
  if (!cc)
    return NULL;
  if (!e)
    e = cudaStreamCreateWithFlags (&cc->up, cudaStreamNonBlocking);
  if (!e)
    e = cudaStreamCreateWithFlags (&cc->compute, cudaStreamNonBlocking);
  if (!e)
    e = cudaStreamCreateWithFlags (&cc->down, cudaStreamNonBlocking);
  for (i = 0; i < CUCONV_EVENTS && !e; i++) {
    e = cudaEventCreateWithFlags (&cc->uploaded[i], cudaEventDisableTiming);
    if (!e)
      e = cudaEventCreateWithFlags (&cc->filtered[i], cudaEventDisableTiming);
    if (!e)
      e = cudaEventCreateWithFlags (&cc->downloaded[i],
          cudaEventDisableTiming);
  }
  if (e) {
    fail (st, "cannot create CUDA streams", e);
    cuconv_strips_free (cc);
    return NULL;
  }
  return cc;
}

extern "C" void
cuconv_strips_release (CuconvStrips * cc)
{
  int i;

  if (!cc)
    return;
  for (i = 0; i < CUCONV_MAX_PLANES; i++) {
    cudaFree (cc->planes[i].src);
    cudaFree (cc->planes[i].dst);
    cudaFreeHost (cc->planes[i].stage_in);
    cudaFreeHost (cc->planes[i].stage_out);
    memset (&cc->planes[i], 0, sizeof (cc->planes[i]));
  }
}

extern "C" void
cuconv_strips_free (CuconvStrips * cc)
{
  int i;

  if (!cc)
    return;
  cuconv_strips_release (cc);
  if (cc->up)
    cudaStreamDestroy (cc->up);
  if (cc->compute)
    cudaStreamDestroy (cc->compute);
  if (cc->down)
    cudaStreamDestroy (cc->down);
  for (i = 0; i < CUCONV_EVENTS; i++) {
    if (cc->uploaded[i])
      cudaEventDestroy (cc->uploaded[i]);
    if (cc->filtered[i])
      cudaEventDestroy (cc->filtered[i]);
    if (cc->downloaded[i])
      cudaEventDestroy (cc->downloaded[i]);
  }
  free (cc);
}

extern "C" void *
cuconv_host_alloc (size_t size, CuconvStatus * st)
{
  void *p = NULL;
  const cudaError_t e = cudaHostAlloc (&p, size, cudaHostAllocPortable);

  if (e != cudaSuccess) {
    fail (st, "cannot allocate page-locked host memory", e);
    return NULL;
  }
  return p;
}

extern "C" void
cuconv_host_free (void *ptr)
{
  if (ptr)
    cudaFreeHost (ptr);
}

/* Device buffers for plane i, kept while its geometry stays the same. */
static int
ensure_plane (CuconvStrips * cc, int i, const CuconvPlane * pl, CuconvStatus * st)
{
  DevPlane *d = &cc->planes[i];
  const int wb = pl->width * pl->n_comp * cuconv_plane_sample_bytes (pl);

  if (d->src && d->wb == wb && d->height == pl->height)
    return 0;
  cudaFree (d->src);
  cudaFree (d->dst);
  cudaFreeHost (d->stage_in);
  cudaFreeHost (d->stage_out);
  memset (d, 0, sizeof (*d));
  if (wb % 16 == 0) {
    /* tight rows: a copy from a tight host frame is one linear DMA, which
     * runs faster than a pitched one; 16-byte aligned rows still take the
     * kernels' vector path */
    d->src_pitch = d->dst_pitch = wb;
    CHECK (cudaMalloc ((void **) &d->src, (size_t) wb * pl->height),
        "cannot allocate GPU memory for a frame");
    CHECK (cudaMalloc ((void **) &d->dst, (size_t) wb * pl->height),
        "cannot allocate GPU memory for a frame");
  } else {
    CHECK (cudaMallocPitch ((void **) &d->src, &d->src_pitch, wb,
            pl->height), "cannot allocate GPU memory for a frame");
    CHECK (cudaMallocPitch ((void **) &d->dst, &d->dst_pitch, wb,
            pl->height), "cannot allocate GPU memory for a frame");
  }
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
 * page-locked memory (cuconv_cuda_host_alloc, the element's buffer pool). */
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

/* One plane of a frame in host memory, in strips: strip k uploads while
 * strip k - 1 is filtered and strip k - 2 downloads (three streams,
 * ordered by events).  Pageable memory goes through page-locked staging,
 * copied by the CPU a strip at a time while the DMA engines move the
 * previous one: on the GPU host this beats cudaMemcpy from pageable memory
 * (docs/performance.md).  Returns with the downloads enqueued; pageable
 * output still has to be copied out (finish_plane). */
static int
enqueue_plane (CuconvStrips * cc, int pi, const CuconvPlane * pl,
    const CuconvFilter * f, int *n_strips_out, int *strip_out, CuconvStatus * st)
{
  const CuconvBorder border = f->settings.border;
  const int reach = vertical_reach (pl, f);
  const int tile_rows = separable_tile_rows ();
  DevPlane *d = &cc->planes[pi];
  cudaEvent_t *uploaded = cc->uploaded + pi * CUCONV_MAX_STRIPS;
  cudaEvent_t *filtered = cc->filtered + pi * CUCONV_MAX_STRIPS;
  cudaEvent_t *downloaded = cc->downloaded + pi * CUCONV_MAX_STRIPS;
  const bool pinned_in = is_pinned (pl->src), pinned_out = is_pinned (pl->dst);
  int strip, n_strips, k, next_up = 0;

  if (ensure_plane (cc, pi, pl, st))
    return -1;
  if (!pinned_in && ensure_stage (&d->stage_in, d, st))
    return -1;
  if (!pinned_out && ensure_stage (&d->stage_out, d, st))
    return -1;

  /* strips of whole tiles, each at least as tall as the vertical apron
   * (tile_rows >= CUCONV_MAX_RADIUS >= reach), so strip k only needs
   * k - 1 .. k + 1, and only strip k when nothing reaches across rows */
  strip = (pl->height + CUCONV_MAX_STRIPS - 1) / CUCONV_MAX_STRIPS;
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

      if (!pinned_in) {
        copy_rows (d->stage_in + (size_t) u0 * d->wb, d->wb, from,
            pl->src_stride, d->wb, u1 - u0);
        from = d->stage_in + (size_t) u0 * d->wb;
        from_stride = d->wb;
      }
      CHECK (cudaMemcpy2DAsync (d->src + (size_t) u0 * d->src_pitch,
              d->src_pitch, from, from_stride, d->wb, u1 - u0,
              cudaMemcpyHostToDevice, cc->up),
          "cannot upload a frame to the GPU");
      CHECK (cudaEventRecord (uploaded[next_up], cc->up),
          "cannot record a CUDA event");
    }

    CHECK (cudaStreamWaitEvent (cc->compute, uploaded[need], 0),
        "cannot order CUDA streams");
    dev.src = d->src;
    dev.dst = d->dst;
    dev.src_stride = (ptrdiff_t) d->src_pitch;
    dev.dst_stride = (ptrdiff_t) d->dst_pitch;
    CHECK (launch_plane (dev, *f, y0, y1, cc->compute),
        "cannot launch the convolution kernel");
    CHECK (cudaEventRecord (filtered[k], cc->compute),
        "cannot record a CUDA event");

    CHECK (cudaStreamWaitEvent (cc->down, filtered[k], 0),
        "cannot order CUDA streams");
    CHECK (cudaMemcpy2DAsync (pinned_out ? pl->dst + (size_t) y0 *
            pl->dst_stride : d->stage_out + (size_t) y0 * d->wb,
            pinned_out ? (size_t) pl->dst_stride : (size_t) d->wb,
            d->dst + (size_t) y0 * d->dst_pitch, d->dst_pitch, d->wb,
            y1 - y0, cudaMemcpyDeviceToHost, cc->down),
        "cannot download a frame from the GPU");
    if (!pinned_out)
      CHECK (cudaEventRecord (downloaded[k], cc->down),
          "cannot record a CUDA event");
  }
  return 0;
}

/* Copies pageable output out of staging as each strip lands. */
static int
finish_plane (CuconvStrips * cc, int pi, const CuconvPlane * pl, int n_strips,
    int strip, CuconvStatus * st)
{
  const DevPlane *d = &cc->planes[pi];

  if (is_pinned (pl->dst))
    return 0;
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

extern "C" int
cuconv_strips_process (CuconvStrips * cc, const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvStatus * st)
{
  int n_strips[CUCONV_MAX_PLANES], strip[CUCONV_MAX_PLANES], i;

  if (n_planes > CUCONV_MAX_PLANES) {
    return fail (st, "too many planes", cudaErrorInvalidValue);
  }
  for (i = 0; i < n_planes; i++)
    if (enqueue_plane (cc, i, &planes[i], f, &n_strips[i], &strip[i], st))
      return st ? st->code : -1;
  for (i = 0; i < n_planes; i++)
    if (finish_plane (cc, i, &planes[i], n_strips[i], strip[i], st))
      return st ? st->code : -1;
  CHECK (cudaStreamSynchronize (cc->down), "the GPU failed to filter a frame");
  CHECK (cudaStreamSynchronize (cc->compute),
      "the GPU failed to filter a frame");
  CHECK (cudaGetLastError (), "the GPU failed to filter a frame");
  return 0;
}

extern "C" int
cuconv_filter_device (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *stream, CuconvStatus * st)
{
  const cudaStream_t s = (cudaStream_t) stream;
  bool tuned = true;
  int i;

  for (i = 0; i < n_planes; i++)
    tuned &= takes_tuned (planes[i], *f);
  /* a 4:2:0 frame through the tap kernel: one launch for all planes,
   * which saves the ramp and tail of the chroma launches */
  if (n_planes >= 2 && n_planes <= 3 && tuned && (f->settings.kernel ==
          CUCONV_KERNEL_GAUSSIAN || !box_takes_sums (f))) {
    FrameParams fp;
    cudaError_t e;

    memset (&fp, 0, sizeof (fp));
    fp.n = n_planes;
    for (i = 0; i < n_planes; i++)
      sep_params_init (fp.plane[i], planes[i], *cuconv_filter_taps_x (f,
              &planes[i]), *cuconv_filter_taps_y (f, &planes[i]),
          f->settings.border, 0, planes[i].height);
    e = launch_frame420 (fp, s);
    if (e != cudaErrorNotSupported)
      return e ? fail (st, "the GPU failed to filter a frame", e) : 0;
  }

  for (i = 0; i < n_planes; i++) {
    const cudaError_t e = launch_plane (planes[i], *f, 0, planes[i].height,
        s);

    if (e != cudaSuccess)
      return fail (st, "the GPU failed to filter a frame", e);
  }
  return 0;
}
