/* gst-cudaconvolve: cudaconvolve among GStreamer's CUDA elements (nvcodec).
 *
 * - cudaupload ! cudaconvolve ! cudadownload and the system-memory path
 *   (appsrc ! cudaconvolve ! appsink) are both within +-1 of the CPU
 *   reference, for every format cudaupload takes, every border, several
 *   kernels and radii (how many frames the two give bit for bit is
 *   printed: whole planes in CUDA memory may take the streaming kernel,
 *   whose taps are quantized, where the strips' bands take the tiles;
 *   docs/semantics.md, section 7); the element's pads carry
 *   memory:CUDAMemory and its output buffers are CUDA memory of the same
 *   GstCudaContext as its input (one context, shared).
 * - Mixed pipelines (system memory in, CUDA memory out, and the reverse)
 *   and a change between CUDA and system memory mid-stream.
 * - A real decode: tests/data/clip-322x182.h264 through nvh264dec is first
 *   checked against the CPU decoder's checksums
 *   (tests/data/clip-322x182.sha256),
 *   then nvh264dec ! cudaconvolve ! cudadownload is checked against the
 *   CPU reference on the decoded frames.
 * - cuda-device-id: an unusable device is refused with a clear error.
 *
 * Needs the system's plugins (appsrc, appsink, nvcodec); exits 77 (skip)
 * without a usable CUDA device or without nvcodec.  `--quick` runs one
 * format, for compute-sanitizer.  CUCONV_TEST_DATA names tests/data.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>

#include "cuconv.h"
#include "cuconv-cuda.h"
#include "frame-check.h"

#define EXIT_SKIP 77
#define SEED 20241122
#define CLIP "clip-322x182"
/* cudaupload passes system memory through when downstream takes it, as
 * cudaconvolve does: a capsfilter makes it upload. */
#define CUDA_CAPS "video/x-raw(memory:CUDAMemory)"
/* Odd widths, but even heights: GStreamer 1.22's GstCudaMemory moves only
 * height * 3 / 2 pitched rows between host and device for a 4:2:0 frame,
 * so with an odd height the last chroma rows never reach the device after
 * cudaupload (nvcodec's own cudaupload ! cudadownload round trip does not
 * show it: it never leaves host memory).  Odd heights are covered by the
 * system-memory tests. */
#define W 67
#define H 44

static gboolean quick;

static const gchar *all_formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "I420_12LE", "P010_10LE", "P016_LE", "Y444_16LE", "RGBA",
  "BGRA", "RGBx", "BGRx", "AYUV"
};

/* A pipeline "appsrc name=src ! ... ! appsink name=sink", and what the
 * probes on cudaconvolve (name=conv) saw last. */
typedef struct
{
  GstElement *pipeline, *src, *conv, *sink;
  gpointer in_context, out_context;     /* GstCudaContext of the memory */
  gboolean in_cuda, out_cuda;   /* last buffers were CUDA memory */
} Pipe;

/* Pipelines still running: a failed check leaves its test at once, and
 * the teardown stops them, so the process can exit. */
static GList *running;

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, Pipe * p)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  gboolean cuda = gst_is_cuda_memory (mem);
  gpointer ctx = cuda ? GST_CUDA_MEMORY_CAST (mem)->context : NULL;

  if (GST_PAD_DIRECTION (pad) == GST_PAD_SINK) {
    p->in_cuda = cuda;
    p->in_context = ctx;
  } else {
    p->out_cuda = cuda;
    p->out_context = ctx;
  }
  return GST_PAD_PROBE_OK;
}

static void
probe_pad (Pipe * p, const gchar * name)
{
  GstPad *pad = gst_element_get_static_pad (p->conv, name);

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      (GstPadProbeCallback) on_buffer, p, NULL);
  gst_object_unref (pad);
}

/* Fails the test with the bus's error, if there is one. */
static void
check_no_error (Pipe * p, const gchar * what)
{
  GstBus *bus = gst_element_get_bus (p->pipeline);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *dbg = NULL;

  gst_object_unref (bus);
  if (!msg)
    return;
  gst_message_parse_error (msg, &err, &dbg);
  fail ("%s: error from %s: %s (%s)", what, GST_OBJECT_NAME (msg->src),
      err->message, GST_STR_NULL (dbg));
}

