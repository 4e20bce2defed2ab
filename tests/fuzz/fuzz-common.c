/* gst-cudaconvolve: what the fuzzers share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fuzz-common.h"

#ifdef HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

/* CUCONV_FUZZ_MEMORY=cuda: the element's input is CUDA memory of this
 * context, which the element is given as its neighbours give theirs: the
 * input's bytes and video metas reach it with no other element's checks
 * in between, as a hostile upstream in CUDA memory would send them. */
static GstCudaContext *cuda_context;
static GstAllocator *cuda_allocator;   /* GStreamer's default CUDA one */
/* Whether this input's frames are in CUDA memory: only in the formats the
 * element takes there (its pad template's, by the running GStreamer; the
 * others, which GStreamer 1.22's CUDA allocator would abort on, come in
 * system memory, as any upstream would send them). */
static gboolean in_cuda;

/* CUDA memory of the context for a frame of info, in the allocator's
 * layout (which the memory's info holds). */
static GstMemory *
cuda_alloc (const GstVideoInfo * info)
{
  GstMemory *mem;

#if GST_CHECK_VERSION (1, 24, 0)
  mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (cuda_allocator),
      cuda_context, NULL, info);
#else
  mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (cuda_allocator),
      cuda_context, info);
#endif
  if (!mem)
    g_error ("fuzz: cannot allocate CUDA memory for %ux%u %s",
        GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
        GST_VIDEO_INFO_NAME (info));
  return mem;
}
#endif

gboolean
fuzz_more (const FuzzInput * in)
{
  return in->size > 0;
}

guint8
fuzz_u8 (FuzzInput * in)
{
  guint8 b;

  if (in->size == 0)
    return 0;
  b = in->data[0];
  in->data++;
  in->size--;
  return b;
}

guint32
fuzz_u32 (FuzzInput * in)
{
  guint32 v = 0;
  guint i;

  for (i = 0; i < 4; i++)
    v = v << 8 | fuzz_u8 (in);
  return v;
}

guint64
fuzz_u64 (FuzzInput * in)
{
  return (guint64) fuzz_u32 (in) << 32 | fuzz_u32 (in);
}

guint
fuzz_below (FuzzInput * in, guint n)
{
  return n <= 256 ? fuzz_u8 (in) % n : fuzz_u32 (in) % n;
}

gdouble
fuzz_double (FuzzInput * in)
{
  static const gdouble edges[] = { 0.0, 1e-320, 1e-160, 1e-40, 0.01, 0.5,
    1.0, 3.0, 21.3, 64.0, 255.0, 256.0, 1000.0, 1e6, 1e39, 1e308,
    INFINITY, -INFINITY, NAN, -1.0, -1e-300, -1e308
  };
  guint8 kind = fuzz_u8 (in);
  guint64 bits;
  gdouble d;

  if (kind < 128)
    return edges[kind % G_N_ELEMENTS (edges)];
  if (kind < 192)
    return (gdouble) ((gint8) fuzz_u8 (in));
  bits = fuzz_u64 (in);
  memcpy (&d, &bits, sizeof (d));
  return d;
}

gchar *
fuzz_string (FuzzInput * in, guint max)
{
  guint n = fuzz_u8 (in), i;
  gchar *s;

  n = MIN (n, max);
  s = g_malloc (n + 1);

  for (i = 0; i < n; i++)
    s[i] = (gchar) fuzz_u8 (in);
  s[n] = '\0';
  return s;
}

static const gchar *const formats[] = {
  "GRAY8", "GRAY16_LE", "I420", "YV12", "NV12", "NV21", "Y42B", "Y444",
  "I420_10LE", "I420_12LE", "P010_10LE", "P016_LE", "Y444_16LE", "RGBA",
  "BGRA", "RGBx", "BGRx", "AYUV"
};

void
fuzz_video_info (FuzzInput * in, GstVideoInfo * info, guint max_w,
    guint max_h)
{
  const gchar *format = formats[fuzz_below (in, G_N_ELEMENTS (formats))];
  guint w = 1 + fuzz_below (in, max_w), h = 1 + fuzz_below (in, max_h);

  gst_video_info_set_format (info, gst_video_format_from_string (format), w,
      h);
  GST_VIDEO_INFO_FPS_N (info) = 30;
  GST_VIDEO_INFO_FPS_D (info) = 1;
}

/* Copies bytes from the input into mem, zeros once it is used up. */
static void
fuzz_fill (FuzzInput * in, GstMemory * mem)
{
  GstMapInfo map;
  gsize n;

  if (!gst_memory_map (mem, &map, GST_MAP_WRITE))
    return;
  n = MIN (in->size, map.size);
  memcpy (map.data, in->data, n);
  memset (map.data + n, 0, map.size - n);
  in->data += n;
  in->size -= n;
  gst_memory_unmap (mem, &map);
}

