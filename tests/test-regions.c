/* gst-cudaconvolve: regions and the metadata they come from,
 * through GstHarness on the CPU backend.
 *
 * The expected output is built here, independently of the engine's
 * region code: the element's region=frame output on the same input
 * (itself checked against cuconv_reference_frame () bit for bit) where a
 * sample is filtered, the input elsewhere, with each rectangle clipped
 * and carried to the subsampled planes (rounded outward) by this file's
 * own arithmetic and format table.  Bit for bit: the CPU backend is the
 * reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "cuconv.h"
#include "frame-check.h"
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

/* The element's limits, as its blurbs state them. */
#define MAX_FIXED 1024
#define MAX_FRAME 4096
#define MAX_MARGIN 4096

enum
{
  MODE_FRAME, MODE_ROI, MODE_OUTSIDE
};

static const gchar *mode_nicks[] = { "frame", "roi", "outside-roi" };

/* The formats' planes, written out from their definitions: chroma
 * subsampling and the bytes of one pixel of each plane. */
static const struct
{
  const gchar *format;
  gint sub_x, sub_y;            /* of the planes after the first */
  gint pixel_bytes[3];          /* 0 = no such plane */
} formats[] = {
  {"GRAY8", 1, 1, {1}},
  {"GRAY16_LE", 1, 1, {2}},
  {"I420", 2, 2, {1, 1, 1}},
  {"YV12", 2, 2, {1, 1, 1}},
  {"NV12", 2, 2, {1, 2}},
  {"NV21", 2, 2, {1, 2}},
  {"Y42B", 2, 1, {1, 1, 1}},
  {"Y444", 1, 1, {1, 1, 1}},
  {"I420_10LE", 2, 2, {2, 2, 2}},
  {"I420_12LE", 2, 2, {2, 2, 2}},
  {"P010_10LE", 2, 2, {2, 4}},
  {"P016_LE", 2, 2, {2, 4}},
  {"Y444_16LE", 1, 1, {2, 2, 2}},
  {"RGBA", 1, 1, {4}},
  {"BGRA", 1, 1, {4}},
  {"RGBx", 1, 1, {4}},
  {"BGRx", 1, 1, {4}},
  {"AYUV", 1, 1, {4}},
};

static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };

/* Each kernel type, with every border among them. */
static const gchar *kernel_configs[] = {
  "kernel=gaussian radius=3",
  "kernel=gaussian radius=0 sigma=1.2 sigma-y=2.5 border=mirror",
  "kernel=box radius=2 border=wrap",
  "kernel=sharpen radius=2 amount=1.5 border=zero",
  "kernel=sobel radius=1",
  "kernel=laplacian radius=2 border=mirror",
  "kernel=custom kernel-x=<1,4,6,4,1> kernel-y=<1,2,1> border=zero",
  "kernel=custom matrix=<<0,-1,0>,<-1,5,-1>,<0,-1,0>> border=wrap",
  "kernel=gaussian radius=2 planes=chroma",
};

/* A rectangle as a test gives it: 64-bit, anything goes. */
typedef struct
{
  gint64 x, y, w, h;
} Box;

static gint
format_index (const GstVideoInfo * info)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_str_equal (formats[i].format, GST_VIDEO_INFO_NAME (info)))
      return i;
  fail ("no entry for %s", GST_VIDEO_INFO_NAME (info));
  return -1;
}

/* b grown by margin and clipped to the frame; FALSE when nothing is left
 * (an empty box stays empty). */
static gboolean
box_clip (const Box * b, gint64 margin, gint width, gint height, Box * out)
{
  gint64 x0, y0, x1, y1;

  if (b->w <= 0 || b->h <= 0)
    return FALSE;
  x0 = MAX (b->x - margin, 0);
  y0 = MAX (b->y - margin, 0);
  x1 = MIN (b->x + b->w + margin, width);
  y1 = MIN (b->y + b->h + margin, height);
  if (x0 >= x1 || y0 >= y1)
    return FALSE;
  out->x = x0;
  out->y = y0;
  out->w = x1 - x0;
  out->h = y1 - y0;
  return TRUE;
}

/* Whether pixel (x, y) of a plane subsampled by (sx, sy) lies in one of
 * the n clipped boxes, each carried to the plane rounded outward. */
static gboolean
plane_pixel_inside (const Box * boxes, guint n, gint sx, gint sy, gint x,
    gint y)
{
  guint i;

  for (i = 0; i < n; i++) {
    const Box *b = &boxes[i];

    if (x >= b->x / sx && x < (b->x + b->w + sx - 1) / sx &&
        y >= b->y / sy && y < (b->y + b->h + sy - 1) / sy)
      return TRUE;
  }
  return FALSE;
}

/* Maps the input, the whole-frame output and the output for reading. */
static void
map_three (const GstVideoInfo * info, GstBuffer * in, GstBuffer * full,
    GstBuffer * out, GstVideoFrame * fin, GstVideoFrame * ffull,
    GstVideoFrame * fout)
{
  fail_unless (gst_video_frame_map (fin, (GstVideoInfo *) info, in,
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (ffull, (GstVideoInfo *) info, full,
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (fout, (GstVideoInfo *) info, out,
          GST_MAP_READ));
}

static void
unmap_three (GstVideoFrame * fin, GstVideoFrame * ffull,
    GstVideoFrame * fout)
{
  gst_video_frame_unmap (fout);
  gst_video_frame_unmap (ffull);
  gst_video_frame_unmap (fin);
}

/* Fails unless out is full (the whole-frame output) where mode filters,
 * given the clipped boxes, and in elsewhere, byte for byte. */
static void
check_composition (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * full, GstBuffer * out, gint mode, const Box * boxes,
    guint n, const gchar * what)
{
  const gint f = format_index (info);
  GstVideoFrame fin, ffull, fout;
  guint p;

  map_three (info, in, full, out, &fin, &ffull, &fout);
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    const gint sx = p ? formats[f].sub_x : 1, sy = p ? formats[f].sub_y : 1;
    const gint bytes = formats[f].pixel_bytes[p];
    const gint w = (GST_VIDEO_INFO_WIDTH (info) + sx - 1) / sx;
    const gint h = (GST_VIDEO_INFO_HEIGHT (info) + sy - 1) / sy;
    gint x, y;

    fail_unless (bytes > 0, "%s: plane %u not in the table", what, p);
    for (y = 0; y < h; y++) {
      for (x = 0; x < w; x++) {
        gboolean inside = plane_pixel_inside (boxes, n, sx, sy, x, y);
        gboolean filtered = mode == MODE_FRAME ||
            (mode == MODE_ROI ? inside : !inside);
        const GstVideoFrame *want_frame = filtered ? &ffull : &fin;
        const guint8 *got = (const guint8 *)
            GST_VIDEO_FRAME_PLANE_DATA (&fout, p) +
            y * GST_VIDEO_FRAME_PLANE_STRIDE (&fout, p) + x * bytes;
        const guint8 *want = (const guint8 *)
            GST_VIDEO_FRAME_PLANE_DATA (want_frame, p) +
            y * GST_VIDEO_FRAME_PLANE_STRIDE (want_frame, p) + x * bytes;

        if (memcmp (got, want, bytes) != 0)
          fail ("%s %s %dx%d region=%s: plane %u pixel (%d, %d), %s: got "
              "%02x.., want %02x.. (%s)", what, GST_VIDEO_INFO_NAME (info),
              GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
              mode_nicks[mode], p, x, y, inside ? "inside" : "outside",
              got[0], want[0], filtered ? "the filter's" : "the input");
      }
    }
  }
  unmap_three (&fin, &ffull, &fout);
}

/* A cudaconvolve on the CPU backend in a playing harness. */
static GstHarness *
harness_new (GstElement ** element, const GstVideoInfo * info)
{
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstHarness *h;

  fail_unless (e != NULL, "cudaconvolve not found: is GST_PLUGIN_PATH set?");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_harness_set_src_caps (h, gst_video_info_to_caps (info));
  *element = e;
  gst_object_unref (e);
  return h;
}

static void
reset_filter (GstElement * e)
{
  frame_check_set_args (e, "kernel=gaussian radius=2 sigma=0 sigma-y=0 amount=1 "
      "border=clamp planes=auto normalize=true kernel-x=<> kernel-y=<> "
      "matrix=<> region=frame roi-margin=0 regions=<> roi-hold=0 "
      "roi-shape=box roi-feather=0 roi-scale=0");
  g_object_set (e, "roi-types", NULL, NULL);
}

/* The whole-frame output for in, with e's settings and region=frame,
 * checked against the reference. */
static GstBuffer *
push_whole_frame (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GstBuffer * in, const gchar * what)
{
  CuconvSettings s;
  GstBuffer *full;
  gchar first[160];
  gint mode;

  g_object_get (e, "region", &mode, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "region", "frame");
  full = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (full != NULL && full != in, "%s: no whole-frame output", what);
  frame_check_element_settings (e, &s);
  if (frame_check_compare_planes (info, in, full, &s,
          frame_check_element_planes (e), 1, first, sizeof (first), NULL,
          NULL) != 0)
    fail ("%s %s: whole frame: %s", what, GST_VIDEO_INFO_NAME (info), first);
  g_object_set (e, "region", mode, NULL);
  return full;
}

/* Pushes in with e's region settings and checks the output against the
 * composition of the whole-frame output and in, for the clipped boxes and
 * mode (-1: e's region). */
static void
push_and_check_mode (GstHarness * h, GstElement * e,
    const GstVideoInfo * info, GstBuffer * in, gint mode, const Box * boxes,
    guint n, const gchar * what)
{
  GstBuffer *full, *out;

  full = push_whole_frame (h, e, info, in, what);
  if (mode < 0)
    g_object_get (e, "region", &mode, NULL);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL, "%s: no output", what);
  check_composition (info, in, full, out, mode, boxes, n, what);
  gst_buffer_unref (out);
  gst_buffer_unref (full);
}

