/* gst-cudaconvolve: kernel benchmark, no GStreamer.
 *
 * Times ccv_cuda_filter_device () on one 8-bit plane (3840x2160 and
 * 1920x1080, gaussian and box, radius 1..16, clamp border) and, when built
 * with HAVE_NPP, NPP's nppiFilterGaussAdvancedBorder_8u_C1R_Ctx (same taps)
 * and nppiFilterBoxBorder_8u_C1R_Ctx (replicate border) on the same planes.
 * The two ceilings of the roofline are measured in the same run:
 *
 *   copy  = device-to-device cudaMemcpy bandwidth, bytes read + written
 *   fma   = FP32 FMA/s of a kernel of independent FMA chains (1 FMA = 1 op)
 *   roofline (r) = min (copy / 2 bytes per pixel, fma / (2 * (2r + 1)))
 *
 * since a separable pass reads and writes each 8-bit pixel once and does
 * 2r + 1 FMA per direction.  Each time is the median over many batches of
 * back-to-back calls (a CUDA graph when the calls can be captured), timed
 * with CUDA events after a warm-up, rotating over enough input and output
 * planes that they add up to more than twice the L2.  Prints a markdown
 * table.
 *
 *   bench-kernel [--reps=N]
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

#include "ccv.h"
#include "ccv-cuda.h"

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
  if (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal) ==
      cudaSuccess) {
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

static double
measure_copy_bandwidth (cudaStream_t stream, size_t * bytes_out)
{
  size_t free_b, total_b, bytes = (size_t) 1 << 30;
  void *a, *b;
  cudaEvent_t e0, e1;
  std::vector < float >t;
  int r;

  CHECK (cudaMemGetInfo (&free_b, &total_b));
  while (bytes > free_b / 4)
    bytes /= 2;
  CHECK (cudaMalloc (&a, bytes));
  CHECK (cudaMalloc (&b, bytes));
  CHECK (cudaMemset (a, 1, bytes));
  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (r = 0; r < 12; r++) {
    float ms;

    CHECK (cudaEventRecord (e0, stream));
    CHECK (cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice, stream));
    CHECK (cudaEventRecord (e1, stream));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r >= 2)
      t.push_back (ms);
  }
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  CHECK (cudaFree (a));
  CHECK (cudaFree (b));
  *bytes_out = bytes;
  /* read + written */
  return 2.0 * bytes / (median (t) * 1e-3);
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
  float *out;
  cudaEvent_t e0, e1;
  std::vector < float >t;
  int r;

  CHECK (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&blocks_per_sm,
          fma_kernel, threads, 0));
  /* several waves, so a partial last wave costs little */
  blocks = prop.multiProcessorCount * std::max (blocks_per_sm, 1) * 4;
  CHECK (cudaMalloc (&out, sizeof (float) * blocks * threads));
  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (r = 0; r < 12; r++) {
    float ms;

    CHECK (cudaEventRecord (e0, stream));
    fma_kernel <<< blocks, threads, 0, stream >>> (out, iters, 0.999f,
        1e-3f);
    CHECK (cudaGetLastError ());
    CHECK (cudaEventRecord (e1, stream));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r >= 2)
      t.push_back (ms);
  }
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  CHECK (cudaFree (out));
  return (double) blocks * threads * iters * FMA_UNROLL * FMA_CHAINS /
      (median (t) * 1e-3);
}

/* ---------------------------------------------------------------------- */
/* The code under test */

typedef struct
{
  int w, h, n;                  /* plane size, buffer pairs */
  size_t pitch;
  uint8_t *src, *dst;           /* n planes each, pitch * h apart */
  CcvFilter filter;
#ifdef HAVE_NPP
  NppStreamContext npp;
  Npp32f *d_taps;
  int n_taps;
#endif
} Bench;

