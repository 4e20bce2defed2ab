/* gst-cudaconvolve: the element under stress and bad input.
 *
 * Property storms from several threads, renegotiation across every format
 * and size while playing, state cycles with bounded memory, pipelines in
 * parallel and elements chained, odd layouts through GstVideoMeta,
 * flushing seeks, buffers without timestamps and missing devices
 * (buffers that do not hold a frame: test-hostile.c).
 *
 * Scaled down for CI on the CPU backend (under 2 minutes on 2 cores).
 * Environment:
 *   CUCONV_ROBUSTNESS_FULL=1       more iterations, bigger sizes
 *   CUCONV_ROBUSTNESS_BACKEND=cuda the same cases on backend=cuda (exits 77,
 *                                  skipped, without a usable CUDA device)
 * Needs appsrc, appsink, videotestsrc and fakesink from the system's
 * plugins beside this build's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gst.h>
#include <gst/app/app.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "cuconv.h"
#include "frame-check.h"
#include "proc-status.h"
#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#include "cuconv-cuda.h"
#endif

static const gchar *formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "I420_12LE", "P010_10LE", "P016_LE", "Y444_16LE", "RGBA",
  "BGRA", "RGBx", "BGRx", "AYUV"
};

/* From the environment, read once in main (). */
static gboolean full;
static const gchar *backend = "cpu";
/* Every backend within ±1 of the reference: the CPU engine's and the
 * GPU's sums may round the last bit differently. */
static const guint tolerance = 1;

/* CI's count, or the full run's. */
#define SCALED(ci, f) (full ? (f) : (ci))

/* Seconds to wait for a frame, EOS or a state before calling it a hang. */
#define WAIT_S 30

static int
device_count (void)
{
#ifdef HAVE_CUDA
  return cuconv_device_count ();
#else
  return 0;
#endif
}

/* "cudaconvolve backend=<backend> args" as gst_parse_launch () reads it. */
static gchar *
conv_desc (const gchar * args)
{
  return g_strdup_printf ("cudaconvolve backend=%s %s", backend, args);
}

/* ------------------------------------------------------------------ */
/* The checker: pad probes around one cudaconvolve that pair each output
 * buffer with the input it came from (frames leave in the order they
 * came, one behind while the element keeps a frame in flight; a flush
 * drops the one in flight), check that timestamps, duration and offsets
 * are kept, and compare every `every`-th output with the CPU reference run
 * on its input with the element's settings of the moment.
 * Failures are counted, not asserted, since probes run in streaming
 * threads; the test asserts on the counts. */

typedef struct
{
  GMutex lock;
  GstElement *element;
  GstVideoInfo info;
  gboolean have_info;
  GQueue in;                    /* the inputs not yet out, oldest first */
  guint every;                  /* 0: no reference comparison */
  guint64 n_in, n_out, n_compared, n_bad;
  gchar first[256];             /* the first failure */
} Checker;

static void
checker_bad (Checker * c, const gchar * format, ...) G_GNUC_PRINTF (2, 3);

static void
checker_bad (Checker * c, const gchar * format, ...)
{
  va_list ap;

  if (c->n_bad++ == 0) {
    va_start (ap, format);
    g_vsnprintf (c->first, sizeof (c->first), format, ap);
    va_end (ap);
  }
}

static GstPadProbeReturn
checker_sink_probe (GstPad * pad, GstPadProbeInfo * pinfo, gpointer data)
{
  Checker *c = data;

  g_mutex_lock (&c->lock);
  if (pinfo->type & GST_PAD_PROBE_TYPE_BUFFER) {
    c->n_in++;
    g_queue_push_tail (&c->in,
        gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER (pinfo)));
  } else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (pinfo)) ==
      GST_EVENT_FLUSH_STOP) {
    g_queue_clear_full (&c->in, (GDestroyNotify) gst_buffer_unref);
  } else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (pinfo)) ==
      GST_EVENT_CAPS) {
    GstCaps *caps;

    gst_event_parse_caps (GST_PAD_PROBE_INFO_EVENT (pinfo), &caps);
    c->have_info = gst_video_info_from_caps (&c->info, caps);
  }
  g_mutex_unlock (&c->lock);
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
checker_src_probe (GstPad * pad, GstPadProbeInfo * pinfo, gpointer data)
{
  Checker *c = data;
  GstBuffer *out = GST_PAD_PROBE_INFO_BUFFER (pinfo), *in;

  g_mutex_lock (&c->lock);
  if (!c->have_info) {
    /* caps that came before the probe was added: the element has them */
    GstPad *sink = gst_element_get_static_pad (c->element, "sink");
    GstCaps *caps = gst_pad_get_current_caps (sink);

    if (caps)
      c->have_info = gst_video_info_from_caps (&c->info, caps);
    gst_clear_caps (&caps);
    gst_object_unref (sink);
  }
  c->n_out++;
  /* a second output for one input is caught here too */
  in = g_queue_pop_head (&c->in);
  if (!in) {
    checker_bad (c, "output %" G_GUINT64_FORMAT " has no input",
        c->n_out - 1);
  } else if (GST_BUFFER_PTS (in) != GST_BUFFER_PTS (out) ||
      GST_BUFFER_DTS (in) != GST_BUFFER_DTS (out) ||
      GST_BUFFER_DURATION (in) != GST_BUFFER_DURATION (out) ||
      GST_BUFFER_OFFSET (in) != GST_BUFFER_OFFSET (out) ||
      GST_BUFFER_OFFSET_END (in) != GST_BUFFER_OFFSET_END (out)) {
    checker_bad (c, "buffer %" G_GUINT64_FORMAT ": pts %" GST_TIME_FORMAT
        " dts %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
        " offset %" G_GUINT64_FORMAT " became %" GST_TIME_FORMAT " %"
        GST_TIME_FORMAT " %" GST_TIME_FORMAT " %" G_GUINT64_FORMAT,
        c->n_out - 1, GST_TIME_ARGS (GST_BUFFER_PTS (in)),
        GST_TIME_ARGS (GST_BUFFER_DTS (in)),
        GST_TIME_ARGS (GST_BUFFER_DURATION (in)), GST_BUFFER_OFFSET (in),
        GST_TIME_ARGS (GST_BUFFER_PTS (out)),
        GST_TIME_ARGS (GST_BUFFER_DTS (out)),
        GST_TIME_ARGS (GST_BUFFER_DURATION (out)), GST_BUFFER_OFFSET (out));
  } else if (c->every && c->have_info && c->n_out % c->every == 0) {
    CuconvSettings s;
    gchar first[160];

    frame_check_element_settings (c->element, &s);
    /* passed through: only identity settings may (the reference would
     * clear P010's low bits, which passthrough keeps) */
    if (out == in) {
      if (!cuconv_settings_is_identity (&s))
        checker_bad (c, "%s buffer %" G_GUINT64_FORMAT " passed through",
            GST_OBJECT_NAME (c->element), c->n_out - 1);
    } else if (frame_check_compare_planes (&c->info, in, out, &s,
            frame_check_element_planes (c->element), tolerance, first,
            sizeof (first), NULL, NULL) != 0)
      checker_bad (c, "%s %s %dx%d buffer %" G_GUINT64_FORMAT ": %s",
          GST_OBJECT_NAME (c->element), GST_VIDEO_INFO_NAME (&c->info),
          GST_VIDEO_INFO_WIDTH (&c->info), GST_VIDEO_INFO_HEIGHT (&c->info),
          c->n_out - 1, first);
    c->n_compared++;
  }
  g_mutex_unlock (&c->lock);
  if (in)
    gst_buffer_unref (in);
  return GST_PAD_PROBE_OK;
}

