/* gst-cudaconvolve: hostile input through the element.
 *
 * What upstream sends is untrusted: buffers that do not hold a frame of
 * their caps (short ones, and video metas that do not describe one: the
 * wrong size, format or plane count, offsets that overflow, strides
 * shorter than a row, 16-bit samples at odd offsets, a plane across two
 * memories) are dropped, counted and reported; samples at any address are
 * read correctly; property values that would give taps that are not
 * finite are refused or given a meaning (docs/semantics.md, section 2);
 * a refusal names values that cannot be printed without printing them.
 * Also: what the element counts when QoS drops a buffer.
 *
 * Environment: CUCONV_ROBUSTNESS_BACKEND=cuda runs the same cases on
 * backend=cuda (exits 77, skipped, without a usable CUDA device).
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
#include "proc-status.h"
#ifdef HAVE_CUDA
#include "cuconv-cuda.h"
#endif

static const gchar *backend = "cpu";
/* Every backend within ±1 of the reference. */
static const guint tolerance = 1;

/* "cudaconvolve backend=<backend> args", args set as gst-launch-1.0
 * would. */
static GstElement *
conv_new (const gchar * args)
{
  gchar *desc = g_strdup_printf ("cudaconvolve backend=%s %s", backend, args);
  GError *err = NULL;
  GstElement *e = gst_parse_launch (desc, &err);

  fail_unless (e != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "no element (is GST_PLUGIN_PATH set?)");
  g_free (desc);
  return e;
}

/* ------------------------------------------------------------------ */
/* Buffers that do not hold a frame.
 *
 * The contract: such a buffer is never filtered and produces no output
 * buffer (none is allocated for it); the stream goes on; the first one
 * posts a GST_STREAM_ERROR_FORMAT warning message, then at most one a
 * second; the read-only property "stats", a GstStructure
 * "cudaconvolve-stats", counts frames-in, frames-out, dropped-short and
 * dropped-qos (guint64 each). */

typedef struct
{
  guint64 in, out, dropped, invalid, qos;
} Stats;

static Stats
stats_get (GstElement * e)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "stats");
  GstStructure *st = NULL;
  Stats stats;

  fail_unless (pspec != NULL, "cudaconvolve has no stats property");
  fail_unless (G_PARAM_SPEC_VALUE_TYPE (pspec) == GST_TYPE_STRUCTURE);
  fail_unless ((pspec->flags & G_PARAM_READABLE) &&
      !(pspec->flags & G_PARAM_WRITABLE));
  g_object_get (e, "stats", &st, NULL);
  fail_unless (st != NULL && gst_structure_has_name (st,
          "cudaconvolve-stats"), "%" GST_PTR_FORMAT, st);
  fail_unless (gst_structure_get_uint64 (st, "frames-in", &stats.in) &&
      gst_structure_get_uint64 (st, "frames-out", &stats.out) &&
      gst_structure_get_uint64 (st, "dropped-short", &stats.dropped) &&
      gst_structure_get_uint64 (st, "dropped-invalid", &stats.invalid) &&
      gst_structure_get_uint64 (st, "dropped-qos", &stats.qos),
      "%" GST_PTR_FORMAT, st);
  gst_structure_free (st);
  return stats;
}

/* The stats of e: in and out, dropped as short, as invalid, none for
 * QoS. */
static void
stats_check (GstElement * e, guint64 in, guint64 out, guint64 dropped,
    guint64 invalid)
{
  Stats st = stats_get (e);

  fail_unless (st.in == in && st.out == out && st.dropped == dropped &&
      st.invalid == invalid && st.qos == 0, "stats: in %" G_GUINT64_FORMAT
      " out %" G_GUINT64_FORMAT " short %" G_GUINT64_FORMAT " invalid %"
      G_GUINT64_FORMAT " qos %" G_GUINT64_FORMAT ", want %" G_GUINT64_FORMAT
      " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
      " 0", st.in, st.out, st.dropped, st.invalid, st.qos, in, out, dropped,
      invalid);
}

/* The number of FORMAT warnings on bus, each of which says says (when
 * not NULL) and never "too small" when says is given; fails on any other
 * message of level warning or error. */
static guint
bus_count_drop_warnings (GstBus * bus, const gchar * says)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR |
              GST_MESSAGE_WARNING))) {
    GError *err = NULL;
    gchar *debug = NULL;

    fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING,
        "an error: %" GST_PTR_FORMAT, msg);
    gst_message_parse_warning (msg, &err, &debug);
    fail_unless (g_error_matches (err, GST_STREAM_ERROR,
            GST_STREAM_ERROR_FORMAT), "warning %s %d: %s",
        g_quark_to_string (err->domain), err->code, err->message);
    fail_unless (!says || (strstr (err->message, says) &&
            !strstr (err->message, "too small")),
        "the warning does not say \"%s\": %s", says, err->message);
    n++;
    g_error_free (err);
    g_free (debug);
    gst_message_unref (msg);
  }
  return n;
}

