/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/*
 * GstCuconvHostAllocator: page-locked (pinned) host memory for the buffer
 * pools cudaconvolve proposes upstream and uses for its output.  The
 * memory behaves exactly like system memory (always mapped, shareable,
 * copyable), so any element can read and write it; the CUDA engine sees
 * that it is pinned and copies it to and from the GPU by DMA, without a
 * staging copy.
 *
 * The allocator opens its own engine handle on the device, so it does not
 * depend on the element that made it: pools and buffers may outlive the
 * element (buffers in flight after it stopped).  Every GstMemory holds a
 * reference to its allocator, so the handle, and with it the device, stays
 * open until the last block is freed.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcuconvhostallocator.h"
#include "cuconv-cuda.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuconv_host_allocator_debug);
#define GST_CAT_DEFAULT gst_cuconv_host_allocator_debug

typedef struct
{
  GstMemory mem;

  /* What cuconv_cuda_host_alloc () returned, for freeing; NULL in a memory
   * shared from another, which owns the block. */
  gpointer block;
  /* The maxsize bytes of the memory, aligned as asked, inside the block. */
  guint8 *data;
} GstCuconvHostMemory;

struct _GstCuconvHostAllocator
{
  GstAllocator parent;

  gint device_id;
};

static void gst_cuconv_host_allocator_finalize (GObject * object);
static GstMemory *gst_cuconv_host_allocator_alloc (GstAllocator * allocator,
    gsize size, GstAllocationParams * params);
static void gst_cuconv_host_allocator_free (GstAllocator * allocator,
    GstMemory * mem);
static gpointer gst_cuconv_host_memory_map (GstMemory * mem, gsize maxsize,
    GstMapFlags flags);
static void gst_cuconv_host_memory_unmap (GstMemory * mem);
static GstMemory *gst_cuconv_host_memory_share (GstMemory * mem, gssize offset,
    gssize size);
static GstMemory *gst_cuconv_host_memory_copy (GstMemory * mem, gssize offset,
    gssize size);
static gboolean gst_cuconv_host_memory_is_span (GstMemory * mem1,
    GstMemory * mem2, gsize * offset);

#define gst_cuconv_host_allocator_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstCuconvHostAllocator, gst_cuconv_host_allocator,
    GST_TYPE_ALLOCATOR,
    GST_DEBUG_CATEGORY_INIT (gst_cuconv_host_allocator_debug,
        "cuconvhostallocator", 0, "Page-locked host memory for CUDA uploads"));

static void
gst_cuconv_host_allocator_class_init (GstCuconvHostAllocatorClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  gobject_class->finalize = gst_cuconv_host_allocator_finalize;

  allocator_class->alloc = GST_DEBUG_FUNCPTR (gst_cuconv_host_allocator_alloc);
  allocator_class->free = GST_DEBUG_FUNCPTR (gst_cuconv_host_allocator_free);
}

static void
gst_cuconv_host_allocator_init (GstCuconvHostAllocator * self)
{
  GstAllocator *allocator = GST_ALLOCATOR (self);

  allocator->mem_type = GST_CUCONV_HOST_MEMORY_TYPE_NAME;
  allocator->mem_map = gst_cuconv_host_memory_map;
  allocator->mem_unmap = gst_cuconv_host_memory_unmap;
  allocator->mem_share = gst_cuconv_host_memory_share;
  allocator->mem_copy = gst_cuconv_host_memory_copy;
  allocator->mem_is_span = gst_cuconv_host_memory_is_span;
  self->device_id = -1;
}

