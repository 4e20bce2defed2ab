/* gst-cudaconvolve: regions of frames in device memory (docs/design.md,
 * "The region path"; the semantics in docs/semantics.md, "Regions"): the
 * order of a frame's launches, the work lists and the cost model that
 * chooses, plane by plane, between the direct kernel and the whole plane.
 *
 * INSIDE: one launch copies the source to dst, every plane; then one
 * launch of the direct kernel (cuconv-region-direct.cu) filters the
 * rectangles where they lie, a tile of one component of one rectangle a
 * block, from a work list uploaded once a frame.  Overlapping rectangles
 * write the same value twice.  A plane the direct kernel does not take
 * (direct_takes_filter, direct_takes_plane), or whose rectangles would
 * cost more than the plane itself, is filtered whole into a scratch plane
 * instead, and one launch copies its rectangles from there to dst.
 *
 * OUTSIDE: the whole frame is filtered into dst, then one launch copies
 * the source back inside the rectangles.
 *
 * Soft regions: the whole frame, then the weights and a blend.  Region-
 * relative filters: each region filtered from a crop around it and
 * written where it applies (filter_relative).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-tile.cuh"
#include "cuconv-device-frames.cuh"

namespace cuconv {

/* A length cut into n tiles of at most max: the first `extra` one longer
 * than the others, so that no tile is a sliver.  One tile, the common
 * case of many small rectangles, without a division. */
struct Split
{
  int n, len, extra;
  Split (int total, int max)
  : n (1), len (total), extra (0)
  {
    if (total > max) {
      n = (total + max - 1) / max;
      len = total / n;
      extra = total % n;
    }
  }
  int start (int i) const
  {
    return i * len + min (i, extra);
  }
  int size (int i) const
  {
    return len + (i < extra);
  }
};

/* Roughly the work of the direct tiles of a rectangle w x h cut into
 * nx x ny tiles: the samples they stage and their FMAs, each tile's
 * reach and padding counted (sums over the tiles, in closed form). */
static double
direct_rect_cost (const DirectPlane & d, int nt, int w, int h, int nx,
    int ny)
{
  const double rows = h + (double) ny * (nt == 0 ? 2 * d.ry : d.t4y + 3);
  const double cols = w + nx * (d.t4x + 3.0);

  if (nt == 0)
    return rows * cols + (double) h * (w + 3.0 * nx) * (2 * d.ry + 1) * d.t4x;
  return rows * cols + nt * (rows * (w + 3.0 * nx) * d.t4x +
      (double) w * (h + 3.0 * ny) * d.t4y);
}

/* How much a unit of direct_rect_cost costs against one of the whole
 * plane's: 1 takes both paths as equally efficient, so the whole plane
 * goes first as soon as the tiles (overlaps counted each time) would
 * stage and multiply more than it.  bench-kernel --regions measures the
 * two paths against each other. */
#define DIRECT_COST_WEIGHT 1.0

/* direct_rect_cost's count for the whole plane through the whole-plane
 * kernels (tiles of 64 rows), to compare with. */
static double
whole_plane_cost (const DirectPlane & d, int nt, const CuconvPlane & pl)
{
  const double px = (double) pl.width * pl.height / DIRECT_COST_WEIGHT;

  if (nt == 0)
    return px * (1.0 + (2 * d.rx + 1) * (2 * d.ry + 1));
  return px * (1.0 + nt * ((2 * d.rx + 1) * (64.0 + 2 * d.ry) / 64.0 +
          2 * d.ry + 1));
}

/* The rectangles on each plane (cuconv_rect_on_plane), the empty ones
 * dropped: those of plane i are rf->clipped[first[i]] to
 * rf->clipped[first[i + 1] - 1]. */
static cudaError_t
clip_rects (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, int *first)
{
  const size_t need = (size_t) n_planes * reg.n_rects;
  int n = 0;

  if (need > rf->clipped_cap) {
    CuconvRect *c = (CuconvRect *) realloc (rf->clipped,
        sizeof (CuconvRect) * need);

    if (!c)
      return cudaErrorMemoryAllocation;
    rf->clipped = c;
    rf->clipped_cap = need;
  }
  for (int i = 0; i < n_planes; i++) {
    first[i] = n;
    for (int k = 0; k < reg.n_rects; k++)
      n += cuconv_rect_on_plane (&reg.rects[k], &planes[i], &rf->clipped[n]);
  }
  first[n_planes] = n;
  return cudaSuccess;
}

