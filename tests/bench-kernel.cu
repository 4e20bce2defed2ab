/* gst-cudaconvolve: kernel benchmark, no GStreamer.
 *
 * Times cuconv_filter_device (), the engine's entry point with its
 * dispatch, on one plane at 3840x2160 and 1920x1080 (clamp border): 8-bit
 * gaussian and box at radius 1..16, sharpen, sobel and laplacian, custom
 * 3x3, 5x5, 7x7 and 31x31 matrices (random, non-separable, normalised),
 * and 16-bit gaussians at 3840x2160.  When built with HAVE_NPP it times
 * NPP's same operation on the same planes where NPP has one: the gaussians with
 * nppiFilterGaussAdvancedBorder_{8u,16u}_C1R_Ctx (our taps), the box with
 * nppiFilterBoxBorder_8u_C1R_Ctx, the matrices with
 * nppiFilterBorder32f_8u_C1R_Ctx (our taps, reversed: NPP convolves),
 * all with a replicate border.  The two ceilings of the roofline are
 * measured in the same run:
 *
 *   copy  = device-to-device cudaMemcpy bandwidth, bytes read + written
 *   fma   = FP32 FMA/s of a kernel of independent FMA chains (1 FMA = 1 op)
 *   roofline = min (copy / bytes a pixel, fma / FMAs a pixel)
 *
 * with the bytes and FMAs of each row's kernel as row_cost () counts them
 * (a separable pass reads and writes each pixel once and does 2r + 1 FMA
 * per direction).  Each time is the median over many batches of
 * back-to-back calls (a CUDA graph when the calls can be captured), timed
 * with CUDA events after a warm-up, rotating over enough input and output
 * planes that they add up to more than twice the L2.  Prints a markdown
 * table.
 *
 * Then whole 4:2:0 frames, I420, NV12, P010 and I420_10LE (one launch
 * against a launch a plane), and regions of I420 frames (1, 8 and 64
 * face-sized rectangles and 1024 small ones, region=roi: a fixed blur,
 * feathered ellipses, each region its own sigma or mosaic) against the
 * whole frame.
 *
 * Then (3840x2160 only) the wide filters: the box at radius 256 and 1024
 * (running sums), the gaussian at explicit radii 128 and 512 (the global
 * path), and the fused gaussian and sobel against the global path forced
 * (the crossover); --wide times those rows alone.
 *
 * Then the bilateral on 8-bit planes at 1920x1080 and 3840x2160, radius
 * 2, 4 and 7 (the element's default sigma, sigma-range 25), against
 * nppiFilterBilateralGaussBorder_8u_C1R_Ctx; and the temporal denoise of
 * whole NV12 frames (and P010 at 3840x2160), every plane in one call, in
 * GB/s against the device copy ceiling; and non-local means of whole NV12
 * frames, search windows of 3x3 to 15x15.
 *
 *   bench-kernel [--reps=N] [--tiled | --mma | --stream] [--regions |
 *                --wide | --frames | --bilateral | --temporal |
 *                --nlmeans | --only=NAME[:R]]
 *
 * --only times the table rows of that name (and radius) alone, for
 * profiling one kernel; --regions, --wide, --frames, --bilateral,
 * --temporal and --nlmeans those parts alone.  --tiled takes the fused tile kernels where the
 * dispatch would take the streaming kernel or the tensor-core blur
 * (CUCONV_PATH_TILED), in the table and the whole frames: the two compared
 * in one run.  --mma takes the tensor-core blur wherever it takes a plane
 * (CUCONV_PATH_MMA), --stream the streaming kernel (CUCONV_PATH_STREAM).
 *
 * Exits 77 without a usable CUDA device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>
#ifdef HAVE_NPP
#include <nppi.h>
#endif

#include "cuconv-motion.h"
#include "cuconv.h"
#include "cuconv-cuda.h"
#include "cuconv-paths.h"

#define EXIT_SKIP 77

#define CHECK(call) \
  do { \
    cudaError_t _e = (call); \
    if (_e != cudaSuccess) { \
      fprintf (stderr, "bench-kernel: %s:%d: %s: %s\n", __FILE__, __LINE__, \
          #call, cudaGetErrorString (_e)); \
      exit (1); \
    } \
  } while (0)

static int reps = 31;
/* Time plain launches, never a CUDA graph: the region path uploads its
 * rectangles and waits on its own event, which a capture refuses, and the
 * element pays every launch too. */
static bool no_graph = false;

/* ---------------------------------------------------------------------- */
/* Timing */

/* One call of the code under test on buffer pair i; false on error. */
typedef bool (*LaunchFn) (void *ctx, int i, cudaStream_t stream);

static float
median (std::vector < float >v)
{
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

/* Median time of one call, in microseconds: reps batches of `batch' calls,
 * each batch enqueued right behind an untimed one so the GPU never idles
 * between the events and the first call.  As a CUDA graph when the calls
 * can be captured (no launch overhead between calls), else as plain
 * launches; *graph says which. */
static float
time_calls (LaunchFn fn, void *ctx, int batch, cudaStream_t stream,
    bool *graph)
{
  cudaGraph_t g = NULL;
  cudaGraphExec_t ge = NULL;
  cudaEvent_t e0, e1;
  std::vector < float >t;
  int i, r;

  /* warm-up outside any capture: lazy module loading, smem attributes */
  for (i = 0; i < batch; i++)
    if (!fn (ctx, i, stream))
      return -1.0f;
  CHECK (cudaStreamSynchronize (stream));

  *graph = false;
  if (!no_graph && cudaStreamBeginCapture (stream,
          cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    bool ok = true;

    for (i = 0; i < batch && ok; i++)
      ok = fn (ctx, i, stream);
    if (cudaStreamEndCapture (stream, &g) == cudaSuccess && ok && g &&
        cudaGraphInstantiate (&ge, g, 0) == cudaSuccess)
      *graph = true;
    (void) cudaGetLastError ();
  }

  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (r = 0; r < reps + 2; r++) {
    float ms;

    for (i = 0; i < (*graph ? 1 : batch); i++) {
      if (*graph)
        CHECK (cudaGraphLaunch (ge, stream));
      else if (!fn (ctx, i, stream))
        return -1.0f;
    }
    CHECK (cudaEventRecord (e0, stream));
    for (i = 0; i < (*graph ? 1 : batch); i++) {
      if (*graph)
        CHECK (cudaGraphLaunch (ge, stream));
      else if (!fn (ctx, i, stream))
        return -1.0f;
    }
    CHECK (cudaEventRecord (e1, stream));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r >= 2)                 /* two more warm-up rounds */
      t.push_back (ms * 1000.0f / batch);
  }
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  if (ge)
    cudaGraphExecDestroy (ge);
  if (g)
    cudaGraphDestroy (g);
  return median (t);
}

/* ---------------------------------------------------------------------- */
/* Ceilings */

/* Median time of op () (which enqueues work on stream), in ms, over 10
 * runs after 2 warm-up runs. */
template < typename F > static float
median_ms (cudaStream_t stream, F op)
{
  cudaEvent_t e0, e1;
  std::vector < float >t;

  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (int r = 0; r < 12; r++) {
    float ms;

    CHECK (cudaEventRecord (e0, stream));
    op ();
    CHECK (cudaEventRecord (e1, stream));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r >= 2)
      t.push_back (ms);
  }
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  return median (t);
}

static double
measure_copy_bandwidth (cudaStream_t stream, size_t * bytes_out)
{
  size_t free_b, total_b, bytes = (size_t) 1 << 30;
  void *a, *b;
  float ms;

  CHECK (cudaMemGetInfo (&free_b, &total_b));
  while (bytes > free_b / 4)
    bytes /= 2;
  CHECK (cudaMalloc (&a, bytes));
  CHECK (cudaMalloc (&b, bytes));
  CHECK (cudaMemset (a, 1, bytes));
  ms = median_ms (stream,[&] {
        CHECK (cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice,
                stream));
      });
  CHECK (cudaFree (a));
  CHECK (cudaFree (b));
  *bytes_out = bytes;
  /* read + written */
  return 2.0 * bytes / (ms * 1e-3);
}

#define FMA_CHAINS 8
#define FMA_UNROLL 16

/* FMA_CHAINS independent chains per thread; the result is stored only when
 * it takes an impossible value, so the compiler keeps every FMA. */
__global__ void
fma_kernel (float *out, int iters, float a, float b)
{
  float x[FMA_CHAINS];
  int i, j, k;

#pragma unroll
  for (j = 0; j < FMA_CHAINS; j++)
    x[j] = threadIdx.x * 1e-3f + j;
  for (i = 0; i < iters; i++) {
#pragma unroll
    for (k = 0; k < FMA_UNROLL; k++) {
#pragma unroll
      for (j = 0; j < FMA_CHAINS; j++)
        x[j] = fmaf (x[j], a, b);
    }
  }
  float s = 0.0f;
#pragma unroll
  for (j = 0; j < FMA_CHAINS; j++)
    s += x[j];
  if (s == -1.0f)
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static double
measure_fma_rate (const cudaDeviceProp & prop, cudaStream_t stream)
{
  const int threads = 256, iters = 4096;
  int blocks_per_sm = 0, blocks;
  float *out, ms;

  CHECK (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&blocks_per_sm,
          fma_kernel, threads, 0));
  /* several waves, so a partial last wave costs little */
  blocks = prop.multiProcessorCount * std::max (blocks_per_sm, 1) * 4;
  CHECK (cudaMalloc (&out, sizeof (float) * blocks * threads));
  ms = median_ms (stream,[&] {
        fma_kernel <<< blocks, threads, 0, stream >>> (out, iters, 0.999f,
            1e-3f);
        CHECK (cudaGetLastError ());
      });
  CHECK (cudaFree (out));
  return (double) blocks * threads * iters * FMA_UNROLL * FMA_CHAINS /
      (ms * 1e-3);
}