static void
push_and_check_regions (GstHarness * h, GstElement * e,
    const GstVideoInfo * info, GstBuffer * in, const Box * boxes, guint n,
    const gchar * what)
{
  push_and_check_mode (h, e, info, in, -1, boxes, n, what);
}

/* push_and_check_regions (), but with region=roi and no box nothing is
 * filtered: the very buffer comes out. */
static void
push_and_check_or_through (GstHarness * h, GstElement * e,
    const GstVideoInfo * info, GstBuffer * in, const Box * boxes, guint n,
    const gchar * what)
{
  GstBuffer *out;
  gint mode;

  g_object_get (e, "region", &mode, NULL);
  if (n > 0 || mode != MODE_ROI) {
    push_and_check_regions (h, e, info, in, boxes, n, what);
    return;
  }
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in, "%s: not passed through", what);
  gst_buffer_unref (out);
}

/* Appends the fixed boxes to s as a regions value, and their clipped
 * forms to clipped. */
static void
regions_string (GString * s, const Box * boxes, guint n,
    const GstVideoInfo * info, Box * clipped, guint * n_clipped)
{
  guint i;

  g_string_append (s, "<");
  for (i = 0; i < n; i++) {
    g_string_append_printf (s, "%s<%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
        ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ">", i ? "," : "",
        boxes[i].x, boxes[i].y, boxes[i].w, boxes[i].h);
    if (box_clip (&boxes[i], 0, GST_VIDEO_INFO_WIDTH (info),
            GST_VIDEO_INFO_HEIGHT (info), &clipped[*n_clipped]))
      (*n_clipped)++;
  }
  g_string_append (s, ">");
}

static void
add_roi (GstBuffer * buf, const gchar * type, guint x, guint y, guint w,
    guint h)
{
  fail_unless (gst_buffer_add_video_region_of_interest_meta (buf, type, x, y,
          w, h) != NULL);
}

/* Fails unless e's regions equals want, in gst-launch-1.0's syntax. */
static void
check_regions_value (GstElement * e, const gchar * want)
{
  GValue got = G_VALUE_INIT, expected = G_VALUE_INIT;

  g_value_init (&got, GST_TYPE_ARRAY);
  g_value_init (&expected, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "regions", &got);
  fail_unless (gst_value_deserialize (&expected, want));
  if (gst_value_compare (&got, &expected) != GST_VALUE_EQUAL) {
    gchar *str = gst_value_serialize (&got);

    fail ("regions is %s, not %s", str, want);
    g_free (str);
  }
  g_value_unset (&expected);
  g_value_unset (&got);
}

GST_START_TEST (test_region_properties)
{
  static const gchar *live[] = { "region", "roi-margin" };
  static const gchar *lists[] = { "roi-types", "regions" };
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (e);
  GParamSpec *pspec;
  GEnumClass *enum_class;
  GValue v = G_VALUE_INIT;
  gchar *types;
  gint region;
  guint margin, i;

  g_object_get (e, "region", &region, "roi-types", &types, "roi-margin",
      &margin, NULL);
  fail_unless_equals_int (region, CUCONV_REGION_FRAME);
  fail_unless (types == NULL);
  fail_unless_equals_int (margin, 0);
  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "regions", &v);
  fail_unless_equals_int (gst_value_array_get_size (&v), 0);
  g_value_unset (&v);

  for (i = 0; i < G_N_ELEMENTS (live); i++) {
    pspec = g_object_class_find_property (klass, live[i]);
    fail_unless (pspec != NULL, "%s", live[i]);
    fail_unless ((pspec->flags & GST_PARAM_MUTABLE_PLAYING) &&
        (pspec->flags & GST_PARAM_CONTROLLABLE), "%s", live[i]);
    fail_unless (strlen (g_param_spec_get_blurb (pspec)) > 40);
  }
  for (i = 0; i < G_N_ELEMENTS (lists); i++) {
    pspec = g_object_class_find_property (klass, lists[i]);
    fail_unless (pspec != NULL, "%s", lists[i]);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_PLAYING, "%s", lists[i]);
    fail_unless (strlen (g_param_spec_get_blurb (pspec)) > 40);
  }
  pspec = g_object_class_find_property (klass, "regions");
  fail_unless (GST_IS_PARAM_SPEC_ARRAY_LIST (pspec));

  /* the enum is the engine's, under the nicks the docs use */
  pspec = g_object_class_find_property (klass, "region");
  enum_class = g_type_class_ref (pspec->value_type);
  fail_unless_equals_int (enum_class->n_values, 3);
  fail_unless_equals_int (g_enum_get_value_by_nick (enum_class,
          "frame")->value, CUCONV_REGION_FRAME);
  fail_unless_equals_int (g_enum_get_value_by_nick (enum_class,
          "roi")->value, CUCONV_REGION_INSIDE);
  fail_unless_equals_int (g_enum_get_value_by_nick (enum_class,
          "outside-roi")->value, CUCONV_REGION_OUTSIDE);
  g_type_class_unref (enum_class);
  fail_unless (gst_type_is_plugin_api (pspec->value_type, NULL));

  /* roi-margin's range */
  pspec = g_object_class_find_property (klass, "roi-margin");
  fail_unless_equals_int (G_PARAM_SPEC_UINT (pspec)->maximum, MAX_MARGIN);
  g_object_set (e, "roi-margin", MAX_MARGIN, NULL);
  ASSERT_REFUSED (g_object_set (e, "roi-margin", MAX_MARGIN + 1, NULL));
  g_object_get (e, "roi-margin", &margin, NULL);
  fail_unless_equals_int (margin, MAX_MARGIN);

  /* values read back as set, in gst-launch-1.0's syntax */
  frame_check_set_args (e, "region=outside-roi roi-types=face,license-plate");
  gst_util_set_object_arg (G_OBJECT (e), "regions",
      "<<10,10,100,50>,<200,200,64,64>,<-5,-7,0,3>>");
  g_object_get (e, "region", &region, "roi-types", &types, NULL);
  fail_unless_equals_int (region, CUCONV_REGION_OUTSIDE);
  fail_unless_equals_string (types, "face,license-plate");
  g_free (types);
  check_regions_value (e, "<<10,10,100,50>,<200,200,64,64>,<-5,-7,0,3>>");
  gst_util_set_object_arg (G_OBJECT (e), "regions", "<>");
  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "regions", &v);
  fail_unless_equals_int (gst_value_array_get_size (&v), 0);
  g_value_unset (&v);

  gst_object_unref (e);
}

GST_END_TEST;

/* Fixed rectangles at odd positions (chroma rounding), overlapping,
 * partly off the frame on every side, one empty, and an ROI meta: every
 * format, kernel type and border, region roi and outside-roi. */
static const Box matrix_boxes[] = {
  {3, 2, 9, 7}, {-4, 15, 10, 20}, {30, -5, 20, 12}, {9, 5, 6, 6},
  {0, 0, 0, 5}, {36, 22, 5, 5},
};

GST_START_TEST (test_regions_match_composition)
{
  static const gint sizes[][2] = { {37, 23}, {1, 1} };
  GRand *rand = g_rand_new_with_seed (101);
  guint f, z, k, b, m;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
      GstVideoInfo info;
      GstElement *e;
      GstHarness *h;
      Box clipped[G_N_ELEMENTS (matrix_boxes) + 1];
      guint n = 0;
      GString *regions = g_string_new (NULL);
      Box meta = { 20, 11, 7, 5 };

      frame_check_info_init (&info, formats[f].format, sizes[z][0],
          sizes[z][1]);
      h = harness_new (&e, &info);
      /* the meta first: the element takes metas, then fixed regions */
      if (box_clip (&meta, 0, sizes[z][0], sizes[z][1], &clipped[n]))
        n++;
      regions_string (regions, matrix_boxes, G_N_ELEMENTS (matrix_boxes),
          &info, clipped, &n);

      for (k = 0; k < G_N_ELEMENTS (kernel_configs) + G_N_ELEMENTS (borders);
          k++) {
        for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
          GstBuffer *in = frame_check_buffer_random (&info, rand, k % 2);
          gchar *what;

          reset_filter (e);
          if (k < G_N_ELEMENTS (kernel_configs)) {
            frame_check_set_args (e, kernel_configs[k]);
            what = g_strdup (kernel_configs[k]);
          } else {
            b = k - G_N_ELEMENTS (kernel_configs);
            frame_check_set_args (e, "kernel=gaussian radius=4");
            gst_util_set_object_arg (G_OBJECT (e), "border", borders[b]);
            what = g_strdup_printf ("gaussian r4 border=%s", borders[b]);
          }
          gst_util_set_object_arg (G_OBJECT (e), "regions", regions->str);
          gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[m]);
          add_roi (in, "face", meta.x, meta.y, meta.w, meta.h);
          push_and_check_regions (h, e, &info, in, clipped, n, what);
          gst_buffer_unref (in);
          g_free (what);
        }
      }
      g_string_free (regions, TRUE);
      gst_harness_teardown (h);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* roi-types picks the metas: a "face" and a "car" on one frame. */
