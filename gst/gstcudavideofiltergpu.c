/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* GstCudaVideoFilter's CUDA side, among GStreamer's CUDA elements (nvcodec:
 * cudaupload, cudadownload, nvh264dec, ...): one GstCudaContext shared
 * through GstContext, the process's own for the device when no neighbour
 * and no application gives one; every GPU resource
 * of the element (its stream, the subclass's engine, pinned host memory,
 * CUDA pools) lives in it, so the process holds one context per device
 * and never the runtime's primary context.  The events come from the CUDA
 * runtime, which works in the context current on the thread, as the
 * engine does: GStreamer 1.22's loader has no event calls.
 *
 * Streams and CUDA memory, by GStreamer release:
 * - 1.22 keeps no stream with the memory: a writer finishes its work on a
 *   buffer before pushing it.
 * - From 1.24 a CUDA memory carries the GstCudaStream it is written on,
 *   and a write still pending there is flagged
 *   GST_CUDA_MEMORY_TRANSFER_NEED_SYNC; mapping with GST_MAP_CUDA does not
 *   wait for it.  The element's stream is a GstCudaStream, set on the CUDA
 *   pools it makes (upstream then writes on it, already in order), and
 *   before the kernels read a frame written on another stream, the
 *   element's stream waits for that one on the GPU (an event, no host
 *   wait).  A frame written into CUDA memory goes downstream at once,
 *   flagged: the output memory's stream, and the input's (where upstream
 *   writes next), wait on the GPU for the element's work.
 * Before 1.24, and for memory without a stream, the element pushes a
 * frame only once its work is done (it waits for its stream, or for the
 * event of the frame it pushes), and clears the flag then. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gmodule.h>
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <cuda_runtime_api.h>

#include "gstcudavideofiltergpuprivate.h"
#include "gstcudapinnedallocator.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cuda_video_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_video_filter_debug


GstCudaVideoFilterGpu *
gst_cuda_video_filter_gpu_new (void)
{
  return g_new0 (GstCudaVideoFilterGpu, 1);
}

void
gst_cuda_video_filter_gpu_free (GstCudaVideoFilterGpu * gpu)
{
  gst_cuda_video_filter_gpu_close (gpu);
  g_free (gpu);
}

/* Whether the GStreamer running is release 1.24 or newer, whatever the one
 * built against: what its CUDA allocator lays out is a matter of the
 * library loaded. */
static gboolean
runtime_is_1_24 (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return major > 1 || minor >= 24;
}

#if GST_CHECK_VERSION (1, 24, 0)
/* Built against 1.24 or newer: the stream contract is in the headers. */
static gboolean
stream_contract_ok (void)
{
  return TRUE;
}
#else
/* Built against 1.22 and run on 1.24 or newer, upstream may push CUDA
 * memory whose write is still pending on its stream, a flag and a stream
 * 1.22's headers cannot name.  The library loaded then has
 * gst_cuda_memory_sync () (1.24), found at run time: it waits, on the
 * host, for such a write.  NULL on 1.22, whose writers finish first. */
typedef void (*MemorySync) (GstMemory * mem);

static MemorySync
runtime_memory_sync (void)
{
  static gsize once = 0;
  static MemorySync sync = NULL;

  if (g_once_init_enter (&once)) {
    /* the plugin links the library: it stays loaded */
    GModule *lib = runtime_is_1_24 ()? g_module_open ("libgstcuda-1.0.so.0",
        G_MODULE_BIND_LAZY) : NULL;
    gpointer symbol = NULL;

    if (lib && g_module_symbol (lib, "gst_cuda_memory_sync", &symbol))
      sync = (MemorySync) symbol;
    g_once_init_leave (&once, 1);
  }
  return sync;
}

static gboolean
stream_contract_ok (void)
{
  return !runtime_is_1_24 () || runtime_memory_sync () != NULL;
}
#endif

/* The formats GStreamer's CUDA allocator can lay out, of those the element
 * takes: 1.22's aborts the process on any other (gst_cuda_allocator_alloc),
 * later ones fail the allocation; 1.24 added I420_12LE.  GRAY8, GRAY16_LE
 * and AYUV stay in system memory. */
