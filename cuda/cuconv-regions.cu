/* gst-cudaconvolve: regions of frames in device memory (docs/design.md,
 * "The region path"; the semantics in docs/semantics.md, "Regions").
 *
 * INSIDE: the source is copied to dst plane by plane (cudaMemcpy2DAsync,
 * bandwidth-cheap); every rectangle of every plane, grown by the filter's
 * reach on that plane, is gathered into that plane's atlas (one launch for
 * all of them, each sample read through the frame's border mode), the
 * atlas planes are filtered by the engine's dispatch, and one launch
 * scatters each rectangle's filtered samples, without the reach, into
 * dst.  A rectangle's samples read only its own crop, so the atlas's own
 * border never matters and the crops can touch.  Where the crops of a
 * plane would cover more than the plane, the whole plane is filtered into
 * the atlas instead and the rectangles are scattered from there.
 *
 * OUTSIDE: the whole frame is filtered into dst, then one launch copies
 * the source back inside the rectangles.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-engine.cuh"

namespace cuconv {

/* Planes of one frame the region path takes: every format's. */
#define REGION_MAX_PLANES 4

constexpr int COPY_THREADS = 128;
constexpr int COPY_ROWS = 4;    /* rows of a rectangle one block copies */
/* Atlas rows start at multiples of this (the tuned kernels' interior tiles
 * want 16), and every atlas plane at a multiple of 256 bytes. */
constexpr size_t ATLAS_PITCH_ALIGN = 128;
constexpr size_t ATLAS_PLANE_ALIGN = 256;

/* One rectangle to copy: w x h pixels from (sx, sy) of its plane's source,
 * through the border (a gather may start outside the plane), to (dx, dy)
 * of its destination.  first_block: the blocks of the jobs before it. */
struct CopyJob
{
  int plane;
  int sx, sy;
  int dx, dy;
  int w, h;
  int first_block;
};

struct CopyPlane
{
  const uint8_t *src;
  size_t src_pitch;
  int src_w, src_h;             /* pixels, for the border */
  uint8_t *dst;
  size_t dst_pitch;
  int bpp;                      /* bytes a pixel: components * sample */
};

struct CopyParams
{
  CopyPlane plane[REGION_MAX_PLANES];
  const CopyJob *jobs;
  int n_jobs;
  int border;
};

/* Block b copies COPY_ROWS rows of the job it falls in, one byte a thread;
 * a source pixel outside the plane is mapped by the border mode, read as
 * 0 where the mode says so (CUCONV_BORDER_ZERO). */
__global__ void
copy_rects (const CopyParams p)
{
  __shared__ int job_index;

  if (threadIdx.x == 0) {
    int lo = 0, hi = p.n_jobs - 1;

    /* the last job whose first block is at most this one */
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.jobs[mid].first_block <= (int) blockIdx.x)
        lo = mid;
      else
        hi = mid - 1;
    }
    job_index = lo;
  }
  __syncthreads ();

  const CopyJob job = p.jobs[job_index];
  const CopyPlane pl = p.plane[job.plane];
  const CuconvBorder border = (CuconvBorder) p.border;
  const int r0 = ((int) blockIdx.x - job.first_block) * COPY_ROWS;
  const int r1 = min (r0 + COPY_ROWS, job.h);
  const int rb = job.w * pl.bpp;

  for (int r = r0; r < r1; r++) {
    const int ys = cuconv_border_index (border, job.sy + r, pl.src_h);
    uint8_t *d = pl.dst + (size_t) (job.dy + r) * pl.dst_pitch +
        (size_t) job.dx * pl.bpp;

    for (int c = threadIdx.x; c < rb; c += COPY_THREADS) {
      const int px = c / pl.bpp;
      const int xs = cuconv_border_index (border, job.sx + px, pl.src_w);

      d[c] = (xs < 0 || ys < 0) ? (uint8_t) 0 :
          pl.src[(size_t) ys * pl.src_pitch + (size_t) xs * pl.bpp +
          (c - px * pl.bpp)];
    }
  }
}

/* A rectangle of one plane: where it lies, its crop (grown by the reach)
 * in the plane's coordinates, and where the crop lies in the atlas. */
struct Crop
{
  int plane;
  CuconvRect r;                 /* on the plane */
  int cx, cy, cw, ch;           /* the crop */
  int ax, ay;                   /* the crop in the atlas */
};