/* ---------------------------------------------------------------------- */
/* The code under test */

/* A row of the table: what cuconv_filter_init is given. */
typedef struct
{
  const char *name;
  CuconvKernel kernel;
  int radius;
  int matrix_side;              /* custom: a random side x side matrix */
  int depth;                    /* of the plane: 8 or 16 */
  int big_only;                 /* 3840x2160 only */
  double sigma;                 /* with radius 0 above 21.33: untruncated */
} Row;

static const Row table_rows[] = {
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 1, 0, 8, 0, 0.0},
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 2, 0, 8, 0, 0.0},
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 3, 0, 8, 0, 0.0},
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 4, 0, 8, 0, 0.0},
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 8, 0, 8, 0, 0.0},
  {"gaussian", CUCONV_KERNEL_GAUSSIAN, 16, 0, 8, 0, 0.0},
  {"box", CUCONV_KERNEL_BOX, 1, 0, 8, 0, 0.0},
  {"box", CUCONV_KERNEL_BOX, 2, 0, 8, 0, 0.0},
  {"box", CUCONV_KERNEL_BOX, 4, 0, 8, 0, 0.0},
  {"box", CUCONV_KERNEL_BOX, 8, 0, 8, 0, 0.0},
  {"box", CUCONV_KERNEL_BOX, 16, 0, 8, 0, 0.0},
  {"sharpen", CUCONV_KERNEL_SHARPEN, 2, 0, 8, 0, 0.0},
  {"sharpen", CUCONV_KERNEL_SHARPEN, 4, 0, 8, 0, 0.0},
  {"sobel", CUCONV_KERNEL_SOBEL, 1, 0, 8, 0, 0.0},
  {"sobel", CUCONV_KERNEL_SOBEL, 3, 0, 8, 0, 0.0},
  {"laplacian", CUCONV_KERNEL_LAPLACIAN, 1, 0, 8, 0, 0.0},
  {"laplacian", CUCONV_KERNEL_LAPLACIAN, 3, 0, 8, 0, 0.0},
  {"custom 3x3", CUCONV_KERNEL_CUSTOM, 0, 3, 8, 0, 0.0},
  {"custom 5x5", CUCONV_KERNEL_CUSTOM, 0, 5, 8, 0, 0.0},
  {"custom 7x7", CUCONV_KERNEL_CUSTOM, 0, 7, 8, 0, 0.0},
  {"custom 31x31", CUCONV_KERNEL_CUSTOM, 0, 31, 8, 0, 0.0},
  {"gaussian 16-bit", CUCONV_KERNEL_GAUSSIAN, 2, 0, 16, 1, 0.0},
  {"gaussian 16-bit", CUCONV_KERNEL_GAUSSIAN, 4, 0, 16, 1, 0.0},
};

/* --tiled, --mma, --stream: the path of the table rows and whole
 * frames. */
static CuconvPath base_path = CUCONV_PATH_AUTO;

/* --only: the table rows of this name (and radius, when only_radius >= 0)
 * alone. */
static const char *only_name = NULL;
static int only_radius = -1;

static bool
row_selected (const Row * row)
{
  return !only_name || (strcmp (row->name, only_name) == 0
      && (only_radius < 0 || row->radius == only_radius
          || row->matrix_side / 2 == only_radius));
}

/* The wide filters' rows (docs/design.md, "Wide filters through global
 * memory" and "Wide filters in register windows"), at 3840x2160 (and
 * 1920x1080 where big_only is 0): the box's running sums, explicit
 * gaussian radii through the global path, and the dispatch's choice
 * against the global path and the register-window passes forced, for the
 * crossover. */
typedef struct
{
  Row row;
  CuconvPath path;              /* forced, or the dispatch's choice */
} WideRow;

