/* gst-cudaconvolve: the element through GstHarness, on the CPU backend.
 *
 * The CPU backend is the reference, so its output must equal
 * cuconv_reference_frame () bit for bit; a few hand-computed cases check the
 * wiring independently of the reference.
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

#include "cuconv.h"
#include "frame-check.h"
#ifdef HAVE_CUDA
#include "cuconv-cuda.h"
#endif

static const gchar *formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "I420_12LE", "P010_10LE", "P016_LE", "Y444_16LE", "RGBA",
  "BGRA", "RGBx", "BGRx", "AYUV"
};

static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };

static int
device_count (void)
{
#ifdef HAVE_CUDA
  return cuconv_device_count ();
#else
  return 0;
#endif
}

/* A cudaconvolve on the CPU backend, with the given properties set before
 * it starts, in a playing harness. */
static GstHarness *
harness_new (GstElement ** element, const gchar * first_prop, ...)
{
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstHarness *h;
  va_list ap;

  fail_unless (e != NULL, "cudaconvolve not found: is GST_PLUGIN_PATH set?");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  if (first_prop) {
    va_start (ap, first_prop);
    g_object_set_valist (G_OBJECT (e), first_prop, ap);
    va_end (ap);
  }
  h = gst_harness_new_with_element (e, "sink", "src");
  if (element)
    *element = e;
  gst_object_unref (e);
  return h;
}

static void
harness_set_info (GstHarness * h, const GstVideoInfo * info)
{
  gst_harness_set_src_caps (h, gst_video_info_to_caps (info));
}

/* A buffer of size bytes, all 0x80: mid-grey, and initialised. */
static GstBuffer *
buffer_new_grey (gsize size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);

  gst_buffer_memset (buf, 0, 0x80, size);
  return buf;
}

/* Fails unless out, read through its own strides, is the reference's
 * result on in, within ±1 (the CPU engine sums as the reference does, in
 * float; fused multiply-adds may round the last bit differently). */
static void
check_against_reference (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, CuconvPlanes planes,
    const gchar * what)
{
  gchar first[160];

  if (frame_check_compare_planes (info, in, out, s, planes, 1, first,
          sizeof (first), NULL, NULL) != 0)
    fail ("%s %s %dx%d: %s", what, GST_VIDEO_INFO_NAME (info),
        GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), first);
}

/* Pushes one random frame through h and checks the output against the
 * reference with settings s and planes. */
static void
push_and_check_with (GstHarness * h, const GstVideoInfo * info,
    GRand * rand, gboolean padded, const CuconvSettings * s, CuconvPlanes planes,
    const gchar * what)
{
  GstBuffer *in, *out;

  in = frame_check_buffer_random (info, rand, padded);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL);
  fail_if (out == in, "%s: filtered in place / passed through", what);
  check_against_reference (info, in, out, s, planes, what);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

/* The same with the element's current settings. */
static void
push_and_check (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GRand * rand, gboolean padded, const gchar * what)
{
  CuconvSettings s;

  frame_check_element_settings (e, &s);
  push_and_check_with (h, info, rand, padded, &s,
      frame_check_element_planes (e), what);
}

/* Every format, odd sizes, both kernels, every border mode. */
GST_START_TEST (test_formats_match_reference)
{
  static const gint sizes[][2] = { {1, 1}, {3, 7}, {17, 5}, {33, 18} };
  GRand *rand = g_rand_new_with_seed (1);
  guint f, z, b;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      GstElement *e;
      GstHarness *h = harness_new (&e, "radius", 3, NULL);
      GstVideoInfo info;

      frame_check_info_init (&info, formats[f], sizes[z][0], sizes[z][1]);
      harness_set_info (h, &info);
      for (b = 0; b < G_N_ELEMENTS (borders); b++) {
        gchar *what = g_strdup_printf ("gaussian r3 %s", borders[b]);

        gst_util_set_object_arg (G_OBJECT (e), "border", borders[b]);
        gst_util_set_object_arg (G_OBJECT (e), "kernel", "gaussian");
        push_and_check (h, e, &info, rand, FALSE, what);
        g_free (what);
      }
      /* box, and a radius from sigma */
      gst_util_set_object_arg (G_OBJECT (e), "kernel", "box");
      push_and_check (h, e, &info, rand, FALSE, "box r3 zero");
      g_object_set (e, "radius", 0, "sigma", 1.7, NULL);
      gst_util_set_object_arg (G_OBJECT (e), "kernel", "gaussian");
      push_and_check (h, e, &info, rand, FALSE, "gaussian sigma 1.7");
      gst_harness_teardown (h);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Padded rows and odd plane offsets via GstVideoMeta, in every format. */
GST_START_TEST (test_odd_strides)
{
  GRand *rand = g_rand_new_with_seed (2);
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstElement *e;
    GstHarness *h = harness_new (&e, "radius", 4, NULL);
    GstVideoInfo info;

    frame_check_info_init (&info, formats[f], 13, 9);
    harness_set_info (h, &info);
    gst_util_set_object_arg (G_OBJECT (e), "border", "mirror");
    push_and_check (h, e, &info, rand, TRUE, "padded mirror");
    gst_util_set_object_arg (G_OBJECT (e), "border", "wrap");
    push_and_check (h, e, &info, rand, TRUE, "padded wrap");
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* The element tells upstream it reads GstVideoMeta, so upstream may hand it
 * padded buffers. */
GST_START_TEST (test_allocation_accepts_video_meta)
{
  GstHarness *h = harness_new (NULL, NULL);
  GstVideoInfo info;
  GstCaps *caps;
  GstQuery *query;

  frame_check_info_init (&info, "NV12", 64, 48);
  harness_set_info (h, &info);
  caps = gst_video_info_to_caps (&info);
  query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE,
          NULL));
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The mem_type of cudaconvolve's pinned host memory. */
#define PINNED_MEMORY_TYPE "CudaPinnedMemory"

static gboolean
is_system_allocator (GstAllocator * allocator)
{
  return !allocator || g_str_equal (allocator->mem_type, GST_ALLOCATOR_SYSMEM);
}

/* With backend (cpu, or auto without a GPU) the element answers the
 * ALLOCATION query with GstVideoFilter's pool of system memory and offers
 * no pinned allocator; a frame written into a buffer of that pool is
 * filtered like any other, into system memory. */
static void
check_system_memory_allocation (const gchar * backend)
{
  GRand *rand = g_rand_new_with_seed (5);
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstAllocator *allocator = NULL;
  GstBufferPool *pool = NULL;
  GstStructure *config;
  GstBuffer *in = NULL, *out;
  GstHarness *h;
  GstVideoInfo info;
  GstMapInfo map;
  GstCaps *caps;
  GstQuery *query;
  CuconvSettings s;
  guint i, size, min, max;
  gchar *active;
  gsize j;

  fail_unless (e != NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", backend);
  g_object_set (e, "radius", 3, NULL);
  h = gst_harness_new_with_element (e, "sink", "src");
  frame_check_info_init (&info, "I420", 37, 19);
  harness_set_info (h, &info);
  caps = gst_video_info_to_caps (&info);
  query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));

  for (i = 0; i < gst_query_get_n_allocation_params (query); i++) {
    gst_query_parse_nth_allocation_param (query, i, &allocator, NULL);
    fail_unless (is_system_allocator (allocator), "backend=%s offers %s",
        backend, allocator->mem_type);
    gst_clear_object (&allocator);
  }
  fail_unless (gst_query_get_n_allocation_pools (query) > 0);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  fail_unless (pool != NULL);
  fail_unless_equals_string (G_OBJECT_TYPE_NAME (pool), "GstVideoBufferPool");
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_allocator (config, &allocator, NULL);
  fail_unless (is_system_allocator (allocator), "backend=%s: a pool of %s",
      backend, allocator->mem_type);
  gst_buffer_pool_config_set_params (config, caps, MAX (size, info.size), 1,
      0);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &in, NULL),
      GST_FLOW_OK);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (in, 0),
          GST_ALLOCATOR_SYSMEM));

  fail_unless (gst_buffer_map (in, &map, GST_MAP_WRITE));
  for (j = 0; j < map.size; j++)
    map.data[j] = g_rand_int_range (rand, 0, 256);
  gst_buffer_unmap (in, &map);
  frame_check_element_settings (e, &s);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL && out != in);
  check_against_reference (&info, in, out, &s, CUCONV_PLANES_AUTO, backend);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (out, 0),
          GST_ALLOCATOR_SYSMEM));
  fail_if (gst_memory_is_type (gst_buffer_peek_memory (out, 0),
          PINNED_MEMORY_TYPE));
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "cpu");
  g_free (active);

  gst_buffer_unref (out);
  gst_buffer_unref (in);
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  gst_object_unref (e);
  g_rand_free (rand);
}

/* Pinned memory is for the GPU: backend=cpu keeps system memory. */
GST_START_TEST (test_allocation_cpu_system_memory)
{
  check_system_memory_allocation ("cpu");
}

GST_END_TEST;

/* Without a GPU, backend=auto filters on the CPU from the default pool. */
GST_START_TEST (test_allocation_auto_without_gpu)
{
  if (device_count () > 0) {
    GST_INFO ("a CUDA device is usable: test-gpu-element checks the pool");
    return;
  }
  check_system_memory_allocation ("auto");
}

GST_END_TEST;

/* Where component comp of pixel (x, y) of f lies.  Not at
 * GST_VIDEO_FRAME_COMP_DATA (): GStreamer 1.22 puts the V of P010 and P016
 * at byte 1, as in NV12, where it is at byte 2. */
static guint8 *
comp_ptr (const GstVideoFrame * f, gint comp, gint x, gint y)
{
  gsize offset = GST_VIDEO_FRAME_COMP_POFFSET (f, comp);

  if (GST_VIDEO_FRAME_COMP_DEPTH (f, comp) > 8)
    offset *= 2;
  return (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f,
      GST_VIDEO_FRAME_COMP_PLANE (f, comp)) + offset +
      (gsize) y * GST_VIDEO_FRAME_COMP_STRIDE (f, comp) +
      (gsize) x * GST_VIDEO_FRAME_COMP_PSTRIDE (f, comp);
}

/* The sample (a byte, or a 16-bit word with its shifted value) of
 * component comp of pixel (x, y). */
static guint
comp_get (const GstVideoFrame * f, gint comp, gint x, gint y)
{
  const guint8 *d = comp_ptr (f, comp, x, y);

  return GST_VIDEO_FRAME_COMP_DEPTH (f, comp) > 8 ? GST_READ_UINT16_LE (d) :
      d[0];
}

