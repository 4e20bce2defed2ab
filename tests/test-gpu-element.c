/* gst-cudaconvolve: the element on the CUDA backend, through GstHarness.
 *
 * Frames of odd sizes in every format go through cudaconvolve backend=cuda
 * and are compared with cuconv_reference_frame () on the same input.
 * Tolerance: +-1 LSB per sample (the GPU may round differently where the
 * float sum lands on .5).  Property changes while playing must show on the
 * very next buffer.  Behind an upstream that is not live, frames in CUDA
 * memory and in pinned memory stay in flight one at a time, and come out
 * in order, filtered, on EOS, before serialized events and queries and
 * when nothing more comes; a flush drops them.  From GStreamer 1.24, a
 * frame whose writer is still at work on its own stream is read only once
 * that work is done.  The temporal denoise follows its definition over
 * sequences of frames in each memory, in flight or not.  Exits 77 (skip)
 * without a usable CUDA device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <cuda_runtime_api.h>

#include "cuconv.h"
#include "cuconv-cuda.h"
#include "frame-check.h"

#define EXIT_SKIP 77
#define SEED 20240611

static const gchar *formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "I420_12LE", "P010_10LE", "P016_LE", "Y444_16LE", "RGBA",
  "BGRA", "RGBx", "BGRx", "AYUV"
};

/* One CUDA context for every harness, as the elements of a pipeline
 * share one: a context made for each of the run's hundreds of harnesses
 * would take most of its time. */
static GstCudaContext *shared_context;

/* Over the whole run, for the summary line. */
static guint64 total_samples, total_off_by_one;

static GstHarness *
harness_new_cuda (GstElement ** element)
{
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstHarness *h;

  fail_unless (e != NULL, "cudaconvolve not found: is GST_PLUGIN_PATH set?");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  if (shared_context) {
    GstContext *c = gst_context_new_cuda_context (shared_context);

    gst_element_set_context (e, c);
    gst_context_unref (c);
  }
  h = gst_harness_new_with_element (e, "sink", "src");
  *element = e;
  gst_object_unref (e);
  return h;
}

/* Compares out with the reference's result for s and planes on in, to 1
 * LSB.  Returns the number of samples off by more than 1; with
 * must_match, fails on any and counts the samples into the run's totals. */
static guint64
compare_planes_with_reference (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, CuconvPlanes planes,
    gboolean must_match, const gchar * what)
{
  gchar first[160];
  guint64 bad = frame_check_compare_planes (info, in, out, s, planes, 1,
      first, sizeof (first), must_match ? &total_samples : NULL,
      must_match ? &total_off_by_one : NULL);

  if (must_match)
    fail_unless (bad == 0, "%s %s %dx%d: %" G_GUINT64_FORMAT " samples "
        "differ from the reference by more than 1, the first at %s", what,
        GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), bad, first);
  return bad;
}

static guint64
compare_with_reference (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, gboolean must_match,
    const gchar * what)
{
  return compare_planes_with_reference (info, in, out, s, CUCONV_PLANES_AUTO,
      must_match, what);
}

static void
check_active_backend (GstElement * e, const gchar * want)
{
  gchar *active = NULL;

  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, want);
  g_free (active);
}

/* Pushes a random frame and checks the output against the reference with
 * the element's current settings; returns the input and output for more
 * checks (the caller unrefs them). */
static void
push_and_check (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GRand * rand, gboolean padded, const gchar * what, GstBuffer ** in_out,
    GstBuffer ** out_out)
{
  GstBuffer *in, *out;
  CuconvSettings s;

  in = frame_check_buffer_random (info, rand, padded);
  frame_check_element_settings (e, &s);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL, "%s: no output buffer", what);
  fail_if (out == in, "%s: passed through", what);
  compare_planes_with_reference (info, in, out, &s,
      frame_check_element_planes (e), TRUE, what);
  if (in_out)
    *in_out = in;
  else
    gst_buffer_unref (in);
  if (out_out)
    *out_out = out;
  else
    gst_buffer_unref (out);
}

/* Sets "name=value name=value ..." on e, as gst-launch-1.0 would. */
static void
set_props (GstElement * e, const gchar * props)
{
  gchar **kv = g_strsplit (props, " ", -1);
  guint i;

  for (i = 0; kv[i]; i++) {
    gchar *eq = strchr (kv[i], '=');

    if (!eq)
      continue;
    *eq = '\0';
    gst_util_set_object_arg (G_OBJECT (e), kv[i], eq + 1);
  }
  g_strfreev (kv);
}

/* Every format, odd sizes, frames of every kernel type and planes choice,
 * in the default layout and padded. */
