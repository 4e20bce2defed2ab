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
 * anything on it, what it counts, and which metadata stays true on its
 * output. */

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

/* What the stats property counts, since the element started: the
 * counters under the element's object lock, the warning state in the
 * streaming thread. */
typedef struct
{
  guint64 frames_in, frames_out, dropped_short, dropped_qos;
  guint64 unreported;           /* dropped since the last warning */
  gint64 last_warning_us;       /* g_get_monotonic_time (); 0 = never */
} GstCudaVideoFilterCounts;

void gst_cuda_video_filter_counts_reset (GstCudaVideoFilterCounts * counts,
    GstElement * element);

/* Counts a buffer received; qos_dropped: GstBaseTransform's QoS skipped
 * it as too late (and posted a QoS message). */
void gst_cuda_video_filter_counts_received (GstCudaVideoFilterCounts *
    counts, GstElement * element, gboolean qos_dropped);

/* Whether buffer holds a whole frame of info.  When it does not, it is
 * counted as dropped, and a warning is posted for the first such buffer,
 * then at most one a second, saying how many. */
gboolean gst_cuda_video_filter_counts_accept (GstCudaVideoFilterCounts *
    counts, GstElement * element, const GstVideoInfo * info,
    GstBuffer * buffer);

/* Counts a buffer pushed downstream. */
void gst_cuda_video_filter_counts_pushed (GstCudaVideoFilterCounts * counts,
    GstElement * element);

/* The counts as "<element factory>-stats" (frames-in, frames-out,
 * dropped-short, dropped-qos); call with the object lock held. */
GstStructure *gst_cuda_video_filter_counts_to_structure (const
    GstCudaVideoFilterCounts * counts, GstElement * element);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_INPUT_H__ */
