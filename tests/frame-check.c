/* gst-cudaconvolve: frames for the element tests, and their check against
 * the CPU reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>

#include "frame-check.h"
#include "cuconv-motion.h"
#include "proc-status.h"

void
frame_check_info_init (GstVideoInfo * info, const gchar * format, gint w,
    gint h)
{
  fail_unless (gst_video_info_set_format (info,
          gst_video_format_from_string (format), w, h));
  GST_VIDEO_INFO_FPS_N (info) = 30;
  GST_VIDEO_INFO_FPS_D (info) = 1;
}

void
frame_check_fill_random (GstBuffer * buf, GRand * rand)
{
  GstMapInfo map;
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (i = 0; i < map.size; i++)
    map.data[i] = g_rand_int_range (rand, 0, 256);
  gst_buffer_unmap (buf, &map);
}

GstBuffer *
frame_check_buffer_random (const GstVideoInfo * info, GRand * rand,
    gboolean padded)
{
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
  gsize size = 3;
  guint p;
  GstMemory *mem;
  GstBuffer *buf;

  if (!padded) {
    buf = gst_buffer_new_allocate (NULL, info->size, NULL);
    frame_check_fill_random (buf, rand);
    return buf;
  }
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gint rowbytes, rows, sample;

    gst_video_format_info_component (info->finfo, p, comp);
    rowbytes = GST_VIDEO_INFO_COMP_WIDTH (info, comp[0]) *
        GST_VIDEO_INFO_COMP_PSTRIDE (info, comp[0]);
    rows = GST_VIDEO_INFO_COMP_HEIGHT (info, comp[0]);
    /* odd, or for 16-bit samples the next even number */
    sample = GST_VIDEO_INFO_COMP_DEPTH (info, comp[0]) > 8 ? 2 : 1;
    stride[p] = GST_ROUND_UP_N (rowbytes + 7 + 2 * p, sample);
    offset[p] = GST_ROUND_UP_N (size, sample);
    size = offset[p] + (gsize) stride[p] * rows + 5;
  }
  /* the memory one byte into its allocation: every plane at an odd
   * address */
  buf = gst_buffer_new_allocate (NULL, size + 1, NULL);
  frame_check_fill_random (buf, rand);
  mem = gst_memory_share (gst_buffer_peek_memory (buf, 0), 1, size);
  gst_buffer_unref (buf);
  buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info), offset,
      stride);
  return buf;
}

/* Reads the GstValueArray of doubles property name of e into taps. */
static int
element_get_taps (GstElement * e, const gchar * name, double *taps)
{
  GValue v = G_VALUE_INIT;
  guint i, n;

  g_value_init (&v, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), name, &v);
  n = gst_value_array_get_size (&v);
  fail_unless (n <= CUCONV_MAX_CUSTOM_TAPS);
  for (i = 0; i < n; i++)
    taps[i] = g_value_get_double (gst_value_array_get_value (&v, i));
  g_value_unset (&v);
  return n;
}

void
frame_check_element_settings (GstElement * e, CuconvSettings * s)
{
  GValue m = G_VALUE_INIT;
  gint kernel, border, j, i;
  gboolean normalize;

  memset (s, 0, sizeof (*s));
  g_object_get (e, "kernel", &kernel, "border", &border, "radius",
      &s->radius, "sigma", &s->sigma, "sigma-y", &s->sigma_y, "amount",
      &s->amount, "sigma-range", &s->sigma_range, "normalize", &normalize,
      "block-size", &s->block_size, "patch-radius", &s->patch_radius,
      "threshold-low", &s->threshold_low, "threshold-high",
      &s->threshold_high, NULL);
  s->kernel = (CuconvKernel) kernel;
  s->border = (CuconvBorder) border;
  s->normalize = normalize;
  s->custom_x_len = element_get_taps (e, "kernel-x", s->custom_x);
  s->custom_y_len = element_get_taps (e, "kernel-y", s->custom_y);

  g_value_init (&m, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "matrix", &m);
  s->matrix_side = gst_value_array_get_size (&m);
  fail_unless (s->matrix_side <= CUCONV_MAX_MATRIX_SIDE);
  for (j = 0; j < s->matrix_side; j++) {
    const GValue *row = gst_value_array_get_value (&m, j);

    fail_unless_equals_int (gst_value_array_get_size (row), s->matrix_side);
    for (i = 0; i < s->matrix_side; i++)
      s->matrix[j * s->matrix_side + i] =
          g_value_get_double (gst_value_array_get_value (row, i));
  }
  g_value_unset (&m);
}

