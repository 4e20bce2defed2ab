/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_VIDEO_FILTER_CAPS_H__
#define __GST_CUDA_VIDEO_FILTER_CAPS_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

/* GstCudaVideoFilter's caps: what each pad offers, CUDA memory or system
 * memory, and which of the two comes first. */

/* GstBaseTransform's transform_caps: the other pad's caps in either
 * memory, its own first. */
GstCaps *gst_cuda_video_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter);

/* Answers a CAPS query on the sink pad (gst_cuda_video_filter_sink_caps
 * ()); returns TRUE. */
gboolean gst_cuda_video_filter_query_sink_caps (GstBaseTransform * trans,
    GstQuery * query);

G_END_DECLS
#endif /* __GST_CUDA_VIDEO_FILTER_CAPS_H__ */