static guint
bus_count_short_warnings (GstBus * bus)
{
  return bus_count_drop_warnings (bus, NULL);
}

/* A harness around a cudaconvolve (radius 2) with a bus of its own. */
static GstHarness *
harness_with_bus (GstElement ** e, GstBus ** bus)
{
  GstHarness *h;

  *e = conv_new ("radius=2");
  *bus = gst_bus_new ();
  gst_element_set_bus (*e, *bus);
  h = gst_harness_new_with_element (*e, "sink", "src");
  return h;
}

static void
harness_free_with_bus (GstHarness * h, GstElement * e, GstBus * bus)
{
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  gst_object_unref (e);
}

/* Pushes a valid random frame of info with timestamps of frame i and
 * checks what comes out against the reference. */
static void
harness_push_valid (GstHarness * h, GstElement * e,
    const GstVideoInfo * info, GRand * rand, gsize extra, guint i)
{
  GstBuffer *in = gst_buffer_new_allocate (NULL, info->size + extra, NULL);
  GstBuffer *out;
  CuconvSettings s;
  gchar first[160];

  frame_check_fill_random (in, rand);
  GST_BUFFER_PTS (in) = i * GST_SECOND;
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_try_pull (h);
  fail_unless (out != NULL, "valid frame %u gave no output", i);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND);
  frame_check_element_settings (e, &s);
  fail_unless (frame_check_compare (info, in, out, &s, tolerance, first,
          sizeof (first), NULL, NULL) == 0, "%s", first);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

/* Pushes buf, which does not hold a frame: no output, the flow goes on. */
static void
harness_push_short (GstHarness * h, GstBuffer * buf, const gchar * what)
{
  GstBuffer *out;

  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  out = gst_harness_try_pull (h);
  fail_unless (out == NULL, "%s: an output buffer of %" G_GSIZE_FORMAT
      " bytes came out", what, out ? gst_buffer_get_size (out) : 0);
}

/* A 1000-byte buffer in I420 640x360 caps, and buffers whose GstVideoMeta
 * has planes past their end, are dropped with one FORMAT warning each
 * (a second apart); valid frames around them, and a buffer larger than the
 * frame, come out filtered. */
GST_START_TEST (test_short_buffer_dropped)
{
  GRand *rand = g_rand_new_with_seed (8);
  GstVideoInfo info;
  GstVideoMeta *meta;
  GstElement *e;
  GstBuffer *buf;
  GstBus *bus;
  GstHarness *h = harness_with_bus (&e, &bus);
  guint last;

  frame_check_info_init (&info, "I420", 640, 360);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  harness_push_valid (h, e, &info, rand, 0, 0);

  buf = gst_buffer_new_allocate (NULL, 1000, NULL);
  frame_check_fill_random (buf, rand);
  GST_BUFFER_PTS (buf) = 1 * GST_SECOND;
  harness_push_short (h, buf, "1000 bytes");
  fail_unless_equals_int (bus_count_short_warnings (bus), 1);
  harness_push_valid (h, e, &info, rand, 0, 2);
  stats_check (e, 3, 2, 1, 0);

  /* past the rate limit, a meta whose last plane starts inside the buffer
   * but ends past it (mapping the frame checks the start only) */
  g_usleep (1100 * 1000);
  buf = frame_check_buffer_random (&info, rand, TRUE);
  meta = gst_buffer_get_video_meta (buf);
  last = meta->n_planes - 1;
  gst_buffer_resize (buf, 0, meta->offset[last] + meta->stride[last] * 10);
  harness_push_short (h, buf, "last plane past the end");
  harness_push_valid (h, e, &info, rand, 0, 4);

  /* a meta whose last plane starts past the end */
  g_usleep (1100 * 1000);
  buf = frame_check_buffer_random (&info, rand, TRUE);
  meta = gst_buffer_get_video_meta (buf);
  gst_buffer_resize (buf, 0, meta->offset[last] - 1);
  harness_push_short (h, buf, "last plane outside");
  /* more than a frame is a frame */
  harness_push_valid (h, e, &info, rand, 4096, 6);

  /* a second after the first, each may warn again, or not */
  fail_unless (bus_count_short_warnings (bus) <= 2);
  stats_check (e, 7, 4, 3, 0);
  harness_free_with_bus (h, e, bus);
  g_rand_free (rand);
}

GST_END_TEST;