CuconvPlanes
frame_check_element_planes (GstElement * e)
{
  gint planes;

  g_object_get (e, "planes", &planes, NULL);
  return (CuconvPlanes) planes;
}

/* The formats' layouts, written out from their definitions rather than
 * read from GstVideoFormatInfo as the element does.  Per plane: the
 * subsampling, the depth and shift of its samples, and the class of each
 * interleaved sample in memory order: L luma (Y, or R, G, B), C chroma
 * (U, V), A alpha or padding. */
typedef struct
{
  gint sub_x, sub_y, depth, shift;
  const gchar *samples;
} PlaneLayout;

typedef struct
{
  const gchar *format;
  PlaneLayout planes[GST_VIDEO_MAX_PLANES];
} FormatLayout;

#define LAYOUT_420(depth, shift) \
  {{1, 1, depth, shift, "L"}, {2, 2, depth, shift, "C"}, \
    {2, 2, depth, shift, "C"}}
#define LAYOUT_SEMI_420(depth, shift) \
  {{1, 1, depth, shift, "L"}, {2, 2, depth, shift, "CC"}}
#define LAYOUT_444(depth) \
  {{1, 1, depth, 0, "L"}, {1, 1, depth, 0, "C"}, {1, 1, depth, 0, "C"}}

static const FormatLayout layouts[] = {
  {"GRAY8", {{1, 1, 8, 0, "L"}}},
  {"GRAY16_LE", {{1, 1, 16, 0, "L"}}},
  {"I420", LAYOUT_420 (8, 0)},
  {"YV12", LAYOUT_420 (8, 0)},
  {"NV12", LAYOUT_SEMI_420 (8, 0)},
  {"NV21", LAYOUT_SEMI_420 (8, 0)},
  {"Y42B", {{1, 1, 8, 0, "L"}, {2, 1, 8, 0, "C"}, {2, 1, 8, 0, "C"}}},
  {"Y444", LAYOUT_444 (8)},
  {"I420_10LE", LAYOUT_420 (10, 0)},
  {"I420_12LE", LAYOUT_420 (12, 0)},
  {"P010_10LE", LAYOUT_SEMI_420 (10, 6)},
  {"P016_LE", LAYOUT_SEMI_420 (16, 0)},
  {"Y444_16LE", LAYOUT_444 (16)},
  {"RGBA", {{1, 1, 8, 0, "LLLA"}}},
  {"BGRA", {{1, 1, 8, 0, "LLLA"}}},
  {"RGBx", {{1, 1, 8, 0, "LLLA"}}},
  {"BGRx", {{1, 1, 8, 0, "LLLA"}}},
  {"AYUV", {{1, 1, 8, 0, "ALCC"}}},
};

static const FormatLayout *
layout_find (const gchar * format)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (layouts); i++)
    if (g_str_equal (layouts[i].format, format))
      return &layouts[i];
  fail ("no layout for %s in frame-check.c", format);
  return NULL;
}

/* The planes rule: what becomes of a sample of class cls. */
static CuconvCompOp
expected_op (gchar cls, CuconvKernel kernel, CuconvPlanes planes)
{
  if (cls == 'A')
    return CUCONV_COMP_COPY;
  if (planes == CUCONV_PLANES_ALL)
    return CUCONV_COMP_FILTER;
  if (cls == 'L')
    return planes == CUCONV_PLANES_CHROMA ? CUCONV_COMP_COPY : CUCONV_COMP_FILTER;
  if (planes == CUCONV_PLANES_LUMA)
    return CUCONV_COMP_COPY;
  if (planes == CUCONV_PLANES_CHROMA)
    return CUCONV_COMP_FILTER;
  if (kernel == CUCONV_KERNEL_SHARPEN)
    return CUCONV_COMP_COPY;
  if (kernel == CUCONV_KERNEL_SOBEL || kernel == CUCONV_KERNEL_LAPLACIAN
      || kernel == CUCONV_KERNEL_CANNY)
    return CUCONV_COMP_FILL;
  return CUCONV_COMP_FILTER;
}

