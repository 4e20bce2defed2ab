/* gst-cudaconvolve: the dispatch: which kernel serves which plane and
 * filter (docs/design.md), by the thresholds of cuconv-dispatch.cuh, and
 * the entry point for frames in device memory, with the one launch of a
 * 4:2:0 frame.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

/* Whether a box of plane radii rx, ry runs as running sums. */
static bool
box_sums_pay (int rx, int ry)
{
  return rx >= CUCONV_BOX_SUMS_MIN_RADIUS || ry >= CUCONV_BOX_SUMS_MIN_RADIUS;
}

/* Whether the tensor cores beat the tiles on p: a large whole plane at
 * CUCONV_MMA_MIN_RADIUS or more both ways.  The wide windows (reach past
 * 16 either way) are no faster than the other paths: forced only. */
static bool
mma_pays (const SepParams & p)
{
  return p.row_begin == 0 && p.row_end == p.height
      && p.rx * p.nc <= 16 && p.ry <= 16
      && (double) p.ws * p.height >= CUCONV_LARGE_PLANE_SAMPLES
      && min (p.rx, p.ry) >= CUCONV_MMA_MIN_RADIUS && mma_takes (p);
}

/* Whether the streaming kernel beats the tiles on p, a plane launched on
 * its own: any large whole plane, or a smaller whole plane of one
 * component up to CUCONV_STREAM_SMALL_PLANE_MAX_RADIUS (the unsharp mask
 * at every radius).  Whether it takes p, launch_stream says. */
static bool
stream_pays (const SepParams & p)
{
  return stream_fills (p) || (stream_small (p) && p.nc == 1
      && (p.ry <= CUCONV_STREAM_SMALL_PLANE_MAX_RADIUS
          || p.combine == CUCONV_COMBINE_SHARPEN));
}

/* The same for a 4:2:0 frame in one launch, on its luma plane l: a large
 * one, or a smaller one up to CUCONV_STREAM_SMALL_FRAME_MAX_RADIUS. */
static bool
frame_stream_pays (const SepParams & l)
{
  return stream_fills (l) || (stream_small (l)
      && l.rx <= CUCONV_STREAM_SMALL_FRAME_MAX_RADIUS);
}

/* Whether the 3x3 matrix's large tiles (matrix_u8) beat its tiled kernel
 * on mp: where their grid gives every multiprocessor a block; on fewer
 * blocks the tiled kernel is faster. */
static bool
matrix_u8_pays (const MatrixParams & mp)
{
  int sms;

  if (!matrix_u8_takes (mp))
    return false;
  if (device_sm_count (&sms) != cudaSuccess) {
    cudaGetLastError ();        /* not sticky: the tiled kernel serves */
    return false;
  }
  return matrix_u8_blocks (mp) >= sms;
}

/* The tuned 8-bit path: the box by radius (box: f.box), every other blur
 * with its taps. */
static cudaError_t
launch_tuned (const SepParams & p, bool box, cudaStream_t stream)
{
  if (box && box_sums_pay (p.rx, p.ry)) {
    const cudaError_t e = launch_box (p, stream);
    if (e != cudaErrorNotSupported)
      return e;
  }
  /* the taps are the box's */
  return launch_separable (p, stream);
}

/* A 4:2:0 frame in one launch (cuconv-frame420.cu): declined where the
 * tensor cores take the luma plane (its planes then launch one by one),
 * else through the streaming kernel where it beats the tiles
 * (frame_stream_pays; any frame it takes on CUCONV_PATH_STREAM), else the
 * tiles.  cudaErrorNotSupported for a frame the one launch does not
 * take. */
static cudaError_t
launch_frame (const FrameParams & fp, CuconvPath path, cudaStream_t stream)
{
  const SepParams & l = fp.plane[0];

  if (path == CUCONV_PATH_MMA || (path == CUCONV_PATH_AUTO && mma_pays (l)))
    return cudaErrorNotSupported;
  if (!frame420_takes (fp))
    return cudaErrorNotSupported;
  if (path == CUCONV_PATH_STREAM || (path == CUCONV_PATH_AUTO
          && frame_stream_pays (l))) {
    const cudaError_t e = launch_frame420_stream (fp, stream);

    if (e != cudaErrorNotSupported)
      return e;
  }
  return launch_frame420_tiles (fp, stream);
}