static const WideRow wide_rows[] = {
  {{"box", CUCONV_KERNEL_BOX, 256, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"box", CUCONV_KERNEL_BOX, 1024, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 128, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 512, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 17, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 17, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 17, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 24, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 24, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 24, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 32, 0, 8, 0, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 32, 0, 8, 0, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 32, 0, 8, 0, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian 16-bit", CUCONV_KERNEL_GAUSSIAN, 32, 0, 16, 1, 0.0},
      CUCONV_PATH_AUTO},
  {{"gaussian 16-bit, global path", CUCONV_KERNEL_GAUSSIAN, 32, 0, 16, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian 16-bit, window passes", CUCONV_KERNEL_GAUSSIAN, 32, 0, 16, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 40, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 40, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 40, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 48, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 48, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 48, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 56, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 56, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 56, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"gaussian", CUCONV_KERNEL_GAUSSIAN, 64, 0, 8, 0, 0.0}, CUCONV_PATH_AUTO},
  {{"gaussian, global path", CUCONV_KERNEL_GAUSSIAN, 64, 0, 8, 0, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"gaussian, window passes", CUCONV_KERNEL_GAUSSIAN, 64, 0, 8, 0, 0.0},
      CUCONV_PATH_WINDOW},
  {{"sobel", CUCONV_KERNEL_SOBEL, 16, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"sobel, global path", CUCONV_KERNEL_SOBEL, 16, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"sobel, window passes", CUCONV_KERNEL_SOBEL, 16, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  {{"sobel", CUCONV_KERNEL_SOBEL, 48, 0, 8, 1, 0.0}, CUCONV_PATH_AUTO},
  {{"sobel, global path", CUCONV_KERNEL_SOBEL, 48, 0, 8, 1, 0.0},
      CUCONV_PATH_GLOBAL},
  {{"sobel, window passes", CUCONV_KERNEL_SOBEL, 48, 0, 8, 1, 0.0},
      CUCONV_PATH_WINDOW},
  /* the untruncated gaussian (radius 0): the recursive path */
  {{"gaussian sigma=32", CUCONV_KERNEL_GAUSSIAN, 0, 0, 8, 1, 32.0},
      CUCONV_PATH_AUTO},
  {{"gaussian sigma=64", CUCONV_KERNEL_GAUSSIAN, 0, 0, 8, 1, 64.0},
      CUCONV_PATH_AUTO},
  {{"gaussian sigma=128", CUCONV_KERNEL_GAUSSIAN, 0, 0, 8, 1, 128.0},
      CUCONV_PATH_AUTO},
  {{"gaussian sigma=256", CUCONV_KERNEL_GAUSSIAN, 0, 0, 8, 1, 256.0},
      CUCONV_PATH_AUTO},
  {{"gaussian 16-bit sigma=64", CUCONV_KERNEL_GAUSSIAN, 0, 0, 16, 1, 64.0},
      CUCONV_PATH_AUTO},
};

#define N_WIDE_ROWS ((int) (sizeof (wide_rows) / sizeof (wide_rows[0])))

/* Whether a row runs at size z (0: 3840x2160, 1: 1920x1080) and
 * depth. */
static bool
row_at (const Row * row, int z, int depth)
{
  return row->depth == depth && (z == 0 || !row->big_only);
}

static bool
wide_rows_at (int z, int depth)
{
  for (int k = 0; k < N_WIDE_ROWS; k++)
    if (row_at (&wide_rows[k].row, z, depth))
      return true;
  return false;
}

/* The settings of a row.  Its matrix is random (so not separable), the
 * same in every run, and normalised to sum 1 by cuconv_filter_init. */
static void
row_settings (const Row * row, CuconvSettings * s)
{
  unsigned seed = 2024u + row->matrix_side;

  memset (s, 0, sizeof (*s));
  s->kernel = row->kernel;
  s->border = CUCONV_BORDER_CLAMP;
  s->radius = row->radius;
  s->sigma = row->sigma;
  s->amount = 1.0;
  s->normalize = 1;
  s->matrix_side = row->matrix_side;
  for (int i = 0; i < row->matrix_side * row->matrix_side; i++) {
    seed = seed * 1103515245u + 12345u;
    s->matrix[i] = 0.05 + ((seed >> 16) % 1000) / 1000.0;
  }
}

/* The least a pixel costs: bytes read plus written, and FP32 FMAs as the
 * filter's definition counts them (1 FMA = 1 operation):
 *   2-D matrix of radius r:    (2r + 1)^2
 *   each separable term:       (2rx + 1) + (2ry + 1), horizontal + vertical
 *   combine:                   sharpen 2 (in - t0, then one FMA),
 *                              magnitude 3 (t0^2 + t1^2 as a multiply and
 *                              an FMA, the square root as 1), |sum| 1
 * Zero taps are counted (Sobel's centre): the cost of the definition, not
 * of a particular kernel's shortcut. */
static void
row_cost (const CuconvFilter * f, int depth, double *bytes, double *fmas)
{
  *bytes = 2.0 * (depth > 8 ? 2 : 1);
  if (f->n_terms == 0) {
    const double n = 2 * f->m.radius + 1;
    *fmas = n * n;
    return;
  }
  switch (f->combine) {
    case CUCONV_COMBINE_SHARPEN:
      *fmas = 2;
      break;
    case CUCONV_COMBINE_MAGNITUDE:
      *fmas = 3;
      break;
    case CUCONV_COMBINE_ABS_SUM:
      *fmas = 1;
      break;
    case CUCONV_COMBINE_NONE:
    default:
      *fmas = 0;
      break;
  }
  *fmas += 2 * f->x[0].radius + 1 + 2 * f->y[0].radius + 1;
  if (f->n_terms == 2)
    *fmas += 2 * f->x2[0].radius + 1 + 2 * f->y2[0].radius + 1;
}

/* NPP's same operation, where it has one. */
typedef enum
{
  NPP_OP_NONE,
  NPP_OP_GAUSS,                 /* our taps, 8u or 16u */
  NPP_OP_BOX,
  NPP_OP_MATRIX,                /* our matrix, 8u */
  NPP_OP_BILATERAL,             /* our radius, sigma and sigma-range, 8u */
} NppOp;

static NppOp
row_npp_op (const Row * row)
{
  switch (row->kernel) {
    case CUCONV_KERNEL_GAUSSIAN:
      return NPP_OP_GAUSS;
    case CUCONV_KERNEL_BOX:
      return row->depth == 8 ? NPP_OP_BOX : NPP_OP_NONE;
    case CUCONV_KERNEL_CUSTOM:
      return row->matrix_side > 0 && row->depth == 8 ? NPP_OP_MATRIX :
          NPP_OP_NONE;
    default:
      /* NPP's sharpen is one fixed 3x3 mask, its Sobel gives the signed
       * gradients (the magnitude needs another pass), its Laplace the
       * 8-neighbour mask without the absolute value */
      return NPP_OP_NONE;
  }
}

typedef struct
{
  int w, h, n;                  /* plane size, buffer pairs */
  int depth, bytes;             /* of a sample */
  size_t pitch;
  uint8_t *src, *dst;           /* n planes each, pitch * h apart */
  CuconvFilter filter;
  CuconvPath path;
  int err;                      /* of the last failed call */
  NppOp npp_op;
  /* the wide rows: NPP's time grows with its mask's area (its box took
   * 4.9 ms a call at r = 16, so about a second at r = 256, and the full
   * run never got past that row) */
  bool no_npp;
#ifdef HAVE_NPP
  NppStreamContext npp;
  Npp32f *d_taps;
  int n_taps;
#endif
} Bench;

/* One plane of one component, unsubsampled, in device memory. */
static CuconvPlane
gray_plane (const uint8_t * src, uint8_t * dst, size_t pitch, int w, int h,
    int depth)
{
  CuconvPlane p;

  memset (&p, 0, sizeof (p));
  p.src = src;
  p.dst = dst;
  p.src_stride = p.dst_stride = (ptrdiff_t) pitch;
  p.width = w;
  p.height = h;
  p.n_comp = 1;
  p.sub_x = p.sub_y = 1;
  p.depth = depth;
  return p;
}

static bool
launch_ours (void *ctx, int i, cudaStream_t stream)
{
  Bench *b = (Bench *) ctx;
  size_t off = (size_t) (i % b->n) * b->pitch * b->h;
  const CuconvPlane p = gray_plane (b->src + off, b->dst + off, b->pitch,
      b->w, b->h, b->depth);
  int err;

  err = cuconv_filter_device_path (&p, 1, &b->filter, b->path, stream, NULL);
  if (err != 0)
    b->err = err;
  return err == 0;
}

/* A 4:2:0 layout of --frames: three planes, or luma and interleaved
 * chroma, of 8-bit samples or 16-bit words of 10 bits (shift: P010's are
 * in the high bits). */
typedef struct
{
  const char *name;
  int planes, sample_bytes, shift;
} FrameFormat;

static const FrameFormat frame_formats[] = {
  {"I420", 3, 1, 0},
  {"NV12", 2, 1, 0},
  {"P010", 2, 2, 6},
  {"I420_10LE", 3, 2, 0},
};

/* The planes of frame i of frames laid one after the other from src and
 * dst: fmt at w x h, tight rows, luma then the 2x2-subsampled chroma.
 * Returns the number of planes. */
static int
frame_planes (CuconvPlane * p, const FrameFormat & fmt, int w, int h,
    const uint8_t * src, uint8_t * dst, int i)
{
  const int sb = fmt.sample_bytes, n = fmt.planes;
  const size_t ysz = (size_t) w * h * sb, csz = ysz / 4;
  const size_t off = (size_t) i * (ysz + 2 * csz);

  memset (p, 0, sizeof (CuconvPlane) * n);
  for (int k = 0; k < n; k++) {
    const size_t poff = k == 0 ? 0 : ysz + (k - 1) * csz;

    p[k].src = src + off + poff;
    p[k].dst = dst + off + poff;
    p[k].width = k == 0 ? w : w / 2;
    p[k].height = k == 0 ? h : h / 2;
    p[k].n_comp = k > 0 && n == 2 ? 2 : 1;
    p[k].src_stride = p[k].dst_stride = p[k].width * p[k].n_comp * sb;
    p[k].sub_x = p[k].sub_y = k == 0 ? 1 : 2;
    p[k].depth = sb == 2 ? 10 : 8;
    p[k].shift = fmt.shift;
  }
  return n;
}

/* A 4:2:0 frame in device memory: frame i of the rotation, all planes in
 * one call or a call a plane. */
typedef struct
{
  int w, h, n, per_plane;
  const FrameFormat *format;
  uint8_t *src, *dst;
  CuconvFilter filter;
} FrameBench;

static bool
launch_frame (void *ctx, int i, cudaStream_t stream)
{
  FrameBench *b = (FrameBench *) ctx;
  CuconvPlane p[3];
  const int n = frame_planes (p, *b->format, b->w, b->h, b->src, b->dst,
      i % b->n);
  int k;

  if (!b->per_plane)
    return cuconv_filter_device_path (p, n, &b->filter, base_path, stream,
        NULL) == 0;
  for (k = 0; k < n; k++)
    if (cuconv_filter_device_path (&p[k], 1, &b->filter, base_path, stream,
            NULL) != 0)
      return false;
  return true;
}

/* Whole frames: one launch for all planes against a launch a plane. */
static int
bench_frames (const cudaDeviceProp & prop, cudaStream_t stream)
{
  static const int sizes[][2] = { {3840, 2160}, {1920, 1080} };
  static const int radii[] = { 1, 2, 3, 4, 8 };

  printf ("\n### whole 4:2:0 frames in device memory\n\n");
  printf ("- gaussian, border clamp, tight strides; the same frames through "
      "one cuconv_filter_device () call with all planes (one launch) and "
      "through a call a plane\n\n");
  printf ("| format | size | r | one launch µs | a launch per plane µs | "
      "saved |\n|---|---|---:|---:|---:|---:|\n");
  for (const FrameFormat & fmt : frame_formats) {
    for (int z = 0; z < 2; z++) {
      FrameBench b;
      const size_t frame = (size_t) sizes[z][0] * sizes[z][1] * 3 / 2 *
          fmt.sample_bytes;

      memset (&b, 0, sizeof (b));
      b.w = sizes[z][0];
      b.h = sizes[z][1];
      b.format = &fmt;
      b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * frame)) + 1);
      CHECK (cudaMalloc (&b.src, frame * b.n));
      CHECK (cudaMalloc (&b.dst, frame * b.n));
      CHECK (cudaMemset (b.src, 0x5a, frame * b.n));
      for (int ri = 0; ri < (int) (sizeof (radii) / sizeof (radii[0])); ri++) {
        CuconvSettings st;
        float us[2];
        bool graph;

        memset (&st, 0, sizeof (st));
        st.kernel = CUCONV_KERNEL_GAUSSIAN;
        st.border = CUCONV_BORDER_CLAMP;
        st.radius = radii[ri];
        cuconv_filter_init (&b.filter, &st);
        for (b.per_plane = 0; b.per_plane < 2; b.per_plane++) {
          us[b.per_plane] = time_calls (launch_frame, &b, std::max (b.n, 24),
              stream, &graph);
          if (us[b.per_plane] < 0) {
            printf ("bench-kernel: a frame failed: %s\n",
                cudaGetErrorString (cudaGetLastError ()));
            return 1;
          }
        }
        printf ("| %s | %dx%d | %d | %.1f | %.1f | %.0f%% |\n",
            fmt.name, b.w, b.h, radii[ri], us[0], us[1],
            100.0 * (us[1] - us[0]) / us[1]);
      }
      CHECK (cudaFree (b.src));
      CHECK (cudaFree (b.dst));
    }
  }
  return 0;
}


/* How a region bench row weighs and filters its regions. */
typedef enum
{
  REGIONS_HARD, REGIONS_SOFT, REGIONS_SIGMA, REGIONS_MOSAIC
} RegionMode;

/* A region's own filter: its gaussian, or its mosaic on its box's grid. */
static void
bench_gaussian (CuconvFilter * f, double sigma, const CuconvBox *, void *)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_GAUSSIAN;
  s.sigma = s.sigma_y = sigma;
  cuconv_filter_init (f, &s);
}

static void
bench_mosaic (CuconvFilter * f, double side, const CuconvBox * box, void *)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_PIXELATE;
  s.block_size = (unsigned) side;
  cuconv_filter_init (f, &s);
  for (int i = 0; i < CUCONV_MAX_SUBSAMPLE; i++) {
    f->block_x0[i] = box->x0;
    f->block_y0[i] = box->y0;
  }
}

/* Regions of an I420 frame in device memory (CUCONV_REGION_INSIDE)
 * against the whole frame, both through plain launches. */