static void
comp_set (const GstVideoFrame * f, gint comp, gint x, gint y, guint v)
{
  guint8 *d = comp_ptr (f, comp, x, y);

  if (GST_VIDEO_FRAME_COMP_DEPTH (f, comp) > 8)
    GST_WRITE_UINT16_LE (d, v);
  else
    d[0] = v;
}

/* A constant picture stays constant under any normalised blur, except with
 * border=zero, which darkens the edges but not the middle (and not alpha,
 * which is copied). */
GST_START_TEST (test_constant_frame)
{
  guint f, b;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (b = 0; b < G_N_ELEMENTS (borders); b++) {
      GstElement *e;
      GstHarness *h = harness_new (&e, "radius", 5, NULL);
      gboolean zero = g_str_equal (borders[b], "zero");
      GstVideoInfo info;
      GstVideoFrame frame;
      GstBuffer *in, *out;
      guint c, n_comp;
      gint x, y;

      gst_util_set_object_arg (G_OBJECT (e), "border", borders[b]);
      frame_check_info_init (&info, formats[f], 40, 30);
      harness_set_info (h, &info);
      n_comp = GST_VIDEO_INFO_N_COMPONENTS (&info);
      /* 77 of 255 at every depth, in place (P010: shifted) */
      in = gst_buffer_new_allocate (NULL, info.size, NULL);
      gst_buffer_memset (in, 0, 0, info.size);
      fail_unless (gst_video_frame_map (&frame, &info, in, GST_MAP_WRITE));
      for (c = 0; c < n_comp; c++)
        for (y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&frame, c); y++)
          for (x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH (&frame, c); x++)
            comp_set (&frame, c, x, y,
                (77u << (GST_VIDEO_FRAME_COMP_DEPTH (&frame, c) - 8)) <<
                GST_VIDEO_FORMAT_INFO_SHIFT (frame.info.finfo, c));
      gst_video_frame_unmap (&frame);
      out = gst_harness_push_and_pull (h, in);

      fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READ));
      for (c = 0; c < n_comp; c++) {
        guint want = (77u << (GST_VIDEO_FRAME_COMP_DEPTH (&frame, c) - 8)) <<
            GST_VIDEO_FORMAT_INFO_SHIFT (frame.info.finfo, c);
        gint w = GST_VIDEO_FRAME_COMP_WIDTH (&frame, c);
        gint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, c);

        if (!zero || c == GST_VIDEO_COMP_A) {
          for (y = 0; y < rows; y++)
            for (x = 0; x < w; x++)
              fail_unless (comp_get (&frame, c, x, y) == want,
                  "%s %s component %u (%d,%d): %u, not %u", formats[f],
                  borders[b], c, x, y, comp_get (&frame, c, x, y), want);
        } else {
          /* the corner sees zeros on two sides; the centre (radius 5, or 3
           * on subsampled chroma, from any edge) sees none */
          fail_unless (comp_get (&frame, c, 0, 0) < want,
              "%s component %u corner %u", formats[f], c,
              comp_get (&frame, c, 0, 0));
          fail_unless_equals_int (comp_get (&frame, c, w / 2, rows / 2),
              want);
        }
      }
      gst_video_frame_unmap (&frame);
      gst_buffer_unref (out);
      gst_harness_teardown (h);
    }
  }
}

GST_END_TEST;

/* Box radius 1 on a 4x3 GRAY8 frame with 90 in the top-left corner: every
 * output is 90 times the number of times the 3x3 window reads the corner,
 * divided by 9. */
GST_START_TEST (test_box_hand_computed)
{
  static const struct
  {
    const gchar *border;
    guint8 want[3][4];
  } cases[] = {
    /* clamp reads the corner up to four times from (0,0) */
    {"clamp", {{40, 20, 0, 0}, {20, 10, 0, 0}, {0, 0, 0, 0}}},
    /* mirror reflects around it: it is read once */
    {"mirror", {{10, 10, 0, 0}, {10, 10, 0, 0}, {0, 0, 0, 0}}},
    /* wrap: the corner is also the right and bottom neighbour */
    {"wrap", {{10, 10, 0, 10}, {10, 10, 0, 10}, {10, 10, 0, 10}}},
    {"zero", {{10, 10, 0, 0}, {10, 10, 0, 0}, {0, 0, 0, 0}}},
  };
  guint c, x, y;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    GstHarness *h = harness_new (NULL, "radius", 1, NULL);
    GstElement *e = h->element;
    GstVideoInfo info;
    GstVideoFrame frame;
    GstBuffer *in, *out;
    guint8 *d;

    gst_util_set_object_arg (G_OBJECT (e), "kernel", "box");
    gst_util_set_object_arg (G_OBJECT (e), "border", cases[c].border);
    frame_check_info_init (&info, "GRAY8", 4, 3);
    harness_set_info (h, &info);
    in = gst_buffer_new_allocate (NULL, info.size, NULL);
    gst_buffer_memset (in, 0, 0, info.size);
    gst_buffer_memset (in, 0, 90, 1);
    out = gst_harness_push_and_pull (h, in);

    fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READ));
    d = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
    for (y = 0; y < 3; y++)
      for (x = 0; x < 4; x++)
        fail_unless (d[y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) + x] ==
            cases[c].want[y][x], "%s (%u,%u): got %u, want %u",
            cases[c].border, x, y,
            d[y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) + x],
            cases[c].want[y][x]);
    gst_video_frame_unmap (&frame);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

#ifdef HAVE_CUDA
/* CUDA memory is offered for the frames the running GStreamer's CUDA
 * allocator lays out right: three-plane 4:2:0 of an odd height and
 * I420_12LE from 1.24 on (1.22 overlaps the chroma planes, and has no
 * I420_12LE), never GRAY8, GRAY16_LE or AYUV.  Asked through the caps
 * query, without a GPU: until the backend is opened, CUDA memory may be
 * offered. */