bool
all_ops (const CuconvPlane & pl, int op)
{
  for (int c = 0; c < pl.n_comp; c++)
    if (pl.op[c] != op)
      return false;
  return true;
}

/* Taps the tuned blur rounds exactly: its rounding has no clamp below 0,
 * and an 8-bit blur none above, so every result must lie in [0, 255.5),
 * which non-negative taps summing to at most 1 (plus float error) in each
 * direction guarantee: gaussian, box and normalised custom blurs. */
bool
taps_bounded (const float *w, int n)
{
  float sum = 0.0f;

  for (int i = 0; i < n; i++) {
    if (w[i] < 0.0f)
      return false;
    sum += w[i];
  }
  return sum <= 1.0001f;
}

static bool
taps_bounded (const CuconvTaps & t)
{
  return taps_bounded (t.w, 2 * t.radius + 1);
}

/* Whether plane pl is one the tuned kernels (cuconv-separable.cu,
 * cuconv-box.cu) may take, f filtering every component of it, at most 2
 * of them, with f.combine: a blur of bounded taps (any depth), the
 * unsharp mask of one, or two terms (sobel, laplacian).  Which radii,
 * depths and components a combine has a kernel for, launch_separable
 * says (cudaErrorNotSupported). */
static bool
takes_tuned_as (const CuconvPlane & pl, const CuconvFilter & f,
    CuconvCombine combine)
{
  const int sb = cuconv_plane_sample_bytes (&pl);

  if (f.combine != combine || pl.n_comp > 2
      || !all_ops (pl, CUCONV_COMP_FILTER) || (sb == 2
          && ((uintptr_t) pl.src | (uintptr_t) pl.dst
              | (size_t) pl.src_stride | (size_t) pl.dst_stride) % 2 != 0))
    return false;
  if (combine == CUCONV_COMBINE_MAGNITUDE || combine == CUCONV_COMBINE_ABS_SUM)
    return f.n_terms == 2;
  return f.n_terms == 1 && (combine != CUCONV_COMBINE_NONE
      || (taps_bounded (*cuconv_filter_taps_x (&f, &pl))
          && taps_bounded (*cuconv_filter_taps_y (&f, &pl))));
}

/* The plain blurs: every tuned path, the one launch for 4:2:0 frames
 * included. */
static bool
takes_tuned (const CuconvPlane & pl, const CuconvFilter & f)
{
  return takes_tuned_as (pl, f, CUCONV_COMBINE_NONE);
}

/* Whether the global path takes f on plane pl: separable terms with
 * explicit taps. */
static bool
global_takes (const CuconvPlane & pl, const CuconvFilter & f)
{
  return f.n_terms >= 1 && !cuconv_filter_taps_x (&f, &pl)->untruncated
      && !cuconv_filter_taps_y (&f, &pl)->untruncated;
}

/* Whether path leaves the choice between the fused and the global paths
 * to the dispatch, as AUTO does (TILED and STREAM only pick among the
 * fused kernels). */
static bool
dispatch_chooses (CuconvPath path)
{
  return path != CUCONV_PATH_GLOBAL && path != CUCONV_PATH_RECURSIVE
      && path != CUCONV_PATH_WINDOW;
}

/* Whether the forced tensor-core path takes rows [row_begin, row_end) of
 * pl (the dispatch's own choice never takes it past the tuned radii:
 * mma_pays). */
static bool
mma_forced (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, CuconvPath path)
{
  SepParams p;

  return path == CUCONV_PATH_MMA && takes_tuned_as (pl, f, f.combine)
      && sep_params_init (p, pl, f, row_begin, row_end) && mma_takes (p);
}

/* The fused kernels of one or two separable terms of radius up to
 * CUCONV_TILE_MAX_RADIUS: the tensor-core blur where it beats the tiles
 * (any plane it takes on CUCONV_PATH_MMA), the streaming kernel where it
 * takes the plane and filter and beats the tiles (stream_pays; any plane
 * on CUCONV_PATH_STREAM; neither on CUCONV_PATH_TILED), else the tuned tiles
 * where they have a kernel for them, else the general one. */
