/* gst-cudaconvolve: whole-element benchmark.
 *
 *   appsrc ! cudaconvolve backend=cuda kernel=gaussian radius=2 !
 *     fakesink sync=false
 *
 * appsrc pushes a few pre-filled buffers again and again; frames/s is
 * counted at the sink after a warm-up.  Three kinds of upstream memory:
 * buffers from the pool cudaconvolve proposes in the ALLOCATION query
 * (pinned host memory from its allocator on the CUDA backend; again with
 * region=roi and 8 fixed rectangles), plain
 * pageable g_malloc memory, and GStreamer CUDA memory (caps
 * video/x-raw(memory:CUDAMemory), buffers from the GstCudaBufferPool the
 * element proposes): frames already on the GPU, as after nvh264dec, with
 * no PCIe transfer at all.  Those rows are set beside the kernel alone
 * (the engine on the same frame as the element calls it,
 * cuconv_device_frames_filter (), CUDA events, median), so the element's
 * own per-frame overhead shows, with the host's time a call and the
 * pipeline without the element
 * (appsrc ! identity ! fakesink); at 4K also through the
 * untruncated gaussian of sigma 64 (the recursive path).  The PCIe ceiling is
 * measured in the same run
 * (pinned H2D and D2H concurrently on two streams, and pageable copies) and
 * turned into frames/s for an I420 frame (w * h * 3 / 2 bytes each way);
 * each row is held to the ceiling of the memory its buffers turn out to be
 * in, as CUDA reports it.
 *
 * Then the host's time a call of the engine for a filter of each of its
 * paths (4K I420), and 1, 8 and 32 pipelines at once in one process
 * (1080p NV12, CUDA memory and the proposed pinned pool) beside the same
 * pipelines with identity in the element's place.
 *
 * The rows in CUDA memory are short (3000 frames of 15 to 20 us) and the
 * host's scheduling moves a run's figure by a few us, so each is run
 * RUNS times, each run beside its own kernel-alone figure, and the
 * median overhead is printed with the runs' range.
 *
 *   bench-element [--frames=N] [--runs=N] [--system-only]
 *
 * --system-only: the system-memory table alone.
 *
 * Exits 77 without a usable CUDA device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gst/gst.h>
#include <gst/video/video.h>
#include <cuda_runtime_api.h>

#include "cuconv-cuda.h"

#define EXIT_SKIP 77
#define N_BUFFERS 4
#define PCIE_BYTES ((size_t) 256 << 20)
#define PCIE_REPS 7

#define RUNS 5                  /* runs of each row in CUDA memory */
#define RUNS_MAX 99

static gint n_frames_arg, n_runs_arg;
static gboolean system_only;

/* What cudaconvolve computes in a row: its properties, and the same as
 * settings for the kernel alone; with n_rects > 0, region=roi with that
 * many seeded rectangles (the kernel alone then goes through
 * cuconv_device_frames_filter ()). */
typedef struct
{
  const gchar *props;
  CuconvKernel kernel;
  guint radius;
  gdouble sigma;
  gint n_rects;
  gint rect_lo, rect_hi;        /* their sides, luma pixels */
} Filter;

static const Filter radius2 = { "kernel=gaussian radius=2",
  CUCONV_KERNEL_GAUSSIAN, 2, 0.0
};

/* no cudaconvolve: appsrc ! identity ! fakesink, the harness's own cost
 * a frame (system-memory buffers: neither element maps them) */
static const Filter bare = { NULL };

/* the untruncated gaussian (recursive path) */
static const Filter sigma64 = { "kernel=gaussian radius=0 sigma=64",
  CUCONV_KERNEL_GAUSSIAN, 0, 64.0
};

/* One filter for each of the engine's paths (docs/design.md, "The
 * dispatch"), for the host's time a call. */
static const Filter paths[] = {
  {"kernel=gaussian radius=2", CUCONV_KERNEL_GAUSSIAN, 2, 0.0},
  {"kernel=gaussian radius=8", CUCONV_KERNEL_GAUSSIAN, 8, 0.0},
  {"kernel=gaussian radius=16", CUCONV_KERNEL_GAUSSIAN, 16, 0.0},
  {"kernel=gaussian radius=0 sigma=12 (r 36)", CUCONV_KERNEL_GAUSSIAN, 0,
      12.0},
  {"kernel=gaussian radius=64", CUCONV_KERNEL_GAUSSIAN, 64, 0.0},
  {"kernel=box radius=32", CUCONV_KERNEL_BOX, 32, 0.0},
  {"kernel=sobel radius=48", CUCONV_KERNEL_SOBEL, 48, 0.0},
  {"kernel=gaussian radius=0 sigma=64", CUCONV_KERNEL_GAUSSIAN, 0, 64.0},
  {"kernel=gaussian radius=2, region=roi, 8 of 64..256",
      CUCONV_KERNEL_GAUSSIAN, 2, 0.0, 8, 64, 256},
  {"kernel=gaussian radius=2, region=roi, 1024 of 8..48",
      CUCONV_KERNEL_GAUSSIAN, 2, 0.0, 1024, 8, 48},
};

