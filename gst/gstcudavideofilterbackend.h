/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_BACKEND_H__
#define __GST_CUDA_VIDEO_FILTER_BACKEND_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstcudavideofilter.h"

G_BEGIN_DECLS

/* GstCudaVideoFilter's backends: which one filters frames, opening and
 * closing the CUDA side, and a frame's way to the subclass's filter vfunc
 * on each. */

/* The backend filtering frames. */
typedef enum
{
  /* none chosen: not started, or backend=cuda found CUDA unusable (the
   * next frame tries again) */
  GST_CUDA_VIDEO_FILTER_IN_USE_NONE,
  GST_CUDA_VIDEO_FILTER_IN_USE_CPU,
  /* the subclass's CUDA side is open (its open_cuda () succeeded), and
   * only in this state */
  GST_CUDA_VIDEO_FILTER_IN_USE_CUDA,
} GstCudaVideoFilterInUse;

/* The choice of backend, in the streaming thread (and start/stop, which
 * never run alongside): made in start (), and again for a frame that
 * reads another value of the backend property. */
typedef struct
{
  GstCudaVideoFilterBackend frame;      /* the property, read for this frame */
  GstCudaVideoFilterBackend made_for;   /* the value in_use was chosen for */
  GstCudaVideoFilterInUse in_use;
  gboolean warned_fallback;     /* backend=auto's warning, once a start */
} GstCudaVideoFilterChoice;

/* Makes the backend in use match the one asked for and updates
 * active-backend.  Returns FALSE after posting an error when backend=cuda
 * cannot run. */
gboolean gst_cuda_video_filter_ensure_backend (GstCudaVideoFilter * self,
    GstCudaVideoFilterBackend backend);

/* Frees the subclass's GPU resources; the context stays for CUDA memory
 * until stop (). */
void gst_cuda_video_filter_close_cuda (GstCudaVideoFilter * self);

/* Posts "Filtering what on the GPU failed: ..." for error, which it
 * frees; returns GST_FLOW_ERROR. */
GstFlowReturn gst_cuda_video_filter_failed_on_gpu (GstCudaVideoFilter * self,
    const gchar * what, GError * error);

/* In and out in CUDA memory of the element's context, on the CUDA
 * backend: filters the frame where it is. */
GstFlowReturn gst_cuda_video_filter_filter_device (GstCudaVideoFilter * self,
    GstBuffer * inbuf, GstBuffer * outbuf);

/* GstVideoFilter's transform_frame: frames mapped in host memory, filtered
 * on the backend in use, or copied under identity settings. */
GstFlowReturn gst_cuda_video_filter_transform_frame (GstVideoFilter *
    vfilter, GstVideoFrame * in_frame, GstVideoFrame * out_frame);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_BACKEND_H__ */
