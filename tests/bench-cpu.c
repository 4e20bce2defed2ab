/* gst-cudaconvolve: the CPU backend against the CPU's peers, in one run.
 *
 *   bench-cpu [--runs=N]
 *
 * Each row is a pipeline `videotestsrc pattern=black num-buffers=N ! CAPS
 * ! ELEMENT ! fakesink sync=false`, timed from PLAYING to EOS, the best
 * of --runs (default 3); the same pipeline with `identity` in the
 * element's place is the source's own cost, taken off: ms a frame of the
 * element alone.  Peers on the same frames: OpenCV's `cvsmooth
 * type=gaussian` (gstreamer1.0-opencv) with the same kernel size and
 * sigma, and GStreamer's own `gaussianblur` (gaudieffects, AYUV only) at
 * the same sigma.  A peer that is not installed is reported as such.
 *
 * Prints Markdown tables: GRAY8 1920x1080 gaussian at radius 1, 2, 4, 8
 * beside cvsmooth, and the ratio (ours / theirs: 1.0 or less is at least
 * as fast); AYUV 1920x1080, every component, radius 4 sigma 1.7 beside
 * gaussianblur, and how many times faster; I420 1280x720 radius 8, the
 * demo's frames, in frames/s with the source included; I420 1920x1080
 * denoise (the temporal step still and compensated, non-local means)
 * beside FFmpeg's hqdn3d, atadenoise and nlmeans on black frames of the
 * same size (ffmpeg's time with the filter less without it; "not
 * installed" without ffmpeg).  A benchmark:
 * exits 0 unless a pipeline fails.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

static gint n_runs = 3;
static gboolean failed;

/* Wall seconds from PLAYING to EOS of desc, the best of n_runs; -1 when
 * it fails. */
static gdouble
best_seconds (const gchar * desc)
{
  gdouble best = -1;
  gint r;

  for (r = 0; r < n_runs; r++) {
    GError *err = NULL;
    GstElement *p = gst_parse_launch (desc, &err);
    GstMessage *msg;
    GstBus *bus;
    gint64 t0;
    gdouble s;

    if (!p || err) {
      g_printerr ("%s: %s\n", desc, err ? err->message : "no pipeline");
      g_clear_error (&err);
      gst_clear_object (&p);
      return -1;
    }
    bus = gst_element_get_bus (p);
    /* set-up out of the timing: the pipeline is prerolled first */
    gst_element_set_state (p, GST_STATE_PAUSED);
    gst_element_get_state (p, NULL, NULL, GST_CLOCK_TIME_NONE);
    t0 = g_get_monotonic_time ();
    gst_element_set_state (p, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    s = (g_get_monotonic_time () - t0) / 1e6;
    gst_element_set_state (p, GST_STATE_NULL);
    if (!msg || GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS) {
      g_printerr ("%s: %s\n", desc, msg ? "error" : "no EOS");
      if (msg)
        gst_message_unref (msg);
      gst_object_unref (bus);
      gst_object_unref (p);
      failed = TRUE;
      return -1;
    }
    gst_message_unref (msg);
    gst_object_unref (bus);
    gst_object_unref (p);
    if (best < 0 || s < best)
      best = s;
  }
  return best;
}

/* ms a frame of element on frames of caps, the source's cost taken off
 * (source_ms); -1 when it fails or the element does not exist. */
static gdouble
element_ms (const gchar * caps, const gchar * element, gint frames,
    gdouble source_ms)
{
  gchar *factory = g_strndup (element, strcspn (element, " "));
  GstElementFactory *f = gst_element_factory_find (factory);
  gchar *desc;
  gdouble s;

  g_free (factory);
  if (!f)
    return -1;
  gst_object_unref (f);
  desc = g_strdup_printf ("videotestsrc pattern=black num-buffers=%d ! %s ! "
      "%s ! fakesink sync=false", frames, caps, element);
  s = best_seconds (desc);
  g_free (desc);
  return s < 0 ? -1 : s * 1000.0 / frames - source_ms;
}

static gchar *
ms_text (gdouble ms)
{
  return ms < 0 ? g_strdup ("not installed") : g_strdup_printf ("%.2f", ms);
}

static void
gray8_table (void)
{
  static const gint radii[] = { 1, 2, 4, 8 };
  const gchar *caps = "video/x-raw,format=GRAY8,width=1920,height=1080";
  gdouble source = element_ms (caps, "identity", 300, 0);
  guint i;

  g_print ("## GRAY8 1920x1080, gaussian (ms a frame, the source's %.2f "
      "taken off)\n\n| radius | sigma | cudaconvolve backend=cpu | cvsmooth "
      "type=gaussian | ratio |\n|---:|---:|---:|---:|---:|\n", source);
  for (i = 0; i < G_N_ELEMENTS (radii); i++) {
    const gint r = radii[i];
    const gdouble sigma = 0.3 * (r - 1) + 0.8;  /* the element's default */
    gchar *ours_el = g_strdup_printf ("cudaconvolve backend=cpu radius=%d", r);
    gchar *cv_el = g_strdup_printf ("cvsmooth type=gaussian kernel-width=%d "
        "kernel-height=%d color=%.2f", 2 * r + 1, 2 * r + 1, sigma);
    gdouble ours = element_ms (caps, ours_el, 300, source);
    gdouble cv = element_ms (caps, cv_el, 300, source);
    gchar *o = ms_text (ours), *c = ms_text (cv);
    gchar *ratio = ours > 0 && cv > 0 ? g_strdup_printf ("%.2f", ours / cv) :
        g_strdup ("");

    g_print ("| %d | %.1f | %s | %s | %s |\n", r, sigma, o, c, ratio);
    g_free (ratio);
    g_free (o);
    g_free (c);
    g_free (ours_el);
    g_free (cv_el);
  }
}

static void
ayuv_table (void)
{
  const gchar *caps = "video/x-raw,format=AYUV,width=1920,height=1080";
  gdouble source = element_ms (caps, "identity", 100, 0);
  gdouble ours = element_ms (caps, "cudaconvolve backend=cpu radius=4 "
      "sigma=1.7 planes=all", 100, source);
  gdouble theirs = element_ms (caps, "gaussianblur sigma=1.7", 20, source);
  gchar *o = ms_text (ours), *t = ms_text (theirs);
  gchar *x = ours > 0 && theirs > 0 ? g_strdup_printf ("%.1f",
      theirs / ours) : g_strdup ("");

  g_print ("\n## AYUV 1920x1080, every component, sigma 1.7 (ms a frame, "
      "the source's %.2f taken off)\n\n| cudaconvolve backend=cpu radius=4 "
      "sigma=1.7 planes=all | gaussianblur sigma=1.7 | times faster |\n"
      "|---:|---:|---:|\n| %s | %s | %s |\n", source, o, t, x);
  g_free (o);
  g_free (t);
  g_free (x);
}

/* ms a frame of FFmpeg's filter on frames of the same size and content
 * (a black I420 frame), FFmpeg's own source and decode of them taken off;
 * -1 without ffmpeg or when it fails. */
static gdouble
ffmpeg_ms (const gchar * filter, gint frames)
{
  gdouble best[2] = { -1, -1 };

  for (gint with = 0; with < 2; with++) {
    gchar *cmd = g_strdup_printf ("ffmpeg -hide_banner -loglevel error -f "
        "lavfi -i color=black:s=1920x1080:r=30 -frames:v %d -vf "
        "format=yuv420p%s%s -f null -", frames, with ? "," : "",
        with ? filter : "");

    for (gint r = 0; r < n_runs; r++) {
      gint64 t = g_get_monotonic_time ();
      gint status = 1;

      if (!g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL) ||
          status != 0)
        break;
      t = g_get_monotonic_time () - t;
      if (best[with] < 0 || t / 1e3 < best[with])
        best[with] = t / 1e3;
    }
    g_free (cmd);
  }
  return best[0] < 0 || best[1] < 0 ? -1 : (best[1] - best[0]) / frames;
}