/* ---------------------------------------------------------------------- */
/* PCIe ceilings */

typedef struct
{
  double pinned_up, pinned_down;        /* concurrently, GB/s */
  double pinned_up_alone, pinned_down_alone;
  double pageable_up, pageable_down;
} Pcie;

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof (double), cmp_double);
  return v[n / 2];
}

#define CHECK(call) \
  do { \
    cudaError_t _e = (call); \
    if (_e != cudaSuccess) { \
      g_printerr ("bench-element: %s: %s\n", #call, cudaGetErrorString (_e)); \
      exit (1); \
    } \
  } while (0)

/* GB/s of one copy, timed with events on stream */
static double
time_copy (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
    cudaStream_t stream, gboolean async)
{
  cudaEvent_t e0, e1;
  double t[PCIE_REPS];
  float ms;
  int r;

  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (r = 0; r < PCIE_REPS + 1; r++) {
    CHECK (cudaEventRecord (e0, stream));
    if (async)
      CHECK (cudaMemcpyAsync (dst, src, n, kind, stream));
    else
      CHECK (cudaMemcpy (dst, src, n, kind));
    CHECK (cudaEventRecord (e1, stream));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r > 0)
      t[r - 1] = n / (ms * 1e-3) / 1e9;
  }
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  return median (t, PCIE_REPS);
}

static void
measure_pcie (Pcie * p)
{
  void *h_up, *h_down, *d_up, *d_down, *pg;
  cudaStream_t s_up, s_down;
  cudaEvent_t start, stop_up, stop_down;
  double up[PCIE_REPS], down[PCIE_REPS];
  float ms;
  int r;

  CHECK (cudaMallocHost (&h_up, PCIE_BYTES));
  CHECK (cudaMallocHost (&h_down, PCIE_BYTES));
  CHECK (cudaMalloc (&d_up, PCIE_BYTES));
  CHECK (cudaMalloc (&d_down, PCIE_BYTES));
  memset (h_up, 1, PCIE_BYTES);
  memset (h_down, 2, PCIE_BYTES);
  CHECK (cudaMemset (d_down, 3, PCIE_BYTES));
  CHECK (cudaStreamCreateWithFlags (&s_up, cudaStreamNonBlocking));
  CHECK (cudaStreamCreateWithFlags (&s_down, cudaStreamNonBlocking));
  CHECK (cudaEventCreate (&start));
  CHECK (cudaEventCreate (&stop_up));
  CHECK (cudaEventCreate (&stop_down));

  /* both directions at once: the two copies start on one event */
  for (r = 0; r < PCIE_REPS + 1; r++) {
    CHECK (cudaEventRecord (start, s_up));
    CHECK (cudaStreamWaitEvent (s_down, start, 0));
    CHECK (cudaMemcpyAsync (d_up, h_up, PCIE_BYTES, cudaMemcpyHostToDevice,
            s_up));
    CHECK (cudaMemcpyAsync (h_down, d_down, PCIE_BYTES,
            cudaMemcpyDeviceToHost, s_down));
    CHECK (cudaEventRecord (stop_up, s_up));
    CHECK (cudaEventRecord (stop_down, s_down));
    CHECK (cudaEventSynchronize (stop_up));
    CHECK (cudaEventSynchronize (stop_down));
    if (r == 0)
      continue;
    CHECK (cudaEventElapsedTime (&ms, start, stop_up));
    up[r - 1] = PCIE_BYTES / (ms * 1e-3) / 1e9;
    CHECK (cudaEventElapsedTime (&ms, start, stop_down));
    down[r - 1] = PCIE_BYTES / (ms * 1e-3) / 1e9;
  }
  p->pinned_up = median (up, PCIE_REPS);
  p->pinned_down = median (down, PCIE_REPS);
  p->pinned_up_alone = time_copy (d_up, h_up, PCIE_BYTES,
      cudaMemcpyHostToDevice, s_up, TRUE);
  p->pinned_down_alone = time_copy (h_down, d_down, PCIE_BYTES,
      cudaMemcpyDeviceToHost, s_down, TRUE);

  /* pageable: cudaMemcpy from and to malloc'd memory, pages touched first */
  pg = g_malloc (PCIE_BYTES);
  memset (pg, 4, PCIE_BYTES);
  p->pageable_up = time_copy (d_up, pg, PCIE_BYTES, cudaMemcpyHostToDevice,
      NULL, FALSE);
  p->pageable_down = time_copy (pg, d_down, PCIE_BYTES,
      cudaMemcpyDeviceToHost, NULL, FALSE);
  g_free (pg);

  CHECK (cudaEventDestroy (start));
  CHECK (cudaEventDestroy (stop_up));
  CHECK (cudaEventDestroy (stop_down));
  CHECK (cudaStreamDestroy (s_up));
  CHECK (cudaStreamDestroy (s_down));
  CHECK (cudaFreeHost (h_up));
  CHECK (cudaFreeHost (h_down));
  CHECK (cudaFree (d_up));
  CHECK (cudaFree (d_down));
}

