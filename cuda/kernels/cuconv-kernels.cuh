/* gst-cudaconvolve: the engine's internal declarations (CUDA C++): the
 * kernels' parameters, the launchers of each kernel family, the dispatch
 * and the status helper.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_KERNELS_CUH__
#define __CUCONV_KERNELS_CUH__

#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-buffer.cuh"
#include "cuconv-cuda.h"
#include "cuconv-paths.h"
#include "cuconv-dispatch.cuh"

namespace cuconv {

/* The widest taps the fused tile kernels (separable, general) carry in
 * their parameters; wider ones and the untruncated gaussian take the wide
 * paths (cuconv-wide.cu). */
#define CUCONV_TILE_MAX_RADIUS 64
#define CUCONV_TILE_MAX_TAPS (2 * CUCONV_TILE_MAX_RADIUS + 1)

/* The radii of the tuned separable kernel with fully unrolled
 * instantiations (equal in x and y, planar or 2-component interleaved);
 * every other radius takes the generic path.  A 4:2:0 frame whose luma
 * radius R is one of them runs in one launch: its chroma radius
 * (R + 1) / 2 is one of them too.  Each is instantiated in one of
 * cuconv-separable-r*.cu and one of cuconv-frame420-r*.cu: a radius added
 * here needs a line there (the link fails without it). */
#define CUCONV_FIXED_RADII(X) X (1) X (2) X (3) X (4) X (5) X (6) X (7) X (8) \
  X (12) X (16)

/* Zeroes a kernel's parameters p and fills what every path has: the
 * plane's pointers, pitches and size, and the band of rows
 * [row_begin, row_end) one launch covers. */
template < typename P > static inline void
band_params_init (P & p, const CuconvPlane & pl, int row_begin, int row_end)
{
  memset (&p, 0, sizeof (p));
  p.src = pl.src;
  p.dst = pl.dst;
  p.src_pitch = (size_t) pl.src_stride;
  p.dst_pitch = (size_t) pl.dst_stride;
  p.width = pl.width;
  p.height = pl.height;
  p.row_begin = row_begin;
  p.row_end = row_end;
}

/* The largest radius of CUCONV_FIXED_RADII. */
#define CUCONV_FIXED_MAX_RADIUS 16

/* One launch's work for the tuned separable kernels: the rows
 * [row_begin, row_end) of one plane of 8- or 16-bit samples.  Lives in the
 * kernel's parameter space, so the taps are in constant memory and each
 * launch carries its own.  A two-term filter (sobel, laplacian) takes the
 * unrolled radii only: both terms padded to one radius, the second term's
 * taps after the first's, from kx + SEP_TERM2 and ky + SEP_TERM2. */
#define SEP_TERM2 (2 * CUCONV_FIXED_MAX_RADIUS + 1)

/* The largest radius the streaming kernel takes, for the blur of one
 * component (two terms of one: 3; the sharpen, two components and the
 * 2-D matrix: 2; stream_max_radius, cuconv-stream.cu).  From radius 3 a
 * thread walks 4 samples across, so that its 2R + 1 rows of accumulators
 * fit the registers (with 8 across the tiles win at radius 3).  From
 * CUCONV_MMA_MIN_RADIUS the tensor cores take the blurs of large planes
 * (mma_pays). */
#define ST_MAX_RADIUS 4

struct SepParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch;
  size_t dst_pitch;
  int width;                    /* pixels: samples of one component */
  int ws;                       /* samples of a row: width * nc */
  int height;                   /* rows of the whole plane, for the border */
  int nc;                       /* interleaved components */
  int sb;                       /* bytes a sample: 1, or 2 (16-bit words) */
  int row_begin;
  int row_end;
  int rx, ry;
  int border;
  int src_aligned16;            /* src and src_pitch are multiples of 16 */
  int dst_aligned;              /* dst and dst_pitch: of 4 samples */
  int taps_nonneg;              /* all taps >= 0: a blur needs no clamp
                                 * (a streamed matrix: taps_bounded) */
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask;
  float maxv;                   /* mask as a float: the saturation */
  int combine;                  /* CuconvCombine: NONE (a blur), SHARPEN,
                                 * MAGNITUDE or ABS_SUM (two terms) */
  float amount;                 /* SHARPEN: in + amount * (in - v) */
  float kx[CUCONV_TILE_MAX_TAPS];
  float ky[CUCONV_TILE_MAX_TAPS];
  /* the streaming kernel's: each term's horizontal taps as 16-bit
   * integers, two to a word, its horizontal sums' bias and its vertical
   * sum's start (stream_prepare, cuconv-stream.cu) */
  uint32_t kq[2][ST_MAX_RADIUS + 1];
  int hbias[2];
  float vinit[2];
};