GST_START_TEST (test_roi_types)
{
  static const struct
  {
    const gchar *types;
    gboolean face, car;
  } cases[] = {
    {"face", TRUE, FALSE},
    {"car", FALSE, TRUE},
    {" car , face ", TRUE, TRUE},
    {"face,,license-plate", TRUE, FALSE},
    {"", TRUE, TRUE},
    {NULL, TRUE, TRUE},
    {"dog", FALSE, FALSE},
  };
  const Box face = { 4, 6, 10, 9 }, car = { 25, 3, 11, 15 };
  GRand *rand = g_rand_new_with_seed (102);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint c, m;

  frame_check_info_init (&info, "I420", 41, 27);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=3");
  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
      GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
      Box boxes[2];
      guint n = 0;

      add_roi (in, "face", face.x, face.y, face.w, face.h);
      add_roi (in, "car", car.x, car.y, car.w, car.h);
      if (cases[c].face)
        boxes[n++] = face;
      if (cases[c].car)
        boxes[n++] = car;
      g_object_set (e, "roi-types", cases[c].types, NULL);
      gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[m]);
      push_and_check_or_through (h, e, &info, in, boxes, n,
          cases[c].types ? cases[c].types : "roi-types=NULL");
      gst_buffer_unref (in);
    }
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* roi-types keeps names, not quarks, which are never freed: names no
 * meta has brought yet leave GLib's quark table as it was, however many an
 * application sets, and a meta that brings one later is matched. */
GST_START_TEST (test_roi_types_not_interned)
{
  const Box bird = { 5, 4, 12, 10 };
  GRand *rand = g_rand_new_with_seed (103);
  GstVideoInfo info;
  GstBuffer *in;
  GstElement *e;
  GstHarness *h;
  gchar name[64];
  guint i;

  frame_check_info_init (&info, "I420", 41, 27);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=3 region=roi");
  for (i = 0; i < 100; i++) {
    g_snprintf (name, sizeof (name), "cudaconvolve-test-type-%u", i);
    g_object_set (e, "roi-types", name, NULL);
    fail_unless (g_quark_try_string (name) == 0,
        "roi-types=%s interned its name", name);
  }
  in = frame_check_buffer_random (&info, rand, FALSE);
  add_roi (in, name, bird.x, bird.y, bird.w, bird.h);
  push_and_check_or_through (h, e, &info, in, &bird, 1, name);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

#ifdef HAVE_GST_ANALYTICS
/* Object detections of a GstAnalyticsRelationMeta (what GStreamer's own
 * inference elements attach) are regions beside the ROI metas: roi-types
 * matches their labels, roi-min-confidence drops the weaker ones,
 * roi-margin grows them, boxes off the frame are clipped; other kinds of
 * analytics entries (a classification) are not regions. */
GST_START_TEST (test_analytics_detections)
{
  static const struct
  {
    const gchar *args;
    gboolean face, plate, weak;
  } cases[] = {
    {"roi-min-confidence=0", TRUE, TRUE, TRUE},
    {"roi-min-confidence=0.5", TRUE, TRUE, FALSE},
    {"roi-min-confidence=0.95", FALSE, TRUE, FALSE},
    {"roi-types=face roi-min-confidence=0", TRUE, FALSE, TRUE},
    {"roi-types=license-plate roi-min-confidence=0.5", FALSE, TRUE, FALSE},
    {"roi-types=dog", FALSE, FALSE, FALSE},
  };
  /* the plate runs past the right edge, the weak face's box starts above
   * the frame */
  const Box face = { 4, 6, 10, 9 }, plate = { 33, 3, 20, 15 };
  const Box weak = { 15, -4, 6, 12 }, roi = { 2, 20, 5, 5 };
  GRand *rand = g_rand_new_with_seed (110);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint c, m;

  frame_check_info_init (&info, "NV12", 41, 27);
  h = harness_new (&e, &info);
  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
      GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
      GstAnalyticsRelationMeta *meta = gst_buffer_add_analytics_relation_meta
          (in);
      GstAnalyticsODMtd od;
      GstAnalyticsClsMtd cls;
      const GQuark face_q = g_quark_from_static_string ("face");
      gfloat conf[] = { 0.9f };
      GQuark classes[] = { face_q };
      Box boxes[5], clipped[5];
      guint n = 0, k = 0, i;

      fail_unless (gst_analytics_relation_meta_add_od_mtd (meta, face_q,
              face.x, face.y, face.w, face.h, 0.9f, &od));
      fail_unless (gst_analytics_relation_meta_add_od_mtd (meta,
              g_quark_from_static_string ("license-plate"), plate.x, plate.y,
              plate.w, plate.h, 0.99f, &od));
      fail_unless (gst_analytics_relation_meta_add_od_mtd (meta, face_q,
              weak.x, weak.y, weak.w, weak.h, 0.2f, &od));
      fail_unless (gst_analytics_relation_meta_add_cls_mtd (meta, 1, conf,
              classes, &cls));
      /* an ROI meta of another type counts whatever the confidence */
      add_roi (in, "sign", roi.x, roi.y, roi.w, roi.h);

      if (cases[c].face)
        boxes[n++] = face;
      if (cases[c].plate)
        boxes[n++] = plate;
      if (cases[c].weak)
        boxes[n++] = weak;
      if (!strstr (cases[c].args, "roi-types"))
        boxes[n++] = roi;
      for (i = 0; i < n; i++)
        if (box_clip (&boxes[i], 0, GST_VIDEO_INFO_WIDTH (&info),
                GST_VIDEO_INFO_HEIGHT (&info), &clipped[k]))
          k++;
      reset_filter (e);
      frame_check_set_args (e, "radius=3");
      frame_check_set_args (e, cases[c].args);
      gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[m]);
      push_and_check_or_through (h, e, &info, in, clipped, k,
          cases[c].args);
      gst_buffer_unref (in);
    }
  }
  /* grown by roi-margin */
  {
    GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
    GstAnalyticsRelationMeta *meta = gst_buffer_add_analytics_relation_meta
        (in);
    GstAnalyticsODMtd od;
    Box grown;

    fail_unless (gst_analytics_relation_meta_add_od_mtd (meta,
            g_quark_from_static_string ("face"), face.x, face.y, face.w,
            face.h, 0.9f, &od));
    reset_filter (e);
    frame_check_set_args (e, "radius=3 region=roi roi-margin=3");
    fail_unless (box_clip (&face, 3, GST_VIDEO_INFO_WIDTH (&info),
            GST_VIDEO_INFO_HEIGHT (&info), &grown));
    push_and_check_regions (h, e, &info, in, &grown, 1, "roi-margin=3");
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* roi-hold with the analytics tracking entries: a detection of the same
 * tracking id takes a held one's place wherever it moved; one of another
 * id is another object even where the boxes overlap; one without a
 * tracking id is matched by overlap. */
GST_START_TEST (test_roi_hold_tracking)
{
  static const struct
  {
    Box box;
    gint64 id;                  /* -1: no tracking entry */
    gint n_want;
    Box want[2];
  } steps[] = {
    {{4, 3, 8, 6}, 7, 1, {{4, 3, 8, 6}}},
    /* id 7 far away: the held box goes */
    {{30, 15, 6, 6}, 7, 1, {{30, 15, 6, 6}}},
    /* id 8 over id 7's box: both */
    {{31, 16, 6, 6}, 8, 2, {{31, 16, 6, 6}, {30, 15, 6, 6}}},
    /* no id, over both: takes the first held's place (id 7) */
    {{30, 15, 7, 7}, -1, 2, {{30, 15, 7, 7}, {31, 16, 6, 6}}},
  };
  GRand *rand = g_rand_new_with_seed (112);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint i;

  frame_check_info_init (&info, "NV12", 45, 29);
  h = harness_new (&e, &info);
  reset_filter (e);
  frame_check_set_args (e, "radius=2 region=roi roi-hold=3");
  for (i = 0; i < G_N_ELEMENTS (steps); i++) {
    GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
    GstAnalyticsRelationMeta *meta = gst_buffer_add_analytics_relation_meta
        (in);
    GstAnalyticsODMtd od;
    GstAnalyticsTrackingMtd trk;
    gchar *what = g_strdup_printf ("tracking, frame %u", i);

    fail_unless (gst_analytics_relation_meta_add_od_mtd (meta,
            g_quark_from_static_string ("face"), steps[i].box.x,
            steps[i].box.y, steps[i].box.w, steps[i].box.h, 0.9f, &od));
    if (steps[i].id >= 0) {
      fail_unless (gst_analytics_relation_meta_add_tracking_mtd (meta,
              steps[i].id, 0, &trk));
      fail_unless (gst_analytics_relation_meta_set_relation (meta,
              GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, trk.id));
    }
    push_and_check_regions (h, e, &info, in, steps[i].want,
        steps[i].n_want, what);
    g_free (what);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;
#endif

/* roi-margin grows the metas' boxes (clipped at the edges), never the
 * fixed regions; both together. */
GST_START_TEST (test_roi_margin_and_fixed)
{
  static const guint margins[] = { 0, 1, 3, 8, MAX_MARGIN };
  const Box face = { 5, 4, 6, 5 }, fixed = { 30, 12, 7, 6 };
  GRand *rand = g_rand_new_with_seed (103);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint i, m;

  frame_check_info_init (&info, "NV12", 45, 29);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "kernel=box radius=2 regions=<<30,12,7,6>>");
  for (i = 0; i < G_N_ELEMENTS (margins); i++) {
    for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
      GstBuffer *in = frame_check_buffer_random (&info, rand, TRUE);
      Box boxes[2];
      guint n = 0;
      gchar *what = g_strdup_printf ("roi-margin=%u", margins[i]);

      add_roi (in, "face", face.x, face.y, face.w, face.h);
      /* an empty detection stays empty, whatever the margin */
      add_roi (in, "face", 20, 20, 0, 4);
      fail_unless (box_clip (&face, margins[i], 45, 29, &boxes[n++]));
      boxes[n++] = fixed;
      g_object_set (e, "roi-margin", margins[i], NULL);
      gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[m]);
      if (m == MODE_OUTSIDE && margins[i] == MAX_MARGIN) {
        /* the grown face covers the frame: nothing outside it */
        GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));

        fail_unless (out == in, "%s outside-roi: not passed through", what);
        gst_buffer_unref (out);
      } else {
        push_and_check_regions (h, e, &info, in, boxes, n, what);
      }
      g_free (what);
      gst_buffer_unref (in);
    }
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* One frame of a roi-hold sequence: the boxes of its ROI metas (face),
 * and the boxes the element must apply. */
