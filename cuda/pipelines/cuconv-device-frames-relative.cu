/* gst-cudaconvolve: region-relative filters on the GPU
 * (cuconv_regions_relative; docs/semantics.md, "Strength that follows
 * the region"): the source into dst, then every region filtered by a
 * filter of its own strength where it applies.  Separable taps that reach
 * at most RELATIVE_MAX_REACH, up to RELATIVE_MAX_REGIONS regions: all of
 * them in two launches (cuconv-region-relative.cu), from a work list of
 * jobs (a plane of a region) with their taps, uploaded once a frame.
 * Anything else: a region after the other, each filtered from a crop
 * around it by the whole-frame kernels.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-device-frames.cuh"

namespace cuconv {

/* The most regions the batched launches take: each sample weighs the
 * regions that meet its own, listed for each region on the host. */
constexpr int RELATIVE_MAX_REGIONS = 64;

/* The untruncated gaussian's taps out to the reach where what lies beyond
 * weighs at most a quarter of a step of a sample of depth bits, in
 * double: g[k] = exp (-k^2 / (2 sigma^2)) / sum over every integer j of
 * exp (-j^2 / (2 sigma^2)), k = -reach..reach, into out (2 * reach + 1
 * floats).  exp (-k^2 / (2 sigma^2)) is the previous one times q^(2k-1),
 * q = exp (-1 / (2 sigma^2)): one exp, not one a tap (a region's filter
 * is made on the host every frame).  Returns the reach, or -1 past
 * RELATIVE_MAX_REACH. */
static int
untruncated_taps (double sigma, int depth, float *out)
{
  const int far = (int) ceil (12.0 * sigma) + 1;
  const double quarter = 0.25 / ((1 << depth) - 1);
  const double q = exp (-1.0 / (2.0 * sigma * sigma));
  double g[RELATIVE_MAX_REACH + 1], sum = 1.0, inside = 1.0, gk = 1.0, r = q;
  int reach = 0;

  if (!(sigma > 0.0) || far > 64 * RELATIVE_MAX_REACH)
    return -1;
  for (int k = 1; k <= far; k++, r *= q * q) {
    gk *= r;
    sum += 2.0 * gk;
  }
  /* the smallest reach whose two tails weigh at most a quarter step (the
   * same products, so at far nothing is left outside) */
  g[0] = gk = 1.0;
  r = q;
  while ((sum - inside) / sum > quarter) {
    if (++reach > RELATIVE_MAX_REACH)
      return -1;
    gk *= r;
    r *= q * q;
    g[reach] = gk;
    inside += 2.0 * gk;
  }
  for (int k = -reach; k <= reach; k++)
    out[k + reach] = (float) (g[k < 0 ? -k : k] / sum);
  return reach;
}

/* Taps t of a plane of depth bits as the batched launches take them, into
 * out (2 * reach + 1 floats): the reach, or -1 when they do not. */
static int
relative_taps (const CuconvTaps & t, int depth, float *out)
{
  if (t.untruncated)
    return untruncated_taps (t.sigma, depth, out);
  if (t.radius > CUCONV_TRUNCATED_MAX_RADIUS)
    return -1;
  memcpy (out, t.w, sizeof (float) * (2 * t.radius + 1));
  return t.radius;
}

/* The batched launches' work list, built on the host (kept in
 * CuconvDeviceFrames.relative from frame to frame). */
struct RelativeWork
{
  RelativeJob jobs[RELATIVE_MAX_REGIONS * CUCONV_MAX_PLANES];
  int h_first[RELATIVE_MAX_REGIONS * CUCONV_MAX_PLANES + 1];
  int v_first[RELATIVE_MAX_REGIONS * CUCONV_MAX_PLANES + 1];
  CuconvRect rects[RELATIVE_MAX_REGIONS * CUCONV_MAX_PLANES];
  CuconvBox boxes[RELATIVE_MAX_REGIONS];
  int rivals_first[RELATIVE_MAX_REGIONS + 1];
  int rivals[RELATIVE_MAX_REGIONS * RELATIVE_MAX_REGIONS];
  float taps[RELATIVE_MAX_REGIONS * CUCONV_MAX_PLANES * 2 *
      ((2 * RELATIVE_MAX_REACH + 1 + 3) & ~3)];
  int n_jobs, n_taps;
  size_t hbuf;                  /* floats */
};