static cudaError_t
launch_fused (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, cudaStream_t stream, CuconvPath path)
{
  SepParams p;

  if (takes_tuned_as (pl, f, f.combine)
      && sep_params_init (p, pl, f, row_begin, row_end)) {
    cudaError_t e = path == CUCONV_PATH_MMA || (path == CUCONV_PATH_AUTO
        && mma_pays (p)) ? launch_mma (p, stream) : cudaErrorNotSupported;

    if (e == cudaErrorNotSupported && (path == CUCONV_PATH_STREAM
            || (path == CUCONV_PATH_AUTO && stream_pays (p))))
      e = launch_stream (p, stream);

    if (e == cudaErrorNotSupported)
      e = f.combine == CUCONV_COMBINE_NONE && pl.depth <= 8
          ? launch_tuned (p, f.box != 0, stream)
          : launch_separable (p, stream);

    if (e != cudaErrorNotSupported)
      return e;
  }
  return launch_general (pl, f, row_begin, row_end, stream);
}

cudaError_t
launch_plane (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, Scratch & sc, cudaStream_t stream, CuconvPath path)
{
  const size_t rb = (size_t) pl.width * pl.n_comp *
      cuconv_plane_sample_bytes (&pl);
  cudaError_t e;

  if (row_end <= row_begin)
    return cudaSuccess;
  if (all_ops (pl, CUCONV_COMP_COPY))
    return cudaMemcpy2DAsync (pl.dst + (size_t) row_begin * pl.dst_stride,
        pl.dst_stride, pl.src + (size_t) row_begin * pl.src_stride,
        pl.src_stride, rb, row_end - row_begin, cudaMemcpyDeviceToDevice,
        stream);
  if (all_ops (pl, CUCONV_COMP_FILL))
    return launch_fill (pl, row_begin, row_end, stream);
  /* not a sum of taps: one kernel, whatever the path */
  if (f.combine == CUCONV_COMBINE_BILATERAL)
    return launch_bilateral (pl, f, row_begin, row_end, stream);
  if (f.combine == CUCONV_COMBINE_NLMEANS)
    return launch_nlmeans (pl, f, row_begin, row_end,
        path == CUCONV_PATH_NLMEANS_SUMS, stream);
  if (f.combine == CUCONV_COMBINE_PIXELATE)
    return row_begin == 0 && row_end == pl.height ?
        launch_pixelate (pl, f, stream) : cudaErrorInvalidValue;
  if (f.combine == CUCONV_COMBINE_CANNY)
    return row_begin == 0 && row_end == pl.height ?
        launch_canny (pl, f, sc, stream) : cudaErrorInvalidValue;
  if (path == CUCONV_PATH_WINDOW) {
    e = launch_window (pl, f, row_begin, row_end, sc, stream);
    if (e != cudaErrorNotSupported)
      return e;
  }
  if ((path == CUCONV_PATH_GLOBAL || path == CUCONV_PATH_WINDOW)
      && global_takes (pl, f))
    return launch_global (pl, f, row_begin, row_end, sc, stream);
  if (filter_is_wide (f) || (path == CUCONV_PATH_RECURSIVE && f.n_terms > 0)) {
    /* whole planes only: the strips give wide filters one strip */
    if (row_begin != 0 || row_end != pl.height)
      return cudaErrorInvalidValue;
    return path == CUCONV_PATH_RECURSIVE ? launch_recursive (pl, f, sc,
        stream) : launch_wide (pl, f, sc, stream);
  }
  if (f.n_terms == 0) {
    /* the 2-D matrix: through the strips where they take it and path
     * allows them, else its tiles (cuconv-matrix.cu) */
    MatrixParams mp;

    if (path == CUCONV_PATH_AUTO || path == CUCONV_PATH_STREAM) {
      e = launch_stream_matrix (pl, f.m, f.border, row_begin,
          row_end, path == CUCONV_PATH_STREAM, stream);
      if (e != cudaErrorNotSupported)
        return e;
    }
    matrix_params_init (mp, pl, f.m, f.border, row_begin, row_end);
    mp.u8 = matrix_u8_pays (mp);
    return launch_matrix (mp, stream);
  }
  /* an 8-bit blur of one term (no box: its sums do not grow with the
   * radius) is faster through the global passes past
   * CUCONV_GLOBAL_MIN_RADIUS, unless the tensor cores are forced */
  if (dispatch_chooses (path) && takes_tuned (pl, f) && pl.depth <= 8
      && !f.box
      && max (cuconv_filter_taps_x (&f, &pl)->radius,
          cuconv_filter_taps_y (&f, &pl)->radius) > CUCONV_GLOBAL_MIN_RADIUS
      && !mma_forced (pl, f, row_begin, row_end, path))
    return launch_global (pl, f, row_begin, row_end, sc, stream);
  /* a fused tile that does not fit the device's shared memory at this
   * radius is refused (sobel and laplacian from radius 28 on sm_75, 45 on
   * sm_86/89; the generic gaussian from 59 on sm_75): the global path
   * fits every device, and takes bands of rows too */
  e = launch_fused (pl, f, row_begin, row_end, stream, path);
  if (e == cudaErrorInvalidConfiguration || e == cudaErrorNotSupported)
    return launch_global (pl, f, row_begin, row_end, sc, stream);
  return e;
}

