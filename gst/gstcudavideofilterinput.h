/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_INPUT_H__
#define __GST_CUDA_VIDEO_FILTER_INPUT_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* What GstCudaVideoFilter asks of an input buffer before it spends
 * anything on it, and which metadata stays true on its output. */

/* Whether buffer holds a whole frame of info: every plane's rows, as its
 * GstVideoMeta places them (or the default layout without one), lie
 * inside the buffer.  Reads no memory, so a buffer in GPU memory costs
 * nothing to check. */
gboolean gst_cuda_video_filter_input_holds_frame (const GstVideoInfo * info,
    GstBuffer * buffer);

/* Whether meta stays true on a filtered frame of the same geometry:
 * metas without tags, and those tagged only video, size and/or
 * orientation (region-of-interest and analytics metas among them), as
 * videoconvertscale decides. */
gboolean gst_cuda_video_filter_input_meta_stays (const GstMeta * meta);

/* Short buffers dropped since the last warning, and when it was posted:
 * the first is reported at once, then at most one warning a second. */
typedef struct
{
  guint64 pending;
  gint64 last_warning_us;       /* g_get_monotonic_time (); 0 = never */
} GstCudaVideoFilterDrops;

/* Counts a dropped buffer.  Returns how many to report now (0: stay
 * quiet) and starts a new count when it is not 0. */
guint64 gst_cuda_video_filter_drops_add (GstCudaVideoFilterDrops * drops,
    gint64 now_us);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_INPUT_H__ */