static void
pipe_start (Pipe * p, const gchar * desc, const GstVideoInfo * info)
{
  GError *err = NULL;

  memset (p, 0, sizeof (*p));
  p->pipeline = gst_parse_launch (desc, &err);
  fail_unless (p->pipeline != NULL, "%s: %s", desc,
      err ? err->message : "?");
  p->src = gst_bin_get_by_name (GST_BIN (p->pipeline), "src");
  p->conv = gst_bin_get_by_name (GST_BIN (p->pipeline), "conv");
  p->sink = gst_bin_get_by_name (GST_BIN (p->pipeline), "sink");
  if (p->src && info) {
    GstCaps *caps = gst_video_info_to_caps (info);
    g_object_set (p->src, "caps", caps, "format", GST_FORMAT_TIME, NULL);
    gst_caps_unref (caps);
  }
  g_object_set (p->sink, "sync", FALSE, NULL);
  if (p->conv) {
    probe_pad (p, "sink");
    probe_pad (p, "src");
  }
  running = g_list_prepend (running, p->pipeline);
  fail_unless (gst_element_set_state (p->pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "%s: cannot start", desc);
}

static void
pipe_stop (Pipe * p)
{
  running = g_list_remove (running, p->pipeline);
  gst_element_set_state (p->pipeline, GST_STATE_NULL);
  gst_clear_object (&p->src);
  gst_clear_object (&p->conv);
  gst_clear_object (&p->sink);
  gst_object_unref (p->pipeline);
}

/* The next output buffer (a new reference), failing after 30 s. */
static GstBuffer *
pipe_pull (Pipe * p, const gchar * what)
{
  GstSample *sample = NULL;
  GstBuffer *buf;

  g_signal_emit_by_name (p->sink, "try-pull-sample", 30 * GST_SECOND,
      &sample);
  check_no_error (p, what);
  fail_unless (sample != NULL, "%s: no output", what);
  buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  return buf;
}

static GstBuffer *
pipe_push_pull (Pipe * p, GstBuffer * in, const gchar * what)
{
  GstFlowReturn ret = GST_FLOW_ERROR;

  g_signal_emit_by_name (p->src, "push-buffer", in, &ret);
  fail_unless_equals_int (ret, GST_FLOW_OK);
  return pipe_pull (p, what);
}

/* Whether pad's current caps are in CUDA memory. */
static gboolean
pad_is_cuda (GstElement * e, const gchar * name)
{
  GstPad *pad = gst_element_get_static_pad (e, name);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  gboolean cuda = caps && gst_caps_features_contains (gst_caps_get_features
      (caps, 0), GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);

  gst_clear_caps (&caps);
  gst_object_unref (pad);
  return cuda;
}

/* The first plane and component where a and b (system memory, info's
 * format, any strides) differ, in where; FALSE if they are equal. */
static gboolean
frames_differ (const GstVideoInfo * info, GstBuffer * a, GstBuffer * b,
    gchar * where, gsize where_len)
{
  GstVideoFrame fa, fb;
  guint p, c, y;
  gboolean differ = FALSE;

  fail_unless (gst_video_frame_map (&fa, (GstVideoInfo *) info, a,
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, (GstVideoInfo *) info, b,
          GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fa) && !differ; p++) {
    /* the first component of plane p gives its row length */
    for (c = 0; GST_VIDEO_FORMAT_INFO_PLANE (info->finfo, c) != p; c++);
    for (y = 0; y < (guint) GST_VIDEO_FRAME_COMP_HEIGHT (&fa, c); y++) {
      gsize n = (gsize) GST_VIDEO_FRAME_COMP_WIDTH (&fa, c) *
          GST_VIDEO_FRAME_COMP_PSTRIDE (&fa, c);
      const guint8 *ra = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fa,
          p) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, p);
      const guint8 *rb = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fb,
          p) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, p);

      if (memcmp (ra, rb, n) != 0) {
        g_snprintf (where, where_len, "plane %u row %u", p, y);
        differ = TRUE;
        break;
      }
    }
  }
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return differ;
}

/* Whether cudaupload takes format (nvcodec's list differs by version). */
static gboolean
cudaupload_takes (const gchar * format)
{
  GstElementFactory *f = gst_element_factory_find ("cudaupload");
  const GList *l;
  gboolean ok = FALSE;
  gchar *s = g_strdup_printf ("video/x-raw(memory:CUDAMemory), format=%s",
      format);
  GstCaps *want = gst_caps_from_string (s);

  for (l = gst_element_factory_get_static_pad_templates (f); l && !ok;
      l = l->next) {
    GstStaticPadTemplate *t = l->data;
    GstCaps *caps;

    if (t->direction != GST_PAD_SRC)
      continue;
    caps = gst_static_pad_template_get_caps (t);
    ok = gst_caps_can_intersect (caps, want);
    gst_caps_unref (caps);
  }
  gst_caps_unref (want);
  g_free (s);
  gst_object_unref (f);
  return ok;
}

static void
check_reference (const GstVideoInfo * info, GstElement * conv,
    GstBuffer * in, GstBuffer * out, const gchar * what)
{
  CuconvSettings s;
  gchar first[160] = "";
  guint64 bad;

  frame_check_element_settings (conv, &s);
  bad = frame_check_compare_planes (info, in, out, &s,
      frame_check_element_planes (conv), 1, first, sizeof (first), NULL,
      NULL);
  fail_unless (bad == 0, "%s: %" G_GUINT64_FORMAT " samples differ from the "
      "reference by more than 1, the first at %s", what, bad, first);
}