/* 100 short buffers in a burst: one warning message in all, 100 counted,
 * and the next frame comes out. */
GST_START_TEST (test_short_buffer_burst)
{
  GRand *rand = g_rand_new_with_seed (9);
  GstVideoInfo info;
  GstElement *e;
  GstBus *bus;
  GstHarness *h = harness_with_bus (&e, &bus);
  guint i;

  frame_check_info_init (&info, "NV12", 64, 48);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  for (i = 0; i < 100; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, info.size - 1 - i, NULL);

    gst_buffer_memset (buf, 0, 0x80, info.size - 1 - i);
    GST_BUFFER_PTS (buf) = i * GST_SECOND;
    harness_push_short (h, buf, "burst");
  }
  harness_push_valid (h, e, &info, rand, 0, 100);
  fail_unless_equals_int (gst_harness_buffers_received (h), 1);
  fail_unless_equals_int (bus_count_short_warnings (bus), 1);
  stats_check (e, 101, 1, 100, 0);
  harness_free_with_bus (h, e, bus);
  g_rand_free (rand);
}

GST_END_TEST;

/* The number of QoS messages on bus. */
static guint
bus_count_qos (GstBus * bus)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_QOS))) {
    n++;
    gst_message_unref (msg);
  }
  return n;
}

/* Buffers that QoS skips as too late (a QoS event from downstream says
 * nothing before 5 s is wanted) are counted in frames-in and dropped-qos,
 * each with a QoS message; with qos=false the same buffers come out. */
GST_START_TEST (test_qos_drops_counted)
{
  static const guint pts[] = { 0, 1, 2, 10, 11 };
  GRand *rand = g_rand_new_with_seed (11);
  GstVideoInfo info;
  GstElement *e;
  GstBus *bus;
  GstHarness *h = harness_with_bus (&e, &bus);
  Stats st;
  guint i, pass;

  frame_check_info_init (&info, "I420", 64, 48);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  for (pass = 0; pass < 2; pass++) {
    g_object_set (e, "qos", pass == 1, NULL);
    fail_unless (gst_harness_push_upstream_event (h,
            gst_event_new_qos (GST_QOS_TYPE_UNDERFLOW, 1.0, 5 * GST_SECOND,
                0)));
    for (i = 0; i < G_N_ELEMENTS (pts); i++) {
      GstBuffer *late;

      if (pass == 0 || pts[i] >= 10) {
        harness_push_valid (h, e, &info, rand, 0, pts[i]);
        continue;
      }
      late = frame_check_buffer_random (&info, rand, FALSE);
      GST_BUFFER_PTS (late) = pts[i] * GST_SECOND;
      harness_push_short (h, late, "late");
    }
  }
  st = stats_get (e);
  fail_unless (st.in == 10 && st.out == 7 && st.dropped == 0 && st.qos == 3,
      "stats: in %" G_GUINT64_FORMAT " out %" G_GUINT64_FORMAT " dropped %"
      G_GUINT64_FORMAT " qos %" G_GUINT64_FORMAT ", want 10 7 0 3", st.in,
      st.out, st.dropped, st.qos);
  fail_unless_equals_int (bus_count_qos (bus), 3);
  fail_unless_equals_int (bus_count_short_warnings (bus), 0);
  harness_free_with_bus (h, e, bus);
  g_rand_free (rand);
}

GST_END_TEST;

/* GRAY8 65535x65535 caps (a 4 GiB frame) and a 4 KiB buffer: dropped as
 * a short buffer, with no frame allocated for it: the peak resident
 * memory grows by less than 64 MiB (on the CUDA backend a pinned frame
 * would show there), the peak virtual size by less than 1 GiB (on the
 * CPU backend an untouched 4 GiB frame shows only there; the margin is
 * for threads' stacks and malloc arenas).  Then a small frame after a caps
 * change comes out.  GstHarness answers the allocation query without a
 * pool, so the element allocates its output from a pool of its own, as
 * with fakesink. */