typedef struct
{
  int w, h, n, whole, err;
  uint8_t *src, *dst;
  CuconvFilter filter;
  CuconvDeviceFrames *rf;
  CuconvRegions reg;
} RegionBench;

static bool
launch_regions (void *ctx, int i, cudaStream_t stream)
{
  RegionBench *b = (RegionBench *) ctx;
  CuconvStatus st;
  CuconvPlane p[3];
  int err;

  /* I420 */
  frame_planes (p, frame_formats[0], b->w, b->h, b->src, b->dst, i % b->n);
  err = b->whole ? cuconv_filter_device (p, 3, &b->filter, stream, &st) :
      cuconv_device_frames_filter (b->rf, p, 3, &b->filter, &b->reg, stream,
      &st);
  if (err != 0) {
    b->err = err;
    fprintf (stderr, "bench-kernel: %s\n", st.message);
  }
  return err == 0;
}

/* n rectangles of lo x lo to hi x hi at seeded random places of the
 * frame (they may overlap); returns the share of the frame they cover. */
static double
region_rects (CuconvRect * r, int n, int lo, int hi, int w, int h,
    unsigned seed)
{
  std::vector < uint8_t > cover ((size_t) w * h, 0);
  size_t covered = 0;

  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    r[i].w = lo + (seed >> 8) % (hi - lo + 1);
    seed = seed * 1103515245u + 12345u;
    r[i].h = lo + (seed >> 8) % (hi - lo + 1);
    seed = seed * 1103515245u + 12345u;
    r[i].x = (seed >> 8) % (w - r[i].w + 1);
    seed = seed * 1103515245u + 12345u;
    r[i].y = (seed >> 8) % (h - r[i].h + 1);
    for (int y = r[i].y; y < r[i].y + r[i].h; y++)
      for (int x = r[i].x; x < r[i].x + r[i].w; x++)
        cover[(size_t) y * w + x] = 1;
  }
  for (size_t q = 0; q < cover.size (); q++)
    covered += cover[q];
  return (double) covered / cover.size ();
}

static int
bench_regions (const cudaDeviceProp & prop, cudaStream_t stream)
{
  static const int sizes[][2] = { {1920, 1080}, {3840, 2160} };
  /* face-sized rectangles, and many small ones (the element takes at
   * least 1024 a frame) */
  static const struct
  {
    int n, lo, hi;
  } counts[] = { {1, 64, 256}, {8, 64, 256}, {64, 64, 256}, {1024, 8, 48} };
  /* privacy's modes: a fixed blur, the feathered ellipse, each region
   * its own sigma (roi-scale 0.15) or its own mosaic (blocks of a 32nd
   * of its side, DeepStream's 32x32 cells) */
  static const struct
  {
    const char *label;
    unsigned radius;
    double sigma;
    RegionMode mode;
  } filters[] = {
    {"gaussian sigma=12 (r 36)", 0, 12.0, REGIONS_HARD},
    {"gaussian r=2", 2, 0.0, REGIONS_HARD},
    {"gaussian r=2, ellipse, feather 8", 2, 0.0, REGIONS_SOFT},
    {"gaussian, roi-scale=0.15", 0, 0.0, REGIONS_SIGMA},
    {"pixelate, roi-scale=1/32", 0, 0.0, REGIONS_MOSAIC},
  };
  static CuconvRect rects[1024];
  static CuconvBox boxes[1024];
  static double strength[1024];
  CuconvStatus st;
  int ret = 0;

  printf ("\n### regions of I420 frames in device memory\n\n");
  printf ("- region=roi (CUCONV_REGION_INSIDE): 1, 8 and 64 rectangles of "
      "64x64 to 256x256, and 1024 of 8x8 to 48x48, at seeded random places; "
      "cuconv_device_frames_filter () "
      "against the whole frame through cuconv_filter_device () in the same "
      "run (for roi-scale: the whole frame at sigma 12, or in blocks of 4); "
      "border clamp, tight strides, plain launches (no CUDA graph), "
      "median of %d batches\n\n", reps);
  printf ("| size | filter | rectangles | area | whole frame µs | regions "
      "µs | regions / whole |\n|---|---|---:|---:|---:|---:|---:|\n");
  no_graph = true;
  for (int z = 0; z < 2 && ret == 0; z++) {
    RegionBench b;
    const size_t frame = (size_t) sizes[z][0] * sizes[z][1] * 3 / 2;

    memset (&b, 0, sizeof (b));
    b.w = sizes[z][0];
    b.h = sizes[z][1];
    b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * frame)) + 1);
    b.rf = cuconv_device_frames_new (&st);
    if (!b.rf) {
      printf ("bench-kernel: %s\n", st.message);
      return 1;
    }
    CHECK (cudaMalloc (&b.src, frame * b.n));
    CHECK (cudaMalloc (&b.dst, frame * b.n));
    CHECK (cudaMemset (b.src, 0x5a, frame * b.n));
    for (int fi = 0; fi < (int) (sizeof (filters) / sizeof (filters[0]))
        && ret == 0; fi++) {
      CuconvSettings s;
      float whole;
      bool graph;

      memset (&s, 0, sizeof (s));
      s.kernel = filters[fi].mode == REGIONS_MOSAIC ? CUCONV_KERNEL_PIXELATE :
          CUCONV_KERNEL_GAUSSIAN;
      s.border = CUCONV_BORDER_CLAMP;
      s.radius = filters[fi].radius;
      /* the whole frame beside the own filters: sigma 12, blocks of 4 */
      s.sigma = filters[fi].mode == REGIONS_SIGMA ? 12.0 : filters[fi].sigma;
      s.block_size = 4;
      cuconv_filter_init (&b.filter, &s);
      b.whole = 1;
      whole = time_calls (launch_regions, &b, std::max (b.n, 24), stream,
          &graph);
      for (int ci = 0; ci < 4 && whole >= 0; ci++) {
        const double area = region_rects (rects, counts[ci].n, counts[ci].lo,
            counts[ci].hi, b.w, b.h, 1000u + ci);
        float us;

        b.whole = 0;
        memset (&b.reg, 0, sizeof (b.reg));
        b.reg.mode = CUCONV_REGION_INSIDE;
        b.reg.rects = rects;
        b.reg.n_rects = counts[ci].n;
        for (int k = 0; k < counts[ci].n; k++) {
          const int side = std::min (rects[k].w, rects[k].h);

          boxes[k] = { rects[k].x, rects[k].y, rects[k].x + rects[k].w,
            rects[k].y + rects[k].h };
          strength[k] = filters[fi].mode == REGIONS_MOSAIC ?
              std::max (1, (side + 16) / 32) : 0.15 * side;
        }
        if (filters[fi].mode == REGIONS_SOFT) {
          b.reg.boxes = boxes;
          b.reg.shape = CUCONV_SHAPE_ELLIPSE;
          b.reg.feather = 8.0;
        } else if (filters[fi].mode != REGIONS_HARD) {
          b.reg.boxes = boxes;
          b.reg.strength = strength;
          b.reg.make_filter = filters[fi].mode == REGIONS_MOSAIC ?
              bench_mosaic : bench_gaussian;
        }
        us = time_calls (launch_regions, &b, std::max (b.n, 24), stream,
            &graph);
        if (us < 0) {
          whole = -1.0f;
          break;
        }
        printf ("| %dx%d | %s | %d of %d..%d | %.1f%% | %.1f | %.1f | "
            "%.2f |\n", b.w, b.h, filters[fi].label, counts[ci].n,
            counts[ci].lo, counts[ci].hi, 100.0 * area, whole, us,
            us / whole);
      }
      if (whole < 0) {
        printf ("bench-kernel: a region frame failed: %s\n",
            cudaGetErrorString (cudaGetLastError ()));
        ret = 1;
      }
    }
    CHECK (cudaStreamSynchronize (stream));
    cuconv_device_frames_free (b.rf);
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.dst));
  }
  no_graph = false;
  return ret;
}

#ifdef HAVE_NPP
static bool
launch_npp (void *ctx, int i, cudaStream_t stream)
{
  Bench *b = (Bench *) ctx;
  size_t off = (size_t) (i % b->n) * b->pitch * b->h;
  NppiSize size = { b->w, b->h };
  NppiPoint origin = { 0, 0 };
  NppStatus st;
  int r = b->filter.x[0].radius;

  b->npp.hStream = stream;
  switch (b->npp_op) {
    case NPP_OP_BOX:{
      NppiSize mask = { 2 * r + 1, 2 * r + 1 };
      NppiPoint anchor = { r, r };

      st = nppiFilterBoxBorder_8u_C1R_Ctx (b->src + off, (Npp32s) b->pitch,
          size, origin, b->dst + off, (Npp32s) b->pitch, size, mask, anchor,
          NPP_BORDER_REPLICATE, b->npp);
      break;
    }
    case NPP_OP_MATRIX:{
      const int side = 2 * b->filter.m.radius + 1;
      NppiSize ksize = { side, side };
      NppiPoint anchor = { b->filter.m.radius, b->filter.m.radius };

      st = nppiFilterBorder32f_8u_C1R_Ctx (b->src + off, (int) b->pitch,
          size, origin, b->dst + off, (int) b->pitch, size, b->d_taps, ksize,
          anchor, NPP_BORDER_REPLICATE, b->npp);
      break;
    }
    case NPP_OP_BILATERAL:
      /* NPP's weights: exp (-(i^2 + j^2) / (2 nPosSquareSigma)) times
       * exp (-d^2 / (2 nValSquareSigma)), every pixel of the square
       * window (nStepBetweenSrcPixels 1) */
      st = nppiFilterBilateralGaussBorder_8u_C1R_Ctx (b->src + off,
          (Npp32s) b->pitch, size, origin, b->dst + off, (Npp32s) b->pitch,
          size, r, 1, (Npp32f) (b->filter.sigma_range *
              b->filter.sigma_range),
          (Npp32f) (b->filter.x[0].sigma * b->filter.x[0].sigma),
          NPP_BORDER_REPLICATE, b->npp);
      break;
    case NPP_OP_GAUSS:
      if (b->bytes == 2)
        st = nppiFilterGaussAdvancedBorder_16u_C1R_Ctx ((const Npp16u *)
            (b->src + off), (Npp32s) b->pitch, size, origin,
            (Npp16u *) (b->dst + off), (Npp32s) b->pitch, size, b->n_taps,
            b->d_taps, NPP_BORDER_REPLICATE, b->npp);
      else
        st = nppiFilterGaussAdvancedBorder_8u_C1R_Ctx (b->src + off,
            (Npp32s) b->pitch, size, origin, b->dst + off, (Npp32s) b->pitch,
            size, b->n_taps, b->d_taps, NPP_BORDER_REPLICATE, b->npp);
      break;
    default:
      return false;
  }
  if (st != NPP_SUCCESS)
    fprintf (stderr, "bench-kernel: NPP returned %d\n", (int) st);
  return st == NPP_SUCCESS;
}