GST_START_TEST (test_formats_cuda_match_reference)
{
  static const gint sizes[][2] = { {1, 1}, {3, 7}, {37, 19}, {385, 289},
  {1921, 1081}
  };
  /* gst-launch syntax, set in order on top of the previous frame's */
  static const gchar *frames[] = {
    "kernel=gaussian border=mirror radius=3 sigma=0",
    "kernel=box border=wrap radius=7",
    "kernel=gaussian border=clamp radius=0 sigma=2.5 sigma-y=0.7",
    "kernel=gaussian border=zero radius=16 sigma=0 sigma-y=0",
    "kernel=sharpen border=mirror radius=2 amount=1.5",
    "kernel=sobel border=clamp radius=1",
    "kernel=laplacian border=wrap radius=3 planes=all",
    "kernel=custom border=zero kernel-x=<1,2,1> kernel-y=<-1,0,2,0,-1> "
        "normalize=false planes=luma",
    "kernel=custom border=mirror matrix=<<0,-1,0>,<-1,5,-1>,<0,-1,3>> "
        "planes=chroma",
    "kernel=bilateral matrix=<> border=wrap radius=4 sigma-range=30 "
        "planes=all",
    "kernel=bilateral border=zero radius=0 sigma=1.5 sigma-y=3 "
        "sigma-range=12 planes=auto",
    "kernel=custom matrix=<> kernel-x=<> kernel-y=<> kernel=box radius=1 "
        "planes=auto",
  };
  GRand *rand = g_rand_new_with_seed (SEED);
  guint f, z, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      GstElement *e;
      GstHarness *h = harness_new_cuda (&e);
      GstVideoInfo info;

      frame_check_info_init (&info, formats[f], sizes[z][0], sizes[z][1]);
      gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
      for (i = 0; i < G_N_ELEMENTS (frames); i++) {
        set_props (e, frames[i]);
        /* the bilateral's reference takes seconds a large frame: the
         * smaller sizes cover its borders and layouts */
        if (z == G_N_ELEMENTS (sizes) - 1 && strstr (frames[i], "bilateral"))
          continue;
        push_and_check (h, e, &info, rand, i % 2 == 1, frames[i], NULL,
            NULL);
      }
      check_active_backend (e, "cuda");
      gst_harness_teardown (h);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* A property changed while playing takes effect on the next buffer: its
 * output matches the new settings and not the old ones. */
GST_START_TEST (test_change_while_playing_cuda)
{
  GRand *rand = g_rand_new_with_seed (SEED + 1);
  GstElement *e;
  GstHarness *h = harness_new_cuda (&e);
  GstVideoInfo info;
  GstBuffer *in, *out;
  CuconvSettings before;
  guint i;
  static const struct
  {
    const gchar *prop, *value;
  } changes[] = {
    {"radius", "9"},
    {"kernel", "box"},
    {"border", "wrap"},
    {"radius", "0"},            /* now from sigma */
    {"sigma", "6.0"},
    {"kernel", "gaussian"},
    {"border", "zero"},
    {"radius", "3"},            /* sigma 6 truncated to 3 */
  };

  frame_check_info_init (&info, "I420", 385, 289);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  g_object_set (e, "radius", 2, "sigma", 1.2, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "border", "mirror");
  push_and_check (h, e, &info, rand, FALSE, "start", NULL, NULL);
  check_active_backend (e, "cuda");

  for (i = 0; i < G_N_ELEMENTS (changes); i++) {
    gchar *what = g_strdup_printf ("after %s=%s", changes[i].prop,
        changes[i].value);

    frame_check_element_settings (e, &before);
    gst_util_set_object_arg (G_OBJECT (e), changes[i].prop, changes[i].value);
    push_and_check (h, e, &info, rand, FALSE, what, &in, &out);
    fail_unless (compare_with_reference (&info, in, out, &before, FALSE,
            what) > 0, "%s: the output still matches the old settings", what);
    gst_buffer_unref (in);
    gst_buffer_unref (out);
    g_free (what);
  }

  /* The backend too: to the CPU and back. */
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  push_and_check (h, e, &info, rand, FALSE, "backend=cpu", NULL, NULL);
  check_active_backend (e, "cpu");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  push_and_check (h, e, &info, rand, FALSE, "backend=cuda", NULL, NULL);
  check_active_backend (e, "cuda");

  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* A caps change mid-stream (new size and format) reallocates the engine's
 * buffers. */
GST_START_TEST (test_caps_change_cuda)
{
  GRand *rand = g_rand_new_with_seed (SEED + 2);
  GstElement *e;
  GstHarness *h = harness_new_cuda (&e);
  GstVideoInfo info;

  g_object_set (e, "radius", 5, NULL);
  frame_check_info_init (&info, "NV12", 641, 361);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  push_and_check (h, e, &info, rand, FALSE, "NV12 641x361", NULL, NULL);
  frame_check_info_init (&info, "Y444", 97, 1031);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  push_and_check (h, e, &info, rand, TRUE, "Y444 97x1031", NULL, NULL);
  frame_check_info_init (&info, "NV12", 641, 361);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  push_and_check (h, e, &info, rand, FALSE, "NV12 641x361 again", NULL, NULL);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* The mem_type of cudaconvolve's pinned host memory. */
#define PINNED_MEMORY_TYPE "CudaPinnedMemory"

static gboolean
buffer_is_pinned (GstBuffer * buf)
{
  guint i;

  for (i = 0; i < gst_buffer_n_memory (buf); i++)
    if (!gst_memory_is_type (gst_buffer_peek_memory (buf, i),
            PINNED_MEMORY_TYPE))
      return FALSE;
  return gst_buffer_n_memory (buf) > 0;
}

/* Asks the element for a pool as upstream does, checks that it and the
 * first allocation param are pinned memory, and returns the pool
 * configured for caps and active. */
static GstBufferPool *
pinned_pool_from_query (GstHarness * h, GstCaps * caps, gsize frame_size)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstBufferPool *pool = NULL;
  GstStructure *config;
  GstMemory *mem;
  guint size, min, max;

  fail_unless (gst_pad_peer_query (h->srcpad, query));

  /* for upstream that allocates without a pool */
  fail_unless (gst_query_get_n_allocation_params (query) > 0);
  gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  fail_unless (allocator != NULL, "no allocator proposed");
  fail_unless_equals_string (allocator->mem_type, PINNED_MEMORY_TYPE);
  mem = gst_allocator_alloc (allocator, 1000, &params);
  fail_unless (mem != NULL && gst_memory_is_type (mem, PINNED_MEMORY_TYPE));
  gst_memory_unref (mem);
  gst_object_unref (allocator);

  fail_unless (gst_query_get_n_allocation_pools (query) > 0);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  fail_unless (pool != NULL, "no pool proposed");
  fail_unless (size >= frame_size);
  fail_unless (gst_buffer_pool_has_option (pool,
          GST_BUFFER_POOL_OPTION_VIDEO_META));
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_allocator (config, &allocator, NULL);
  fail_unless (allocator != NULL, "the pool has no allocator");
  fail_unless_equals_string (allocator->mem_type, PINNED_MEMORY_TYPE);
  /* as a source would: its own buffer counts, the proposed allocator */
  gst_buffer_pool_config_set_params (config, caps, size, 2, 0);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  gst_query_unref (query);
  return pool;
}

/* A frame of random bytes from pool. */
static GstBuffer *
pool_buffer_random (GstBufferPool * pool, GRand * rand)
{
  GstBuffer *buf = NULL;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (buffer_is_pinned (buf), "a pool buffer is not pinned");
  frame_check_fill_random (buf, rand);
  return buf;
}

/* Share, copy and span behave as for system memory, on the same bytes. */
static void
check_memory_ops (GstBuffer * buf)
{
  GstMemory *mem = gst_buffer_peek_memory (buf, 0), *a, *b, *copy;
  GstMapInfo whole, part;
  gsize offset = 99;

  fail_unless (mem->size >= 400);
  fail_unless (gst_memory_map (mem, &whole, GST_MAP_READ));

  a = gst_memory_share (mem, 3, 100);
  b = gst_memory_share (mem, 103, 200);
  fail_unless (gst_memory_is_type (a, PINNED_MEMORY_TYPE));
  fail_unless (gst_memory_map (a, &part, GST_MAP_READ));
  fail_unless_equals_int (part.size, 100);
  fail_unless (part.data == whole.data + 3, "a share copied the data");
  gst_memory_unmap (a, &part);
  fail_unless (gst_memory_is_span (a, b, &offset));
  fail_unless_equals_int (offset, 3);
  fail_if (gst_memory_is_span (b, a, NULL));

  copy = gst_memory_copy (mem, 7, 300);
  fail_unless (gst_memory_is_type (copy, PINNED_MEMORY_TYPE));
  fail_unless (gst_memory_map (copy, &part, GST_MAP_READ));
  fail_unless_equals_int (part.size, 300);
  fail_unless (part.data != whole.data + 7);
  fail_unless (memcmp (part.data, whole.data + 7, 300) == 0);
  gst_memory_unmap (copy, &part);

  gst_memory_unmap (mem, &whole);
  gst_memory_unref (copy);
  gst_memory_unref (b);
  gst_memory_unref (a);
}

/* backend=cuda proposes upstream a pool of pinned memory and filters into
 * pinned buffers; frames from that pool match the reference.  Buffers
 * still held after the element is gone stay valid and are freed then. */
GST_START_TEST (test_pinned_pool_cuda)
{
  static const struct
  {
    const gchar *format;
    gint w, h;
  } cases[] = {
    {"GRAY8", 385, 289}, {"I420", 385, 289}, {"YV12", 37, 19},
    {"NV12", 1921, 1081}, {"NV21", 385, 289}, {"Y42B", 385, 289},
    {"Y444", 3, 7},
  };
  GRand *rand = g_rand_new_with_seed (SEED + 3);
  GstBuffer *kept_in = NULL, *kept_out = NULL;
  GstVideoInfo kept_info;
  CuconvSettings kept_settings;
  guint c, i;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    GstElement *e;
    GstHarness *h = harness_new_cuda (&e);
    GstBufferPool *pool;
    GstVideoInfo info;
    GstCaps *caps;

    g_object_set (e, "radius", 4, NULL);
    gst_util_set_object_arg (G_OBJECT (e), "border", "mirror");
    frame_check_info_init (&info, cases[c].format, cases[c].w, cases[c].h);
    caps = gst_video_info_to_caps (&info);
    gst_harness_set_src_caps (h, gst_caps_ref (caps));
    pool = pinned_pool_from_query (h, caps, info.size);

    for (i = 0; i < 3; i++) {
      GstBuffer *in = pool_buffer_random (pool, rand), *out;
      CuconvSettings s;

      if (c == 0 && i == 0)
        check_memory_ops (in);
      frame_check_element_settings (e, &s);
      out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      fail_unless (out != NULL && out != in);
      compare_with_reference (&info, in, out, &s, TRUE, "pinned pool");
      fail_unless (buffer_is_pinned (out), "the output is not pinned");
      check_active_backend (e, "cuda");
      if (c == G_N_ELEMENTS (cases) - 1 && i == 2) {
        kept_in = in;
        kept_out = out;
        kept_info = info;
        kept_settings = s;
      } else {
        gst_buffer_unref (in);
        gst_buffer_unref (out);
      }
    }

    fail_unless (gst_buffer_pool_set_active (pool, FALSE));
    gst_object_unref (pool);
    gst_caps_unref (caps);
    gst_harness_teardown (h);
  }

  /* The element, its engine and both pools are gone: the buffers still
   * read, and their memory is freed with them, in the element's CUDA
   * context, which their allocator keeps alive: it still allocates. */
  compare_with_reference (&kept_info, kept_in, kept_out, &kept_settings,
      TRUE, "after teardown");
  {
    GstMemory *mem = gst_allocator_alloc (gst_buffer_peek_memory (kept_out,
            0)->allocator, 4096, NULL);

    fail_unless (mem != NULL && gst_memory_is_type (mem, PINNED_MEMORY_TYPE),
        "the pinned allocator cannot allocate once the element is gone");
    gst_memory_unref (mem);
  }
  gst_buffer_unref (kept_in);
  gst_buffer_unref (kept_out);
  g_rand_free (rand);
}

GST_END_TEST;

/* Leaving the CUDA backend while playing goes back to system memory, and
 * returning to it to pinned memory, from the second frame on at the latest
 * (the switch happens while a frame is filtered, into a buffer already
 * taken). */
GST_START_TEST (test_pinned_backend_switch_cuda)
{
  static const struct
  {
    const gchar *backend;
    gboolean pinned;
  } steps[] = { {"cuda", TRUE}, {"cpu", FALSE}, {"cuda", TRUE} };
  GRand *rand = g_rand_new_with_seed (SEED + 4);
  GstElement *e;
  GstHarness *h = harness_new_cuda (&e);
  GstVideoInfo info;
  GstBuffer *out;
  guint i, f;

  frame_check_info_init (&info, "I420", 385, 289);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  for (i = 0; i < G_N_ELEMENTS (steps); i++) {
    gst_util_set_object_arg (G_OBJECT (e), "backend", steps[i].backend);
    for (f = 0; f < 2; f++) {
      push_and_check (h, e, &info, rand, FALSE, steps[i].backend, NULL,
          &out);
      if (f == 1)
        fail_unless_equals_int (buffer_is_pinned (out), steps[i].pinned);
      gst_buffer_unref (out);
    }
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Pushes in through e (its region settings) and checks: the pixels the
 * regions leave are the input's, exactly; the ones they filter are within
 * 1 of the reference (whole, the output of region=frame on in, checked
 * against the reference by the caller, standing in for the others). */
static void
check_regions_cuda (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GstBuffer * in, GstBuffer * whole, gint mode, const FrameCheckBox * boxes,
    guint n, const gchar * what)
{
  GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  GstBuffer *mixed;
  CuconvSettings s;
  gchar first[96] = "";
  guint64 bad;

  fail_unless (out != NULL, "%s: no output", what);
  bad = frame_check_region_pixels (info, out, in, mode, boxes, n, FALSE, FALSE, first,
      sizeof (first));
  fail_unless (bad == 0, "%s %s: %" G_GUINT64_FORMAT " pixels the regions "
      "leave differ from the input, the first at %s", what,
      GST_VIDEO_INFO_NAME (info), bad, first);
  mixed = gst_buffer_copy_deep (out);
  frame_check_region_pixels (info, mixed, whole, mode, boxes, n, FALSE, TRUE, NULL, 0);
  frame_check_element_settings (e, &s);
  compare_planes_with_reference (info, in, mixed, &s,
      frame_check_element_planes (e), TRUE, what);
  gst_buffer_unref (mixed);
  gst_buffer_unref (out);
}

/* Regions on the CUDA backend in system memory: an ROI meta and fixed
 * rectangles (odd positions, overlapping, partly off the frame) in every
 * format, several kernels and borders, roi and outside-roi. */
GST_START_TEST (test_regions_cuda)
{
  static const gint sizes[][2] = { {37, 19}, {385, 289} };
  static const gchar *configs[] = {
    "kernel=gaussian border=mirror radius=3",
    "kernel=box border=wrap radius=7",
    "kernel=sharpen border=zero radius=2 amount=1.5",
    "kernel=sobel border=clamp radius=1",
    "kernel=custom matrix=<<0,-1,0>,<-1,5,-1>,<0,-1,3>> border=mirror",
    "kernel=bilateral border=clamp radius=2 sigma-range=25 matrix=<>",
  };
  GRand *rand = g_rand_new_with_seed (SEED + 10);
  guint f, z, c, m;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      const gint w = sizes[z][0], hh = sizes[z][1];
      /* the meta's box, then the fixed ones clipped by hand */
      FrameCheckBox boxes[] = { {w / 2, hh / 3, w / 4 + 1, hh / 5 + 1},
      {3, 2, 9, 7}, {0, 9, 6, 10}, {w - 7, 0, 7, 5}, {5, 4, 6, 6}
      };
      gchar *regions = g_strdup_printf ("<<3,2,9,7>,<-4,9,10,10>,"
          "<%d,-5,20,10>,<5,4,6,6>>", w - 7);
      GstElement *e;
      GstHarness *h = harness_new_cuda (&e);
      GstVideoInfo info;

      frame_check_info_init (&info, formats[f], w, hh);
      gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
      gst_util_set_object_arg (G_OBJECT (e), "regions", regions);
      for (c = 0; c < G_N_ELEMENTS (configs); c++) {
        for (m = CUCONV_REGION_INSIDE; m <= CUCONV_REGION_OUTSIDE; m++) {
          GstBuffer *in, *whole;

          set_props (e, "region=frame");
          set_props (e, configs[c]);
          push_and_check (h, e, &info, rand, c % 2, configs[c], &in, &whole);
          gst_buffer_add_video_region_of_interest_meta (in, "face",
              boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h);
          g_object_set (e, "region", m, NULL);
          check_regions_cuda (h, e, &info, in, whole, m, boxes,
              G_N_ELEMENTS (boxes), configs[c]);
          gst_buffer_unref (whole);
          gst_buffer_unref (in);
        }
      }
      check_active_backend (e, "cuda");
      g_free (regions);
      gst_harness_teardown (h);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Regions on frames from the pinned pool: enqueued whole on the GPU, the
 * region filter between upload and download, never the CPU's restore.
 * The same checks as in system memory. */
GST_START_TEST (test_regions_pinned_cuda)
{
  static const struct
  {
    const gchar *format;
    gint w, h;
  } cases[] = {
    {"GRAY8", 385, 289}, {"I420", 37, 19}, {"NV12", 385, 289},
    {"Y444", 64, 33},
  };
  static const gchar *configs[] = {
    "kernel=gaussian border=mirror radius=3",
    "kernel=box border=wrap radius=7",
    "kernel=sobel border=clamp radius=1",
  };
  GRand *rand = g_rand_new_with_seed (SEED + 11);
  guint c, k, m;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    const gint w = cases[c].w, hh = cases[c].h;
    FrameCheckBox boxes[] = { {w / 2, hh / 3, w / 4 + 1, hh / 5 + 1},
    {3, 2, 9, 7}, {0, 9, 6, 10}
    };
    GstElement *e;
    GstHarness *h = harness_new_cuda (&e);
    GstBufferPool *pool;
    GstVideoInfo info;
    GstCaps *caps;

    frame_check_info_init (&info, cases[c].format, w, hh);
    caps = gst_video_info_to_caps (&info);
    gst_harness_set_src_caps (h, gst_caps_ref (caps));
    pool = pinned_pool_from_query (h, caps, info.size);
    gst_util_set_object_arg (G_OBJECT (e), "regions",
        "<<3,2,9,7>,<-4,9,10,10>>");
    for (k = 0; k < G_N_ELEMENTS (configs); k++) {
      for (m = CUCONV_REGION_INSIDE; m <= CUCONV_REGION_OUTSIDE; m++) {
        GstBuffer *in = pool_buffer_random (pool, rand), *whole;
        CuconvSettings s;

        gst_buffer_add_video_region_of_interest_meta (in, "face",
            boxes[0].x, boxes[0].y, boxes[0].w, boxes[0].h);
        set_props (e, "region=frame");
        set_props (e, configs[k]);
        frame_check_element_settings (e, &s);
        whole = gst_harness_push_and_pull (h, gst_buffer_ref (in));
        fail_unless (whole != NULL && buffer_is_pinned (whole));
        compare_with_reference (&info, in, whole, &s, TRUE, configs[k]);
        g_object_set (e, "region", m, NULL);
        check_regions_cuda (h, e, &info, in, whole, m, boxes,
            G_N_ELEMENTS (boxes), configs[k]);
        gst_buffer_unref (whole);
        gst_buffer_unref (in);
      }
    }
    check_active_backend (e, "cuda");
    fail_unless (gst_buffer_pool_set_active (pool, FALSE));
    gst_object_unref (pool);
    gst_caps_unref (caps);
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* The frame in flight.  Frames come from the pool cudaconvolve proposes,
 * in page-locked host memory or in CUDA memory: both are filtered
 * asynchronously on the element's stream, and held one at a time behind
 * an upstream that is not live (a harness says it is live unless told). */
typedef enum
{
  FLIGHT_PINNED,
  FLIGHT_CUDA,
  FLIGHT_N_MEMORIES
} FlightMemory;

static const gchar *flight_memory_names[] = { "pinned memory", "CUDA memory" };

/* The memories whose frames are held in flight: from GStreamer 1.24 a
 * frame in CUDA memory goes downstream at once instead, its readers
 * ordered on its stream (test_cuda_memory_at_once). */
#if GST_CHECK_VERSION (1, 24, 0)
#define FLIGHT_HELD_MEMORIES FLIGHT_CUDA
#else
#define FLIGHT_HELD_MEMORIES FLIGHT_N_MEMORIES
#endif

#define FLIGHT_FRAMES 6
/* frame_check_info_init ()'s 30 frames/s */
#define FRAME_DURATION (GST_SECOND / 30)

static GstCaps *
flight_caps (const GstVideoInfo * info, FlightMemory mem)
{
  GstCaps *caps = gst_video_info_to_caps (info);

  if (mem == FLIGHT_CUDA)
    gst_caps_set_features (caps, 0,
        gst_caps_features_new ("memory:CUDAMemory", NULL));
  return caps;
}

static gboolean
buffer_is_in (GstBuffer * buf, FlightMemory mem)
{
  guint i;

  if (mem == FLIGHT_PINNED)
    return buffer_is_pinned (buf);
  for (i = 0; i < gst_buffer_n_memory (buf); i++)
    if (!gst_memory_is_type (gst_buffer_peek_memory (buf, i),
            "gst.cuda.memory"))
      return FALSE;
  return gst_buffer_n_memory (buf) > 0;
}

/* Asks the element for a pool as upstream does, and returns it configured
 * for caps and active; *min: the buffers the element asked for. */
static GstBufferPool *
flight_pool (GstHarness * h, GstCaps * caps, guint * min)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  GstStructure *config;
  guint size, max;

  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) > 0);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, min, &max);
  fail_unless (pool != NULL, "no pool proposed");
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, *min, 0);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  gst_query_unref (query);
  return pool;
}