GST_START_TEST (test_huge_caps_tiny_buffer)
{
  GRand *rand = g_rand_new_with_seed (10);
  GstVideoInfo info;
  GstElement *e;
  GstBuffer *buf;
  GstBus *bus;
  GstHarness *h = harness_with_bus (&e, &bus);
  guint64 hwm0, hwm1, peak0, peak1;

  frame_check_info_init (&info, "GRAY8", 65535, 65535);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  buf = gst_buffer_new_allocate (NULL, 4096, NULL);
  frame_check_fill_random (buf, rand);
  hwm0 = frame_check_proc_kb ("VmHWM");
  peak0 = frame_check_proc_kb ("VmPeak");
  harness_push_short (h, buf, "4 KiB in 65535x65535");
  hwm1 = frame_check_proc_kb ("VmHWM");
  peak1 = frame_check_proc_kb ("VmPeak");
  g_print ("huge caps: VmHWM %+" G_GINT64_FORMAT " kB, VmPeak %+"
      G_GINT64_FORMAT " kB\n", (gint64) (hwm1 - hwm0),
      (gint64) (peak1 - peak0));
  if (!proc_status_under_memory_tool ()) {
    fail_unless (hwm1 < hwm0 + 64 * 1024, "peak RSS grew by %"
        G_GUINT64_FORMAT " kB", hwm1 - hwm0);
    fail_unless (peak1 < peak0 + 1024 * 1024, "peak virtual size grew by %"
        G_GUINT64_FORMAT " kB", peak1 - peak0);
  }
  fail_unless_equals_int (bus_count_short_warnings (bus), 1);
  stats_check (e, 1, 0, 1, 0);

  frame_check_info_init (&info, "GRAY8", 64, 64);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  harness_push_valid (h, e, &info, rand, 0, 1);
  stats_check (e, 2, 1, 1, 0);
  harness_free_with_bus (h, e, bus);
  g_rand_free (rand);
}

GST_END_TEST;


/* ------------------------------------------------------------------ */
/* Video metas that do not describe a frame of the caps: dropped, counted
 * as dropped-invalid, and reported with what is wrong. */

/* A buffer of size random bytes (at least 1) with a GstVideoMeta of
 * format, w x h, n planes at offsets and strides. */
static GstBuffer *
buffer_with_meta (GRand * rand, gsize size, GstVideoFormat format, guint w,
    guint h, guint n, const gsize * offset, const gint * stride)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, MAX (size, 1), NULL);

  frame_check_fill_random (buf, rand);
  /* the arrays are not const before GStreamer 1.24 */
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format, w,
      h, n, (gsize *) offset, (gint *) stride);
  return buf;
}

/* A buffer of the default layout of format at w x h (a size the meta's
 * planes fit in), described by a GstVideoMeta of that layout. */
static GstBuffer *
buffer_with_default_meta (GRand * rand, const gchar * format, gint w, gint h)
{
  GstVideoInfo info;

  frame_check_info_init (&info, format, w, h);
  return buffer_with_meta (rand, info.size, GST_VIDEO_INFO_FORMAT (&info), w,
      h, GST_VIDEO_INFO_N_PLANES (&info), info.offset, info.stride);
}

/* Pushes buf into a harness whose caps are format at w x h: it is dropped
 * as invalid with a warning that says says, and a valid frame after it
 * comes out filtered. */
static void
check_invalid_dropped (const gchar * format, gint width, gint height,
    GstBuffer * buf,
    const gchar * args, const gchar * says)
{
  GRand *rand = g_rand_new_with_seed (20);
  GstVideoInfo info;
  GstElement *e = conv_new (args);
  GstBus *bus = gst_bus_new ();
  GstHarness *h;

  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  frame_check_info_init (&info, format, width, height);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  GST_BUFFER_PTS (buf) = 0;
  harness_push_short (h, buf, says);
  fail_unless_equals_int (bus_count_drop_warnings (bus, says), 1);
  harness_push_valid (h, e, &info, rand, 0, 1);
  stats_check (e, 2, 1, 0, 1);
  harness_free_with_bus (h, e, bus);
  g_rand_free (rand);
}

/* A meta larger than the caps (the frame would be read and written with
 * the meta's size, past both buffers), smaller, or of another format or
 * plane count. */
GST_START_TEST (test_meta_geometry)
{
  GRand *rand = g_rand_new_with_seed (21);
  const gsize off[4] = { 0 };
  const gint stride4[4] = { 4 };

  check_invalid_dropped ("GRAY8", 4, 4, buffer_with_meta (rand, 32,
          GST_VIDEO_FORMAT_GRAY8, 4, 8, 1, off, stride4), "radius=2",
      "4x8");
  check_invalid_dropped ("GRAY8", 4, 4, buffer_with_meta (rand, 32,
          GST_VIDEO_FORMAT_GRAY8, 8, 4, 1, off, stride4), "radius=2",
      "8x4");
  check_invalid_dropped ("I420_12LE", 43, 30, buffer_with_default_meta (rand,
          "I420_12LE", 64, 30), "radius=2", "64x30");
  check_invalid_dropped ("NV12", 64, 48, buffer_with_default_meta (rand,
          "NV12", 64, 40), "radius=2", "64x40");
  check_invalid_dropped ("I420", 64, 48, buffer_with_default_meta (rand,
          "NV12", 64, 48), "radius=2", "NV12");
  check_invalid_dropped ("I420", 16, 16, buffer_with_meta (rand, 1024,
          GST_VIDEO_FORMAT_I420, 16, 16, 2, off, stride4), "radius=2",
      "2 planes");
  g_rand_free (rand);
}

