/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's buffer pools on the CUDA backend: upstream is
 * proposed a GstCudaBufferPool of the context for CUDA memory, else a
 * pool of pinned host memory; downstream's CUDA pool of the same context
 * is taken as it is, and system memory goes out in pinned buffers, so
 * that the GPU reads and writes frames by DMA. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudamemory.h>

#include "gstcudavideofiltergpuprivate.h"
#include "gstcudapinnedallocator.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_video_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_video_filter_debug

/* Configures pool for caps with video meta, and (from 1.24) with a stream
 * unless it has one already: the one downstream's pool has, which frames
 * are filtered on (so that a chain of CUDA elements shares one stream and
 * never waits between them, as nvcodec's elements do), else the
 * element's.  Returns the size of a buffer as the pool has it (pitched
 * rows make it larger than the caps say), or 0 when the pool refuses. */
static guint
configure_cuda_pool (GstCudaVideoFilterGpu * gpu, GstBufferPool * pool,
    GstCaps * caps, guint size, guint min, guint max)
{
  GstStructure *config = gst_buffer_pool_get_config (pool);
#if GST_CHECK_VERSION (1, 24, 0)
  GstCudaStream *stream = gst_buffer_pool_config_get_cuda_stream (config);

  if (!stream)
    gst_buffer_pool_config_set_cuda_stream (config, gpu->out_stream ?
        gpu->out_stream : gpu->cuda_stream);
  gst_clear_cuda_stream (&stream);
#endif

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

/* A GstCudaBufferPool of the context in place of GstVideoFilter's pool of
 * system memory, so that upstream's frames are already where the kernels
 * read them. */
static void
propose_cuda_pool (GstCudaVideoFilterGpu * gpu, GstElement * element,
    GstQuery * query, GstCaps * caps, const GstVideoInfo * info, guint min)
{
  GstBufferPool *pool;
  guint size;

  pool = gst_cuda_buffer_pool_new (gpu->context);
  size = configure_cuda_pool (gpu, pool, caps, GST_VIDEO_INFO_SIZE (info),
      min, 0);
  if (size == 0) {
    GST_WARNING_OBJECT (element, "cannot configure a CUDA buffer pool");
    gst_object_unref (pool);
    return;
  }
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, 0);
  else
    gst_query_add_allocation_pool (query, pool, size, min, 0);
  GST_DEBUG_OBJECT (element, "proposing %" GST_PTR_FORMAT ", at least %u "
      "buffers", pool, min);
  gst_object_unref (pool);
}

/* Puts a GstVideoBufferPool of pinned memory first in query, in place of
 * GstVideoFilter's system-memory one, and the allocator first among the
 * allocation params: upstream that configures the pool with the first
 * allocator, or allocates without a pool, gets pinned memory as well. */
static void
propose_pinned_pool (GstCudaVideoFilterGpu * gpu, GstElement * element,
    GstQuery * query, GstCaps * caps, const GstVideoInfo * info, guint min)
{
  GstAllocationParams params;
  GstAllocator *other = NULL;
  GstBufferPool *pool;
  GstStructure *config;
  gchar *name;

  /* The alignment, prefix and padding already asked for still hold. */
  gst_allocation_params_init (&params);
  if (gst_query_get_n_allocation_params (query) > 0) {
    gst_query_parse_nth_allocation_param (query, 0, &other, &params);
    gst_clear_object (&other);
  }

  pool = gst_video_buffer_pool_new ();
  name = g_strdup_printf ("%s-pinned-pool", GST_OBJECT_NAME (element));
  g_object_set (pool, "name", name, NULL);
  g_free (name);
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, info->size, min, 0);
  gst_buffer_pool_config_set_allocator (config, gpu->pinned, &params);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config))
    goto config_failed;

  if (gst_query_get_n_allocation_params (query) > 0)
    gst_query_set_nth_allocation_param (query, 0, gpu->pinned, &params);
  else
    gst_query_add_allocation_param (query, gpu->pinned, &params);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, info->size, min, 0);
  else
    gst_query_add_allocation_pool (query, pool, info->size, min, 0);
  GST_DEBUG_OBJECT (element, "proposing %" GST_PTR_FORMAT
      " of pinned memory, at least %u buffers", pool, min);
  gst_object_unref (pool);
  return;

  /* ERRORS */
config_failed:
  {
    GST_WARNING_OBJECT (element, "Cannot configure a pool of pinned memory; "
        "proposing system memory");
    gst_object_unref (pool);
  }
}

void
gst_cuda_video_filter_gpu_propose_allocation (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gboolean pinned, guint held)
{
  GstVideoInfo info;
  GstCaps *caps;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!gpu->stream || !caps || !gst_video_info_from_caps (&info, caps))
    return;
  if (gst_cuda_video_filter_gpu_caps_are_cuda (caps))
    propose_cuda_pool (gpu, element, query, caps, &info, held);
  else if (pinned)
    propose_pinned_pool (gpu, element, query, caps, &info, held);
}