static bool
rects_meet (const CuconvRect & a, const CuconvRect & b)
{
  return a.w > 0 && b.w > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
      a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Region k's jobs (the region order[k]), f its filter: false when the
 * batched launches do not take it. */
static bool
relative_region_jobs (RelativeWork & w, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, const int *order, int k,
    const CuconvFilter * f)
{
  const int r = order[k];
  CuconvRect pr[CUCONV_MAX_PLANES];

  if (f->n_terms != 1 || f->combine != CUCONV_COMBINE_NONE)
    return false;
  memset (&w.rects[k * n_planes], 0, sizeof (CuconvRect) * n_planes);
  w.boxes[k] = reg.boxes ? reg.boxes[r] : CuconvBox { 0, 0, 0, 0 };
  /* (a rectangle clipped to the frame is on every plane, or on none) */
  for (int i = 0; i < n_planes; i++)
    if (!cuconv_rect_on_plane (&reg.rects[r], &planes[i], &pr[i]))
      return true;
  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    const int depth = pl.depth > 8 ? pl.depth : 8;
    RelativeJob & job = w.jobs[w.n_jobs];
    float *taps = w.taps + w.n_taps;

    w.rects[k * n_planes + i] = pr[i];
    /* a plane of copies is written only where soft regions blend it:
     * there its words come back without the bits below the sample */
    if (written_components (pl) == 0 && !cuconv_regions_soft (&reg))
      continue;
    memset (&job, 0, sizeof (job));
    job.plane = i;
    job.region = k;
    job.x = pr[i].x;
    job.y = pr[i].y;
    job.w = pr[i].w;
    job.h = pr[i].h;
    job.hbuf = RELATIVE_NO_ROWS;
    if (has_filtered (pl)) {
      const CuconvTaps *tx = cuconv_filter_taps_x (f, &pl);
      const CuconvTaps *ty = cuconv_filter_taps_y (f, &pl);
      float kx[2 * RELATIVE_MAX_REACH + 1], ky[2 * RELATIVE_MAX_REACH + 1];
      /* a round untruncated gaussian: its vertical taps are its
       * horizontal ones */
      const bool round = tx->untruncated && ty->untruncated &&
          tx->sigma == ty->sigma;

      job.rx = relative_taps (*tx, depth, kx);
      job.ry = round ? job.rx : relative_taps (*ty, depth, ky);
      if (job.rx < 0 || job.ry < 0)
        return false;
      job.t4x = quad_up (2 * job.rx + 1);
      job.t4y = quad_up (2 * job.ry + 1);
      memset (taps, 0, sizeof (float) * (job.t4x + job.t4y));
      memcpy (taps, kx, sizeof (float) * (2 * job.rx + 1));
      memcpy (taps + job.t4x, round ? kx : ky,
          sizeof (float) * (2 * job.ry + 1));
      job.taps = w.n_taps;
      w.n_taps += job.t4x + job.t4y;
      job.rows = quad_up (job.h) + job.t4y;
      job.pitch = quad_up (job.w);
      job.hbuf = w.hbuf;
      for (int c = 0; c < pl.n_comp; c++)
        if (pl.op[c] == CUCONV_COMP_FILTER)
          w.hbuf += (size_t) job.rows * job.pitch;
    }
    w.n_jobs++;
  }
  return true;
}

/* The work list of every region, each with its own filter made into
 * `made`, or all with `fixed` where it is not NULL; false when the
 * batched launches do not take them all. */