GST_END_TEST;

/* A plane offset near 2^64 (offset + rows * stride wraps to a small
 * number), a negative stride and one shorter than a row: dropped as
 * invalid, with identity settings too (nothing bad goes downstream
 * untouched). */
GST_START_TEST (test_meta_offsets_overflow)
{
  GRand *rand = g_rand_new_with_seed (22);
  const gsize wrap[4] = { (gsize) - 8 };
  const gsize off[4] = { 0 };
  const gint stride4[4] = { 4 }, back[4] = { -4 }, narrow[4] = { 3 };
  const gchar *args[] = { "radius=2", "radius=0" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (args); i++) {
    check_invalid_dropped ("GRAY8", 4, 4, buffer_with_meta (rand, 16,
            GST_VIDEO_FORMAT_GRAY8, 4, 4, 1, wrap, stride4), args[i],
        "offset");
    check_invalid_dropped ("GRAY8", 4, 4, buffer_with_meta (rand, 16,
            GST_VIDEO_FORMAT_GRAY8, 4, 4, 1, off, back), args[i], "stride");
    check_invalid_dropped ("GRAY8", 4, 4, buffer_with_meta (rand, 16,
            GST_VIDEO_FORMAT_GRAY8, 4, 4, 1, off, narrow), args[i], "stride");
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* 16-bit samples at an odd offset or with an odd stride (loads the CPU
 * may fault on, and the GPU does): dropped as invalid. */
GST_START_TEST (test_meta_alignment)
{
  GRand *rand = g_rand_new_with_seed (23);
  const gsize off0[4] = { 0 }, off1[4] = { 1 };
  const gint stride16[4] = { 16 }, stride17[4] = { 17 };
  GstVideoInfo info;
  GstVideoMeta *meta;
  GstBuffer *buf;

  check_invalid_dropped ("GRAY16_LE", 8, 4, buffer_with_meta (rand, 80,
          GST_VIDEO_FORMAT_GRAY16_LE, 8, 4, 1, off1, stride16), "radius=2",
      "2-byte");
  check_invalid_dropped ("GRAY16_LE", 8, 4, buffer_with_meta (rand, 80,
          GST_VIDEO_FORMAT_GRAY16_LE, 8, 4, 1, off0, stride17), "radius=2",
      "2-byte");
  /* the chroma plane of P010 */
  frame_check_info_init (&info, "P010_10LE", 16, 8);
  buf = frame_check_buffer_random (&info, rand, TRUE);
  meta = gst_buffer_get_video_meta (buf);
  meta->offset[1] += 1;
  check_invalid_dropped ("P010_10LE", 16, 8, buf, "radius=2", "2-byte");
  g_rand_free (rand);
}

GST_END_TEST;

/* A plane that starts in one memory and ends in the next (a video meta
 * maps the memory its plane starts in, nothing more): dropped as invalid.
 * The same frame in one memory comes out filtered. */
GST_START_TEST (test_meta_plane_across_memories)
{
  GRand *rand = g_rand_new_with_seed (24);
  const gsize off[4] = { 0 };
  const gint stride16[4] = { 16 };
  GstBuffer *buf = gst_buffer_new ();
  guint i;

  /* filled one at a time: mapping the whole buffer would merge them */
  for (i = 0; i < 2; i++) {
    GstBuffer *half = gst_buffer_new_allocate (NULL, 128, NULL);

    frame_check_fill_random (half, rand);
    gst_buffer_append_memory (buf, gst_buffer_get_memory (half, 0));
    gst_buffer_unref (half);
  }
  fail_unless_equals_int (gst_buffer_n_memory (buf), 2);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_GRAY8, 16, 16, 1, (gsize *) off, (gint *) stride16);
  check_invalid_dropped ("GRAY8", 16, 16, buf, "radius=2", "memor");
  g_rand_free (rand);
}

GST_END_TEST;

/* Samples at odd addresses with a well-formed meta (padded buffers lie
 * in a memory that starts at an odd byte of its allocation): filtered as
 * anywhere else, in every 16-bit format and one 8-bit one. */
GST_START_TEST (test_odd_addresses)
{
  static const gchar *formats[] = { "GRAY16_LE", "P010_10LE", "I420_10LE",
    "Y444_16LE", "NV12"
  };
  GRand *rand = g_rand_new_with_seed (25);
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstElement *e = conv_new ("radius=3 border=mirror");
    GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
    GstVideoInfo info;
    GstBuffer *in, *out;
    GstMapInfo map;
    CuconvSettings s;
    gchar first[160];

    frame_check_info_init (&info, formats[f], 37, 21);
    gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
    in = frame_check_buffer_random (&info, rand, TRUE);
    fail_unless (gst_buffer_map (in, &map, GST_MAP_READ));
    fail_unless (((guintptr) map.data & 1) == 1);
    gst_buffer_unmap (in, &map);
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_try_pull (h);
    fail_unless (out != NULL, "%s: no output", formats[f]);
    frame_check_element_settings (e, &s);
    fail_unless (frame_check_compare (&info, in, out, &s, tolerance, first,
            sizeof (first), NULL, NULL) == 0, "%s: %s", formats[f], first);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    gst_harness_teardown (h);
    gst_object_unref (e);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* A frame in a segment that is not in time (upstream's choice, or no
 * segment since a flush): filtered, no critical (the controller's stream
 * time exists only in a time segment). */
GST_START_TEST (test_segment_not_in_time)
{
  GRand *rand = g_rand_new_with_seed (26);
  GstElement *e = conv_new ("radius=2");
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  GstSegment segment;
  GstVideoInfo info;

  frame_check_info_init (&info, "NV12", 32, 16);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  harness_push_valid (h, e, &info, rand, 0, 0);
  gst_harness_teardown (h);
  gst_object_unref (e);
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Property values at the edges of their ranges. */

#define FILTER_W 37
#define FILTER_H 23

/* A harness around "cudaconvolve args" for GRAY8 FILTER_W x FILTER_H
 * frames, the element in *e and with a bus of its own in *bus when
 * asked. */
static GstHarness *
filter_harness (const gchar * args, GstElement ** e, GstBus ** bus)
{
  GstElement *conv = conv_new (args);
  GstVideoInfo info;
  GstHarness *h;

  if (bus) {
    *bus = gst_bus_new ();
    gst_element_set_bus (conv, *bus);
  }
  h = gst_harness_new_with_element (conv, "sink", "src");
  frame_check_info_init (&info, "GRAY8", FILTER_W, FILTER_H);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  if (e)
    *e = conv;
  gst_object_unref (conv);
  return h;
}

/* The bus let go first: its messages hold the element, which holds it. */
static void
filter_harness_free (GstHarness * h, GstBus * bus)
{
  if (bus) {
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
  }
  gst_harness_teardown (h);
}

/* What h's element makes of the random frame of seed, and that frame in
 * *input when asked. */
static GstBuffer *
filter_frame (GstHarness * h, guint seed, GstBuffer ** input)
{
  GRand *rand = g_rand_new_with_seed (seed);
  GstBuffer *in = gst_buffer_new_allocate (NULL,
      GST_ROUND_UP_4 (FILTER_W) * FILTER_H, NULL);
  GstBuffer *out;

  frame_check_fill_random (in, rand);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_try_pull (h);
  fail_unless (out != NULL, "no output");
  if (input)
    *input = in;
  else
    gst_buffer_unref (in);
  g_rand_free (rand);
  return out;
}

/* The output of "cudaconvolve args" on the frame of seed. */
static GstBuffer *
filter_args (const gchar * args, guint seed, GstBuffer ** input)
{
  GstHarness *h = filter_harness (args, NULL, NULL);
  GstBuffer *out = filter_frame (h, seed, input);

  filter_harness_free (h, NULL);
  return out;
}

/* Fails unless the GRAY8 FILTER_W x FILTER_H frames a and b (unreffed)
 * hold the same samples (not the padding of their rows). */
static void
assert_same_frame (GstBuffer * a, GstBuffer * b, const gchar * what)
{
  GstVideoInfo info;
  gchar first[160];

  frame_check_info_init (&info, "GRAY8", FILTER_W, FILTER_H);
  fail_unless (frame_check_region_pixels (&info, a, b, CUCONV_REGION_FRAME,
          NULL, 0, TRUE, FALSE, first, sizeof (first)) == 0, "%s: %s", what,
      first);
  gst_buffer_unref (a);
  gst_buffer_unref (b);
}

static void
assert_same_output (const gchar * args, const gchar * as_args)
{
  gchar *what = g_strdup_printf ("\"%s\" against \"%s\"", args, as_args);

  assert_same_frame (filter_args (args, 30, NULL), filter_args (as_args, 30,
          NULL), what);
  g_free (what);
}

/* Sigmas too small to give finite taps in double (2 sigma^2 underflows,
 * or every neighbour's weight does): a sigma below the smallest one
 * (docs/semantics.md) filters as that one, which for a blur leaves the
 * frame as it is. */
GST_START_TEST (test_tiny_sigmas)
{
  static const gchar *tiny[] = { "1e-300", "1e-160", "1e-30", "0.01" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (tiny); i++) {
    gchar *a[6], *b[6];
    guint j;

    a[0] = g_strdup_printf ("radius=2 sigma=%s", tiny[i]);
    b[0] = g_strdup ("radius=2 sigma=0.1");
    a[1] = g_strdup_printf ("radius=2 sigma=2 sigma-y=%s", tiny[i]);
    b[1] = g_strdup ("radius=2 sigma=2 sigma-y=0.1");
    a[2] = g_strdup_printf ("kernel=sobel radius=2 sigma=%s", tiny[i]);
    b[2] = g_strdup ("kernel=sobel radius=2 sigma=0.1");
    a[3] = g_strdup_printf ("kernel=laplacian radius=3 sigma=%s", tiny[i]);
    b[3] = g_strdup ("kernel=laplacian radius=3 sigma=0.1");
    a[4] = g_strdup_printf ("kernel=bilateral radius=2 sigma=%s", tiny[i]);
    b[4] = g_strdup ("kernel=bilateral radius=2 sigma=0.1");
    a[5] = g_strdup_printf ("kernel=sharpen radius=0 sigma=%s", tiny[i]);
    b[5] = g_strdup ("kernel=sharpen radius=1 sigma=0.1");
    for (j = 0; j < G_N_ELEMENTS (a); j++) {
      assert_same_output (a[j], b[j]);
      g_free (a[j]);
      g_free (b[j]);
    }
  }
  /* and the smallest sigma's blur is the identity */
  {
    GstBuffer *in, *out = filter_args ("radius=3 sigma=0.1", 31, &in);

    assert_same_frame (out, in, "sigma 0.1 against the input");
  }
}

GST_END_TEST;

/* The number of LIBRARY SETTINGS warnings ("Invalid ... refused") on bus;
 * fails on any other warning or error. */
static guint
bus_count_refusals (GstBus * bus)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR |
              GST_MESSAGE_WARNING))) {
    GError *err = NULL;

    fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING,
        "an error: %" GST_PTR_FORMAT, msg);
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (g_error_matches (err, GST_LIBRARY_ERROR,
            GST_LIBRARY_ERROR_SETTINGS), "warning %s", err->message);
    n++;
    g_error_free (err);
    gst_message_unref (msg);
  }
  return n;
}