/* Frame i of random bytes from pool, timestamped. */
static GstBuffer *
flight_buffer (GstBufferPool * pool, FlightMemory mem, GRand * rand, guint i)
{
  GstBuffer *buf = NULL;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (buffer_is_in (buf, mem), "a pool buffer is not in %s",
      flight_memory_names[mem]);
  frame_check_fill_random (buf, rand);
  GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

/* The test takes the element's stream lock while it pushes: the element's
 * idle watch, which pushes a frame left in flight when nothing follows,
 * waits meanwhile, so what comes out when is up to what the test pushes. */
static GstPad *
stream_lock (GstElement * e)
{
  GstPad *pad = gst_element_get_static_pad (e, "sink");

  GST_PAD_STREAM_LOCK (pad);
  return pad;
}

static void
stream_unlock (GstPad * pad)
{
  GST_PAD_STREAM_UNLOCK (pad);
  gst_object_unref (pad);
}

static void
push_ok (GstHarness * h, GstBuffer * buf)
{
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (buf)),
      GST_FLOW_OK);
}

static void
check_received (GstHarness * h, guint n, const gchar * what)
{
  guint got = gst_harness_buffers_received (h);

  fail_unless (got == n, "%s: %u frames came out, not %u", what, got, n);
}

/* LATENCY downstream of the element: live and min as given. */
static void
check_latency (GstHarness * h, gboolean live, GstClockTime min,
    const gchar * what)
{
  GstQuery *query = gst_query_new_latency ();
  GstClockTime qmin, qmax;
  gboolean qlive;

  fail_unless (gst_pad_peer_query (h->sinkpad, query));
  gst_query_parse_latency (query, &qlive, &qmin, &qmax);
  fail_unless (qlive == live, "%s: live %d", what, qlive);
  fail_unless (qmin == min, "%s: latency %" GST_TIME_FORMAT ", not %"
      GST_TIME_FORMAT, what, GST_TIME_ARGS (qmin), GST_TIME_ARGS (min));
  gst_query_unref (query);
}

