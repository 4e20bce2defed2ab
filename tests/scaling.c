/* gst-cudaconvolve: how the element scales within one process.
 *
 *   scaling [--backend=cuda|cpu] [--quick]
 *
 * Chains: `videotestsrc ! 320x240 ! cudaupload ! N x cudaconvolve !
 * cudadownload ! fakesink`, every fourth element on identity settings
 * (radius 0: it passes buffers through), N = 0, 1, 4 and 16: in CUDA
 * memory (NV12) and in system memory (I420, no upload or download), in
 * one streaming thread and with a queue before every element: frames/s,
 * the median of three runs.  In CUDA memory every element must have
 * negotiated it: a chain that fell back to system memory fails.  Then 16
 * elements of eight kinds in turn (blurs, sharpen and a matrix on luma
 * only, edge maps, custom kernels), without and with every fourth on
 * identity settings: the chain with them must run at 0.9 of the frames/s
 * of the chain without them or more (they do less work).
 *
 * Parallel pipelines: `videotestsrc ! 640x360 I420 ! cudaconvolve !
 * fakesink`, 300 frames each, 1, 8 and 32 of them made and run one after
 * the other in one thread, then all at once in as many threads.
 *
 * Prints frames/s and wall times as tables, then whether the GPU's targets
 * hold: 16 chained elements in CUDA memory in one thread at half the
 * frames/s of one element or more, and parallel pipelines no slower than
 * serial ones (with --backend=cpu, or without nvcodec, only the figures).
 * Exits 1 when a frame went missing, a pipeline failed or a target was
 * missed; 77 with --backend=cuda and no CUDA memory elements (nvcodec) or
 * no usable device.  A benchmark: run it on an otherwise idle machine.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <gst/gst.h>

#define CHAIN_FRAMES 2000
#define CHAIN_RUNS 3
#define PARALLEL_FRAMES 300

static gchar *backend = (gchar *) "cuda";
/* The mixed chains' settings, element i taking mixed[i % 8]. */
static const gchar *const mixed[] = {
  "radius=2", "kernel=box radius=3 border=mirror", "kernel=sharpen",
  "kernel=sobel", "kernel=laplacian",
  "kernel=custom kernel-x=<1,2,1> kernel-y=<1,4,6,4,1>",
  "kernel=custom matrix=<<0,-1,0>,<-1,5,-1>,<0,-1,0>> planes=luma",
  "sigma=2 sigma-y=0.7 radius=0",
};
static gboolean quick;
static gboolean failed;

typedef struct
{
  const gchar *desc;
  gint frames;                  /* the source's */
  gint out;                     /* counted at the sink */
  gdouble seconds;              /* PLAYING to EOS */
  gboolean ok;
  gint cuda_in;                 /* cudaconvolve elements fed CUDA memory */
  guint64 idle_pushed;          /* the cudaconvolve elements' stats, summed */
} Run;

static GstPadProbeReturn
count (GstPad * pad, GstPadProbeInfo * info, gpointer counter)
{
  g_atomic_int_inc ((gint *) counter);
  return GST_PAD_PROBE_OK;
}

/* The cudaconvolve elements of pipeline whose sink pads negotiated CUDA
 * memory. */
static gint
count_cuda_in (GstElement * pipeline)
{
  GstIterator *it = gst_bin_iterate_elements (GST_BIN (pipeline));
  GValue v = G_VALUE_INIT;
  gint n = 0;

  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&v);
    GstElementFactory *f = gst_element_get_factory (e);
    GstPad *pad = gst_element_get_static_pad (e, "sink");
    GstCaps *caps = pad ? gst_pad_get_current_caps (pad) : NULL;

    if (f && g_str_equal (GST_OBJECT_NAME (f), "cudaconvolve") && caps &&
        gst_caps_features_contains (gst_caps_get_features (caps, 0),
            "memory:CUDAMemory"))
      n++;
    gst_clear_caps (&caps);
    gst_clear_object (&pad);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return n;
}

/* The idle-pushed counts of the cudaconvolve elements of pipeline, summed:
 * frames pushed by an element's own thread, none having followed in a
 * millisecond. */
static guint64
count_idle_pushed (GstElement * pipeline)
{
  GstIterator *it = gst_bin_iterate_elements (GST_BIN (pipeline));
  GValue v = G_VALUE_INIT;
  guint64 n = 0, k;

  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&v);
    GstElementFactory *f = gst_element_get_factory (e);
    GstStructure *stats = NULL;

    if (f && g_str_equal (GST_OBJECT_NAME (f), "cudaconvolve")) {
      g_object_get (e, "stats", &stats, NULL);
      if (stats && gst_structure_get_uint64 (stats, "idle-pushed", &k))
        n += k;
      gst_clear_structure (&stats);
    }
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return n;
}