GST_START_TEST (test_cuda_memory_caps)
{
  enum
  { ALWAYS, FROM_1_24, NEVER };
  static const struct
  {
    const gchar *format;
    gint height;
    gint when;
  } rows[] = {
    {"I420", 12, ALWAYS}, {"NV12", 11, ALWAYS}, {"Y444", 11, ALWAYS},
    {"I420", 11, FROM_1_24}, {"YV12", 11, FROM_1_24},
    {"I420_10LE", 11, FROM_1_24}, {"I420_12LE", 12, FROM_1_24},
    {"GRAY8", 12, NEVER}, {"GRAY16_LE", 12, NEVER}, {"AYUV", 12, NEVER},
  };
  guint major, minor, micro, nano, i;
  gboolean v1_24;

  gst_version (&major, &minor, &micro, &nano);
  v1_24 = major > 1 || minor >= 24;
  for (i = 0; i < G_N_ELEMENTS (rows); i++) {
    GstElement *e;
    GstHarness *h = harness_new (&e, NULL, NULL);
    gchar *sys = g_strdup_printf ("video/x-raw,format=%s,width=21,height=%d,"
        "framerate=25/1", rows[i].format, rows[i].height);
    GstCaps *cuda = gst_caps_from_string (sys), *caps;
    gboolean want = rows[i].when == ALWAYS ||
        (rows[i].when == FROM_1_24 && v1_24);

    gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
    gst_caps_set_features (cuda, 0,
        gst_caps_features_new ("memory:CUDAMemory", NULL));
    /* downstream takes the frame in system memory: may it come in CUDA
     * memory? */
    gst_harness_set_sink_caps_str (h, sys);
    caps = gst_pad_peer_query_caps (h->srcpad, cuda);
    fail_unless (gst_caps_is_empty (caps) != want, "%s %dx%d on GStreamer "
        "%u.%u: CUDA memory %s", rows[i].format, 21, rows[i].height, major,
        minor, want ? "not offered" : "offered");
    gst_caps_unref (caps);
    gst_caps_unref (cuda);
    g_free (sys);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* The sink pad's CAPS answer puts CUDA memory first where downstream
 * takes it, whatever order the filter (upstream, as cudaupload's, system
 * memory first) gives; system memory first where downstream takes only
 * that. */
GST_START_TEST (test_cuda_memory_first)
{
  static const gchar *sys = "video/x-raw,format=NV12,width=32,height=16,"
      "framerate=25/1";
  gboolean takes_cuda;

  for (takes_cuda = 0; takes_cuda < 2; takes_cuda++) {
    GstElement *e;
    GstHarness *h = harness_new (&e, NULL, NULL);
    GstCaps *both = gst_caps_from_string (sys), *cuda, *caps;
    gchar *str;

    gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
    cuda = gst_caps_copy (both);
    gst_caps_set_features (cuda, 0,
        gst_caps_features_new ("memory:CUDAMemory", NULL));
    gst_caps_append (both, gst_caps_ref (cuda));
    gst_harness_set_sink_caps (h, takes_cuda ? gst_caps_ref (both) :
        gst_caps_from_string (sys));
    caps = gst_pad_peer_query_caps (h->srcpad, both);
    str = gst_caps_to_string (caps);
    fail_unless (gst_caps_get_size (caps) == 2, "%s", str);
    fail_unless (gst_caps_features_contains (gst_caps_get_features (caps, 0),
            "memory:CUDAMemory") == takes_cuda, "downstream %s: %s",
        takes_cuda ? "takes CUDA memory" : "system memory only", str);
    g_free (str);
    gst_caps_unref (caps);
    gst_caps_unref (cuda);
    gst_caps_unref (both);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;
#endif

/* The CAPS queries reaching the sink while upstream asks a chain of n
 * elements what it takes, as a source does to negotiate. */
static GstPadProbeReturn
count_caps_query (GstPad * pad, GstPadProbeInfo * info, gpointer counter)
{
  if (GST_QUERY_TYPE (GST_PAD_PROBE_INFO_QUERY (info)) == GST_QUERY_CAPS)
    (*(guint *) counter)++;
  return GST_PAD_PROBE_OK;
}

static guint
chain_caps_queries (guint n)
{
  GString *desc = g_string_new (NULL);
  GstCaps *filter = gst_caps_from_string ("video/x-raw,format=I420");
  GstHarness *h;
  guint i, queries = 0;

  for (i = 0; i < n; i++)
    g_string_append_printf (desc, "%scudaconvolve backend=cpu radius=1",
        i ? " ! " : "");
  h = gst_harness_new_parse (desc->str);
  gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      count_caps_query, &queries, NULL);
  gst_caps_unref (gst_pad_peer_query_caps (h->srcpad, filter));
  gst_caps_unref (filter);
  gst_harness_teardown (h);
  g_string_free (desc, TRUE);
  return queries;
}

/* Negotiating a chain asks downstream a number of times that grows with
 * the chain's length, not exponentially with it: an element asking
 * downstream twice for one CAPS query doubles the questions at every
 * element upstream of it. */
GST_START_TEST (test_chain_negotiation)
{
  guint four = chain_caps_queries (4), twelve = chain_caps_queries (12);

  GST_INFO ("caps queries at the sink: %u behind 4 elements, %u behind 12",
      four, twelve);
  fail_unless (four > 0 && twelve <= 4 * four, "%u caps queries at the sink "
      "behind 4 elements, %u behind 12", four, twelve);
}

GST_END_TEST;

GST_START_TEST (test_caps)
{
  static const gchar *refused[] = {
    "video/x-raw,format=RGB,width=16,height=16,framerate=30/1",
    "video/x-raw,format=UYVY,width=16,height=16,framerate=30/1",
    "video/x-raw,format=I420_10BE,width=16,height=16,framerate=30/1",
    "video/x-raw,format=P010_10BE,width=16,height=16,framerate=30/1",
#ifndef HAVE_CUDA
    ("video/x-raw(memory:CUDAMemory),format=NV12,width=16,height=16,"
        "framerate=30/1"),
#endif
    "image/jpeg,width=16,height=16,framerate=30/1",
    "video/x-raw,format=NV12,width=0,height=16,framerate=30/1",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *h = harness_new (NULL, NULL);
    gchar *str = g_strdup_printf ("video/x-raw,format=%s,width=21,height=11,"
        "framerate=25/1", formats[i]);
    GstCaps *caps = gst_caps_from_string (str);
    GstCaps *cur;
    GstVideoInfo info;

    fail_unless (gst_pad_peer_query_accept_caps (h->srcpad, caps), "%s",
        str);
    gst_harness_set_src_caps (h, gst_caps_ref (caps));
    /* the same caps come out */
    gst_video_info_from_caps (&info, caps);
    gst_buffer_unref (gst_harness_push_and_pull (h,
            buffer_new_grey (info.size)));
    cur = gst_pad_get_current_caps (h->sinkpad);
    fail_unless (cur != NULL && gst_caps_is_equal (cur, caps), "%s", str);
    gst_caps_unref (cur);
    gst_caps_unref (caps);
    g_free (str);
    gst_harness_teardown (h);
  }

  for (i = 0; i < G_N_ELEMENTS (refused); i++) {
    GstHarness *h = harness_new (NULL, NULL);
    GstCaps *caps = gst_caps_from_string (refused[i]);

    fail_if (gst_pad_peer_query_accept_caps (h->srcpad, caps), "%s",
        refused[i]);
    gst_harness_set_src_caps (h, caps);
    fail_unless_equals_int (gst_harness_push (h,
            buffer_new_grey (1024)),
        GST_FLOW_NOT_NEGOTIATED);
    fail_unless_equals_int (gst_harness_buffers_received (h), 0);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

static void
check_enum (GType type, const gchar * nick, gint value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *v = g_enum_get_value_by_nick (klass, nick);

  fail_unless (v != NULL, "%s has no '%s'", g_type_name (type), nick);
  fail_unless_equals_int (v->value, value);
  g_type_class_unref (klass);
}

GST_START_TEST (test_properties)
{
  static const gchar *live[] = { "kernel", "radius", "sigma", "sigma-y",
    "amount", "border", "planes", "normalize", "backend"
  };
  /* arrays: changeable while playing, but no controller interpolates them */
  static const gchar *arrays[] = { "kernel-x", "kernel-y", "matrix" };
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GObjectClass *klass;
  GParamSpec *pspec;
  GValue v = G_VALUE_INIT;
  gchar *active;
  guint radius, i;
  gdouble sigma, sigma_y, amount;
  gint kernel, border, backend, planes;
  gboolean normalize;

  fail_unless (e != NULL);
  klass = G_OBJECT_GET_CLASS (e);

  /* defaults */
  g_object_get (e, "kernel", &kernel, "radius", &radius, "sigma", &sigma,
      "sigma-y", &sigma_y, "amount", &amount, "border", &border, "planes",
      &planes, "normalize", &normalize, "backend", &backend,
      "active-backend", &active, NULL);
  fail_unless_equals_int (kernel, CUCONV_KERNEL_GAUSSIAN);
  fail_unless_equals_int (radius, 2);
  fail_unless_equals_float (sigma, 0.0);
  fail_unless_equals_float (sigma_y, 0.0);
  fail_unless_equals_float (amount, 1.0);
  fail_unless_equals_int (border, CUCONV_BORDER_CLAMP);
  fail_unless_equals_int (planes, CUCONV_PLANES_AUTO);
  fail_unless (normalize);
  fail_unless_equals_int (backend, 0);
  fail_unless_equals_string (active, "none");
  g_free (active);
  for (i = 0; i < G_N_ELEMENTS (arrays); i++) {
    g_value_init (&v, GST_TYPE_ARRAY);
    g_object_get_property (G_OBJECT (e), arrays[i], &v);
    fail_unless_equals_int (gst_value_array_get_size (&v), 0);
    g_value_unset (&v);
  }

  /* every filter property can change while playing, under a controller */
  for (i = 0; i < G_N_ELEMENTS (live); i++) {
    pspec = g_object_class_find_property (klass, live[i]);
    fail_unless (pspec != NULL);
    fail_unless ((pspec->flags & GST_PARAM_MUTABLE_PLAYING) &&
        (pspec->flags & GST_PARAM_CONTROLLABLE) &&
        (pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE, "%s",
        live[i]);
  }
  for (i = 0; i < G_N_ELEMENTS (arrays); i++) {
    pspec = g_object_class_find_property (klass, arrays[i]);
    fail_unless (pspec != NULL && GST_IS_PARAM_SPEC_ARRAY_LIST (pspec));
    fail_unless ((pspec->flags & GST_PARAM_MUTABLE_PLAYING) &&
        (pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE, "%s",
        arrays[i]);
  }
  /* every blurb says what the property does, in a sentence or more */
  for (i = 0; i < G_N_ELEMENTS (live); i++) {
    pspec = g_object_class_find_property (klass, live[i]);
    fail_unless (strlen (g_param_spec_get_blurb (pspec)) > 40, "%s",
        live[i]);
  }
  pspec = g_object_class_find_property (klass, "active-backend");
  fail_unless (pspec != NULL && !(pspec->flags & G_PARAM_WRITABLE));

  /* ranges: out-of-range values are clamped by validation and refused by
   * g_object_set, which leaves the property as it was */
  pspec = g_object_class_find_property (klass, "radius");
  fail_unless_equals_int (G_PARAM_SPEC_UINT (pspec)->minimum, 0);
  fail_unless_equals_int (G_PARAM_SPEC_UINT (pspec)->maximum, 1024);
  g_value_init (&v, G_TYPE_UINT);
  g_value_set_uint (&v, 1025);
  fail_unless (g_param_value_validate (pspec, &v));
  fail_unless_equals_int (g_value_get_uint (&v), 1024);
  g_value_unset (&v);
  g_object_set (e, "radius", 1024, NULL);
  ASSERT_REFUSED (g_object_set (e, "radius", 1025, NULL));
  g_object_get (e, "radius", &radius, NULL);
  fail_unless_equals_int (radius, 1024);

  pspec = g_object_class_find_property (klass, "sigma");
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->minimum, 0.0);
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->maximum, 256.0);
  g_object_set (e, "sigma", 3.5, NULL);
  ASSERT_REFUSED (g_object_set (e, "sigma", -1.0, NULL));
  ASSERT_REFUSED (g_object_set (e, "sigma", 256.5, NULL));
  g_object_get (e, "sigma", &sigma, NULL);
  fail_unless_equals_float (sigma, 3.5);
  ASSERT_REFUSED (g_object_set (e, "border", 4, NULL));

  pspec = g_object_class_find_property (klass, "sigma-y");
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->minimum, 0.0);
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->maximum, 256.0);
  g_object_set (e, "sigma-y", 2.25, NULL);
  ASSERT_REFUSED (g_object_set (e, "sigma-y", -0.5, NULL));
  ASSERT_REFUSED (g_object_set (e, "sigma-y", 257.0, NULL));
  g_object_get (e, "sigma-y", &sigma_y, NULL);
  fail_unless_equals_float (sigma_y, 2.25);

  pspec = g_object_class_find_property (klass, "amount");
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->minimum, 0.0);
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->maximum, 10.0);
  g_object_set (e, "amount", 10.0, NULL);
  ASSERT_REFUSED (g_object_set (e, "amount", 10.5, NULL));
  ASSERT_REFUSED (g_object_set (e, "amount", -1.0, NULL));
  g_object_get (e, "amount", &amount, NULL);
  fail_unless_equals_float (amount, 10.0);

  gst_util_set_object_arg (G_OBJECT (e), "planes", "chroma");
  gst_util_set_object_arg (G_OBJECT (e), "normalize", "false");
  g_object_get (e, "planes", &planes, "normalize", &normalize, NULL);
  fail_unless_equals_int (planes, CUCONV_PLANES_CHROMA);
  fail_unless (!normalize);
  ASSERT_REFUSED (g_object_set (e, "planes", CUCONV_PLANES_N, NULL));
  g_object_get (e, "planes", &planes, NULL);
  fail_unless_equals_int (planes, CUCONV_PLANES_CHROMA);

  /* enum values equal the engine's */
  pspec = g_object_class_find_property (klass, "kernel");
#define CHECK_KERNEL(name, nick, desc) \
  check_enum (pspec->value_type, nick, CUCONV_KERNEL_##name);
  CUCONV_KERNEL_TYPES (CHECK_KERNEL);
#undef CHECK_KERNEL
  {
    GEnumClass *k = g_type_class_ref (pspec->value_type);

    fail_unless_equals_int (k->n_values, CUCONV_KERNEL_N);
    g_type_class_unref (k);
  }
  pspec = g_object_class_find_property (klass, "planes");
#define CHECK_PLANES(name, nick, desc) \
  check_enum (pspec->value_type, nick, CUCONV_PLANES_##name);
  CUCONV_PLANES_TYPES (CHECK_PLANES);
#undef CHECK_PLANES
  pspec = g_object_class_find_property (klass, "border");
  check_enum (pspec->value_type, "clamp", CUCONV_BORDER_CLAMP);
  check_enum (pspec->value_type, "mirror", CUCONV_BORDER_MIRROR);
  check_enum (pspec->value_type, "wrap", CUCONV_BORDER_WRAP);
  check_enum (pspec->value_type, "zero", CUCONV_BORDER_ZERO);
  pspec = g_object_class_find_property (klass, "backend");
  check_enum (pspec->value_type, "auto", 0);
  check_enum (pspec->value_type, "cuda", 1);
  check_enum (pspec->value_type, "cpu", 2);

  gst_object_unref (e);
}

GST_END_TEST;

/* radius 0 and sigma 0: the very input buffer comes out. */
GST_START_TEST (test_passthrough)
{
  GstHarness *h = harness_new (NULL, "radius", 0, "sigma", 0.0, NULL);
  GstVideoInfo info;
  GstBuffer *in, *out;

  frame_check_info_init (&info, "I420", 32, 24);
  harness_set_info (h, &info);
  in = buffer_new_grey (info.size);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in);
  fail_unless (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM
          (h->element)));
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Property changes while playing apply from the next buffer on. */
GST_START_TEST (test_change_while_playing)
{
  GRand *rand = g_rand_new_with_seed (3);
  GstElement *e;
  GstHarness *h = harness_new (&e, "radius", 0, NULL);
  GstVideoInfo info;
  GstBuffer *in, *out;

  frame_check_info_init (&info, "NV12", 31, 17);
  harness_set_info (h, &info);

  in = frame_check_buffer_random (&info, rand, FALSE);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in);
  gst_buffer_unref (out);
  gst_buffer_unref (in);

  g_object_set (e, "radius", 3, NULL);
  push_and_check (h, e, &info, rand, FALSE, "radius 0 -> 3");
  gst_util_set_object_arg (G_OBJECT (e), "kernel", "box");
  push_and_check (h, e, &info, rand, FALSE, "gaussian -> box");
  gst_util_set_object_arg (G_OBJECT (e), "border", "zero");
  push_and_check (h, e, &info, rand, FALSE, "clamp -> zero");
  g_object_set (e, "radius", 0, "sigma", 2.5, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "kernel", "gaussian");
  push_and_check (h, e, &info, rand, FALSE, "radius 3 -> sigma 2.5");
  /* without a GPU auto means the CPU, exactly the reference; with one the
   * GPU may differ by 1 LSB, which tests/test-gpu-element.c checks */
  gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
  if (device_count () == 0)
    push_and_check (h, e, &info, rand, FALSE, "backend cpu -> auto");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  push_and_check (h, e, &info, rand, FALSE, "backend auto -> cpu");

  g_object_set (e, "sigma", 0.0, NULL);
  in = frame_check_buffer_random (&info, rand, FALSE);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in, "back to passthrough");
  gst_buffer_unref (out);
  gst_buffer_unref (in);

  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Behind an upstream that is not live, the CPU backend pushes each frame
 * before the next comes (only frames whose GPU work is enqueued are held,
 * test-gpu-element checks those), and the LATENCY query adds nothing to
 * upstream's. */
GST_START_TEST (test_cpu_holds_no_frame)
{
  GstElement *e;
  GstHarness *h = harness_new (&e, "radius", 2, NULL);
  GRand *rand = g_rand_new_with_seed (20240611);
  GstClockTime min, max;
  GstVideoInfo info;
  GstBuffer *in, *out;
  CuconvSettings s;
  GstQuery *query;
  gboolean live = TRUE;
  guint i;

  gst_harness_set_live (h, FALSE);
  frame_check_info_init (&info, "I420", 64, 48);
  harness_set_info (h, &info);
  frame_check_element_settings (e, &s);
  for (i = 0; i < 3; i++) {
    in = frame_check_buffer_random (&info, rand, FALSE);
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
    out = gst_harness_pull (h);
    check_against_reference (&info, in, out, &s, CUCONV_PLANES_AUTO,
        "not live, CPU");
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }

  query = gst_query_new_latency ();
  fail_unless (gst_pad_peer_query (h->sinkpad, query));
  gst_query_parse_latency (query, &live, &min, &max);
  fail_if (live);
  fail_unless_equals_uint64 (min, 0);
  gst_query_unref (query);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Timestamps, durations, offsets, flags and the buffer count survive. */
GST_START_TEST (test_timestamps)
{
  const guint n = 6;
  GstHarness *h = harness_new (NULL, "radius", 2, NULL);
  GstVideoInfo info;
  guint i;

  frame_check_info_init (&info, "Y42B", 16, 8);
  harness_set_info (h, &info);
  for (i = 0; i < n; i++) {
    GstBuffer *in = buffer_new_grey (info.size);

    GST_BUFFER_PTS (in) = 1000 + i * 33 * GST_MSECOND;
    GST_BUFFER_DTS (in) = 500 + i * 33 * GST_MSECOND;
    GST_BUFFER_DURATION (in) = 33 * GST_MSECOND + i;
    GST_BUFFER_OFFSET (in) = i;
    if (i == 0)
      GST_BUFFER_FLAG_SET (in, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  fail_unless_equals_int (gst_harness_buffers_received (h), n);
  for (i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (h);

    fail_unless_equals_uint64 (GST_BUFFER_PTS (out),
        1000 + i * 33 * GST_MSECOND);
    fail_unless_equals_uint64 (GST_BUFFER_DTS (out),
        500 + i * 33 * GST_MSECOND);
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (out),
        33 * GST_MSECOND + i);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
    fail_unless_equals_int (!!GST_BUFFER_FLAG_IS_SET (out,
            GST_BUFFER_FLAG_DISCONT), i == 0);
    gst_buffer_unref (out);
  }
  fail_unless (gst_harness_try_pull (h) == NULL);
  gst_harness_teardown (h);
}

GST_END_TEST;

static GstMessage *
bus_pop_error (GstBus * bus)
{
  return gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
}

static void
check_error_says_what_to_do (GstMessage * msg)
{
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "no error message posted");
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (strstr (err->message, "backend=auto") != NULL &&
      strstr (err->message, "backend=cpu") != NULL, "%s", err->message);
  /* and why: a sentence between the colon and the advice */
  fail_unless (g_regex_match_simple ("CUDA cannot be used: [A-Z][^.]+\\. "
          "Use backend=auto", err->message, 0, 0), "%s", err->message);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
}

/* backend=cuda without a usable device fails to start, with an error
 * message saying what to do. */
GST_START_TEST (test_backend_cuda_without_gpu)
{
  GstElement *e;
  GstBus *bus;

  if (device_count () > 0) {
    GST_INFO ("a CUDA device is usable: nothing to check");
    return;
  }

  e = gst_element_factory_make ("cudaconvolve", NULL);
  fail_unless (e != NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  check_error_says_what_to_do (bus_pop_error (bus));
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

static void
count_notify (GObject * object, GParamSpec * pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

/* What gst-inspect-1.0 shows and an application relies on: cudaconvolve is
 * a GstCudaVideoFilter, whose properties it shows; the device is chosen
 * before the element starts; active-backend is notified when it changes;
 * both pads take CUDA memory in a CUDA build only. */
GST_START_TEST (test_base_class)
{
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GType base = g_type_from_name ("GstCudaVideoFilter");
  GObjectClass *klass;
  GParamSpec *pspec;
  GstPadTemplate *templ;
  GstCapsFeatures *cuda;
  GstHarness *h;
  GstVideoInfo info;
  guint notified = 0;
  const gchar *own[] = { "backend", "active-backend", "cuda-device-id" };
  guint i;

  fail_unless (e != NULL);
  fail_unless (base != 0, "no GstCudaVideoFilter type");
  fail_unless (G_TYPE_IS_ABSTRACT (base));
  fail_unless (g_type_is_a (G_OBJECT_TYPE (e), base));
  fail_unless (g_type_parent (base) == GST_TYPE_VIDEO_FILTER);
  klass = G_OBJECT_GET_CLASS (e);
  for (i = 0; i < G_N_ELEMENTS (own); i++) {
    pspec = g_object_class_find_property (klass, own[i]);
    fail_unless (pspec != NULL && pspec->owner_type == base, "%s", own[i]);
    fail_unless (strlen (g_param_spec_get_blurb (pspec)) > 40, "%s", own[i]);
  }
  pspec = g_object_class_find_property (klass, "cuda-device-id");
  fail_unless (pspec->flags & GST_PARAM_MUTABLE_READY);
  fail_if (pspec->flags & (GST_PARAM_MUTABLE_PAUSED |
          GST_PARAM_MUTABLE_PLAYING));
  fail_unless_equals_int (G_PARAM_SPEC_INT (pspec)->minimum, -1);
  fail_unless_equals_int (G_PARAM_SPEC_INT (pspec)->default_value, -1);

  /* CUDA memory on both pads exactly when the plugin has CUDA */
  cuda = gst_caps_features_new ("memory:CUDAMemory", NULL);
  for (i = 0; i < 2; i++) {
    GstCaps *caps;
    gboolean has_cuda = FALSE;
    guint j;

    templ = gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (e),
        i ? "src" : "sink");
    fail_unless (templ != NULL);
    caps = gst_pad_template_get_caps (templ);
    for (j = 0; j < gst_caps_get_size (caps); j++)
      has_cuda |= gst_caps_features_is_equal (cuda,
          gst_caps_get_features (caps, j));
    gst_caps_unref (caps);
#ifdef HAVE_CUDA
    fail_unless (has_cuda);
#else
    fail_if (has_cuda);
#endif
  }
  gst_caps_features_free (cuda);

  /* active-backend: notified on start and on stop, and not otherwise */
  g_signal_connect (e, "notify::active-backend", G_CALLBACK (count_notify),
      &notified);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  h = gst_harness_new_with_element (e, "sink", "src");
  fail_unless_equals_int (notified, 1);
  frame_check_info_init (&info, "GRAY8", 8, 8);
  harness_set_info (h, &info);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          buffer_new_grey (info.size)));
  fail_unless_equals_int (notified, 1);
  gst_harness_teardown (h);
  fail_unless_equals_int (notified, 2);
  gst_object_unref (e);
}

GST_END_TEST;

/* Switching to backend=cuda while playing, without a device: the next
 * frame is an error, and no frame goes out. */
GST_START_TEST (test_backend_cuda_while_playing)
{
  GstElement *e;
  GstHarness *h;
  GstVideoInfo info;
  GstBus *bus;

  if (device_count () > 0)
    return;

  h = harness_new (&e, NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  frame_check_info_init (&info, "GRAY8", 8, 8);
  harness_set_info (h, &info);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          buffer_new_grey (info.size)));
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  fail_unless_equals_int (gst_harness_push (h,
          buffer_new_grey (info.size)), GST_FLOW_ERROR);
  fail_unless_equals_int (gst_harness_buffers_received (h), 1);
  check_error_says_what_to_do (bus_pop_error (bus));
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

static guint n_warnings;

static void
count_warnings (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  const gchar *name = gst_debug_category_get_name (category);

  /* the element's category and its base class's, which chooses backends */
  if (level == GST_LEVEL_WARNING && (g_str_equal (name, "cudaconvolve") ||
          g_str_equal (name, "cudavideofilter")))
    g_atomic_int_inc (&n_warnings);
}

/* backend=auto: CUDA when usable, else the CPU with exactly one warning,
 * however often the backend is switched back to auto. */
GST_START_TEST (test_backend_auto)
{
  GRand *rand = g_rand_new_with_seed (4);
  GstBus *bus;
  GstElement *e;
  GstHarness *h;
  GstVideoInfo info;
  gchar *active;

  gst_debug_set_threshold_for_name ("cudaconvolve", GST_LEVEL_WARNING);
  gst_debug_set_threshold_for_name ("cudavideofilter", GST_LEVEL_WARNING);
  gst_debug_add_log_function (count_warnings, NULL, NULL);
  n_warnings = 0;

  e = gst_element_factory_make ("cudaconvolve", NULL);
  fail_unless (e != NULL);
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "none");
  g_free (active);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  frame_check_info_init (&info, "I420", 20, 10);
  harness_set_info (h, &info);

  g_object_get (e, "active-backend", &active, NULL);
  if (device_count () == 0) {
    GError *err = NULL;
    GstMessage *msg;

    fail_unless_equals_string (active, "cpu");
    push_and_check (h, e, &info, rand, FALSE, "auto without a GPU");
    gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
    push_and_check (h, e, &info, rand, FALSE, "cpu");
    gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
    push_and_check (h, e, &info, rand, FALSE, "auto again");
    fail_unless_equals_int (n_warnings, 1);
    /* the same one on the bus, where gst-launch-1.0 prints it */
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "no warning message on the bus");
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (g_str_has_prefix (err->message, "backend=auto: ") &&
        strstr (err->message, "Filtering on the CPU"), "%s", err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
    fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  } else {
    fail_unless_equals_string (active, "cuda");
    fail_unless_equals_int (n_warnings, 0);
    fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING) == NULL);
  }
  g_free (active);

  gst_harness_teardown (h);
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "none");
  g_free (active);
  gst_element_set_bus (e, NULL);
  gst_object_unref (e);
  gst_object_unref (bus);
  gst_debug_remove_log_function (count_warnings);
  g_rand_free (rand);
}