static void
set_both (Pipe * a, Pipe * b, const gchar * prop, const gchar * value)
{
  gst_util_set_object_arg (G_OBJECT (a->conv), prop, value);
  gst_util_set_object_arg (G_OBJECT (b->conv), prop, value);
}

static gboolean
has_kernel (GstElement * conv, const gchar * nick)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (conv),
      "kernel");

  return g_enum_get_value_by_nick (G_PARAM_SPEC_ENUM (pspec)->enum_class,
      nick) != NULL;
}

/* Every format cudaupload takes: CUDA memory against system memory. */
GST_START_TEST (test_cuda_memory_matches_system)
{
  static const gchar *borders[] = { "clamp", "mirror", "wrap", "zero" };
  static const gchar *radii[] = { "1", "4", "9" };
  static const gchar *kernels[] = { "gaussian", "box", "sharpen", "sobel",
    "laplacian"
  };
  GRand *rand = g_rand_new_with_seed (SEED);
  guint f, b, r, k, n_formats = quick ? 1 : G_N_ELEMENTS (all_formats);
  guint tested = 0, differ = 0;

  for (f = 0; f < n_formats; f++) {
    const gchar *format = quick ? "I420" : all_formats[f];
    GstVideoInfo info;
    Pipe cuda, sys;

    if (!cudaupload_takes (format)) {
      g_print ("  %s: cudaupload does not take it, skipped\n", format);
      continue;
    }
    frame_check_info_init (&info, format, W, H);
    pipe_start (&cuda, "appsrc name=src ! cudaupload ! " CUDA_CAPS " ! "
        "cudaconvolve name=conv ! cudadownload ! appsink name=sink", &info);
    pipe_start (&sys, "appsrc name=src ! cudaconvolve name=conv "
        "backend=cuda ! appsink name=sink", &info);

    for (k = 0; k < G_N_ELEMENTS (kernels); k++) {
      for (b = 0; b < G_N_ELEMENTS (borders); b++) {
        for (r = 0; r < G_N_ELEMENTS (radii); r++) {
          GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
          GstBuffer *out_cuda, *out_sys;
          gchar what[160], where[64];

          if (!has_kernel (cuda.conv, kernels[k]))
            continue;
          set_both (&cuda, &sys, "kernel", kernels[k]);
          set_both (&cuda, &sys, "border", borders[b]);
          set_both (&cuda, &sys, "radius", radii[r]);
          g_snprintf (what, sizeof (what), "%s %dx%d %s border=%s "
              "radius=%s", format, W, H, kernels[k], borders[b], radii[r]);

          if (b == 0 && r == 0)
            g_print ("  %s\n", what);
          out_cuda = pipe_push_pull (&cuda, in, what);
          out_sys = pipe_push_pull (&sys, in, what);
          fail_unless (pad_is_cuda (cuda.conv, "sink") &&
              pad_is_cuda (cuda.conv, "src"), "%s: not CUDA memory caps",
              what);
          fail_unless (cuda.in_cuda && cuda.out_cuda, "%s: the buffers are "
              "not CUDA memory", what);
          fail_unless (cuda.in_context == cuda.out_context, "%s: input and "
              "output in different CUDA contexts", what);
          if (frames_differ (&info, out_cuda, out_sys, where,
                  sizeof (where)))
            differ++;
          check_reference (&info, sys.conv, in, out_sys, what);
          check_reference (&info, cuda.conv, in, out_cuda, what);
          gst_buffer_unref (out_cuda);
          gst_buffer_unref (out_sys);
          gst_buffer_unref (in);
          tested++;
        }
      }
    }
    pipe_stop (&cuda);
    pipe_stop (&sys);
  }
  g_print ("  %u frames through CUDA memory, within +-1 of the reference "
      "as through system memory; %u of them not bit-identical to it\n",
      tested, differ);
  fail_unless (tested > 0);
  g_rand_free (rand);
}

GST_END_TEST;