/* The jobs that copy each rectangle of the planes marked in `on` from
 * src to dst, the same place in both; returns how many.  Their blocks are
 * numbered after (copy_jobs_number_blocks). */
static int
rect_jobs (const CuconvDeviceFrames * rf, const int *first, int n_planes,
    const bool *on, CopyJob * out)
{
  int n = 0;

  for (int i = 0; i < n_planes; i++) {
    for (int k = first[i]; on[i] && k < first[i + 1]; k++) {
      const CuconvRect & r = rf->clipped[k];

      out[n++] = { i, r.x, r.y, r.x, r.y, r.w, r.h, 0 };
    }
  }
  return n;
}

/* INSIDE: which planes take the direct kernel and which are filtered
 * whole, the tile height, and the sizes of the work. */
struct InsidePlan
{
  int first[CUCONV_MAX_PLANES + 1];      /* the rectangles (clip_rects) */
  bool direct[CUCONV_MAX_PLANES];
  bool whole[CUCONV_MAX_PLANES];
  int tile_h;
  size_t smem;
  long long n_items, n_taps;
  int n_jobs;
};

/* The multiprocessors of the current device, or 66 when the runtime
 * cannot say: only the tiles' height depends on it, never a sample. */
static int
sm_count (void)
{
  int sms;

  if (device_sm_count (&sms) != cudaSuccess) {
    cudaGetLastError ();
    return 66;
  }
  return sms;
}

/* The items of the direct planes' rectangles in tiles of plan.tile_h
 * rows: a tile a written component. */
static long long
direct_item_count (const InsidePlan & plan, const CuconvDeviceFrames * rf,
    const CuconvPlane * planes, int n_planes)
{
  long long n = 0;

  for (int i = 0; i < n_planes; i++) {
    long long tiles = 0;

    for (int k = plan.first[i]; plan.direct[i] && k < plan.first[i + 1];
        k++) {
      const CuconvRect & r = rf->clipped[k];

      tiles += (long long) Split (r.w, DIRECT_W).n *
          Split (r.h, plan.tile_h).n;
    }
    n += tiles * written_components (planes[i]);
  }
  return n;
}

/* Decides, for each plane with a written component: the direct kernel
 * where it takes the filter and the plane, and the plane's rectangles
 * cost less than the plane; else the whole plane. */
static cudaError_t
plan_inside (InsidePlan & plan, DirectParams & dp, CuconvDeviceFrames * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter & f,
    const CuconvRegions & reg)
{
  const bool takes = direct_takes_filter (f);
  bool filtered[CUCONV_MAX_PLANES];
  int ry = 0;
  cudaError_t e;

  memset (&plan, 0, sizeof (plan));
  e = clip_rects (rf, planes, n_planes, reg, plan.first);
  if (e != cudaSuccess)
    return e;
  for (int i = 0; i < n_planes; i++) {
    direct_plane_init (dp.plane[i], planes[i], f);
    filtered[i] = has_filtered (planes[i]);
    /* a plane without a filtered component is cheap to write directly */
    plan.direct[i] = written_components (planes[i]) > 0 &&
        plan.first[i + 1] > plan.first[i] &&
        (!filtered[i] || (takes && direct_takes_plane (planes[i])));
    plan.whole[i] = filtered[i] && !plan.direct[i] &&
        plan.first[i + 1] > plan.first[i];
    if (plan.direct[i])
      ry = max (ry, dp.plane[i].ry);
  }

  /* the tallest tile that fits; tall ones cut the share of a long
   * vertical reach, short ones make more blocks */
  e = fit_tile (ry > 16 ? DIRECT_MAX_H : DIRECT_MAX_H / 2, DIRECT_MIN_H,
      [&](int h) {
        return direct_smem (dp, f, plan.direct, n_planes, h);
      }, &plan.tile_h, &plan.smem);
  if (e != cudaSuccess)
    return e;

  for (int i = 0; i < n_planes; i++) {
    const DirectPlane & d = dp.plane[i];
    const int tile_h = max (plan.tile_h, DIRECT_MIN_H);
    double cost = 0.0;

    if (!plan.direct[i] || !filtered[i])
      continue;
    for (int k = plan.first[i]; k < plan.first[i + 1]; k++) {
      const CuconvRect & r = rf->clipped[k];

      cost += direct_rect_cost (d, f.n_terms, r.w, r.h,
          Split (r.w, DIRECT_W).n, Split (r.h, tile_h).n);
    }
    if (plan.tile_h == 0 || cost > whole_plane_cost (d, f.n_terms,
            planes[i])) {
      plan.direct[i] = false;
      plan.whole[i] = true;
      continue;
    }
    plan.n_taps += direct_taps (f.n_terms, d.t4x, d.t4y, 2 * f.m.radius + 1);
  }
  /* a launch of a fraction of a wave lasts as long as its slowest block:
   * shorter tiles, down to DIRECT_MIN_H, while there are fewer than two
   * a multiprocessor (fill_two_waves' rule) */
  plan.tile_h = max (plan.tile_h, DIRECT_MIN_H);
  plan.n_items = direct_item_count (plan, rf, planes, n_planes);
  while (plan.tile_h > DIRECT_MIN_H && plan.n_items > 0 &&
      plan.n_items < 2LL * sm_count ()) {
    plan.tile_h /= 2;
    plan.n_items = direct_item_count (plan, rf, planes, n_planes);
  }
  for (int i = 0; i < n_planes; i++)
    if (plan.whole[i])
      plan.n_jobs += plan.first[i + 1] - plan.first[i];
  /* the shared memory of the planes that stayed direct (none when only
   * filled ones did) */
  plan.smem = direct_smem (dp, f, plan.direct, n_planes, plan.tile_h);
  return cudaSuccess;
}