#define CUDA_MEMORY_FORMATS_1_22 "I420, YV12, I420_10LE, Y42B, I422_10LE, " \
    "I422_12LE, NV12, NV21, P010_10LE, P016_LE, Y444, Y444_16LE, BGRA, " \
    "RGBA, RGBx, BGRx, ARGB, ABGR, RGB, BGR, BGR10A2_LE, RGB10A2_LE"

static GstCaps *
raw_caps (const gchar * features, const gchar * formats)
{
  gchar *s = g_strdup_printf ("video/x-raw%s, format = (string) %s, "
      "width = " GST_VIDEO_SIZE_RANGE ", height = " GST_VIDEO_SIZE_RANGE
      ", framerate = " GST_VIDEO_FPS_RANGE, features, formats);
  GstCaps *caps = gst_caps_from_string (s);

  g_free (s);
  return caps;
}

/* GStreamer 1.22's CUDA allocator places the V plane of a three-plane
 * 4:2:0 frame height / 2 chroma rows after U, rounding down: with an odd
 * height U's last row and V's first are the same memory, and no element
 * can write such a frame correctly.  Those caps stay in system memory
 * there; 1.24's allocator rounds up.  TRUE where the format or the height
 * is not fixed yet. */
static gboolean
layout_ok (const GstStructure * s)
{
  const gchar *format = gst_structure_get_string (s, "format");
  gint height;

  if (runtime_is_1_24 () || !format ||
      !gst_structure_get_int (s, "height", &height) || height % 2 == 0)
    return TRUE;
  return !g_str_equal (format, "I420") && !g_str_equal (format, "YV12") &&
      !g_str_equal (format, "I420_10LE");
}

gboolean
gst_cuda_video_filter_gpu_accept_caps (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstCaps * caps, const GstVideoInfo * info)
{
  if (!gpu->stream) {
    GST_ERROR_OBJECT (element, "CUDA memory negotiated without a context");
    return FALSE;
  }
  if (!stream_contract_ok ()) {
    gchar *running = gst_version_string ();

    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION,
        ("This plugin was built against GStreamer %d.%d and runs on %s, "
            "whose CUDA memory it cannot wait for. Keep this link in system "
            "memory, or build the plugin against the GStreamer it runs on.",
            GST_VERSION_MAJOR, GST_VERSION_MINOR, running), (NULL));
    g_free (running);
    return FALSE;
  }
  if (!layout_ok (gst_caps_get_structure (caps, 0))) {
    GST_ELEMENT_ERROR (element, CORE, NEGOTIATION,
        ("GStreamer's CUDA memory cannot hold %s frames of an odd height "
            "(%d): its chroma planes overlap. Keep this link in system "
            "memory, or use NV12.", GST_VIDEO_INFO_NAME (info),
            GST_VIDEO_INFO_HEIGHT (info)), (NULL));
    return FALSE;
  }
  return TRUE;
}

GstCaps *
gst_cuda_video_filter_gpu_template_caps (const gchar * formats)
{
  const gchar *cuda = "(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY ")";
  gchar *allocator_formats = g_strdup_printf ("{ %s%s }",
      CUDA_MEMORY_FORMATS_1_22, runtime_is_1_24 ()? ", I420_12LE" : "");
  GstCaps *wanted = raw_caps (cuda, formats);
  GstCaps *possible = raw_caps (cuda, allocator_formats);
  GstCaps *caps = gst_caps_intersect (wanted, possible);

  g_free (allocator_formats);
  gst_caps_unref (wanted);
  gst_caps_unref (possible);
  return gst_caps_merge (caps, raw_caps ("", formats));
}

void
gst_cuda_video_filter_gpu_set_context (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstContext * context, gint device_id)
{
  gst_cuda_handle_set_context (element, context, device_id, &gpu->context);
}

/* The element's own context for a device: one for the process, made when
 * an element first needs it and kept until the process ends, as the CUDA
 * runtime keeps its primary context.  Pipelines that share no context
 * through their neighbours or the application then share this one: their
 * work runs side by side on the GPU, where contexts would take turns, the
 * kernels load once, and a pipeline made anew makes no context (one takes
 * tens of milliseconds, under a lock of GStreamer's for the process, and
 * loads every kernel again). */