static bool
launch_ours (void *ctx, int i, cudaStream_t stream)
{
  Bench *b = (Bench *) ctx;
  size_t off = (size_t) (i % b->n) * b->pitch * b->h;
  CcvPlane p;

  memset (&p, 0, sizeof (p));
  p.src = b->src + off;
  p.dst = b->dst + off;
  p.src_stride = p.dst_stride = (ptrdiff_t) b->pitch;
  p.width = b->w;
  p.height = b->h;
  p.n_comp = 1;
  p.sub_x = p.sub_y = 1;
  return ccv_cuda_filter_device (&p, 1, &b->filter, stream) == 0;
}

/* A 4:2:0 frame (I420, or NV12 when nv12) in device memory: frame i of
 * the rotation, all planes in one call or a call a plane. */
typedef struct
{
  int w, h, n, nv12, per_plane;
  uint8_t *src, *dst;
  CcvFilter filter;
} FrameBench;

static bool
launch_frame (void *ctx, int i, cudaStream_t stream)
{
  FrameBench *b = (FrameBench *) ctx;
  const size_t ysz = (size_t) b->w * b->h, csz = ysz / 4;
  const size_t off = (size_t) (i % b->n) * (ysz + 2 * csz);
  CcvPlane p[3];
  int n = b->nv12 ? 2 : 3, k;

  memset (p, 0, sizeof (p));
  for (k = 0; k < n; k++) {
    const size_t poff = k == 0 ? 0 : ysz + (k - 1) * csz;

    p[k].src = b->src + off + poff;
    p[k].dst = b->dst + off + poff;
    p[k].width = k == 0 ? b->w : b->w / 2;
    p[k].height = k == 0 ? b->h : b->h / 2;
    p[k].n_comp = k > 0 && b->nv12 ? 2 : 1;
    p[k].src_stride = p[k].dst_stride = p[k].width * p[k].n_comp;
    p[k].sub_x = p[k].sub_y = k == 0 ? 1 : 2;
  }
  if (!b->per_plane)
    return ccv_cuda_filter_device (p, n, &b->filter, stream) == 0;
  for (k = 0; k < n; k++)
    if (ccv_cuda_filter_device (&p[k], 1, &b->filter, stream) != 0)
      return false;
  return true;
}

/* Whole frames: one launch for all planes against a launch a plane. */
static int
bench_frames (const cudaDeviceProp & prop, cudaStream_t stream)
{
  static const int sizes[][2] = { {3840, 2160}, {1920, 1080} };
  static const int radii[] = { 1, 2, 4, 8 };

  printf ("\n### whole 4:2:0 frames in device memory\n\n");
  printf ("- gaussian, border clamp, tight strides; the same frames through "
      "one ccv_cuda_filter_device () call with all planes (one launch) and "
      "through a call a plane\n\n");
  printf ("| format | size | r | one launch µs | a launch per plane µs | "
      "saved |\n|---|---|---:|---:|---:|---:|\n");
  for (int nv12 = 0; nv12 < 2; nv12++) {
    for (int z = 0; z < 2; z++) {
      FrameBench b;
      const size_t frame = (size_t) sizes[z][0] * sizes[z][1] * 3 / 2;

      memset (&b, 0, sizeof (b));
      b.w = sizes[z][0];
      b.h = sizes[z][1];
      b.nv12 = nv12;
      b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * frame)) + 1);
      CHECK (cudaMalloc (&b.src, frame * b.n));
      CHECK (cudaMalloc (&b.dst, frame * b.n));
      CHECK (cudaMemset (b.src, 0x5a, frame * b.n));
      for (int ri = 0; ri < (int) (sizeof (radii) / sizeof (radii[0])); ri++) {
        CcvSettings st;
        float us[2];
        bool graph;

        memset (&st, 0, sizeof (st));
        st.kernel = CCV_KERNEL_GAUSSIAN;
        st.border = CCV_BORDER_CLAMP;
        st.radius = radii[ri];
        ccv_filter_init (&b.filter, &st);
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
            nv12 ? "NV12" : "I420", b.w, b.h, radii[ri], us[0], us[1],
            100.0 * (us[1] - us[0]) / us[1]);
      }
      CHECK (cudaFree (b.src));
      CHECK (cudaFree (b.dst));
    }
  }
  return 0;
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
  if (b->filter.settings.kernel == CCV_KERNEL_BOX) {
    NppiSize mask = { 2 * r + 1, 2 * r + 1 };
    NppiPoint anchor = { r, r };

    st = nppiFilterBoxBorder_8u_C1R_Ctx (b->src + off, (Npp32s) b->pitch,
        size, origin, b->dst + off, (Npp32s) b->pitch, size, mask, anchor,
        NPP_BORDER_REPLICATE, b->npp);
  } else {
    st = nppiFilterGaussAdvancedBorder_8u_C1R_Ctx (b->src + off,
        (Npp32s) b->pitch, size, origin, b->dst + off, (Npp32s) b->pitch,
        size, b->n_taps, b->d_taps, NPP_BORDER_REPLICATE, b->npp);
  }
  if (st != NPP_SUCCESS)
    fprintf (stderr, "bench-kernel: NPP returned %d\n", (int) st);
  return st == NPP_SUCCESS;
}
#endif