/* Gives NPP our taps: the gaussian's 2r + 1, or the matrix reversed (NPP
 * convolves, we correlate). */
static void
npp_set_taps (Bench * b)
{
  std::vector < Npp32f > t;

  if (b->npp_op == NPP_OP_MATRIX) {
    const int n = 2 * b->filter.m.radius + 1;
    for (int i = n * n - 1; i >= 0; i--)
      t.push_back (b->filter.m.w[i]);
  } else {
    t.assign (b->filter.x[0].w, b->filter.x[0].w + 2 * b->filter.x[0].radius
        + 1);
  }
  b->n_taps = (int) t.size ();
  CHECK (cudaMemcpy (b->d_taps, t.data (), sizeof (Npp32f) * t.size (),
          cudaMemcpyHostToDevice));
}

/* Max |a - b| of the samples of a plane of buffer pair 0 computed by two
 * launchers. */
static int
compare_outputs (Bench * b, LaunchFn f1, LaunchFn f2, cudaStream_t stream)
{
  size_t n = b->pitch * b->h;
  std::vector < uint8_t > o1 (n), o2 (n);
  int maxd = 0;

  CHECK (cudaMemsetAsync (b->dst, 0xA5, n, stream));
  if (!f1 (b, 0, stream))
    return -1;
  CHECK (cudaMemcpyAsync (o1.data (), b->dst, n, cudaMemcpyDeviceToHost,
          stream));
  CHECK (cudaMemsetAsync (b->dst, 0x5A, n, stream));
  if (!f2 (b, 0, stream))
    return -1;
  CHECK (cudaMemcpyAsync (o2.data (), b->dst, n, cudaMemcpyDeviceToHost,
          stream));
  CHECK (cudaStreamSynchronize (stream));
  for (int y = 0; y < b->h; y++)
    for (int x = 0; x < b->w; x++) {
      const size_t i = (size_t) y * b->pitch + (size_t) x * b->bytes;
      const int v1 = b->bytes == 2 ? o1[i] | o1[i + 1] << 8 : o1[i];
      const int v2 = b->bytes == 2 ? o2[i] | o2[i + 1] << 8 : o2[i];

      maxd = std::max (maxd, abs (v1 - v2));
    }
  return maxd;
}
#endif

#ifdef HAVE_NPP
/* NPP's stream context: the device and the stream the calls go to. */
static void
npp_context_init (NppStreamContext * c, int dev, const cudaDeviceProp & prop,
    cudaStream_t stream)
{
  c->hStream = stream;
  c->nCudaDeviceId = dev;
  c->nMultiProcessorCount = prop.multiProcessorCount;
  c->nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  c->nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  c->nSharedMemPerBlock = prop.sharedMemPerBlock;
  c->nCudaDevAttrComputeCapabilityMajor = prop.major;
  c->nCudaDevAttrComputeCapabilityMinor = prop.minor;
  CHECK (cudaStreamGetFlags (stream, &c->nStreamFlags));
}
#endif

/* Planes of w x h random bytes (pitch a multiple of 256), enough pairs of
 * input and output that they add up to more than twice the L2. */
static void
bench_planes_alloc (Bench * b, int w, int h, const cudaDeviceProp & prop)
{
  size_t plane;

  b->w = w;
  b->h = h;
  b->pitch = ((size_t) b->w * b->bytes + 255) / 256 * 256;
  plane = b->pitch * b->h;
  b->n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * plane)) + 1);
  CHECK (cudaMalloc (&b->src, plane * b->n));
  CHECK (cudaMalloc (&b->dst, plane * b->n));
  std::vector < uint8_t > hb (plane * b->n);
  unsigned seed = 12345;

  for (size_t j = 0; j < hb.size (); j++) {
    seed = seed * 1103515245u + 12345u;
    hb[j] = (uint8_t) (seed >> 16);
  }
  CHECK (cudaMemcpy (b->src, hb.data (), hb.size (), cudaMemcpyHostToDevice));
}

/* The bilateral (kernel=bilateral) on 8-bit planes against NPP's
 * nppiFilterBilateralGaussBorder_8u_C1R_Ctx: the same radius, spatial
 * sigma (the element's default for the radius) and sigma-range. */
static int
bench_bilateral (const cudaDeviceProp & prop, int dev, cudaStream_t stream)
{
  static const int sizes[][2] = { {1920, 1080}, {3840, 2160} };
  static const int radii[] = { 2, 4, 7 };
  const double sigma_range = 25.0;

  (void) dev;
  printf ("\n### bilateral, 8-bit planes\n\n");
  printf ("- kernel=bilateral through cuconv_filter_device (): radius r, "
      "sigma 0 (the element's default, 0.3 (r - 1) + 0.8), sigma-range "
      "%.0f, border clamp; one plane of random bytes, pitch = width "
      "rounded up to 256, buffers rotated past twice the L2; median of %d "
      "batches, CUDA events\n", sigma_range, reps);
#ifdef HAVE_NPP
  printf ("- NPP: nppiFilterBilateralGaussBorder_8u_C1R_Ctx (nRadius r, "
      "nStepBetweenSrcPixels 1, nValSquareSigma sigma-range^2, "
      "nPosSquareSigma sigma^2, NPP_BORDER_REPLICATE = our clamp) on the "
      "same planes; NPP max abs diff is its largest difference from our "
      "output\n");
#else
  printf ("- NPP: not built (build with tests/gpu-host.sh)\n");
#endif
  printf ("- window Gsamples/s = pixels x (2r + 1)^2 / time\n\n");
  printf ("| size | r | sigma | sigma-range | buffers | ours µs | ours "
      "Gpix/s | window Gsamples/s | NPP µs | NPP Gpix/s | speed-up | NPP max "
      "abs diff |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      "---:|\n");
  for (int z = 0; z < 2; z++) {
    Bench b;

    memset (&b, 0, sizeof (b));
    b.path = CUCONV_PATH_AUTO;
    b.depth = 8;
    b.bytes = 1;
    bench_planes_alloc (&b, sizes[z][0], sizes[z][1], prop);
#ifdef HAVE_NPP
    npp_context_init (&b.npp, dev, prop, stream);
#endif
    for (int ri = 0; ri < (int) (sizeof (radii) / sizeof (radii[0])); ri++) {
      const int batch = std::max (b.n, 24);
      const double pix = (double) b.w * b.h;
      const double taps = (2.0 * radii[ri] + 1) * (2.0 * radii[ri] + 1);
      CuconvSettings st;
      float us;
      bool graph;

      memset (&st, 0, sizeof (st));
      st.kernel = CUCONV_KERNEL_BILATERAL;
      st.border = CUCONV_BORDER_CLAMP;
      st.radius = radii[ri];
      st.sigma_range = sigma_range;
      cuconv_filter_init (&b.filter, &st);
      printf ("| %dx%d | %d | %.2f | %.0f | %d |", b.w, b.h, radii[ri],
          b.filter.x[0].sigma, sigma_range, b.n);
      us = time_calls (launch_ours, &b, batch, stream, &graph);
      if (us < 0) {
        printf (" failed: %s | | | | | | |\n",
            cudaGetErrorString ((cudaError_t) b.err));
        return 1;
      }
      printf (" %.1f%s | %.2f | %.0f |", us, graph ? "" : " (no graph)",
          pix / us * 1e-3, pix * taps / us * 1e-3);
#ifdef HAVE_NPP
      {
        float nus;
        bool ngraph;

        b.npp_op = NPP_OP_BILATERAL;
        nus = time_calls (launch_npp, &b, batch, stream, &ngraph);
        if (nus < 0)
          printf (" failed | | | |\n");
        else
          printf (" %.1f%s | %.2f | %.2fx | %d |\n", nus,
              ngraph ? "" : " (no graph)", pix / nus * 1e-3, nus / us,
              compare_outputs (&b, launch_ours, launch_npp, stream));
      }
#else
      printf (" n/a | n/a | n/a | n/a |\n");
#endif
    }
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.dst));
  }
  return 0;
}

