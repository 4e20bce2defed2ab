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

/* Why buffer does not hold a frame of info, as a sentence to free, or
 * NULL when it does.  Without a GstVideoMeta: when it is smaller than the
 * default layout.  With one: unless the meta describes a frame of info
 * (format, size, plane count) whose planes each lie inside one memory of
 * the buffer, with strides of at least a row, offsets and strides
 * multiples of the sample size (2 bytes past 8 bits).  *too_small: the
 * layout is valid, the buffer too short for it.  Reads no memory, so a
 * buffer in GPU memory costs nothing to check. */
gchar *gst_cuda_video_filter_input_check (const GstVideoInfo * info,
    GstBuffer * buffer, gboolean * too_small);

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
  guint64 frames_in, frames_out, dropped_short, dropped_invalid, dropped_qos;
  guint64 idle_pushed;          /* frames the idle watch pushed */
  guint64 unreported;           /* dropped since the last warning */
  gint64 last_warning_us;       /* g_get_monotonic_time (); 0 = never */
} GstCudaVideoFilterCounts;

void gst_cuda_video_filter_counts_reset (GstCudaVideoFilterCounts * counts,
    GstElement * element);

/* Counts a buffer received; qos_dropped: GstBaseTransform's QoS skipped
 * it as too late (and posted a QoS message). */
void gst_cuda_video_filter_counts_received (GstCudaVideoFilterCounts *
    counts, GstElement * element, gboolean qos_dropped);

/* Whether buffer holds a frame of info (gst_cuda_video_filter_input_check
 * ()).  When it does not, it is counted and reported as dropped
 * (gst_cuda_video_filter_counts_dropped ()). */
gboolean gst_cuda_video_filter_counts_accept (GstCudaVideoFilterCounts *
    counts, GstElement * element, const GstVideoInfo * info,
    GstBuffer * buffer);

/* Counts a frame in flight that the idle watch pushed, no frame having
 * followed it in time. */
void gst_cuda_video_filter_counts_idle_pushed (GstCudaVideoFilterCounts *
    counts, GstElement * element);

/* Counts a buffer dropped because it does not hold a frame of info
 * (too_small: as dropped-short, else as dropped-invalid), and posts a
 * warning saying why for the first such buffer, then at most one a
 * second, saying how many. */
void gst_cuda_video_filter_counts_dropped (GstCudaVideoFilterCounts *
    counts, GstElement * element, const GstVideoInfo * info,
    gboolean too_small, const gchar * why);

/* Counts a buffer pushed downstream. */
void gst_cuda_video_filter_counts_pushed (GstCudaVideoFilterCounts * counts,
    GstElement * element);

/* The counts as "<element factory>-stats" (frames-in, frames-out,
 * dropped-short, dropped-invalid, dropped-qos); call with the object lock
 * held. */
GstStructure *gst_cuda_video_filter_counts_to_structure (const
    GstCudaVideoFilterCounts * counts, GstElement * element);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_INPUT_H__ */