/* planes[p] described from the table for info's format, src and dst
 * unset, each component's op by the planes rule for kernel and which. */
static void
describe_planes (const GstVideoInfo * info, CuconvKernel kernel,
    CuconvPlanes which, CuconvPlane * planes)
{
  const FormatLayout *layout = layout_find (GST_VIDEO_INFO_NAME (info));
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);
  gint c;

  for (p = 0; p < GST_VIDEO_MAX_PLANES; p++)
    fail_unless_equals_int (layout->planes[p].samples != NULL, p < n_planes);
  for (p = 0; p < n_planes; p++) {
    const PlaneLayout *l = &layout->planes[p];
    CuconvPlane *pl = &planes[p];

    memset (pl, 0, sizeof (*pl));
    pl->sub_x = l->sub_x;
    pl->sub_y = l->sub_y;
    pl->width = (GST_VIDEO_INFO_WIDTH (info) + l->sub_x - 1) / l->sub_x;
    pl->height = (GST_VIDEO_INFO_HEIGHT (info) + l->sub_y - 1) / l->sub_y;
    pl->depth = l->depth;
    pl->shift = l->shift;
    pl->fill = 1u << (l->depth - 1);
    pl->n_comp = strlen (l->samples);
    for (c = 0; c < pl->n_comp; c++)
      pl->op[c] = expected_op (l->samples[c], kernel, which);
  }
}

/* The sample of plane 0 that guides the compensated denoise: green in
 * RGB (the second of R G B or B G R), else luma. */
static gint
guide_sample (const GstVideoInfo * info)
{
  const gchar *samples =
      layout_find (GST_VIDEO_INFO_NAME (info))->planes[0].samples;

  return g_str_equal (samples, "LLLA") ? 1 :
      (gint) (strchr (samples, 'L') - samples);
}

void
frame_check_temporal (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * state, const CuconvSettings * s, CuconvPlanes which,
    gdouble strength, gdouble threshold, gboolean compensated,
    gboolean first)
{
  CuconvPlane planes[GST_VIDEO_MAX_PLANES];
  GstVideoFrame in_frame, state_frame, prev_frame;
  GstBuffer *prev = gst_buffer_copy_deep (state);
  const CuconvMotionVector *field = NULL;
  guint8 k[CUCONV_TEMPORAL_LUT];
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);
  void *scratch = NULL;

  cuconv_temporal_lut (k, strength, threshold);
  describe_planes (info, s->kernel, which, planes);
  fail_unless (gst_video_frame_map (&in_frame, (GstVideoInfo *) info, in,
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&state_frame, (GstVideoInfo *) info,
          state, GST_MAP_READWRITE));
  fail_unless (gst_video_frame_map (&prev_frame, (GstVideoInfo *) info,
          prev, GST_MAP_READ));
  for (p = 0; p < n_planes; p++) {
    planes[p].src = GST_VIDEO_FRAME_PLANE_DATA (&in_frame, p);
    planes[p].src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, p);
    planes[p].dst = GST_VIDEO_FRAME_PLANE_DATA (&state_frame, p);
    planes[p].dst_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&state_frame, p);
  }
  if (compensated && !first) {
    CuconvMotionLayout l;

    cuconv_motion_layout (planes[0].width, planes[0].height, &l);
    scratch = g_malloc (l.bytes);
    field = cuconv_motion_search (&planes[0], guide_sample (info),
        GST_VIDEO_FRAME_PLANE_DATA (&prev_frame, 0),
        GST_VIDEO_FRAME_PLANE_STRIDE (&prev_frame, 0), scratch);
  }
  for (p = 0; p < n_planes; p++) {
    if (compensated)
      cuconv_temporal_rows_compensated (&planes[p],
          GST_VIDEO_FRAME_PLANE_DATA (&prev_frame, p),
          GST_VIDEO_FRAME_PLANE_STRIDE (&prev_frame, p), field,
          cuconv_motion_blocks (planes[0].width), k, first, 0,
          planes[p].height);
    else
      cuconv_temporal_rows (&planes[p], k, first, 0, planes[p].height);
  }
  gst_video_frame_unmap (&prev_frame);
  gst_video_frame_unmap (&state_frame);
  gst_video_frame_unmap (&in_frame);
  gst_buffer_unref (prev);
  g_free (scratch);
}