typedef struct
{
  Box metas[2];
  guint n_metas;
  Box want[3];
  guint n_want;
} HoldStep;

static void
run_hold_steps (GstHarness * h, GstElement * e, const GstVideoInfo * info,
    GRand * rand, gint mode, const HoldStep * steps, guint n_steps,
    const gchar * what)
{
  guint i, j;

  for (i = 0; i < n_steps; i++) {
    GstBuffer *in = frame_check_buffer_random (info, rand, FALSE);
    gchar *step = g_strdup_printf ("%s %s, frame %u", what, mode_nicks[mode],
        i);

    for (j = 0; j < steps[i].n_metas; j++)
      add_roi (in, "face", steps[i].metas[j].x, steps[i].metas[j].y,
          steps[i].metas[j].w, steps[i].metas[j].h);
    gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[mode]);
    push_and_check_or_through (h, e, info, in, steps[i].want,
        steps[i].n_want, step);
    g_free (step);
    gst_buffer_unref (in);
  }
}

/* roi-hold: a detection is still applied for that many frames after the
 * last one that carried it; one that overlaps it takes its place; the
 * frames with region=frame between do not count; 0 holds nothing; a flush
 * or new caps start afresh. */
GST_START_TEST (test_roi_hold)
{
  const Box a = { 4, 3, 8, 6 }, a2 = { 9, 6, 8, 6 }, b = { 30, 15, 6, 6 };
  const HoldStep held[] = {
    {{a}, 1, {a}, 1},
    {{}, 0, {a}, 1},
    {{}, 0, {a}, 1},
    {{}, 0, {}, 0},
    {{a}, 1, {a}, 1},
    /* a2 overlaps a: a's place, not beside it */
    {{a2}, 1, {a2}, 1},
    {{b}, 1, {b, a2}, 2},
    {{}, 0, {b, a2}, 2},
    {{}, 0, {b}, 1},
    {{}, 0, {}, 0},
  };
  const HoldStep none[] = {
    {{a}, 1, {a}, 1},
    {{}, 0, {}, 0},
  };
  const HoldStep one[] = {
    {{a}, 1, {a}, 1},
  };
  const HoldStep gone[] = {
    {{}, 0, {}, 0},
  };
  GRand *rand = g_rand_new_with_seed (111);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  gint m;

  frame_check_info_init (&info, "I420", 45, 29);
  h = harness_new (&e, &info);
  for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
    reset_filter (e);
    frame_check_set_args (e, "radius=2 roi-hold=2");
    run_hold_steps (h, e, &info, rand, m, held, G_N_ELEMENTS (held),
        "roi-hold=2");

    /* held across region=frame frames, which do not count */
    run_hold_steps (h, e, &info, rand, m, one, 1, "before region=frame");
    {
      GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);

      gst_util_set_object_arg (G_OBJECT (e), "region", "frame");
      push_and_check_mode (h, e, &info, in, MODE_FRAME, NULL, 0,
          "region=frame");
      gst_buffer_unref (in);
    }
    run_hold_steps (h, e, &info, rand, m, held + 1, 3, "after region=frame");

    /* a flush drops what is held */
    run_hold_steps (h, e, &info, rand, m, one, 1, "before a flush");
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
    {
      GstSegment segment;

      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (h,
              gst_event_new_segment (&segment)));
    }
    run_hold_steps (h, e, &info, rand, m, gone, 1, "after a flush");

    frame_check_set_args (e, "roi-hold=0");
    run_hold_steps (h, e, &info, rand, m, none, G_N_ELEMENTS (none),
        "roi-hold=0");

    /* the largest hold keeps a detection over the frames after it */
    frame_check_set_args (e, "roi-hold=300");
    run_hold_steps (h, e, &info, rand, m, held, 3, "roi-hold=300");
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* region=roi without a rectangle passes the buffer through; one meta
 * later the frame is filtered again; outside-roi without a rectangle is
 * the whole-frame filter. */
GST_START_TEST (test_roi_without_regions)
{
  GRand *rand = g_rand_new_with_seed (104);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  GstBuffer *in, *out, *full;
  Box box = { 2, 3, 8, 8 }, short_x = { 1, 0, 32, 21 }, short_y = { 0, 0,
    33, 20
  };
  guint i;

  frame_check_info_init (&info, "Y42B", 33, 21);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=2 region=roi");
  for (i = 0; i < 3; i++) {
    in = frame_check_buffer_random (&info, rand, FALSE);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (out == in, "frame %u without a region not passed through",
        i);
    fail_unless (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (e)));
    gst_buffer_unref (out);

    /* a meta outside the frame is no region either */
    add_roi (in, "face", 33, 0, 10, 10);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (out == in);
    gst_buffer_unref (out);

    add_roi (in, "face", box.x, box.y, box.w, box.h);
    push_and_check_regions (h, e, &info, in, &box, 1, "one meta");
    fail_if (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (e)));
    gst_buffer_unref (in);
  }

  gst_util_set_object_arg (G_OBJECT (e), "region", "outside-roi");
  in = frame_check_buffer_random (&info, rand, FALSE);
  full = push_whole_frame (h, e, &info, in, "outside-roi, none");
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != in);
  check_composition (&info, in, full, out, MODE_FRAME, NULL, 0,
      "outside-roi without a region");
  gst_buffer_unref (out);
  gst_buffer_unref (full);

  /* outside-roi: a rectangle covering the frame leaves nothing to filter,
   * one a column short leaves that column */
  gst_util_set_object_arg (G_OBJECT (e), "regions", "<<-1,-2,35,30>>");
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out == in, "outside-roi, covered: not passed through");
  gst_buffer_unref (out);
  gst_util_set_object_arg (G_OBJECT (e), "regions", "<<1,0,32,21>>");
  push_and_check_regions (h, e, &info, in, &short_x, 1, "outside-roi, x = 0");
  gst_util_set_object_arg (G_OBJECT (e), "regions", "<<0,0,33,20>>");
  push_and_check_regions (h, e, &info, in, &short_y, 1,
      "outside-roi, last row");
  gst_buffer_unref (in);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

static guint n_over_cap;

static GstBusSyncReply
count_over_cap (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    GError *err = NULL;

    gst_message_parse_warning (msg, &err, NULL);
    if (strstr (err->message, "more than 4096 regions") &&
        strstr (err->message, "filtered whole"))
      n_over_cap++;
    g_error_free (err);
  }
  /* a sync handler that drops a message unrefs it */
  gst_message_unref (msg);
  return GST_BUS_DROP;
}