GST_END_TEST;

/* Every filter property back to its default. */
static void
reset_filter (GstElement * e)
{
  frame_check_set_args (e, "kernel=gaussian radius=2 sigma=0 sigma-y=0 amount=1 "
      "border=clamp planes=auto normalize=true kernel-x=<> kernel-y=<> "
      "matrix=<> sigma-range=25 block-size=16 patch-radius=2 "
      "threshold-low=50 threshold-high=150");
}

/* Each kernel type with parameters that exercise it: radius from sigma,
 * anisotropic sigma-y, saturation, every border, custom kernels of both
 * kinds with and without normalisation (the matrix wins over kernel-x). */
static const gchar *kernel_configs[] = {
  "kernel=gaussian radius=3",
  "kernel=gaussian radius=0 sigma=1.2 sigma-y=2.5",
  "kernel=gaussian radius=4 sigma=3 sigma-y=0.6 border=wrap",
  "kernel=box radius=0 sigma=1 sigma-y=2 border=mirror",
  "kernel=gaussian radius=0 sigma=30 border=mirror",
  "kernel=gaussian radius=0 sigma=0 sigma-y=70 border=wrap",
  "kernel=box radius=100 border=wrap",
  "kernel=sharpen radius=2 amount=1.5",
  "kernel=sharpen radius=0 sigma=1.5 amount=10 border=zero",
  "kernel=sharpen radius=0 sigma=25 amount=0.6",
  "kernel=sobel radius=0",
  "kernel=sobel radius=3 border=wrap",
  "kernel=sobel radius=0 sigma=30 border=mirror",
  "kernel=sobel radius=2 sigma=2 sigma-y=0.8 border=zero",
  "kernel=laplacian radius=1",
  "kernel=laplacian radius=4 sigma=1.5 border=mirror",
  "kernel=custom kernel-x=<-1,0,1> normalize=false",
  "kernel=custom kernel-x=<1,4,6,4,1> kernel-y=<1,2,1> border=zero",
  "kernel=custom kernel-y=<0.25,-1.5,3,-1.5,0.25>",
  "kernel=custom matrix=<<0,-1,0>,<-1,5,-1>,<0,-1,0>>",
  "kernel=custom matrix=<<1,2,1>,<2,4,2>,<1,2,1>> border=zero",
  "kernel=custom matrix=<<-1,-1,-1>,<-1,8,-1>,<-1,-1,-1>> normalize=false "
      "border=wrap",
  "kernel=custom kernel-x=<1,2,1> normalize=false "
      "matrix=<<1,0,0,0,0>,<0,0,0,0,0>,<0,0,0,0,0>,<0,0,0,0,0>,<0,0,0,0,-1>>",
  "kernel=bilateral radius=2 sigma-range=20",
  "kernel=bilateral radius=0 sigma=1.5 sigma-y=3 sigma-range=60 border=zero "
      "planes=all",
  "kernel=bilateral radius=5 sigma-range=400 border=mirror planes=chroma",
  "kernel=nlmeans radius=2 patch-radius=1 sigma-range=20",
  "kernel=nlmeans radius=3 patch-radius=0 sigma-range=8 border=wrap "
      "planes=luma",
  "kernel=pixelate block-size=3",
  "kernel=pixelate block-size=16 planes=chroma",
  "kernel=canny radius=0",
  "kernel=canny radius=2 threshold-low=20 threshold-high=60 border=wrap "
      "planes=all",
};