/* System memory in and CUDA memory out, and the reverse; identity too. */
GST_START_TEST (test_mixed_memory)
{
  static const struct
  {
    const gchar *desc;
    gboolean in_cuda, out_cuda;
  } mixes[] = {
    {"appsrc name=src ! cudaconvolve name=conv ! " CUDA_CAPS " ! "
          "cudadownload ! appsink name=sink",
        FALSE, TRUE},
    {"appsrc name=src ! cudaupload ! " CUDA_CAPS " ! cudaconvolve name=conv "
          "! video/x-raw ! appsink name=sink", TRUE, FALSE},
  };
  static const gchar *formats[] = { "I420", "NV12" };
  GRand *rand = g_rand_new_with_seed (SEED + 1);
  guint m, f, i;

  for (m = 0; m < G_N_ELEMENTS (mixes); m++) {
    for (f = 0; f < G_N_ELEMENTS (formats); f++) {
      GstVideoInfo info;
      Pipe p;

      frame_check_info_init (&info, formats[f], 101, 58);
      pipe_start (&p, mixes[m].desc, &info);
      for (i = 0; i < 3; i++) {
        GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
        GstBuffer *out;
        gchar what[256], where[64];

        /* the last frame is the identity: a copy between memories */
        g_object_set (p.conv, "radius", i == 2 ? 0 : 3 + i, "sigma", 0.0,
            NULL);
        g_snprintf (what, sizeof (what), "%s %s radius %d", mixes[m].desc,
            formats[f], i == 2 ? 0 : 3 + i);
        out = pipe_push_pull (&p, in, what);
        fail_unless_equals_int (pad_is_cuda (p.conv, "sink"),
            mixes[m].in_cuda);
        fail_unless_equals_int (pad_is_cuda (p.conv, "src"),
            mixes[m].out_cuda);
        if (i == 2)
          fail_if (frames_differ (&info, in, out, where, sizeof (where)),
              "%s: not a copy, differs at %s", what, where);
        else
          check_reference (&info, p.conv, in, out, what);
        gst_buffer_unref (in);
        gst_buffer_unref (out);
      }
      pipe_stop (&p);
    }
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* Downstream switches from CUDA memory to system memory and back while
 * playing: cudaconvolve renegotiates its output each time. */
GST_START_TEST (test_renegotiate_memory)
{
  static const gchar *steps[] = { "video/x-raw(memory:CUDAMemory)",
    "video/x-raw", "video/x-raw(memory:CUDAMemory)"
  };
  GRand *rand = g_rand_new_with_seed (SEED + 2);
  GstElement *cf;
  GstVideoInfo info;
  Pipe p;
  guint s, i;

  frame_check_info_init (&info, "I420", 93, 62);
  pipe_start (&p, "appsrc name=src ! cudaupload ! " CUDA_CAPS " ! "
      "cudaconvolve name=conv radius=3 ! capsfilter name=cf ! cudadownload ! "
      "appsink name=sink", &info);
  cf = gst_bin_get_by_name (GST_BIN (p.pipeline), "cf");
  for (s = 0; s < G_N_ELEMENTS (steps); s++) {
    GstCaps *caps = gst_caps_from_string (steps[s]);

    g_object_set (cf, "caps", caps, NULL);
    gst_caps_unref (caps);
    for (i = 0; i < 2; i++) {
      GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
      GstBuffer *out = pipe_push_pull (&p, in, steps[s]);

      check_reference (&info, p.conv, in, out, steps[s]);
      fail_unless_equals_int (pad_is_cuda (p.conv, "src"), s != 1);
      fail_unless_equals_int (p.out_cuda, s != 1);
      gst_buffer_unref (in);
      gst_buffer_unref (out);
    }
  }
  gst_object_unref (cf);
  pipe_stop (&p);
  g_rand_free (rand);
}

GST_END_TEST;

static gchar *
data_path (const gchar * name)
{
  const gchar *dir = g_getenv ("CUCONV_TEST_DATA");

  return g_build_filename (dir ? dir : "tests/data", name, NULL);
}

/* SHA-256 of a frame's samples, component by component, row by row (the
 * checksums in tests/data: I420 order Y, U, V whatever the layout). */
static gchar *
frame_sha256 (const GstVideoInfo * info, GstBuffer * buf)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  GstVideoFrame f;
  gchar *hex;
  guint c;
  gint x, y;

  fail_unless (gst_video_frame_map (&f, (GstVideoInfo *) info, buf,
          GST_MAP_READ));
  for (c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS (&f); c++) {
    for (y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&f, c); y++) {
      const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_COMP_DATA (&f, c)
          + (gsize) y * GST_VIDEO_FRAME_COMP_STRIDE (&f, c);

      for (x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH (&f, c); x++)
        g_checksum_update (sum, row + x * GST_VIDEO_FRAME_COMP_PSTRIDE (&f,
                c), 1);
    }
  }
  gst_video_frame_unmap (&f);
  hex = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return hex;
}

/* The clip's access units (byte-stream, each led by an access unit
 * delimiter, as x264enc writes them), so that no parser is needed. */
