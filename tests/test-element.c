/* gst-cudaconvolve: the element through GstHarness, on the CPU backend.
 *
 * The CPU backend is the reference, so its output must equal
 * ccv_reference_frame () bit for bit; a few hand-computed cases check the
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

#include "ccv.h"
#include "frame-check.h"
#ifdef HAVE_CUDA
#include "ccv-cuda.h"
#endif

static const gchar *formats[] = {
  "GRAY8", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444"
};

static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };

static int
device_count (void)
{
#ifdef HAVE_CUDA
  return ccv_cuda_device_count ();
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

/* Fails unless out, read through its own strides, equals the reference's
 * result on in: the CPU backend is the reference, so to the bit. */
static void
check_against_reference (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CcvSettings * s, const gchar * what)
{
  gchar first[160];

  if (frame_check_compare (info, in, out, s, 0, first, sizeof (first), NULL,
          NULL) != 0)
    fail ("%s %s %dx%d: %s", what, GST_VIDEO_INFO_NAME (info),
        GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), first);
}

/* Pushes one random frame through h and checks the output against the
 * reference with the element's current settings. */
static void
push_and_check (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GRand * rand, gboolean padded, const gchar * what)
{
  GstBuffer *in, *out;
  CcvSettings s;

  in = frame_check_buffer_random (info, rand, padded);
  frame_check_element_settings (e, &s);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL);
  fail_if (out == in, "%s: filtered in place / passed through", what);
  check_against_reference (info, in, out, &s, what);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
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
#define PINNED_MEMORY_TYPE "CcvHostMemory"

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
  CcvSettings s;
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
  check_against_reference (&info, in, out, &s, backend);
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