/* Every format, every kernel type: the CPU backend equals the reference
 * run on planes described independently of the element. */
GST_START_TEST (test_kernels_match_reference)
{
  static const gint sizes[][2] = { {1, 1}, {17, 5}, {33, 18} };
  GRand *rand = g_rand_new_with_seed (6);
  guint f, z, k;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      GstElement *e;
      GstHarness *h = harness_new (&e, NULL);
      GstVideoInfo info;

      frame_check_info_init (&info, formats[f], sizes[z][0], sizes[z][1]);
      harness_set_info (h, &info);
      for (k = 0; k < G_N_ELEMENTS (kernel_configs); k++) {
        reset_filter (e);
        frame_check_set_args (e, kernel_configs[k]);
        push_and_check (h, e, &info, rand, z == 1, kernel_configs[k]);
      }
      gst_harness_teardown (h);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Every format, every planes value, against the reference. */
GST_START_TEST (test_planes_match_reference)
{
  static const gchar *planes[] = { "auto", "all", "luma", "chroma" };
  static const gchar *configs[] = {
    "kernel=gaussian radius=2",
    "kernel=sharpen radius=1 amount=2",
    "kernel=sobel",
    "kernel=laplacian radius=2",
    "kernel=custom matrix=<<1,2,1>,<2,4,2>,<1,2,1>>",
  };
  GRand *rand = g_rand_new_with_seed (7);
  guint f, p, k;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstElement *e;
    GstHarness *h = harness_new (&e, NULL);
    GstVideoInfo info;

    frame_check_info_init (&info, formats[f], 19, 11);
    harness_set_info (h, &info);
    for (p = 0; p < G_N_ELEMENTS (planes); p++) {
      for (k = 0; k < G_N_ELEMENTS (configs); k++) {
        gchar *what = g_strdup_printf ("planes=%s %s", planes[p], configs[k]);

        reset_filter (e);
        frame_check_set_args (e, configs[k]);
        gst_util_set_object_arg (G_OBJECT (e), "planes", planes[p]);
        push_and_check (h, e, &info, rand, TRUE, what);
        g_free (what);
      }
    }
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

typedef enum
{
  FILTERED,                     /* P010: with its low bits 0 */
  COPIED,                       /* the input sample, bit for bit */
  GREY,                         /* neutral chroma, 1 << (depth - 1) */
} Expect;

/* Checks component c of out against in: every sample as expect says.
 * FILTERED also asks that some sample changed, so that a component copied
 * by mistake is caught. */
static void
check_component (const GstVideoFrame * in, const GstVideoFrame * out,
    gint c, Expect expect, const gchar * what)
{
  const guint shift = GST_VIDEO_FORMAT_INFO_SHIFT (out->info.finfo, c);
  const guint depth = GST_VIDEO_FRAME_COMP_DEPTH (out, c);
  gboolean changed = FALSE;
  gint x, y;

  for (y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (out, c); y++) {
    for (x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH (out, c); x++) {
      guint a = comp_get (in, c, x, y), b = comp_get (out, c, x, y);

      switch (expect) {
        case FILTERED:
          fail_unless ((b & ((1u << shift) - 1)) == 0 && (b >> shift) <
              (1u << depth), "%s component %d (%d,%d): %#x is no %u-bit "
              "value shifted by %u", what, c, x, y, b, depth, shift);
          changed |= a != b;
          break;
        case COPIED:
          fail_unless (a == b, "%s component %d (%d,%d): %#x, input %#x",
              what, c, x, y, b, a);
          break;
        case GREY:
          fail_unless (b == (1u << (depth - 1)) << shift, "%s component %d "
              "(%d,%d): %#x is not neutral grey", what, c, x, y, b);
          break;
      }
    }
  }
  if (expect == FILTERED)
    fail_unless (changed, "%s component %d: unchanged", what, c);
}

/* The planes rule, checked by hand rather than against the reference: what
 * is copied is the input bit for bit (alpha and RGBx's padding always),
 * chroma of an edge map is neutral grey, and what is filtered is a value
 * of the format's depth (P010: its low 6 bits 0, though random in the
 * input). */
GST_START_TEST (test_planes_rule)
{
  static const struct
  {
    const gchar *args;
    Expect luma, chroma;
  } cases[] = {
    {"kernel=gaussian", FILTERED, FILTERED},
    {"kernel=box planes=all", FILTERED, FILTERED},
    {"kernel=custom matrix=<<1,2,1>,<2,4,2>,<1,2,1>>", FILTERED, FILTERED},
    {"kernel=sharpen amount=3", FILTERED, COPIED},
    {"kernel=sobel", FILTERED, GREY},
    {"kernel=laplacian", FILTERED, GREY},
    {"kernel=sobel planes=all", FILTERED, FILTERED},
    {"kernel=sharpen planes=all", FILTERED, FILTERED},
    {"kernel=gaussian planes=luma", FILTERED, COPIED},
    {"kernel=sobel planes=luma", FILTERED, COPIED},
    {"kernel=gaussian planes=chroma", COPIED, FILTERED},
    {"kernel=sharpen amount=3 planes=chroma", COPIED, FILTERED},
  };
  GRand *rand = g_rand_new_with_seed (8);
  guint f, k;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstElement *e;
    GstHarness *h = harness_new (&e, NULL);
    GstVideoInfo info;

    frame_check_info_init (&info, formats[f], 16, 8);
    harness_set_info (h, &info);
    for (k = 0; k < G_N_ELEMENTS (cases); k++) {
      GstVideoFrame in_frame, out_frame;
      GstBuffer *in, *out;
      gchar *what = g_strdup_printf ("%s %s", formats[f], cases[k].args);
      guint c;
      gint x, y;

      reset_filter (e);
      frame_check_set_args (e, cases[k].args);
      in = frame_check_buffer_random (&info, rand, FALSE);
      out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      fail_unless (gst_video_frame_map (&in_frame, &info, in, GST_MAP_READ));
      fail_unless (gst_video_frame_map (&out_frame, &info, out,
              GST_MAP_READ));

      for (c = 0; c < GST_VIDEO_INFO_N_COMPONENTS (&info); c++) {
        Expect expect = cases[k].luma;

        if (c == GST_VIDEO_COMP_A)
          expect = COPIED;
        else if (GST_VIDEO_INFO_IS_YUV (&info) && c != GST_VIDEO_COMP_Y)
          expect = cases[k].chroma;
        check_component (&in_frame, &out_frame, c, expect, what);
      }
      /* RGBx, BGRx: the fourth byte is padding */
      if (GST_VIDEO_INFO_N_COMPONENTS (&info) == 3 &&
          GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0) == 4) {
        for (y = 0; y < GST_VIDEO_INFO_HEIGHT (&info); y++) {
          const guint8 *a = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&in_frame, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, 0);
          const guint8 *b = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&out_frame, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame,
              0);

          for (x = 0; x < GST_VIDEO_INFO_WIDTH (&info); x++)
            fail_unless_equals_int (b[4 * x + 3], a[4 * x + 3]);
        }
      }

      gst_video_frame_unmap (&out_frame);
      gst_video_frame_unmap (&in_frame);
      gst_buffer_unref (out);
      gst_buffer_unref (in);
      g_free (what);
    }
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* value, a GstValueArray, holds exactly the doubles want[0..n - 1]. */
static void
check_array (const GValue * value, const gdouble * want, guint n)
{
  guint i;

  fail_unless (GST_VALUE_HOLDS_ARRAY (value));
  fail_unless_equals_int (gst_value_array_get_size (value), n);
  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (value, i);

    fail_unless (G_VALUE_HOLDS_DOUBLE (v), "element %u is a %s", i,
        G_VALUE_TYPE_NAME (v));
    fail_unless_equals_float (g_value_get_double (v), want[i]);
  }
}