static GstCudaContext *
process_context (guint device)
{
  static GMutex lock;
  static GPtrArray *contexts;   /* GstCudaContext, one per device */
  GstCudaContext *context = NULL;
  guint i, id;

  g_mutex_lock (&lock);
  if (!contexts)
    contexts = g_ptr_array_new ();
  for (i = 0; i < contexts->len && !context; i++) {
    g_object_get (g_ptr_array_index (contexts, i), "cuda-device-id", &id,
        NULL);
    if (id == device)
      context = g_ptr_array_index (contexts, i);
  }
  if (!context) {
    context = gst_cuda_context_new (device);
    if (context) {
      /* process-wide: the leaks tracer is not to count it */
      GST_OBJECT_FLAG_SET (context, GST_OBJECT_FLAG_MAY_BE_LEAKED);
      g_ptr_array_add (contexts, context);
    }
  }
  g_mutex_unlock (&lock);
  return context ? gst_object_ref (context) : NULL;
}

/* Asks the application for a context with NEED_CONTEXT; an answer lands
 * in gpu->context through set_context (). */
static void
ask_application (GstElement * element)
{
  gst_element_post_message (element, gst_message_new_need_context
      (GST_OBJECT (element), GST_CUDA_CONTEXT_TYPE));
}

/* Asks a peer of element, through pad_name, for its CUDA context; an
 * answer lands in gpu->context through set_context (). */
static void
query_neighbour (GstElement * element, const gchar * pad_name,
    GstQuery * query)
{
  GstPad *pad = gst_element_get_static_pad (element, pad_name);
  GstContext *context = NULL;

  if (pad && gst_pad_peer_query (pad, query)) {
    gst_query_parse_context (query, &context);
    if (context)
      gst_element_set_context (element, context);
  }
  gst_clear_object (&pad);
}

/* The context as GStreamer's CUDA elements find one
 * (gst_cuda_ensure_element_context ()): downstream's, upstream's, or the
 * one the application or a bin sets in answer to NEED_CONTEXT; where
 * there is none, the process's for the device, announced with
 * HAVE_CONTEXT, in place of a new one. */
static gboolean
ensure_context (GstCudaVideoFilterGpu * gpu, GstElement * element,
    gint device_id)
{
  GstQuery *query;
  GstContext *context;

  if (gpu->context)
    return TRUE;
  query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  query_neighbour (element, "src", query);
  if (!gpu->context)
    query_neighbour (element, "sink", query);
  gst_query_unref (query);
  if (!gpu->context)
    ask_application (element);
  if (gpu->context)
    return TRUE;

  gpu->context = process_context (MAX (device_id, 0));
  if (!gpu->context)
    return FALSE;
  context = gst_context_new_cuda_context (gpu->context);
  gst_element_set_context (element, context);
  GST_INFO_OBJECT (element, "no CUDA context around: the process's, %"
      GST_PTR_FORMAT, gpu->context);
  gst_element_post_message (element, gst_message_new_have_context
      (GST_OBJECT (element), context));
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_handle_context_query (GstCudaVideoFilterGpu * gpu,
    GstElement * element, GstQuery * query, gint device_id, gboolean may_make)
{
  GstCudaContext *context;
  const gchar *type = NULL;
  gboolean answered;

  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT)
    return FALSE;
  if (gpu->context)
    return gst_cuda_handle_context_query (element, query, gpu->context);

  /* Not open yet: nvcodec's elements look for a context between NULL and
   * READY, before this element starts, and make one of their own for the
   * pipeline when nobody answers.  The answer is the context this element
   * will take, so that CUDA memory pipelines share the process's too. */
  gst_query_parse_context_type (query, &type);
  if (!may_make || g_strcmp0 (type, GST_CUDA_CONTEXT_TYPE) != 0 ||
      !gst_cuda_load_library ())
    return FALSE;
  ask_application (element);
  if (gpu->context)
    return gst_cuda_handle_context_query (element, query, gpu->context);
  context = process_context (MAX (device_id, 0));
  if (!context)
    return FALSE;
  answered = gst_cuda_handle_context_query (element, query, context);
  gst_object_unref (context);
  return answered;
}