/* One plane's atlas: whole = the plane itself filtered into atlas_out. */
struct Atlas
{
  int whole;
  int w, h;
  size_t pitch;
  size_t offset;                /* in both atlas buffers */
};

}                               /* namespace cuconv */

using namespace cuconv;

struct _CuconvRegionFilter
{
  uint8_t *atlas_in, *atlas_out;
  size_t atlas_size;            /* bytes of each */
  CopyJob *d_jobs;
  int d_jobs_cap;
  CopyJob *jobs;                /* pinned host memory: gathers, then
                                 * scatters */
  Crop *crops;
  int host_cap;                 /* crops, and half the jobs */
  cudaEvent_t done;             /* recorded after the last launch */
  cudaEvent_t uploaded;         /* recorded after the jobs' upload */
};

namespace cuconv {

static size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Bytes of one pixel of pl. */
static int
pixel_bytes (const CuconvPlane & pl)
{
  return pl.n_comp * cuconv_plane_sample_bytes (&pl);
}

/* How far f reads from an output sample of pl, horizontally and
 * vertically: the widest of its terms' taps, or the matrix's radius. */
static void
plane_reach (const CuconvFilter & f, const CuconvPlane & pl, int *rx, int *ry)
{
  if (f.n_terms == 0) {
    *rx = *ry = f.m.radius;
    return;
  }
  *rx = cuconv_filter_taps_x (&f, &pl)->radius;
  *ry = cuconv_filter_taps_y (&f, &pl)->radius;
  if (f.n_terms == 2) {
    *rx = max (*rx, f.x2[pl.sub_x - 1].radius);
    *ry = max (*ry, f.y2[pl.sub_y - 1].radius);
  }
}

/* Tallest first, for the shelves. */
static int
crop_cmp (const void *a, const void *b)
{
  const Crop *ca = (const Crop *) a, *cb = (const Crop *) b;

  if (ca->plane != cb->plane)
    return ca->plane - cb->plane;
  return cb->ch - ca->ch;
}

/* Packs the crops [c, c + n) of one plane into shelves at most max_w
 * wide (the widest crop, or the plane's width, whichever is wider), and
 * returns the atlas's size. */
static void
pack_shelves (Crop * c, int n, int plane_w, int *aw, int *ah)
{
  int max_w = plane_w, x = 0, y = 0, shelf_h = 0, i;

  for (i = 0; i < n; i++)
    max_w = max (max_w, c[i].cw);
  *aw = 0;
  for (i = 0; i < n; i++) {
    if (x > 0 && x + c[i].cw > max_w) {
      y += shelf_h;
      x = 0;
      shelf_h = 0;
    }
    c[i].ax = x;
    c[i].ay = y;
    x += c[i].cw;
    shelf_h = max (shelf_h, c[i].ch);
    *aw = max (*aw, x);
  }
  *ah = y + shelf_h;
}

/* Grows the host arrays to n crops and 2 n jobs, and waits until the
 * previous frame's jobs are uploaded, so they can be written: the jobs
 * are page-locked, so that their upload is asynchronous and the host
 * never waits for the stream to drain. */
static cudaError_t
host_reserve (CuconvRegionFilter * rf, int n)
{
  cudaError_t e = cudaEventSynchronize (rf->uploaded);
  Crop *c;
  CopyJob *j = NULL;

  if (e != cudaSuccess || n <= rf->host_cap)
    return e;
  c = (Crop *) realloc (rf->crops, sizeof (Crop) * n);
  if (!c)
    return cudaErrorMemoryAllocation;
  rf->crops = c;
  e = cudaHostAlloc ((void **) &j, sizeof (CopyJob) * 2 * n,
      cudaHostAllocPortable);
  if (e != cudaSuccess)
    return e;
  cudaFreeHost (rf->jobs);
  rf->jobs = j;
  rf->host_cap = n;
  return cudaSuccess;
}

/* Makes the device buffers at least this large, in the current context.
 * The old ones may still be read by the previous frame's launches: wait
 * for them first. */
static cudaError_t
device_reserve (CuconvRegionFilter * rf, size_t atlas_size, int n_jobs,
    cudaStream_t stream)
{
  cudaError_t e;

  if (atlas_size > rf->atlas_size) {
    const size_t size = align_up (atlas_size + atlas_size / 4, 1 << 20);

    e = cudaEventSynchronize (rf->done);
    if (e != cudaSuccess)
      return e;
    cudaFree (rf->atlas_in);
    cudaFree (rf->atlas_out);
    rf->atlas_in = rf->atlas_out = NULL;
    rf->atlas_size = 0;
    e = cudaMalloc ((void **) &rf->atlas_in, size);
    if (e == cudaSuccess)
      e = cudaMalloc ((void **) &rf->atlas_out, size);
    /* the gaps between crops are read by the atlas filter: give them a
     * defined value */
    if (e == cudaSuccess)
      e = cudaMemsetAsync (rf->atlas_in, 0, size, stream);
    if (e != cudaSuccess) {
      cudaFree (rf->atlas_in);
      rf->atlas_in = NULL;
      return e;
    }
    rf->atlas_size = size;
  }
  if (n_jobs > rf->d_jobs_cap) {
    const int cap = max (n_jobs, 2 * rf->d_jobs_cap);

    e = cudaEventSynchronize (rf->done);
    if (e != cudaSuccess)
      return e;
    cudaFree (rf->d_jobs);
    rf->d_jobs_cap = 0;
    e = cudaMalloc ((void **) &rf->d_jobs, sizeof (CopyJob) * cap);
    if (e != cudaSuccess) {
      rf->d_jobs = NULL;
      return e;
    }
    rf->d_jobs_cap = cap;
  }
  return cudaSuccess;
}

/* Numbers the blocks of jobs [0, n); returns how many there are. */
static int
number_blocks (CopyJob * jobs, int n)
{
  int blocks = 0;

  for (int i = 0; i < n; i++) {
    jobs[i].first_block = blocks;
    blocks += (jobs[i].h + COPY_ROWS - 1) / COPY_ROWS;
  }
  return blocks;
}

/* One launch of copy_rects over the n jobs at d_jobs (uploaded). */
static cudaError_t
launch_copy (const CopyParams & p, int blocks, cudaStream_t stream)
{
  if (p.n_jobs == 0 || blocks == 0)
    return cudaSuccess;
  copy_rects <<< blocks, COPY_THREADS, 0, stream >>> (p);
  return cudaGetLastError ();
}

/* The plane's rectangles, crops and atlas, for INSIDE (reach > 0) or for
 * OUTSIDE's copy back (reach 0, no atlas).  Returns the crops. */
static int
plane_crops (const CuconvPlane & pl, int plane, const CuconvRegions & reg,
    int rx, int ry, Crop * out)
{
  int n = 0;

  for (int i = 0; i < reg.n_rects; i++) {
    Crop *c = &out[n];

    if (!cuconv_rect_on_plane (&reg.rects[i], &pl, &c->r))
      continue;
    c->plane = plane;
    c->cx = c->r.x - rx;
    c->cy = c->r.y - ry;
    c->cw = c->r.w + 2 * rx;
    c->ch = c->r.h + 2 * ry;
    n++;
  }
  return n;
}

static int
filter_inside (CuconvRegionFilter * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  Atlas atlas[REGION_MAX_PLANES];
  CuconvPlane aps[REGION_MAX_PLANES];
  int first[REGION_MAX_PLANES + 1], n_aps = 0, ret;
  CopyParams gp, sp;
  size_t total = 0;
  int n = 0, n_gather = 0, n_scatter = 0, i, k;
  cudaError_t e;

  e = host_reserve (rf, n_planes * reg.n_rects);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);

