/* gst-cudaconvolve: the GPU memory in use, as the CUDA driver reports it,
 * for the load tests that bound or print it (cycles, soak): nvidia-smi
 * reports nothing on some hosts (containers).  The figure is the device's,
 * every process's together: bound it only where nothing else runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GPU_MEMORY_H__
#define __GPU_MEMORY_H__

#include <glib.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* kB in use on device 0; -1 without CUDA or a usable device.  The first
 * call makes the CUDA runtime's context of the process: call it once
 * before the figure that others are compared with. */
static inline gint64
gpu_memory_used_kb (void)
{
#ifdef HAVE_CUDA
  size_t free_bytes, total_bytes;

  if (cudaMemGetInfo (&free_bytes, &total_bytes) == cudaSuccess)
    return (gint64) ((total_bytes - free_bytes) / 1024);
  cudaGetLastError ();
#endif
  return -1;
}

/* kb (gpu_memory_used_kb ()) for a line of output, in buf: "123 kB", or
 * "none (no CUDA device)" instead of a figure that is none. */
static inline const gchar *
gpu_memory_text (gint64 kb, gchar * buf, gsize len)
{
  if (kb < 0)
    g_strlcpy (buf, "none (no CUDA device)", len);
  else
    g_snprintf (buf, len, "%8" G_GINT64_FORMAT " kB", kb);
  return buf;
}

#endif /* __GPU_MEMORY_H__ */