static GPtrArray *
clip_access_units (void)
{
  gchar *path = data_path (CLIP ".h264");
  GPtrArray *aus = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  gchar *data = NULL;
  gsize len = 0, i, start = 0;

  fail_unless (g_file_get_contents (path, &data, &len, NULL),
      "cannot read %s (set CUCONV_TEST_DATA)", path);
  for (i = 1; i + 4 <= len; i++) {
    /* 00 00 00 01 09: a delimiter, the start of the next access unit */
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 0 &&
        data[i + 3] == 1 && (data[i + 4] & 0x1f) == 9) {
      g_ptr_array_add (aus, gst_buffer_new_memdup (data + start, i - start));
      start = i;
    }
  }
  g_ptr_array_add (aus, gst_buffer_new_memdup (data + start, len - start));
  g_free (data);
  g_free (path);
  return aus;
}

/* Every frame nvh264dec ! chain gives for the clip; info gets the caps. */
static GPtrArray *
decode_clip (const gchar * chain, GstVideoInfo * info, Pipe * p)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps="
      "\"video/x-h264,stream-format=byte-stream,alignment=au,"
      "profile=main,parsed=true,width=322,height=182,framerate=30/1\" ! "
      "nvh264dec ! %s ! appsink name=sink", chain);
  GPtrArray *aus = clip_access_units ();
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstFlowReturn ret;
  GstSample *sample;
  guint i;

  pipe_start (p, desc, NULL);
  for (i = 0; i < aus->len; i++) {
    GstBuffer *au = g_ptr_array_index (aus, i);

    GST_BUFFER_PTS (au) = GST_BUFFER_DTS (au) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (au) = GST_SECOND / 30;
    g_signal_emit_by_name (p->src, "push-buffer", au, &ret);
    fail_unless_equals_int (ret, GST_FLOW_OK);
  }
  g_signal_emit_by_name (p->src, "end-of-stream", &ret);
  for (;;) {
    sample = NULL;
    g_signal_emit_by_name (p->sink, "try-pull-sample", 30 * GST_SECOND,
        &sample);
    check_no_error (p, desc);
    if (!sample)
      break;
    if (frames->len == 0)
      fail_unless (gst_video_info_from_caps (info,
              gst_sample_get_caps (sample)));
    g_ptr_array_add (frames, gst_buffer_ref (gst_sample_get_buffer
            (sample)));
    gst_sample_unref (sample);
  }
  fail_unless (frames->len > 0, "%s: no frames", desc);
  g_ptr_array_unref (aus);
  g_free (desc);
  return frames;
}

GST_START_TEST (test_nvh264dec_pipeline)
{
  gchar *sums_path = data_path (CLIP ".sha256"), *text = NULL;
  gchar **lines;
  GPtrArray *sums = g_ptr_array_new ();
  GPtrArray *decoded, *filtered;
  GstVideoInfo info, finfo;
  Pipe dec, conv;
  guint i;

  fail_unless (g_file_get_contents (sums_path, &text, NULL, NULL),
      "cannot read %s (set CUCONV_TEST_DATA)", sums_path);
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i]; i++)
    if (lines[i][0] && lines[i][0] != '#')
      g_ptr_array_add (sums, lines[i]);

  /* the GPU decoder gives the CPU decoder's frames */
  decoded = decode_clip ("cudadownload", &info, &dec);
  fail_unless_equals_int (decoded->len, sums->len);
  for (i = 0; i < decoded->len; i++) {
    gchar *sha = frame_sha256 (&info, g_ptr_array_index (decoded, i));

    fail_unless_equals_string (sha, g_ptr_array_index (sums, i));
    g_free (sha);
  }
  pipe_stop (&dec);

  /* nvh264dec's CUDA memory filtered in place, against the reference */
  filtered = decode_clip ("cudaconvolve name=conv radius=4 border=mirror ! "
      "cudadownload", &finfo, &conv);
  fail_unless (pad_is_cuda (conv.conv, "sink") && conv.in_cuda,
      "nvh264dec ! cudaconvolve did not negotiate CUDA memory");
  fail_unless (conv.in_context == conv.out_context);
  fail_unless (gst_video_info_is_equal (&info, &finfo));
  fail_unless_equals_int (filtered->len, decoded->len);
  for (i = 0; i < decoded->len; i++) {
    gchar what[64];

    g_snprintf (what, sizeof (what), "clip frame %u (%s)", i,
        GST_VIDEO_INFO_NAME (&info));
    check_reference (&info, conv.conv, g_ptr_array_index (decoded, i),
        g_ptr_array_index (filtered, i), what);
  }
  g_print ("  %u %s frames decoded by nvh264dec match the CPU decoder; "
      "filtered in CUDA memory within +-1 of the reference\n", decoded->len,
      GST_VIDEO_INFO_NAME (&info));
  pipe_stop (&conv);

  g_ptr_array_unref (decoded);
  g_ptr_array_unref (filtered);
  g_ptr_array_unref (sums);
  g_strfreev (lines);
  g_free (text);
  g_free (sums_path);
}