/* ---------------------------------------------------------------------- */
/* The kernel alone */

#define KERNEL_FRAMES 8         /* rotated, more than the L2 holds at 4K */
#define KERNEL_REPS 200
#define HOST_REPS 100

static double
now_us (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* n rectangles of lo x lo to hi x hi (luma pixels) at seeded random
 * places of a w x h frame. */
static void
seeded_rects (CuconvRect * r, gint n, gint lo, gint hi, gint w, gint h)
{
  GRand *rand = g_rand_new_with_seed (1000 + n);
  gint i;

  for (i = 0; i < n; i++) {
    r[i].w = g_rand_int_range (rand, lo, hi + 1);
    r[i].h = g_rand_int_range (rand, lo, hi + 1);
    r[i].x = g_rand_int_range (rand, 0, w - r[i].w + 1);
    r[i].y = g_rand_int_range (rand, 0, h - r[i].h + 1);
  }
  g_rand_free (rand);
}

/* filter's properties with region=roi and n seeded rectangles of lo to
 * hi luma pixels on a w x h frame as its regions (free with g_free) */
static gchar *
regions_props (const gchar * props, gint n, gint lo, gint hi, gint w, gint h)
{
  CuconvRect *r = g_new (CuconvRect, n);
  GString *str = g_string_new (props);
  gint i;

  seeded_rects (r, n, lo, hi, w, h);
  g_string_append (str, " region=roi regions=\"<");
  for (i = 0; i < n; i++)
    g_string_append_printf (str, "%s<%d,%d,%d,%d>", i ? "," : "", r[i].x,
        r[i].y, r[i].w, r[i].h);
  g_string_append (str, ">\"");
  g_free (r);
  return g_string_free (str, FALSE);
}

/* One call of the engine as the element makes it. */
static void
filter_call (CuconvDeviceFrames * rf, const CuconvPlane * planes, guint n,
    const CuconvFilter * f, const CuconvRegions * reg)
{
  CuconvStatus st;

  if (cuconv_device_frames_filter (rf, planes, n, f, reg, NULL, &st) != 0) {
    g_printerr ("bench-element: the engine failed: %s\n", st.message);
    exit (1);
  }
}

/* Median microseconds of the engine on one frame of info through filter,
 * frames in cudaMalloc memory, as the element calls it
 * (cuconv_device_frames_filter ()); and in *host_us the host's time a
 * call, median of HOST_REPS calls each made with the GPU idle (the
 * dispatch and the launches, never a wait for the GPU). */
static double
kernel_alone_us (const GstVideoInfo * info, const Filter * filter,
    double *host_us)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  CuconvSettings s;
  CuconvFilter *f = g_new0 (CuconvFilter, 1);
  CuconvPlane planes[KERNEL_FRAMES][GST_VIDEO_MAX_PLANES];
  CuconvRegions reg = { CUCONV_REGION_FRAME, NULL, 0 };
  CuconvRect *rects = NULL;
  CuconvDeviceFrames *rf;
  CuconvStatus st;
  guint8 *src[KERNEL_FRAMES], *dst[KERNEL_FRAMES];
  double t[KERNEL_REPS], h[HOST_REPS], t0;
  cudaEvent_t e0, e1;
  float ms;
  guint n = GST_VIDEO_INFO_N_PLANES (info), i, p, c;
  gint r;

  memset (&s, 0, sizeof (s));
  s.kernel = filter->kernel;
  s.radius = filter->radius;
  s.sigma = filter->sigma;
  s.amount = 1.0;
  cuconv_filter_init (f, &s);
  if (filter->n_rects > 0) {
    rects = g_new (CuconvRect, filter->n_rects);
    seeded_rects (rects, filter->n_rects, filter->rect_lo, filter->rect_hi,
        GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info));
    reg.mode = CUCONV_REGION_INSIDE;
    reg.rects = rects;
    reg.n_rects = filter->n_rects;
  }
  if (!(rf = cuconv_device_frames_new (&st))) {
    g_printerr ("bench-element: %s\n", st.message);
    exit (1);
  }
  for (i = 0; i < KERNEL_FRAMES; i++) {
    CHECK (cudaMalloc ((void **) &src[i], info->size));
    CHECK (cudaMalloc ((void **) &dst[i], info->size));
    CHECK (cudaMemset (src[i], (int) (i * 37), info->size));
    for (p = 0; p < n; p++) {
      CuconvPlane *pl = &planes[i][p];

      for (c = 0; GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != p; c++);
      memset (pl, 0, sizeof (*pl));
      pl->src = src[i] + info->offset[p];
      pl->dst = dst[i] + info->offset[p];
      pl->src_stride = pl->dst_stride = info->stride[p];
      pl->width = GST_VIDEO_INFO_COMP_WIDTH (info, c);
      pl->height = GST_VIDEO_INFO_COMP_HEIGHT (info, c);
      pl->n_comp = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
      pl->sub_x = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, c);
      pl->sub_y = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, c);
      pl->depth = 8;
    }
  }
  CHECK (cudaEventCreate (&e0));
  CHECK (cudaEventCreate (&e1));
  for (r = -20; r < KERNEL_REPS; r++) {
    CHECK (cudaEventRecord (e0, NULL));
    filter_call (rf, planes[(r + 20) % KERNEL_FRAMES], n, f, &reg);
    CHECK (cudaEventRecord (e1, NULL));
    CHECK (cudaEventSynchronize (e1));
    CHECK (cudaEventElapsedTime (&ms, e0, e1));
    if (r >= 0)
      t[r] = ms * 1e3;
  }
  /* each call alone: back to back, a call of a long frame would wait for
   * room in the launch queue, and time the GPU instead */
  for (r = 0; r < HOST_REPS; r++) {
    CHECK (cudaDeviceSynchronize ());
    t0 = now_us ();
    filter_call (rf, planes[r % KERNEL_FRAMES], n, f, &reg);
    h[r] = now_us () - t0;
  }
  *host_us = median (h, HOST_REPS);
  CHECK (cudaDeviceSynchronize ());
  CHECK (cudaEventDestroy (e0));
  CHECK (cudaEventDestroy (e1));
  cuconv_device_frames_free (rf);
  for (i = 0; i < KERNEL_FRAMES; i++) {
    CHECK (cudaFree (src[i]));
    CHECK (cudaFree (dst[i]));
  }
  g_free (rects);
  g_free (f);
  return median (t, KERNEL_REPS);
}