gboolean
gst_cuda_video_filter_gpu_open (GstCudaVideoFilterGpu * gpu,
    GstElement * element, gint device_id, GError ** error)
{
  guint device = 0, i;

  if (gpu->stream)
    return TRUE;
  gpu->tried = TRUE;
  if (!gst_cuda_load_library ())
    goto no_driver;
  /* the CUDA allocator, which nvcodec registers when it is loaded */
  gst_cuda_memory_init_once ();

  /* A neighbour's context for the device, else the process's. */
  if (!ensure_context (gpu, element, device_id))
    goto no_context;

#if GST_CHECK_VERSION (1, 24, 0)
  /* a GstCudaStream, to hand to the pools */
  gpu->cuda_stream = gst_cuda_stream_new (gpu->context);
  if (!gpu->cuda_stream)
    goto no_stream;
  gpu->stream = gst_cuda_stream_get_handle (gpu->cuda_stream);
  if (!gst_cuda_context_push (gpu->context))
    goto no_stream;
#else
  if (!gst_cuda_context_push (gpu->context))
    goto no_stream;
  if (!gst_cuda_result (CuStreamCreate (&gpu->stream,
              CU_STREAM_NON_BLOCKING)))
    gpu->stream = NULL;
#endif
  for (i = 0; i < GST_CUDA_VIDEO_FILTER_GPU_EVENTS && gpu->stream; i++) {
    if (cudaEventCreateWithFlags (&gpu->events[i], cudaEventDisableTiming)
        != cudaSuccess)
      goto no_event;
  }
  if (gpu->stream && (cudaEventCreateWithFlags (&gpu->writer,
              cudaEventDisableTiming) != cudaSuccess ||
          cudaEventCreateWithFlags (&gpu->done,
              cudaEventDisableTiming) != cudaSuccess))
    goto no_event;
  gst_cuda_context_pop (NULL);
  if (!gpu->stream)
    goto no_stream;

  gpu->pinned = gst_cuda_pinned_allocator_new (gpu->context);
  g_object_get (gpu->context, "cuda-device-id", &device, NULL);
  GST_INFO_OBJECT (element, "CUDA context %" GST_PTR_FORMAT " of device %u",
      gpu->context, device);
  return TRUE;

  /* ERRORS */
no_driver:
  {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "No usable CUDA device was found (no GPU, or no NVIDIA driver).");
    return FALSE;
  }
no_context:
  {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "No CUDA context could be made for device %d (no such GPU, or no "
        "NVIDIA driver).", MAX (device_id, 0));
    return FALSE;
  }
no_event:
  {
    gst_cuda_context_pop (NULL);
    goto no_stream;
  }
no_stream:
  {
    gst_cuda_video_filter_gpu_close (gpu);
    gpu->tried = TRUE;
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "Cannot create a CUDA stream in the CUDA context.");
    return FALSE;
  }
}

void
gst_cuda_video_filter_gpu_close (GstCudaVideoFilterGpu * gpu)
{
  guint i;

  if (gpu->stream && gst_cuda_context_push (gpu->context)) {
    for (i = 0; i < GST_CUDA_VIDEO_FILTER_GPU_EVENTS; i++)
      if (gpu->events[i])
        cudaEventDestroy (gpu->events[i]);
    if (gpu->writer)
      cudaEventDestroy (gpu->writer);
    if (gpu->done)
      cudaEventDestroy (gpu->done);
#if !GST_CHECK_VERSION (1, 24, 0)
    gst_cuda_result (CuStreamDestroy (gpu->stream));
#endif
    gst_cuda_context_pop (NULL);
  }
  memset (gpu->events, 0, sizeof (gpu->events));
  gpu->writer = gpu->done = NULL;
  gpu->stream = NULL;
  /* Pools and buffers in flight hold their own references to these. */
#if GST_CHECK_VERSION (1, 24, 0)
  gst_clear_cuda_stream (&gpu->cuda_stream);
  gst_clear_cuda_stream (&gpu->out_stream);
#endif
  gst_clear_object (&gpu->pinned);
  gst_clear_object (&gpu->context);
  gpu->tried = FALSE;
}

gboolean
gst_cuda_video_filter_gpu_is_open (GstCudaVideoFilterGpu * gpu)
{
  return gpu->stream != NULL;
}

gboolean
gst_cuda_video_filter_gpu_can_offer (GstCudaVideoFilterGpu * gpu)
{
  return !gpu->tried || gpu->stream != NULL;
}

gboolean
gst_cuda_video_filter_gpu_push (GstCudaVideoFilterGpu * gpu)
{
  return gpu->context && gst_cuda_context_push (gpu->context);
}