GST_END_TEST;

/* A device that does not exist: backend=cuda fails with an error that
 * names it; two elements on device 0 explicitly share its context. */
GST_START_TEST (test_cuda_device_id)
{
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  GRand *rand = g_rand_new_with_seed (SEED + 3);
  GstVideoInfo info;
  GstBuffer *in, *out;
  Pipe p;

  pipeline = gst_parse_launch ("videotestsrc num-buffers=1 ! "
      "cudaconvolve backend=cuda cuda-device-id=99 ! fakesink", &err);
  fail_unless (pipeline != NULL);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
      "cuda-device-id=99 was not refused");
  gst_message_parse_error (msg, &err, NULL);
  g_print ("  cuda-device-id=99: %s\n", err->message);
  fail_unless (strstr (err->message, "99") != NULL,
      "the error does not name the device: %s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  frame_check_info_init (&info, "NV12", 64, 36);
  pipe_start (&p, "appsrc name=src ! cudaupload ! " CUDA_CAPS " ! "
      "cudaconvolve cuda-device-id=0 radius=2 ! cudaconvolve name=conv "
      "cuda-device-id=0 radius=1 ! cudadownload ! appsink name=sink", &info);
  in = frame_check_buffer_random (&info, rand, FALSE);
  out = pipe_push_pull (&p, in, "two elements on device 0");
  fail_unless (p.in_cuda && p.out_cuda && p.in_context == p.out_context);
  gst_buffer_unref (in);
  gst_buffer_unref (out);
  pipe_stop (&p);
  g_rand_free (rand);
}

GST_END_TEST;

static void
stop_running (void)
{
  GList *l;

  for (l = running; l; l = l->next)
    gst_element_set_state (GST_ELEMENT (l->data), GST_STATE_NULL);
  g_clear_list (&running, NULL);
}

/* The device of the CUDA context e answers a context query with. */
static gint
context_device (GstElement * e)
{
  GstQuery *q = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstContext *ctx = NULL;
  GstCudaContext *cuda = NULL;
  guint dev = G_MAXUINT;

  if (gst_element_query (e, q)) {
    gst_query_parse_context (q, &ctx);
    if (ctx && gst_structure_get (gst_context_get_structure (ctx),
            GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &cuda, NULL)) {
      g_object_get (cuda, "cuda-device-id", &dev, NULL);
      gst_object_unref (cuda);
    }
  }
  gst_query_unref (q);
  return (gint) dev;
}

/* Two elements on two GPUs in one pipeline: each uses its own device, and
 * the frame that crosses from one to the other is filtered twice, as two
 * elements on the CPU filter it. */
GST_START_TEST (test_two_devices)
{
  GRand *rand = g_rand_new_with_seed (SEED + 4);
  GstVideoInfo info;
  GstElement *a;
  GstBuffer *in, *out_gpu, *out_cpu;
  Pipe gpu, cpu;
  gchar first[160] = "";
  CuconvSettings s;
  guint64 bad;

  if (cuconv_device_count () < 2) {
    g_print ("  one CUDA device: two-device test not run\n");
    g_rand_free (rand);
    return;
  }
  frame_check_info_init (&info, "NV12", 128, 72);
  pipe_start (&gpu, "appsrc name=src ! cudaconvolve name=a cuda-device-id=0 "
      "radius=2 ! cudaconvolve name=conv cuda-device-id=1 kernel=sobel ! "
      "appsink name=sink", &info);
  pipe_start (&cpu, "appsrc name=src ! cudaconvolve backend=cpu radius=2 ! "
      "cudaconvolve name=conv backend=cpu kernel=sobel ! appsink name=sink",
      &info);
  in = frame_check_buffer_random (&info, rand, FALSE);
  out_gpu = pipe_push_pull (&gpu, in, "two devices");
  out_cpu = pipe_push_pull (&cpu, in, "two elements on the CPU");
  a = gst_bin_get_by_name (GST_BIN (gpu.pipeline), "a");
  fail_unless_equals_int (context_device (a), 0);
  fail_unless_equals_int (context_device (gpu.conv), 1);
  gst_object_unref (a);
  /* the second filter on the GPU against the reference on the CPU's
   * first output would need that output: the chain is compared with
   * the CPU chain instead, to 2 (1 each) */
  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_CUSTOM; /* identity: compare the frames as they are */
  bad = frame_check_compare_planes (&info, out_cpu, out_gpu, &s,
      CUCONV_PLANES_ALL, 2, first, sizeof (first), NULL, NULL);
  fail_unless (bad == 0, "two devices: %" G_GUINT64_FORMAT " samples differ "
      "from the CPU chain by more than 2, the first at %s", bad, first);
  g_print ("  cudaconvolve on device 0 ! cudaconvolve on device 1: each on "
      "its own device, output within 2 of the CPU chain\n");
  gst_buffer_unref (in);
  gst_buffer_unref (out_gpu);
  gst_buffer_unref (out_cpu);
  pipe_stop (&gpu);
  pipe_stop (&cpu);
  g_rand_free (rand);
}