/* ---------------------------------------------------------------------- */
/* The pipeline */

typedef struct
{
  gint count;
  gint start_at, end_at;
  gint64 t_start, t_end;
} Counter;

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, Counter * c)
{
  gint n = g_atomic_int_add (&c->count, 1) + 1;

  if (n == c->start_at)
    c->t_start = g_get_monotonic_time ();
  else if (n == c->end_at)
    c->t_end = g_get_monotonic_time ();
}

static void
fill_frame (GstBuffer * buf, const GstVideoInfo * info, guint seed)
{
  GstVideoFrame frame;
  guint p, y, x;

  if (!gst_video_frame_map (&frame, (GstVideoInfo *) info, buf,
          GST_MAP_WRITE)) {
    g_printerr ("bench-element: could not map a buffer for writing\n");
    exit (1);
  }
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    guint w = GST_VIDEO_FRAME_COMP_WIDTH (&frame, p);
    guint h = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p);

    for (y = 0; y < h; y++)
      for (x = 0; x < w; x++)
        d[(gsize) y * stride + x] = (guint8) ((x * 7 + y * 13 + seed) ^
            (x * y));
  }
  gst_video_frame_unmap (&frame);
}

/* The action signal does not take buf: the caller keeps its reference. */
static gboolean
push (GstElement * src, GstBuffer * buf)
{
  GstFlowReturn ret = GST_FLOW_ERROR;

  g_signal_emit_by_name (src, "push-buffer", buf, &ret);
  return ret == GST_FLOW_OK;
}

static gboolean
check_bus (GstElement * pipeline, GstClockTime timeout, gboolean want_eos)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  gboolean ok = TRUE;

  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &err, &dbg);
    g_printerr ("bench-element: pipeline error: %s (%s)\n", err->message,
        dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
    ok = FALSE;
  } else if (want_eos && !msg) {
    g_printerr ("bench-element: no EOS within the time limit\n");
    ok = FALSE;
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  return ok;
}

/* Where the memory of buf lies, as CUDA sees it. */
static const gchar *
memory_kind (GstBuffer * buf)
{
  GstMapInfo map;
  struct cudaPointerAttributes attr;
  const gchar *kind = "unknown";

  /* mapped for the CPU it would be staged: ask the allocator */
  if (g_strcmp0 (gst_buffer_peek_memory (buf, 0)->allocator->mem_type,
          "gst.cuda.memory") == 0)
    return "CUDA device";
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return kind;
  if (cudaPointerGetAttributes (&attr, map.data) == cudaSuccess)
    kind = attr.type == cudaMemoryTypeHost ? "pinned" :
        attr.type == cudaMemoryTypeUnregistered ? "pageable" :
        attr.type == cudaMemoryTypeManaged ? "managed" : "device";
  (void) cudaGetLastError ();
  gst_buffer_unmap (buf, &map);
  return kind;
}

typedef enum
{
  MEM_POOL,                     /* the pool cudaconvolve proposes */
  MEM_PAGEABLE,                 /* g_malloc */
  MEM_CUDA,                     /* memory:CUDAMemory, its CUDA pool */
} Memory;