static void
check_taps_property (GstElement * e, const gchar * name,
    const gdouble * want, guint n)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), name, &v);
  check_array (&v, want, n);
  g_value_unset (&v);
}

static void
check_matrix_property (GstElement * e, const gdouble * want, guint side)
{
  GValue v = G_VALUE_INIT;
  guint j;

  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "matrix", &v);
  fail_unless_equals_int (gst_value_array_get_size (&v), side);
  for (j = 0; j < side; j++)
    check_array (gst_value_array_get_value (&v, j), want + j * side, side);
  g_value_unset (&v);
}

static void
array_append_int (GValue * array, gint i)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_INT);
  g_value_set_int (&v, i);
  gst_value_array_append_and_take_value (array, &v);
}

/* The array properties from strings as gst-launch-1.0 writes them (whose
 * integers deserialise as ints, mixed with doubles), from an application's
 * GValues of ints, and back as doubles; an empty array unsets. */
GST_START_TEST (test_custom_kernel_values)
{
  static const gdouble deriv[] = { -1, 0, 1 }, smooth[] = { 1, 2, 1 };
  static const gdouble m3[] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
  static const gdouble m1[] = { 0.5 };
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GValue v = G_VALUE_INIT, row = G_VALUE_INIT;
  gdouble long_taps[CUCONV_MAX_CUSTOM_TAPS];
  GString *str;
  guint i, j;

  fail_unless (e != NULL);
  gst_util_set_object_arg (G_OBJECT (e), "kernel-x", "<-1.0, 0, 1.0>");
  check_taps_property (e, "kernel-x", deriv, 3);
  gst_util_set_object_arg (G_OBJECT (e), "kernel-y", "<1,2,1>");
  check_taps_property (e, "kernel-y", smooth, 3);
  gst_util_set_object_arg (G_OBJECT (e), "matrix",
      "<<1,2,1>,<2,4,2>,<1,2,1>>");
  check_matrix_property (e, m3, 3);
  gst_util_set_object_arg (G_OBJECT (e), "matrix", "< < 0.5 > >");
  check_matrix_property (e, m1, 1);

  /* ints from an application */
  g_value_init (&v, GST_TYPE_ARRAY);
  array_append_int (&v, 1);
  array_append_int (&v, 2);
  array_append_int (&v, 1);
  g_object_set_property (G_OBJECT (e), "kernel-x", &v);
  check_taps_property (e, "kernel-x", smooth, 3);
  g_value_unset (&v);
  g_value_init (&v, GST_TYPE_ARRAY);
  for (j = 0; j < 3; j++) {
    g_value_init (&row, GST_TYPE_ARRAY);
    for (i = 0; i < 3; i++)
      array_append_int (&row, (gint) m3[j * 3 + i]);
    gst_value_array_append_and_take_value (&v, &row);
  }
  g_object_set_property (G_OBJECT (e), "matrix", &v);
  check_matrix_property (e, m3, 3);
  g_value_unset (&v);

  /* the longest kernel */
  str = g_string_new ("<");
  for (i = 0; i < CUCONV_MAX_CUSTOM_TAPS; i++) {
    long_taps[i] = (gint) (i % 7) - 3;
    g_string_append_printf (str, "%s%d", i ? ", " : "", (gint) (i % 7) - 3);
  }
  g_string_append (str, ">");
  gst_util_set_object_arg (G_OBJECT (e), "kernel-y", str->str);
  check_taps_property (e, "kernel-y", long_taps, CUCONV_MAX_CUSTOM_TAPS);
  g_string_free (str, TRUE);

  /* empty arrays unset */
  gst_util_set_object_arg (G_OBJECT (e), "kernel-x", "<>");
  check_taps_property (e, "kernel-x", NULL, 0);
  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_set_property (G_OBJECT (e), "matrix", &v);
  g_value_unset (&v);
  check_matrix_property (e, NULL, 0);

  gst_object_unref (e);
}

GST_END_TEST;

/* gst_parse_launch (), as gst-launch-1.0 runs it, with the quoting of the
 * usage examples. */
GST_START_TEST (test_parse_launch_arrays)
{
  static const gdouble deriv[] = { -1, 0, 1 }, smooth[] = { 1, 2, 1 };
  static const gdouble m3[] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
  GError *err = NULL;
  GstElement *e;
  gint kernel;

  e = gst_parse_launch ("cudaconvolve kernel=custom "
      "kernel-x=\"<-1.0, 0, 1.0>\" kernel-y=\"<1, 2, 1>\" "
      "matrix=\"<<1,2,1>,<2,4,2>,<1,2,1>>\"", &err);
  fail_unless (e != NULL && err == NULL, "%s", err ? err->message : "");
  g_object_get (e, "kernel", &kernel, NULL);
  fail_unless_equals_int (kernel, CUCONV_KERNEL_CUSTOM);
  check_taps_property (e, "kernel-x", deriv, 3);
  check_taps_property (e, "kernel-y", smooth, 3);
  check_matrix_property (e, m3, 3);
  gst_object_unref (e);
}

GST_END_TEST;

static guint n_refusals;

static gboolean
count_refusal (const gchar * log_domain, GLogLevelFlags log_level,
    const gchar * message, gpointer user_data)
{
  n_refusals++;
  return TRUE;
}

/* Invalid kernels, each refused with a warning that names the property
 * and the rule broken; the kernel in effect stays, and the next frame is
 * filtered with it. */