void
gst_cuda_video_filter_gpu_pop (GstCudaVideoFilterGpu * gpu)
{
  gst_cuda_context_pop (NULL);
}

gpointer
gst_cuda_video_filter_gpu_stream (GstCudaVideoFilterGpu * gpu)
{
  return gpu->stream;
}

gboolean
gst_cuda_video_filter_gpu_sync (GstCudaVideoFilterGpu * gpu, gpointer stream,
    GError ** error)
{
  CUresult cr = CuStreamSynchronize (stream ? stream : gpu->stream);
  const gchar *name = NULL;

  if (cr == CUDA_SUCCESS)
    return TRUE;
  CuGetErrorName (cr, &name);
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED,
      "the GPU failed while filtering (%s)", GST_STR_NULL (name));
  return FALSE;
}

static void
set_event_error (GError ** error, cudaError_t e)
{
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED,
      "the GPU failed while filtering (%s)", cudaGetErrorName (e));
  /* an error of the call itself, not of the GPU's work, would stay */
  cudaGetLastError ();
}

gboolean
gst_cuda_video_filter_gpu_record (GstCudaVideoFilterGpu * gpu, guint slot,
    GError ** error)
{
  cudaError_t e;

  g_return_val_if_fail (slot < GST_CUDA_VIDEO_FILTER_GPU_EVENTS, FALSE);
  e = cudaEventRecord (gpu->events[slot], (cudaStream_t) gpu->stream);
  if (e == cudaSuccess)
    return TRUE;
  set_event_error (error, e);
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_wait (GstCudaVideoFilterGpu * gpu, guint slot,
    GError ** error)
{
  cudaError_t e;

  g_return_val_if_fail (slot < GST_CUDA_VIDEO_FILTER_GPU_EVENTS, FALSE);
  if (!gst_cuda_context_push (gpu->context)) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED,
        "cannot make the CUDA context current");
    return FALSE;
  }
  e = cudaEventSynchronize (gpu->events[slot]);
  if (e != cudaSuccess)
    set_event_error (error, e);
  gst_cuda_context_pop (NULL);
  return e == cudaSuccess;
}

gboolean
gst_cuda_video_filter_gpu_caps_are_cuda (GstCaps * caps)
{
  GstCapsFeatures *features;

  if (!caps || gst_caps_get_size (caps) == 0)
    return FALSE;
  features = gst_caps_get_features (caps, 0);
  return features && gst_caps_features_contains (features,
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

GstCaps *
gst_cuda_video_filter_gpu_transform_caps (GstCaps * caps, gboolean offer_cuda)
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
      if ((!offer_cuda || !layout_ok
              (gst_caps_get_structure (caps, i))) && g_str_equal (features[f],
              GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
        continue;
      ret = gst_caps_merge_structure_full (ret,
          gst_structure_copy (gst_caps_get_structure (caps, i)),
          gst_caps_features_new (features[f], NULL));
    }
  }
  return ret;
}

static gboolean
memory_is_local (GstMemory * mem, GstCudaContext * context)
{
  return gst_is_cuda_memory (mem) &&
      GST_CUDA_MEMORY_CAST (mem)->context == context;
}

/* Whether buffer has memory, all of it `ours' for the context. */
static gboolean
buffer_is_all (GstCudaVideoFilterGpu * gpu, GstBuffer * buffer,
    gboolean (*ours) (GstMemory *, GstCudaContext *))
{
  guint i, n = gst_buffer_n_memory (buffer);

  if (n == 0)
    return FALSE;
  for (i = 0; i < n; i++)
    if (!ours (gst_buffer_peek_memory (buffer, i), gpu->context))
      return FALSE;
  return TRUE;
}

gboolean
gst_cuda_video_filter_gpu_buffers_are_local (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  return gpu->stream && buffer_is_all (gpu, inbuf, memory_is_local) &&
      buffer_is_all (gpu, outbuf, memory_is_local);
}

gboolean
gst_cuda_video_filter_gpu_buffers_are_pinned (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  return gpu->stream && buffer_is_all (gpu, inbuf,
      gst_is_cuda_pinned_memory_of) && buffer_is_all (gpu, outbuf,
      gst_is_cuda_pinned_memory_of);
}

gboolean
gst_cuda_video_filter_gpu_wait_for_writers (GstCudaVideoFilterGpu * gpu,
    GstBuffer * buffer, gpointer stream, GError ** error)
{
#if GST_CHECK_VERSION (1, 24, 0)
  guint i;

  for (i = 0; i < gst_buffer_n_memory (buffer); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    GstCudaStream *writer;
    cudaStream_t handle;
    cudaError_t e;

    if (!gst_is_cuda_memory (mem) ||
        !GST_MEMORY_FLAG_IS_SET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC))
      continue;
    /* no stream: the writer finished (1.22's contract); this one: in
     * order */
    writer = gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem));
    if (!writer || gst_cuda_stream_get_handle (writer) == stream)
      continue;
    handle = (cudaStream_t) gst_cuda_stream_get_handle (writer);
    /* an event captures the work enqueued on the writer's stream so far,
     * and the wait takes it at once: the event is free again after */
    e = cudaEventRecord (gpu->writer, handle);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent ((cudaStream_t) stream, gpu->writer, 0);
    if (e != cudaSuccess) {
      set_event_error (error, e);
      return FALSE;
    }
  }