static void
gst_cuconv_host_allocator_finalize (GObject * object)
{
  GstCuconvHostAllocator *self = GST_CUCONV_HOST_ALLOCATOR (object);

  /* Every block is freed by now: each held a reference to us. */
  GST_DEBUG_OBJECT (self, "done with device %d", self->device_id);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/**
 * gst_cuconv_host_allocator_new:
 * @device_id: the CUDA device the memory is for
 * @err: where a sentence for the user goes on failure
 * @err_len: the size of @err
 *
 * The allocator does not need its creator afterwards.
 *
 * Returns: (transfer full) (nullable): an allocator of page-locked host
 * memory, or %NULL with @err filled when there is no such device.
 */
GstAllocator *
gst_cuconv_host_allocator_new (gint device_id, gchar * err, gsize err_len)
{
  GstCuconvHostAllocator *self;
  const int n = cuconv_device_count ();

  if (device_id < 0 || device_id >= n) {
    g_snprintf (err, err_len, "CUDA device %d does not exist (%d found)",
        device_id, n);
    return NULL;
  }

  self = g_object_new (GST_TYPE_CUCONV_HOST_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->device_id = device_id;
  GST_DEBUG_OBJECT (self, "page-locked memory for CUDA device %d", device_id);

  return GST_ALLOCATOR (self);
}

/**
 * gst_is_cuconv_host_memory:
 * @mem: a #GstMemory
 *
 * Returns: whether @mem is page-locked memory from a #GstCuconvHostAllocator.
 */
gboolean
gst_is_cuconv_host_memory (GstMemory * mem)
{
  return mem && mem->allocator &&
      GST_IS_CUCONV_HOST_ALLOCATOR (mem->allocator);
}

static GstCuconvHostMemory *
gst_cuconv_host_memory_new (GstAllocator * allocator, GstMemoryFlags flags,
    GstMemory * parent, gpointer block, guint8 * data, gsize maxsize,
    gsize align, gsize offset, gsize size)
{
  GstCuconvHostMemory *mem = g_new0 (GstCuconvHostMemory, 1);

  gst_memory_init (GST_MEMORY_CAST (mem), flags, allocator, parent, maxsize,
      align, offset, size);
  mem->block = block;
  mem->data = data;
  return mem;
}

/* Like the system memory allocator: maxsize = prefix + size + padding,
 * aligned to params->align, with the prefix and padding zeroed when the
 * flags ask for it. */
static GstMemory *
gst_cuconv_host_allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstCuconvHostAllocator *self = GST_CUCONV_HOST_ALLOCATOR (allocator);
  gsize align = params->align | gst_memory_alignment;
  gsize maxsize = size + params->prefix + params->padding;
  gsize padding;
  guint8 *block, *data;
  guintptr misalign;

  /* The runtime returns page-aligned blocks; the extra align bytes cover
   * any larger alignment asked for. */
  block = cuconv_cuda_host_alloc (self->device_id, maxsize + align);
  if (!block)
    goto alloc_failed;

  data = block;
  misalign = (guintptr) data & align;
  if (misalign)
    data += align + 1 - misalign;

  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset (data, 0, params->prefix);
  padding = maxsize - (params->prefix + size);
  if (padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset (data + params->prefix + size, 0, padding);

  GST_LOG_OBJECT (self, "%" G_GSIZE_FORMAT " bytes at %p", maxsize, data);
  return GST_MEMORY_CAST (gst_cuconv_host_memory_new (allocator, params->flags,
          NULL, block, data, maxsize, align, params->prefix, size));

  /* ERRORS */
alloc_failed:
  {
    GST_WARNING_OBJECT (self, "cannot allocate %" G_GSIZE_FORMAT " bytes of "
        "page-locked memory on device %d", maxsize + align, self->device_id);
    return NULL;
  }
}

static void
gst_cuconv_host_allocator_free (GstAllocator * allocator, GstMemory * mem)
{
  GstCuconvHostMemory *hmem = (GstCuconvHostMemory *) mem;

  /* A shared memory only drops its reference on the parent, which
   * GstMemory does for us. */
  if (hmem->block)
    cuconv_cuda_host_free (hmem->block);
  g_free (hmem);
}

/* Host memory is always mapped: the data pointer is the mapping. */
static gpointer
gst_cuconv_host_memory_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((GstCuconvHostMemory *) mem)->data;
}

static void
gst_cuconv_host_memory_unmap (GstMemory * mem)
{
}

/* A read-only view of part of mem, on the same block (no copy). */
static GstMemory *
gst_cuconv_host_memory_share (GstMemory * mem, gssize offset, gssize size)
{
  GstCuconvHostMemory *hmem = (GstCuconvHostMemory *) mem;
  GstMemory *parent = mem->parent ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;

  return GST_MEMORY_CAST (gst_cuconv_host_memory_new (mem->allocator,
          GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
          parent, NULL, hmem->data, mem->maxsize, mem->align,
          mem->offset + offset, size));
}

/* A new block, page-locked again when possible so that a copy uploads as
 * fast as the original; system memory when no more can be pinned. */
static GstMemory *
gst_cuconv_host_memory_copy (GstMemory * mem, gssize offset, gssize size)
{
  GstCuconvHostMemory *hmem = (GstCuconvHostMemory *) mem;
  GstAllocationParams params = { 0, mem->align, 0, 0, };
  GstMemory *copy;
  GstMapInfo map;

  if (size == -1)
    size = mem->size > (gsize) offset ? mem->size - offset : 0;

  copy = gst_allocator_alloc (mem->allocator, size, &params);
  if (!copy)
    copy = gst_allocator_alloc (NULL, size, &params);
  if (!copy)
    return NULL;
  if (!gst_memory_map (copy, &map, GST_MAP_WRITE)) {
    gst_memory_unref (copy);
    return NULL;
  }
  memcpy (map.data, hmem->data + mem->offset + offset, size);
  gst_memory_unmap (copy, &map);

  return copy;
}

/* Called for memories sharing one parent: contiguous when mem2 starts
 * where mem1 ends. */
static gboolean
gst_cuconv_host_memory_is_span (GstMemory * mem1, GstMemory * mem2,
    gsize * offset)
{
  GstCuconvHostMemory *hmem1 = (GstCuconvHostMemory *) mem1;
  GstCuconvHostMemory *hmem2 = (GstCuconvHostMemory *) mem2;

  if (offset)
    *offset = mem1->offset - mem1->parent->offset;

  return hmem1->data + mem1->offset + mem1->size ==
      hmem2->data + mem2->offset;
}