GstMemory *
fuzz_memory_new (FuzzInput * in, gsize size)
{
  GstMemory *mem;

#ifdef HAVE_CUDA
  if (in_cuda) {
    GstVideoInfo line;

    /* a row of at least size bytes (RGBA, which every CUDA allocator lays
     * out), filled whole and then cut to size: GStreamer 1.22's CUDA
     * memory cannot be mapped on the host once cut (its download copies
     * the whole row and fails) */
    gst_video_info_set_format (&line, GST_VIDEO_FORMAT_RGBA,
        (guint) (size + 3) / 4, 1);
    mem = cuda_alloc (&line);
    fuzz_fill (in, mem);
    gst_memory_resize (mem, 0, size);
    return mem;
  }
#endif
  mem = gst_allocator_alloc (NULL, size, NULL);
  fuzz_fill (in, mem);
  return mem;
}

GstBuffer *
fuzz_frame (FuzzInput * in, const GstVideoInfo * info)
{
  GstBuffer *buf = gst_buffer_new ();
  GstMemory *mem = NULL;

#ifdef HAVE_CUDA
  /* a frame as a CUDA pool makes it: the allocator's pitched layout,
   * which its video meta describes */
  if (in_cuda) {
    GstCudaMemory *cmem;

    mem = cuda_alloc (info);
    cmem = GST_CUDA_MEMORY_CAST (mem);
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (&cmem->info), GST_VIDEO_INFO_WIDTH (&cmem->info),
        GST_VIDEO_INFO_HEIGHT (&cmem->info),
        GST_VIDEO_INFO_N_PLANES (&cmem->info), cmem->info.offset,
        cmem->info.stride);
  }
#endif
  if (mem)
    fuzz_fill (in, mem);
  else
    mem = fuzz_memory_new (in, info->size);
  gst_buffer_append_memory (buf, mem);
  return buf;
}

/* Values for array, all of kinds[depth] (GStreamer's arrays hold values
 * of one type, nested ones too): a number, a string (NULL too) or, above
 * depth 0, arrays of kinds[depth - 1]. */
static void
fuzz_array (FuzzInput * in, GValue * array, const guint * kinds, guint depth)
{
  /* up to 40 values: a 31 x 31 matrix, a 129-tap kernel in part */
  guint n = fuzz_below (in, 41), i;

  for (i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;

    switch (kinds[depth]) {
      case 0:
      case 1:
        g_value_init (&v, G_TYPE_DOUBLE);
        g_value_set_double (&v, fuzz_double (in));
        break;
      case 2:
        g_value_init (&v, G_TYPE_INT);
        g_value_set_int (&v, (gint) fuzz_u32 (in));
        break;
      case 3:
        g_value_init (&v, G_TYPE_UINT64);
        g_value_set_uint64 (&v, fuzz_u64 (in));
        break;
      case 4:
        g_value_init (&v, G_TYPE_STRING);
        if (fuzz_u8 (in) & 1)
          g_value_take_string (&v, fuzz_string (in, 16));
        break;
      default:
        g_value_init (&v, GST_TYPE_ARRAY);
        fuzz_array (in, &v, kinds, depth - 1);
        break;
    }
    gst_value_array_append_and_take_value (array, &v);
  }
}

/* v (initialised to pspec's type) made from the input; FALSE for a type
 * the fuzzer does not make. */
static gboolean
fuzz_typed_value (FuzzInput * in, GValue * v, GParamSpec * pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  if (G_TYPE_IS_ENUM (type)) {
    g_value_set_enum (v, (gint) fuzz_u32 (in));
    return TRUE;
  }
  switch (G_TYPE_FUNDAMENTAL (type)) {
    case G_TYPE_BOOLEAN:
      g_value_set_boolean (v, fuzz_u8 (in) & 1);
      return TRUE;
    case G_TYPE_INT:
      g_value_set_int (v, (gint) fuzz_u32 (in));
      return TRUE;
    case G_TYPE_UINT:
      g_value_set_uint (v, fuzz_u8 (in) & 1 ? fuzz_u8 (in) : fuzz_u32 (in));
      return TRUE;
    case G_TYPE_DOUBLE:
      g_value_set_double (v, fuzz_double (in));
      return TRUE;
    case G_TYPE_STRING:
      if (fuzz_u8 (in) & 1)
        g_value_take_string (v, fuzz_string (in, 32));
      return TRUE;
    default:
      break;
  }
  if (type == GST_TYPE_ARRAY) {
    /* what each level holds: arrays (5) above level 0 only */
    guint kinds[3], d;

    for (d = 0; d < G_N_ELEMENTS (kinds); d++)
      kinds[d] = fuzz_below (in, d > 0 ? 6 : 5);
    fuzz_array (in, v, kinds, 2);
    return TRUE;
  }
  return FALSE;
}