static Checker *
checker_attach (GstElement * e, guint every)
{
  Checker *c = g_new0 (Checker, 1);
  GstPad *pad;

  g_mutex_init (&c->lock);
  g_queue_init (&c->in);
  c->element = e;
  c->every = every;
  pad = gst_element_get_static_pad (e, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
      checker_sink_probe, c, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (e, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, checker_src_probe, c,
      NULL);
  gst_object_unref (pad);
  return c;
}

static void
checker_set_every (Checker * c, guint every)
{
  g_mutex_lock (&c->lock);
  c->every = every;
  g_mutex_unlock (&c->lock);
}

/* Fails unless nothing went wrong, in outputs came out (n_out, when not
 * G_MAXUINT64) and, with comparisons on, some were made.  Frees c (the
 * probes must be gone: call it after the pipeline is freed). */
static void
checker_check_and_free (Checker * c, guint64 n_out, const gchar * what)
{
  GST_INFO ("%s: %" G_GUINT64_FORMAT " in, %" G_GUINT64_FORMAT " out, %"
      G_GUINT64_FORMAT " compared", what, c->n_in, c->n_out, c->n_compared);
  fail_unless (c->n_bad == 0, "%s: %" G_GUINT64_FORMAT " bad, first: %s",
      what, c->n_bad, c->first);
  if (n_out != G_MAXUINT64) {
    fail_unless_equals_uint64 (c->n_in, n_out);
    fail_unless_equals_uint64 (c->n_out, n_out);
  }
  fail_unless (c->n_compared > 0 || c->every == 0, "%s: nothing compared",
      what);
  g_queue_clear_full (&c->in, (GDestroyNotify) gst_buffer_unref);
  g_mutex_clear (&c->lock);
  g_free (c);
}

/* ------------------------------------------------------------------ */
/* Streams: appsrc ! <elements> ! appsink, fed from the test's thread. */

typedef struct
{
  GstElement *pipeline, *src, *sink;
  GstBus *bus;
  /* what appsink received, from its streaming thread */
  GMutex lock;
  guint64 received, next_offset, out_of_order;
  gboolean keep;                /* queue the samples for the test to pull */
  GAsyncQueue *samples;
} Stream;

static GstFlowReturn
stream_new_sample (GstAppSink * sink, gpointer data)
{
  Stream *s = data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  GstBuffer *buf = gst_sample_get_buffer (sample);

  g_mutex_lock (&s->lock);
  s->received++;
  /* offsets are pushed rising (0, 1, 2...): none twice, none late; a
   * frame lost shows in the count */
  if (GST_BUFFER_OFFSET (buf) != GST_BUFFER_OFFSET_NONE) {
    if (GST_BUFFER_OFFSET (buf) < s->next_offset)
      s->out_of_order++;
    s->next_offset = GST_BUFFER_OFFSET (buf) + 1;
  }
  g_mutex_unlock (&s->lock);
  if (s->keep)
    g_async_queue_push (s->samples, sample);
  else
    gst_sample_unref (sample);
  return GST_FLOW_OK;
}

/* A playing "appsrc ! middle ! appsink" with caps info (none when NULL). */
static Stream *
stream_new (const gchar * middle, const GstVideoInfo * info, gboolean keep)
{
  Stream *s = g_new0 (Stream, 1);
  GstAppSinkCallbacks callbacks = { NULL, };
  gchar *desc;
  GError *err = NULL;

  desc = g_strdup_printf ("appsrc name=src format=time ! %s ! "
      "appsink name=sink sync=false", middle);
  s->pipeline = gst_parse_launch (desc, &err);
  fail_unless (s->pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  callbacks.new_sample = stream_new_sample;
  s->src = gst_bin_get_by_name (GST_BIN (s->pipeline), "src");
  s->sink = gst_bin_get_by_name (GST_BIN (s->pipeline), "sink");
  fail_unless (s->src && s->sink, "no appsrc/appsink: does the test's "
      "environment allow the system's plugins?");
  /* block rather than queue a whole stream in appsrc */
  g_object_set (s->src, "block", TRUE, "max-bytes", (guint64) 1, NULL);
  if (info)
    gst_app_src_set_caps (GST_APP_SRC (s->src), gst_video_info_to_caps (info));
  g_mutex_init (&s->lock);
  s->keep = keep;
  s->samples = g_async_queue_new_full ((GDestroyNotify) gst_sample_unref);
  gst_app_sink_set_callbacks (GST_APP_SINK (s->sink), &callbacks, s, NULL);
  s->bus = gst_element_get_bus (s->pipeline);
  fail_if (gst_element_set_state (s->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return s;
}

/* The element called name in bin, which keeps it alive. */
static GstElement *
bin_get (GstElement * bin, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (bin), name);

  fail_unless (e != NULL, "no element %s", name);
  gst_object_unref (e);
  return e;
}

static GstElement *
stream_get (Stream * s, const gchar * name)
{
  return bin_get (s->pipeline, name);
}

/* Pushes buf with offset i and timestamps of frame i at 30 frames/s. */
static void
stream_push (Stream * s, GstBuffer * buf, guint64 i)
{
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
  GST_BUFFER_DTS (buf) = GST_BUFFER_PTS (buf);
  GST_BUFFER_DURATION (buf) = gst_util_uint64_scale (i + 1, GST_SECOND, 30) -
      GST_BUFFER_PTS (buf);
  GST_BUFFER_OFFSET (buf) = i;
  GST_BUFFER_OFFSET_END (buf) = i + 1;
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->src), buf),
      GST_FLOW_OK);
}