/* Runs r->desc (its sink named "sink") to EOS. */
static gpointer
run_pipeline (gpointer data)
{
  Run *r = data;
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (r->desc, &err), *sink;
  GstMessage *msg;
  GstBus *bus;
  GstPad *pad;
  gint64 start;

  if (!pipeline || err) {
    g_printerr ("%s: %s\n", r->desc, err ? err->message : "no pipeline");
    g_clear_error (&err);
    gst_clear_object (&pipeline);
    r->ok = FALSE;
    return NULL;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count, &r->out, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);

  bus = gst_element_get_bus (pipeline);
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  r->seconds = (g_get_monotonic_time () - start) / 1e6;
  r->cuda_in = count_cuda_in (pipeline);
  r->idle_pushed = count_idle_pushed (pipeline);
  r->ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS &&
      r->out == r->frames;
  if (!r->ok)
    g_printerr ("%s: %s, %d of %d frames out\n", r->desc, !msg ? "no EOS" :
        GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR ? "error" : "EOS",
        r->out, r->frames);
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return NULL;
}

static gint
compare_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

/* The settings of element i of a chain: radius 2, or with mix the
 * mixed[] kinds in turn; every fourth on identity settings when asked. */
static const gchar *
chain_settings (gint i, gboolean mix, gboolean identity)
{
  if (identity && i % 4 == 3)
    return "radius=0";
  return mix ? mixed[i % G_N_ELEMENTS (mixed)] : "radius=2";
}

/* A chain of n elements in CUDA or system memory, with or without queues,
 * their settings chain_settings (): frames/s, the median of CHAIN_RUNS
 * runs; 0 when one failed.  *idle: the frames the elements' idle watches
 * pushed, a run (the last), when not NULL. */
static gdouble
chain (gint n, gboolean cuda, gboolean queues, gboolean mix,
    gboolean identity, guint64 * idle)
{
  GString *desc = g_string_new (NULL);
  gint frames = quick ? CHAIN_FRAMES / 10 : CHAIN_FRAMES, i;
  gdouble fps[CHAIN_RUNS];

  g_string_append_printf (desc, "videotestsrc num-buffers=%d ! "
      "video/x-raw,format=%s,width=320,height=240,framerate=30/1 ! %s",
      frames, cuda ? "NV12" : "I420", cuda ? "cudaupload ! " : "");
  for (i = 0; i < n; i++)
    g_string_append_printf (desc, "%scudaconvolve backend=%s %s ! ",
        queues ? "queue ! " : "", backend, chain_settings (i, mix, identity));
  g_string_append_printf (desc, "%sfakesink name=sink sync=false",
      cuda ? "cudadownload ! " : "");
  for (i = 0; i < CHAIN_RUNS; i++) {
    Run r = { desc->str, frames };

    run_pipeline (&r);
    if (r.ok && cuda && r.cuda_in != n) {
      g_printerr ("%s: %d of %d elements took CUDA memory\n", desc->str,
          r.cuda_in, n);
      r.ok = FALSE;
    }
    if (!r.ok) {
      failed = TRUE;
      g_string_free (desc, TRUE);
      return 0;
    }
    fps[i] = frames / r.seconds;
    if (idle)
      *idle = r.idle_pushed;
  }
  g_string_free (desc, TRUE);
  qsort (fps, CHAIN_RUNS, sizeof (gdouble), compare_double);
  return fps[CHAIN_RUNS / 2];
}

/* n pipelines, one after the other or at once: the wall time, s. */
static gdouble
parallel (gint n, gboolean at_once, const gchar * element)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d ! "
      "video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! %s ! "
      "fakesink name=sink sync=false", quick ? PARALLEL_FRAMES / 10 :
      PARALLEL_FRAMES, element);
  Run *runs = g_new0 (Run, n);
  GThread **threads = g_new0 (GThread *, n);
  gint64 start = g_get_monotonic_time ();
  gdouble seconds;
  gint i;

  for (i = 0; i < n; i++) {
    runs[i].desc = desc;
    runs[i].frames = quick ? PARALLEL_FRAMES / 10 : PARALLEL_FRAMES;
    if (at_once)
      threads[i] = g_thread_new ("pipeline", run_pipeline, &runs[i]);
    else
      run_pipeline (&runs[i]);
  }
  for (i = 0; i < n; i++) {
    if (threads[i])
      g_thread_join (threads[i]);
    failed |= !runs[i].ok;
  }
  seconds = (g_get_monotonic_time () - start) / 1e6;
  g_free (threads);
  g_free (runs);
  g_free (desc);
  return seconds;
}

