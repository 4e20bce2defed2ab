/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_PRIVATE_H__
#define __GST_CUDA_VIDEO_FILTER_PRIVATE_H__

/* GstCudaVideoFilter's instance data and the class's helpers, shared by
 * the files of the base class: the class itself (gstcudavideofilter.c),
 * its backends (gstcudavideofilterbackend.c), its caps
 * (gstcudavideofiltercaps.c) and its frame in flight
 * (gstcudavideofilterflight.c). */

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gstcudavideofilter.h"
#include "gstcudavideofilterbackend.h"
#include "gstcudavideofiltercaps.h"
#include "gstcudavideofilterflight.h"
#include "gstcudavideofiltergpu.h"
#include "gstcudavideofilterinput.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_video_filter_debug);

typedef struct
{
  /* Properties, under the object lock. */
  GstCudaVideoFilterBackend backend;
  gint device_id;               /* changed in READY only */
  const gchar *active_backend;

  /* Streaming thread only (and start/stop, which never run alongside). */
  GstCudaVideoFilterGpu *gpu;
  GstCudaVideoFilterChoice choice;      /* the backend in use */
  gboolean frame_identity;      /* this frame's settings change nothing */
  gboolean in_cuda, out_cuda;   /* negotiated memory:CUDAMemory */
  GstCudaVideoFilterCounts counts;     /* the stats property */

  /* One frame in flight, under the sink pad's stream lock (the streaming
   * thread, or the idle watch's). */
  GstCudaVideoFilterFlight flight;
} GstCudaVideoFilterPrivate;

GstCudaVideoFilterPrivate *gst_cuda_video_filter_get_private
    (GstCudaVideoFilter * self);

#define GET_PRIV(self) \
    gst_cuda_video_filter_get_private (GST_CUDA_VIDEO_FILTER (self))

/* GstVideoFilter's class, which the vfuncs of every file here chain up
 * to. */
GstBaseTransformClass *gst_cuda_video_filter_get_parent_class (void);

/* The properties, each read under the object lock. */
gint gst_cuda_video_filter_device_id (GstCudaVideoFilter * self);
GstCudaVideoFilterBackend gst_cuda_video_filter_backend (GstCudaVideoFilter *
    self);

/* Sets active-backend ("none", "cuda" or "cpu", a static string) and
 * notifies it when it changed. */
void gst_cuda_video_filter_set_active_backend (GstCudaVideoFilter * self,
    const gchar * name);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_PRIVATE_H__ */