void
fuzz_set_property (FuzzInput * in, GstElement * e)
{
  GParamSpec **all, *writable[64], *pspec;
  GValue v = G_VALUE_INIT;
  guint n, i, k = 0;
  gboolean made;

  all = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
  for (i = 0; i < n && k < G_N_ELEMENTS (writable); i++) {
    if ((all[i]->flags & G_PARAM_WRITABLE) &&
        !(all[i]->flags & G_PARAM_CONSTRUCT_ONLY) &&
        strcmp (all[i]->name, "name") != 0 &&
        strcmp (all[i]->name, "parent") != 0)
      writable[k++] = all[i];
  }
  g_free (all);
  pspec = writable[fuzz_below (in, k)];

  g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspec));
  if (fuzz_u8 (in) & 1) {
    gchar *str = fuzz_string (in, 64);

    made = gst_value_deserialize_with_pspec (&v, str, pspec);
    g_free (str);
  } else {
    made = fuzz_typed_value (in, &v, pspec);
  }
  /* GObject refuses a value out of its range itself (a critical in newer
   * GLib), a NaN too: that is GObject's check, not the element's */
  if (made && G_VALUE_HOLDS_DOUBLE (&v) && isnan (g_value_get_double (&v)))
    made = FALSE;
  if (made) {
    g_param_value_validate (pspec, &v);
    g_object_set_property (G_OBJECT (e), pspec->name, &v);
  }
  g_value_unset (&v);
}

GstHarness *
fuzz_harness_new (FuzzInput * in, guint max_w, guint max_h, GstElement ** e,
    GstVideoInfo * info)
{
  const gchar *backend = g_getenv ("CUCONV_FUZZ_BACKEND");
  GstHarness *h;
  GstBus *bus;

  GstCaps *caps;

  if (!backend || !*backend)
    backend = "cpu";
  *e = gst_element_factory_make ("cudaconvolve", NULL);
  if (!*e)
    g_error ("fuzz: no cudaconvolve (is GST_PLUGIN_PATH set?)");
  gst_object_ref_sink (*e);
  gst_util_set_object_arg (G_OBJECT (*e), "backend", backend);
  bus = gst_bus_new ();
  gst_element_set_bus (*e, bus);
  gst_object_unref (bus);
#ifdef HAVE_CUDA
  if (cuda_context) {
    GstContext *c = gst_context_new_cuda_context (cuda_context);

    gst_element_set_context (*e, c);
    gst_context_unref (c);
  }
#endif
  h = gst_harness_new_with_element (*e, "sink", "src");
  fuzz_video_info (in, info, max_w, max_h);
  caps = gst_video_info_to_caps (info);
#ifdef HAVE_CUDA
  in_cuda = FALSE;
  if (cuda_context) {
    GstCaps *cuda = gst_caps_copy (caps);
    GstPad *sink = gst_element_get_static_pad (*e, "sink");
    GstCaps *templ = gst_pad_get_pad_template_caps (sink);

    gst_caps_set_features (cuda, 0,
        gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, NULL));
    in_cuda = gst_caps_can_intersect (cuda, templ);
    if (in_cuda)
      gst_caps_replace (&caps, cuda);
    gst_caps_unref (cuda);
    gst_caps_unref (templ);
    gst_object_unref (sink);
  }
#endif
  gst_harness_set_caps (h, caps, gst_caps_ref (caps));
  return h;
}

void
fuzz_harness_free (GstHarness * h, GstElement * e)
{
  GstBus *bus = gst_element_get_bus (e);

  gst_harness_teardown (h);
  if (bus) {
    gst_bus_set_flushing (bus, TRUE);
    gst_object_unref (bus);
  }
  gst_element_set_bus (e, NULL);
  gst_object_unref (e);
}

void
fuzz_push (GstHarness * h, GstBuffer * buf)
{
  GstBuffer *out;

  gst_harness_push (h, buf);
  while ((out = gst_harness_try_pull (h)))
    gst_buffer_unref (out);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  GstElementFactory *factory;

  g_setenv ("GST_REGISTRY_FORK", "no", TRUE);
  gst_init (NULL, NULL);
  /* a critical is a bug the fuzzer must see */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR);
  factory = gst_element_factory_find ("cudaconvolve");
  if (!factory) {
    g_printerr ("fuzz: no cudaconvolve plugin: set GST_PLUGIN_PATH to the "
        "build's gst/ folder\n");
    exit (2);
  }
  gst_object_unref (factory);
  if (g_strcmp0 (g_getenv ("CUCONV_FUZZ_MEMORY"), "cuda") == 0) {
#ifdef HAVE_CUDA
    if (gst_cuda_load_library ())
      cuda_context = gst_cuda_context_new (0);
    if (cuda_context) {
      gst_cuda_memory_init_once ();
      cuda_allocator = gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
    }
    if (!cuda_context || !cuda_allocator) {
      g_printerr ("fuzz: CUCONV_FUZZ_MEMORY=cuda: no CUDA device\n");
      exit (77);
    }
#else
    g_printerr ("fuzz: CUCONV_FUZZ_MEMORY=cuda: this build has no CUDA\n");
    exit (2);
#endif
  }
  return 0;
}