GST_START_TEST (test_invalid_kernels)
{
  static const struct
  {
    const gchar *property, *value, *rule;
  } cases[] = {
    {"kernel-x", "<1, 2>", "odd number of taps"},
    {"kernel-y", "<1, 2, 3, 4>", "odd number of taps"},
    {"kernel-x", "<5, nan, 1>", "finite"},
    {"kernel-y", "<4, 4, 4, 1e400, 4>", "finite"},
    {"kernel-x", "<-inf, 1, 1>", "finite"},
    {"kernel-x", "<7, a, 1>", "not a number"},
    {"kernel-y", "<<1>>", "not a number"},
    {"matrix", "<<1, 2>, <3, 4>>", "odd side"},
    {"matrix", "<<1, 2, 1>>", "square"},
    {"matrix", "<<1, 2, 1>, <1, 2, 1>, <1, 2>>", "square"},
    {"matrix", "<<1, 2, 1>, <1, 2, 1, 0>, <1, 2, 1>>", "square"},
    {"matrix", "<1, 2, 1>", "not an array"},
    {"matrix", "<<1, 2, 1>, <1, inf, 1>, <1, 2, 1>>", "finite"},
    {"matrix", "<<1, 2, 1>, <1, b, 1>, <1, 2, 1>>", "not a number"},
    {NULL, NULL, "at most 129"},        /* 131 taps, built below */
    {NULL, NULL, "odd side from 1 to 31"},      /* 33 x 33 */
  };
  GRand *rand = g_rand_new_with_seed (9);
  GstElement *e;
  GstHarness *h = harness_new (&e, NULL);
  GstVideoInfo info;
  CuconvSettings before;
  guint c, i;

  frame_check_info_init (&info, "I420", 23, 13);
  harness_set_info (h, &info);

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    const gchar *property = cases[c].property;
    gchar *value = g_strdup (cases[c].value), *pattern;
    GstCheckLogFilter *filter;
    GRegex *regex;
    GValue got = G_VALUE_INIT, was = G_VALUE_INIT;

    if (!property) {
      GString *s = g_string_new ("<");
      gboolean matrix = g_str_has_prefix (cases[c].rule, "odd side");
      guint n = matrix ? 33 : 131;

      property = matrix ? "matrix" : "kernel-x";
      for (i = 0; i < n; i++) {
        if (matrix)
          g_string_append_printf (s, "%s<1%s>", i ? "," : "",
              ",1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1");
        else
          g_string_append_printf (s, "%s1", i ? "," : "");
      }
      g_string_append (s, ">");
      value = g_string_free (s, FALSE);
    }

    /* a valid kernel in effect, then the invalid one */
    reset_filter (e);
    frame_check_set_args (e, "kernel=custom kernel-x=<1,3,1> kernel-y=<2,1,0,1,2> "
        "normalize=false");
    if (g_str_equal (property, "matrix"))
      frame_check_set_args (e, "matrix=<<0,1,0>,<1,-3,1>,<0,1,0>>");
    frame_check_element_settings (e, &before);
    fail_unless_equals_int (before.custom_x_len, 3);
    fail_unless_equals_int (before.custom_y_len, 5);
    g_value_init (&was, GST_TYPE_ARRAY);
    g_object_get_property (G_OBJECT (e), property, &was);

    pattern = g_strdup_printf ("invalid %s refused: .*%s", property,
        cases[c].rule);
    regex = g_regex_new (pattern, 0, 0, NULL);
    n_refusals = 0;
    filter = gst_check_add_log_filter (NULL, G_LOG_LEVEL_WARNING, regex,
        count_refusal, NULL, NULL);
    gst_util_set_object_arg (G_OBJECT (e), property, value);
    gst_check_remove_log_filter (filter);
    fail_unless (n_refusals == 1, "%s=%s: %u warnings matching '%s'",
        property, value, n_refusals, pattern);

    g_value_init (&got, GST_TYPE_ARRAY);
    g_object_get_property (G_OBJECT (e), property, &got);
    fail_unless (gst_value_compare (&got, &was) == GST_VALUE_EQUAL,
        "%s changed", property);
    /* the settings built before the refusal, not read back */
    push_and_check_with (h, &info, rand, FALSE, &before, CUCONV_PLANES_AUTO,
        value);

    g_value_unset (&got);
    g_value_unset (&was);
    g_free (pattern);
    g_free (value);
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* In a pipeline (with a bus) the refusal is an element warning message,
 * which applications and gst-launch-1.0 show. */
GST_START_TEST (test_invalid_kernel_on_bus)
{
  static const gdouble smooth[] = { 1, 2, 1 };
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;

  gst_element_set_bus (e, bus);
  gst_util_set_object_arg (G_OBJECT (e), "kernel-x", "<1, 2, 1>");
  gst_util_set_object_arg (G_OBJECT (e), "kernel-x", "<1, 2, 1, 0>");
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning message");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (e));
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless (strstr (err->message, "kernel-x") &&
      strstr (err->message, "odd number of taps") &&
      strstr (err->message, "previous value stays"), "%s", err->message);
  check_taps_property (e, "kernel-x", smooth, 3);

  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* The new properties change while playing, from the next frame on; the
 * identity settings of each kernel type pass buffers through. */
GST_START_TEST (test_new_properties_while_playing)
{
  static const gchar *steps[] = {
    "kernel=sharpen",
    "amount=0.5",
    "sigma-y=3",
    "planes=all",
    "kernel=sobel",
    "planes=chroma",
    "kernel=laplacian planes=auto radius=3",
    "kernel=custom kernel-x=<1,-2,1>",
    "normalize=false",
    "kernel-y=<1,1,1,1,1>",
    "kernel-x=<1,-2,3>",
    "kernel-y=<1,1,2,1,1>",
    "matrix=<<1,0,0>,<0,0,0>,<0,0,-1>>",
    "matrix=<<0,0,1>,<0,0,0>,<-1,0,0>>",
    "normalize=true",
    "matrix=<>",
    "kernel-x=<>",
  };
  /* identity settings, and a change that leaves them */
  static const gchar *identities[][2] = {
    {"kernel=gaussian radius=0", "sigma-y=1.5"},
    {"kernel=box radius=0", "sigma=0.5"},
    {"kernel=sharpen radius=0", "radius=1"},
    {"kernel=sharpen radius=3 amount=0", "amount=0.1"},
    {"kernel=custom", "kernel-y=<1,2,1>"},
    {"kernel=custom normalize=false sigma=3", "matrix=<<2>>"},
  };
  GRand *rand = g_rand_new_with_seed (10);
  GstElement *e;
  GstHarness *h = harness_new (&e, NULL);
  GstVideoInfo info;
  GstBuffer *in, *out;
  guint i;

  frame_check_info_init (&info, "P010_10LE", 29, 15);
  harness_set_info (h, &info);
  for (i = 0; i < G_N_ELEMENTS (steps); i++) {
    frame_check_set_args (e, steps[i]);
    push_and_check (h, e, &info, rand, FALSE, steps[i]);
  }

  for (i = 0; i < G_N_ELEMENTS (identities); i++) {
    reset_filter (e);
    frame_check_set_args (e, identities[i][0]);
    in = frame_check_buffer_random (&info, rand, FALSE);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (out == in, "%s: not passed through", identities[i][0]);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    /* and out of passthrough again */
    frame_check_set_args (e, identities[i][1]);
    push_and_check (h, e, &info, rand, FALSE, identities[i][1]);
  }
  /* sobel and laplacian filter even at radius 0 and sigma 0 */
  reset_filter (e);
  frame_check_set_args (e, "kernel=sobel radius=0");
  push_and_check (h, e, &info, rand, FALSE, "sobel radius 0");
  frame_check_set_args (e, "kernel=laplacian");
  push_and_check (h, e, &info, rand, FALSE, "laplacian radius 0");

  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* The temporal denoise: a sequence of frames through the element against
 * the definition (frame_check_temporal ()) applied in turn, then the
 * kernel by the reference applied to the state. */
typedef struct
{
  GstHarness *h;
  GstElement *e;
  GstVideoInfo info;
  GstBuffer *base;              /* the scene the frames are noisy views of */
  GstBuffer *state;             /* the definition's previous output */
  GRand *rand;
  gboolean kernel_off;          /* the kernel leaves frames unchanged */
} TemporalRun;

/* The next frame: the scene with every byte (the low byte of 16-bit
 * samples) moved by up to 6, still areas whose noise the denoise
 * averages, and a run of random bytes, motion it must leave alone. */
static GstBuffer *
temporal_frame (TemporalRun * r)
{
  GstBuffer *buf = gst_buffer_copy_deep (r->base);
  const gboolean deep = GST_VIDEO_INFO_COMP_DEPTH (&r->info, 0) > 8;
  GstMapInfo map;
  gsize i, run_at, run_len;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READWRITE));
  for (i = 0; i < map.size; i += deep ? 2 : 1)
    map.data[i] = (guint8) CLAMP ((gint) map.data[i] +
        g_rand_int_range (r->rand, -6, 7), 0, 255);
  run_len = map.size / 8;
  run_at = g_rand_int_range (r->rand, 0, (gint32) (map.size - run_len + 1));
  for (i = run_at; i < run_at + run_len; i++)
    map.data[i] = (guint8) g_rand_int_range (r->rand, 0, 256);
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* New caps (a caps event alone: gst_harness_set_src_caps () adds a
 * segment, which resets too) and a scene for them. */
static void
temporal_run_caps (TemporalRun * r, const GstVideoInfo * info)
{
  r->info = *info;
  if (r->base) {
    GstCaps *caps = gst_video_info_to_caps (info);

    fail_unless (gst_harness_push_event (r->h, gst_event_new_caps (caps)));
    gst_caps_unref (caps);
  } else {
    harness_set_info (r->h, info);
  }
  gst_clear_buffer (&r->base);
  gst_clear_buffer (&r->state);
  r->base = frame_check_buffer_random (info, r->rand, FALSE);
  r->state = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
}

static void
temporal_run_init (TemporalRun * r, const gchar * format, gint w, gint h,
    guint32 seed, const gchar * first_prop, ...)
{
  GstVideoInfo info;
  va_list ap;

  memset (r, 0, sizeof (*r));
  r->h = harness_new (&r->e, NULL);
  va_start (ap, first_prop);
  g_object_set_valist (G_OBJECT (r->e), first_prop, ap);
  va_end (ap);
  r->rand = g_rand_new_with_seed (seed);
  frame_check_info_init (&info, format, w, h);
  temporal_run_caps (r, &info);
}

static void
temporal_run_clear (TemporalRun * r)
{
  gst_harness_teardown (r->h);
  gst_clear_buffer (&r->base);
  gst_clear_buffer (&r->state);
  g_rand_free (r->rand);
}

/* Pushes the next frame (with flags) and checks the output: the
 * definition on the state (afresh when first), then the element's kernel
 * on it within 1 of the reference; with identity settings (or
 * kernel_off) the state itself, word for word. */
static void
temporal_push_and_check (TemporalRun * r, gboolean first,
    GstBufferFlags flags, const gchar * what)
{
  GstBuffer *in = temporal_frame (r), *out;
  gdouble strength, threshold;
  gint compensated;
  CuconvSettings s;
  CuconvPlanes planes;
  gchar msg[160];

  GST_BUFFER_FLAG_SET (in, flags);
  frame_check_element_settings (r->e, &s);
  planes = frame_check_element_planes (r->e);
  g_object_get (r->e, "temporal", &strength, "temporal-threshold",
      &threshold, "temporal-mode", &compensated, NULL);
  out = gst_harness_push_and_pull (r->h, gst_buffer_ref (in));
  fail_unless (out != NULL, "%s: no output", what);
  fail_if (out == in, "%s: passed through", what);
  frame_check_temporal (&r->info, in, r->state, &s, planes, strength,
      threshold, compensated, first);
  if (r->kernel_off || cuconv_settings_is_identity (&s) ?
      frame_check_region_pixels (&r->info, out, r->state, CUCONV_REGION_FRAME,
          NULL, 0, TRUE, FALSE, msg, sizeof (msg)) != 0 :
      frame_check_compare_planes (&r->info, r->state, out, &s, planes, 1, msg,
          sizeof (msg), NULL, NULL) != 0)
    fail ("%s %s %dx%d: %s", what, GST_VIDEO_INFO_NAME (&r->info),
        GST_VIDEO_INFO_WIDTH (&r->info), GST_VIDEO_INFO_HEIGHT (&r->info),
        msg);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

/* Every format, a padded-stride input too, alone and before a blur, a
 * sharpen (luma only) and an edge map (chroma filled). */
GST_START_TEST (test_temporal_sequence)
{
  static const gchar *kernels[] = {
    "radius=0", "radius=2", "kernel=sharpen radius=2 amount=1",
    "kernel=sobel", "kernel=bilateral radius=2 planes=all",
    "radius=0 temporal-mode=compensated",
    "kernel=sobel temporal-mode=compensated",
  };
  guint f, k, t;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (k = 0; k < G_N_ELEMENTS (kernels); k++) {
      TemporalRun r;
      gchar *what;

      temporal_run_init (&r, formats[f], 37, 23, 40 + f * 8 + k,
          "temporal", 0.8, "temporal-threshold", 30.0, NULL);
      frame_check_set_args (r.e, kernels[k]);
      for (t = 0; t < 6; t++) {
        what = g_strdup_printf ("%s, frame %u", kernels[k], t);
        temporal_push_and_check (&r, t == 0, 0, what);
        g_free (what);
      }
      temporal_run_clear (&r);
    }
  }
}

GST_END_TEST;

/* temporal-mode changed while playing keeps the state: the next frame
 * reads it the new way. */
GST_START_TEST (test_temporal_mode_switch)
{
  static const gchar *fmts[] = { "I420", "RGBA", "P010_10LE" };

  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++) {
    TemporalRun r;

    temporal_run_init (&r, fmts[f], 45, 29, 70 + f, "temporal", 0.9,
        "temporal-threshold", 40.0, NULL);
    for (guint t = 0; t < 8; t++) {
      gchar *what = g_strdup_printf ("frame %u", t);

      g_object_set (r.e, "temporal-mode", t >= 3 && t < 6, NULL);
      temporal_push_and_check (&r, t == 0, 0, what);
      g_free (what);
    }
    temporal_run_clear (&r);
  }
}

GST_END_TEST;

/* Each reset starts afresh: the next frame passes and becomes the state
 * (checked against the definition with first), and the ones after it
 * blend with it again. */
GST_START_TEST (test_temporal_resets)
{
  static const gchar *fmts[] = { "GRAY8", "I420", "P010_10LE" };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (fmts); f++) {
    TemporalRun r;
    GstVideoInfo info;
    GstSegment segment;

    temporal_run_init (&r, fmts[f], 21, 13, 90 + f, "temporal", 0.9,
        "temporal-threshold", 40.0, NULL);
    temporal_push_and_check (&r, TRUE, 0, "first frame");
    temporal_push_and_check (&r, FALSE, 0, "second frame");

    /* a flushing seek: flush, then a new segment */
    fail_unless (gst_harness_push_event (r.h, gst_event_new_flush_start ()));
    fail_unless (gst_harness_push_event (r.h,
            gst_event_new_flush_stop (TRUE)));
    gst_segment_init (&segment, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (r.h,
            gst_event_new_segment (&segment)));
    temporal_push_and_check (&r, TRUE, 0, "after a flush");
    temporal_push_and_check (&r, FALSE, 0, "after a flush, next");

    /* a segment alone (a seek that does not flush) */
    segment.start = 10 * GST_SECOND;
    fail_unless (gst_harness_push_event (r.h,
            gst_event_new_segment (&segment)));
    temporal_push_and_check (&r, TRUE, 0, "after a segment");
    temporal_push_and_check (&r, FALSE, 0, "after a segment, next");

    /* a gap */
    fail_unless (gst_harness_push_event (r.h,
            gst_event_new_gap (11 * GST_SECOND, GST_SECOND)));
    temporal_push_and_check (&r, TRUE, 0, "after a gap");
    temporal_push_and_check (&r, FALSE, 0, "after a gap, next");

    /* a discontinuity */
    temporal_push_and_check (&r, TRUE, GST_BUFFER_FLAG_DISCONT,
        "a DISCONT buffer");
    temporal_push_and_check (&r, FALSE, 0, "after a DISCONT buffer");

    /* new caps: the same size at another framerate, then another size */
    info = r.info;
    GST_VIDEO_INFO_FPS_N (&info) = 25;
    temporal_run_caps (&r, &info);
    temporal_push_and_check (&r, TRUE, 0, "after new caps");
    temporal_push_and_check (&r, FALSE, 0, "after new caps, next");
    frame_check_info_init (&info, fmts[f], 17, 19);
    temporal_run_caps (&r, &info);
    temporal_push_and_check (&r, TRUE, 0, "after a new size");
    temporal_push_and_check (&r, FALSE, 0, "after a new size, next");

    temporal_run_clear (&r);
  }
}

