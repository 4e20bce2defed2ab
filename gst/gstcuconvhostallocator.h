/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUCONV_HOST_ALLOCATOR_H__
#define __GST_CUCONV_HOST_ALLOCATOR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GST_CUCONV_HOST_MEMORY_TYPE_NAME:
 *
 * The mem_type of page-locked host memory from #GstCuconvHostAllocator, for
 * gst_memory_is_type ().
 */
#define GST_CUCONV_HOST_MEMORY_TYPE_NAME "CuconvHostMemory"

#define GST_TYPE_CUCONV_HOST_ALLOCATOR (gst_cuconv_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCuconvHostAllocator, gst_cuconv_host_allocator,
    GST, CUCONV_HOST_ALLOCATOR, GstAllocator);

GstAllocator *gst_cuconv_host_allocator_new (gint device_id, gchar * err,
    gsize err_len);

gboolean gst_is_cuconv_host_memory (GstMemory * mem);

G_END_DECLS
#endif /* __GST_CUCONV_HOST_ALLOCATOR_H__ */