typedef struct
{
  gboolean ran;
  gboolean pinned;              /* the upstream buffers are page-locked */
  gdouble fps;
  gint64 t_start, t_end;        /* the timed frames' window, monotonic us */
  gchar note[160];
} Result;

/* Where pipelines run at once wait for each other before their first
 * frame: n of them. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gint n, waiting;
} Gate;

static void
gate_pass (Gate * g)
{
  if (!g)
    return;
  g_mutex_lock (&g->lock);
  if (++g->waiting == g->n)
    g_cond_broadcast (&g->cond);
  while (g->waiting < g->n)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

/* One run of format at width x height through filter, buffers in memory
 * mem; with a gate, its frames start when every pipeline of the gate is
 * ready. */
static void
run_pipeline (GstVideoFormat format, gint width, gint height,
    const Filter * filter, Memory mem, gint n_frames, Gate * gate,
    Result * res)
{
  const gboolean use_pool = mem != MEM_PAGEABLE;
  GstElement *pipeline, *src, *conv, *sink;
  GstBufferPool *pool = NULL;
  GstBuffer *bufs[N_BUFFERS];
  GstVideoInfo info;
  GstCaps *caps;
  Counter counter;
  gchar *desc, *active = NULL;
  const gchar *kind;
  GError *err = NULL;
  gint i, n_warm = 30;
  gboolean pushed;
  GstFlowReturn flow;

  memset (res, 0, sizeof (*res));
  memset (&counter, 0, sizeof (counter));
  gst_video_info_set_format (&info, format, width, height);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  caps = gst_video_info_to_caps (&info);
  if (mem == MEM_CUDA)
    gst_caps_set_features (caps, 0,
        gst_caps_features_new ("memory:CUDAMemory", NULL));

  desc = g_strdup_printf ("appsrc name=src format=time block=true "
      "max-bytes=%" G_GSIZE_FORMAT " ! %s%s name=conv ! fakesink name=sink "
      "sync=false signal-handoffs=true", 3 * info.size, filter->props ?
      "cudaconvolve backend=cuda " : "identity", filter->props ?
      filter->props : "");
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!pipeline) {
    g_printerr ("bench-element: %s (are appsrc, fakesink and cudaconvolve "
        "on the plugin path?)\n", err ? err->message : "no pipeline");
    exit (1);
  }
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_object_set (src, "caps", caps, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), &counter);

  /* one pageable frame through, so the element is negotiated and can
   * answer the ALLOCATION query */
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bufs[0] = gst_buffer_new_wrapped (g_malloc (info.size), info.size);
  fill_frame (bufs[0], &info, 0);
  pushed = push (src, bufs[0]);
  gst_buffer_unref (bufs[0]);
  if (!pushed ||
      gst_element_get_state (pipeline, NULL, NULL,
          30 * GST_SECOND) != GST_STATE_CHANGE_SUCCESS) {
    check_bus (pipeline, 0, FALSE);
    g_printerr ("bench-element: the pipeline did not reach PLAYING\n");
    exit (1);
  }
  if (filter->props) {
    g_object_get (conv, "active-backend", &active, NULL);
    if (g_strcmp0 (active, "cuda") != 0) {
      g_printerr ("bench-element: cudaconvolve runs on \"%s\", not cuda\n",
          active);
      exit (1);
    }
  }
  g_free (active);

  if (use_pool) {
    GstQuery *query = gst_query_new_allocation (caps, TRUE);
    GstPad *pad = gst_element_get_static_pad (src, "src");
    GstStructure *config;
    guint size = 0, min = 0, max = 0;

    if (gst_pad_peer_query (pad, query) &&
        gst_query_get_n_allocation_pools (query) > 0)
      gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min,
          &max);
    gst_object_unref (pad);
    gst_query_unref (query);
    if (!pool) {
      g_snprintf (res->note, sizeof (res->note),
          "cudaconvolve proposed no buffer pool");
      goto done;
    }
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, MAX (size, info.size),
        N_BUFFERS, 0);
    if (gst_buffer_pool_has_option (pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config) ||
        !gst_buffer_pool_set_active (pool, TRUE)) {
      g_snprintf (res->note, sizeof (res->note),
          "the proposed pool could not be configured or activated");
      gst_object_unref (pool);
      pool = NULL;
      goto done;
    }
    for (i = 0; i < N_BUFFERS; i++) {
      if (gst_buffer_pool_acquire_buffer (pool, &bufs[i], NULL) !=
          GST_FLOW_OK) {
        g_printerr ("bench-element: could not acquire a pool buffer\n");
        exit (1);
      }
    }
    kind = memory_kind (bufs[0]);
    g_snprintf (res->note, sizeof (res->note), "%s (%s), %s memory",
        G_OBJECT_TYPE_NAME (pool), gst_buffer_peek_memory (bufs[0],
            0)->allocator->mem_type, kind);
  } else {
    for (i = 0; i < N_BUFFERS; i++)
      bufs[i] = gst_buffer_new_wrapped (g_malloc (info.size), info.size);
    kind = memory_kind (bufs[0]);
    g_snprintf (res->note, sizeof (res->note), "g_malloc, %s memory", kind);
  }
  res->pinned = g_str_equal (kind, "pinned");
  for (i = 0; i < N_BUFFERS; i++)
    fill_frame (bufs[i], &info, i + 1);

  /* 1 negotiation frame, then warm-up, then the timed frames */
  counter.start_at = 1 + n_warm;
  counter.end_at = 1 + n_warm + n_frames;
  gate_pass (gate);
  for (i = 0; i < n_warm + n_frames; i++) {
    if (!push (src, bufs[i % N_BUFFERS])) {
      check_bus (pipeline, 0, FALSE);
      g_printerr ("bench-element: push failed\n");
      exit (1);
    }
  }
  g_signal_emit_by_name (src, "end-of-stream", &flow);
  if (!check_bus (pipeline, 120 * GST_SECOND, TRUE))
    exit (1);
  if (counter.count != counter.end_at || counter.t_end <= counter.t_start) {
    g_printerr ("bench-element: %d of %d frames reached the sink\n",
        counter.count, counter.end_at);
    exit (1);
  }
  res->ran = TRUE;
  res->t_start = counter.t_start;
  res->t_end = counter.t_end;
  res->fps = (gdouble) n_frames * 1e6 / (counter.t_end -
      counter.t_start);
  for (i = 0; i < N_BUFFERS; i++)
    gst_buffer_unref (bufs[i]);