/* Fills what p says of rows [row_begin, row_end) of plane pl (device
 * pointers) read through border: everything but the taps, radii and
 * combine (cuconv-separable.cu). */
void sep_plane_init (SepParams & p, const CuconvPlane & pl,
    CuconvBorder border, int row_begin, int row_end);

/* Fills p for rows [row_begin, row_end) of plane pl (device pointers)
 * filtered by f: its first term's taps (a blur or sharpen), or both terms
 * padded to one radius (two terms, radius at most CUCONV_FIXED_MAX_RADIUS;
 * false when wider). */
bool sep_params_init (SepParams & p, const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end);

/* Copies taps t into dst, centred in 2r + 1 slots (r >= t.radius), the
 * rest zeros, which add exact zeros to the sums. */
void pad_taps (float *dst, const CuconvTaps & t, int r);

/* The planes of one frame, for a single launch (cuconv-separable.cu). */
struct FrameParams
{
  SepParams plane[3];
  int n;
  int first_block[4];           /* filled by the launcher */
  int tiles_x[3];
};

/* A 4:2:0 frame (Y + U + V, or Y + interleaved UV) in one launch
 * (cuconv-frame420.cu): whether the one launch takes fp's geometry and
 * radii (frame420_takes); the frame through the streaming kernel
 * (cudaErrorNotSupported where it does not take every plane), or through
 * the tuned tiles (cudaErrorNotSupported for a geometry or radius
 * frame420_takes refuses).  The dispatch chooses between them. */
bool frame420_takes (const FrameParams & fp);
cudaError_t launch_frame420_stream (const FrameParams & fp,
    cudaStream_t stream);
cudaError_t launch_frame420_tiles (const FrameParams & fp,
    cudaStream_t stream);

/* The streaming kernel (cuconv-stream.cu): whether it takes p (8-bit, 1
 * or 2 components, radius 1 to ST_MAX_RADIUS both ways, 16-byte aligned
 * rows, taps whose quantization moves no result by more than
 * ST_MAX_ERROR), q then holding p as its strips take it; whether p is a
 * whole plane of at least CUCONV_LARGE_PLANE_SAMPLES samples (fills) or
 * of fewer (small: StreamSmall's strips); and the launch,
 * cudaErrorNotSupported where it does not take p. */
bool stream_takes (const SepParams & p, SepParams & q);
bool stream_fills (const SepParams & p);
bool stream_small (const SepParams & p);
cudaError_t launch_stream (const SepParams & p, cudaStream_t stream);

/* The 2-D matrix m of rows [row_begin, row_end) of plane pl through the
 * streaming kernel (cuconv-stream.cu): one filtered 8-bit component,
 * 16-byte aligned rows, and unless forced a whole plane;
 * cudaErrorNotSupported otherwise. */
cudaError_t launch_stream_matrix (const CuconvPlane & pl,
    const CuconvMatrix & m, CuconvBorder border, int row_begin,
    int row_end, bool forced, cudaStream_t stream);

/* Whether the n taps are >= 0 and sum to at most 1 (plus float error),
 * as the kernels whose rounding has no clamp need (cuconv-dispatch.cu). */
bool taps_bounded (const float *w, int n);

/* The tensor-core blur (cuconv-mma.cu): whether it takes p (an 8-bit blur
 * of 1 or 2 components, taps >= 0, a device of compute capability 8.0 or
 * newer), and the launch; cudaErrorNotSupported where it does not take
 * p. */
bool mma_takes (const SepParams & p);
cudaError_t launch_mma (const SepParams & p, cudaStream_t stream);

