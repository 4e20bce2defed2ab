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

guint64
gst_cuda_video_filter_drops_add (GstCudaVideoFilterDrops * drops,
    gint64 now_us)
{
  guint64 n;

  drops->pending++;
  if (drops->last_warning_us != 0 &&
      now_us - drops->last_warning_us < DROP_WARNING_INTERVAL_US)
    return 0;
  n = drops->pending;
  drops->pending = 0;
  drops->last_warning_us = now_us;
  return n;
}