GST_END_TEST;

static const gchar *video_tags[] = { GST_META_TAG_VIDEO_STR, NULL };
static const gchar *foo_tags[] = { "foo", NULL };

/* Metas added to the buffers entering cudaconvolve (cudaupload does not
 * copy ROI metas), and what came out of it. */
typedef struct
{
  FrameCheckBox roi;
  gboolean roi_out, params_out, video_out, foo_out;
} MetaProbe;

static GstPadProbeReturn
add_metas (GstPad * pad, GstPadProbeInfo * info, MetaProbe * mp)
{
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));
  GstVideoRegionOfInterestMeta *roi;

  roi = gst_buffer_add_video_region_of_interest_meta (buf, "face", mp->roi.x,
      mp->roi.y, mp->roi.w, mp->roi.h);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "score", G_TYPE_INT, 93, NULL));
  gst_buffer_add_meta (buf, frame_check_meta_info ("TestVideoMeta", video_tags),
      NULL);
  gst_buffer_add_meta (buf, frame_check_meta_info ("TestFooMeta", foo_tags), NULL);
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
read_metas (GstPad * pad, GstPadProbeInfo * info, MetaProbe * mp)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_get_video_region_of_interest_meta (buf);
  GstStructure *params = roi ?
      gst_video_region_of_interest_meta_get_param (roi, "detection") : NULL;
  gint score = 0;

  mp->roi_out = roi != NULL && roi->x == (guint) mp->roi.x &&
      roi->w == (guint) mp->roi.w;
  mp->params_out = params && gst_structure_get_int (params, "score", &score)
      && score == 93;
  mp->video_out = gst_buffer_get_meta (buf,
      frame_check_meta_info ("TestVideoMeta", video_tags)->api) != NULL;
  mp->foo_out = gst_buffer_get_meta (buf,
      frame_check_meta_info ("TestFooMeta", foo_tags)->api) != NULL;
  return GST_PAD_PROBE_OK;
}

/* Regions in CUDA memory: an ROI meta on frames cudaupload put on the
 * GPU, region=roi and outside-roi with fixed rectangles too; the pixels
 * the regions leave are the input's exactly, the others within 1 of the
 * reference.  The metas come out of the element in CUDA memory: the ROI
 * meta with its params, a video-tagged meta, not a foo-tagged one. */