/* Waits until appsink has received n buffers. */
static void
stream_wait_received (Stream * s, guint64 n)
{
  gint64 end = g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;
  guint64 received;

  do {
    g_mutex_lock (&s->lock);
    received = s->received;
    g_mutex_unlock (&s->lock);
    if (received >= n)
      return;
    g_usleep (1000);
  } while (g_get_monotonic_time () < end);
  fail ("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " buffers out in %d s",
      received, n, WAIT_S);
}

/* The next sample appsink received (keep mode), or a failure. */
static GstSample *
stream_pull (Stream * s)
{
  GstSample *sample = g_async_queue_timeout_pop (s->samples,
      WAIT_S * G_USEC_PER_SEC);

  fail_unless (sample != NULL, "no output in %d s", WAIT_S);
  return sample;
}

/* Fails on an error message; 1 for a warning message, whose text must
 * contain must_contain (when given), else 0.  Takes msg. */
static guint
message_check (GstMessage * msg, const gchar * must_contain)
{
  GError *err = NULL;
  gchar *debug = NULL;
  guint warning = 0;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, &debug);
    fail ("error from %s: %s (%s)", GST_MESSAGE_SRC_NAME (msg),
        err->message, debug ? debug : "");
  } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    gst_message_parse_warning (msg, &err, &debug);
    fail_unless (!must_contain || strstr (err->message, must_contain),
        "unexpected warning from %s: %s", GST_MESSAGE_SRC_NAME (msg),
        err->message);
    warning = 1;
  }
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  return warning;
}

/* message_check () on every message left on bus; the number of
 * warnings. */
static guint
bus_check (GstBus * bus, const gchar * must_contain)
{
  GstMessage *msg;
  guint warnings = 0;

  while ((msg = gst_bus_pop (bus)))
    warnings += message_check (msg, must_contain);
  return warnings;
}

/* Waits for EOS on bus, failing on an error or after WAIT_S.  Returns the
 * number of warning messages before it, each of which must contain
 * must_contain (when given). */
static guint
bus_wait_eos (GstBus * bus, const gchar * must_contain)
{
  GstMessage *msg;
  guint warnings = 0;

  /* not gst_bus_timed_pop_filtered (), which drops the others */
  while ((msg = gst_bus_timed_pop (bus, WAIT_S * GST_SECOND))) {
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
      gst_message_unref (msg);
      return warnings;
    }
    warnings += message_check (msg, must_contain);
  }
  fail ("no EOS in %d s", WAIT_S);
  return warnings;
}

/* Sends EOS, waits for it at the sink (failing on an error), checks that
 * every one of n pushed buffers came out once and in order, and frees s.
 * Returns the number of warning messages, which must contain
 * must_contain. */
