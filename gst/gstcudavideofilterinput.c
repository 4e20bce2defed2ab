/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The checks GstCudaVideoFilter makes on what arrives: a buffer must hold
 * a whole frame of its caps before an output buffer is allocated for it
 * (a truncated read, or huge caps with a small buffer, must never produce
 * a garbage frame or a multi-gigabyte allocation), and metadata that
 * describes the picture's geometry stays on the output. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudavideofilterinput.h"

#define DROP_WARNING_INTERVAL_US G_USEC_PER_SEC

gboolean
gst_cuda_video_filter_input_holds_frame (const GstVideoInfo * info,
    GstBuffer * buffer)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);
  const guint64 size = gst_buffer_get_size (buffer);
  guint p;

  if (!meta)
    return size >= GST_VIDEO_INFO_SIZE (info);

  /* The meta places the planes: each must lie inside the buffer. */
  if (meta->format != GST_VIDEO_INFO_FORMAT (info) ||
      meta->width < (guint) GST_VIDEO_INFO_WIDTH (info) ||
      meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info) ||
      meta->n_planes != GST_VIDEO_INFO_N_PLANES (info))
    return FALSE;
  for (p = 0; p < meta->n_planes; p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    guint64 rows, row_bytes;

    gst_video_format_info_component (finfo, p, comp);
    rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, comp[0],
        GST_VIDEO_INFO_HEIGHT (info));
    row_bytes = (guint64) GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comp[0],
        GST_VIDEO_INFO_WIDTH (info)) * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo,
        comp[0]);
    /* Rows that overlap, or run backwards, are no frame the filters read. */
    if (meta->stride[p] < 0 || (guint64) meta->stride[p] < row_bytes)
      return FALSE;
    if (rows > 0 && (guint64) meta->offset[p] + (guint64) meta->stride[p] *
        (rows - 1) + row_bytes > size)
      return FALSE;
  }
  return TRUE;
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
  const gboolean holds =
      gst_cuda_video_filter_input_holds_frame (info, buffer);
  const gint64 now = g_get_monotonic_time ();
  guint64 report;

  if (holds)
    return TRUE;
  GST_OBJECT_LOCK (element);
  counts->dropped_short++;
  GST_OBJECT_UNLOCK (element);

  counts->unreported++;
  if (counts->last_warning_us != 0 &&
      now - counts->last_warning_us < DROP_WARNING_INTERVAL_US)
    return FALSE;
  report = counts->unreported;
  counts->unreported = 0;
  counts->last_warning_us = now;
  GST_ELEMENT_WARNING (element, STREAM, FORMAT,
      ("Dropped %" G_GUINT64_FORMAT " buffer(s) too small for their caps: "
          "a %dx%d %s frame needs %" G_GSIZE_FORMAT " bytes, the last buffer "
          "had %" G_GSIZE_FORMAT ". Check the element upstream.", report,
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
          GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_SIZE (info),
          gst_buffer_get_size (buffer)), ("%" GST_PTR_FORMAT, buffer));
  return FALSE;
}

void
gst_cuda_video_filter_counts_pushed (GstCudaVideoFilterCounts * counts,
    GstElement * element)
{
  GST_OBJECT_LOCK (element);
  counts->frames_out++;
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
      "dropped-qos", G_TYPE_UINT64, counts->dropped_qos, NULL);

  g_free (name);
  return stats;
}