/* 4:2:0 frames (all planes in device memory) through the temporal
 * denoise: frame i of the rotation, its state beside it. */
typedef struct
{
  int w, h, n;
  const FrameFormat *format;
  uint8_t *src, *state;
  uint8_t k[CUCONV_TEMPORAL_LUT];
  /* compensated: the previous state is the next frame's, the motion
   * search's buffers in scratch */
  bool compensate;
  uint8_t *scratch;
} TemporalBench;

static bool
launch_temporal (void *ctx, int i, cudaStream_t stream)
{
  TemporalBench *b = (TemporalBench *) ctx;
  CuconvPlane p[3], q[3];
  const uint8_t *prev[3];
  ptrdiff_t prev_stride[3];
  const int n = frame_planes (p, *b->format, b->w, b->h, b->src, b->state,
      i % b->n);

  if (!b->compensate)
    return cuconv_temporal_device (p, n, b->k, 0, stream, NULL) == 0;
  frame_planes (q, *b->format, b->w, b->h, b->src, b->state, (i + 1) % b->n);
  for (int k = 0; k < n; k++) {
    prev[k] = q[k].dst;
    prev_stride[k] = q[k].dst_stride;
  }
  return cuconv_temporal_compensated_device (p, n, prev, prev_stride, 0,
      b->scratch, b->k, 0, stream, NULL) == 0;
}

/* Fills n frames of a format: a still picture (a ramp) with noise of a
 * few levels, different in every frame, as a camera gives. */
static void
temporal_frames (uint8_t * d, size_t frame, int n, const FrameFormat * fmt,
    unsigned seed)
{
  std::vector < uint8_t > h (frame * n);
  const int sb = fmt->sample_bytes;

  for (size_t j = 0; j < h.size () / sb; j++) {
    const unsigned level = (unsigned) ((j % 1920) / 8 + (j / 7680) % 16);
    unsigned v;

    seed = seed * 1103515245u + 12345u;
    v = (level + (seed >> 16) % 9) & 0xff;
    if (sb == 1) {
      h[j] = (uint8_t) v;
    } else {
      v = (v << 2) << fmt->shift;
      h[2 * j] = (uint8_t) v;
      h[2 * j + 1] = (uint8_t) (v >> 8);
    }
  }
  CHECK (cudaMemcpy (d, h.data (), h.size (), cudaMemcpyHostToDevice));
}

/* The temporal denoise of whole frames: every plane in one call, input
 * read, state read and written; against the device copy ceiling. */
static int
bench_temporal (const cudaDeviceProp & prop, double copy_bw,
    cudaStream_t stream)
{
  static const struct
  {
    int format, w, h;           /* frame_formats[format] */
    bool compensate;
  } cases[] = { {1, 3840, 2160, false}, {1, 1920, 1080, false},
  {2, 3840, 2160, false}, {1, 3840, 2160, true}, {1, 1920, 1080, true},
  {2, 3840, 2160, true}
  };

  printf ("\n### temporal denoise of whole frames in device memory\n\n");
  printf ("- cuconv_temporal_device () (still) or "
      "cuconv_temporal_compensated_device () (compensated: the motion "
      "search on luma, then every plane blended along the vectors) on "
      "every plane of a frame in one call, strength 0.8, threshold 20, "
      "tight strides; frames a still ramp with noise of 0..8 levels; "
      "frames and states rotated past twice the L2; median of %d batches, "
      "CUDA events\n", reps);
  printf ("- bytes = 3 x frame (input read, state read, state written); "
      "%% copy = GB/s over the device copy ceiling (%.0f GB/s, this run)"
      "\n\n", copy_bw / 1e9);
  printf ("| mode | format | size | frame MB | buffers | µs | GB/s | "
      "%% copy |\n|---|---|---|---:|---:|---:|---:|---:|\n");
  for (const auto & c : cases) {
    TemporalBench b;
    CuconvMotionLayout l;
    const FrameFormat *fmt = &frame_formats[c.format];
    const size_t frame = (size_t) c.w * c.h * 3 / 2 * fmt->sample_bytes;
    float us;
    bool graph;

    memset (&b, 0, sizeof (b));
    b.w = c.w;
    b.h = c.h;
    b.format = fmt;
    b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * frame)) + 1);
    cuconv_temporal_lut (b.k, 0.8, 20.0);
    CHECK (cudaMalloc (&b.src, frame * b.n));
    CHECK (cudaMalloc (&b.state, frame * b.n));
    temporal_frames (b.src, frame, b.n, fmt, 1u);
    temporal_frames (b.state, frame, b.n, fmt, 2u);
    b.compensate = c.compensate;
    cuconv_motion_layout (b.w, b.h, &l);
    CHECK (cudaMalloc (&b.scratch, l.bytes));
    us = time_calls (launch_temporal, &b, std::max (b.n, 24), stream, &graph);
    if (us < 0) {
      printf ("bench-kernel: a temporal frame failed: %s\n",
          cudaGetErrorString (cudaGetLastError ()));
      return 1;
    }
    printf ("| %s | %s | %dx%d | %.1f | %d | %.2f%s | %.0f | %.0f%% |\n",
        c.compensate ? "compensated" : "still", fmt->name, b.w, b.h,
        frame / 1e6, b.n, us,
        graph ? "" : " (no graph)", 3.0 * frame / us * 1e-3,
        100.0 * 3.0 * frame / (us * 1e-6) / copy_bw);
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.state));
    CHECK (cudaFree (b.scratch));
  }
  return 0;
}

/* Non-local means of whole NV12 frames in device memory, through the
 * dispatch; against the device copy ceiling. */
typedef struct
{
  int w, h, n;
  uint8_t *src, *dst;
  CuconvFilter filter;
  CuconvPath path;              /* AUTO: the direct kernel; or by sums */
} NlMeansBench;

static bool
launch_nlmeans_frame (void *ctx, int i, cudaStream_t stream)
{
  NlMeansBench *b = (NlMeansBench *) ctx;
  CuconvPlane p[2];
  CuconvStatus st;

  frame_planes (p, frame_formats[1], b->w, b->h, b->src, b->dst, i % b->n);
  if (cuconv_filter_device_path (p, 2, &b->filter, b->path, stream, &st) == 0)
    return true;
  fprintf (stderr, "bench-kernel: %s\n", st.message);
  return false;
}

static int
bench_nlmeans (const cudaDeviceProp & prop, double copy_bw,
    cudaStream_t stream)
{
  static const int sizes[][2] = { {1920, 1080}, {3840, 2160} };
  /* the search windows: 3x3 (the study's best), 7x7 and 15x15 */
  static const struct
  {
    unsigned radius, patch;
  } settings[] = { {1, 2}, {3, 2}, {3, 3}, {7, 3} };

  printf ("\n### non-local means of whole NV12 frames in device memory\n\n");
  printf ("- cuconv_filter_device () with kernel=nlmeans (sigma-range 10), "
      "tight strides, frames rotated past twice the L2; median of %d "
      "batches, CUDA events\n", reps);
  printf ("- %% copy: the frame read and written at the device copy ceiling "
      "(%.0f GB/s, this run) against the time\n\n", copy_bw / 1e9);
  printf ("- kernel: the direct one (the dispatch's), or by sums "
      "(CUCONV_PATH_NLMEANS_SUMS)\n\n");
  printf ("| size | search | patch | kernel | µs | %% copy |\n"
      "|---|---:|---:|---|---:|---:|\n");
  for (const auto & z : sizes) {
    NlMeansBench b;
    const size_t frame = (size_t) z[0] * z[1] * 3 / 2;

    memset (&b, 0, sizeof (b));
    b.w = z[0];
    b.h = z[1];
    b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * frame)) + 1);
    CHECK (cudaMalloc (&b.src, frame * b.n));
    CHECK (cudaMalloc (&b.dst, frame * b.n));
    temporal_frames (b.src, frame, b.n, &frame_formats[1], 3u);
    for (int k = 0; k < 2 * (int) (sizeof (settings) / sizeof (settings[0]));
        k++) {
      const auto & s = settings[k / 2];
      CuconvSettings cs;
      bool graph;
      float us;

      b.path = k % 2 ? CUCONV_PATH_NLMEANS_SUMS : CUCONV_PATH_AUTO;
      memset (&cs, 0, sizeof (cs));
      cs.kernel = CUCONV_KERNEL_NLMEANS;
      cs.radius = s.radius;
      cs.patch_radius = s.patch;
      cs.sigma_range = 10.0;
      cuconv_filter_init (&b.filter, &cs);
      us = time_calls (launch_nlmeans_frame, &b, std::max (b.n, 24), stream,
          &graph);
      if (us < 0)
        return 1;
      printf ("| %dx%d | %ux%u | %ux%u | %s | %.1f%s | %.1f%% |\n", b.w,
          b.h, 2 * s.radius + 1, 2 * s.radius + 1, 2 * s.patch + 1,
          2 * s.patch + 1, k % 2 ? "by sums" : "direct", us,
          graph ? "" : " (no graph)",
          100.0 * 2.0 * frame / (us * 1e-6) / copy_bw);
    }
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.dst));
  }
  return 0;
}

/* Canny of 8-bit luma planes in device memory, ours through the dispatch
 * and NPP's (nppiFilterCannyBorder_8u_C1R_Ctx: 3x3 Sobel, L2 norm, the
 * same thresholds, replicated border) on the same planes. */