static bool
relative_plan (RelativeWork & w, const CuconvPlane * planes, int n_planes,
    const CuconvRegions & reg, const int *order, CuconvFilter * made,
    const CuconvFilter * fixed)
{
  int n = 0;

  if (reg.n_rects > RELATIVE_MAX_REGIONS)
    return false;
  for (int i = 0; i < n_planes; i++)
    if (!direct_takes_plane (planes[i]))
      return false;
  w.n_jobs = w.n_taps = 0;
  w.hbuf = 0;
  for (int k = 0; k < reg.n_rects; k++) {
    if (!fixed)
      cuconv_regions_relative_make (&reg, order, k, made);
    if (!relative_region_jobs (w, planes, n_planes, reg, order, k,
            fixed ? fixed : made))
      return false;
  }
  for (int k = 0; k < reg.n_rects; k++) {
    w.rivals_first[k] = n;
    for (int j = 0; j < reg.n_rects; j++) {
      bool meet = false;

      for (int i = 0; i < n_planes && j != k && !meet; i++)
        meet = rects_meet (w.rects[k * n_planes + i],
            w.rects[j * n_planes + i]);
      if (meet)
        w.rivals[n++] = j;
    }
  }
  w.rivals_first[reg.n_rects] = n;
  relative_number_blocks (w.jobs, w.n_jobs, w.h_first, w.v_first);
  return true;
}