static guint
stream_finish (Stream * s, guint64 n, const gchar * must_contain)
{
  guint warnings;

  fail_unless_equals_int (gst_app_src_end_of_stream (GST_APP_SRC (s->src)),
      GST_FLOW_OK);
  warnings = bus_wait_eos (s->bus, must_contain);
  warnings += bus_check (s->bus, must_contain);
  fail_unless_equals_int (gst_element_set_state (s->pipeline,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);

  fail_unless_equals_uint64 (s->received, n);
  fail_unless_equals_uint64 (s->out_of_order, 0);
  gst_object_unref (s->src);
  gst_object_unref (s->sink);
  gst_object_unref (s->bus);
  gst_object_unref (s->pipeline);
  g_async_queue_unref (s->samples);
  g_mutex_clear (&s->lock);
  g_free (s);
  return warnings;
}

/* ------------------------------------------------------------------ */
/* Property storm */

typedef struct
{
  GstElement *e;
  gint stop;
  guint seed;
  guint sets, refused, out_of_range;
} Setter;

static gint n_range_warnings;

static gboolean
count_range_warning (const gchar * log_domain, GLogLevelFlags log_level,
    const gchar * message, gpointer user_data)
{
  g_atomic_int_inc (&n_range_warnings);
  return TRUE;
}

/* Sets random properties, valid and invalid, until told to stop. */
static gpointer
setter_thread (gpointer data)
{
  static const struct
  {
    const gchar *property, *value;
  } valid[] = {
    {"kernel", "gaussian"}, {"kernel", "box"}, {"kernel", "sharpen"},
    {"kernel", "sobel"}, {"kernel", "laplacian"}, {"kernel", "custom"},
    {"border", "clamp"}, {"border", "mirror"}, {"border", "wrap"},
    {"border", "zero"}, {"planes", "auto"}, {"planes", "all"},
    {"planes", "luma"}, {"planes", "chroma"}, {"normalize", "false"},
    {"normalize", "true"}, {"kernel-x", "<1, 2, 1>"}, {"kernel-x", "<>"},
    {"kernel-y", "<-1, 0, 1>"}, {"kernel-y", "<1, 1, 1, 1, 1>"},
    {"matrix", "<<0, -1, 0>, <-1, 5, -1>, <0, -1, 0>>"}, {"matrix", "<>"},
  };
  /* refused by the element, each with a warning message on the bus */
  static const struct
  {
    const gchar *property, *value;
  } refused[] = {
    {"matrix", "<<1, 2>, <3, 4>>"}, {"matrix", "<<1, 2, 1>>"},
    {"kernel-x", "<1, 2>"}, {"kernel-y", "<1, nan, 1>"},
  };
  Setter *st = data;
  GRand *rand = g_rand_new_with_seed (st->seed);

  while (!g_atomic_int_get (&st->stop)) {
    guint r = g_rand_int_range (rand, 0, 100), i;

    if (r < 20) {
      g_object_set (st->e, "radius", g_rand_int_range (rand, 0, 9), NULL);
    } else if (r < 30) {
      g_object_set (st->e, "sigma", g_rand_double_range (rand, 0, 3), NULL);
    } else if (r < 35) {
      g_object_set (st->e, "sigma-y", g_rand_double_range (rand, 0, 3), NULL);
    } else if (r < 42) {
      g_object_set (st->e, "amount", g_rand_double_range (rand, 0, 10), NULL);
    } else if (r < 85) {
      i = g_rand_int_range (rand, 0, G_N_ELEMENTS (valid));
      gst_util_set_object_arg (G_OBJECT (st->e), valid[i].property,
          valid[i].value);
    } else if (r < 95) {
      i = g_rand_int_range (rand, 0, G_N_ELEMENTS (refused));
      gst_util_set_object_arg (G_OBJECT (st->e), refused[i].property,
          refused[i].value);
      st->refused++;
    } else {
      /* out of range: GObject refuses it (FRAME_CHECK_REFUSAL_LEVELS) */
      if (r & 1)
        g_object_set (st->e, "radius", CUCONV_MAX_RADIUS + 1 + r, NULL);
      else
        g_object_set (st->e, "amount", -1.0, NULL);
      st->out_of_range++;
    }
    st->sets++;
    g_usleep (g_rand_int_range (rand, 20, 300));
  }
  g_rand_free (rand);
  return NULL;
}

/* Three threads set properties, invalid values included, while frames
 * flow: every frame comes out once, in order, with its timestamps; each
 * refusal is one warning message; then, settled, frames equal the
 * reference. */
GST_START_TEST (test_property_storm)
{
  const guint n_threads = 3, n = SCALED (2000, 10000), n_settled = 4;
  const guint w = SCALED (128, 640), h = SCALED (72, 360);
  GRand *rand = g_rand_new_with_seed (1);
  GstBuffer *frames[8];
  GThread *threads[3];
  Setter setters[3];
  GstCheckLogFilter *filter;
  GstVideoInfo info;
  GstElement *e;
  Checker *c;
  Stream *s;
  guint i, sets = 0, refused = 0, out_of_range = 0, warnings;
  gchar *desc;

  frame_check_info_init (&info, "I420", w, h);
  for (i = 0; i < G_N_ELEMENTS (frames); i++)
    frames[i] = frame_check_buffer_random (&info, rand, i & 1);
  desc = conv_desc ("name=c0 radius=3");
  s = stream_new (desc, &info, FALSE);
  g_free (desc);
  e = stream_get (s, "c0");
  c = checker_attach (e, 0);

  n_range_warnings = 0;
  filter = gst_check_add_log_filter ("GLib-GObject",
      FRAME_CHECK_REFUSAL_LEVELS, g_regex_new ("out of range", 0, 0, NULL),
      count_range_warning, NULL, NULL);
  for (i = 0; i < n_threads; i++) {
    memset (&setters[i], 0, sizeof (Setter));
    setters[i].e = e;
    setters[i].seed = 100 + i;
    threads[i] = g_thread_new ("setter", setter_thread, &setters[i]);
  }
  /* shallow copies: the metadata is the copy's, the memory shared */
  for (i = 0; i < n; i++)
    stream_push (s, gst_buffer_copy (frames[i % G_N_ELEMENTS (frames)]), i);
  for (i = 0; i < n_threads; i++) {
    g_atomic_int_set (&setters[i].stop, 1);
    g_thread_join (threads[i]);
    sets += setters[i].sets;
    refused += setters[i].refused;
    out_of_range += setters[i].out_of_range;
  }
  gst_check_remove_log_filter (filter);

  /* settled, and the storm's frames out: the settings of the moment are
   * those of the next frames */
  stream_wait_received (s, n);
  gst_util_set_object_arg (G_OBJECT (e), "kernel", "gaussian");
  g_object_set (e, "radius", 2, NULL);
  checker_set_every (c, 1);
  for (i = n; i < n + n_settled; i++)
    stream_push (s, gst_buffer_copy (frames[i % G_N_ELEMENTS (frames)]), i);

  warnings = stream_finish (s, n + n_settled, "refused");
  GST_INFO ("%u sets (%u refused, %u out of range) over %u frames", sets,
      refused, out_of_range, n);
  /* the storm overlapped the stream */
  fail_unless (sets >= 100, "only %u sets during %u frames", sets, n);
  fail_unless (refused > 0 && out_of_range > 0);
  fail_unless_equals_int (warnings, refused);
  fail_unless_equals_int (g_atomic_int_get (&n_range_warnings),
      out_of_range);
  checker_check_and_free (c, n + n_settled, "property storm");

  for (i = 0; i < G_N_ELEMENTS (frames); i++)
    gst_buffer_unref (frames[i]);
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Renegotiation */

/* Settings cycled through while the caps change. */
static const gchar *reneg_configs[][2] = {
  {"kernel", "gaussian"}, {"radius", "3"}, {"border", "mirror"},
  {"kernel", "box"}, {"border", "wrap"}, {"kernel", "sharpen"},
  {"kernel", "sobel"}, {"border", "zero"}, {"kernel", "laplacian"},
  {"planes", "all"}, {"kernel", "custom"},
  {"matrix", "<<1, 2, 1>, <2, 4, 2>, <1, 2, 1>>"}, {"planes", "auto"},
  {"radius", "1"},
};

/* Pushes a random frame of info (padded or not) and checks that the same
 * caps and timestamps come out; the checker compares the content. */
static void
push_and_pull_checked (Stream * s, const GstVideoInfo * info, GRand * rand,
    gboolean padded, guint64 i)
{
  GstCaps *caps = gst_video_info_to_caps (info);
  GstSample *sample;
  GstBuffer *out;

  stream_push (s, frame_check_buffer_random (info, rand, padded), i);
  sample = stream_pull (s);
  out = gst_sample_get_buffer (sample);
  fail_unless (gst_caps_is_equal (gst_sample_get_caps (sample), caps),
      "%" GST_PTR_FORMAT " came out as %" GST_PTR_FORMAT, caps,
      gst_sample_get_caps (sample));
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
  gst_sample_unref (sample);
  gst_caps_unref (caps);
}

/* Caps change while playing, format and size at every step, from 1x1 to
 * 1920x1080, with the settings changing too; every frame against the
 * reference. */
GST_START_TEST (test_renegotiation)
{
  static const gint ci_sizes[][2] = {
    {1, 1}, {385, 289}, {3, 7}, {33, 18}
  };
  static const gint full_sizes[][2] = {
    {1, 1}, {1920, 1080}, {2, 2}, {3, 7}, {1921, 1081}, {17, 5},
    {640, 360}, {64, 48}, {385, 289}, {1280, 720}, {33, 18}
  };
  /* the largest size in CI, in a handful of formats */
  static const gchar *ci_big[] = { "I420", "P010_10LE", "BGRx" };
  const gint (*sizes)[2] = full ? full_sizes : ci_sizes;
  guint n_sizes = full ? G_N_ELEMENTS (full_sizes) : G_N_ELEMENTS (ci_sizes);
  GRand *rand = g_rand_new_with_seed (2);
  GstVideoInfo info;
  GstElement *e;
  Checker *c;
  Stream *s;
  guint64 n = 0;
  guint z, f, k = 0;
  gchar *desc = conv_desc ("name=c0");

  s = stream_new (desc, NULL, TRUE);
  g_free (desc);
  e = stream_get (s, "c0");
  c = checker_attach (e, 1);
  for (z = 0; z < n_sizes; z++) {
    for (f = 0; f < G_N_ELEMENTS (formats); f++) {
      /* odd sizes alternate the format order, so that each format meets
       * others on both sides */
      const gchar *format = formats[z & 1 ? G_N_ELEMENTS (formats) - 1 - f :
          f];

      frame_check_info_init (&info, format, sizes[z][0], sizes[z][1]);
      gst_app_src_set_caps (GST_APP_SRC (s->src),
          gst_video_info_to_caps (&info));
      gst_util_set_object_arg (G_OBJECT (e), reneg_configs[k][0],
          reneg_configs[k][1]);
      k = (k + 1) % G_N_ELEMENTS (reneg_configs);
      push_and_pull_checked (s, &info, rand, n & 1, n);
      n++;
    }
  }
  for (f = 0; !full && f < G_N_ELEMENTS (ci_big); f++) {
    frame_check_info_init (&info, ci_big[f], 1920, 1080);
    gst_app_src_set_caps (GST_APP_SRC (s->src), gst_video_info_to_caps (&info));
    push_and_pull_checked (s, &info, rand, f & 1, n++);
    /* and back down */
    frame_check_info_init (&info, ci_big[f], 1, 1);
    gst_app_src_set_caps (GST_APP_SRC (s->src), gst_video_info_to_caps (&info));
    push_and_pull_checked (s, &info, rand, FALSE, n++);
  }
  stream_finish (s, n, NULL);
  checker_check_and_free (c, n, "renegotiation");
  fail_unless (n > 70);
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* State cycles */

/* The device's memory in use, in bytes; 0 when there is no device to ask.
 * Device-wide (cudaMemGetInfo): every process's allocations count, so the
 * state-cycle test needs the GPU to itself, as gpu-host.sh runs it (beside
 * test-gpu and compute-sanitizer on one GPU it saw 547 MB of theirs). */
static guint64
gpu_used_bytes (void)
{
#ifdef HAVE_CUDA
  size_t free_b = 0, total_b = 0;

  if (g_str_equal (backend, "cuda") && device_count () > 0 &&
      cudaMemGetInfo (&free_b, &total_b) == cudaSuccess)
    return total_b - free_b;
#endif
  return 0;
}

/* Runs the 3-frame pipeline p from NULL to EOS and back to NULL. */
static void
cycle_once (GstElement * p, GstBus * bus)
{
  GstMessage *msg;

  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, WAIT_S * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "no EOS: %" GST_PTR_FORMAT, msg);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
}

/* NULL -> PLAYING -> NULL cycles, 3 frames each, with bounds on the
 * resident memory after a warm-up (allocator pools, the registry, lazy
 * initialisation).
 *
 * The bound is 4 MiB over the measured cycles, in both modes.  The CPU
 * backend's growth is noise (28 KB in all over 300 cycles, measured), so
 * 4 MiB never fails on noise.  Full: 300 cycles, so a leak of 30 KB a
 * cycle (9 MB) fails it.  CI: 100 cycles, so
 * a leak of 100 KB a cycle (10 MB) fails it; 30 KB a cycle (3 MB) may
 * pass, which is why the GPU host runs the full count.  On the CUDA
 * backend the device's memory in use may not grow by more than 32 MiB:
 * device allocations come in 2 MiB pages, so a buffer or pool kept per
 * cycle shows as 200 MiB over 100 cycles, while the driver's own caches
 * stay well under the bound. */
GST_START_TEST (test_state_cycles_memory)
{
  const guint warmup = SCALED (20, 50), cycles = SCALED (100, 300);
  const guint64 rss_bound_kb = 4096, gpu_bound = 32 << 20;
  GstElement *p, *e;
  GstBus *bus;
  Checker *c;
  guint64 rss0, rss1, gpu0, gpu1;
  gchar *conv = conv_desc ("name=c0 radius=3");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 pattern=ball "
      "! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! %s ! "
      "fakesink", conv);
  GError *err = NULL;
  guint i;

  p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  e = gst_bin_get_by_name (GST_BIN (p), "c0");
  c = checker_attach (e, 3);
  bus = gst_element_get_bus (p);

  for (i = 0; i < warmup; i++)
    cycle_once (p, bus);
  /* the GPU figure first: its first query starts the CUDA runtime in this
   * process, tens of MB that are no cycle's */
  gpu0 = gpu_used_bytes ();
  rss0 = frame_check_proc_kb ("VmRSS");
  for (i = 0; i < cycles; i++)
    cycle_once (p, bus);
  rss1 = frame_check_proc_kb ("VmRSS");
  gpu1 = gpu_used_bytes ();
  GST_INFO ("RSS %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT " kB over %u "
      "cycles; GPU %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT " bytes",
      rss0, rss1, cycles, gpu0, gpu1);
  g_print ("state cycles: RSS %+" G_GINT64_FORMAT " kB over %u cycles "
      "(bound %" G_GUINT64_FORMAT " kB)\n", (gint64) (rss1 - rss0), cycles,
      rss_bound_kb);

  if (!proc_status_under_memory_tool ())
    fail_unless (rss1 < rss0 + rss_bound_kb, "RSS grew by %" G_GUINT64_FORMAT
        " kB over %u cycles (%" G_GUINT64_FORMAT " B a cycle)", rss1 - rss0,
        cycles, (rss1 - rss0) * 1024 / cycles);
  if (gpu0 > 0)
    fail_unless (gpu1 < gpu0 + gpu_bound, "GPU memory grew by %"
        G_GUINT64_FORMAT " bytes over %u cycles", gpu1 - gpu0, cycles);

  bus_check (bus, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  gst_object_unref (p);
  checker_check_and_free (c, 3 * (warmup + cycles), "state cycles");
  g_free (desc);
  g_free (conv);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Pipelines in parallel, elements chained */

static const gchar *parallel_configs[] = {
  "radius=3", "kernel=box radius=2 border=mirror",
  "kernel=sharpen amount=2 border=wrap", "kernel=sobel",
  "kernel=laplacian radius=2 border=zero",
  "kernel=custom matrix=\"<<0,-1,0>,<-1,5,-1>,<0,-1,0>>\"",
  "radius=0 sigma=1.5 sigma-y=0.7 planes=all",
};

typedef struct
{
  guint index, frames, every;
  const gchar *format;
  gint w, h;
} ParallelJob;

static gpointer
parallel_thread (gpointer data)
{
  ParallelJob *job = data;
  GRand *rand = g_rand_new_with_seed (1000 + job->index);
  gchar *args = g_strdup_printf ("name=c0 %s",
      parallel_configs[job->index % G_N_ELEMENTS (parallel_configs)]);
  gchar *desc = conv_desc (args);
  GstVideoInfo info;
  GstBuffer *frames[3];
  Checker *c;
  Stream *s;
  guint i;

  frame_check_info_init (&info, job->format, job->w, job->h);
  for (i = 0; i < G_N_ELEMENTS (frames); i++)
    frames[i] = frame_check_buffer_random (&info, rand, i == 1);
  s = stream_new (desc, &info, FALSE);
  c = checker_attach (stream_get (s, "c0"), job->every);
  for (i = 0; i < job->frames; i++)
    stream_push (s, gst_buffer_copy (frames[i % G_N_ELEMENTS (frames)]), i);
  stream_finish (s, job->frames, NULL);
  checker_check_and_free (c, job->frames, desc);

  for (i = 0; i < G_N_ELEMENTS (frames); i++)
    gst_buffer_unref (frames[i]);
  g_free (desc);
  g_free (args);
  g_rand_free (rand);
  return NULL;
}

/* Many pipelines at once, each in its own thread, in different formats
 * and settings: each frame out once with its timestamps, equal to the
 * reference. */
GST_START_TEST (test_parallel_pipelines)
{
  const guint n = SCALED (8, 32);
  ParallelJob *jobs = g_new0 (ParallelJob, n);
  GThread **threads = g_new0 (GThread *, n);
  guint i;

  for (i = 0; i < n; i++) {
    jobs[i].index = i;
    jobs[i].frames = SCALED (60, 300);
    jobs[i].every = SCALED (1, 5);
    jobs[i].format = formats[(i * 5) % G_N_ELEMENTS (formats)];
    jobs[i].w = SCALED (64, 320) + i;
    jobs[i].h = SCALED (48, 240) - i;
    threads[i] = g_thread_new ("pipeline", parallel_thread, &jobs[i]);
  }
  for (i = 0; i < n; i++)
    g_thread_join (threads[i]);
  g_free (threads);
  g_free (jobs);
}

GST_END_TEST;

/* Whether cudaconvolve's pads take format in CUDA memory: not every
 * format can be (GStreamer 1.22's CUDA allocator lays out only some). */
static gboolean
takes_cuda_memory (const gchar * format)
{
  GstElement *e = gst_element_factory_make ("cudaconvolve", NULL);
  GstPad *pad = gst_element_get_static_pad (e, "sink");
  GstCaps *templ = gst_pad_get_pad_template_caps (pad);
  GstCaps *want = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      format, NULL);
  gboolean takes;

  gst_caps_set_features (want, 0,
      gst_caps_features_new ("memory:CUDAMemory", NULL));
  takes = gst_caps_can_intersect (templ, want);
  gst_caps_unref (want);
  gst_caps_unref (templ);
  gst_object_unref (pad);
  gst_object_unref (e);
  return takes;
}

/* Elements chained, each with other settings, each checked against the
 * reference on what the one before it gave; on the CUDA backend in CUDA
 * memory from the first element's output to the last's input, for the
 * formats that CUDA memory can hold. */
GST_START_TEST (test_chained_elements)
{
  static const gchar *ci_formats[] = { "NV12", "P010_10LE", "RGBA" };
  const guint n_elements = SCALED (4, 16), frames = SCALED (20, 60);
  const guint n_formats = full ? G_N_ELEMENTS (formats) :
      G_N_ELEMENTS (ci_formats);
  GRand *rand = g_rand_new_with_seed (3);
  guint f, i, k;

  for (f = 0; f < n_formats; f++) {
    const gchar *format = full ? formats[f] : ci_formats[f];
    const gboolean cuda_memory = g_str_equal (backend, "cuda") &&
        takes_cuda_memory (format);
    GString *chain = g_string_new (NULL);
    Checker **checkers = g_new0 (Checker *, n_elements);
    GstVideoInfo info;
    Stream *s;

    for (k = 0; k < n_elements; k++) {
      gchar *args = g_strdup_printf ("name=c%u %s", k,
          parallel_configs[(f + k) % G_N_ELEMENTS (parallel_configs)]);
      gchar *desc = conv_desc (args);

      if (k > 0)
        g_string_append (chain, cuda_memory ?
            " ! video/x-raw(memory:CUDAMemory) ! " : " ! ");
      g_string_append (chain, desc);
      g_free (desc);
      g_free (args);
    }
    /* an even height for three-plane 4:2:0 in CUDA memory, which
     * GStreamer 1.22 cannot hold at an odd one (the element refuses it) */
    frame_check_info_init (&info, format, SCALED (64, 640) + 1,
        SCALED (48, 360) - (cuda_memory && (g_str_equal (format, "I420") ||
                g_str_equal (format, "YV12") ||
                g_str_equal (format, "I420_10LE")) ? 0 : 1));
    s = stream_new (chain->str, &info, FALSE);
    for (k = 0; k < n_elements; k++) {
      gchar name[16];

      g_snprintf (name, sizeof (name), "c%u", k);
      checkers[k] = checker_attach (stream_get (s, name), SCALED (1, 3));
    }
    for (i = 0; i < frames; i++)
      stream_push (s, frame_check_buffer_random (&info, rand, i & 1), i);
    stream_finish (s, frames, NULL);
    for (k = 0; k < n_elements; k++)
      checker_check_and_free (checkers[k], frames, chain->str);
    g_free (checkers);
    g_string_free (chain, TRUE);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Odd layouts, seeks, timestamps */

/* buf (with a GstVideoMeta) with its planes moved shift bytes further
 * (rounded up to even for 16-bit samples, which a meta must align),
 * behind a memory of those random bytes of its own: another layout in the
 * same caps, its planes at other offsets and in the buffer's second
 * memory. */
static GstBuffer *
buffer_shift_planes (GstBuffer * buf, gsize shift, GRand * rand)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  GstBuffer *out;
  gsize offset[GST_VIDEO_MAX_PLANES];
  guint p;

  fail_unless (meta != NULL);
  if (GST_VIDEO_FORMAT_INFO_DEPTH (gst_video_format_get_info (meta->format),
          0) > 8)
    shift = GST_ROUND_UP_2 (shift);
  out = gst_buffer_new_allocate (NULL, shift, NULL);
  frame_check_fill_random (out, rand);
  gst_buffer_append_memory (out, gst_buffer_get_all_memory (buf));
  for (p = 0; p < meta->n_planes; p++)
    offset[p] = meta->offset[p] + shift;
  gst_buffer_add_video_meta_full (out, GST_VIDEO_FRAME_FLAG_NONE,
      meta->format, meta->width, meta->height, meta->n_planes, offset,
      meta->stride);
  gst_buffer_unref (buf);
  return out;
}

/* In every format, the layout changes from buffer to buffer within the
 * same caps: the default one, padded rows with odd plane offsets, and the
 * same moved by odd amounts into a second memory. */
GST_START_TEST (test_odd_strides)
{
  static const gint sizes[][2] = { {13, 9}, {385, 289}, {1921, 1081} };
  const guint n_sizes = SCALED (2, 3);
  GRand *rand = g_rand_new_with_seed (4);
  GstVideoInfo info;
  Checker *c;
  Stream *s;
  guint64 n = 0;
  guint f, z;
  gchar *desc = conv_desc ("name=c0 radius=3 border=mirror");

  s = stream_new (desc, NULL, FALSE);
  c = checker_attach (stream_get (s, "c0"), 1);
  for (z = 0; z < n_sizes; z++) {
    for (f = 0; f < G_N_ELEMENTS (formats); f++) {
      frame_check_info_init (&info, formats[f], sizes[z][0], sizes[z][1]);
      gst_app_src_set_caps (GST_APP_SRC (s->src),
          gst_video_info_to_caps (&info));
      stream_push (s, frame_check_buffer_random (&info, rand, FALSE), n++);
      stream_push (s, frame_check_buffer_random (&info, rand, TRUE), n++);
      stream_push (s, buffer_shift_planes (frame_check_buffer_random (&info,
                  rand, TRUE), 1, rand), n++);
      stream_push (s, buffer_shift_planes (frame_check_buffer_random (&info,
                  rand, TRUE), 4093, rand), n++);
    }
  }
  stream_finish (s, n, NULL);
  checker_check_and_free (c, n, "odd strides");
  g_free (desc);
  g_rand_free (rand);
}

GST_END_TEST;

/* Flushing seeks while playing, from videotestsrc: after each the stream
 * goes on from the position asked for, frames checked; a seek with a stop
 * ends in EOS; no error. */
GST_START_TEST (test_flushing_seeks)
{
  const guint n_seeks = SCALED (20, 200);
  const GstClockTime frame = 40 * GST_MSECOND;  /* 25/1: exact */
  gchar *conv = conv_desc ("name=c0 radius=3 border=wrap");
  gchar *desc = g_strdup_printf ("videotestsrc pattern=snow ! "
      "video/x-raw,format=NV12,width=160,height=120,framerate=25/1 ! %s ! "
      "appsink name=sink sync=false max-buffers=2", conv);
  GRand *rand = g_rand_new_with_seed (5);
  GError *err = NULL;
  GstElement *p, *sink;
  GstSample *sample;
  GstMessage *msg;
  GstBus *bus;
  Checker *c;
  guint i, j;

  p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  c = checker_attach (bin_get (p, "c0"), 1);
  bus = gst_element_get_bus (p);
  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL,
          WAIT_S * GST_SECOND), GST_STATE_CHANGE_SUCCESS);

  for (i = 0; i < n_seeks; i++) {
    GstClockTime target = g_rand_int_range (rand, 0, 500) * frame;

    fail_unless (gst_element_seek_simple (p, GST_FORMAT_TIME,
            GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, target));
    for (j = 0; j < 3; j++) {
      sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
          WAIT_S * GST_SECOND);
      fail_unless (sample != NULL, "nothing after seek %u", i);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (gst_sample_get_buffer
              (sample)), target + j * frame);
      gst_sample_unref (sample);
    }
  }
  /* a seek with a stop: 5 frames, then EOS */
  fail_unless (gst_element_seek (p, 1.0, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, GST_SEEK_TYPE_SET,
          10 * frame, GST_SEEK_TYPE_SET, 15 * frame));
  for (j = 0; j < 5; j++) {
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        WAIT_S * GST_SECOND);
    fail_unless (sample != NULL);
    gst_sample_unref (sample);
  }
  msg = gst_bus_timed_pop_filtered (bus, WAIT_S * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "no EOS after a seek with a stop: %" GST_PTR_FORMAT, msg);
  gst_message_unref (msg);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)));

  bus_check (bus, NULL);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (p);
  /* buffers in flight at a flush go in and never out: no count */
  checker_check_and_free (c, G_MAXUINT64, "flushing seeks");
  g_rand_free (rand);
  g_free (desc);
  g_free (conv);
}