static void
check_counts (GstElement * e, guint64 in, guint64 out)
{
  GstStructure *stats = NULL;
  guint64 v = 0;

  g_object_get (e, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "frames-in", &v));
  fail_unless_equals_uint64 (v, in);
  fail_unless (gst_structure_get_uint64 (stats, "frames-out", &v));
  fail_unless_equals_uint64 (v, out);
  gst_structure_free (stats);
}

/* Pulls the next output and checks it: in mem, timestamp pts, in's frame
 * filtered as s says. */
static void
pull_and_check (GstHarness * h, const GstVideoInfo * info, GstBuffer * in,
    GstClockTime pts, const CuconvSettings * s, FlightMemory mem,
    const gchar * what)
{
  GstBuffer *out = gst_harness_pull (h);

  fail_unless (out != NULL, "%s: no output", what);
  fail_unless (GST_BUFFER_PTS (out) == pts, "%s: pts %" GST_TIME_FORMAT
      " where %" GST_TIME_FORMAT " was next", what,
      GST_TIME_ARGS (GST_BUFFER_PTS (out)), GST_TIME_ARGS (pts));
  fail_unless (buffer_is_in (out, mem), "%s: the output is not in %s", what,
      flight_memory_names[mem]);
  compare_with_reference (info, in, out, s, TRUE, what);
  gst_buffer_unref (out);
}

/* A playing cudaconvolve radius=3 behind an upstream that is live or not,
 * with caps info in mem and the pool it proposes. */
typedef struct
{
  GstHarness *h;
  GstElement *e;
  GstVideoInfo info;
  GstBufferPool *pool;
  guint pool_min;
  CuconvSettings s;
  FlightMemory mem;
  const gchar *what;
} Flight;

static void
flight_caps_set (Flight * f, const gchar * format, gint w, gint h, gint fps_n)
{
  GstCaps *caps;

  frame_check_info_init (&f->info, format, w, h);
  GST_VIDEO_INFO_FPS_N (&f->info) = fps_n;
  caps = flight_caps (&f->info, f->mem);
  gst_harness_set_src_caps (f->h, gst_caps_ref (caps));
  if (f->pool) {
    gst_buffer_pool_set_active (f->pool, FALSE);
    gst_object_unref (f->pool);
  }
  f->pool = flight_pool (f->h, caps, &f->pool_min);
  gst_caps_unref (caps);
}

static void
flight_start (Flight * f, FlightMemory mem, gboolean live)
{
  memset (f, 0, sizeof (*f));
  f->mem = mem;
  f->what = flight_memory_names[mem];
  f->h = harness_new_cuda (&f->e);
  gst_harness_set_live (f->h, live);
  g_object_set (f->e, "radius", 3, NULL);
  flight_caps_set (f, "I420", 642, 362, 30);
  frame_check_element_settings (f->e, &f->s);
}

static void
flight_stop (Flight * f)
{
  gst_buffer_pool_set_active (f->pool, FALSE);
  gst_object_unref (f->pool);
  gst_harness_teardown (f->h);
}

/* Upstream not live: each frame is in flight until the next is enqueued,
 * then comes out filtered, in order; EOS brings the last one; the pool the
 * element proposes counts the frame it holds, LATENCY a frame more. */
