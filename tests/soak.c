/* gst-cudaconvolve: soak, `soak SECONDS [BACKEND]`.
 *
 * Runs 1920x1080 I420 from videotestsrc through cudaconvolve into fakesink
 * for SECONDS while another thread changes radius, kernel, sigma,
 * sigma-range, the temporal denoise and border every few milliseconds.
 * Prints, at the start, every minute and at the end: frames/s, the frames
 * into and out of the element (counted by pad probes), the resident
 * memory and the GPU memory in use (CUDA driver, device-wide).  Exits 1 if an error message arrives, if after EOS
 * frames in != frames out, or if the resident or GPU memory grew from the
 * end of the warm-up to the end by more than BOUND_KB.  The warm-up is a
 * fifth of the run, two minutes at least (a run of three minutes or less
 * checks no growth): until the setter has reached every kernel and the
 * largest settings, memory grows by what they load once (CUDA loads a
 * kernel's module at its first launch, and the engine's scratch grows to
 * the largest frame's needs); a leak grows after that.  BACKEND: auto,
 * cuda or cpu (default auto).  It also prints the time from asking for
 * PLAYING to the first filtered frame: in a fresh process that is the
 * cold start (context, kernels).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gpu-memory.h"
#include "proc-status.h"

/* growth allowed after the warm-up: one 2 MiB page of GPU memory */
#define BOUND_KB 2048
#define REPORT_US (60 * G_USEC_PER_SEC)

static gint frames_in, frames_out;
static gint64 first_frame_us;
static gint stop_setter;

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer counter)
{
  g_atomic_int_inc ((gint *) counter);
  return GST_PAD_PROBE_OK;
}

static void
count_on (GstElement * e, const gchar * pad_name, gint * counter)
{
  GstPad *pad = gst_element_get_static_pad (e, pad_name);

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, counter,
      NULL);
  gst_object_unref (pad);
}

static GstPadProbeReturn
first_frame (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  first_frame_us = g_get_monotonic_time ();
  return GST_PAD_PROBE_REMOVE;
}

/* Changes a filter property every 2 to 10 ms, as a user dragging sliders
 * would, until told to stop. */
static gpointer
setter_thread (gpointer data)
{
  static const gchar *kernels[] = { "gaussian", "box", "sharpen", "sobel",
    "laplacian", "bilateral"
  };
  static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };
  GstElement *e = data;
  GRand *rand = g_rand_new_with_seed (12);

  while (!g_atomic_int_get (&stop_setter)) {
    switch (g_rand_int_range (rand, 0, 7)) {
      case 0:
        g_object_set (e, "radius", g_rand_int_range (rand, 0, 17), NULL);
        break;
      case 1:
        gst_util_set_object_arg (G_OBJECT (e), "kernel",
            kernels[g_rand_int_range (rand, 0, G_N_ELEMENTS (kernels))]);
        break;
      case 2:
        g_object_set (e, "sigma", g_rand_double_range (rand, 0, 5), NULL);
        break;
      case 3:
        g_object_set (e, "sigma-range", g_rand_double_range (rand, 0, 60),
            NULL);
        break;
      case 4:
        /* off a third of the time: the previous frame dropped, kept again */
        g_object_set (e, "temporal", g_rand_int_range (rand, 0, 3) == 0 ? 0.0
            : g_rand_double_range (rand, 0, 1), NULL);
        break;
      case 5:
        g_object_set (e, "temporal-threshold", g_rand_double_range (rand, 1,
                40), NULL);
        break;
      default:
        gst_util_set_object_arg (G_OBJECT (e), "border",
            borders[g_rand_int_range (rand, 0, G_N_ELEMENTS (borders))]);
        break;
    }
    g_usleep (g_rand_int_range (rand, 2000, 10000));
  }
  g_rand_free (rand);
  return NULL;
}

typedef struct
{
  gint64 rss_kb, gpu_kb;
} Memory;

/* One line: time, frames/s since the last line, counts, memory. */
static Memory
report (const gchar * when, gint64 start_us, gint * last_out,
    gint64 * last_us)
{
  gint64 now = g_get_monotonic_time ();
  gint in = g_atomic_int_get (&frames_in);
  gint out = g_atomic_int_get (&frames_out);
  gdouble span = (now - *last_us) / 1e6;
  Memory m = { (gint64) proc_status_read_kb ("VmRSS"), gpu_memory_used_kb () };
  gchar gpu[32];

  g_print ("%-5s t=%6.1f s  %7.1f frames/s  in %d  out %d  VmRSS %"
      G_GINT64_FORMAT " kB  GPU memory in use %s\n", when,
      (now - start_us) / 1e6, span > 0 ? (out - *last_out) / span : 0.0, in,
      out, m.rss_kb, gpu_memory_text (m.gpu_kb, gpu, sizeof (gpu)));
  *last_out = out;
  *last_us = now;
  return m;
}