/* Filters with the taps, 2r + 1 of them a direction (cuconv-separable.cu). */
cudaError_t launch_separable (const SepParams & p, cudaStream_t stream);

/* A box of p.rx, p.ry with running sums, whatever the radius; the taps
 * are not read (cuconv-box.cu).  cudaErrorNotSupported when the device has
 * too little shared memory for the radius. */
cudaError_t launch_box (const SepParams & p, cudaStream_t stream);

/* The general kernel (cuconv-general.cu): rows [row_begin, row_end) of
 * plane pl (device pointers) filtered as f says, for any depth, component
 * ops, terms and combine (f.n_terms 1 or 2).  16-bit planes must be 2-byte
 * aligned (pointers and strides); cudaErrorInvalidValue otherwise.
 * cudaErrorInvalidConfiguration when the device has too little shared
 * memory for the radii. */
cudaError_t launch_general (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, cudaStream_t stream);

/* Writes pl.fill (shifted) into every sample of rows [row_begin, row_end)
 * of pl (cuconv-general.cu). */
cudaError_t launch_fill (const CuconvPlane & pl, int row_begin, int row_end,
    cudaStream_t stream);

/* Rows a tile of the path that p takes covers: bands of a frame cut into
 * strips should be multiples of it so no tile straddles two bands. */
int separable_tile_rows (void);

/* One launch of the 2-D matrix kernel (cuconv-matrix.cu): the rows
 * [row_begin, row_end) of one plane, any depth and components.  The
 * (2r + 1)^2 taps, at most 31 x 31 floats, make it about 3.9 KiB of
 * kernel parameters. */
struct MatrixParams
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch;             /* bytes */
  size_t dst_pitch;
  int width;                    /* pixels: samples of one component */
  int n_comp;                   /* interleaved components, 1..4 */
  int height;                   /* rows of the whole plane, for the border */
  int row_begin;
  int row_end;
  int depth;                    /* 8 (one byte a sample), 10, 12 or 16 */
  int shift;                    /* the value's lowest bit in a 16-bit word */
  int border;
  int radius;                   /* 0..CUCONV_MAX_MATRIX_RADIUS */
  unsigned fill;                /* CUCONV_COMP_FILL's value (not shifted) */
  uint8_t op[CUCONV_MAX_COMP];     /* CuconvCompOp per component */
  int src_aligned;              /* src, src_pitch: multiples of 4 samples */
  int dst_aligned;              /* dst, dst_pitch: likewise */
  int u8;                       /* the dispatch's choice of matrix_u8
                                 * where it takes p (matrix_u8_takes) */
  float w[CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE];   /* row-major */
};

/* Fills p for rows [row_begin, row_end) of plane pl (device pointers)
 * with the matrix m. */
void matrix_params_init (MatrixParams & p, const CuconvPlane & pl,
    const CuconvMatrix & m, CuconvBorder border, int row_begin, int row_end);

/* Whether the 3x3 matrix's large tiles (matrix_u8) take p: one filtered
 * 8-bit component; and how many blocks its grid has for p. */
bool matrix_u8_takes (const MatrixParams & p);
long long matrix_u8_blocks (const MatrixParams & p);

/* v = sum_j sum_i m[j][i] * in (x + i, y + j), rows outer, then
 * rounded, saturated and shifted; components copied or filled as p.op
 * says.  cudaErrorInvalidValue for a radius or n_comp out of range, or
 * a 16-bit plane that is not 2-byte aligned (pointers and pitches). */
cudaError_t launch_matrix (const MatrixParams & p, cudaStream_t stream);

/* The bilateral (cuconv-bilateral.cu) ------------------------------------ */

/* Rows [row_begin, row_end) of plane pl (device pointers) filtered by the
 * bilateral f (f.combine CUCONV_COMBINE_BILATERAL), reading the whole
 * plane through the border; components copied or filled as pl.op says.
 * Any alignment.  cudaErrorInvalidValue for a radius past
 * CUCONV_MAX_BILATERAL_RADIUS or n_comp out of range. */
cudaError_t launch_bilateral (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, cudaStream_t stream);

