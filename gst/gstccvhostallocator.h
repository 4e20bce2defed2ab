/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CCV_HOST_ALLOCATOR_H__
#define __GST_CCV_HOST_ALLOCATOR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GST_CCV_HOST_MEMORY_TYPE_NAME:
 *
 * The mem_type of page-locked host memory from #GstCcvHostAllocator, for
 * gst_memory_is_type ().
 */
#define GST_CCV_HOST_MEMORY_TYPE_NAME "CcvHostMemory"

#define GST_TYPE_CCV_HOST_ALLOCATOR (gst_ccv_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCcvHostAllocator, gst_ccv_host_allocator,
    GST, CCV_HOST_ALLOCATOR, GstAllocator);

GstAllocator *gst_ccv_host_allocator_new (gint device_id, gchar * err,
    gsize err_len);

gboolean gst_is_ccv_host_memory (GstMemory * mem);

G_END_DECLS
#endif /* __GST_CCV_HOST_ALLOCATOR_H__ */