static gboolean
check_growth (const gchar * what, gint64 warm_kb, gint64 end_kb, gint warm)
{
  gboolean ok = end_kb - warm_kb <= BOUND_KB;

  g_print ("%s from minute %d (the warm-up's end) to the end: %+"
      G_GINT64_FORMAT " kB (bound %d): %s\n", what, warm, end_kb - warm_kb,
      BOUND_KB, ok ? "ok" : "FAILED");
  return ok;
}

int
main (int argc, char **argv)
{
  const gchar *backend = argc > 2 ? argv[2] : "auto";
  gint64 seconds, start, last_us, next_report;
  gint last_out = 0, reports = 0, warm_minutes;
  gboolean failed = FALSE, done = FALSE;
  Memory first = { 0 }, end;
  GstElement *pipeline, *conv;
  GThread *setter;
  GError *err = NULL;
  GstBus *bus;
  gchar *desc;

  gst_init (&argc, &argv);
  if (argc < 2 || (seconds = g_ascii_strtoll (argv[1], NULL, 10)) <= 0) {
    g_printerr ("usage: %s SECONDS [auto|cuda|cpu]\n", argv[0]);
    return 2;
  }

  desc = g_strdup_printf ("videotestsrc is-live=false pattern=ball ! "
      "video/x-raw,format=I420,width=1920,height=1080,framerate=30/1 ! "
      "cudaconvolve name=conv backend=%s radius=4 ! fakesink sync=false",
      backend);
  pipeline = gst_parse_launch (desc, &err);
  if (!pipeline || err) {
    g_printerr ("%s: %s\n", desc, err ? err->message : "no pipeline");
    return 1;
  }
  g_free (desc);
  warm_minutes = MAX (2, (gint) (seconds / 300));
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  count_on (conv, "sink", &frames_in);
  count_on (conv, "src", &frames_out);
  {
    GstPad *src = gst_element_get_static_pad (conv, "src");

    gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, first_frame, NULL,
        NULL);
    gst_object_unref (src);
  }
  bus = gst_element_get_bus (pipeline);

  gpu_memory_used_kb ();        /* the runtime's own context first */
  start = g_get_monotonic_time ();
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    failed = TRUE;
  last_us = start;
  next_report = start + REPORT_US;
  report ("start", start, &last_out, &last_us);
  setter = g_thread_new ("setter", setter_thread, conv);

  while (!done) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 100 * GST_MSECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    gint64 now = g_get_monotonic_time ();

    if (msg) {
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
        gchar *debug = NULL;

        gst_message_parse_error (msg, &err, &debug);
        g_printerr ("error from %s: %s\n%s\n", GST_MESSAGE_SRC_NAME (msg),
            err->message, debug ? debug : "");
        g_clear_error (&err);
        g_free (debug);
        failed = TRUE;
      }
      done = TRUE;
      gst_message_unref (msg);
      continue;
    }
    if (now >= next_report) {
      Memory m = report ("", start, &last_out, &last_us);

      if (++reports == warm_minutes)
        first = m;
      next_report += REPORT_US;
    }
    /* time is up: EOS from the source, so that every frame sent in is
     * out before the counts are compared */
    if (now - start >= seconds * G_USEC_PER_SEC && !g_atomic_int_get
        (&stop_setter)) {
      g_atomic_int_set (&stop_setter, 1);
      gst_element_send_event (pipeline, gst_event_new_eos ());
    }
  }
  g_atomic_int_set (&stop_setter, 1);
  g_thread_join (setter);
  end = report ("end", start, &last_out, &last_us);
  if (first_frame_us)
    g_print ("first frame %.1f ms after PLAYING was asked for (backend %s)\n",
        (first_frame_us - start) / 1e3, backend);
  g_print ("mean  %.1f frames/s over %.1f s\n", frames_out /
      ((last_us - start) / 1e6), (last_us - start) / 1e6);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (reports > warm_minutes) {
    failed |= !check_growth ("VmRSS", first.rss_kb, end.rss_kb, warm_minutes);
    if (end.gpu_kb >= 0)
      failed |= !check_growth ("GPU memory", first.gpu_kb, end.gpu_kb,
          warm_minutes);
  }
  if (frames_in != frames_out) {
    g_printerr ("frames in %d != frames out %d\n", frames_in, frames_out);
    failed = TRUE;
  }
  gst_object_unref (bus);
  gst_object_unref (conv);
  gst_object_unref (pipeline);
  g_print ("%s\n", failed ? "FAILED" : "OK");
  return failed ? 1 : 0;
}