/* Non-local means (cuconv-nlmeans.cu) ----------------------------------- */

/* Rows [row_begin, row_end) of plane pl (device pointers) filtered by the
 * non-local means f (f.combine CUCONV_COMBINE_NLMEANS), reading the whole
 * plane through the border; components copied or filled as pl.op says.
 * Any alignment.  sums: the kernel by sums, else the direct one. */
cudaError_t launch_nlmeans (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, bool sums, cudaStream_t stream);

/* Pixelate (cuconv-pixelate.cu) ------------------------------------------ */

/* Plane pl (device pointers, whole) made a mosaic by f (f.combine
 * CUCONV_COMBINE_PIXELATE): each block's mean, exact; components copied
 * or filled as pl.op says.  Any alignment. */
cudaError_t launch_pixelate (const CuconvPlane & pl, const CuconvFilter & f,
    cudaStream_t stream);

/* Scratch (cuconv-scratch.cu) ------------------------------------------ */

/* Device memory for a frame's intermediates, owned by an engine and kept
 * between frames: it only grows (stream-ordered), so that a frame's work
 * neither allocates nor waits on the host once it has grown.  A frame's
 * launches on one stream use it one after the other; a frame on another
 * stream waits on the GPU for the last one that used it.  Value-initialise
 * (Scratch ()). */
struct Scratch
{
  DeviceBuffer mem;
  /* the frame that took it last: its stream, set when it takes the
   * scratch, and the event recorded after its launches */
  GpuUse use;
  bool pending = false;         /* taken by a frame not yet done */
};

/* At least bytes of s for launches on stream, in *ptr. */
cudaError_t scratch_take (Scratch & s, size_t bytes, cudaStream_t stream,
    void **ptr);

/* After a frame's launches: marks where the GPU is done with s. */
cudaError_t scratch_done (Scratch & s);

/* Frees s once the GPU is done with it (an engine's teardown; waits). */
void scratch_free (Scratch & s);

/* Frees s after the work queued on stream (a one-call scratch). */
void scratch_free_async (Scratch & s, cudaStream_t stream);

/* Canny (cuconv-canny.cu) ------------------------------------------------- */

/* Canny's edges of the whole plane pl (f.combine CUCONV_COMBINE_CANNY),
 * bit for bit cuconv_canny_plane (), with 22 bytes a pixel of sc. */
cudaError_t launch_canny (const CuconvPlane & pl, const CuconvFilter & f,
    Scratch & sc, cudaStream_t stream);

/* Wide filters (cuconv-wide.cu) ------------------------------------------ */

/* Whether f reaches beyond the fused tiles, so that it takes whole planes:
 * any of its taps wider than CUCONV_TILE_MAX_RADIUS, or untruncated, or
 * pixelate's blocks.  (The bilateral is not a sum of taps: its own
 * kernel, launch_bilateral, whatever its window.) */
bool filter_is_wide (const CuconvFilter & f);

/* Filters all rows of plane pl (device pointers) with a wide filter f:
 * the untruncated gaussian by recursive filtering (cuconv-recursive.cu),
 * any other by passes through global memory (cuconv-global.cu), their
 * intermediates in sc. */
cudaError_t launch_wide (const CuconvPlane & pl, const CuconvFilter & f,
    Scratch & sc, cudaStream_t stream);

/* The untruncated gaussian (gaussian or sharpen with a taps.untruncated
 * direction; the other direction untruncated too, or the one tap [1]) on
 * a whole plane, any depth and components (cuconv-recursive.cu). */
cudaError_t launch_recursive (const CuconvPlane & pl, const CuconvFilter & f,
    Scratch & sc, cudaStream_t stream);

/* Any filter of one or two separable terms with explicit taps (none
 * untruncated) of radius up to CUCONV_MAX_RADIUS, every kernel type, depth
 * and component op: rows [row_begin, row_end) of plane pl (device
 * pointers), in separate horizontal and vertical passes through global
 * memory (cuconv-global.cu), or the box's running sums (launch_box_sums),
 * as the dispatch chooses (cuconv-dispatch.cu).  Its shared memory does
 * not depend on the radius and fits every device: the fallback of the
 * fused paths.  Reads the rows the band reaches through the border; its
 * intermediates in sc.  cudaErrorInvalidValue for a filter it cannot
 * take. */