/* Sets property name of e from str as gst-launch-1.0 would: returns the
 * number of refusals it posted. */
static guint
set_counting_refusals (GstElement * e, GstBus * bus, const gchar * name,
    const gchar * str)
{
  gst_util_set_object_arg (G_OBJECT (e), name, str);
  return bus_count_refusals (bus);
}

/* Custom taps finite as doubles but not as floats, or whose products
 * overflow a float, are refused and the kernel in effect stays; a
 * normalised kernel whose sum is so near 0 that dividing by it would give
 * such taps is used as given. */
GST_START_TEST (test_custom_taps_range)
{
  static const gchar *refused[][2] = {
    {"kernel-x", "<1e308, -1e308, 1>"},
    {"kernel-y", "<1e39, 0, 1>"},
    {"kernel-x", "<2e6, 0, 1>"},
    {"matrix", "<<1e39, -1e39, 1>, <0, 0, 0>, <0, 0, 0>>"},
  };
  GstElement *e;
  GstBus *bus;
  GstHarness *h = filter_harness ("kernel=custom kernel-x=<1,2,1>", &e,
      &bus);
  GstBuffer *before, *after;
  guint i;

  before = filter_frame (h, 32, NULL);
  for (i = 0; i < G_N_ELEMENTS (refused); i++)
    fail_unless_equals_int (set_counting_refusals (e, bus, refused[i][0],
            refused[i][1]), 1);
  after = filter_frame (h, 32, NULL);
  assert_same_frame (after, before, "a refused kernel");
  filter_harness_free (h, bus);

  assert_same_output ("kernel=custom kernel-x=<1,-1,1e-40>",
      "kernel=custom kernel-x=<1,-1,1e-40> normalize=false");
  assert_same_output ("kernel=custom matrix=<<1,0,0>,<0,-1,0>,<0,0,1e-30>>",
      "kernel=custom matrix=<<1,0,0>,<0,-1,0>,<0,0,1e-30>> normalize=false");
  /* a sum near 0 that leaves the taps in range still normalises */
  assert_same_output ("kernel=custom kernel-x=<1,-1,0.5>",
      "kernel=custom kernel-x=<2,-2,1> normalize=false");
}

