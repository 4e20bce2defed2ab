/* gst-cudaconvolve: memory across start/stop cycles while properties
 * change, as a camera application that restarts its pipeline on every
 * reconnect and takes the blur from a UI slider.
 *
 *   cycles [--cycles=N] [--backend=cuda|cpu|auto] [--cuda-memory]
 *          [--no-properties] [--control] [--bound=KIB] [--as-user]
 *          [--last-half=KIB] [--settings="NAME=VALUE ..."]
 *
 * Each cycle runs `videotestsrc ! 320x240 I420 ! cudaconvolve ! fakesink`
 * (with --cuda-memory through cudaupload and cudadownload) from NULL to
 * PLAYING and back: even cycles to EOS (20 frames), odd ones torn down
 * mid-stream once 5 frames are out; a new pipeline every 10 cycles.  A
 * second thread sets the element's properties all along, as fast as it
 * can (over 1,000 a cycle): kernel, radius, sigma, border, planes,
 * amount.  --control puts identity in the element's place, with no
 * property changes: what the rest of the pipeline leaves behind.
 *
 * After a warm-up (the first tenth of the cycles, at least 30) the
 * resident memory and the GPU memory in use (CUDA driver, device-wide)
 * are taken between pipelines, each time one is freed (printed every 50
 * cycles).  Exits 1 when either grew by more than --bound KiB a cycle
 * (default 1) from the first third of those samples to the last, or a
 * cycle failed; 77 with --backend=cuda and no usable CUDA device.
 *
 * --as-user takes the resident memory as a user sees it: without first
 * handing the C library's free memory back (malloc_trim ()).
 * --last-half=KIB also bounds the resident memory's growth over the last
 * half of the run, in KiB: the median of the last five samples taken
 * every 100 cycles (the last 500 cycles) less that of the five from the
 * half-way point on.  --settings adds the element's settings to the
 * pipeline's description (e.g. "cpu-threads=2").
 *
 * The CUDA driver loads a kernel's code when it first runs (lazy
 * loading), and some settings meet a kernel for the first time only after
 * hundreds of cycles: code, not a leak, and at most the plugin's size.
 * The test asks for eager loading (CUDA_MODULE_LOADING=EAGER, unless the
 * environment sets it), so that every kernel is in memory before the
 * warm-up ends and what grows after it is what the cycles leave behind.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <gst/gst.h>

#include "gpu-memory.h"
#include "proc-status.h"

#define FRAMES_EOS 20
#define FRAMES_TEARDOWN 5
#define NEW_PIPELINE_EVERY 10

static gint n_cycles = 300;
static gchar *backend = (gchar *) "cuda";
static gboolean cuda_memory, no_properties, control;
static gdouble bound_kib = 1.0;
static gboolean as_user;
static gchar *settings = (gchar *) "";
static gdouble last_half_kib = -1.0;

/* The element the setter works on, under lock; NULL between pipelines. */
static GMutex lock;
static GstElement *conv;
static gint stop_setter;
static gint n_sets;
static gint frames_out;

static gpointer
setter_thread (gpointer data)
{
  static const gchar *kernels[] = { "gaussian", "box", "sharpen", "sobel",
    "laplacian"
  };
  static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };
  static const gchar *planes[] = { "auto", "all", "luma", "chroma" };
  GRand *rand = g_rand_new_with_seed (38);

  while (!g_atomic_int_get (&stop_setter)) {
    GstElement *e;

    g_mutex_lock (&lock);
    e = conv ? gst_object_ref (conv) : NULL;
    g_mutex_unlock (&lock);
    if (e) {
      switch (g_rand_int_range (rand, 0, 6)) {
        case 0:
          g_object_set (e, "radius", g_rand_int_range (rand, 0, 17), NULL);
          break;
        case 1:
          gst_util_set_object_arg (G_OBJECT (e), "kernel",
              kernels[g_rand_int_range (rand, 0, G_N_ELEMENTS (kernels))]);
          break;
        case 2:
          g_object_set (e, "sigma", g_rand_double_range (rand, 0, 6), NULL);
          break;
        case 3:
          gst_util_set_object_arg (G_OBJECT (e), "border",
              borders[g_rand_int_range (rand, 0, G_N_ELEMENTS (borders))]);
          break;
        case 4:
          gst_util_set_object_arg (G_OBJECT (e), "planes",
              planes[g_rand_int_range (rand, 0, G_N_ELEMENTS (planes))]);
          break;
        default:
          g_object_set (e, "amount", g_rand_double_range (rand, 0, 3), NULL);
          break;
      }
      gst_object_unref (e);
      g_atomic_int_inc (&n_sets);
    }
    g_thread_yield ();
  }
  g_rand_free (rand);
  return NULL;
}