cudaError_t launch_global (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream);

/* Whether the global passes take f on rows [row_begin, row_end) of pl,
 * and the passes themselves on a non-empty band it takes
 * (cuconv-global.cu). */
bool global_args_valid (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end);
cudaError_t launch_global_taps (const CuconvPlane & pl,
    const CuconvFilter & f, int row_begin, int row_end, Scratch & sc,
    cudaStream_t stream);

/* The plane rows [*lo, *hi) that rows [row_begin, row_end) of a plane of
 * height rows read through border with a vertical radius ry: the band and
 * its apron clipped to the plane, and whatever rows above or below it map
 * to (cuconv-global.cu). */
void rows_read (CuconvBorder border, int height, int row_begin, int row_end,
    int ry, int *lo, int *hi);

/* The float plane of the two-pass paths (the global passes, the
 * register-window passes) for rows [row_begin, row_end) of a plane of
 * height rows: p.h_lo, p.h_rows (rows_read with p.border and p.ry),
 * p.h_pitch (p.ws floats rounded up to 128-byte rows) and p.h_term (one
 * term's plane, in floats). */
template < typename P > static inline void
h_plane_init (P & p, int height, int row_begin, int row_end)
{
  int lo, hi;

  rows_read ((CuconvBorder) p.border, height, row_begin, row_end, p.ry, &lo,
      &hi);
  p.h_lo = lo;
  p.h_rows = hi - lo;
  p.h_pitch = ((size_t) p.ws + 31) / 32 * 32;
  p.h_term = (size_t) p.h_rows * p.h_pitch;
}

/* Whether the register-window passes (cuconv-window.cu) take f on plane
 * pl: one or two components, each filtered, samples of 1 or 2 bytes, a
 * blur or sharpen of one term or a magnitude or sum of two, explicit taps
 * of radius up to CUCONV_TILE_MAX_RADIUS. */
bool window_takes (const CuconvPlane & pl, const CuconvFilter & f);

/* Rows [row_begin, row_end) of pl (device pointers) through the
 * register-window passes, their float plane in sc.
 * cudaErrorNotSupported where window_takes is false, or where the
 * device's shared memory is too small for the vertical pass. */
cudaError_t launch_window (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream);

/* The box (f.box, with the box's taps) of a whole plane of samples of up
 * to 10 bits by exact running sums through global memory, any radius up
 * to CUCONV_MAX_RADIUS, any components and ops (cuconv-box-sums.cu).
 * cudaErrorNotSupported for any other filter or plane, a band of rows, or
 * rows wider than a block holds (the caller takes the taps). */
cudaError_t launch_box_sums (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream);

/* The dispatch (cuconv-dispatch.cu) -------------------------------------- */

/* Whether every component of pl has op. */
bool all_ops (const CuconvPlane & pl, int op);

/* The one place that maps a plane and a filter to a GPU path
 * (docs/design.md): filters rows [row_begin, row_end) of pl (device
 * pointers) on stream.  A fused path that refuses the radius for lack of
 * shared memory falls back to launch_global.  path other than
 * CUCONV_PATH_AUTO forces that path where it applies (cuconv-paths.h). */
cudaError_t launch_plane (const CuconvPlane & pl, const CuconvFilter & f,
    int row_begin, int row_end, Scratch & sc, cudaStream_t stream,
    CuconvPath path = CUCONV_PATH_AUTO);

/* cuconv_filter_device_path () with the engine's scratch sc. */
int filter_frame (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, CuconvPath path, Scratch & sc,
    cudaStream_t stream, CuconvStatus * st);

/* Status (cuconv-host.cu) ------------------------------------------------ */

/* Clears the runtime's last error, fills st (when not NULL) with e and a
 * sentence that starts with what, and returns e as the entry points'
 * non-zero result. */
int fail (CuconvStatus * st, const char *what, cudaError_t e);

}                               /* namespace cuconv */

#endif /* __CUCONV_KERNELS_CUH__ */