GST_END_TEST;

/* Buffers without timestamps, duration or offsets come out without them,
 * mixed with buffers that have them. */
GST_START_TEST (test_no_timestamps)
{
  const guint n = 12;
  GRand *rand = g_rand_new_with_seed (6);
  gchar *desc = conv_desc ("name=c0 kernel=sharpen radius=2");
  GstVideoInfo info;
  Checker *c;
  Stream *s;
  guint i;

  frame_check_info_init (&info, "Y42B", 40, 22);
  s = stream_new (desc, &info, TRUE);
  c = checker_attach (stream_get (s, "c0"), 1);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = frame_check_buffer_random (&info, rand, i % 3 == 0);
    GstSample *sample;
    GstBuffer *out;

    if (i % 4 == 3) {
      stream_push (s, buf, i);
    } else {
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->src),
              buf), GST_FLOW_OK);
    }
    sample = stream_pull (s);
    out = gst_sample_get_buffer (sample);
    if (i % 4 == 3) {
      fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), i);
      fail_unless (GST_BUFFER_PTS_IS_VALID (out));
    } else {
      fail_if (GST_BUFFER_PTS_IS_VALID (out));
      fail_if (GST_BUFFER_DTS_IS_VALID (out));
      fail_if (GST_BUFFER_DURATION_IS_VALID (out));
      fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out),
          GST_BUFFER_OFFSET_NONE);
    }
    gst_sample_unref (sample);
  }
  stream_finish (s, n, NULL);
  checker_check_and_free (c, n, "no timestamps");
  g_free (desc);
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Missing devices */

