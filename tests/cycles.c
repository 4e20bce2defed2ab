/* gst-cudaconvolve: `cycles N PIPELINE [reuse]`: N state cycles NULL ->
 * PLAYING -> (EOS) -> NULL of a pipeline in one process (a new pipeline
 * each cycle, or with `reuse` the same elements every time), printing the resident
 * memory after the first 10% of the cycles (warm-up) and at the end, and
 * the growth a cycle.  A diagnostic for memory that start/stop cycles
 * leave behind: compare a pipeline with cudaconvolve against the same
 * without it, or with nvcodec's elements alone.  The pipeline must end by
 * itself (e.g. videotestsrc num-buffers=3).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>

#include "proc-status.h"

int
main (int argc, char **argv)
{
  guint64 n, i, warm, rss_warm = 0, rss_end;
  GstElement *pipeline = NULL;
  gboolean reuse;
  GError *err = NULL;

  gst_init (&argc, &argv);
  if (argc < 3 || argc > 4 || (n = g_ascii_strtoull (argv[1], NULL,
              10)) < 10) {
    g_printerr ("usage: %s CYCLES(>=10) PIPELINE [reuse]\n", argv[0]);
    return 2;
  }
  reuse = argc == 4 && g_str_equal (argv[3], "reuse");
  warm = n / 10;
  for (i = 0; i < n; i++) {
    GstBus *bus;
    GstMessage *msg;

    if (!pipeline)
      pipeline = gst_parse_launch (argv[2], &err);
    if (!pipeline || err) {
      g_printerr ("%s\n", err ? err->message : "no pipeline");
      return 1;
    }
    bus = gst_element_get_bus (pipeline);
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (!msg || GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS) {
      g_printerr ("cycle %" G_GUINT64_FORMAT ": %s\n", i,
          msg ? "error" : "no EOS within 10 s");
      return 1;
    }
    gst_message_unref (msg);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (bus);
    if (!reuse)
      gst_clear_object (&pipeline);
    if (i + 1 == warm)
      rss_warm = proc_status_read_kb ("VmRSS");
  }
  rss_end = proc_status_read_kb ("VmRSS");
  g_print ("%" G_GUINT64_FORMAT " cycles: VmRSS %" G_GUINT64_FORMAT " kB after "
      "%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " kB after all: %.1f kB a "
      "cycle\n", n, rss_warm, warm, rss_end,
      (double) (rss_end - rss_warm) / (n - warm));
  gst_clear_object (&pipeline);
  return 0;
}
