/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The checks GstCudaVideoFilter makes on what arrives: a buffer must hold
 * a whole frame of its caps before an output buffer is allocated for it
 * (a truncated read, or huge caps with a small buffer, must never produce
 * a garbage frame or a multi-gigabyte allocation), its video meta must
 * describe a frame of the caps (the frame is mapped through it: a larger
 * one would be read and written past both buffers), and metadata that
 * describes the picture's geometry stays on the output.  Upstream is
 * untrusted: every sum and product is checked for overflow. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilterinput.h"

#define DROP_WARNING_INTERVAL_US G_USEC_PER_SEC

/* The name of format, which upstream may have made up: a number when
 * GStreamer knows no such format (gst_video_format_to_string () would
 * raise a critical). */
static const gchar *
format_name (GstVideoFormat format)
{
  const GstVideoFormat *known;
  guint n, i;

  known = gst_video_formats_raw (&n);
  for (i = 0; i < n; i++)
    if (known[i] == format)
      return gst_video_format_to_string (format);
  return "unknown to GStreamer";
}

/* Bytes a sample of component comp takes: 2 past 8 bits. */
static guint
sample_bytes (const GstVideoFormatInfo * finfo, gint comp)
{
  return GST_VIDEO_FORMAT_INFO_DEPTH (finfo, comp) > 8 ? 2 : 1;
}

/* Why plane p of meta, rows of row_bytes in the caps, does not lie in
 * buffer as a frame's plane may (NULL when it does); *too_small: only
 * because the buffer ends too early. */
static gchar *
plane_check (const GstVideoMeta * meta, guint p, guint64 rows,
    guint64 row_bytes, guint align, GstBuffer * buffer, gboolean * too_small)
{
  const gsize size = gst_buffer_get_size (buffer);
  const gint stride = meta->stride[p];
  guint64 extent, end;
  guint idx, length;
  gsize skip;

  /* Rows that overlap, or run backwards, are no frame the filters read. */
  if (stride < 0 || (guint64) stride < row_bytes)
    return g_strdup_printf ("plane %u of its video meta has a stride of %d "
        "bytes, its rows take %" G_GUINT64_FORMAT, p, stride, row_bytes);
  if (meta->offset[p] % align != 0 || stride % align != 0)
    return g_strdup_printf ("plane %u of its video meta is at offset %"
        G_GSIZE_FORMAT " with a stride of %d bytes, which are not both "
        "multiples of its %u-byte samples", p, meta->offset[p], stride,
        align);
  if (!g_uint64_checked_mul (&extent, (guint64) stride, rows - 1) ||
      !g_uint64_checked_add (&extent, extent, row_bytes) ||
      !g_uint64_checked_add (&end, meta->offset[p], extent))
    return g_strdup_printf ("plane %u of its video meta, at offset %"
        G_GSIZE_FORMAT ", ends beyond any buffer", p, meta->offset[p]);
  if (end > size) {
    *too_small = TRUE;
    return g_strdup_printf ("plane %u of its video meta ends at byte %"
        G_GUINT64_FORMAT ", the buffer has %" G_GSIZE_FORMAT, p, end, size);
  }
  /* A video meta maps the memory its plane starts in, and no other. */
  if (!gst_buffer_find_memory (buffer, meta->offset[p], extent, &idx,
          &length, &skip) || length != 1)
    return g_strdup_printf ("plane %u of its video meta lies across %u "
        "memories of the buffer; a plane must lie in one", p, length);
  return NULL;
}

gchar *
gst_cuda_video_filter_input_check (const GstVideoInfo * info,
    GstBuffer * buffer, gboolean * too_small)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);
  const gsize size = gst_buffer_get_size (buffer);
  guint p;

  *too_small = FALSE;
  if (!meta) {
    if (size >= GST_VIDEO_INFO_SIZE (info))
      return NULL;
    *too_small = TRUE;
    return g_strdup_printf ("it has %" G_GSIZE_FORMAT " bytes, a frame "
        "needs %" G_GSIZE_FORMAT, size, GST_VIDEO_INFO_SIZE (info));
  }

  /* The meta places the planes: it must describe a frame of the caps,
   * each plane inside one memory of the buffer. */
  if (meta->format != GST_VIDEO_INFO_FORMAT (info))
    return g_strdup_printf ("its video meta is of format %s",
        format_name (meta->format));
  if (meta->width != (guint) GST_VIDEO_INFO_WIDTH (info) ||
      meta->height != (guint) GST_VIDEO_INFO_HEIGHT (info))
    return g_strdup_printf ("its video meta describes a %ux%u frame",
        meta->width, meta->height);
  if (meta->n_planes != GST_VIDEO_INFO_N_PLANES (info))
    return g_strdup_printf ("its video meta has %u planes, the format %u",
        meta->n_planes, GST_VIDEO_INFO_N_PLANES (info));
  for (p = 0; p < meta->n_planes; p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    guint64 rows, row_bytes;
    gchar *why;

    gst_video_format_info_component (finfo, p, comp);
    rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, comp[0],
        GST_VIDEO_INFO_HEIGHT (info));
    row_bytes = (guint64) GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comp[0],
        GST_VIDEO_INFO_WIDTH (info)) * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo,
        comp[0]);
    if (rows > 0 && (why = plane_check (meta, p, rows, row_bytes,
                sample_bytes (finfo, comp[0]), buffer, too_small)))
      return why;
  }
  return NULL;
}

