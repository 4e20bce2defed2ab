/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/*
 * GstCudaPinnedAllocator: page-locked (pinned) host memory of a
 * GstCudaContext, for the buffer pools a GstCudaVideoFilter proposes
 * upstream and uses for its output.  The memory behaves exactly like
 * system memory (always mapped, shareable, copyable), so any element can
 * read and write it; the GPU copies it to and from the device by DMA,
 * without a staging copy.
 *
 * The allocator holds a reference to the context and pushes it to
 * allocate and to free, as gstcudamemory.c does: no primary context.
 * Every GstMemory holds a reference to its allocator, so buffers handed
 * to other elements keep the context alive, after the element stopped or
 * was disposed, until the last block is freed.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudautils.h>

#include "gstcudapinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_pinned_allocator_debug);
#define GST_CAT_DEFAULT gst_cuda_pinned_allocator_debug

typedef struct
{
  GstMemory mem;

  /* What CuMemAllocHost () returned, for freeing; NULL in a memory
   * shared from another, which owns the block. */
  gpointer block;
  /* The maxsize bytes of the memory, aligned as asked, inside the block. */
  guint8 *data;
} GstCudaPinnedMemory;

struct _GstCudaPinnedAllocator
{
  GstAllocator parent;

  GstCudaContext *context;
};

static void gst_cuda_pinned_allocator_finalize (GObject * object);
static GstMemory *gst_cuda_pinned_allocator_alloc (GstAllocator * allocator,
    gsize size, GstAllocationParams * params);
static void gst_cuda_pinned_allocator_free (GstAllocator * allocator,
    GstMemory * mem);
static gpointer gst_cuda_pinned_memory_map (GstMemory * mem, gsize maxsize,
    GstMapFlags flags);
static void gst_cuda_pinned_memory_unmap (GstMemory * mem);
static GstMemory *gst_cuda_pinned_memory_share (GstMemory * mem, gssize offset,
    gssize size);
static GstMemory *gst_cuda_pinned_memory_copy (GstMemory * mem, gssize offset,
    gssize size);
static gboolean gst_cuda_pinned_memory_is_span (GstMemory * mem1,
    GstMemory * mem2, gsize * offset);

#define gst_cuda_pinned_allocator_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstCudaPinnedAllocator, gst_cuda_pinned_allocator,
    GST_TYPE_ALLOCATOR,
    GST_DEBUG_CATEGORY_INIT (gst_cuda_pinned_allocator_debug,
        "cudapinnedallocator", 0,
        "Page-locked host memory of a CUDA context"));

static void
gst_cuda_pinned_allocator_class_init (GstCudaPinnedAllocatorClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  gobject_class->finalize = gst_cuda_pinned_allocator_finalize;

  allocator_class->alloc = GST_DEBUG_FUNCPTR (gst_cuda_pinned_allocator_alloc);
  allocator_class->free = GST_DEBUG_FUNCPTR (gst_cuda_pinned_allocator_free);
}

static void
gst_cuda_pinned_allocator_init (GstCudaPinnedAllocator * self)
{
  GstAllocator *allocator = GST_ALLOCATOR (self);

  allocator->mem_type = GST_CUDA_PINNED_MEMORY_TYPE_NAME;
  allocator->mem_map = gst_cuda_pinned_memory_map;
  allocator->mem_unmap = gst_cuda_pinned_memory_unmap;
  allocator->mem_share = gst_cuda_pinned_memory_share;
  allocator->mem_copy = gst_cuda_pinned_memory_copy;
  allocator->mem_is_span = gst_cuda_pinned_memory_is_span;
}