GST_START_TEST (test_flight_order_and_eos)
{
  GRand *rand = g_rand_new_with_seed (SEED + 20);
  FlightMemory mem;
  guint i;

  for (mem = 0; mem < FLIGHT_HELD_MEMORIES; mem++) {
    GstBuffer *in[FLIGHT_FRAMES];
    Flight f;
    GstPad *lock;

    flight_start (&f, mem, FALSE);
    fail_unless (f.pool_min >= 1, "%s: the pool proposed has room for no "
        "frame in flight", f.what);
    lock = stream_lock (f.e);
    for (i = 0; i < FLIGHT_FRAMES; i++) {
      in[i] = flight_buffer (f.pool, mem, rand, i);
      push_ok (f.h, in[i]);
      /* frame i in flight, the ones before it out */
      check_received (f.h, i, f.what);
    }
    check_latency (f.h, FALSE, FRAME_DURATION, f.what);
    fail_unless (gst_harness_push_event (f.h, gst_event_new_eos ()));
    check_received (f.h, FLIGHT_FRAMES, f.what);
    stream_unlock (lock);

    for (i = 0; i < FLIGHT_FRAMES; i++) {
      pull_and_check (f.h, &f.info, in[i], i * FRAME_DURATION, &f.s, mem,
          f.what);
      gst_buffer_unref (in[i]);
    }
    check_counts (f.e, FLIGHT_FRAMES, FLIGHT_FRAMES);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* A flush drops the frame in flight: it never comes out, before the flush
 * or after it, and the next frame after the flush is held and filtered as
 * usual. */
GST_START_TEST (test_flight_flush)
{
  GRand *rand = g_rand_new_with_seed (SEED + 21);
  FlightMemory mem;
  guint i;

  for (mem = 0; mem < FLIGHT_HELD_MEMORIES; mem++) {
    GstBuffer *in[3], *after;
    GstSegment segment;
    Flight f;
    GstPad *lock;

    flight_start (&f, mem, FALSE);
    lock = stream_lock (f.e);
    for (i = 0; i < 3; i++) {
      in[i] = flight_buffer (f.pool, mem, rand, i);
      push_ok (f.h, in[i]);
    }
    check_received (f.h, 2, f.what);
    fail_unless (gst_harness_push_event (f.h, gst_event_new_flush_start ()));
    fail_unless (gst_harness_push_event (f.h,
            gst_event_new_flush_stop (TRUE)));
    gst_segment_init (&segment, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (f.h,
            gst_event_new_segment (&segment)));
    check_received (f.h, 2, f.what);
    after = flight_buffer (f.pool, mem, rand, 100);
    push_ok (f.h, after);
    check_received (f.h, 2, f.what);
    fail_unless (gst_harness_push_event (f.h, gst_event_new_eos ()));
    check_received (f.h, 3, f.what);
    stream_unlock (lock);

    for (i = 0; i < 2; i++)
      pull_and_check (f.h, &f.info, in[i], i * FRAME_DURATION, &f.s, mem,
          f.what);
    pull_and_check (f.h, &f.info, after, 100 * FRAME_DURATION, &f.s, mem,
        f.what);
    check_counts (f.e, 4, 3);
    for (i = 0; i < 3; i++)
      gst_buffer_unref (in[i]);
    gst_buffer_unref (after);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Serialized queries and events keep their order with the frames: the
 * frame in flight comes out before a DRAIN query is answered and before
 * new caps go on, and the frames after them are filtered with those caps.
 * With no framerate LATENCY adds nothing, though frames are held. */
GST_START_TEST (test_flight_serialized)
{
  GRand *rand = g_rand_new_with_seed (SEED + 22);
  FlightMemory mem;
  guint i;

  for (mem = 0; mem < FLIGHT_HELD_MEMORIES; mem++) {
    GstBuffer *in[5];
    GstVideoInfo info_a;
    CuconvSettings s_a;
    GstQuery *drain;
    Flight f;
    GstPad *lock;

    flight_start (&f, mem, FALSE);
    info_a = f.info;
    s_a = f.s;
    lock = stream_lock (f.e);
    for (i = 0; i < 2; i++) {
      in[i] = flight_buffer (f.pool, mem, rand, i);
      push_ok (f.h, in[i]);
    }
    check_received (f.h, 1, f.what);
    drain = gst_query_new_drain ();
    fail_unless (gst_pad_peer_query (f.h->srcpad, drain));
    gst_query_unref (drain);
    check_received (f.h, 2, f.what);
    in[2] = flight_buffer (f.pool, mem, rand, 2);
    push_ok (f.h, in[2]);
    check_received (f.h, 2, f.what);

    /* new caps, and a pool for them */
    flight_caps_set (&f, "NV12", 320, 242, 0);
    check_received (f.h, 3, f.what);
    for (i = 3; i < 5; i++) {
      in[i] = flight_buffer (f.pool, mem, rand, i);
      push_ok (f.h, in[i]);
    }
    check_received (f.h, 4, f.what);
    check_latency (f.h, FALSE, 0, f.what);
    fail_unless (gst_harness_push_event (f.h, gst_event_new_eos ()));
    check_received (f.h, 5, f.what);
    stream_unlock (lock);

    for (i = 0; i < 5; i++) {
      pull_and_check (f.h, i < 3 ? &info_a : &f.info, in[i],
          i * FRAME_DURATION, i < 3 ? &s_a : &f.s, mem, f.what);
      gst_buffer_unref (in[i]);
    }
    check_counts (f.e, 5, 5);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Behind a live upstream no frame is held: each comes out before the next
 * goes in (the idle watch cannot push meanwhile: the test holds the
 * stream lock), LATENCY is upstream's, and the pool proposed counts no
 * frame in flight. */
GST_START_TEST (test_flight_none_when_live)
{
  GRand *rand = g_rand_new_with_seed (SEED + 23);
  FlightMemory mem;
  guint i;

  for (mem = 0; mem < FLIGHT_N_MEMORIES; mem++) {
    GstBuffer *in[FLIGHT_FRAMES];
    Flight f;
    GstPad *lock;

    flight_start (&f, mem, TRUE);
    fail_unless_equals_int (f.pool_min, 0);
    lock = stream_lock (f.e);
    for (i = 0; i < FLIGHT_FRAMES; i++) {
      in[i] = flight_buffer (f.pool, mem, rand, i);
      push_ok (f.h, in[i]);
      check_received (f.h, i + 1, f.what);
    }
    check_latency (f.h, TRUE, 0, f.what);
    stream_unlock (lock);

    for (i = 0; i < FLIGHT_FRAMES; i++) {
      pull_and_check (f.h, &f.info, in[i], i * FRAME_DURATION, &f.s, mem,
          f.what);
      gst_buffer_unref (in[i]);
    }
    check_counts (f.e, FLIGHT_FRAMES, FLIGHT_FRAMES);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Upstream not live, but nothing follows a frame: the element's idle
 * watch pushes it, so an application that pushes a frame and waits for
 * it gets it (gst_harness_pull () waits up to a minute). */
GST_START_TEST (test_flight_idle)
{
  GRand *rand = g_rand_new_with_seed (SEED + 24);
  FlightMemory mem;
  guint i;

  for (mem = 0; mem < FLIGHT_HELD_MEMORIES; mem++) {
    Flight f;

    flight_start (&f, mem, FALSE);
    for (i = 0; i < 3; i++) {
      GstBuffer *in = flight_buffer (f.pool, mem, rand, i);

      push_ok (f.h, in);
      pull_and_check (f.h, &f.info, in, i * FRAME_DURATION, &f.s, mem,
          f.what);
      gst_buffer_unref (in);
    }
    check_counts (f.e, 3, 3);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* A frame in CUDA memory without a video meta, in two memories (as no
 * CUDA pool makes one, but upstream may): GStreamer maps such a buffer as
 * a merged copy in system memory, whatever the flags, which the GPU cannot
 * read.  The element drops the frame as invalid, and filters the next
 * whole one as ever. */
GST_START_TEST (test_cuda_memory_split_frame)
{
  GRand *rand = g_rand_new_with_seed (SEED + 27);
  GstBuffer *a, *b, *split, *next;
  GstMemory *head, *tail;
  GstStructure *stats = NULL;
  guint64 invalid = 0;
  gsize size;
  Flight f;

  flight_start (&f, FLIGHT_CUDA, TRUE);
  a = flight_buffer (f.pool, FLIGHT_CUDA, rand, 0);
  b = flight_buffer (f.pool, FLIGHT_CUDA, rand, 1);
  fail_unless (gst_buffer_n_memory (a) == 1 && gst_buffer_n_memory (b) == 1);
  size = gst_buffer_get_size (a);
  fail_unless (size >= GST_VIDEO_INFO_SIZE (&f.info));
  /* a's first half, then b's second */
  head = gst_buffer_get_memory (a, 0);
  tail = gst_buffer_get_memory (b, 0);
  gst_buffer_remove_all_memory (a);
  gst_buffer_remove_all_memory (b);
  gst_memory_resize (head, 0, size / 2);
  gst_memory_resize (tail, size / 2, size - size / 2);
  split = gst_buffer_new ();
  gst_buffer_append_memory (split, head);
  gst_buffer_append_memory (split, tail);
  GST_BUFFER_PTS (split) = 0;
  GST_BUFFER_DURATION (split) = FRAME_DURATION;
  gst_buffer_unref (a);
  gst_buffer_unref (b);

  push_ok (f.h, split);
  gst_buffer_unref (split);
  fail_unless_equals_int (gst_harness_buffers_received (f.h), 0);
  g_object_get (f.e, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "dropped-invalid", &invalid));
  gst_structure_free (stats);
  fail_unless_equals_uint64 (invalid, 1);

  next = flight_buffer (f.pool, FLIGHT_CUDA, rand, 2);
  push_ok (f.h, next);
  pull_and_check (f.h, &f.info, next, 2 * FRAME_DURATION, &f.s, FLIGHT_CUDA,
      f.what);
  gst_buffer_unref (next);
  check_counts (f.e, 2, 1);
  flight_stop (&f);
  g_rand_free (rand);
}

GST_END_TEST;

#if GST_CHECK_VERSION (1, 24, 0)
/* Upstream not live, frames in CUDA memory: each goes out as soon as its
 * work is enqueued, none held, its memory flagged for readers to wait on
 * its stream, which is the one upstream's pool writes on; a host map
 * (pull_and_check) waits and reads the filtered frame. */
GST_START_TEST (test_cuda_memory_at_once)
{
  GRand *rand = g_rand_new_with_seed (SEED + 26);
  GstBuffer *in[FLIGHT_FRAMES];
  GstPad *lock;
  Flight f;
  guint i;

  flight_start (&f, FLIGHT_CUDA, FALSE);
  lock = stream_lock (f.e);
  for (i = 0; i < FLIGHT_FRAMES; i++) {
    in[i] = flight_buffer (f.pool, FLIGHT_CUDA, rand, i);
    push_ok (f.h, in[i]);
    check_received (f.h, i + 1, f.what);
  }
  stream_unlock (lock);
  for (i = 0; i < FLIGHT_FRAMES; i++) {
    GstBuffer *out = gst_harness_pull (f.h);
    GstMemory *mem = gst_buffer_peek_memory (out, 0);

    fail_unless (GST_MEMORY_FLAG_IS_SET (mem,
            GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), "frame %u is not flagged "
        "for its readers to wait", i);
    fail_unless (gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem)) !=
        NULL);
    fail_unless (GST_BUFFER_PTS (out) == i * FRAME_DURATION);
    compare_with_reference (&f.info, in[i], out, &f.s, TRUE, f.what);
    gst_buffer_unref (out);
    gst_buffer_unref (in[i]);
  }
  check_counts (f.e, FLIGHT_FRAMES, FLIGHT_FRAMES);
  flight_stop (&f);
  g_rand_free (rand);
}

GST_END_TEST;

#define WRITER_DELAY_US 100000
#define WRITER_FRAMES 4

/* Keeps the writer's stream busy for WRITER_DELAY_US, from the host. */
static void CUDART_CB
hold_stream (void *data)
{
  g_usleep (WRITER_DELAY_US);
}

/* A buffer of pool, mapped into frame for writing on the GPU. */
static GstBuffer *
acquire_mapped (GstBufferPool * pool, const GstVideoInfo * info,
    GstVideoFrame * frame)
{
  GstBuffer *buf = NULL;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (gst_video_frame_map (frame, (GstVideoInfo *) info, buf,
          GST_MAP_WRITE | GST_MAP_CUDA));
  return buf;
}

/* src's planes copied into dst's, enqueued on s. */
static void
copy_planes (GstVideoFrame * dst, GstVideoFrame * src,
    enum cudaMemcpyKind kind, cudaStream_t s)
{
  guint p;

  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (dst); p++)
    fail_unless_equals_int (cudaMemcpy2DAsync (dst->data[p],
            GST_VIDEO_FRAME_PLANE_STRIDE (dst, p), src->data[p],
            GST_VIDEO_FRAME_PLANE_STRIDE (src, p),
            GST_VIDEO_FRAME_COMP_WIDTH (src, p) *
            GST_VIDEO_FRAME_COMP_PSTRIDE (src, p),
            GST_VIDEO_FRAME_COMP_HEIGHT (src, p), kind, s), cudaSuccess);
}

/* A buffer of pool with src's frame, copied there synchronously. */
static GstBuffer *
stage_on_device (GstBufferPool * pool, const GstVideoInfo * info,
    GstBuffer * src)
{
  GstVideoFrame dev, host;
  GstBuffer *buf = acquire_mapped (pool, info, &dev);

  fail_unless (gst_video_frame_map (&host, (GstVideoInfo *) info, src,
          GST_MAP_READ));
  copy_planes (&dev, &host, cudaMemcpyHostToDevice, NULL);
  fail_unless_equals_int (cudaStreamSynchronize (NULL), cudaSuccess);
  gst_video_frame_unmap (&host);
  gst_video_frame_unmap (&dev);
  return buf;
}

/* A buffer of pool whose planes are zero until, behind WRITER_DELAY_US of
 * other work on the pool's stream, staged's frame is copied in there.  It
 * is returned at once, flagged as GStreamer 1.24's writers (nvh264dec,
 * cudaupload) leave their frames. */
static GstBuffer *
write_late (GstBufferPool * pool, GstCudaStream * stream,
    const GstVideoInfo * info, GstBuffer * staged)
{
  cudaStream_t s = (cudaStream_t) gst_cuda_stream_get_handle (stream);
  GstVideoFrame dst, src;
  GstBuffer *buf = acquire_mapped (pool, info, &dst);
  guint p;

  fail_unless (gst_video_frame_map (&src, (GstVideoInfo *) info, staged,
          GST_MAP_READ | GST_MAP_CUDA));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&dst); p++)
    fail_unless_equals_int (cudaMemset2DAsync (dst.data[p],
            GST_VIDEO_FRAME_PLANE_STRIDE (&dst, p), 0,
            GST_VIDEO_FRAME_PLANE_STRIDE (&dst, p),
            GST_VIDEO_FRAME_COMP_HEIGHT (&dst, p), s), cudaSuccess);
  fail_unless_equals_int (cudaStreamSynchronize (s), cudaSuccess);
  fail_unless_equals_int (cudaLaunchHostFunc (s, hold_stream, NULL),
      cudaSuccess);
  copy_planes (&dst, &src, cudaMemcpyDeviceToDevice, s);
  gst_video_frame_unmap (&src);
  gst_video_frame_unmap (&dst);
  fail_unless (GST_MEMORY_FLAG_IS_SET (gst_buffer_peek_memory (buf, 0),
          GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), "the frame is not flagged");
  return buf;
}

/* Upstream writes each frame on a stream of its own, behind other work, and
 * pushes it before that write is done, as GStreamer 1.24's elements do:
 * the element must read it only once the write is done, live or not (a
 * frame read early is a blurred zero plane).  An odd height, which
 * 1.24's CUDA memory lays out right. */
GST_START_TEST (test_waits_for_writer_stream)
{
  GRand *rand = g_rand_new_with_seed (SEED + 25);
  gboolean live;
  guint i;

  for (live = FALSE; live <= TRUE; live++) {
    GstBuffer *src[WRITER_FRAMES], *staged[WRITER_FRAMES];
    GstCudaContext *context;
    GstCudaStream *stream;
    GstBufferPool *pool;
    GstStructure *config;
    GstCaps *caps;
    Flight f;

    flight_start (&f, FLIGHT_CUDA, live);
    flight_caps_set (&f, "I420", 641, 361, 30);
    context = GST_CUDA_BUFFER_POOL (f.pool)->context;
    stream = gst_cuda_stream_new (context);
    fail_unless (stream != NULL);
    pool = gst_cuda_buffer_pool_new (context);
    caps = flight_caps (&f.info, FLIGHT_CUDA);
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, f.info.size, 0, 0);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_set_cuda_stream (config, stream);
    fail_unless (gst_buffer_pool_set_config (pool, config));
    fail_unless (gst_buffer_pool_set_active (pool, TRUE));
    gst_caps_unref (caps);

    fail_unless (gst_cuda_context_push (context));
    for (i = 0; i < WRITER_FRAMES; i++) {
      GstBuffer *buf;

      src[i] = frame_check_buffer_random (&f.info, rand, FALSE);
      staged[i] = stage_on_device (pool, &f.info, src[i]);
      buf = write_late (pool, stream, &f.info, staged[i]);
      GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
      GST_BUFFER_DURATION (buf) = FRAME_DURATION;
      fail_unless_equals_int (gst_harness_push (f.h, buf), GST_FLOW_OK);
    }
    gst_cuda_context_pop (NULL);
    fail_unless (gst_harness_push_event (f.h, gst_event_new_eos ()));
    for (i = 0; i < WRITER_FRAMES; i++) {
      pull_and_check (f.h, &f.info, src[i], i * FRAME_DURATION, &f.s,
          FLIGHT_CUDA, live ? "a late writer, live" : "a late writer");
      gst_buffer_unref (src[i]);
      gst_buffer_unref (staged[i]);
    }
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
    gst_cuda_stream_unref (stream);
    flight_stop (&f);
  }
  g_rand_free (rand);
}

GST_END_TEST;
#endif

/* The temporal denoise on the CUDA backend: sequences of frames checked
 * in order against the definition applied in turn (frame_check_temporal
 * (), bit for bit on the GPU too), then the kernel on the state, within 1
 * of the reference (identity settings: the state exactly).  Frames in
 * system memory (the strips' path, synchronous), in the element's pinned
 * pool and in CUDA memory (enqueued: behind an upstream that is not live,
 * held in flight one at a time, so the state's order on the stream is
 * what makes frame t + 1 read frame t's output). */
typedef enum
{
  TEMPORAL_SYSTEM,
  TEMPORAL_PINNED,
  TEMPORAL_CUDA,
  TEMPORAL_N_MEMORIES
} TemporalMemory;

static const gchar *temporal_memory_names[] = {
  "system memory", "pinned memory", "CUDA memory"
};

#define TEMPORAL_FRAMES 8
#define TEMPORAL_STRENGTH 0.85
#define TEMPORAL_THRESHOLD 30.0

/* The next frame: base with every byte (the low byte of 16-bit samples)
 * moved by up to 6, still noise, and a run of random bytes, motion. */
static GstBuffer *
temporal_frame (const GstVideoInfo * info, GstBuffer * base, GRand * rand)
{
  GstBuffer *buf = gst_buffer_copy_deep (base);
  const gboolean deep = GST_VIDEO_INFO_COMP_DEPTH (info, 0) > 8;
  GstMapInfo map;
  gsize i, run_at, run_len;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READWRITE));
  for (i = 0; i < map.size; i += deep ? 2 : 1)
    map.data[i] = (guint8) CLAMP ((gint) map.data[i] +
        g_rand_int_range (rand, -6, 7), 0, 255);
  run_len = map.size / 8;
  run_at = g_rand_int_range (rand, 0, (gint32) (map.size - run_len + 1));
  for (i = run_at; i < run_at + run_len; i++)
    map.data[i] = (guint8) g_rand_int_range (rand, 0, 256);
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* src's frame in a buffer of pool (pinned or CUDA memory). */
static GstBuffer *
temporal_pool_copy (GstBufferPool * pool, const GstVideoInfo * info,
    GstBuffer * src)
{
  GstVideoFrame in, out;
  GstBuffer *buf = NULL;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (gst_video_frame_map (&in, (GstVideoInfo *) info, src,
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&out, (GstVideoInfo *) info, buf,
          GST_MAP_WRITE));
  fail_unless (gst_video_frame_copy (&out, &in));
  gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  GST_BUFFER_PTS (buf) = GST_BUFFER_PTS (src);
  GST_BUFFER_DURATION (buf) = GST_BUFFER_DURATION (src);
  if (GST_BUFFER_IS_DISCONT (src))
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  return buf;
}

/* out against the definition's state and the kernel of s. */
static void
temporal_check (const GstVideoInfo * info, GstBuffer * state,
    GstBuffer * out, const CuconvSettings * s, CuconvPlanes planes,
    gboolean kernel_off, const gchar * what, guint t)
{
  gchar first[160];

  if (kernel_off || cuconv_settings_is_identity (s)) {
    if (frame_check_region_pixels (info, out, state, CUCONV_REGION_FRAME,
            NULL, 0, TRUE, FALSE, first, sizeof (first)) != 0)
      fail ("%s %s, frame %u: not the state: %s", what,
          GST_VIDEO_INFO_NAME (info), t, first);
  } else {
    gchar *w = g_strdup_printf ("%s, frame %u", what, t);

    compare_planes_with_reference (info, state, out, s, planes, TRUE, w);
    g_free (w);
  }
}

/* A sequence of TEMPORAL_FRAMES frames of format through
 * cudaconvolve backend=cuda props temporal=... in mem, upstream live or
 * not; the frame at reset_at is DISCONT, the state starts afresh there. */
static void
temporal_sequence_cuda (const gchar * format, gint w, gint hh,
    TemporalMemory mem, gboolean live, const gchar * props, guint reset_at,
    GRand * rand)
{
  GstBuffer *in[TEMPORAL_FRAMES], *base, *state;
  GstBufferPool *pool = NULL;
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h = harness_new_cuda (&e);
  CuconvSettings s;
  CuconvPlanes planes;
  gchar *what;
  guint t, min;
  gint compensated;

  gst_harness_set_live (h, live);
  set_props (e, props);
  g_object_set (e, "temporal", TEMPORAL_STRENGTH, "temporal-threshold",
      TEMPORAL_THRESHOLD, NULL);
  g_object_get (e, "temporal-mode", &compensated, NULL);
  frame_check_element_settings (e, &s);
  planes = frame_check_element_planes (e);
  what = g_strdup_printf ("%s in %s, %s, upstream %slive", props,
      temporal_memory_names[mem], format, live ? "" : "not ");

  frame_check_info_init (&info, format, w, hh);
  if (mem == TEMPORAL_SYSTEM) {
    gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  } else {
    GstCaps *caps = flight_caps (&info, mem == TEMPORAL_PINNED ?
        FLIGHT_PINNED : FLIGHT_CUDA);

    gst_harness_set_src_caps (h, gst_caps_ref (caps));
    pool = flight_pool (h, caps, &min);
    gst_caps_unref (caps);
  }

  base = frame_check_buffer_random (&info, rand, FALSE);
  state = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  for (t = 0; t < TEMPORAL_FRAMES; t++) {
    GstBuffer *buf;

    in[t] = temporal_frame (&info, base, rand);
    GST_BUFFER_PTS (in[t]) = t * FRAME_DURATION;
    GST_BUFFER_DURATION (in[t]) = FRAME_DURATION;
    if (t == reset_at)
      GST_BUFFER_FLAG_SET (in[t], GST_BUFFER_FLAG_DISCONT);
    buf = pool ? temporal_pool_copy (pool, &info, in[t]) :
        gst_buffer_ref (in[t]);
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  /* the frame in flight, if any, comes out */
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (t = 0; t < TEMPORAL_FRAMES; t++) {
    GstBuffer *out = gst_harness_pull (h);

    fail_unless (out != NULL, "%s: frame %u did not come out", what, t);
    fail_unless (GST_BUFFER_PTS (out) == t * FRAME_DURATION,
        "%s: frame %u out of order", what, t);
    frame_check_temporal (&info, in[t], state, &s, planes,
        TEMPORAL_STRENGTH, TEMPORAL_THRESHOLD, compensated, t == 0
        || t == reset_at);
    temporal_check (&info, state, out, &s, planes, FALSE, what, t);
    gst_buffer_unref (out);
    gst_buffer_unref (in[t]);
  }
  check_active_backend (e, "cuda");

  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  gst_buffer_unref (state);
  gst_buffer_unref (base);
  gst_harness_teardown (h);
  g_free (what);
}

/* A height h frame of format can have in CUDA memory: GStreamer's CUDA
 * memory lays three-plane 4:2:0 frames of an odd height out right only
 * from 1.24 (the element offers no CUDA memory for them before:
 * test-element's test_cuda_memory_caps), so one row more there. */
static gint
cuda_memory_height (const gchar * format, gint h)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  if (h % 2 == 1 && major == 1 && minor < 24 && (g_str_equal (format, "I420")
          || g_str_equal (format, "YV12")))
    return h + 1;
  return h;
}

/* Every format in system memory; those GStreamer's CUDA allocator lays
 * out in pinned and CUDA memory, held in flight and not; identity
 * settings (the state copied out), a blur, an edge map, a bilateral. */
GST_START_TEST (test_temporal_cuda)
{
  static const gchar *kernels[] = {
    "radius=0", "radius=2", "kernel=sobel",
    "kernel=bilateral radius=3 sigma-range=20",
  };
  static const gchar *device_formats[] = {
    "I420", "NV12", "Y444", "P010_10LE", "Y444_16LE", "RGBA", "BGRx",
  };
  GRand *rand = g_rand_new_with_seed (SEED + 40);
  guint f, k, live;
  TemporalMemory mem;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    for (k = 0; k < G_N_ELEMENTS (kernels); k++)
      temporal_sequence_cuda (formats[f], 37, 23, TEMPORAL_SYSTEM, TRUE,
          kernels[k], 5, rand);
  for (mem = TEMPORAL_PINNED; mem < TEMPORAL_N_MEMORIES; mem++)
    for (f = 0; f < G_N_ELEMENTS (device_formats); f++)
      for (k = 0; k < G_N_ELEMENTS (kernels); k++)
        for (live = 0; live < 2; live++) {
          gint h = k % 2 ? 289 : 35;

          if (mem == TEMPORAL_CUDA)
            h = cuda_memory_height (device_formats[f], h);
          temporal_sequence_cuda (device_formats[f], k % 2 ? 385 : 64, h,
              mem, live, kernels[k], 4, rand);
        }
  /* a large frame, through each memory, in both modes */
  for (mem = TEMPORAL_SYSTEM; mem < TEMPORAL_N_MEMORIES; mem++) {
    temporal_sequence_cuda ("NV12", 1921, 1081, mem, FALSE, "radius=2", 3,
        rand);
    temporal_sequence_cuda ("NV12", 1921, 1081, mem, FALSE,
        "radius=2 temporal-mode=compensated", 3, rand);
  }
  /* the compensated denoise: every format in system memory, and in each
   * memory the formats of the device's */
  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    temporal_sequence_cuda (formats[f], 37, 23, TEMPORAL_SYSTEM, TRUE,
        "radius=2 temporal-mode=compensated", 5, rand);
  for (mem = TEMPORAL_PINNED; mem < TEMPORAL_N_MEMORIES; mem++)
    for (f = 0; f < G_N_ELEMENTS (device_formats); f++)
      temporal_sequence_cuda (device_formats[f], 385,
          mem == TEMPORAL_CUDA ? cuda_memory_height (device_formats[f], 289)
          : 289, mem, f % 2, "kernel=bilateral radius=3 sigma-range=20 "
          "temporal-mode=compensated", 4, rand);
  g_rand_free (rand);
}

GST_END_TEST;

/* The denoise covers the whole frame, the kernel only the regions
 * (region=roi): outside them the output is the state exactly; and a
 * backend switch starts afresh on either side. */
GST_START_TEST (test_temporal_regions_and_switch_cuda)
{
  const FrameCheckBox box = { 40, 20, 61, 33 };
  GRand *rand = g_rand_new_with_seed (SEED + 41);
  static const gchar *backends[] = { "cuda", "cpu", "cuda" };
  GstBuffer *base, *state;
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h = harness_new_cuda (&e);
  CuconvSettings s;
  guint t, b;

  gst_harness_set_live (h, TRUE);
  set_props (e, "radius=3 region=roi regions=<<40,20,61,33>>");
  g_object_set (e, "temporal", TEMPORAL_STRENGTH, "temporal-threshold",
      TEMPORAL_THRESHOLD, NULL);
  frame_check_element_settings (e, &s);
  frame_check_info_init (&info, "I420", 163, 97);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  base = frame_check_buffer_random (&info, rand, FALSE);
  state = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);

  for (b = 0; b < G_N_ELEMENTS (backends); b++) {
    gst_util_set_object_arg (G_OBJECT (e), "backend", backends[b]);
    for (t = 0; t < 4; t++) {
      GstBuffer *in = temporal_frame (&info, base, rand), *out;
      gchar first[160];

      out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      fail_unless (out != NULL);
      /* afresh at the start and at each switch */
      frame_check_temporal (&info, in, state, &s, CUCONV_PLANES_AUTO,
          TEMPORAL_STRENGTH, TEMPORAL_THRESHOLD, FALSE, t == 0);
      if (frame_check_region_pixels (&info, out, state, CUCONV_REGION_INSIDE,
              &box, 1, FALSE, FALSE, first, sizeof (first)) != 0)
        fail ("backend %s, frame %u, outside the region: %s", backends[b],
            t, first);
      fail_unless (frame_check_region_pixels (&info, out, state,
              CUCONV_REGION_INSIDE, &box, 1, TRUE, FALSE, NULL, 0) != 0,
          "backend %s, frame %u: the region was not blurred", backends[b], t);
      gst_buffer_unref (out);
      gst_buffer_unref (in);
    }
    check_active_backend (e, backends[b]);
  }
  gst_buffer_unref (state);
  gst_buffer_unref (base);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Each test's time, in the log as the run goes: a test that hangs is the
 * one after the last line. */
static gint64 test_start_us;
static guint tests_run;

static void
test_started (void)
{
  test_start_us = g_get_monotonic_time ();
}

static void
test_finished (void)
{
  g_print ("  test %u done in %.1f s\n", ++tests_run,
      (g_get_monotonic_time () - test_start_us) / 1e6);
}

static Suite *
cudaconvolve_gpu_suite (void)
{
  Suite *s = suite_create ("cudaconvolve-gpu");
  TCase *tc = tcase_create ("cuda");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 600);
  tcase_add_checked_fixture (tc, test_started, test_finished);
  tcase_add_test (tc, test_formats_cuda_match_reference);
  tcase_add_test (tc, test_change_while_playing_cuda);
  tcase_add_test (tc, test_caps_change_cuda);
  tcase_add_test (tc, test_pinned_pool_cuda);
  tcase_add_test (tc, test_pinned_backend_switch_cuda);
  tcase_add_test (tc, test_regions_cuda);
  tcase_add_test (tc, test_regions_pinned_cuda);
  tcase_add_test (tc, test_flight_order_and_eos);
  tcase_add_test (tc, test_flight_flush);
  tcase_add_test (tc, test_flight_serialized);
  tcase_add_test (tc, test_flight_none_when_live);
  tcase_add_test (tc, test_flight_idle);
  tcase_add_test (tc, test_temporal_cuda);
  tcase_add_test (tc, test_temporal_regions_and_switch_cuda);
  tcase_add_test (tc, test_cuda_memory_split_frame);
#if GST_CHECK_VERSION (1, 24, 0)
  tcase_add_test (tc, test_cuda_memory_at_once);
  tcase_add_test (tc, test_waits_for_writer_stream);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  int nf;

  gst_check_init (&argc, &argv);
  if (cuconv_device_count () == 0) {
    g_print ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  g_print ("test-gpu-element: backend=cuda against cuconv_reference_frame (), "
      "tolerance +-1 LSB per sample\n");
  /* In one process, so the totals below add up over every test. */
  g_setenv ("CK_FORK", "no", TRUE);
  if (gst_cuda_load_library ())
    shared_context = gst_cuda_context_new (0);
  nf = gst_check_run_suite (cudaconvolve_gpu_suite (), "cudaconvolve-gpu",
      __FILE__);
  g_print ("compared %" G_GUINT64_FORMAT " samples, %" G_GUINT64_FORMAT
      " off by 1\n", total_samples, total_off_by_one);
  gst_clear_object (&shared_context);
  return nf == 0 ? 0 : 1;
}