static gboolean
have_factory (const gchar * name)
{
  GstElementFactory *f = gst_element_factory_find (name);

  if (f)
    gst_object_unref (f);
  return f != NULL;
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "the element's backend",
        "B"},
    {"quick", 0, 0, G_OPTION_ARG_NONE, &quick, "a tenth of the frames",
        NULL},
    {NULL}
  };
  static const gint lengths[] = { 0, 1, 4, 16 };
  static const gint counts[] = { 1, 8, 32 };
  GOptionContext *options = g_option_context_new ("- scaling");
  gdouble fps[2][2][G_N_ELEMENTS (lengths)];
  gboolean cuda_ok, targets = TRUE;
  GError *err = NULL;
  gchar *element;
  guint i, m, q;

  g_option_context_add_main_entries (options, entries, NULL);
  g_option_context_add_group (options, gst_init_get_option_group ());
  if (!g_option_context_parse (options, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (options);
  cuda_ok = !g_str_equal (backend, "cpu") && have_factory ("cudaupload") &&
      have_factory ("cudadownload");
  if (g_str_equal (backend, "cuda") && !cuda_ok) {
    g_print ("no cudaupload/cudadownload (nvcodec): skipped\n");
    return 77;
  }
  element = g_strdup_printf ("cudaconvolve backend=%s radius=4", backend);
  /* the process's first pipeline sets up what later ones share */
  parallel (1, FALSE, element);
  if (failed) {
    g_print ("the first pipeline failed: skipped\n");
    return g_str_equal (backend, "cuda") ? 77 : 1;
  }

  g_print ("## Chained elements, 320x240, %d frames (frames/s, median of "
      "%d runs)\n\n",
      quick ? CHAIN_FRAMES / 10 : CHAIN_FRAMES, CHAIN_RUNS);
  g_print ("| memory | threads |");
  for (i = 0; i < G_N_ELEMENTS (lengths); i++)
    g_print (" %d element%s |", lengths[i], lengths[i] == 1 ? "" : "s");
  g_print ("\n|---|---|");
  for (i = 0; i < G_N_ELEMENTS (lengths); i++)
    g_print ("---:|");
  g_print ("\n");
  for (m = 0; m < 2; m++) {
    if (m == 0 && !cuda_ok)
      continue;
    for (q = 0; q < 2; q++) {
      g_print ("| %s | %s |", m == 0 ? "CUDA (NV12)" : "system (I420)",
          q ? "a queue before each" : "one");
      for (i = 0; i < G_N_ELEMENTS (lengths); i++) {
        fps[m][q][i] = chain (lengths[i], m == 0, q, FALSE, TRUE, NULL);
        g_print (" %.0f |", fps[m][q][i]);
      }
      g_print ("\n");
    }
  }

  g_print ("\n## 16 chained elements of eight kinds, 320x240, one thread "
      "(frames/s, median of %d runs; in brackets the frames the elements' "
      "idle watches pushed in a run, stats idle-pushed)\n\n| memory | none on "
      "identity | every fourth on identity | ratio |\n|---|---:|---:|---:|\n",
      CHAIN_RUNS);
  for (m = 0; m < 2; m++) {
    guint64 idle_without = 0, idle_with = 0;
    gdouble without, with;

    if (m == 0 && !cuda_ok)
      continue;
    without = chain (16, m == 0, FALSE, TRUE, FALSE, &idle_without);
    with = chain (16, m == 0, FALSE, TRUE, TRUE, &idle_with);
    g_print ("| %s | %.0f (%" G_GUINT64_FORMAT ") | %.0f (%" G_GUINT64_FORMAT
        ") | %.2f |\n", m == 0 ? "CUDA (NV12)" : "system (I420)", without,
        idle_without, with, idle_with, without > 0 ? with / without : 0);
    if (m == 0 && with < 0.9 * without)
      targets = FALSE;
  }

  g_print ("\n## Pipelines in one process, 640x360 I420, %d frames each "
      "(wall time, s)\n\n", quick ? PARALLEL_FRAMES / 10 : PARALLEL_FRAMES);
  g_print ("| pipelines | element | one after the other | at once | "
      "ratio |\n|---:|---|---:|---:|---:|\n");
  for (i = 0; i < G_N_ELEMENTS (counts); i++) {
    const gchar *elements[] = { element, "identity" };
    guint e;

    for (e = 0; e < G_N_ELEMENTS (elements); e++) {
      gdouble serial = parallel (counts[i], FALSE, elements[e]);
      gdouble at_once = parallel (counts[i], TRUE, elements[e]);

      g_print ("| %d | %s | %.3f | %.3f | %.2f |\n", counts[i],
          e ? "identity" : "cudaconvolve", serial, at_once,
          at_once / serial);
      if (e == 0 && counts[i] > 1 && at_once > serial && cuda_ok)
        targets = FALSE;
    }
  }

  if (cuda_ok) {
    gdouble ratio = fps[0][0][3] / fps[0][0][1];

    g_print ("\n16 chained elements in CUDA memory, one thread: %.2f of one "
        "element's frames/s (target 0.50 or more)\n", ratio);
    targets &= ratio >= 0.5;
  }
  g_print ("%s\n", failed ? "FAILED: frames lost or a pipeline failed" :
      targets ? "OK: targets met" : "FAILED: a target was missed");
  g_free (element);
  return failed || !targets ? 1 : 0;
}
