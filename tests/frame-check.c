/* gst-cudaconvolve: frames for the element tests, and their check against
 * the CPU reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>

#include "frame-check.h"

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
  GstBuffer *buf;

  if (!padded) {
    buf = gst_buffer_new_allocate (NULL, info->size, NULL);
    frame_check_fill_random (buf, rand);
    return buf;
  }
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gint rowbytes, rows;

    gst_video_format_info_component (info->finfo, p, comp);
    rowbytes = GST_VIDEO_INFO_COMP_WIDTH (info, comp[0]) *
        GST_VIDEO_INFO_COMP_PSTRIDE (info, comp[0]);
    rows = GST_VIDEO_INFO_COMP_HEIGHT (info, comp[0]);
    stride[p] = rowbytes + 7 + 2 * p;
    offset[p] = size;
    size += (gsize) stride[p] * rows + 5;
  }
  buf = gst_buffer_new_allocate (NULL, size, NULL);
  frame_check_fill_random (buf, rand);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info), offset,
      stride);
  return buf;
}

void
frame_check_element_settings (GstElement * e, CcvSettings * s)
{
  gint kernel, border;

  memset (s, 0, sizeof (*s));
  g_object_get (e, "kernel", &kernel, "border", &border, "radius",
      &s->radius, "sigma", &s->sigma, NULL);
  s->kernel = (CcvKernel) kernel;
  s->border = (CcvBorder) border;
}

/* What ccv_reference_frame () makes of in: one tightly packed array per
 * plane, in expected[p], with expected_stride[p].  The planes are
 * described here from the format, independently of the element. */
static void
reference_run (const GstVideoInfo * info, GstBuffer * in,
    const CcvSettings * s, guint8 * expected[], gsize expected_stride[])
{
  const GstVideoFormatInfo *finfo = info->finfo;
  CcvPlane planes[GST_VIDEO_MAX_PLANES];
  CcvFilter filter;
  GstVideoFrame frame;
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);

  fail_unless (gst_video_frame_map (&frame, (GstVideoInfo *) info, in,
          GST_MAP_READ));
  for (p = 0; p < n_planes; p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    CcvPlane *pl = &planes[p];

    memset (pl, 0, sizeof (*pl));
    gst_video_format_info_component (finfo, p, comp);
    pl->width = GST_VIDEO_FRAME_COMP_WIDTH (&frame, comp[0]);
    pl->height = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]);
    pl->n_comp = comp[1] >= 0 ? 2 : 1;
    pl->sub_x = 1 << GST_VIDEO_FORMAT_INFO_W_SUB (finfo, comp[0]);
    pl->sub_y = 1 << GST_VIDEO_FORMAT_INFO_H_SUB (finfo, comp[0]);
    pl->src = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    pl->src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    expected_stride[p] = (gsize) pl->width * pl->n_comp;
    expected[p] = g_malloc (expected_stride[p] * pl->height);
    memset (expected[p], 0xa5, expected_stride[p] * pl->height);
    pl->dst = expected[p];
    pl->dst_stride = expected_stride[p];
  }
  ccv_filter_init (&filter, s);
  fail_unless (ccv_reference_frame (planes, n_planes, &filter) == 0);
  gst_video_frame_unmap (&frame);
}

guint64
frame_check_compare (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CcvSettings * s, guint tolerance, gchar * first,
    gsize first_len, guint64 * samples, guint64 * near)
{
  guint8 *expected[GST_VIDEO_MAX_PLANES];
  gsize expected_stride[GST_VIDEO_MAX_PLANES];
  GstVideoFrame frame;
  guint p, n_planes = GST_VIDEO_INFO_N_PLANES (info);
  guint64 bad = 0;

  if (first_len)
    first[0] = '\0';
  reference_run (info, in, s, expected, expected_stride);
  fail_unless (gst_video_frame_map (&frame, (GstVideoInfo *) info, out,
          GST_MAP_READ));
  for (p = 0; p < n_planes; p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS], y, rows;
    gsize x;

    gst_video_format_info_component (info->finfo, p, comp);
    rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]);
    for (y = 0; y < rows; y++) {
      const guint8 *got = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
          p) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
      const guint8 *want = expected[p] + y * expected_stride[p];

      for (x = 0; x < expected_stride[p]; x++) {
        guint d = ABS ((gint) got[x] - (gint) want[x]);

        if (d > tolerance) {
          if (bad == 0 && first_len)
            g_snprintf (first, first_len, "plane %u row %d byte %"
                G_GSIZE_FORMAT ": got %u, reference %u", p, y, x, got[x],
                want[x]);
          bad++;
        } else if (d && near) {
          (*near)++;
        }
      }
      if (samples)
        *samples += expected_stride[p];
    }
    g_free (expected[p]);
  }
  gst_video_frame_unmap (&frame);
  return bad;
}