/* The denoisers: the temporal step still and compensated, non-local
 * means, beside FFmpeg's on the same frames. */
static void
denoise_table (void)
{
  static const struct
  {
    const gchar *ours, *ffmpeg;
  } rows[] = {
    {"temporal=0.7 radius=0", "hqdn3d"},
    {"temporal=0.7 temporal-mode=compensated radius=0", "atadenoise"},
    {"kernel=nlmeans radius=1 patch-radius=2 sigma-range=10",
        "nlmeans=s=8:p=5:r=3"},
    {"temporal=0.7 temporal-mode=compensated kernel=nlmeans radius=1 "
          "patch-radius=2 sigma-range=7", "nlmeans=s=6:p=3:r=5"},
  };
  const gchar *caps = "video/x-raw,format=I420,width=1920,height=1080";
  gdouble source = element_ms (caps, "identity", 60, 0);

  g_print ("\n## I420 1920x1080, denoise (ms a frame, the source's %.2f "
      "taken off; FFmpeg: ffmpeg with the filter less without it)\n\n"
      "| cudaconvolve backend=cpu | ms | FFmpeg | ms |\n"
      "|---|---:|---|---:|\n", source);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++) {
    gchar *el = g_strdup_printf ("cudaconvolve backend=cpu %s", rows[i].ours);
    gchar *o = ms_text (element_ms (caps, el, 30, source));
    gchar *f = ms_text (ffmpeg_ms (rows[i].ffmpeg, 30));

    g_print ("| `%s` | %s | `%s` | %s |\n", rows[i].ours, o, rows[i].ffmpeg,
        f);
    g_free (el);
    g_free (o);
    g_free (f);
  }
}

static void
demo_row (void)
{
  gdouble s = best_seconds ("videotestsrc pattern=ball num-buffers=300 ! "
      "video/x-raw,format=I420,width=1280,height=720 ! cudaconvolve "
      "backend=cpu radius=8 ! fakesink sync=false");

  g_print ("\n## I420 1280x720, radius 8, the source included\n\n"
      "%.0f frames/s\n", s > 0 ? 300 / s : 0.0);
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    {"runs", 0, 0, G_OPTION_ARG_INT, &n_runs, "runs of each row, the best "
          "kept", "N"},
    {NULL}
  };
  GOptionContext *options = g_option_context_new ("- CPU benchmark");
  GError *err = NULL;
  guint major, minor, micro, nano;

  g_option_context_add_main_entries (options, entries, NULL);
  g_option_context_add_group (options, gst_init_get_option_group ());
  if (!g_option_context_parse (options, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (options);
  gst_version (&major, &minor, &micro, &nano);
  g_print ("bench-cpu: %u cores, GStreamer %u.%u.%u, the best of %d runs\n\n",
      g_get_num_processors (), major, minor, micro, n_runs);
  gray8_table ();
  ayuv_table ();
  denoise_table ();
  demo_row ();
  return failed ? 1 : 0;
}