static GstPadProbeReturn
count_out (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  g_atomic_int_inc (&frames_out);
  return GST_PAD_PROBE_OK;
}

static GstElement *
make_pipeline (void)
{
  GError *err = NULL;
  GstElement *pipeline;
  GstPad *pad;
  gchar *desc;

  gchar *element = control ? g_strdup ("identity name=conv") :
      g_strdup_printf ("cudaconvolve name=conv backend=%s radius=4 %s",
      backend, settings);

  desc = g_strdup_printf ("videotestsrc name=src pattern=ball ! "
      "video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! %s"
      "%s ! %sfakesink name=sink", cuda_memory ? "cudaupload ! " : "",
      element, cuda_memory ? "cudadownload ! " : "");
  g_free (element);
  pipeline = gst_parse_launch (desc, &err);
  if (!pipeline || err) {
    g_printerr ("%s: %s\n", desc, err ? err->message : "no pipeline");
    exit (1);
  }
  g_free (desc);
  g_mutex_lock (&lock);
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  pad = gst_element_get_static_pad (conv, "src");
  g_mutex_unlock (&lock);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_out, NULL, NULL);
  gst_object_unref (pad);
  return pipeline;
}

static void
free_pipeline (GstElement * pipeline)
{
  g_mutex_lock (&lock);
  gst_clear_object (&conv);
  g_mutex_unlock (&lock);
  gst_object_unref (pipeline);
}

/* One cycle: to EOS, or torn down once FRAMES_TEARDOWN frames are out.
 * FALSE after printing why when it failed. */
