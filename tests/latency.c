/* gst-cudaconvolve: what the element adds to a live pipeline.
 *
 *   latency [--backend=cuda|cpu] [--frames=N]
 *
 * A camera-like source, `videotestsrc is-live=true` at 30 frames/s, NV12
 * at 720p, 1080p and 4K, through `cudaconvolve radius=4` into `fakesink
 * sync=true`, in system memory and in CUDA memory (cudaupload before,
 * cudadownload after).  For each, GStreamer's latency tracer
 * (latency(flags=element)) gives the time each frame spent in the element,
 * from its sink pad to its src pad: the median and the maximum over the
 * frames after the first 10.  Beside them, the LATENCY query's answer
 * (minimum) upstream of the element and at its src pad: what the element
 * declares.
 *
 * Prints a table; exits 1 when a pipeline fails or the tracer gives no
 * figure, 77 with --backend=cuda and no usable CUDA device or nvcodec, or
 * on GStreamer 1.26.0 to 1.26.3, whose latency tracer deadlocks.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <gst/gst.h>

#define SKIP_FRAMES 10

static gchar *backend = (gchar *) "cuda";
static gint n_frames = 120;

/* The element-latency records of the element named "conv", in ns. */
static GMutex lock;
static GArray *times;

static void
log_tracer (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer data)
{
  const gchar *text;
  GstStructure *s;
  guint64 t;

  /* Records come with no place and no object (gst_tracer_record_log ()).
   * Nothing else is formatted here: a message about an object may be
   * logged under the object's lock, which formatting it takes again. */
  if (line != 0 || object || (function && *function) ||
      !g_str_equal (gst_debug_category_get_name (category), "GST_TRACER"))
    return;
  text = gst_debug_message_get (message);
  if (!text || !g_str_has_prefix (text, "element-latency"))
    return;
  s = gst_structure_from_string (text, NULL);
  if (s && g_strcmp0 (gst_structure_get_string (s, "element"), "conv") == 0
      && gst_structure_get_uint64 (s, "time", &t)) {
    g_mutex_lock (&lock);
    g_array_append_val (times, t);
    g_mutex_unlock (&lock);
  }
  if (s)
    gst_structure_free (s);
}

static gint
compare_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return x < y ? -1 : x > y;
}

/* The minimum latency a LATENCY query on pad (its peer's with peer)
 * answers, in ms; -1 when unanswered. */
static gdouble
query_min_ms (GstElement * e, const gchar * pad_name, gboolean peer)
{
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstQuery *q = gst_query_new_latency ();
  GstClockTime min = GST_CLOCK_TIME_NONE;
  gboolean ok;

  ok = peer ? gst_pad_peer_query (pad, q) : gst_pad_query (pad, q);
  if (ok)
    gst_query_parse_latency (q, NULL, &min, NULL);
  gst_query_unref (q);
  gst_object_unref (pad);
  return ok && GST_CLOCK_TIME_IS_VALID (min) ? min / 1e6 : -1;
}

/* GStreamer 1.26.0 to 1.26.3 call the tracers' event hook with the pad's
 * lock held, and the latency tracer takes it again: the first event
 * deadlocks the pipeline. */
static gboolean
tracer_deadlocks (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return major == 1 && minor == 26 && micro < 4;
}

static gboolean
row (gint width, gint height, gboolean cuda)
{
  gchar *desc = g_strdup_printf ("videotestsrc is-live=true pattern=ball "
      "num-buffers=%d ! video/x-raw,format=NV12,width=%d,height=%d,"
      "framerate=30/1 ! %scudaconvolve name=conv backend=%s radius=4 ! "
      "%sfakesink sync=true", n_frames, width, height,
      cuda ? "cudaupload ! " : "", backend, cuda ? "cudadownload ! " : "");
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err), *conv;
  gdouble upstream = -1, declared = -1;
  gboolean ok = FALSE;
  gchar *figures;
  GstMessage *msg;
  GstBus *bus;
  guint64 *v;
  guint n;

  if (!pipeline || err) {
    g_printerr ("%s: %s\n", desc, err ? err->message : "no pipeline");
    g_free (desc);
    return FALSE;
  }
  g_array_set_size (times, 0);
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  if (gst_element_get_state (pipeline, NULL, NULL, 10 * GST_SECOND) ==
      GST_STATE_CHANGE_SUCCESS) {
    upstream = query_min_ms (conv, "sink", TRUE);
    declared = query_min_ms (conv, "src", FALSE);
  }
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);

  g_mutex_lock (&lock);
  n = times->len > SKIP_FRAMES ? times->len - SKIP_FRAMES : 0;
  v = (guint64 *) times->data + SKIP_FRAMES;
  if (n > 0)
    qsort (v, n, sizeof (guint64), compare_u64);
  figures = n > 0 ? g_strdup_printf ("%.3f (%.3f)", v[(n - 1) / 2] / 1e6,
      v[n - 1] / 1e6) : g_strdup ("none");
  g_mutex_unlock (&lock);
  g_print ("| %dx%d | %s | %s | %.2f -> %.2f |\n", width, height,
      cuda ? "CUDA" : "system", figures, upstream, declared);
  g_free (figures);
  g_free (desc);
  gst_object_unref (bus);
  gst_object_unref (conv);
  gst_object_unref (pipeline);
  return ok && n > 0;
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "the element's backend",
        "B"},
    {"frames", 0, 0, G_OPTION_ARG_INT, &n_frames, "frames a row", "N"},
    {NULL}
  };
  static const gint sizes[][2] = { {1280, 720}, {1920, 1080}, {3840, 2160} };
  GOptionContext *options = g_option_context_new ("- latency");
  GstElementFactory *upload;
  gboolean ok = TRUE, cuda;
  GError *err = NULL;
  guint i;

  /* before gst_init (), which starts the tracers */
  g_setenv ("GST_TRACERS", "latency(flags=element)", TRUE);
  g_option_context_add_main_entries (options, entries, NULL);
  g_option_context_add_group (options, gst_init_get_option_group ());
  if (!g_option_context_parse (options, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (options);
  times = g_array_new (FALSE, FALSE, sizeof (guint64));
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (log_tracer, NULL, NULL);
  gst_debug_set_threshold_for_name ("GST_TRACER", GST_LEVEL_TRACE);

  if (tracer_deadlocks ()) {
    g_print ("GStreamer 1.26.0 to 1.26.3's latency tracer deadlocks (fixed in "
        "1.26.4): skipped\n");
    return 77;
  }
  upload = gst_element_factory_find ("cudaupload");
  cuda = upload && !g_str_equal (backend, "cpu");
  gst_clear_object (&upload);
  if (g_str_equal (backend, "cuda") && !cuda) {
    g_print ("no cudaupload (nvcodec): skipped\n");
    return 77;
  }

  g_print ("| frame | memory | time in the element, median (max), ms | "
      "LATENCY query, min: upstream -> at the element, ms |\n"
      "|---|---|---:|---:|\n");
  for (i = 0; i < G_N_ELEMENTS (sizes); i++) {
    ok &= row (sizes[i][0], sizes[i][1], FALSE);
    if (cuda)
      ok &= row (sizes[i][0], sizes[i][1], TRUE);
  }
  g_print ("%s\n", ok ? "OK" : "FAILED: a pipeline failed, or the latency "
      "tracer (coretracers) gave no figure");
  g_array_free (times, TRUE);
  return ok ? 0 : 1;
}