/* backend=cuda on a device that does not exist: the pipeline fails to
 * start, with an error from the element that says what to do and, where
 * CUDA can be asked at all, names the device; nothing crashes, and the
 * pipeline goes back to NULL. */
GST_START_TEST (test_missing_device_cuda)
{
  GError *err = NULL;
  gchar *debug = NULL;
  GstElement *p;
  GstMessage *msg;
  GstBus *bus;

  p = gst_parse_launch ("appsrc ! video/x-raw,format=I420,width=32,"
      "height=16,framerate=30/1 ! cudaconvolve name=c0 backend=cuda "
      "cuda-device-id=99 ! fakesink", &err);
  fail_unless (p != NULL && err == NULL);
  bus = gst_element_get_bus (p);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error message");
  fail_unless_equals_string (GST_MESSAGE_SRC_NAME (msg), "c0");
  gst_message_parse_error (msg, &err, &debug);
  GST_INFO ("%s", err->message);
  fail_unless (strstr (err->message, "backend=auto") &&
      strstr (err->message, "backend=cpu"), "%s", err->message);
  /* without a GPU (or without CUDA in the build) the message says that
   * instead: device 99 is not the problem there */
  if (device_count () > 0)
    fail_unless (strstr (err->message, "device 99") != NULL, "%s",
        err->message);
#ifndef HAVE_CUDA
  /* a build without the engine says why configure left it out */
  fail_unless (strstr (err->message, "no CUDA support: " CUCONV_NO_CUDA_WHY),
      "%s", err->message);
#endif
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (p);
}