/* What cuconv_reference_frame () makes of in: one tightly packed array per
 * plane, in expected[p], with expected_stride[p] and sample_bytes[p]. */
static void
reference_run (const GstVideoInfo * info, GstBuffer * in,
    const CuconvSettings * s, CuconvPlanes which, guint8 * expected[],
    gsize expected_stride[], gint sample_bytes[])
{
  const FormatLayout *layout = layout_find (GST_VIDEO_INFO_NAME (info));
  CuconvPlane planes[GST_VIDEO_MAX_PLANES];
  CuconvFilter filter;
  GstVideoFrame frame;
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);

  fail_unless (gst_video_frame_map (&frame, (GstVideoInfo *) info, in,
          GST_MAP_READ));
  describe_planes (info, s->kernel, which, planes);
  for (p = 0; p < n_planes; p++) {
    const PlaneLayout *l = &layout->planes[p];
    CuconvPlane *pl = &planes[p];

    pl->src = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    pl->src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    sample_bytes[p] = l->depth > 8 ? 2 : 1;
    expected_stride[p] = (gsize) pl->width * pl->n_comp * sample_bytes[p];
    expected[p] = g_malloc (expected_stride[p] * pl->height);
    memset (expected[p], 0xa5, expected_stride[p] * pl->height);
    pl->dst = expected[p];
    pl->dst_stride = expected_stride[p];
  }
  cuconv_filter_init (&filter, s);
  fail_unless (cuconv_reference_frame (planes, n_planes, &filter) == 0);
  gst_video_frame_unmap (&frame);
}

static guint
read_sample (const guint8 * row, gsize i, gint bytes)
{
  return bytes == 1 ? row[i] : GST_READ_UINT16_LE (row + 2 * i);
}

guint64
frame_check_compare_planes (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, CuconvPlanes planes,
    guint tolerance, gchar * first, gsize first_len, guint64 * samples,
    guint64 * near)
{
  const FormatLayout *layout = layout_find (GST_VIDEO_INFO_NAME (info));
  guint8 *expected[GST_VIDEO_MAX_PLANES];
  gsize expected_stride[GST_VIDEO_MAX_PLANES];
  gint sample_bytes[GST_VIDEO_MAX_PLANES];
  GstVideoFrame frame;
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);
  guint64 bad = 0;

  if (first_len)
    first[0] = '\0';
  reference_run (info, in, s, planes, expected, expected_stride,
      sample_bytes);
  fail_unless (gst_video_frame_map (&frame, (GstVideoInfo *) info, out,
          GST_MAP_READ));
  for (p = 0; p < n_planes; p++) {
    const guint shift = layout->planes[p].shift;
    const gsize n = expected_stride[p] / sample_bytes[p];
    gint y, rows = (GST_VIDEO_INFO_HEIGHT (info) + layout->planes[p].sub_y -
        1) / layout->planes[p].sub_y;
    gsize x;

    for (y = 0; y < rows; y++) {
      const guint8 *got_row = (const guint8 *)
          GST_VIDEO_FRAME_PLANE_DATA (&frame, p) +
          (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
      const guint8 *want_row = expected[p] + y * expected_stride[p];

      for (x = 0; x < n; x++) {
        guint got = read_sample (got_row, x, sample_bytes[p]);
        guint want = read_sample (want_row, x, sample_bytes[p]);
        guint d = ABS ((gint) (got >> shift) - (gint) (want >> shift));

        /* the bits below the value (P010) are compared exactly */
        if (d > tolerance || ((got ^ want) & ((1u << shift) - 1))) {
          if (bad == 0 && first_len)
            g_snprintf (first, first_len, "plane %u row %d sample %"
                G_GSIZE_FORMAT ": got %u, reference %u", p, y, x, got, want);
          bad++;
        } else if (d && near) {
          (*near)++;
        }
      }
      if (samples)
        *samples += n;
    }
    g_free (expected[p]);
  }
  gst_video_frame_unmap (&frame);
  return bad;
}