gboolean
gst_cuda_video_filter_input_meta_stays (const GstMeta * meta)
{
  const gchar *const *tags = gst_meta_api_type_get_tags (meta->info->api);

  for (; tags && *tags; tags++) {
    if (strcmp (*tags, GST_META_TAG_VIDEO_STR) != 0 &&
        strcmp (*tags, GST_META_TAG_VIDEO_SIZE_STR) != 0 &&
        strcmp (*tags, GST_META_TAG_VIDEO_ORIENTATION_STR) != 0)
      return FALSE;
  }
  return TRUE;
}

void
gst_cuda_video_filter_counts_reset (GstCudaVideoFilterCounts * counts,
    GstElement * element)
{
  GST_OBJECT_LOCK (element);
  memset (counts, 0, sizeof (*counts));
  GST_OBJECT_UNLOCK (element);
}

void
gst_cuda_video_filter_counts_received (GstCudaVideoFilterCounts * counts,
    GstElement * element, gboolean qos_dropped)
{
  GST_OBJECT_LOCK (element);
  counts->frames_in++;
  counts->dropped_qos += qos_dropped;
  GST_OBJECT_UNLOCK (element);
}

gboolean
gst_cuda_video_filter_counts_accept (GstCudaVideoFilterCounts * counts,
    GstElement * element, const GstVideoInfo * info, GstBuffer * buffer)
{
  gboolean too_small;
  gchar *why = gst_cuda_video_filter_input_check (info, buffer, &too_small);

  if (!why)
    return TRUE;
  gst_cuda_video_filter_counts_dropped (counts, element, info, too_small,
      why);
  g_free (why);
  return FALSE;
}

void
gst_cuda_video_filter_counts_dropped (GstCudaVideoFilterCounts * counts,
    GstElement * element, const GstVideoInfo * info, gboolean too_small,
    const gchar * why)
{
  const gint64 now = g_get_monotonic_time ();
  guint64 report;

  GST_OBJECT_LOCK (element);
  if (too_small)
    counts->dropped_short++;
  else
    counts->dropped_invalid++;
  GST_OBJECT_UNLOCK (element);

  counts->unreported++;
  if (counts->last_warning_us != 0 &&
      now - counts->last_warning_us < DROP_WARNING_INTERVAL_US)
    return;
  report = counts->unreported;
  counts->unreported = 0;
  counts->last_warning_us = now;
  GST_ELEMENT_WARNING (element, STREAM, FORMAT,
      ("Dropped %" G_GUINT64_FORMAT " buffer(s) that do not hold a %s frame "
          "of their caps (%s %dx%d): %s. Check the element upstream.",
          report, too_small ? "whole" : "valid", GST_VIDEO_INFO_NAME (info),
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), why),
      (NULL));
}

void
gst_cuda_video_filter_counts_pushed (GstCudaVideoFilterCounts * counts,
    GstElement * element)
{
  GST_OBJECT_LOCK (element);
  counts->frames_out++;
  GST_OBJECT_UNLOCK (element);
}

void
gst_cuda_video_filter_counts_idle_pushed (GstCudaVideoFilterCounts * counts,
    GstElement * element)
{
  GST_OBJECT_LOCK (element);
  counts->idle_pushed++;
  GST_OBJECT_UNLOCK (element);
}

GstStructure *
gst_cuda_video_filter_counts_to_structure (const GstCudaVideoFilterCounts *
    counts, GstElement * element)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  gchar *name = g_strdup_printf ("%s-stats",
      factory ? GST_OBJECT_NAME (factory) : G_OBJECT_TYPE_NAME (element));
  GstStructure *stats = gst_structure_new (name,
      "frames-in", G_TYPE_UINT64, counts->frames_in,
      "frames-out", G_TYPE_UINT64, counts->frames_out,
      "dropped-short", G_TYPE_UINT64, counts->dropped_short,
      "dropped-invalid", G_TYPE_UINT64, counts->dropped_invalid,
      "dropped-qos", G_TYPE_UINT64, counts->dropped_qos,
      "idle-pushed", G_TYPE_UINT64, counts->idle_pushed, NULL);

  g_free (name);
  return stats;
}
