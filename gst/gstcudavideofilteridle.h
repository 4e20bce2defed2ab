/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_IDLE_H__
#define __GST_CUDA_VIDEO_FILTER_IDLE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* A watch on the streaming thread for GstCudaVideoFilter's frame in
 * flight: armed when the thread leaves the element with a frame held,
 * disarmed when it comes back.  Armed for longer than the timeout, it
 * calls func from a thread of its own, so that a frame is never held
 * while nothing else comes (an application that pushes one frame and
 * waits for it, a source that pauses).  The thread starts with the first
 * arm. */
typedef struct _GstCudaVideoFilterIdle GstCudaVideoFilterIdle;

/* Called from the watch's thread with the serial of the arm that ran out;
 * it takes the stream lock, then checks the arm is still the last with
 * gst_cuda_video_filter_idle_is_current (). */
typedef void (*GstCudaVideoFilterIdleFunc) (gpointer data, guint serial);

GstCudaVideoFilterIdle *gst_cuda_video_filter_idle_new (const gchar * name,
    GstCudaVideoFilterIdleFunc func, gpointer data, gint64 timeout_us);
/* Ends the thread, after a call of func that runs, and disarms; the next
 * arm starts it again. */
void gst_cuda_video_filter_idle_stop (GstCudaVideoFilterIdle * idle);
void gst_cuda_video_filter_idle_free (GstCudaVideoFilterIdle * idle);

void gst_cuda_video_filter_idle_arm (GstCudaVideoFilterIdle * idle);
void gst_cuda_video_filter_idle_disarm (GstCudaVideoFilterIdle * idle);
gboolean gst_cuda_video_filter_idle_is_current (GstCudaVideoFilterIdle *
    idle, guint serial);

/* How many times the watch's thread has woken since it was made (for the
 * tests: about once a timeout while arms come, not once an arm). */
guint gst_cuda_video_filter_idle_wakes (GstCudaVideoFilterIdle * idle);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_IDLE_H__ */
