/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's caps.  Both pads take the subclass's formats in
 * system memory and, in a CUDA build, in memory:CUDAMemory; each side may
 * be in either memory whatever the other is.  transform_caps offers the
 * other pad's memory first, so that a pipeline stays where it is, and no
 * CUDA memory with backend=cpu or once opening CUDA failed.  Where
 * downstream takes CUDA memory, the sink pad's answer to a CAPS query
 * puts its CUDA-memory caps first, so that an upstream that could give
 * either gives frames in CUDA memory. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudavideofilterprivate.h"

#define GST_CAT_DEFAULT gst_cuda_video_filter_debug

/**
 * gst_cuda_video_filter_class_add_pad_templates:
 * @klass: a #GstCudaVideoFilterClass
 * @formats: the video formats filtered, as a caps list ("{ I420, NV12 }")
 *
 * Adds "sink" and "src" templates of raw video in @formats, in CUDA memory
 * (preferred where the neighbours have it too) and in system memory.
 */
void
gst_cuda_video_filter_class_add_pad_templates (GstCudaVideoFilterClass *
    klass, const gchar * formats)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCaps *caps = gst_cuda_video_filter_gpu_template_caps (formats);

  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

GstCaps *
gst_cuda_video_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCudaVideoFilter *self = GST_CUDA_VIDEO_FILTER (trans);
  GstCaps *ret, *tmp;
  gboolean offer_cuda;

  /* Each side may be in CUDA or system memory, whatever the other is
   * (CUDA memory only when there is a context to use it in); the other
   * side's memory first, so that a pipeline stays in the memory it is in
   * unless a neighbour needs the other (but where downstream takes CUDA
   * memory, the sink pad's CAPS answer puts it first:
   * gst_cuda_video_filter_sink_caps ()). */
  offer_cuda = gst_cuda_video_filter_backend (self) !=
      GST_CUDA_VIDEO_FILTER_BACKEND_CPU &&
      gst_cuda_video_filter_gpu_can_offer (GET_PRIV (self)->gpu);
  ret = gst_cuda_video_filter_gpu_transform_caps (caps, offer_cuda);

  if (filter) {
    tmp = gst_caps_intersect_full (filter, ret, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      ret);
  return ret;
}

/* GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, which a build without CUDA has no
 * header for */
#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"

/* Whether structure i of caps is in CUDA memory. */
static gboolean
gst_cuda_video_filter_structure_is_cuda (GstCaps * caps, guint i)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, i);

  return f && gst_caps_features_contains (f, CUDA_MEMORY_FEATURE);
}

/* Whether caps take frames in CUDA memory (or anything). */
static gboolean
gst_cuda_video_filter_caps_take_cuda (GstCaps * caps)
{
  gboolean cuda = gst_caps_is_any (caps);
  guint i;

  for (i = 0; i < gst_caps_get_size (caps) && !cuda; i++)
    cuda = gst_cuda_video_filter_structure_is_cuda (caps, i);
  return cuda;
}

/* caps with their CUDA-memory structures first (takes caps). */
static GstCaps *
gst_cuda_video_filter_cuda_first (GstCaps * caps)
{
  GstCaps *cuda = gst_caps_new_empty ();
  guint i;

  if (gst_caps_is_any (caps))
    return caps;
  for (i = 0; i < gst_caps_get_size (caps); i++)
    if (gst_cuda_video_filter_structure_is_cuda (caps, i))
      gst_caps_append_structure_full (cuda,
          gst_structure_copy (gst_caps_get_structure (caps, i)),
          gst_caps_features_copy (gst_caps_get_features (caps, i)));
  return gst_caps_merge (cuda, caps);
}

/* The answer to a CAPS query on the sink pad: GstBaseTransform's (what
 * downstream takes, through transform_caps, within the templates and the
 * filter), but with its CUDA-memory caps first where downstream takes
 * CUDA memory.  An upstream that can give either (cudaupload passes
 * system memory through where it may) then gives frames in CUDA memory,
 * which the element filters where they are and hands on there, where in
 * system memory it would upload and download every frame itself.  One
 * question downstream gives both the answer and the preference: two, in
 * every element of a chain, would make negotiation exponential in the
 * chain's length. */
static GstCaps *
gst_cuda_video_filter_sink_caps (GstBaseTransform * trans, GstCaps * filter)
{
  GstCaps *templ = gst_pad_get_pad_template_caps (trans->sinkpad);
  GstCaps *otempl = gst_pad_get_pad_template_caps (trans->srcpad);
  GstCaps *peer_filter = NULL, *peer, *tmp, *caps;
  gboolean cuda;

  if (filter) {
    tmp = gst_caps_intersect_full (filter, templ, GST_CAPS_INTERSECT_FIRST);
    peer_filter = gst_cuda_video_filter_transform_caps (trans, GST_PAD_SINK,
        tmp, NULL);
    gst_caps_unref (tmp);
    tmp = gst_caps_intersect_full (peer_filter, otempl,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (peer_filter);
    peer_filter = tmp;
  }
  peer = gst_pad_peer_query_caps (trans->srcpad, peer_filter);
  cuda = gst_cuda_video_filter_caps_take_cuda (peer);
  tmp = gst_caps_intersect_full (peer, otempl, GST_CAPS_INTERSECT_FIRST);
  caps = gst_cuda_video_filter_transform_caps (trans, GST_PAD_SRC, tmp,
      filter);
  gst_caps_unref (tmp);
  tmp = gst_caps_intersect_full (caps, templ, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (caps);
  caps = cuda ? gst_cuda_video_filter_cuda_first (tmp) : tmp;

  gst_clear_caps (&peer_filter);
  gst_caps_unref (peer);
  gst_caps_unref (templ);
  gst_caps_unref (otempl);
  return caps;
}

gboolean
gst_cuda_video_filter_query_sink_caps (GstBaseTransform * trans,
    GstQuery * query)
{
  GstCaps *filter, *caps;

  gst_query_parse_caps (query, &filter);
  caps = gst_cuda_video_filter_sink_caps (trans, filter);
  gst_query_set_caps_result (query, caps);
  gst_caps_unref (caps);
  return TRUE;
}