/* 1024 fixed rectangles and up to 4096 a frame are honoured, each one;
 * beyond, the frame is filtered whole with one warning per run of such
 * frames (never a region left unfiltered). */
GST_START_TEST (test_many_rectangles)
{
  static Box boxes[MAX_FRAME + 1];
  GRand *rand = g_rand_new_with_seed (105);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  GstBus *bus = gst_bus_new ();
  GstBuffer *in;
  GString *regions = g_string_new (NULL);
  guint i, n = 0, run;

  frame_check_info_init (&info, "I420", 128, 96);
  h = harness_new (&e, &info);
  gst_element_set_bus (e, bus);
  gst_bus_set_sync_handler (bus, count_over_cap, NULL, NULL);
  frame_check_set_args (e, "radius=1 region=roi");

  /* 1024 fixed 1x2 rectangles on a grid, odd positions */
  {
    Box fixed[MAX_FIXED];

    for (i = 0; i < MAX_FIXED; i++) {
      fixed[i].x = 1 + (i % 32) * 4;
      fixed[i].y = 1 + (i / 32) * 3;
      fixed[i].w = 1;
      fixed[i].h = 2;
    }
    regions_string (regions, fixed, MAX_FIXED, &info, boxes, &n);
    fail_unless_equals_int (n, MAX_FIXED);
  }
  gst_util_set_object_arg (G_OBJECT (e), "regions", regions->str);
  in = frame_check_buffer_random (&info, rand, FALSE);
  push_and_check_regions (h, e, &info, in, boxes, n, "1024 fixed");
  gst_buffer_unref (in);

  /* metas up to exactly 4096 in all: still regions */
  in = frame_check_buffer_random (&info, rand, FALSE);
  for (i = 0; n < MAX_FRAME; i++, n++) {
    Box b = { (i * 7) % 127, (i * 5) % 95, 1, 1 };

    add_roi (in, "face", b.x, b.y, b.w, b.h);
    boxes[n] = b;
  }
  push_and_check_regions (h, e, &info, in, boxes, n, "4096 a frame");
  fail_unless_equals_int (n_over_cap, 0);

  /* one more: the whole frame, warned once for the run of such frames */
  add_roi (in, "face", 0, 0, 1, 1);
  for (run = 0; run < 2; run++) {
    for (i = 0; i < 3; i++)
      push_and_check_mode (h, e, &info, in, MODE_FRAME, NULL, 0,
          "4097 a frame");
    fail_unless_equals_int (n_over_cap, 1 + run);
    {
      /* a frame under the cap ends the run */
      GstBuffer *few = frame_check_buffer_random (&info, rand, FALSE);
      Box b = { 5, 5, 9, 9 };

      gst_util_set_object_arg (G_OBJECT (e), "regions", "<<5,5,9,9>>");
      push_and_check_regions (h, e, &info, few, &b, 1, "under the cap");
      gst_util_set_object_arg (G_OBJECT (e), "regions", regions->str);
      gst_buffer_unref (few);
    }
  }
  gst_buffer_unref (in);
  g_string_free (regions, TRUE);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Boxes off the frame, empty, at the limits of guint and gint, whose
 * sums overflow: clipped or skipped, never read or written out of bounds
 * (valgrind runs this suite). */
GST_START_TEST (test_bad_rectangles)
{
  static const Box metas[] = {
    {G_MAXUINT, 0, 5, 5}, {0, G_MAXUINT, 5, 5}, {4, 4, G_MAXUINT, 3},
    {6, 2, 3, G_MAXUINT}, {G_MAXUINT, G_MAXUINT, G_MAXUINT, G_MAXUINT},
    {G_MAXUINT - 2, 1, 10, 10}, {0, 0, 0, 0}, {40, 40, 1, 1},
    {G_MAXINT, 0, G_MAXINT, 4},
  };
  static const Box fixed[] = {
    {G_MAXINT, G_MAXINT, G_MAXINT, G_MAXINT}, {G_MININT, G_MININT, G_MAXINT,
        G_MAXINT}, {G_MININT, 3, G_MAXINT, 2}, {-10, -10, 12, 11},
    {G_MAXINT - 1, 0, G_MAXINT, 2}, {0, 0, 0, G_MAXINT}, {-3, 19, 5, 5},
  };
  static const guint margins[] = { 0, 2, MAX_MARGIN };
  GRand *rand = g_rand_new_with_seed (106);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  GString *regions = g_string_new (NULL);
  Box boxes[G_N_ELEMENTS (metas) + G_N_ELEMENTS (fixed)];
  guint n_fixed = 0, i, k, m;

  frame_check_info_init (&info, "P010_10LE", 23, 21);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=2 border=wrap");
  /* clipped fixed boxes go after the metas' in boxes */
  regions_string (regions, fixed, G_N_ELEMENTS (fixed), &info,
      boxes + G_N_ELEMENTS (metas), &n_fixed);
  gst_util_set_object_arg (G_OBJECT (e), "regions", regions->str);

  for (k = 0; k < G_N_ELEMENTS (margins); k++) {
    for (m = MODE_ROI; m <= MODE_OUTSIDE; m++) {
      GstBuffer *in = frame_check_buffer_random (&info, rand, TRUE);
      Box all[G_N_ELEMENTS (boxes)];
      guint n = 0;
      gboolean covers = FALSE;

      for (i = 0; i < G_N_ELEMENTS (metas); i++) {
        add_roi (in, "face", metas[i].x, metas[i].y, metas[i].w, metas[i].h);
        if (box_clip (&metas[i], margins[k], 23, 21, &all[n])) {
          covers |= all[n].w == 23 && all[n].h == 21;
          n++;
        }
      }
      for (i = 0; i < n_fixed; i++) {
        all[n] = boxes[G_N_ELEMENTS (metas) + i];
        covers |= all[n].w == 23 && all[n].h == 21;
        n++;
      }
      g_object_set (e, "roi-margin", margins[k], NULL);
      gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[m]);
      if (m == MODE_OUTSIDE && covers) {
        GstBuffer *out = gst_harness_push_and_pull (h, gst_buffer_ref (in));

        fail_unless (out == in);
        gst_buffer_unref (out);
      } else {
        push_and_check_regions (h, e, &info, in, all, n, "bad boxes");
      }
      gst_buffer_unref (in);
    }
  }
  g_string_free (regions, TRUE);
  gst_harness_teardown (h);
  g_rand_free (rand);
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

/* A malformed regions value is refused with a warning naming the rule;
 * the value in effect stays, and frames are still filtered by it. */
GST_START_TEST (test_invalid_regions)
{
  static const struct
  {
    const gchar *value, *rule;
  } cases[] = {
    {"<<1,2,3>>", "rectangle 1, .* is not 4 integers"},
    {"<<1,2,3,4>,<1,2,3,4,5>>", "rectangle 2, .* is not 4 integers"},
    {"<1,2,3,4>", "rectangle 1, 1, is not 4 integers"},
    {"<<1,2,-3,4>>", "rectangle 1 is -3 x 4; width and height must not be "
          "negative"},
    {"<<0,0,1,1>,<1,2,3,-1>>", "rectangle 2 is 3 x -1"},
    {"<<1,2,3,a>>", "rectangle 1, h .* is not an integer"},
    {"<<1.5,2,3,4>>", "rectangle 1, x 1.5, is not an integer"},
    {"<<1,2,3,(gint64)4294967296>>", "rectangle 1, h .* is not an integer"},
    {"<<(guint)4294967295,2,3,4>>", "rectangle 1, x .* is not an integer"},
    {NULL, "it has 1025 rectangles; at most 1024"},
  };
  GRand *rand = g_rand_new_with_seed (107);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  const Box kept = { 3, 4, 10, 6 };
  guint c, i;

  frame_check_info_init (&info, "I420", 31, 17);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=2 region=roi regions=<<3,4,10,6>>");

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *value = g_strdup (cases[c].value), *pattern;
    GstCheckLogFilter *filter;
    GRegex *regex;
    GstBuffer *in;

    if (!value) {
      GString *s = g_string_new ("<");

      for (i = 0; i < MAX_FIXED + 1; i++)
        g_string_append_printf (s, "%s<%u,0,1,1>", i ? "," : "", i);
      g_string_append (s, ">");
      value = g_string_free (s, FALSE);
    }
    pattern = g_strdup_printf ("invalid regions refused: .*%s.*previous "
        "value stays", cases[c].rule);
    regex = g_regex_new (pattern, 0, 0, NULL);
    fail_unless (regex != NULL);
    n_refusals = 0;
    filter = gst_check_add_log_filter (NULL, G_LOG_LEVEL_WARNING, regex,
        count_refusal, NULL, NULL);
    gst_util_set_object_arg (G_OBJECT (e), "regions", value);
    gst_check_remove_log_filter (filter);
    fail_unless (n_refusals == 1, "regions=%.60s: %u warnings matching '%s'",
        value, n_refusals, pattern);

    check_regions_value (e, "<<3,4,10,6>>");

    in = frame_check_buffer_random (&info, rand, FALSE);
    push_and_check_regions (h, e, &info, in, &kept, 1, value);
    gst_buffer_unref (in);
    g_free (pattern);
    g_free (value);
  }

  /* with a bus, an element warning the application sees */
  gst_element_set_bus (e, bus);
  gst_util_set_object_arg (G_OBJECT (e), "regions", "<<1,2,3>>");
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning message");
  {
    GError *err = NULL;

    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, "regions") &&
        strstr (err->message, "not 4 integers") &&
        strstr (err->message, "previous value stays"), "%s", err->message);
    g_error_free (err);
  }
  gst_message_unref (msg);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Every region property changes while frames flow, from the next frame
 * on. */