/* The global path: the box's running sums where they take the plane
 * (exact, and a cost that does not grow with the radius), else the
 * passes with the taps. */
cudaError_t
launch_global (const CuconvPlane & pl, const CuconvFilter & f, int row_begin,
    int row_end, Scratch & sc, cudaStream_t stream)
{
  cudaError_t e;

  if (!global_args_valid (pl, f, row_begin, row_end))
    return cudaErrorInvalidValue;
  if (row_end <= row_begin || pl.width <= 0)
    return cudaSuccess;
  e = launch_box_sums (pl, f, row_begin, row_end, sc, stream);
  if (e != cudaErrorNotSupported)
    return e;
  return launch_global_taps (pl, f, row_begin, row_end, sc, stream);
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" int
cuconv_filter_device (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *stream, CuconvStatus * st)
{
  return cuconv_filter_device_path (planes, n_planes, f, CUCONV_PATH_AUTO,
      stream, st);
}

/* A call without an engine: its scratch for the call alone. */
extern "C" int
cuconv_filter_device_path (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvPath path, void *stream, CuconvStatus * st)
{
  Scratch sc;
  const int r = filter_frame (planes, n_planes, f, path, sc,
      (cudaStream_t) stream, st);

  scratch_free_async (sc, (cudaStream_t) stream);
  return r;
}

int
cuconv::filter_frame (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvPath path, Scratch & sc, cudaStream_t s,
    CuconvStatus * st)
{
  bool tuned = dispatch_chooses (path) && !filter_is_wide (*f)
      && f->combine != CUCONV_COMBINE_BILATERAL
      && f->combine != CUCONV_COMBINE_NLMEANS;
  int i;

  for (i = 0; i < n_planes; i++)
    tuned &= takes_tuned (planes[i], *f);
  /* a 4:2:0 frame through the tap kernel: one launch for all planes,
   * which saves the ramp and tail of the chroma launches; not a box that
   * runs as running sums on the first (luma) plane */
  if (n_planes >= 2 && n_planes <= 3 && tuned && !(f->box
          && box_sums_pay (cuconv_filter_taps_x (f, &planes[0])->radius,
              cuconv_filter_taps_y (f, &planes[0])->radius))) {
    FrameParams fp;
    cudaError_t e;

    memset (&fp, 0, sizeof (fp));
    fp.n = n_planes;
    for (i = 0; i < n_planes; i++)
      sep_params_init (fp.plane[i], planes[i], *f, 0, planes[i].height);
    e = launch_frame (fp, path, s);
    if (e != cudaErrorNotSupported)
      return e != cudaSuccess ? fail (st, "the GPU failed to filter a frame",
          e) : 0;
  }

  for (i = 0; i < n_planes; i++) {
    const cudaError_t e = launch_plane (planes[i], *f, 0, planes[i].height,
        sc, s, path);

    if (e != cudaSuccess)
      return fail (st, "the GPU failed to filter a frame", e);
  }
  const cudaError_t e = scratch_done (sc);

  return e != cudaSuccess ? fail (st, "cannot record a CUDA event", e) : 0;
}