#ifdef HAVE_NPP
/* Max |a - b| over a plane of buffer pair 0 computed by two launchers. */
static int
compare_outputs (Bench * b, LaunchFn f1, LaunchFn f2, cudaStream_t stream)
{
  size_t n = b->pitch * b->h, i;
  std::vector < uint8_t > o1 (n), o2 (n);
  int maxd = 0, x, y;

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
  for (y = 0; y < b->h; y++)
    for (x = 0; x < b->w; x++) {
      i = (size_t) y * b->pitch + x;
      maxd = std::max (maxd, abs ((int) o1[i] - (int) o2[i]));
    }
  return maxd;
}
#endif

int
main (int argc, char **argv)
{
  static const int sizes[][2] = { {3840, 2160}, {1920, 1080} };
  static const int radii[] = { 1, 2, 4, 8, 16 };
  cudaDeviceProp prop;
  cudaStream_t stream;
  int dev, drv = 0, rt = 0, i, z, k, ri;
  size_t copy_bytes;
  double copy_bw, fma_rate;
  char date[64];
  time_t now = time (NULL);

  for (i = 1; i < argc; i++) {
    if (strncmp (argv[i], "--reps=", 7) == 0)
      reps = std::max (3, atoi (argv[i] + 7));
    else {
      printf ("usage: %s [--reps=N]\n", argv[0]);
      return 2;
    }
  }
  if (ccv_cuda_device_count () == 0) {
    printf ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  CHECK (cudaGetDevice (&dev));
  CHECK (cudaGetDeviceProperties (&prop, dev));
  CHECK (cudaDriverGetVersion (&drv));
  CHECK (cudaRuntimeGetVersion (&rt));
  CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  strftime (date, sizeof (date), "%Y-%m-%d %H:%M UTC", gmtime (&now));

  copy_bw = measure_copy_bandwidth (stream, &copy_bytes);
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
  printf ("- roofline(r) = min(copy / 2 B per pixel, FMA rate / "
      "(2 * (2r + 1))) pixels/s; %% roofline = achieved / roofline\n");
  printf ("- one 8-bit plane, border clamp (NPP: replicate), pitch = width; "
      "time per plane = median of %d batches of back-to-back calls, CUDA "
      "events\n", reps);
#ifdef HAVE_NPP
  printf ("- NPP: nppiFilterGaussAdvancedBorder_8u_C1R_Ctx with our taps, "
      "nppiFilterBoxBorder_8u_C1R_Ctx with a (2r+1)^2 mask; NPP max |d| is "
      "its largest difference from our output on the same plane\n");
#else
  printf ("- NPP: not built (configure with NPP available, or build with "
      "tests/gpu-host.sh)\n");
#endif
  printf ("\n| size | kernel | r | buffers | ours µs | ours Gpix/s | "
      "roofline Gpix/s | %% roofline | NPP µs | NPP Gpix/s | speed-up | "
      "NPP max abs diff |\n");
  printf ("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

  for (z = 0; z < 2; z++) {
    Bench b;
    size_t plane;

    memset (&b, 0, sizeof (b));
    b.w = sizes[z][0];
    b.h = sizes[z][1];
    b.pitch = (b.w + 255) / 256 * 256;
    plane = b.pitch * b.h;
    /* in + out planes over all pairs > 2x L2 */
    b.n = std::max (3, (int) ((2.0 * prop.l2CacheSize) / (2.0 * plane)) + 1);
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
    b.npp.hStream = stream;
    b.npp.nCudaDeviceId = dev;
    b.npp.nMultiProcessorCount = prop.multiProcessorCount;
    b.npp.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    b.npp.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    b.npp.nSharedMemPerBlock = prop.sharedMemPerBlock;
    b.npp.nCudaDevAttrComputeCapabilityMajor = prop.major;
    b.npp.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    CHECK (cudaStreamGetFlags (stream, &b.npp.nStreamFlags));
    CHECK (cudaMalloc (&b.d_taps, sizeof (Npp32f) * CCV_MAX_TAPS));
#endif

    for (k = 0; k < CCV_KERNEL_N; k++) {
      for (ri = 0; ri < (int) (sizeof (radii) / sizeof (radii[0])); ri++) {
        CcvSettings s;
        int r = radii[ri], batch = std::max (b.n, 24);
        double pix = (double) b.w * b.h;
        double roof = std::min (copy_bw / 2.0, fma_rate / (2.0 * (2 * r + 1)));
        float us;
        bool graph;

        memset (&s, 0, sizeof (s));
        s.kernel = (CcvKernel) k;
        s.border = CCV_BORDER_CLAMP;
        s.radius = r;
        ccv_filter_init (&b.filter, &s);

        us = time_calls (launch_ours, &b, batch, stream, &graph);
        if (us < 0) {
          printf ("bench-kernel: ccv_cuda_filter_device failed at %dx%d r=%d"
              ": %s\n", b.w, b.h, r, cudaGetErrorString (cudaGetLastError ()));
          return 1;
        }
        printf ("| %dx%d | %s | %d | %d | %.1f%s | %.1f | %.1f | %.0f%% |",
            b.w, b.h, k == CCV_KERNEL_BOX ? "box" : "gaussian", r, b.n, us,
            graph ? "" : " (no graph)", pix / us * 1e-3, roof / 1e9,
            100.0 * (pix / (us * 1e-6)) / roof);
#ifdef HAVE_NPP
        {
          float nus;
          bool ngraph;
          int maxd;

          b.n_taps = 2 * b.filter.x[0].radius + 1;
          CHECK (cudaMemcpy (b.d_taps, b.filter.x[0].w,
                  sizeof (Npp32f) * b.n_taps, cudaMemcpyHostToDevice));
          nus = time_calls (launch_npp, &b, batch, stream, &ngraph);
          maxd = nus < 0 ? -1 : compare_outputs (&b, launch_ours, launch_npp,
              stream);
          if (nus < 0)
            printf (" failed | | | |\n");
          else
            printf (" %.1f%s | %.1f | %.2fx | %d |\n", nus,
                ngraph ? "" : " (no graph)", pix / nus * 1e-3, nus / us,
                maxd);
        }
#else
        printf (" n/a | n/a | n/a | n/a |\n");
#endif
      }
    }
#ifdef HAVE_NPP
    CHECK (cudaFree (b.d_taps));
#endif
    CHECK (cudaFree (b.src));
    CHECK (cudaFree (b.dst));
  }
  if (bench_frames (prop, stream) != 0)
    return 1;
  CHECK (cudaStreamDestroy (stream));
  return 0;
}