GST_START_TEST (test_regions_while_playing)
{
  static const struct
  {
    const gchar *args;
    gint mode;
    guint margin;
    gboolean fixed, face, car;
  } steps[] = {
    {"region=roi", MODE_ROI, 0, FALSE, TRUE, TRUE},
    {"roi-types=car", MODE_ROI, 0, FALSE, FALSE, TRUE},
    {"roi-margin=2", MODE_ROI, 2, FALSE, FALSE, TRUE},
    {"regions=<<1,1,6,4>>", MODE_ROI, 2, TRUE, FALSE, TRUE},
    {"region=outside-roi", MODE_OUTSIDE, 2, TRUE, FALSE, TRUE},
    {"roi-types=face,car roi-margin=0", MODE_OUTSIDE, 0, TRUE, TRUE, TRUE},
    {"region=frame", MODE_FRAME, 0, TRUE, TRUE, TRUE},
    {"regions=<> region=roi", MODE_ROI, 0, FALSE, TRUE, TRUE},
    {"kernel=sobel", MODE_ROI, 0, FALSE, TRUE, TRUE},
  };
  const Box face = { 10, 8, 5, 6 }, car = { 20, 2, 9, 5 }, fixed = {
  1, 1, 6, 4};
  GRand *rand = g_rand_new_with_seed (108);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint s;

  frame_check_info_init (&info, "AYUV", 30, 18);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=2");
  for (s = 0; s < G_N_ELEMENTS (steps); s++) {
    GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
    GstBuffer *full, *out;
    Box boxes[3];
    guint n = 0;

    add_roi (in, "face", face.x, face.y, face.w, face.h);
    add_roi (in, "car", car.x, car.y, car.w, car.h);
    if (steps[s].face)
      fail_unless (box_clip (&face, steps[s].margin, 30, 18, &boxes[n++]));
    if (steps[s].car)
      fail_unless (box_clip (&car, steps[s].margin, 30, 18, &boxes[n++]));
    if (steps[s].fixed)
      boxes[n++] = fixed;

    frame_check_set_args (e, steps[s].args);
    full = push_whole_frame (h, e, &info, in, steps[s].args);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    check_composition (&info, in, full, out, steps[s].mode, boxes, n,
        steps[s].args);
    gst_buffer_unref (out);
    gst_buffer_unref (full);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Metadata: a meta whose tags are only video, size and/or orientation
 * describes the output as well as the input and is copied; ROI metas keep
 * their params; a meta of any other tag is not copied.  Both test metas
 * copy themselves when asked, so only the element's choice decides. */
static void
check_metas (GstBuffer * out, const gchar * what)
{
  static const gchar *video_tags[] = { GST_META_TAG_VIDEO_STR, NULL };
  static const gchar *size_tags[] = { GST_META_TAG_VIDEO_STR,
    GST_META_TAG_VIDEO_SIZE_STR, GST_META_TAG_VIDEO_ORIENTATION_STR, NULL
  };
  static const gchar *foo_tags[] = { "foo", NULL };
  static const gchar *mixed_tags[] = { GST_META_TAG_VIDEO_STR, "foo", NULL };
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *params;
  FrameCheckMeta *m;
  gint score;

  roi = gst_buffer_get_video_region_of_interest_meta (out);
  fail_unless (roi != NULL, "%s: ROI meta lost", what);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless (roi->x == 4 && roi->y == 3 && roi->w == 8 && roi->h == 7);
  params = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (params != NULL, "%s: ROI params lost", what);
  fail_unless (gst_structure_get_int (params, "score", &score));
  fail_unless_equals_int (score, 93);

  m = (FrameCheckMeta *) gst_buffer_get_meta (out,
      frame_check_meta_info ("TestVideoMeta", video_tags)->api);
  fail_unless (m != NULL && m->value == 1, "%s: video-tagged meta lost", what);
  m = (FrameCheckMeta *) gst_buffer_get_meta (out,
      frame_check_meta_info ("TestSizeMeta", size_tags)->api);
  fail_unless (m != NULL && m->value == 2, "%s: size-tagged meta lost", what);
  fail_unless (gst_buffer_get_meta (out,
          frame_check_meta_info ("TestFooMeta", foo_tags)->api) == NULL,
      "%s: a meta tagged foo was copied", what);
  fail_unless (gst_buffer_get_meta (out,
          frame_check_meta_info ("TestMixedMeta", mixed_tags)->api) == NULL,
      "%s: a meta tagged video and foo was copied", what);
}

static GstBuffer *
buffer_with_metas (const GstVideoInfo * info, GRand * rand)
{
  static const gchar *video_tags[] = { GST_META_TAG_VIDEO_STR, NULL };
  static const gchar *size_tags[] = { GST_META_TAG_VIDEO_STR,
    GST_META_TAG_VIDEO_SIZE_STR, GST_META_TAG_VIDEO_ORIENTATION_STR, NULL
  };
  static const gchar *foo_tags[] = { "foo", NULL };
  static const gchar *mixed_tags[] = { GST_META_TAG_VIDEO_STR, "foo", NULL };
  GstBuffer *buf = frame_check_buffer_random (info, rand, FALSE);
  GstVideoRegionOfInterestMeta *roi;

  roi = gst_buffer_add_video_region_of_interest_meta (buf, "face", 4, 3, 8,
      7);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "score", G_TYPE_INT, 93, NULL));
  ((FrameCheckMeta *) gst_buffer_add_meta (buf, frame_check_meta_info ("TestVideoMeta",
              video_tags), NULL))->value = 1;
  ((FrameCheckMeta *) gst_buffer_add_meta (buf, frame_check_meta_info ("TestSizeMeta",
              size_tags), NULL))->value = 2;
  ((FrameCheckMeta *) gst_buffer_add_meta (buf, frame_check_meta_info ("TestFooMeta",
              foo_tags), NULL))->value = 3;
  ((FrameCheckMeta *) gst_buffer_add_meta (buf, frame_check_meta_info ("TestMixedMeta",
              mixed_tags), NULL))->value = 4;
  /* the test metas copy themselves: a copy of everything would show */
  {
    GstBuffer *copy = gst_buffer_copy (buf);

    fail_unless (gst_buffer_get_meta (copy,
            frame_check_meta_info ("TestFooMeta", foo_tags)->api) != NULL);
    gst_buffer_unref (copy);
  }
  return buf;
}

GST_START_TEST (test_metas_survive)
{
  static const gchar *configs[] = {
    "region=frame", "region=roi", "region=outside-roi", "kernel=sobel",
  };
  GRand *rand = g_rand_new_with_seed (109);
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h;
  guint c;

  frame_check_info_init (&info, "NV12", 24, 16);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "radius=2");
  for (c = 0; c < G_N_ELEMENTS (configs); c++) {
    GstBuffer *in = buffer_with_metas (&info, rand);
    GstBuffer *out;

    frame_check_set_args (e, configs[c]);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (out != NULL && out != in, "%s: not filtered", configs[c]);
    check_metas (out, configs[c]);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
  g_rand_free (rand);
}

GST_END_TEST;

/* Soft regions, from docs/semantics.md ("Soft regions"): a sample's
 * depth in its region's box or ellipse (the box before clipping), the
 * weight, the largest over the regions, the blend of the input and the
 * whole-frame output. */
static double
soft_depth (const Box * b, gboolean ellipse, gint u, gint v, gint sx, gint sy)
{
  const double x0 = (double) b->x, x1 = (double) (b->x + b->w);
  const double y0 = (double) b->y, y1 = (double) (b->y + b->h);

  if (ellipse) {
    const double a = 0.5 * (x1 - x0), c = 0.5 * (y1 - y0);
    const double tx = ((u + 0.5) * sx - (0.5 * x0 + 0.5 * x1)) / a;
    const double ty = ((v + 0.5) * sy - (0.5 * y0 + 0.5 * y1)) / c;

    return (1 - sqrt (tx * tx + ty * ty)) * MIN (a, c);
  }
  return MIN (MIN (u + 0.5 - floor (x0 / sx), ceil (x1 / sx) - u - 0.5) * sx,
      MIN (v + 0.5 - floor (y0 / sy), ceil (y1 / sy) - v - 0.5) * sy);
}