/* The batched launches, from the plan w (relative_plan). */
static int
relative_batched (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, const RelativeWork & w,
    const CuconvFilter & f, cudaStream_t stream, CuconvStatus * st)
{
  const int n = reg.n_rects, nj = w.n_jobs;
  /* one upload: the jobs, their blocks, the regions, the taps */
  const size_t h_at = align_up (sizeof (RelativeJob) * nj, 16);
  const size_t v_at = h_at + align_up (sizeof (int) * (nj + 1), 16);
  const size_t rects_at = v_at + align_up (sizeof (int) * (nj + 1), 16);
  const size_t boxes_at = rects_at + align_up (sizeof (CuconvRect) * n *
      n_planes, 16);
  const size_t first_at = boxes_at + align_up (sizeof (CuconvBox) * n, 16);
  const size_t rivals_at = first_at + align_up (sizeof (int) * (n + 1), 16);
  const size_t taps_at = rivals_at +
      align_up (sizeof (int) * w.rivals_first[n], 16);
  const size_t bytes = taps_at + sizeof (float) * w.n_taps;
  const uint8_t *d;
  RelativeParams p;
  uint8_t *work;
  cudaError_t e;

  e = launch_copy_planes (planes, n_planes, stream);
  if (e != cudaSuccess)
    return fail (st, "the GPU failed to copy a frame", e);
  if (nj == 0)
    return 0;
  e = work_begin (rf, bytes, &work);
  if (e != cudaSuccess)
    return fail (st, "out of host memory for the regions", e);
  memcpy (work, w.jobs, sizeof (RelativeJob) * nj);
  memcpy (work + h_at, w.h_first, sizeof (int) * (nj + 1));
  memcpy (work + v_at, w.v_first, sizeof (int) * (nj + 1));
  memcpy (work + rects_at, w.rects, sizeof (CuconvRect) * n * n_planes);
  memcpy (work + boxes_at, w.boxes, sizeof (CuconvBox) * n);
  memcpy (work + first_at, w.rivals_first, sizeof (int) * (n + 1));
  memcpy (work + rivals_at, w.rivals, sizeof (int) * w.rivals_first[n]);
  memcpy (work + taps_at, w.taps, sizeof (float) * w.n_taps);
  e = work_upload (rf, bytes, stream);
  if (e == cudaSuccess)
    e = device_grow (rf, rf->scratch, sizeof (float) * w.hbuf);
  if (e != cudaSuccess)
    return fail (st, "cannot prepare the regions on the GPU", e);

  memset (&p, 0, sizeof (p));
  for (int i = 0; i < n_planes; i++) {
    direct_plane_init (p.plane[i], planes[i], f);
    p.sx[i] = planes[i].sub_x > 1 ? planes[i].sub_x : 1;
    p.sy[i] = planes[i].sub_y > 1 ? planes[i].sub_y : 1;
  }
  d = rf->d_work.ptr;
  p.n_planes = n_planes;
  p.n_jobs = nj;
  p.jobs = (const RelativeJob *) d;
  p.h_first = (const int *) (d + h_at);
  p.v_first = (const int *) (d + v_at);
  p.rects = (const CuconvRect *) (d + rects_at);
  p.boxes = (const CuconvBox *) (d + boxes_at);
  p.rivals_first = (const int *) (d + first_at);
  p.rivals = (const int *) (d + rivals_at);
  p.taps = (const float *) (d + taps_at);
  p.hbuf = (float *) rf->scratch.ptr;
  p.border = f.border;
  p.soft = cuconv_regions_soft (&reg);
  p.shape = reg.shape;
  p.feather = reg.feather;
  e = launch_relative (p, w.h_first[nj], w.v_first[nj], stream);
  if (e == cudaSuccess)
    e = work_end (rf, stream);
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

/* Each region, in the order of their strengths, filtered from a crop of
 * the planes around it (cuconv_regions_relative_crops) into the scratch
 * and written into dst inside its rectangle where it applies
 * (launch_write_region), one after the other on the stream: for the
 * filters and the many regions the batched launches do not take.  The
 * scratch holds a whole frame, the largest crop there can be, and the
 * soft regions' weights. */
static int
relative_crops (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, const int *order,
    CuconvFilter * f, cudaStream_t stream, CuconvStatus * st)
{
  const int soft = cuconv_regions_soft (&reg);
  size_t crop_at[CUCONV_MAX_PLANES], weight_at[CUCONV_MAX_PLANES];
  size_t bytes = 0;
  RegionParams rp;
  int ret = 0;
  cudaError_t e;

  for (int i = 0; i < n_planes; i++) {
    crop_at[i] = bytes;
    bytes += align_up (align_up ((size_t) planes[i].width *
            pixel_bytes (planes[i]), SCRATCH_PITCH_ALIGN) *
        planes[i].height, SCRATCH_PLANE_ALIGN);
  }
  for (int i = 0; i < n_planes && soft; i++) {
    weight_at[i] = bytes;
    bytes += align_up (sizeof (float) * planes[i].width * planes[i].height,
        SCRATCH_PLANE_ALIGN);
  }
  e = gpu_use_follow (rf->use, stream);
  if (e == cudaSuccess)
    e = device_grow (rf, rf->scratch, bytes);
  if (e == cudaSuccess)
    e = launch_copy_planes (planes, n_planes, stream);
  if (e == cudaSuccess && soft)
    e = cudaMemsetAsync (rf->scratch.ptr + weight_at[0], 0,
        bytes - weight_at[0], stream);

  memset (&rp, 0, sizeof (rp));
  rp.n = n_planes;
  rp.shape = reg.shape;
  rp.feather = reg.feather;
  rp.soft = soft;
  for (int k = 0; k < reg.n_rects && e == cudaSuccess && ret == 0; k++) {
    const int r = order[k];
    CuconvPlane crop[CUCONV_MAX_PLANES];
    CuconvRect pr[CUCONV_MAX_PLANES], cr[CUCONV_MAX_PLANES];
    int rows = 0;

    cuconv_regions_relative_make (&reg, order, k, f);
    if (!cuconv_regions_relative_crops (&reg.rects[r], planes, n_planes, f,
            0, pr, cr))
      continue;
    rp.box = reg.boxes ? reg.boxes[r] : CuconvBox { 0, 0, 0, 0 };
    for (int i = 0; i < n_planes; i++) {
      const CuconvPlane & pl = planes[i];
      const int bytes_per = cuconv_plane_sample_bytes (&pl);
      const int depth = pl.depth > 8 ? pl.depth : 8;
      const CuconvRect & c = cr[i];

      crop[i] = pl;
      crop[i].src = pl.src + (size_t) c.y * pl.src_stride +
          (size_t) c.x * pixel_bytes (pl);
      crop[i].dst = rf->scratch.ptr + crop_at[i];
      crop[i].dst_stride = (ptrdiff_t) align_up ((size_t) c.w *
          pixel_bytes (pl), SCRATCH_PITCH_ALIGN);
      crop[i].width = c.w;
      crop[i].height = c.h;
      rp.plane[i] = { pl.src, pl.dst, crop[i].dst, (size_t) pl.src_stride,
        (size_t) pl.dst_stride, (size_t) crop[i].dst_stride,
        soft ? (float *) (rf->scratch.ptr + weight_at[i]) : nullptr,
        pl.width, pr[i].x, pr[i].y, pr[i].w, pr[i].h, c.x, c.y, pl.n_comp,
        bytes_per, bytes_per == 1 ? 0 : pl.shift, pl.sub_x > 1 ? pl.sub_x : 1,
        pl.sub_y > 1 ? pl.sub_y : 1, (1u << depth) - 1 };
      rp.first_row[i] = rows;
      rows += pr[i].h;
    }
    rp.first_row[n_planes] = rows;
    ret = filter_frame (crop, n_planes, f, CUCONV_PATH_AUTO, rf->wide,
        stream, st);
    if (ret == 0)
      e = launch_write_region (rp, stream);
  }
  if (e == cudaSuccess && ret == 0)
    e = work_end (rf, stream);
  if (ret != 0)
    return ret;
  return e == cudaSuccess ? 0 : fail (st, "the GPU failed to filter regions",
      e);
}

/* rf's work list of the batched launches, made at its first use and kept
 * from frame to frame; NULL when out of memory. */
static RelativeWork *
relative_work (CuconvDeviceFrames * rf)
{
  if (!rf->relative)
    rf->relative = (RelativeWork *) malloc (sizeof (RelativeWork));
  return rf->relative;
}

int
filter_relative (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, cudaStream_t stream,
    CuconvStatus * st)
{
  CuconvFilter *f = (CuconvFilter *) malloc (sizeof (CuconvFilter));
  int *order = (int *) malloc (sizeof (int) * reg.n_rects);
  RelativeWork *w = relative_work (rf);
  int ret;

  if (!f || !order || !w || cuconv_regions_relative_order (&reg, order) != 0)
    ret = fail (st, "out of host memory for the regions",
        cudaErrorMemoryAllocation);
  else if (relative_plan (*w, planes, n_planes, reg, order, f, NULL))
    ret = relative_batched (rf, planes, n_planes, reg, *w, *f, stream, st);
  else
    ret = relative_crops (rf, planes, n_planes, reg, order, f, stream, st);
  free (f);
  free (order);
  return ret;
}

int
filter_soft_batched (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, const CuconvFilter & f,
    cudaStream_t stream, CuconvStatus * st)
{
  int order[RELATIVE_MAX_REGIONS];
  RelativeWork *w;

  if (reg.mode != CUCONV_REGION_INSIDE || reg.n_rects > RELATIVE_MAX_REGIONS
      || !(w = relative_work (rf)))
    return RELATIVE_NOT_TAKEN;
  for (int k = 0; k < reg.n_rects; k++)
    order[k] = k;
  if (!relative_plan (*w, planes, n_planes, reg, order, NULL, &f))
    return RELATIVE_NOT_TAKEN;
  return relative_batched (rf, planes, n_planes, reg, *w, f, stream, st);
}

}                               /* namespace cuconv */