done:
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  gst_object_unref (src);
  gst_object_unref (conv);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  gst_caps_unref (caps);
}

typedef struct
{
  const Filter *filter;
  Memory mem;
  gint n_frames;
  Gate *gate;
  Result res;
} Job;

static gpointer
run_job (gpointer data)
{
  Job *j = data;

  run_pipeline (GST_VIDEO_FORMAT_NV12, 1920, 1080, j->filter, j->mem,
      j->n_frames, j->gate, &j->res);
  return NULL;
}

/* Frames/s of n 1080p NV12 pipelines in one process, each in its own
 * thread, started together: all their frames over the time from the
 * first timed frame of any to the last of all.  0 if one did not run. */
static gdouble
pipelines_at_once (gint n, const Filter * filter, Memory mem, gint n_frames)
{
  Job *jobs = g_new0 (Job, n);
  GThread **threads = g_new (GThread *, n);
  Gate gate;
  gint64 t0 = G_MAXINT64, t1 = 0;
  gboolean ran = TRUE;
  gint i;

  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  gate.n = n;
  gate.waiting = 0;
  for (i = 0; i < n; i++) {
    jobs[i].filter = filter;
    jobs[i].mem = mem;
    jobs[i].n_frames = n_frames;
    jobs[i].gate = &gate;
    threads[i] = g_thread_new ("pipeline", run_job, &jobs[i]);
  }
  for (i = 0; i < n; i++) {
    g_thread_join (threads[i]);
    ran &= jobs[i].res.ran;
    t0 = MIN (t0, jobs[i].res.t_start);
    t1 = MAX (t1, jobs[i].res.t_end);
    if (!jobs[i].res.ran)
      g_printerr ("bench-element: a pipeline did not run: %s\n",
          jobs[i].res.note);
  }
  g_mutex_clear (&gate.lock);
  g_cond_clear (&gate.cond);
  g_free (threads);
  g_free (jobs);
  return ran && t1 > t0 ? (gdouble) n * n_frames * 1e6 / (t1 - t0) : 0.0;
}