#else
  MemorySync sync = runtime_memory_sync ();
  guint i;

  for (i = 0; sync && i < gst_buffer_n_memory (buffer); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);

    if (gst_is_cuda_memory (mem))
      sync (mem);
  }
#endif
  return TRUE;
}

void
gst_cuda_video_filter_gpu_mark_done (GstCudaVideoFilterGpu * gpu,
    GstBuffer * buffer)
{
#if GST_CHECK_VERSION (1, 24, 0)
  guint i;

  for (i = 0; i < gst_buffer_n_memory (buffer); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);

    if (gst_is_cuda_memory (mem))
      GST_MEMORY_FLAG_UNSET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
  }
#endif
}

#if GST_CHECK_VERSION (1, 24, 0)
/* The stream every memory of buffer carries, NULL where one has none or
 * they differ. */
static GstCudaStream *
buffer_stream (GstBuffer * buffer)
{
  GstCudaStream *stream = NULL;
  guint i, n = gst_buffer_n_memory (buffer);

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    GstCudaStream *s;

    if (!gst_is_cuda_memory (mem))
      return NULL;
    s = gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem));
    if (!s || (stream && s != stream))
      return NULL;
    stream = s;
  }
  return stream;
}
#endif

gpointer
gst_cuda_video_filter_gpu_frame_stream (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
#if GST_CHECK_VERSION (1, 24, 0)
  GstCudaStream *out = buffer_stream (outbuf);

  if (out && buffer_stream (inbuf))
    return gst_cuda_stream_get_handle (out);
#endif
  return NULL;
}

gboolean
gst_cuda_video_filter_gpu_hand_over (GstCudaVideoFilterGpu * gpu,
    GstBuffer * inbuf, gpointer stream, GError ** error)
{
#if GST_CHECK_VERSION (1, 24, 0)
  cudaStream_t in = (cudaStream_t)
      gst_cuda_stream_get_handle (buffer_stream (inbuf));
  cudaError_t e = cudaSuccess;

  /* the event captures the frame's work, the wait takes it at once */
  if (in != (cudaStream_t) stream) {
    e = cudaEventRecord (gpu->done, (cudaStream_t) stream);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent (in, gpu->done, 0);
  }
  if (e == cudaSuccess)
    return TRUE;
  set_event_error (error, e);
#endif
  return FALSE;
}

gboolean
gst_cuda_video_filter_gpu_map_frame (GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buffer, GstMapFlags flags)
{
  guint i, n;

  if (!gst_video_frame_map (frame, (GstVideoInfo *) info, buffer,
          flags | GST_MAP_CUDA))
    return FALSE;
  /* GStreamer maps a plane that spans several memories (or a buffer
   * without a video meta held in several) as a merged copy in system
   * memory, whatever the flags: only what lies in one CUDA memory is on
   * the device */
  n = frame->meta ? GST_VIDEO_FRAME_N_PLANES (frame) : 1;
  for (i = 0; i < n; i++) {
    if (!gst_is_cuda_memory (frame->map[i].memory)) {
      gst_video_frame_unmap (frame);
      return FALSE;
    }
  }
  return TRUE;
}