GST_START_TEST (test_regions_cuda_memory)
{
  static const gchar *formats[] = { "I420", "NV12", "P010_10LE", "Y444",
    "RGBA"
  };
  static const gchar *configs[] = {
    "kernel=gaussian border=mirror radius=6",
    "kernel=box border=zero radius=3",
    "kernel=sobel border=wrap radius=1",
  };
  const FrameCheckBox boxes[] = { {21, 9, 17, 13}, {0, 30, 9, 14}, {50, 2, 8, 8} };
  GRand *rand = g_rand_new_with_seed (SEED + 10);
  MetaProbe mp = { {21, 9, 17, 13} };
  guint f, c, m, tested = 0;

  /* registered here, not first in a streaming thread */
  frame_check_meta_info ("TestVideoMeta", video_tags);
  frame_check_meta_info ("TestFooMeta", foo_tags);
  for (f = 0; f < (quick ? 1 : G_N_ELEMENTS (formats)); f++) {
    GstVideoInfo info;
    GstPad *pad;
    Pipe cuda;

    if (!cudaupload_takes (formats[f])) {
      g_print ("  %s: cudaupload does not take it, skipped\n", formats[f]);
      continue;
    }
    frame_check_info_init (&info, formats[f], W, H);
    pipe_start (&cuda, "appsrc name=src ! cudaupload ! " CUDA_CAPS " ! "
        "cudaconvolve name=conv regions=<<-3,30,12,99>,<50,2,8,8>> ! "
        "cudadownload ! appsink name=sink", &info);
    pad = gst_element_get_static_pad (cuda.conv, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
        (GstPadProbeCallback) add_metas, &mp, NULL);
    gst_object_unref (pad);
    pad = gst_element_get_static_pad (cuda.conv, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
        (GstPadProbeCallback) read_metas, &mp, NULL);
    gst_object_unref (pad);

    for (c = 0; c < G_N_ELEMENTS (configs); c++) {
      for (m = CUCONV_REGION_INSIDE; m <= CUCONV_REGION_OUTSIDE; m++) {
        GstBuffer *in = frame_check_buffer_random (&info, rand, FALSE);
        GstBuffer *whole, *out, *mixed;
        gchar what[160], first[96] = "";
        guint64 bad;

        g_snprintf (what, sizeof (what), "%s %dx%d %s region=%s", formats[f],
            W, H, configs[c], m == CUCONV_REGION_INSIDE ? "roi" :
            "outside-roi");
        gst_util_set_object_arg (G_OBJECT (cuda.conv), "region", "frame");
        gst_util_set_object_arg (G_OBJECT (cuda.conv), "border", "clamp");
        {
          gchar **kv = g_strsplit (configs[c], " ", -1);
          guint i;

          for (i = 0; kv[i]; i++) {
            gchar **nv = g_strsplit (kv[i], "=", 2);

            gst_util_set_object_arg (G_OBJECT (cuda.conv), nv[0], nv[1]);
            g_strfreev (nv);
          }
          g_strfreev (kv);
        }
        whole = pipe_push_pull (&cuda, in, what);
        check_reference (&info, cuda.conv, in, whole, what);
        fail_unless (mp.roi_out && mp.params_out && mp.video_out &&
            !mp.foo_out, "%s, region=frame: metas in CUDA memory: ROI %d, "
            "params %d, video-tagged %d, foo-tagged %d (want 1 1 1 0)",
            what, mp.roi_out, mp.params_out, mp.video_out, mp.foo_out);

        g_object_set (cuda.conv, "region", m, NULL);
        out = pipe_push_pull (&cuda, in, what);
        fail_unless (cuda.in_cuda && cuda.out_cuda, "%s: not CUDA memory",
            what);
        fail_unless (mp.roi_out && mp.params_out && mp.video_out &&
            !mp.foo_out, "%s: metas in CUDA memory: ROI %d, params %d, "
            "video-tagged %d, foo-tagged %d (want 1 1 1 0)", what,
            mp.roi_out, mp.params_out, mp.video_out, mp.foo_out);
        bad = frame_check_region_pixels (&info, out, in, m, boxes, G_N_ELEMENTS (boxes),
            FALSE, FALSE, first, sizeof (first));
        fail_unless (bad == 0, "%s: %" G_GUINT64_FORMAT " pixels the "
            "regions leave differ from the input, the first at %s", what,
            bad, first);
        mixed = gst_buffer_copy_deep (out);
        frame_check_region_pixels (&info, mixed, whole, m, boxes, G_N_ELEMENTS (boxes),
            FALSE, TRUE, NULL, 0);
        check_reference (&info, cuda.conv, in, mixed, what);
        gst_buffer_unref (mixed);
        gst_buffer_unref (out);
        gst_buffer_unref (whole);
        gst_buffer_unref (in);
        tested++;
      }
    }
    pipe_stop (&cuda);
  }
  g_print ("  %u frames with regions through CUDA memory\n", tested);
  fail_unless (tested > 0);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
cudaconvolve_pipeline_suite (void)
{
  Suite *s = suite_create ("cudaconvolve-pipeline");
  TCase *tc = tcase_create ("cuda-memory");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, NULL, stop_running);
  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, test_cuda_memory_matches_system);
  tcase_add_test (tc, test_regions_cuda_memory);
  if (!quick) {
    tcase_add_test (tc, test_mixed_memory);
    tcase_add_test (tc, test_renegotiate_memory);
    tcase_add_test (tc, test_nvh264dec_pipeline);
    tcase_add_test (tc, test_cuda_device_id);
    tcase_add_test (tc, test_two_devices);
  }
  return s;
}

int
main (int argc, char **argv)
{
  static const gchar *needed[] = { "cudaconvolve", "cudaupload",
    "cudadownload", "nvh264dec", "appsrc", "appsink"
  };
  guint i, n = 1;
  gint nf;

  setvbuf (stdout, NULL, _IOLBF, 0);
  /* --quick is ours: taken out before gst_check_init () parses argv */
  for (i = 1; i < (guint) argc; i++) {
    if (g_str_equal (argv[i], "--quick"))
      quick = TRUE;
    else
      argv[n++] = argv[i];
  }
  argc = n;
  gst_check_init (&argc, &argv);
  if (cuconv_device_count () == 0) {
    g_print ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  for (i = 0; i < G_N_ELEMENTS (needed); i++) {
    GstElementFactory *f = gst_element_factory_find (needed[i]);

    if (!f) {
      g_print ("SKIP: no %s element (nvcodec and gst-plugins-base are "
          "needed)\n", needed[i]);
      return EXIT_SKIP;
    }
    gst_object_unref (f);
  }
  g_setenv ("CK_FORK", "no", TRUE);
  nf = gst_check_run_suite (cudaconvolve_pipeline_suite (),
      "cudaconvolve-pipeline", __FILE__);
  return nf == 0 ? 0 : 1;
}