static float
soft_weight (const Box * boxes, guint n, gboolean ellipse, gdouble feather,
    gint mode, gint sx, gint sy, gint u, gint v)
{
  float largest = 0;
  guint i;

  for (i = 0; i < n; i++) {
    const double d = soft_depth (&boxes[i], ellipse, u, v, sx, sy);
    const double t = d / feather;

    if (d > 0)
      largest = MAX (largest, feather == 0 || d >= feather ? 1.0f :
          (float) (t * t * (3 - 2 * t)));
  }
  return mode == MODE_OUTSIDE ? (float) (1.0 - largest) : largest;
}

/* Sample depth and shift of a format's planes, as their definitions have
 * them. */
static void
format_depth (const gchar * format, gint * depth, gint * shift)
{
  *shift = g_str_equal (format, "P010_10LE") ? 6 : 0;
  *depth = g_str_has_suffix (format, "10LE") ? 10 :
      g_str_has_suffix (format, "12LE") ? 12 :
      g_str_has_suffix (format, "16LE") || g_str_has_suffix (format, "16_LE")
      ? 16 : 8;
}

/* The region that decides sample (u, v) of a plane subsampled by (sx,
 * sy) and its weight in *wt: with sigmas NULL the largest weight of the
 * regions (its complement outside them, mode) and region 0; else (roi-scale)
 * the region of the largest weight, then of the largest sigma. */
static gint
deciding_region (const Box * boxes, guint n, const gdouble * sigmas,
    gboolean ellipse, gdouble feather, gint mode, gint sx, gint sy, gint u,
    gint v, float *wt)
{
  gint best = -1;
  guint k;

  if (!sigmas) {
    *wt = soft_weight (boxes, n, ellipse, feather, mode, sx, sy, u, v);
    return 0;
  }
  *wt = 0;
  for (k = 0; k < n; k++) {
    const float w = soft_weight (&boxes[k], 1, ellipse, feather, MODE_ROI,
        sx, sy, u, v);

    if (w > 0 && (best < 0 || w > *wt || (w == *wt &&
                sigmas[k] > sigmas[best]))) {
      best = k;
      *wt = w;
    }
  }
  return MAX (best, 0);
}

/* Fails unless out blends in and a whole-frame output by the regions'
 * weights, component by component, as the document defines it: with
 * sigmas NULL soft regions and fulls[0]; else each region k its own
 * output fulls[k] of sigma sigmas[k] (roi-scale). */
static void
check_soft (const GstVideoInfo * info, GstBuffer * in, GstBuffer ** fulls,
    const gdouble * sigmas, GstBuffer * out, gint mode, const Box * boxes,
    guint n, gboolean ellipse, gdouble feather, const gchar * what)
{
  const gint f = format_index (info);
  GstVideoFrame fin, ffull[4], fout;
  gint depth, shift;
  guint p, k, n_fulls = sigmas ? n : 1;

  g_assert (n_fulls <= 4);
  format_depth (GST_VIDEO_INFO_NAME (info), &depth, &shift);
  map_three (info, in, fulls[0], out, &fin, &ffull[0], &fout);
  for (k = 1; k < n_fulls; k++)
    fail_unless (gst_video_frame_map (&ffull[k], (GstVideoInfo *) info,
            fulls[k], GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    const gint sx = p ? formats[f].sub_x : 1, sy = p ? formats[f].sub_y : 1;
    const gint bytes = depth > 8 ? 2 : 1;
    const gint nc = formats[f].pixel_bytes[p] / bytes;
    const gint w = (GST_VIDEO_INFO_WIDTH (info) + sx - 1) / sx;
    const gint h = (GST_VIDEO_INFO_HEIGHT (info) + sy - 1) / sy;
    gint x, y, c;

    for (y = 0; y < h; y++) {
      for (x = 0; x < w; x++) {
        float wt;
        const gint r = deciding_region (boxes, n, sigmas, ellipse, feather,
            mode, sx, sy, x, y, &wt);

        for (c = 0; c < nc; c++) {
          const gsize at = (gsize) (x * nc + c) * bytes;
          const guint8 *pi = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&fin, p) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&fin, p) + at;
          const guint8 *pf = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&ffull[r], p) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&ffull[r],
              p) + at;
          const guint8 *po = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&fout, p) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&fout, p) + at;
          /* byte by byte: the rows need not be aligned */
          const guint si = bytes == 1 ? pi[0] : pi[0] | pi[1] << 8;
          const guint sf = bytes == 1 ? pf[0] : pf[0] | pf[1] << 8;
          const guint so = bytes == 1 ? po[0] : po[0] | po[1] << 8;
          guint want;

          if (wt <= 0) {
            want = si;
          } else if (wt >= 1) {
            want = sf;
          } else {
            /* the samples without the bits outside them */
            const guint mask = (1u << depth) - 1;
            const float a = (float) (si >> shift & mask);
            const float b = (float) (sf >> shift & mask);
            const float v = a + wt * (b - a);
            const float rv = v + 0.5f;

            want = (rv >= (float) ((1 << depth) - 1) ? (1u << depth) - 1 :
                (guint) rv) << shift;
          }
          if (so != want)
            fail ("%s %s %dx%d region=%s: plane %u (%d, %d) component %d: "
                "got %u, want %u (region %d, weight %g, input %u, filtered "
                "%u)", what, GST_VIDEO_INFO_NAME (info),
                GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
                mode_nicks[mode], p, x, y, c, so, want, r, wt, si, sf);
        }
      }
    }
  }
  for (k = 1; k < n_fulls; k++)
    gst_video_frame_unmap (&ffull[k]);
  unmap_three (&fin, &ffull[0], &fout);
}

/* The document's worked example through the element: a flat 100 that the
 * filter doubles, a 20x20 region (a face meta of 16x16 grown by a margin
 * of 2) with a feather of 4. */