typedef struct
{
  int w, h, n;
  size_t pitch;
  uint8_t *src, *dst;
  CuconvFilter filter;
#ifdef HAVE_NPP
  NppStreamContext npp;
  Npp8u *npp_buf;
#endif
} CannyBench;

static bool
launch_canny_plane (void *ctx, int i, cudaStream_t stream)
{
  CannyBench *b = (CannyBench *) ctx;
  const size_t off = (size_t) (i % b->n) * b->pitch * b->h;
  const CuconvPlane p = gray_plane (b->src + off, b->dst + off, b->pitch,
      b->w, b->h, 8);
  CuconvStatus st;

  if (cuconv_filter_device (&p, 1, &b->filter, stream, &st) == 0)
    return true;
  fprintf (stderr, "bench-kernel: %s\n", st.message);
  return false;
}

#ifdef HAVE_NPP
static bool
launch_npp_canny (void *ctx, int i, cudaStream_t stream)
{
  CannyBench *b = (CannyBench *) ctx;
  const size_t off = (size_t) (i % b->n) * b->pitch * b->h;
  const NppiSize size = { b->w, b->h };
  const NppiPoint origin = { 0, 0 };

  b->npp.hStream = stream;
  return nppiFilterCannyBorder_8u_C1R_Ctx (b->src + off, (int) b->pitch,
      size, origin, b->dst + off, (int) b->pitch, size, NPP_FILTER_SOBEL,
      NPP_MASK_SIZE_3_X_3, 50, 150, nppiNormL2, NPP_BORDER_REPLICATE,
      b->npp_buf, b->npp) == NPP_SUCCESS;
}
#endif

/* n planes of a picture with edges at every scale: waves, and noise of
 * +-10 levels. */
static void
canny_planes (uint8_t * d, size_t pitch, int w, int h, int n)
{
  std::vector < uint8_t > p (pitch * h * n);
  unsigned seed = 7;

  for (int k = 0; k < n; k++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        seed = seed * 1103515245u + 12345u;
        p[((size_t) k * h + y) * pitch + x] = (uint8_t) std::min (255.0,
            std::max (0.0, 128.0 + 100.0 * sin ((x + 31 * k) / 37.0) *
                cos (y / 23.0) + (double) ((seed >> 16) % 21) - 10.0));
      }
  CHECK (cudaMemcpy (d, p.data (), p.size (), cudaMemcpyHostToDevice));
}

static int
bench_canny (const cudaDeviceProp & prop, int dev, double copy_bw,
    cudaStream_t stream)
{
  static const int sizes[][2] = { {1920, 1080}, {3840, 2160} };

  (void) dev;                   /* NPP's */
  printf ("\n### Canny of 8-bit luma planes in device memory\n\n");
  printf ("- cuconv_filter_device () with kernel=canny, no smoothing "
      "(radius 0, sigma 0), thresholds 50 and 150, border clamp; NPP: "
      "nppiFilterCannyBorder_8u_C1R_Ctx, Sobel 3x3, L2, 50 and 150, "
      "replicated border, on the same planes; planes of waves with noise, "
      "rotated past twice the L2; median of %d batches, CUDA events\n",
      reps);
  printf ("- %% copy: the plane read and written at the device copy ceiling "
      "(%.0f GB/s, this run) against the time; agree: the share of pixels "
      "where NPP's edges are ours\n\n", copy_bw / 1e9);
  printf ("| size | µs | %% copy | NPP µs | vs NPP | agree |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  for (const auto & z : sizes) {
    CannyBench b;
    CuconvSettings cs;
    double npp_us = -1.0, agree = -1.0;
    bool graph;
    float us;

    memset (&b, 0, sizeof (b));
    b.w = z[0];
    b.h = z[1];
    b.pitch = (size_t) (b.w + 255) / 256 * 256;
    b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * b.pitch *
                b.h)) + 1);
    CHECK (cudaMalloc (&b.src, b.pitch * b.h * b.n));
    CHECK (cudaMalloc (&b.dst, b.pitch * b.h * b.n));
    canny_planes (b.src, b.pitch, b.w, b.h, b.n);
    memset (&cs, 0, sizeof (cs));
    cs.kernel = CUCONV_KERNEL_CANNY;
    cs.border = CUCONV_BORDER_CLAMP;
    cs.threshold_low = 50.0;
    cs.threshold_high = 150.0;
    cuconv_filter_init (&b.filter, &cs);
    us = time_calls (launch_canny_plane, &b, std::max (b.n, 24), stream,
        &graph);
    if (us < 0)
      return 1;
#ifdef HAVE_NPP
    {
      const NppiSize size = { b.w, b.h };
      std::vector < uint8_t > ours (b.pitch * b.h), theirs (b.pitch * b.h);
      int buf_size = 0;
      bool g2;
      size_t same = 0;

      npp_context_init (&b.npp, dev, prop, stream);
      if (nppiFilterCannyBorderGetBufferSize (size, &buf_size) ==
          NPP_SUCCESS && cudaMalloc (&b.npp_buf, buf_size) == cudaSuccess) {
        npp_us = time_calls (launch_npp_canny, &b, std::max (b.n, 24), stream,
            &g2);
        /* plane 0 by each */
        if (launch_canny_plane (&b, 0, stream)) {
          CHECK (cudaMemcpyAsync (ours.data (), b.dst, ours.size (),
                  cudaMemcpyDeviceToHost, stream));
          if (launch_npp_canny (&b, 0, stream)) {
            CHECK (cudaMemcpyAsync (theirs.data (), b.dst, theirs.size (),
                    cudaMemcpyDeviceToHost, stream));
            CHECK (cudaStreamSynchronize (stream));
            for (int y = 0; y < b.h; y++)
              for (int x = 0; x < b.w; x++)
                same += (ours[y * b.pitch + x] != 0) ==
                    (theirs[y * b.pitch + x] != 0);
            agree = (double) same / ((double) b.w * b.h);
          }
        }
        cudaFree (b.npp_buf);
      }
    }
#endif
    printf ("| %dx%d | %.1f%s | %.1f%% | ", b.w, b.h, us,
        graph ? "" : " (no graph)",
        100.0 * 2.0 * b.pitch * b.h / (us * 1e-6) / copy_bw);
    if (npp_us > 0)
      printf ("%.1f | %.1fx | %.4f |\n", npp_us, npp_us / us, agree);
    else
      printf ("not timed | | |\n");
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.dst));
  }
  return 0;
}

/* One row of the table on the planes of b. */
static bool
bench_row (Bench * b, const Row * row, double copy_bw, double fma_rate,
    cudaStream_t stream)
{
  const int batch = std::max (b->n, 24);
  const double pix = (double) b->w * b->h;
  double bytes, fmas, roof;
  CuconvSettings s;
  float us;
  bool graph;

  row_settings (row, &s);
  cuconv_filter_init (&b->filter, &s);
  row_cost (&b->filter, row->depth, &bytes, &fmas);
  roof = std::min (copy_bw / bytes, fma_rate / fmas);
  b->npp_op = b->path == CUCONV_PATH_AUTO && !b->no_npp ? row_npp_op (row)
      : NPP_OP_NONE;
  b->err = 0;

  printf ("| %dx%d | %s | %d | %d |", b->w, b->h, row->name,
      row->matrix_side ? row->matrix_side / 2 : row->radius, b->n);
  us = time_calls (launch_ours, b, batch, stream, &graph);
  if (us < 0) {
    printf (" failed: %s | | | | | | | |\n",
        cudaGetErrorString ((cudaError_t) b->err));
    (void) cudaGetLastError ();
    return false;
  }
  printf (" %.1f%s | %.1f | %.1f | %.0f%% |", us, graph ? "" : " (no graph)",
      pix / us * 1e-3, roof / 1e9, 100.0 * (pix / (us * 1e-6)) / roof);
#ifdef HAVE_NPP
  if (b->npp_op != NPP_OP_NONE) {
    float nus;
    bool ngraph;
    int maxd;

    npp_set_taps (b);
    nus = time_calls (launch_npp, b, batch, stream, &ngraph);
    maxd = nus < 0 ? -1 : compare_outputs (b, launch_ours, launch_npp,
        stream);
    if (nus < 0)
      printf (" failed | | | |\n");
    else
      printf (" %.1f%s | %.1f | %.2fx | %d |\n", nus,
          ngraph ? "" : " (no graph)", pix / nus * 1e-3, nus / us, maxd);
    return true;
  }
  printf (b->no_npp ? " NPP not timed (wide) | | | |\n" :
      " no NPP equivalent | | | |\n");
#else
  printf (" n/a | n/a | n/a | n/a |\n");
#endif
  return true;
}