/* Downstream's pool when it is a CUDA pool of the same context, else one
 * of ours, configured whole: GstBaseTransform would set downstream's
 * allocator (none, or system memory) on it. */
static gboolean
decide_cuda_pool (GstCudaVideoFilterGpu * gpu, GstElement * element,
    GstQuery * query, GstCaps * caps, const GstVideoInfo * info, guint held)
{
  GstBufferPool *pool = NULL;
  guint size = 0, min = 0, max = 0;
  gboolean have_pool;

  have_pool = gst_query_get_n_allocation_pools (query) > 0;
  if (have_pool)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) ||
          GST_CUDA_BUFFER_POOL (pool)->context != gpu->context)) {
    GST_DEBUG_OBJECT (element, "not a CUDA pool of our context: %"
        GST_PTR_FORMAT, pool);
    gst_clear_object (&pool);
  }
  if (!pool)
    pool = gst_cuda_buffer_pool_new (gpu->context);
  /* the buffers downstream keeps, and ours in flight */
  min += held;
  if (max != 0)
    max += held;
#if GST_CHECK_VERSION (1, 24, 0)
  gst_clear_cuda_stream (&gpu->out_stream);
#endif
  size = configure_cuda_pool (gpu, pool, caps, MAX (size,
          GST_VIDEO_INFO_SIZE (info)), min, max);
  if (size == 0) {
    GST_WARNING_OBJECT (element, "cannot configure a CUDA buffer pool");
    gst_object_unref (pool);
    return FALSE;
  }
#if GST_CHECK_VERSION (1, 24, 0)
  {
    GstStructure *config = gst_buffer_pool_get_config (pool);

    gpu->out_stream = gst_buffer_pool_config_get_cuda_stream (config);
    gst_structure_free (config);
  }
#endif

  if (have_pool)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}

static gboolean
is_system_allocator (GstAllocator * allocator)
{
  return !allocator || g_strcmp0 (allocator->mem_type,
      GST_ALLOCATOR_SYSMEM) == 0;
}

/* A pool of no particular memory: GstBufferPool or GstVideoBufferPool
 * themselves (not a subclass) on system memory. */
static gboolean
is_plain_pool (GstBufferPool * pool)
{
  GType type = G_OBJECT_TYPE (pool);
  GstAllocator *allocator = NULL;
  GstStructure *config;
  gboolean plain;

  if (type != GST_TYPE_BUFFER_POOL && type != GST_TYPE_VIDEO_BUFFER_POOL)
    return FALSE;
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_allocator (config, &allocator, NULL);
  plain = is_system_allocator (allocator);
  gst_structure_free (config);

  return plain;
}

/* Output buffers of pinned memory, so that the download from the GPU is a
 * DMA straight into them.  Only when downstream has no memory of its own
 * to offer: a pool or allocator that is more than plain system memory (a
 * sink's pool, GL or dmabuf memory, or pinned already) is kept, as writing
 * into it saves downstream a copy, which beats a faster download.  Here we
 * only hand our allocator over: GstVideoFilter makes the pool where there
 * is none and GstBaseTransform configures it with the first allocator. */
static void
decide_pinned (GstCudaVideoFilterGpu * gpu, GstElement * element,
    GstQuery * query, guint held)
{
  GstAllocationParams params;
  GstAllocator *allocator = NULL;
  GstBufferPool *pool = NULL;
  guint size = 0, min = 0, max = 0;
  gboolean have_pool, have_params, special;

  have_pool = gst_query_get_n_allocation_pools (query) > 0;
  if (have_pool)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  gst_allocation_params_init (&params);
  have_params = gst_query_get_n_allocation_params (query) > 0;
  if (have_params)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);

  special = (pool && !is_plain_pool (pool)) ||
      !is_system_allocator (allocator);
  if (special)
    GST_DEBUG_OBJECT (element, "keeping downstream's %" GST_PTR_FORMAT
        " and %" GST_PTR_FORMAT, pool, allocator);
  gst_clear_object (&pool);
  gst_clear_object (&allocator);
  if (special)
    return;

  /* A pool of our own rather than downstream's plain one, with the buffer
   * counts downstream asked for and ours in flight. */
  if (have_pool)
    gst_query_set_nth_allocation_pool (query, 0, NULL, size, min + held,
        max != 0 ? max + held : 0);
  if (have_params)
    gst_query_set_nth_allocation_param (query, 0, gpu->pinned, &params);
  else
    gst_query_add_allocation_param (query, gpu->pinned, &params);
  GST_DEBUG_OBJECT (element, "output buffers of pinned memory");
}

gboolean
gst_cuda_video_filter_gpu_decide_allocation (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gboolean pinned, guint held,
    gboolean * done)
{
  GstVideoInfo info;
  GstCaps *caps;

  *done = FALSE;
  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return TRUE;
  if (gst_cuda_video_filter_gpu_caps_are_cuda (caps)) {
    *done = TRUE;
    return gpu->stream && decide_cuda_pool (gpu, element, query, caps, &info,
        held);
  }
  if (pinned && gpu->stream)
    decide_pinned (gpu, element, query, held);
  return TRUE;
}