static gboolean
run_cycle (GstElement * pipeline, gint cycle)
{
  gboolean to_eos = cycle % 2 == 0, ok = TRUE;
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstBus *bus = gst_element_get_bus (pipeline);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  GstMessage *msg;

  g_object_set (src, "num-buffers", to_eos ? FRAMES_EOS : -1, NULL);
  g_atomic_int_set (&frames_out, 0);
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    ok = FALSE;
  while (ok) {
    msg = gst_bus_timed_pop_filtered (bus, 2 * GST_MSECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (msg) {
      ok = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
      if (!ok) {
        GError *err = NULL;

        gst_message_parse_error (msg, &err, NULL);
        g_printerr ("cycle %d: %s: %s\n", cycle, GST_MESSAGE_SRC_NAME (msg),
            err->message);
        g_clear_error (&err);
      }
      gst_message_unref (msg);
      break;
    }
    if (!to_eos && g_atomic_int_get (&frames_out) >= FRAMES_TEARDOWN)
      break;
    if (g_get_monotonic_time () > deadline) {
      g_printerr ("cycle %d: no %s within 20 s\n", cycle, to_eos ? "EOS" :
          "frames");
      ok = FALSE;
    }
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (src);
  return ok;
}

typedef struct
{
  gint cycle;
  gint64 rss_kb, gpu_kb;
} Sample;

/* Takes a sample, printing it when asked.  Unless --as-user, the C
 * library first gives back the free memory it can (the heap's top, idle
 * arenas): what stays resident is what is in use, not where the heap's
 * top happened to be. */
static Sample
sample (gint cycle, gboolean print)
{
  Sample s = { cycle, 0, 0 };

#ifdef __GLIBC__
  if (!as_user)
    malloc_trim (0);
#endif
  s.rss_kb = (gint64) proc_status_read_kb ("VmRSS");
  s.gpu_kb = gpu_memory_used_kb ();

  if (print) {
    gchar gpu[32];

    g_print ("after %4d cycles: VmRSS %8" G_GINT64_FORMAT " kB, GPU memory "
        "in use %s, %d property sets so far\n", cycle, s.rss_kb,
        gpu_memory_text (s.gpu_kb, gpu, sizeof (gpu)),
        g_atomic_int_get (&n_sets));
  }
  return s;
}

static gint
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* The median of field (an offset into Sample) over samples[from, to). */
static gint64
median (const Sample * samples, guint from, guint to, gsize field)
{
  gint64 *v = g_new (gint64, to - from), m;
  guint i;

  for (i = from; i < to; i++)
    v[i - from] = G_STRUCT_MEMBER (gint64, &samples[i], field);
  qsort (v, to - from, sizeof (gint64), compare_i64);
  m = v[(to - from) / 2];
  g_free (v);
  return m;
}

/* Whether a growth within its bound (within) passes, and the word for it:
 * under a memory tool the heap is the tool's (AddressSanitizer's
 * quarantine), and nothing is checked. */
static gboolean
growth_verdict (gboolean within, const gchar ** word)
{
  if (proc_status_under_memory_tool ()) {
    *word = "not checked under a memory tool";
    return TRUE;
  }
  *word = within ? "ok" : "FAILED";
  return within;
}

/* The growth a cycle of field over the samples taken after the warm-up:
 * the median of their last third less that of their first, over the
 * cycles between the two thirds' middles.  Medians, as the resident
 * memory moves by tens to hundreds of kB from one pipeline to the next,
 * up and down; what leaks raises every sample after it.  Whether it is
 * within the bound. */
static gboolean
check_growth (const gchar * what, const Sample * samples, guint n,
    gsize field)
{
  guint third = n / 3;
  gint64 first = median (samples, 0, third, field);
  gint64 last = median (samples, n - third, n, field);
  gdouble cycles = samples[n - 1 - third / 2].cycle - samples[third / 2].cycle;
  gdouble per_cycle = (last - first) / cycles;
  const gchar *word;
  gboolean ok = growth_verdict (per_cycle <= bound_kib, &word);

  g_print ("%-12s %8" G_GINT64_FORMAT " kB -> %8" G_GINT64_FORMAT " kB "
      "(medians of the first and last thirds after the warm-up): %+.2f KiB "
      "a cycle (bound %.2f): %s\n", what, first, last, per_cycle, bound_kib,
      word);
  return ok;
}

/* --last-half: the resident memory's growth over the last half of the
 * run, from the samples taken every 100 cycles; whether it is within
 * last_half_kib. */
static gboolean
check_last_half (const Sample * samples, guint n)
{
  Sample *every = g_new (Sample, n);
  guint k = 0, i, half = 0;
  gint64 from, to;
  const gchar *word;
  gboolean ok;

  for (i = 0; i < n; i++)
    if (samples[i].cycle % 100 == 0)
      every[k++] = samples[i];
  while (half < k && every[half].cycle < n_cycles / 2)
    half++;
  if (k < half + 10) {
    g_print ("last half: too few samples (run 2000 cycles or more)\n");
    g_free (every);
    return FALSE;
  }
  from = median (every, half, half + 5, G_STRUCT_OFFSET (Sample, rss_kb));
  to = median (every, k - 5, k, G_STRUCT_OFFSET (Sample, rss_kb));
  ok = growth_verdict (to - from <= last_half_kib, &word);
  g_print ("VmRSS over the last half (medians of 5 samples 100 cycles "
      "apart, from cycle %d and to cycle %d): %" G_GINT64_FORMAT " kB -> %"
      G_GINT64_FORMAT " kB, %+" G_GINT64_FORMAT " KiB (bound %.0f): %s\n",
      every[half].cycle, every[k - 1].cycle, from, to, to - from,
      last_half_kib, word);
  g_free (every);
  return ok;
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    {"cycles", 0, 0, G_OPTION_ARG_INT, &n_cycles, "start/stop cycles", "N"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "the element's backend",
        "B"},
    {"cuda-memory", 0, 0, G_OPTION_ARG_NONE, &cuda_memory,
        "through cudaupload and cudadownload", NULL},
    {"no-properties", 0, 0, G_OPTION_ARG_NONE, &no_properties,
        "no property changes", NULL},
    {"control", 0, 0, G_OPTION_ARG_NONE, &control,
        "identity in the element's place, no property changes", NULL},
    {"bound", 0, 0, G_OPTION_ARG_DOUBLE, &bound_kib,
        "growth allowed a cycle, KiB", "KIB"},
    {"as-user", 0, 0, G_OPTION_ARG_NONE, &as_user,
        "resident memory as a user sees it (no malloc_trim)", NULL},
    {"last-half", 0, 0, G_OPTION_ARG_DOUBLE, &last_half_kib,
        "growth allowed over the last half of the run, KiB", "KIB"},
    {"settings", 0, 0, G_OPTION_ARG_STRING, &settings,
        "more of the element's settings, as gst-launch-1.0 takes them",
        "\"NAME=VALUE ...\""},
    {NULL}
  };
  GOptionContext *options = g_option_context_new ("- memory across cycles");
  GstElement *pipeline = NULL;
  GThread *setter = NULL;
  GError *err = NULL;
  GArray *samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  gint warm_cycles, i;
  gboolean ok = TRUE;

  /* before the CUDA driver starts */
  g_setenv ("CUDA_MODULE_LOADING", "EAGER", FALSE);
  g_option_context_add_main_entries (options, entries, NULL);
  g_option_context_add_group (options, gst_init_get_option_group ());
  if (!g_option_context_parse (options, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (options);
  if (g_str_equal (backend, "cuda") && gpu_memory_used_kb () < 0) {
    g_print ("no usable CUDA device: skipped\n");
    return 77;
  }
  warm_cycles = MAX (n_cycles / 10, 30) / NEW_PIPELINE_EVERY *
      NEW_PIPELINE_EVERY;
  /* three samples after the warm-up at least, one for each third */
  if (n_cycles < warm_cycles + 2 * NEW_PIPELINE_EVERY) {
    g_printerr ("--cycles must be %d or more\n", warm_cycles + 2 *
        NEW_PIPELINE_EVERY);
    return 2;
  }
  if (!no_properties && !control)
    setter = g_thread_new ("setter", setter_thread, NULL);
  g_print ("%d cycles of videotestsrc ! 320x240 I420 ! %s ! fakesink, "
      "backend=%s, %s memory, %s\n", n_cycles, control ? "identity" :
      "cudaconvolve", backend, cuda_memory ? "CUDA" : "system", setter ?
      "properties changing from another thread" : "no property changes");

  /* samples between pipelines, the last one freed: one for each after
   * the warm-up, printed every 50 cycles */
  for (i = 0; i <= n_cycles && ok; i++) {
    if (i % NEW_PIPELINE_EVERY == 0 && pipeline) {
      free_pipeline (pipeline);
      pipeline = NULL;
      if (i >= warm_cycles) {
        Sample s = sample (i, i % (last_half_kib >= 0 ? 100 : 50) == 0 ||
            i == warm_cycles || i == n_cycles);

        g_array_append_val (samples, s);
      }
    }
    if (i == n_cycles)
      break;
    if (!pipeline)
      pipeline = make_pipeline ();
    ok = run_cycle (pipeline, i);
  }
  if (pipeline)
    free_pipeline (pipeline);
  g_atomic_int_set (&stop_setter, 1);
  if (setter)
    g_thread_join (setter);
  if (!ok) {
    g_print ("FAILED: cycle %d\n", i - 1);
    return 1;
  }

  g_print ("%.0f property sets a cycle\n", (gdouble) n_sets / n_cycles);
  ok = check_growth ("VmRSS", (Sample *) samples->data, samples->len,
      G_STRUCT_OFFSET (Sample, rss_kb));
  if (g_array_index (samples, Sample, 0).gpu_kb >= 0)
    ok &= check_growth ("GPU memory", (Sample *) samples->data, samples->len,
        G_STRUCT_OFFSET (Sample, gpu_kb));
  if (last_half_kib >= 0)
    ok &= check_last_half ((Sample *) samples->data, samples->len);
  g_array_free (samples, TRUE);
  g_print ("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