/* A constant picture stays constant under any normalised blur, except with
 * border=zero, which darkens the edges but not the middle. */
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
      guint p;

      gst_util_set_object_arg (G_OBJECT (e), "border", borders[b]);
      frame_check_info_init (&info, formats[f], 40, 30);
      harness_set_info (h, &info);
      in = gst_buffer_new_allocate (NULL, info.size, NULL);
      gst_buffer_memset (in, 0, 77, info.size);
      out = gst_harness_push_and_pull (h, in);

      fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READ));
      for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
        const guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
        gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
        gint comp[GST_VIDEO_MAX_COMPONENTS], w, rows, x, y;

        gst_video_format_info_component (info.finfo, p, comp);
        w = GST_VIDEO_FRAME_COMP_WIDTH (&frame, comp[0]) *
            GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, comp[0]);
        rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]);
        for (y = 0; y < rows; y++) {
          for (x = 0; x < w; x++) {
            if (!zero)
              fail_unless_equals_int (d[y * stride + x], 77);
          }
        }
        if (zero) {
          /* the corner sees zeros on two sides; the centre (radius 5, or 3
           * on subsampled chroma, from any edge) sees none */
          fail_unless (d[0] < 77, "%s plane %u corner %u", formats[f], p,
              d[0]);
          fail_unless_equals_int (d[(rows / 2) * stride + w / 2], 77);
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

GST_START_TEST (test_caps)
{
  static const gchar *refused[] = {
    "video/x-raw,format=RGBA,width=16,height=16,framerate=30/1",
    "video/x-raw,format=I420_10LE,width=16,height=16,framerate=30/1",
    "video/x-raw(memory:CUDAMemory),format=NV12,width=16,height=16,"
        "framerate=30/1",
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
  static const gchar *live[] =
      { "kernel", "radius", "sigma", "border", "backend" };
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GObjectClass *klass;
  GParamSpec *pspec;
  GValue v = G_VALUE_INIT;
  gchar *active;
  guint radius, i;
  gdouble sigma;
  gint kernel, border, backend;

  fail_unless (e != NULL);
  klass = G_OBJECT_GET_CLASS (e);

  /* defaults */
  g_object_get (e, "kernel", &kernel, "radius", &radius, "sigma", &sigma,
      "border", &border, "backend", &backend, "active-backend", &active,
      NULL);
  fail_unless_equals_int (kernel, CCV_KERNEL_GAUSSIAN);
  fail_unless_equals_int (radius, 2);
  fail_unless_equals_float (sigma, 0.0);
  fail_unless_equals_int (border, CCV_BORDER_CLAMP);
  fail_unless_equals_int (backend, 0);
  fail_unless_equals_string (active, "none");
  g_free (active);

  /* every filter property can change while playing, under a controller */
  for (i = 0; i < G_N_ELEMENTS (live); i++) {
    pspec = g_object_class_find_property (klass, live[i]);
    fail_unless (pspec != NULL);
    fail_unless ((pspec->flags & GST_PARAM_MUTABLE_PLAYING) &&
        (pspec->flags & GST_PARAM_CONTROLLABLE) &&
        (pspec->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE, "%s",
        live[i]);
  }
  pspec = g_object_class_find_property (klass, "active-backend");
  fail_unless (pspec != NULL && !(pspec->flags & G_PARAM_WRITABLE));

  /* ranges: out-of-range values are clamped by validation and refused by
   * g_object_set, which leaves the property as it was */
  pspec = g_object_class_find_property (klass, "radius");
  fail_unless_equals_int (G_PARAM_SPEC_UINT (pspec)->minimum, 0);
  fail_unless_equals_int (G_PARAM_SPEC_UINT (pspec)->maximum, 64);
  g_value_init (&v, G_TYPE_UINT);
  g_value_set_uint (&v, 65);
  fail_unless (g_param_value_validate (pspec, &v));
  fail_unless_equals_int (g_value_get_uint (&v), 64);
  g_value_unset (&v);
  g_object_set (e, "radius", 64, NULL);
  ASSERT_WARNING (g_object_set (e, "radius", 65, NULL));
  g_object_get (e, "radius", &radius, NULL);
  fail_unless_equals_int (radius, 64);

  pspec = g_object_class_find_property (klass, "sigma");
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->minimum, 0.0);
  fail_unless_equals_float (G_PARAM_SPEC_DOUBLE (pspec)->maximum, 64.0);
  g_object_set (e, "sigma", 3.5, NULL);
  ASSERT_WARNING (g_object_set (e, "sigma", -1.0, NULL));
  ASSERT_WARNING (g_object_set (e, "sigma", 64.5, NULL));
  g_object_get (e, "sigma", &sigma, NULL);
  fail_unless_equals_float (sigma, 3.5);
  ASSERT_WARNING (g_object_set (e, "border", 4, NULL));

  /* enum values equal the engine's */
  pspec = g_object_class_find_property (klass, "kernel");
#define CHECK_KERNEL(name, nick, desc) \
  check_enum (pspec->value_type, nick, CCV_KERNEL_##name);
  CCV_KERNEL_TYPES (CHECK_KERNEL);
#undef CHECK_KERNEL
  {
    GEnumClass *k = g_type_class_ref (pspec->value_type);

    fail_unless_equals_int (k->n_values, CCV_KERNEL_N);
    g_type_class_unref (k);
  }
  pspec = g_object_class_find_property (klass, "border");
  check_enum (pspec->value_type, "clamp", CCV_BORDER_CLAMP);
  check_enum (pspec->value_type, "mirror", CCV_BORDER_MIRROR);
  check_enum (pspec->value_type, "wrap", CCV_BORDER_WRAP);
  check_enum (pspec->value_type, "zero", CCV_BORDER_ZERO);
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
  if (level == GST_LEVEL_WARNING &&
      g_str_equal (gst_debug_category_get_name (category), "cudaconvolve"))
    g_atomic_int_inc (&n_warnings);
}

/* backend=auto: CUDA when usable, else the CPU with exactly one warning,
 * however often the backend is switched back to auto. */
GST_START_TEST (test_backend_auto)
{
  GRand *rand = g_rand_new_with_seed (4);
  GstElement *e;
  GstHarness *h;
  GstVideoInfo info;
  gchar *active;

  gst_debug_set_threshold_for_name ("cudaconvolve", GST_LEVEL_WARNING);
  gst_debug_add_log_function (count_warnings, NULL, NULL);
  n_warnings = 0;

  e = gst_element_factory_make ("cudaconvolve", NULL);
  fail_unless (e != NULL);
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "none");
  g_free (active);
  h = gst_harness_new_with_element (e, "sink", "src");
  frame_check_info_init (&info, "I420", 20, 10);
  harness_set_info (h, &info);

  g_object_get (e, "active-backend", &active, NULL);
  if (device_count () == 0) {
    fail_unless_equals_string (active, "cpu");
    push_and_check (h, e, &info, rand, FALSE, "auto without a GPU");
    gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
    push_and_check (h, e, &info, rand, FALSE, "cpu");
    gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
    push_and_check (h, e, &info, rand, FALSE, "auto again");
    fail_unless_equals_int (n_warnings, 1);
  } else {
    fail_unless_equals_string (active, "cuda");
    fail_unless_equals_int (n_warnings, 0);
  }
  g_free (active);

  gst_harness_teardown (h);
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "none");
  g_free (active);
  gst_object_unref (e);
  gst_debug_remove_log_function (count_warnings);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
cudaconvolve_suite (void)
{
  Suite *s = suite_create ("cudaconvolve");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_caps);
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
  tcase_add_test (tc, test_backend_cuda_while_playing);
  tcase_add_test (tc, test_backend_auto);
  return s;
}

GST_CHECK_MAIN (cudaconvolve);