static void
gst_cuda_pinned_allocator_finalize (GObject * object)
{
  GstCudaPinnedAllocator *self = GST_CUDA_PINNED_ALLOCATOR (object);

  /* Every block is freed by now: each held a reference to us. */
  GST_DEBUG_OBJECT (self, "done with %" GST_PTR_FORMAT, self->context);
  gst_clear_object (&self->context);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/**
 * gst_cuda_pinned_allocator_new:
 * @context: the #GstCudaContext the memory belongs to
 *
 * The allocator keeps @context alive for as long as it or any of its
 * memory lives.
 *
 * Returns: (transfer full): an allocator of page-locked host memory of
 * @context.
 */
GstAllocator *
gst_cuda_pinned_allocator_new (GstCudaContext * context)
{
  GstCudaPinnedAllocator *self;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);

  self = g_object_new (GST_TYPE_CUDA_PINNED_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->context = gst_object_ref (context);
  GST_DEBUG_OBJECT (self, "page-locked memory of %" GST_PTR_FORMAT, context);

  return GST_ALLOCATOR (self);
}

/**
 * gst_is_cuda_pinned_memory:
 * @mem: a #GstMemory
 *
 * Returns: whether @mem is page-locked memory from a #GstCudaPinnedAllocator.
 */
gboolean
gst_is_cuda_pinned_memory (GstMemory * mem)
{
  return mem && mem->allocator &&
      GST_IS_CUDA_PINNED_ALLOCATOR (mem->allocator);
}

/**
 * gst_is_cuda_pinned_memory_of:
 * @mem: a #GstMemory
 * @context: a #GstCudaContext
 *
 * Returns: whether @mem is page-locked memory of @context, which the GPU
 * reads and writes by DMA in that context.
 */
gboolean
gst_is_cuda_pinned_memory_of (GstMemory * mem, GstCudaContext * context)
{
  return gst_is_cuda_pinned_memory (mem) &&
      GST_CUDA_PINNED_ALLOCATOR (mem->allocator)->context == context;
}

static GstCudaPinnedMemory *
gst_cuda_pinned_memory_new (GstAllocator * allocator, GstMemoryFlags flags,
    GstMemory * parent, gpointer block, guint8 * data, gsize maxsize,
    gsize align, gsize offset, gsize size)
{
  GstCudaPinnedMemory *mem = g_new0 (GstCudaPinnedMemory, 1);

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
gst_cuda_pinned_allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstCudaPinnedAllocator *self = GST_CUDA_PINNED_ALLOCATOR (allocator);
  gsize align = params->align | gst_memory_alignment;
  gsize maxsize = size + params->prefix + params->padding;
  gsize padding;
  guint8 *block, *data;
  guintptr misalign;

  /* The driver returns page-aligned blocks; the extra align bytes cover
   * any larger alignment asked for. */
  if (!gst_cuda_context_push (self->context))
    goto alloc_failed;
  if (!gst_cuda_result (CuMemAllocHost ((void **) &block, maxsize + align)))
    block = NULL;
  gst_cuda_context_pop (NULL);
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
  return GST_MEMORY_CAST (gst_cuda_pinned_memory_new (allocator, params->flags,
          NULL, block, data, maxsize, align, params->prefix, size));

  /* ERRORS */
alloc_failed:
  {
    GST_WARNING_OBJECT (self, "cannot allocate %" G_GSIZE_FORMAT " bytes of "
        "page-locked memory in %" GST_PTR_FORMAT, maxsize + align,
        self->context);
    return NULL;
  }
}

static void
gst_cuda_pinned_allocator_free (GstAllocator * allocator, GstMemory * mem)
{
  GstCudaPinnedAllocator *self = GST_CUDA_PINNED_ALLOCATOR (allocator);
  GstCudaPinnedMemory *hmem = (GstCudaPinnedMemory *) mem;

  /* A shared memory only drops its reference on the parent, which
   * GstMemory does for us. */
  if (hmem->block && gst_cuda_context_push (self->context)) {
    gst_cuda_result (CuMemFreeHost (hmem->block));
    gst_cuda_context_pop (NULL);
  } else if (hmem->block) {
    GST_ERROR_OBJECT (self, "cannot free %p: the context cannot be pushed",
        hmem->block);
  }
  g_free (hmem);
}

/* Host memory is always mapped: the data pointer is the mapping. */
static gpointer
gst_cuda_pinned_memory_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((GstCudaPinnedMemory *) mem)->data;
}

static void
gst_cuda_pinned_memory_unmap (GstMemory * mem)
{
}

/* A read-only view of part of mem, on the same block (no copy). */
static GstMemory *
gst_cuda_pinned_memory_share (GstMemory * mem, gssize offset, gssize size)
{
  GstCudaPinnedMemory *hmem = (GstCudaPinnedMemory *) mem;
  GstMemory *parent = mem->parent ? mem->parent : mem;

  if (size == -1)
    size = mem->size - offset;

  return GST_MEMORY_CAST (gst_cuda_pinned_memory_new (mem->allocator,
          GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
          parent, NULL, hmem->data, mem->maxsize, mem->align,
          mem->offset + offset, size));
}

/* A new block, page-locked again when possible so that a copy uploads as
 * fast as the original; system memory when no more can be pinned. */
static GstMemory *
gst_cuda_pinned_memory_copy (GstMemory * mem, gssize offset, gssize size)
{
  GstCudaPinnedMemory *hmem = (GstCudaPinnedMemory *) mem;
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
gst_cuda_pinned_memory_is_span (GstMemory * mem1, GstMemory * mem2,
    gsize * offset)
{
  GstCudaPinnedMemory *hmem1 = (GstCudaPinnedMemory *) mem1;
  GstCudaPinnedMemory *hmem2 = (GstCudaPinnedMemory *) mem2;

  if (offset)
    *offset = mem1->offset - mem1->parent->offset;

  return hmem1->data + mem1->offset + mem1->size ==
      hmem2->data + mem2->offset;
}