guint64
frame_check_compare (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, guint tolerance, gchar * first,
    gsize first_len, guint64 * samples, guint64 * near)
{
  return frame_check_compare_planes (info, in, out, s, CUCONV_PLANES_AUTO,
      tolerance, first, first_len, samples, near);
}

guint64
frame_check_region_pixels (const GstVideoInfo * info, GstBuffer * a, GstBuffer * b,
    gint mode, const FrameCheckBox * boxes, guint n, gboolean filtered,
    gboolean copy, gchar * first, gsize first_len)
{
  GstVideoFrame fa, fb;
  guint64 differ = 0;
  guint p, i;

  fail_unless (gst_video_frame_map (&fa, (GstVideoInfo *) info, a,
          copy ? GST_MAP_READWRITE : GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, (GstVideoInfo *) info, b,
          GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fa); p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS], sx, sy, bytes, x, y;

    gst_video_format_info_component (info->finfo, p, comp);
    sx = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (info->finfo, comp[0]);
    sy = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (info->finfo, comp[0]);
    bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE (info->finfo, comp[0]);
    for (y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&fa, comp[0]); y++) {
      for (x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH (&fa, comp[0]); x++) {
        guint8 *pa = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fa, p) +
            y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, p) + x * bytes;
        const guint8 *pb = (const guint8 *)
            GST_VIDEO_FRAME_PLANE_DATA (&fb, p) +
            y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, p) + x * bytes;
        gboolean inside = FALSE;

        for (i = 0; i < n && !inside; i++)
          inside = x >= boxes[i].x / sx &&
              x < (boxes[i].x + boxes[i].w + sx - 1) / sx &&
              y >= boxes[i].y / sy &&
              y < (boxes[i].y + boxes[i].h + sy - 1) / sy;
        if ((mode == CUCONV_REGION_INSIDE ? inside : !inside) != filtered)
          continue;
        if (copy) {
          memcpy (pa, pb, bytes);
        } else if (memcmp (pa, pb, bytes) != 0) {
          if (differ++ == 0)
            g_snprintf (first, first_len, "plane %u pixel (%d, %d), %s",
                p, x, y, inside ? "inside" : "outside");
        }
      }
    }
  }
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return differ;
}

guint64
frame_check_proc_kb (const gchar * field)
{
  const guint64 kb = proc_status_read_kb (field);

  fail_unless (kb > 0, "no %s in /proc/self/status", field);
  return kb;
}

void
frame_check_set_args (GstElement * e, const gchar * args)
{
  gchar **kv = g_strsplit (args, " ", -1);
  guint i;

  for (i = 0; kv[i]; i++) {
    gchar **nv = g_strsplit (kv[i], "=", 2);

    fail_unless (nv[0] && nv[1], "bad argument %s", kv[i]);
    gst_util_set_object_arg (G_OBJECT (e), nv[0], nv[1]);
    g_strfreev (nv);
  }
  g_strfreev (kv);
}

static gboolean
frame_check_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  ((FrameCheckMeta *) meta)->value = 0;
  return TRUE;
}

static gboolean
frame_check_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * buffer, GQuark type, gpointer data)
{
  FrameCheckMeta *copy =
      (FrameCheckMeta *) gst_buffer_add_meta (dest, meta->info, NULL);

  copy->value = ((FrameCheckMeta *) meta)->value;
  return TRUE;
}

const GstMetaInfo *
frame_check_meta_info (const gchar * name, const gchar ** tags)
{
  gchar *api_name = g_strdup_printf ("%sAPI", name);
  GType api = g_type_from_name (api_name);
  const GstMetaInfo *info;

  if (!api)
    api = gst_meta_api_type_register (api_name, tags);
  info = gst_meta_get_info (name);
  if (!info)
    info = gst_meta_register (api, name, sizeof (FrameCheckMeta),
        frame_check_meta_init, NULL, frame_check_meta_transform);
  g_free (api_name);
  return info;
}