int
main (int argc, char **argv)
{
  static const gint sizes[][2] = { {1920, 1080}, {3840, 2160} };
  struct cudaDeviceProp prop;
  Pcie pcie;
  gint dev, drv = 0, rt = 0, z, v, i, runs;
  gchar date[64];
  time_t now = time (NULL);

  gst_init (&argc, &argv);
  for (i = 1; i < argc; i++) {
    if (g_str_has_prefix (argv[i], "--frames="))
      n_frames_arg = atoi (argv[i] + 9);
    else if (g_str_has_prefix (argv[i], "--runs="))
      n_runs_arg = CLAMP (atoi (argv[i] + 7), 1, RUNS_MAX);
    else if (g_str_equal (argv[i], "--system-only"))
      system_only = TRUE;
    else {
      g_print ("usage: %s [--frames=N] [--runs=N] [--system-only]\n",
          argv[0]);
      return 2;
    }
  }
  runs = n_runs_arg > 0 ? n_runs_arg : RUNS;
  if (cuconv_device_count () == 0) {
    g_print ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  CHECK (cudaGetDevice (&dev));
  CHECK (cudaGetDeviceProperties (&prop, dev));
  CHECK (cudaDriverGetVersion (&drv));
  CHECK (cudaRuntimeGetVersion (&rt));
  strftime (date, sizeof (date), "%Y-%m-%d %H:%M UTC", gmtime (&now));

  measure_pcie (&pcie);

  g_print ("## bench-element\n\n");
  g_print ("- GPU: %s (sm_%d%d), driver API version %d.%d, CUDA runtime "
      "%d.%d, %s\n", prop.name, prop.major, prop.minor, drv / 1000,
      (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, gst_version_string ());
  g_print ("- date: %s\n", date);
  g_print ("- pipeline: appsrc (%d pre-filled I420 buffers pushed again and "
      "again) ! cudaconvolve backend=cuda kernel=gaussian radius=2 ! "
      "fakesink sync=false; frames/s counted at the sink after 30 warm-up "
      "frames\n", N_BUFFERS);
  g_print ("- PCIe, %zu MiB copies, median of %d: pinned H2D %.1f GB/s and "
      "D2H %.1f GB/s concurrently on two streams (alone: %.1f / %.1f); "
      "pageable H2D %.1f, D2H %.1f GB/s (cudaMemcpy)\n", PCIE_BYTES >> 20,
      PCIE_REPS, pcie.pinned_up, pcie.pinned_down, pcie.pinned_up_alone,
      pcie.pinned_down_alone, pcie.pageable_up, pcie.pageable_down);
  g_print ("- PCIe limit for B = w * h * 3 / 2 bytes each way, for the "
      "memory the row's upstream buffers are in: pinned (upload and "
      "download overlap) = min(H2D, D2H) / B; pageable (serial) = "
      "1 / (B / H2D + B / D2H)\n\n");
  g_print ("| size | upstream memory | frames/s | us/frame | PCIe limit "
      "frames/s | %% of limit |\n|---|---|---:|---:|---:|---:|\n");

  for (z = 0; z < 2; z++) {
    gint w = sizes[z][0], h = sizes[z][1];
    gdouble b = (gdouble) w * h * 3 / 2;
    gint n_frames = n_frames_arg > 0 ? n_frames_arg : (z == 0 ? 600 : 240);

    /* the proposed pool, pageable memory, the proposed pool with 8
     * regions of 64 to 256 pixels */
    for (v = 0; v < 3; v++) {
      gboolean use_pool = v != 1;
      Filter filter = radius2;
      gchar *props = NULL;
      gdouble limit;
      Result res;

      if (v == 2)
        filter.props = props = regions_props (radius2.props, 8, 64, 256, w,
            h);
      run_pipeline (GST_VIDEO_FORMAT_I420, w, h, &filter,
          use_pool ? MEM_POOL : MEM_PAGEABLE, n_frames, NULL, &res);
      g_free (props);
      /* the ceiling of the memory the buffers are really in: a proposed
       * pool that is not pinned is held to the pageable one */
      if (res.ran ? res.pinned : use_pool)
        limit = MIN (pcie.pinned_up, pcie.pinned_down) * 1e9 / b;
      else
        limit = 1.0 / (b / (pcie.pageable_up * 1e9) +
            b / (pcie.pageable_down * 1e9));
      if (!res.ran)
        g_print ("| %dx%d | proposed pool: %s | n/a | n/a | %.0f | n/a |\n",
            w, h, res.note, limit);
      else
        g_print ("| %dx%d | %s: %s | %.1f | %.0f | %.0f | %.0f%% |\n", w, h,
            v == 2 ? "proposed pool, region=roi (8 regions of 64 to 256 "
            "pixels)" : use_pool ? "proposed pool" : "pageable", res.note,
            res.fps, 1e6 / res.fps, limit, 100.0 * res.fps / limit);
    }
  }

  if (system_only)
    return 0;
  g_print ("\n### Frames already in CUDA memory\n\n");
  g_print ("appsrc (caps video/x-raw(memory:CUDAMemory), %d buffers from "
      "the GstCudaBufferPool cudaconvolve proposes, pushed again and again) "
      "! cudaconvolve backend=cuda FILTER ! fakesink sync=false. Kernel "
      "alone: the engine on the same frame in cudaMalloc "
      "memory as the element calls it (cuconv_device_frames_filter ()), "
      "median of %d, CUDA events recorded before the call and "
      "after it (the host's dispatch and the launch latency included); "
      "host us a call: the host's time in the call (the dispatch and "
      "the launches), median of %d calls each made with the GPU idle. "
      "Each row %d runs, a kernel-alone figure beside each: the medians, "
      "and the overhead's range. The first row of each size is the "
      "pipeline without cudaconvolve (appsrc ! identity ! fakesink, "
      "system-memory buffers): what the harness costs a frame.\n\n",
      N_BUFFERS, KERNEL_REPS, HOST_REPS, runs);
  g_print ("| size | format | FILTER | frames/s | us/frame | kernel alone "
      "us | host us a call | element overhead us/frame | overhead min to "
      "max | memory |\n|---|---|---|---:|---:|---:|---:|---:|---|---|\n");
  for (z = 0; z < 2; z++) {
    static const struct
    {
      GstVideoFormat format;
      const Filter *filter;
      gboolean big_only;
    } rows[] = {
      {GST_VIDEO_FORMAT_I420, &bare, FALSE},
      {GST_VIDEO_FORMAT_I420, &radius2, FALSE},
      {GST_VIDEO_FORMAT_NV12, &radius2, FALSE},
      {GST_VIDEO_FORMAT_I420, &sigma64, TRUE},
    };
    gint w = sizes[z][0], h = sizes[z][1];
    gint n_frames = n_frames_arg > 0 ? n_frames_arg : 3000;

    for (v = 0; v < (gint) G_N_ELEMENTS (rows); v++) {
      const Filter *filter = rows[v].filter;
      const gchar *fmt = gst_video_format_to_string (rows[v].format);
      GstVideoInfo info;
      Result res;
      double k_us[RUNS_MAX], host[RUNS_MAX], fps[RUNS_MAX], over[RUNS_MAX];
      double fps_med, over_med;

      if (rows[v].big_only && z == 0)
        continue;
      gst_video_info_set_format (&info, rows[v].format, w, h);
      for (i = 0; i < runs; i++) {
        k_us[i] = host[i] = 0.0;
        if (filter->props)
          k_us[i] = kernel_alone_us (&info, filter, &host[i]);
        run_pipeline (rows[v].format, w, h, filter, filter->props ?
            MEM_CUDA : MEM_PAGEABLE, n_frames, NULL, &res);
        if (!res.ran)
          break;
        fps[i] = res.fps;
        over[i] = 1e6 / res.fps - k_us[i];
      }
      if (!res.ran) {
        g_print ("| %dx%d | %s | %s | n/a | n/a | %.1f | %.1f | n/a | n/a | "
            "%s |\n", w, h, fmt, filter->props ? filter->props : "none",
            k_us[i], host[i], res.note);
        continue;
      }
      /* median () sorts: over[0] and over[runs - 1] are then the range */
      fps_med = median (fps, runs);
      over_med = median (over, runs);
      if (!filter->props) {
        g_print ("| %dx%d | %s | none: appsrc ! identity ! fakesink | %.0f | "
            "%.1f | | | | | %s |\n", w, h, fmt, fps_med, 1e6 / fps_med,
            res.note);
        continue;
      }
      g_print ("| %dx%d | %s | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f "
          "to %.1f | %s |\n", w, h, fmt, filter->props, fps_med,
          1e6 / fps_med, median (k_us, runs), median (host, runs), over_med,
          over[0], over[runs - 1], res.note);
    }
  }

  g_print ("\n### The host's time a call, per path\n\n");
  g_print ("3840x2160 I420 in cudaMalloc memory through the engine as the "
      "element calls it: the GPU's time a frame (CUDA events, median of %d) "
      "and the host's time in the call (median of %d calls, each made with "
      "the GPU idle). The filters take the engine's paths in turn "
      "(docs/design.md, \"The dispatch\").\n\n", KERNEL_REPS, HOST_REPS);
  g_print ("| filter | GPU us a frame | host us a call |\n|---|---:|---:|\n");
  for (v = 0; v < (gint) G_N_ELEMENTS (paths); v++) {
    GstVideoInfo info;
    double k_us, host_us;

    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, 3840, 2160);
    k_us = kernel_alone_us (&info, &paths[v], &host_us);
    g_print ("| %s | %.1f | %.1f |\n", paths[v].props, k_us, host_us);
  }

  g_print ("\n### Pipelines at once\n\n");
  g_print ("N pipelines appsrc ! cudaconvolve backend=cuda kernel=gaussian "
      "radius=2 ! fakesink in one process, a thread each, 1920x1080 NV12, "
      "%d frames each after 30 warm-up frames, started together: frames/s "
      "of all together (their frames over the time from the first timed "
      "frame to the last), and the element's share of that time against "
      "the same N pipelines with identity in its place (system memory): "
      "1 - frames/s / identity's frames/s.\n\n", 600);
  g_print ("| pipelines | memory | frames/s, all | frames/s a pipeline | "
      "identity frames/s, all | element's share |\n"
      "|---:|---|---:|---:|---:|---:|\n");
  {
    static const gint counts[] = { 1, 8, 32 };

    for (v = 0; v < (gint) G_N_ELEMENTS (counts); v++) {
      const gint n = counts[v];
      const gdouble bare_fps = pipelines_at_once (n, &bare, MEM_PAGEABLE,
          600);

      for (i = 0; i < 2; i++) {
        const Memory mem = i == 0 ? MEM_CUDA : MEM_POOL;
        const gdouble fps = pipelines_at_once (n, &radius2, mem, 600);

        g_print ("| %d | %s | %.0f | %.0f | %.0f | %.0f%% |\n", n,
            mem == MEM_CUDA ? "CUDA memory" : "pinned system memory "
            "(the proposed pool)", fps, fps / n, bare_fps,
            bare_fps > 0 ? 100.0 * (1.0 - fps / bare_fps) : 0.0);
      }
    }
  }
  return 0;
}
