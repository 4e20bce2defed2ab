/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* cudaconvolve among GStreamer's CUDA elements (nvcodec: cudaupload,
 * cudadownload, nvh264dec, ...): one GstCudaContext shared through
 * GstContext, GstCudaBufferPools of that context on both pads, and a
 * stream of our own in it.  The 1.22 library keeps no stream with the
 * memory: a producer finishes its work on a buffer before pushing it, and
 * so do we (the element synchronises its stream before it returns). */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>

#include "gstcuconvcudamemory.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

void
gst_cuconv_cuda_set_context (GstCuconvCuda * cuda, GstElement * element,
    GstContext * context, gint device_id)
{
  gst_cuda_handle_set_context (element, context, device_id, &cuda->context);
}

gboolean
gst_cuconv_cuda_handle_context_query (GstCuconvCuda * cuda, GstElement * element,
    GstQuery * query)
{
  return GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (element, query, cuda->context);
}

gboolean
gst_cuconv_cuda_open (GstCuconvCuda * cuda, GstElement * element, gint device_id)
{
  gboolean ok;

  if (cuda->stream)
    return TRUE;
  cuda->opened = TRUE;
  if (!gst_cuda_load_library ()) {
    GST_INFO_OBJECT (element, "no CUDA driver library: system memory only");
    return FALSE;
  }
  /* the CUDA allocator, which nvcodec registers when it is loaded */
  gst_cuda_memory_init_once ();
  if (!gst_cuda_ensure_element_context (element, device_id, &cuda->context)) {
    GST_INFO_OBJECT (element, "no CUDA context for device %d", device_id);
    return FALSE;
  }
  if (!gst_cuda_context_push (cuda->context))
    return FALSE;
  ok = gst_cuda_result (CuStreamCreate (&cuda->stream,
          CU_STREAM_NON_BLOCKING));
  gst_cuda_context_pop (NULL);
  if (!ok)
    cuda->stream = NULL;
  GST_INFO_OBJECT (element, "CUDA memory on device %d: %s",
      gst_cuconv_cuda_device (cuda), ok ? "yes" : "no, cannot create a stream");

  return ok;
}

void
gst_cuconv_cuda_close (GstCuconvCuda * cuda)
{
  if (cuda->stream && gst_cuda_context_push (cuda->context)) {
    gst_cuda_result (CuStreamDestroy (cuda->stream));
    gst_cuda_context_pop (NULL);
  }
  cuda->stream = NULL;
  gst_clear_object (&cuda->context);
  cuda->in_cuda = cuda->out_cuda = FALSE;
  cuda->opened = FALSE;
}

gboolean
gst_cuconv_cuda_can_offer (const GstCuconvCuda * cuda)
{
  return !cuda->opened || cuda->stream != NULL;
}

gint
gst_cuconv_cuda_device (const GstCuconvCuda * cuda)
{
  guint device = 0;

  g_object_get (cuda->context, "cuda-device-id", &device, NULL);
  return (gint) device;
}

GstCaps *
gst_cuconv_cuda_transform_caps (GstCaps * caps, gboolean offer_cuda)
{
  GstCaps *ret;
  guint i, f;

  if (gst_caps_is_any (caps))
    return gst_caps_ref (caps);

  ret = gst_caps_new_empty ();
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *have = gst_caps_get_features (caps, i);
    const gchar *features[2] = { GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY,
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY
    };

    /* the memory of this side first, as a passthrough would keep it */
    if (have && gst_caps_features_contains (have,
            GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY)) {
      features[0] = GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY;
      features[1] = GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY;
    }
    for (f = 0; f < G_N_ELEMENTS (features); f++) {
      if (!offer_cuda && g_str_equal (features[f],
              GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
        continue;
      ret = gst_caps_merge_structure_full (ret,
          gst_structure_copy (gst_caps_get_structure (caps, i)),
          gst_caps_features_new (features[f], NULL));
    }
  }
  return ret;
}

gboolean
gst_cuconv_cuda_caps_are_cuda (GstCaps * caps)
{
  GstCapsFeatures *features;

  if (!caps || gst_caps_get_size (caps) == 0)
    return FALSE;
  features = gst_caps_get_features (caps, 0);
  return features && gst_caps_features_contains (features,
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

/* Configures pool for caps with video meta; returns the size of a buffer
 * as the pool has it (pitched rows make it larger than the caps say), or
 * 0 when the pool refuses. */
static guint
configure_pool (GstBufferPool * pool, GstCaps * caps, guint size, guint min,
    guint max)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);

  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  if (!gst_buffer_pool_set_config (pool, config))
    return 0;

  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);
  return size;
}

gboolean
gst_cuconv_cuda_propose_pool (GstCuconvCuda * cuda, GstElement * element,
    GstQuery * query)
{
  GstBufferPool *pool;
  GstVideoInfo info;
  GstCaps *caps;
  guint size;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps) || !cuda->context)
    return FALSE;

  pool = gst_cuda_buffer_pool_new (cuda->context);
  size = configure_pool (pool, caps, GST_VIDEO_INFO_SIZE (&info), 0, 0);
  if (size == 0) {
    GST_WARNING_OBJECT (element, "cannot configure a CUDA buffer pool");
    gst_object_unref (pool);
    return FALSE;
  }

  /* in place of GstVideoFilter's pool of system memory */
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, 0, 0);
  else
    gst_query_add_allocation_pool (query, pool, size, 0, 0);
  GST_DEBUG_OBJECT (element, "proposing %" GST_PTR_FORMAT, pool);
  gst_object_unref (pool);

  return TRUE;
}

gboolean
gst_cuconv_cuda_decide_pool (GstCuconvCuda * cuda, GstElement * element,
    GstQuery * query)
{
  GstBufferPool *pool = NULL;
  GstVideoInfo info;
  GstCaps *caps;
  guint size = 0, min = 0, max = 0;
  gboolean have_pool;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps) || !cuda->context)
    return FALSE;

  have_pool = gst_query_get_n_allocation_pools (query) > 0;
  if (have_pool)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) ||
          GST_CUDA_BUFFER_POOL (pool)->context != cuda->context)) {
    GST_DEBUG_OBJECT (element, "not a CUDA pool of our context: %"
        GST_PTR_FORMAT, pool);
    gst_clear_object (&pool);
  }
  if (!pool)
    pool = gst_cuda_buffer_pool_new (cuda->context);
  size = configure_pool (pool, caps, MAX (size, GST_VIDEO_INFO_SIZE (&info)),
      min, max);
  if (size == 0) {
    GST_WARNING_OBJECT (element, "cannot configure a CUDA buffer pool");
    gst_object_unref (pool);
    return FALSE;
  }

  if (have_pool)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);

  return TRUE;
}

gboolean
gst_cuconv_cuda_buffer_is_local (const GstCuconvCuda * cuda, GstBuffer * buffer)
{
  guint i, n = gst_buffer_n_memory (buffer);

  if (!cuda->context || n == 0)
    return FALSE;
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);

    if (!gst_is_cuda_memory (mem) ||
        GST_CUDA_MEMORY_CAST (mem)->context != cuda->context)
      return FALSE;
  }
  return TRUE;
}