  /* the source where the input stays: every plane, one copy each */
  for (i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    e = cudaMemcpy2DAsync (pl.dst, pl.dst_stride, pl.src, pl.src_stride,
        (size_t) pl.width * pixel_bytes (pl), pl.height,
        cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess)
      return fail (st, "the GPU failed to copy a frame", e);
  }

  /* the crops of each plane, packed into its atlas */
  for (i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    unsigned long long area = 0;
    int rx, ry, m;

    first[i] = n;
    memset (&atlas[i], 0, sizeof (atlas[i]));
    if (all_ops (pl, CUCONV_COMP_COPY))
      continue;                 /* dst already holds it */
    plane_reach (f, pl, &rx, &ry);
    m = plane_crops (pl, i, reg, rx, ry, rf->crops + n);
    if (m == 0)
      continue;
    qsort (rf->crops + n, m, sizeof (Crop), crop_cmp);
    for (k = n; k < n + m; k++)
      area += (unsigned long long) rf->crops[k].cw * rf->crops[k].ch;
    if (area < (unsigned long long) pl.width * pl.height)
      pack_shelves (rf->crops + n, m, pl.width, &atlas[i].w, &atlas[i].h);
    /* more crop than plane: filter the plane itself */
    if (area >= (unsigned long long) pl.width * pl.height ||
        (unsigned long long) atlas[i].w * atlas[i].h >=
        (unsigned long long) pl.width * pl.height) {
      atlas[i].whole = 1;
      atlas[i].w = pl.width;
      atlas[i].h = pl.height;
    }
    atlas[i].pitch = align_up ((size_t) atlas[i].w * pixel_bytes (pl),
        ATLAS_PITCH_ALIGN);
    atlas[i].offset = total;
    total += align_up (atlas[i].pitch * atlas[i].h, ATLAS_PLANE_ALIGN);
    n += m;
  }
  first[n_planes] = n;
  if (n == 0)
    return 0;