int
main (int argc, char **argv)
{
  static const int sizes[][2] = { {3840, 2160}, {1920, 1080} };
  static const int depths[] = { 8, 16 };
  cudaDeviceProp prop;
  cudaStream_t stream;
  int dev, drv = 0, rt = 0, i, z, ok = 1;
  size_t copy_bytes;
  double copy_bw, fma_rate;
  char date[64];
  time_t now = time (NULL);
  bool regions_only = false, wide_only = false, frames_only = false;
  bool bilateral_only = false, temporal_only = false, nlmeans_only = false;
  bool canny_only = false;

  setvbuf (stdout, NULL, _IOLBF, 0);    /* rows survive a timeout */
  for (i = 1; i < argc; i++) {
    if (strncmp (argv[i], "--reps=", 7) == 0)
      reps = std::max (3, atoi (argv[i] + 7));
    else if (strcmp (argv[i], "--tiled") == 0)
      base_path = CUCONV_PATH_TILED;
    else if (strcmp (argv[i], "--mma") == 0)
      base_path = CUCONV_PATH_MMA;
    else if (strcmp (argv[i], "--stream") == 0)
      base_path = CUCONV_PATH_STREAM;
    else if (strcmp (argv[i], "--regions") == 0)
      regions_only = true;
    else if (strcmp (argv[i], "--wide") == 0)
      wide_only = true;
    else if (strcmp (argv[i], "--frames") == 0)
      frames_only = true;
    else if (strcmp (argv[i], "--bilateral") == 0)
      bilateral_only = true;
    else if (strcmp (argv[i], "--temporal") == 0)
      temporal_only = true;
    else if (strcmp (argv[i], "--nlmeans") == 0)
      nlmeans_only = true;
    else if (strcmp (argv[i], "--canny") == 0)
      canny_only = true;
    else if (strncmp (argv[i], "--only=", 7) == 0) {
      static char name[64];
      char *colon;

      snprintf (name, sizeof (name), "%s", argv[i] + 7);
      colon = strrchr (name, ':');
      if (colon) {
        *colon = '\0';
        only_radius = atoi (colon + 1);
      }
      only_name = name;
    } else {
      printf ("usage: %s [--reps=N] [--tiled | --mma | --stream] [--regions "
          "| --wide | --frames | --bilateral | --temporal | --nlmeans | "
          "--canny | --only=NAME[:R]]\n", argv[0]);
      return 2;
    }
  }
  if (cuconv_device_count () == 0) {
    printf ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  CHECK (cudaGetDevice (&dev));
  CHECK (cudaGetDeviceProperties (&prop, dev));
  CHECK (cudaDriverGetVersion (&drv));
  CHECK (cudaRuntimeGetVersion (&rt));
  CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  strftime (date, sizeof (date), "%Y-%m-%d %H:%M UTC", gmtime (&now));

  if (regions_only || frames_only) {
    int r;

    printf ("## bench-kernel %s\n\n- GPU: %s (sm_%d%d, %d SMs)\n"
        "- driver API version %d.%d, CUDA runtime %d.%d\n- date: %s\n",
        regions_only ? "--regions" : "--frames", prop.name, prop.major,
        prop.minor, prop.multiProcessorCount, drv / 1000,
        (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, date);
    r = regions_only ? bench_regions (prop, stream) : bench_frames (prop,
        stream);
    CHECK (cudaStreamDestroy (stream));
    return r;
  }

  copy_bw = measure_copy_bandwidth (stream, &copy_bytes);
  if (bilateral_only || temporal_only || nlmeans_only || canny_only) {
    int r;

    printf ("## bench-kernel %s\n\n- GPU: %s (sm_%d%d, %d SMs, L2 %.0f MiB)"
        "\n- driver API version %d.%d, CUDA runtime %d.%d\n- date: %s\n",
        bilateral_only ? "--bilateral" : temporal_only ? "--temporal" :
        canny_only ? "--canny" : "--nlmeans", prop.name, prop.major,
        prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
        drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, date);
    r = bilateral_only ? bench_bilateral (prop, dev, stream) :
        temporal_only ? bench_temporal (prop, copy_bw, stream) :
        canny_only ? bench_canny (prop, dev, copy_bw, stream) :
        bench_nlmeans (prop, copy_bw, stream);
    CHECK (cudaStreamDestroy (stream));
    return r;
  }
  fma_rate = measure_fma_rate (prop, stream);

  printf ("## bench-kernel\n\n");
  printf ("- GPU: %s (sm_%d%d, %d SMs, L2 %.0f MiB)\n", prop.name, prop.major,
      prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0);
  printf ("- driver API version %d.%d, CUDA runtime %d.%d\n", drv / 1000,
      (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
  printf ("- date: %s\n", date);
  printf ("- device copy ceiling: %.0f GB/s (cudaMemcpy D2D of %zu MiB, "
      "bytes read + written, median of 10)\n", copy_bw / 1e9,
      copy_bytes >> 20);
  printf ("- FP32 FMA ceiling: %.2f TFMA/s (1 FMA counted as 1 operation, "
      "= %.1f TFLOP/s at 2 FLOP per FMA)\n", fma_rate / 1e12,
      2 * fma_rate / 1e12);
  printf ("- roofline = min(copy / bytes a pixel, FMA rate / FMAs a pixel) "
      "pixels/s; %% roofline = achieved / roofline.  Bytes a pixel: 2 for "
      "8-bit planes, 4 for 16-bit.  FMAs a pixel: (2r+1)^2 for a 2-D "
      "matrix; (2rx+1) + (2ry+1) for each separable term (gaussian, box, "
      "sharpen: 1 term; sobel, laplacian: 2), plus the combine: sharpen 2, "
      "sobel's magnitude 3, laplacian's |sum| 1\n");
  printf ("- path: %s\n", base_path == CUCONV_PATH_TILED ? "--tiled, the "
      "fused tile kernels where the dispatch would stream or use the tensor "
      "cores" : base_path == CUCONV_PATH_MMA ? "--mma, the tensor-core blur "
      "wherever it takes the plane" : base_path == CUCONV_PATH_STREAM ?
      "--stream, the streaming kernel wherever it takes the plane" :
      "the dispatch's");
  printf ("- one plane through cuconv_filter_device () (the engine's "
      "dispatch included), border clamp (NPP: replicate), pitch = row "
      "bytes rounded up to 256; time per plane = median of %d batches of "
      "back-to-back calls, CUDA events; r of a custom matrix = side / 2\n",
      reps);
#ifdef HAVE_NPP
  printf ("- NPP: nppiFilterGaussAdvancedBorder_{8u,16u}_C1R_Ctx with our "
      "taps, nppiFilterBoxBorder_8u_C1R_Ctx with a (2r+1)^2 mask, "
      "nppiFilterBorder32f_8u_C1R_Ctx with our matrix (reversed, as NPP "
      "convolves); NPP max |d| is its largest difference from our output on "
      "the same plane\n");
#else
  printf ("- NPP: not built (configure with NPP available, or build with "
      "tests/gpu-host.sh)\n");
#endif
  printf ("\n| size | kernel | r | buffers | ours µs | ours Gpix/s | "
      "roofline Gpix/s | %% roofline | NPP µs | NPP Gpix/s | speed-up | "
      "NPP max abs diff |\n");
  printf ("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

  for (z = 0; z < 2; z++) {
    for (int d = 0; d < 2; d++) {
      const int nrows = (int) (sizeof (table_rows) / sizeof (table_rows[0]));
      Bench b;
      size_t plane;
      int k, any = 0;

      for (k = 0; k < nrows; k++)
        any |= row_at (&table_rows[k], z, depths[d]) && !wide_only
            && row_selected (&table_rows[k]);
      any |= !only_name && wide_rows_at (z, depths[d]);
      if (!any)
        continue;
      memset (&b, 0, sizeof (b));
      b.path = base_path;
      b.w = sizes[z][0];
      b.h = sizes[z][1];
      b.depth = depths[d];
      b.bytes = b.depth > 8 ? 2 : 1;
      b.pitch = ((size_t) b.w * b.bytes + 255) / 256 * 256;
      plane = b.pitch * b.h;
      /* in + out planes over all pairs > 2x L2 */
      b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * plane)) +
          1);
      CHECK (cudaMalloc (&b.src, plane * b.n));
      CHECK (cudaMalloc (&b.dst, plane * b.n));
      {
        std::vector < uint8_t > h (plane * b.n);
        unsigned s = 12345;

        for (size_t j = 0; j < h.size (); j++) {
          s = s * 1103515245u + 12345u;
          h[j] = (uint8_t) (s >> 16);
        }
        CHECK (cudaMemcpy (b.src, h.data (), h.size (),
                cudaMemcpyHostToDevice));
      }
#ifdef HAVE_NPP
      npp_context_init (&b.npp, dev, prop, stream);
      CHECK (cudaMalloc (&b.d_taps, sizeof (Npp32f) *
              std::max (CUCONV_MAX_TAPS, CUCONV_MAX_MATRIX_SIDE *
                  CUCONV_MAX_MATRIX_SIDE)));
#endif
      for (k = 0; k < nrows; k++)
        if (row_at (&table_rows[k], z, b.depth) && !wide_only
            && row_selected (&table_rows[k]))
          ok &= bench_row (&b, &table_rows[k], copy_bw, fma_rate, stream);
      b.no_npp = true;
      for (k = 0; !only_name && k < N_WIDE_ROWS; k++) {
        if (!row_at (&wide_rows[k].row, z, b.depth))
          continue;
        b.path = wide_rows[k].path;
        ok &= bench_row (&b, &wide_rows[k].row, copy_bw, fma_rate, stream);
        b.path = base_path;
      }
#ifdef HAVE_NPP
      CHECK (cudaFree (b.d_taps));
#endif
      CHECK (cudaFree (b.src));
      CHECK (cudaFree (b.dst));
    }
  }
  if (wide_only || only_name)
    return ok ? 0 : 1;
  if (bench_frames (prop, stream) != 0)
    return 1;
  if (bench_regions (prop, stream) != 0)
    return 1;
  if (bench_bilateral (prop, dev, stream) != 0)
    return 1;
  if (bench_temporal (prop, copy_bw, stream) != 0)
    return 1;
  if (bench_nlmeans (prop, copy_bw, stream) != 0)
    return 1;
  CHECK (cudaStreamDestroy (stream));
  return ok ? 0 : 1;
}