GST_END_TEST;

/* An empty matrix is no matrix: accepted, and custom without a kernel
 * passes the frame through. */
GST_START_TEST (test_empty_matrix)
{
  GstElement *e;
  GstBus *bus;
  GstHarness *h = filter_harness ("kernel=custom", &e, &bus);
  GstBuffer *in, *out;

  fail_unless_equals_int (set_counting_refusals (e, bus, "matrix", "<>"), 0);
  fail_unless_equals_int (set_counting_refusals (e, bus, "kernel-x", "<>"),
      0);
  out = filter_frame (h, 33, &in);
  assert_same_frame (out, in, "custom without a kernel");
  filter_harness_free (h, bus);
}

GST_END_TEST;

/* An array whose only value is a NULL string: refused with a warning
 * that names what is wrong, and no critical (gstcheck fails on one). */
static void
set_null_string_array (GstElement * e, const gchar * name, guint depth)
{
  GValue value = G_VALUE_INIT, str = G_VALUE_INIT;

  g_value_init (&str, G_TYPE_STRING);
  g_value_set_string (&str, NULL);
  for (; depth > 0; depth--) {
    GValue outer = G_VALUE_INIT;

    g_value_init (&outer, GST_TYPE_ARRAY);
    gst_value_array_append_and_take_value (&outer, &str);
    str = outer;
  }
  value = str;
  g_object_set_property (G_OBJECT (e), name, &value);
  g_value_unset (&value);
}