/* The tiles of the rectangles of the direct planes, every written
 * component of each; returns how many. */
static long long
direct_items (const InsidePlan & plan, const CuconvDeviceFrames * rf,
    const CuconvPlane * planes, int n_planes, DirectItem * out)
{
  const int tile_h = plan.tile_h;
  long long n = 0;

  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    for (int k = plan.first[i]; plan.direct[i] && k < plan.first[i + 1];
        k++) {
      const CuconvRect & r = rf->clipped[k];
      const Split sx (r.w, DIRECT_W), sy (r.h, tile_h);

      for (int ty = 0; ty < sy.n; ty++)
        for (int tx = 0; tx < sx.n; tx++)
          for (int c = 0; c < pl.n_comp; c++)
            if (pl.op[c] != CUCONV_COMP_COPY)
              out[n++] = { r.x + sx.start (tx), r.y + sy.start (ty),
                (uint8_t) i, (uint8_t) c, (uint8_t) sx.size (tx),
                (uint8_t) sy.size (ty) };
    }
  }
  return n;
}

static int
filter_inside (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  InsidePlan plan;
  DirectParams dp;
  CopyParams sp;
  CuconvPlane whole[CUCONV_MAX_PLANES];
  size_t pitch[CUCONV_MAX_PLANES], offset[CUCONV_MAX_PLANES];
  size_t scratch = 0, items_at, jobs_at, bytes;
  uint8_t *work;
  int n_whole = 0, taps = 0, blocks, ret;
  cudaError_t e;

  memset (&dp, 0, sizeof (dp));
  memset (&sp, 0, sizeof (sp));
  e = plan_inside (plan, dp, rf, planes, n_planes, f, reg);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions", e);
  if (plan.n_items > INT_MAX)
    return fail (st, "too many regions for the GPU", cudaErrorInvalidValue);

  /* the source where the input stays */
  e = launch_copy_planes (planes, n_planes, stream);
  if (e != cudaSuccess)
    return fail (st, "the GPU failed to copy a frame", e);
  if (plan.n_items == 0 && plan.n_jobs == 0)
    return 0;

  /* the work, one upload: taps, tiles, the whole planes' copy jobs */
  items_at = align_up (sizeof (float) * plan.n_taps, 16);
  jobs_at = align_up (items_at + sizeof (DirectItem) * plan.n_items, 16);
  bytes = jobs_at + sizeof (CopyJob) * plan.n_jobs;
  e = work_begin (rf, bytes, &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  for (int i = 0; i < n_planes; i++) {
    DirectPlane & d = dp.plane[i];

    if (!plan.direct[i] || d.t4x == 0)
      continue;
    d.taps = taps;
    direct_taps_write ((float *) work + taps, d, planes[i], f);
    taps += direct_taps (f.n_terms, d.t4x, d.t4y, 2 * f.m.radius + 1);
  }
  direct_items (plan, rf, planes, n_planes, (DirectItem *) (work + items_at));
  sp.n_jobs = rect_jobs (rf, plan.first, n_planes, plan.whole,
      (CopyJob *) (work + jobs_at));

  /* the whole planes' scratch */
  for (int i = 0; i < n_planes; i++) {
    pitch[i] = align_up ((size_t) planes[i].width * pixel_bytes (planes[i]),
        SCRATCH_PITCH_ALIGN);
    offset[i] = scratch;
    if (plan.whole[i])
      scratch += align_up (pitch[i] * planes[i].height, SCRATCH_PLANE_ALIGN);
  }

  blocks = copy_jobs_number_blocks ((CopyJob *) (work + jobs_at), sp.n_jobs);
  e = work_upload (rf, bytes, stream);
  if (e == cudaSuccess)
    e = device_grow (rf, rf->scratch, scratch);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions on the GPU", e);

  /* the whole planes into the scratch, their rectangles from there */
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    uint8_t *s = rf->scratch.ptr + offset[i];

    if (!plan.whole[i])
      continue;
    whole[n_whole] = pl;
    whole[n_whole].dst = s;
    whole[n_whole++].dst_stride = (ptrdiff_t) pitch[i];
    sp.plane[i] = { s, pitch[i], pl.dst, (size_t) pl.dst_stride,
        pixel_bytes (pl) };
  }
  sp.jobs = (const CopyJob *) (rf->d_work.ptr + jobs_at);
  if (n_whole > 0) {
    ret = filter_frame (whole, n_whole, &f, CUCONV_PATH_AUTO, rf->wide,
        stream, st);
    if (ret != 0)
      return ret;
    e = launch_copy_rects (sp, blocks, stream);
  }

  /* the direct planes' rectangles */
  dp.taps = (const float *) rf->d_work.ptr;
  dp.items = (const DirectItem *) (rf->d_work.ptr + items_at);
  dp.border = f.border;
  dp.combine = f.combine;
  dp.amount = f.amount;
  dp.side = 2 * f.m.radius + 1;
  if (e == cudaSuccess)
    e = launch_direct (dp, f.n_terms, (int) plan.n_items, plan.smem, stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

static int
filter_outside (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  int first[CUCONV_MAX_PLANES + 1];
  bool on[CUCONV_MAX_PLANES];
  CopyParams sp;
  uint8_t *work;
  int blocks, ret;
  cudaError_t e;

  e = clip_rects (rf, planes, n_planes, reg, first);
  if (e == cudaSuccess)
    e = work_begin (rf, sizeof (CopyJob) * first[n_planes], &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  ret = filter_frame (planes, n_planes, &f, CUCONV_PATH_AUTO, rf->wide,
      stream, st);
  if (ret != 0)
    return ret;

  /* the source back inside the rectangles (the filter copied the planes
   * that only copy) */
  memset (&sp, 0, sizeof (sp));
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];

    on[i] = !all_ops (pl, CUCONV_COMP_COPY);
    sp.plane[i] = { pl.src, (size_t) pl.src_stride, pl.dst,
        (size_t) pl.dst_stride, pixel_bytes (pl) };
  }
  sp.n_jobs = rect_jobs (rf, first, n_planes, on, (CopyJob *) work);
  if (sp.n_jobs == 0)
    return 0;
  blocks = copy_jobs_number_blocks ((CopyJob *) work, sp.n_jobs);

  e = work_upload (rf, sizeof (CopyJob) * sp.n_jobs, stream);
  sp.jobs = (const CopyJob *) rf->d_work.ptr;
  if (e == cudaSuccess)
    e = launch_copy_rects (sp, blocks, stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

/* Soft regions: the whole frame into dst, each sample's weight (the
 * largest of the regions') into the scratch, then every sample blended
 * between the source and dst by it. */
static int
filter_soft (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvFilter & f, const CuconvRegions & reg,
    cudaStream_t stream, CuconvStatus * st)
{
  WeighParams wp;
  BlendParams bp;
  size_t offset[CUCONV_MAX_PLANES], weights = 0, jobs_at, bytes;
  WeighJob *jobs;
  uint8_t *work;
  int rows = 0, blocks, ret;
  cudaError_t e;

  memset (&wp, 0, sizeof (wp));
  memset (&bp, 0, sizeof (bp));
  jobs_at = align_up (sizeof (CuconvBox) * reg.n_rects, 16);
  bytes = jobs_at + sizeof (WeighJob) * (size_t) n_planes * reg.n_rects;
  e = work_begin (rf, bytes, &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  memcpy (work, reg.boxes, sizeof (CuconvBox) * reg.n_rects);
  jobs = (WeighJob *) (work + jobs_at);

  /* each rectangle on each plane, weighed by its box */
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    const int bytes_per = cuconv_plane_sample_bytes (&pl);
    const int depth = pl.depth > 8 ? pl.depth : 8;

    for (int k = 0; k < reg.n_rects; k++) {
      CuconvRect r;

      if (cuconv_rect_on_plane (&reg.rects[k], &pl, &r))
        jobs[wp.n_jobs++] = { i, r.x, r.y, r.w, r.h, k, 0 };
    }
    wp.plane[i] = { nullptr, pl.width, pl.sub_x > 1 ? pl.sub_x : 1,
        pl.sub_y > 1 ? pl.sub_y : 1 };
    bp.plane[i] = { pl.src, pl.dst, (size_t) pl.src_stride,
        (size_t) pl.dst_stride, nullptr, pl.width, pl.n_comp, bytes_per,
        bytes_per == 1 ? 0 : pl.shift, (1u << depth) - 1 };
    bp.first_row[i] = rows;
    rows += pl.height;
    offset[i] = weights;
    weights += align_up (sizeof (float) * pl.width * pl.height, 256);
  }
  bp.first_row[n_planes] = rows;
  bp.n = n_planes;
  bp.mode = reg.mode;
  wp.shape = reg.shape;
  wp.feather = reg.feather;
  blocks = weigh_jobs_number_blocks (jobs, wp.n_jobs);

  e = work_upload (rf, jobs_at + sizeof (WeighJob) * wp.n_jobs, stream);
  if (e == cudaSuccess)
    e = device_grow (rf, rf->scratch, weights);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions on the GPU", e);
  ret = filter_frame (planes, n_planes, &f, CUCONV_PATH_AUTO, rf->wide,
      stream, st);
  if (ret != 0)
    return ret;

  for (int i = 0; i < n_planes; i++) {
    wp.plane[i].weight = (float *) (rf->scratch.ptr + offset[i]);
    bp.plane[i].weight = wp.plane[i].weight;
  }
  wp.boxes = (const CuconvBox *) rf->d_work.ptr;
  wp.jobs = (const WeighJob *) (rf->d_work.ptr + jobs_at);
  e = cudaMemsetAsync (rf->scratch.ptr, 0, weights, stream);
  if (e == cudaSuccess)
    e = launch_weigh_rects (wp, blocks, stream);
  if (e == cudaSuccess)
    e = launch_blend_planes (bp, stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" int
cuconv_device_frames_filter (CuconvDeviceFrames * rf,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    const CuconvRegions * regions, void *stream, CuconvStatus * st)
{
  const cudaStream_t s = (cudaStream_t) stream;
  CuconvRegions reg;

  if (cuconv_regions_whole_frame (regions))
    return rf ? filter_frame (planes, n_planes, f, CUCONV_PATH_AUTO, rf->wide,
        s, st) : cuconv_filter_device (planes, n_planes, f, stream, st);
  if (!rf || n_planes < 1 || n_planes > CUCONV_MAX_PLANES)
    return fail (st, "the region filter takes 1 to 4 planes",
        cudaErrorInvalidValue);
  reg = *regions;
  if (!reg.rects || reg.n_rects < 0)
    reg.n_rects = 0;
  if (cuconv_regions_relative (&reg))
    return filter_relative (rf, planes, n_planes, reg, s, st);
  if (cuconv_regions_soft (&reg) && reg.n_rects > 0) {
    const int ret = filter_soft_batched (rf, planes, n_planes, reg, *f, s, st);

    return ret != RELATIVE_NOT_TAKEN ? ret : filter_soft (rf, planes,
        n_planes, *f, reg, s, st);
  }
  if (reg.mode == CUCONV_REGION_OUTSIDE)
    return filter_outside (rf, planes, n_planes, *f, reg, s, st);
  return filter_inside (rf, planes, n_planes, *f, reg, s, st);
}