GST_START_TEST (test_soft_regions_example)
{
  const guint8 row20[] = { 100, 104, 132, 168, 196, 200, 200, 200, 200, 200,
    200, 200, 200, 200, 200, 200, 200, 196, 168, 132, 104, 100
  };
  GstVideoInfo info;
  GstMapInfo map;
  GstBuffer *in, *out;
  GstElement *e;
  GstHarness *h;
  guint x;

  frame_check_info_init (&info, "GRAY8", 64, 48);
  h = harness_new (&e, &info);
  frame_check_set_args (e, "kernel=custom kernel-x=<2> normalize=false "
      "region=roi roi-margin=2 roi-feather=4");
  in = gst_buffer_new_allocate (NULL, info.size, NULL);
  gst_buffer_memset (in, 0, 100, info.size);
  add_roi (in, "face", 12, 12, 16, 16);
  out = gst_harness_push_and_pull (h, in);
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (x = 0; x < G_N_ELEMENTS (row20); x++)
    fail_unless_equals_int (map.data[20 * 64 + 9 + x], row20[x]);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Shapes and feathers on several formats, both modes, regions from metas
 * partly off the frame (the box before clipping shapes them) and fixed
 * ones, against the document's formulas. */
GST_START_TEST (test_soft_regions)
{
  static const gchar *fmts[] = { "I420", "NV12", "Y42B", "P010_10LE",
    "I420_10LE", "AYUV", "GRAY16_LE"
  };
  static const gdouble feathers[] = { 0, 0.5, 3, 25 };
  GRand *rand = g_rand_new_with_seed (0x50f7);
  guint i, k;

  for (i = 0; i < G_N_ELEMENTS (fmts); i++) {
    GstVideoInfo info;
    GstElement *e;
    GstHarness *h;

    frame_check_info_init (&info, fmts[i], 41 + 2 * i, 29 + i);
    h = harness_new (&e, &info);
    for (k = 0; k < 8; k++) {
      const gboolean ellipse = k % 2;
      const gint mode = k % 4 < 2 ? MODE_ROI : MODE_OUTSIDE;
      const gdouble feather = feathers[(k / 2 + i) % 4];
      const Box meta = { -7 + (gint) i, 3, 24, 17 }, fixed = { 20, 10, 30, 30 };
      Box boxes[2] = { {meta.x - 2, meta.y - 2, meta.w + 4, meta.h + 4},
        fixed
      };
      GstBuffer *in = frame_check_buffer_random (&info, rand, TRUE), *full,
          *out;
      gchar *what = g_strdup_printf ("%s feather %g",
          ellipse ? "ellipse" : "box", feather);

      frame_check_set_args (e, kernel_configs[(i + k) %
              G_N_ELEMENTS (kernel_configs)]);
      frame_check_set_args (e, "roi-margin=2 regions=<<20,10,30,30>>");
      gst_util_set_object_arg (G_OBJECT (e), "roi-shape",
          ellipse ? "ellipse" : "box");
      g_object_set (e, "roi-feather", feather, NULL);
      add_roi (in, "face", meta.x < 0 ? 0 : meta.x, meta.y, meta.w, meta.h);
      /* a meta cannot start left of the frame: the box does by the margin */
      boxes[0].x = (meta.x < 0 ? 0 : meta.x) - 2;
      full = push_whole_frame (h, e, &info, in, what);
      gst_util_set_object_arg (G_OBJECT (e), "region", mode_nicks[mode]);
      out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      check_soft (&info, in, &full, NULL, out, mode, boxes, 2, ellipse,
          feather, what);
      gst_buffer_unref (out);
      gst_buffer_unref (full);
      gst_buffer_unref (in);
      g_free (what);
      reset_filter (e);
    }
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* roi-scale: a face meta (grown by the margin, partly off the frame) and
 * two fixed rectangles, overlapping, each blurred by the gaussian of its
 * own sigma (the scale times its box's shorter side), hard and soft,
 * against each sigma's whole-frame output as the document defines it;
 * other kernels and outside-roi ignore the scale. */
GST_START_TEST (test_roi_scale)
{
  static const gchar *fmts[] = { "I420", "NV12", "Y42B", "P010_10LE",
    "AYUV", "GRAY16_LE"
  };
  GRand *rand = g_rand_new_with_seed (0x5ca1e);
  guint i, k, j;

  for (i = 0; i < G_N_ELEMENTS (fmts); i++) {
    GstVideoInfo info;
    GstElement *e;
    GstHarness *h;

    frame_check_info_init (&info, fmts[i], 97 + 2 * i, 71 + i);
    h = harness_new (&e, &info);
    for (k = 0; k < 4; k++) {
      const gboolean ellipse = k == 2, soft = k >= 2;
      const gdouble feather = k == 3 ? 6 : 0, scale = k == 1 ? 0.9 : 0.2;
      /* a face at (x, 4) 30x24, the margin 3: its box (x - 3, 1, 36, 30) */
      const gint mx = (gint) i % 3 * 30;
      Box boxes[3] = { {mx - 3, 1, 36, 30}, {40, 20, 50, 60}, {5, 40, 20, 9}
      };
      GstBuffer *in = frame_check_buffer_random (&info, rand, TRUE), *out;
      GstBuffer *fulls[3];
      gdouble sigmas[3];
      gchar *what = g_strdup_printf ("roi-scale=%g%s%s", scale,
          ellipse ? " ellipse" : "", feather > 0 ? " feathered" : "");

      frame_check_set_args (e, i % 2 ? "border=mirror" : "border=wrap");
      for (j = 0; j < 3; j++) {
        gchar *args;

        sigmas[j] = MIN (scale * MIN (boxes[j].w, boxes[j].h), 256.0);
        args = g_strdup_printf ("radius=0 sigma=%.17g sigma-y=%.17g",
            sigmas[j], sigmas[j]);
        frame_check_set_args (e, args);
        fulls[j] = push_whole_frame (h, e, &info, in, what);
        g_free (args);
      }
      frame_check_set_args (e, "radius=2 sigma=0 sigma-y=0 region=roi "
          "roi-margin=3 regions=<<40,20,50,60>,<5,40,20,9>>");
      gst_util_set_object_arg (G_OBJECT (e), "roi-shape",
          ellipse ? "ellipse" : "box");
      g_object_set (e, "roi-feather", feather, "roi-scale", scale, NULL);
      add_roi (in, "face", mx, 4, 30, 24);
      out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
      check_soft (&info, in, fulls, sigmas, out, MODE_ROI, boxes, 3,
          ellipse, soft ? feather : 0, what);
      gst_buffer_unref (out);

      /* outside-roi and other kernels: as without the scale */
      if (k == 0) {
        GstBuffer *plain;

        gst_util_set_object_arg (G_OBJECT (e), "region", "outside-roi");
        push_and_check_regions (h, e, &info, in, boxes, 3, "outside-roi");
        frame_check_set_args (e, "kernel=box region=roi");
        g_object_set (e, "roi-scale", 0.0, NULL);
        plain = gst_harness_push_and_pull (h, gst_buffer_ref (in));
        g_object_set (e, "roi-scale", scale, NULL);
        out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
        /* every sample as without it */
        check_composition (&info, in, plain, out, MODE_FRAME, NULL, 0,
            "kernel=box with roi-scale");
        gst_buffer_unref (plain);
        gst_buffer_unref (out);
      }
      for (j = 0; j < 3; j++)
        gst_buffer_unref (fulls[j]);
      gst_buffer_unref (in);
      g_free (what);
      reset_filter (e);
    }
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* True when the luma samples [x, x + w) x [y, y + h) of out (one
 * component a pixel) all hold the same value. */
static gboolean
luma_uniform (const GstVideoInfo * info, GstBuffer * out, gint x, gint y,
    gint w, gint h)
{
  GstVideoFrame f;
  gboolean same = TRUE;
  const guint8 *d;
  gint stride, ps, u, v;

  fail_unless (gst_video_frame_map (&f, (GstVideoInfo *) info, out,
          GST_MAP_READ));
  d = GST_VIDEO_FRAME_PLANE_DATA (&f, 0);
  stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
  ps = GST_VIDEO_FRAME_COMP_PSTRIDE (&f, 0);
  for (v = y; v < y + h; v++)
    for (u = x; u < x + w; u++)
      same &= memcmp (d + v * stride + u * ps, d + y * stride + x * ps,
          ps) == 0;
  gst_video_frame_unmap (&f);
  return same;
}

/* kernel=pixelate: the whole frame against the reference; region=roi on
 * a box on the frame's grid is the whole frame's mosaic there; on a box
 * off it, the blocks start at the box (the first block uniform, the one
 * before it across the box's edge not); roi-scale makes each region's
 * block its share of the box. */
GST_START_TEST (test_pixelate_regions)
{
  static const gchar *fmts[] = { "GRAY8", "I420", "NV12", "P010_10LE" };
  GRand *rand = g_rand_new_with_seed (0x91e);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (fmts); i++) {
    GstVideoInfo info;
    GstElement *e;
    GstHarness *h;
    GstBuffer *in, *full, *out;
    const Box aligned = { 16, 8, 40, 24 };

    frame_check_info_init (&info, fmts[i], 101, 67);
    h = harness_new (&e, &info);
    in = frame_check_buffer_random (&info, rand, TRUE);
    frame_check_set_args (e, "kernel=pixelate block-size=8");
    full = push_whole_frame (h, e, &info, in, "pixelate 8");
    frame_check_set_args (e, "region=roi regions=<<16,8,40,24>>");
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    check_composition (&info, in, full, out, MODE_ROI, &aligned, 1,
        "pixelate on the frame's grid");
    gst_buffer_unref (out);

    /* a box at (21, 13): blocks [21, 29) x [13, 21) and so on */
    frame_check_set_args (e, "regions=<<21,13,40,24>>");
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (luma_uniform (&info, out, 21, 13, 8, 8), "%s: the first "
        "block of the region is not uniform", fmts[i]);
    fail_unless (luma_uniform (&info, out, 53, 29, 8, 8), "%s: the last "
        "whole block of the region is not uniform", fmts[i]);
    fail_unless (!luma_uniform (&info, out, 20, 13, 2, 1), "%s: the block "
        "runs past the region's edge", fmts[i]);
    gst_buffer_unref (out);

    /* roi-scale 0.25: a 40x24 box gets blocks of 6 */
    g_object_set (e, "roi-scale", 0.25, NULL);
    out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
    fail_unless (luma_uniform (&info, out, 21, 13, 6, 6) &&
        luma_uniform (&info, out, 27, 19, 6, 6), "%s: roi-scale blocks",
        fmts[i]);
    fail_unless (!luma_uniform (&info, out, 21, 13, 7, 1), "%s: roi-scale "
        "blocks wider than 6", fmts[i]);
    gst_buffer_unref (out);

    gst_buffer_unref (full);
    gst_buffer_unref (in);
    gst_harness_teardown (h);
  }
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
regions_suite (void)
{
  Suite *s = suite_create ("cudaconvolve-regions");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_region_properties);
  tcase_add_test (tc, test_regions_match_composition);
  tcase_add_test (tc, test_roi_types);
  tcase_add_test (tc, test_roi_types_not_interned);
#ifdef HAVE_GST_ANALYTICS
  tcase_add_test (tc, test_analytics_detections);
  tcase_add_test (tc, test_roi_hold_tracking);
#endif
  tcase_add_test (tc, test_roi_margin_and_fixed);
  tcase_add_test (tc, test_roi_without_regions);
  tcase_add_test (tc, test_roi_hold);
  tcase_add_test (tc, test_many_rectangles);
  tcase_add_test (tc, test_bad_rectangles);
  tcase_add_test (tc, test_invalid_regions);
  tcase_add_test (tc, test_regions_while_playing);
  tcase_add_test (tc, test_metas_survive);
  tcase_add_test (tc, test_soft_regions_example);
  tcase_add_test (tc, test_soft_regions);
  tcase_add_test (tc, test_roi_scale);
  tcase_add_test (tc, test_pixelate_regions);
  return s;
}

GST_CHECK_MAIN (regions);