  /* the jobs: gathers of the atlas planes' crops, then every scatter */
  for (k = 0; k < n; k++) {
    const Crop & c = rf->crops[k];

    if (!atlas[c.plane].whole)
      rf->jobs[n_gather++] = { c.plane, c.cx, c.cy, c.ax, c.ay, c.cw, c.ch, 0 };
  }
  for (k = 0; k < n; k++) {
    const Crop & c = rf->crops[k];
    CopyJob *j = &rf->jobs[n_gather + n_scatter++];

    *j = { c.plane, c.r.x, c.r.y, c.r.x, c.r.y, c.r.w, c.r.h, 0 };
    if (!atlas[c.plane].whole) {
      j->sx = c.ax + (c.r.x - c.cx);
      j->sy = c.ay + (c.r.y - c.cy);
    }
  }
  const int gather_blocks = number_blocks (rf->jobs, n_gather);
  const int scatter_blocks = number_blocks (rf->jobs + n_gather, n_scatter);

  e = cudaStreamWaitEvent (stream, rf->done, 0);
  if (e == cudaSuccess)
    e = device_reserve (rf, total, n_gather + n_scatter, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync (rf->d_jobs, rf->jobs,
        sizeof (CopyJob) * (n_gather + n_scatter), cudaMemcpyHostToDevice,
        stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (rf->uploaded, stream);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions on the GPU", e);

  memset (&gp, 0, sizeof (gp));
  memset (&sp, 0, sizeof (sp));
  gp.jobs = rf->d_jobs;
  gp.n_jobs = n_gather;
  gp.border = f.settings.border;
  sp.jobs = rf->d_jobs + n_gather;
  sp.n_jobs = n_scatter;
  sp.border = CUCONV_BORDER_CLAMP;      /* scatters stay inside */
  for (i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    uint8_t *in = rf->atlas_in + atlas[i].offset;
    uint8_t *out = rf->atlas_out + atlas[i].offset;

    gp.plane[i] = { pl.src, (size_t) pl.src_stride, pl.width, pl.height, in,
        atlas[i].pitch, pixel_bytes (pl) };
    sp.plane[i] = { out, atlas[i].pitch, atlas[i].w, atlas[i].h, pl.dst,
        (size_t) pl.dst_stride, pixel_bytes (pl) };
  }

  e = launch_copy (gp, gather_blocks, stream);
  if (e != cudaSuccess)
    return fail (st, "the GPU failed to filter regions", e);
  /* the atlas planes through the dispatch in one call: a 4:2:0 frame's
   * in one launch */
  for (i = 0; i < n_planes; i++) {
    CuconvPlane & ap = aps[n_aps];

    if (first[i + 1] == first[i])
      continue;
    ap = planes[i];
    if (!atlas[i].whole) {
      ap.src = rf->atlas_in + atlas[i].offset;
      ap.src_stride = (ptrdiff_t) atlas[i].pitch;
      ap.width = atlas[i].w;
      ap.height = atlas[i].h;
    }
    ap.dst = rf->atlas_out + atlas[i].offset;
    ap.dst_stride = (ptrdiff_t) atlas[i].pitch;
    n_aps++;
  }
  ret = cuconv_filter_device (aps, n_aps, &f, stream, st);
  if (ret != 0)
    return ret;
  e = launch_copy (sp, scatter_blocks, stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (rf->done, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

static int
filter_outside (CuconvRegionFilter * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  CopyParams sp;
  int n = 0, blocks, i, k, ret;
  cudaError_t e;

  e = host_reserve (rf, n_planes * reg.n_rects);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  ret = cuconv_filter_device (planes, n_planes, &f, stream, st);
  if (ret != 0)
    return ret;

  /* the source back inside the rectangles (no reach: no atlas) */
  memset (&sp, 0, sizeof (sp));
  for (i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    sp.plane[i] = { pl.src, (size_t) pl.src_stride, pl.width, pl.height,
        pl.dst, (size_t) pl.dst_stride, pixel_bytes (pl) };
    if (all_ops (pl, CUCONV_COMP_COPY))
      continue;                 /* the filter copied it */
    n += plane_crops (pl, i, reg, 0, 0, rf->crops + n);
  }
  if (n == 0)
    return 0;
  for (k = 0; k < n; k++) {
    const Crop & c = rf->crops[k];

    rf->jobs[k] = { c.plane, c.r.x, c.r.y, c.r.x, c.r.y, c.r.w, c.r.h, 0 };
  }
  blocks = number_blocks (rf->jobs, n);

  e = cudaStreamWaitEvent (stream, rf->done, 0);
  if (e == cudaSuccess)
    e = device_reserve (rf, 0, n, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync (rf->d_jobs, rf->jobs, sizeof (CopyJob) * n,
        cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (rf->uploaded, stream);
  sp.jobs = rf->d_jobs;
  sp.n_jobs = n;
  sp.border = CUCONV_BORDER_CLAMP;
  if (e == cudaSuccess)
    e = launch_copy (sp, blocks, stream);
  if (e == cudaSuccess)
    e = cudaEventRecord (rf->done, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

}                               /* namespace cuconv */

extern "C" CuconvRegionFilter *
cuconv_region_filter_new (CuconvStatus * st)
{
  CuconvRegionFilter *rf =
      (CuconvRegionFilter *) calloc (1, sizeof (CuconvRegionFilter));
  cudaError_t e;

  if (!rf) {
    fail (st, "out of host memory for the regions", cudaErrorMemoryAllocation);
    return NULL;
  }
  e = cudaEventCreateWithFlags (&rf->done, cudaEventDisableTiming);
  if (e == cudaSuccess)
    e = cudaEventCreateWithFlags (&rf->uploaded, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    fail (st, "cannot create a CUDA event for the regions", e);
    if (rf->done)
      cudaEventDestroy (rf->done);
    free (rf);
    return NULL;
  }
  return rf;
}

extern "C" void
cuconv_region_filter_free (CuconvRegionFilter * rf)
{
  if (!rf)
    return;
  /* the last frame's launches may still read the buffers */
  cudaEventSynchronize (rf->done);
  cudaFree (rf->atlas_in);
  cudaFree (rf->atlas_out);
  cudaFree (rf->d_jobs);
  cudaFreeHost (rf->jobs);
  cudaEventDestroy (rf->done);
  cudaEventDestroy (rf->uploaded);
  cudaGetLastError ();
  free (rf->crops);
  free (rf);
}

extern "C" int
cuconv_region_filter_device (CuconvRegionFilter * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  const cudaStream_t s = (cudaStream_t) stream;
  CuconvRegions reg;

  if (!regions || regions->mode == CUCONV_REGION_FRAME)
    return cuconv_filter_device (planes, n_planes, f, stream, st);
  if (!rf || n_planes < 1 || n_planes > REGION_MAX_PLANES)
    return fail (st, "the region filter takes 1 to 4 planes",
        cudaErrorInvalidValue);
  reg = *regions;
  if (!reg.rects || reg.n_rects < 0)
    reg.n_rects = 0;
  if (reg.mode == CUCONV_REGION_OUTSIDE) {
    if (reg.n_rects == 0)
      return cuconv_filter_device (planes, n_planes, f, stream, st);
    return filter_outside (rf, planes, n_planes, *f, reg, s, st);
  }
  return filter_inside (rf, planes, n_planes, *f, reg, s, st);
}