GST_START_TEST (test_refusal_of_unprintable_values)
{
  static const struct
  {
    const gchar *name;
    guint depth;
  } cases[] = {
    {"regions", 2}, {"regions", 1}, {"kernel-x", 1}, {"kernel-y", 1},
    {"matrix", 2}, {"matrix", 1},
  };
  GstElement *e = conv_new ("kernel=custom");
  GstBus *bus = gst_bus_new ();
  guint i;

  gst_element_set_bus (e, bus);
  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    set_null_string_array (e, cases[i].name, cases[i].depth);
    fail_unless_equals_int (bus_count_refusals (bus), 1);
  }
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
hostile_suite (void)
{
  Suite *s = suite_create ("cudaconvolve-hostile");
  TCase *tc_drop = tcase_create ("dropped");
  TCase *tc_meta = tcase_create ("video-meta");
  TCase *tc_props = tcase_create ("properties");

  tcase_set_timeout (tc_drop, 60);
  tcase_set_timeout (tc_meta, 60);
  tcase_set_timeout (tc_props, 60);
  suite_add_tcase (s, tc_drop);
  tcase_add_test (tc_drop, test_short_buffer_dropped);
  tcase_add_test (tc_drop, test_short_buffer_burst);
  tcase_add_test (tc_drop, test_qos_drops_counted);
  tcase_add_test (tc_drop, test_huge_caps_tiny_buffer);
  suite_add_tcase (s, tc_meta);
  tcase_add_test (tc_meta, test_meta_geometry);
  tcase_add_test (tc_meta, test_meta_offsets_overflow);
  tcase_add_test (tc_meta, test_meta_alignment);
  tcase_add_test (tc_meta, test_meta_plane_across_memories);
  tcase_add_test (tc_meta, test_odd_addresses);
  tcase_add_test (tc_meta, test_segment_not_in_time);
  suite_add_tcase (s, tc_props);
  tcase_add_test (tc_props, test_tiny_sigmas);
  tcase_add_test (tc_props, test_custom_taps_range);
  tcase_add_test (tc_props, test_empty_matrix);
  tcase_add_test (tc_props, test_refusal_of_unprintable_values);
  return s;
}

int
main (int argc, char **argv)
{
  const gchar *env;

  gst_check_init (&argc, &argv);
  env = g_getenv ("CUCONV_ROBUSTNESS_BACKEND");
  if (env && *env)
    backend = env;
  if (!g_str_equal (backend, "cpu") && !g_str_equal (backend, "cuda")) {
    g_printerr ("CUCONV_ROBUSTNESS_BACKEND=%s: cpu or cuda\n", backend);
    return 1;
  }
#ifdef HAVE_CUDA
  if (g_str_equal (backend, "cuda")) {
    if (cuconv_device_count () == 0) {
      g_print ("backend=cuda without a usable CUDA device: skipped\n");
      return 77;
    }
    /* CUDA, initialised by the device count, does not survive fork (). */
    g_setenv ("CK_FORK", "no", TRUE);
  }
#else
  if (g_str_equal (backend, "cuda")) {
    g_print ("backend=cuda in a build without CUDA: skipped\n");
    return 77;
  }
#endif
  return gst_check_run_suite (hostile_suite (), "hostile", __FILE__);
}