GST_END_TEST;

static gint n_fallback_warnings;

static void
count_fallback_warnings (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  const gchar *text;

  if (level != GST_LEVEL_WARNING)
    return;
  text = gst_debug_message_get (message);
  if (text && strstr (text, "backend=auto"))
    g_atomic_int_inc (&n_fallback_warnings);
}

/* backend=auto on a device that does not exist: it starts on the CPU
 * (active-backend "cpu") with one warning, in the log and on the bus, and
 * filters frames exactly as the reference. */
GST_START_TEST (test_missing_device_auto)
{
  GRand *rand = g_rand_new_with_seed (7);
  GstVideoInfo info;
  GstElement *e;
  Checker *c;
  Stream *s;
  gchar *active = NULL;
  guint i;

  /* the element's category and its base class's, which picks backends */
  gst_debug_set_threshold_for_name ("cudaconvolve", GST_LEVEL_WARNING);
  gst_debug_set_threshold_for_name ("cudavideofilter", GST_LEVEL_WARNING);
  gst_debug_add_log_function (count_fallback_warnings, NULL, NULL);
  n_fallback_warnings = 0;

  frame_check_info_init (&info, "NV21", 30, 20);
  s = stream_new ("cudaconvolve name=c0 backend=auto cuda-device-id=99 "
      "radius=2", &info, FALSE);
  e = stream_get (s, "c0");
  c = checker_attach (e, 1);
  for (i = 0; i < 5; i++)
    stream_push (s, frame_check_buffer_random (&info, rand, i & 1), i);
  g_object_get (e, "active-backend", &active, NULL);
  fail_unless_equals_string (active, "cpu");
  /* one warning message on the bus, as in the log */
  fail_unless_equals_int (stream_finish (s, 5, "Filtering on the CPU"), 1);
  checker_check_and_free (c, 5, "backend=auto cuda-device-id=99");
  fail_unless_equals_int (g_atomic_int_get (&n_fallback_warnings), 1);

  gst_debug_remove_log_function (count_fallback_warnings);
  g_free (active);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
robustness_suite (void)
{
  Suite *s = suite_create ("cudaconvolve-robustness");
  TCase *tc = tcase_create ("robustness");

  /* CK_DEFAULT_TIMEOUT's 4 s is for unit tests; these run for seconds
   * (minutes in full) */
  tcase_set_timeout (tc, full ? 1800 : 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_property_storm);
  tcase_add_test (tc, test_renegotiation);
  tcase_add_test (tc, test_state_cycles_memory);
  tcase_add_test (tc, test_parallel_pipelines);
  tcase_add_test (tc, test_chained_elements);
  tcase_add_test (tc, test_odd_strides);
  tcase_add_test (tc, test_flushing_seeks);
  tcase_add_test (tc, test_no_timestamps);
  tcase_add_test (tc, test_missing_device_cuda);
  tcase_add_test (tc, test_missing_device_auto);
  return s;
}

int
main (int argc, char **argv)
{
  const gchar *env;

  gst_check_init (&argc, &argv);
  full = g_strcmp0 (g_getenv ("CUCONV_ROBUSTNESS_FULL"), "1") == 0;
  env = g_getenv ("CUCONV_ROBUSTNESS_BACKEND");
  if (env && *env)
    backend = env;
  if (!g_str_equal (backend, "cpu") && !g_str_equal (backend, "cuda")) {
    g_printerr ("CUCONV_ROBUSTNESS_BACKEND=%s: cpu or cuda\n", backend);
    return 1;
  }
  if (g_str_equal (backend, "cuda")) {
    if (device_count () == 0) {
      g_print ("backend=cuda without a usable CUDA device: skipped\n");
      return 77;
    }
    /* CUDA, initialised by the device count, does not survive fork (). */
    g_setenv ("CK_FORK", "no", TRUE);
  }
  g_print ("backend=%s, %s run\n", backend, full ? "full" : "CI");
  return gst_check_run_suite (robustness_suite (), "robustness", __FILE__);
}