GST_END_TEST;

/* Strength and threshold change while playing from the next frame on,
 * keeping the state; off, identity settings pass through again; on
 * again, the denoise starts afresh. */
GST_START_TEST (test_temporal_while_playing)
{
  TemporalRun r;
  GstBuffer *in, *out;

  temporal_run_init (&r, "NV12", 31, 17, 7, "radius", 0, NULL);
  in = temporal_frame (&r);
  out = gst_harness_push_and_pull (r.h, gst_buffer_ref (in));
  fail_unless (out == in, "temporal 0 and radius 0: passthrough");
  gst_buffer_unref (out);
  gst_buffer_unref (in);

  g_object_set (r.e, "temporal", 0.5, NULL);
  temporal_push_and_check (&r, TRUE, 0, "temporal 0 -> 0.5");
  temporal_push_and_check (&r, FALSE, 0, "temporal 0.5");
  g_object_set (r.e, "temporal", 0.95, NULL);
  temporal_push_and_check (&r, FALSE, 0, "temporal 0.5 -> 0.95");
  g_object_set (r.e, "temporal-threshold", 8.0, NULL);
  temporal_push_and_check (&r, FALSE, 0, "threshold 20 -> 8");
  g_object_set (r.e, "radius", 3, NULL);
  temporal_push_and_check (&r, FALSE, 0, "radius 0 -> 3");
  gst_util_set_object_arg (G_OBJECT (r.e), "planes", "luma");
  temporal_push_and_check (&r, FALSE, 0, "planes auto -> luma");

  g_object_set (r.e, "temporal", 0.0, "radius", 0, NULL);
  in = temporal_frame (&r);
  out = gst_harness_push_and_pull (r.h, gst_buffer_ref (in));
  fail_unless (out == in, "temporal off: passthrough again");
  gst_buffer_unref (out);
  gst_buffer_unref (in);

  g_object_set (r.e, "temporal", 0.7, NULL);
  temporal_push_and_check (&r, TRUE, 0, "temporal on again");
  temporal_push_and_check (&r, FALSE, 0, "temporal on again, next");
  temporal_run_clear (&r);
}

GST_END_TEST;

/* The denoise covers the whole frame whatever the region; the kernel
 * only the regions: outside them the output is the state exactly. */
GST_START_TEST (test_temporal_regions)
{
  const FrameCheckBox box = { 8, 4, 12, 9 };
  TemporalRun r;
  guint t;

  temporal_run_init (&r, "I420", 33, 21, 11, "temporal", 0.8,
      "temporal-threshold", 30.0, NULL);
  frame_check_set_args (r.e, "radius=0 sigma=2 region=roi "
      "regions=<<8,4,12,9>>");
  for (t = 0; t < 4; t++) {
    GstBuffer *in = temporal_frame (&r), *out;
    CuconvSettings s;
    gchar msg[160];

    frame_check_element_settings (r.e, &s);
    out = gst_harness_push_and_pull (r.h, gst_buffer_ref (in));
    frame_check_temporal (&r.info, in, r.state, &s, CUCONV_PLANES_AUTO, 0.8,
        30.0, FALSE, t == 0);
    if (frame_check_region_pixels (&r.info, out, r.state, CUCONV_REGION_INSIDE,
            &box, 1, FALSE, FALSE, msg, sizeof (msg)) != 0)
      fail ("frame %u, outside the region: %s", t, msg);
    fail_unless (frame_check_region_pixels (&r.info, out, r.state,
            CUCONV_REGION_INSIDE, &box, 1, TRUE, FALSE, msg,
            sizeof (msg)) != 0, "frame %u: the region was not blurred", t);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }

  /* a frame without a region: the kernel does nothing, the denoise goes on */
  frame_check_set_args (r.e, "regions=<>");
  r.kernel_off = TRUE;
  temporal_push_and_check (&r, FALSE, 0, "no region");
  temporal_run_clear (&r);
}

GST_END_TEST;

static Suite *
cudaconvolve_suite (void)
{
  Suite *s = suite_create ("cudaconvolve");
  TCase *tc = tcase_create ("general");

  /* check's default of 4 s a test is too little for the format and kernel
   * matrices on two busy cores */
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_caps);
#ifdef HAVE_CUDA
  tcase_add_test (tc, test_cuda_memory_caps);
  tcase_add_test (tc, test_cuda_memory_first);
#endif
  tcase_add_test (tc, test_chain_negotiation);
  tcase_add_test (tc, test_passthrough);
  tcase_add_test (tc, test_box_hand_computed);
  tcase_add_test (tc, test_constant_frame);
  tcase_add_test (tc, test_formats_match_reference);
  tcase_add_test (tc, test_odd_strides);
  tcase_add_test (tc, test_allocation_accepts_video_meta);
  tcase_add_test (tc, test_allocation_cpu_system_memory);
  tcase_add_test (tc, test_allocation_auto_without_gpu);
  tcase_add_test (tc, test_change_while_playing);
  tcase_add_test (tc, test_timestamps);
  tcase_add_test (tc, test_backend_cuda_without_gpu);
  tcase_add_test (tc, test_base_class);
  tcase_add_test (tc, test_backend_cuda_while_playing);
  tcase_add_test (tc, test_backend_auto);
  tcase_add_test (tc, test_kernels_match_reference);
  tcase_add_test (tc, test_planes_match_reference);
  tcase_add_test (tc, test_planes_rule);
  tcase_add_test (tc, test_custom_kernel_values);
  tcase_add_test (tc, test_parse_launch_arrays);
  tcase_add_test (tc, test_invalid_kernels);
  tcase_add_test (tc, test_invalid_kernel_on_bus);
  tcase_add_test (tc, test_new_properties_while_playing);
  tcase_add_test (tc, test_cpu_holds_no_frame);
  tcase_add_test (tc, test_temporal_sequence);
  tcase_add_test (tc, test_temporal_resets);
  tcase_add_test (tc, test_temporal_mode_switch);
  tcase_add_test (tc, test_temporal_while_playing);
  tcase_add_test (tc, test_temporal_regions);
  return s;
}

GST_CHECK_MAIN (cudaconvolve);
