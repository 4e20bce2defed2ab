/* gst-cudaconvolve: the process's memory as the kernel reports it, for the
 * tests and tools that bound or print it (test-robustness, soak, cycles).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __PROC_STATUS_H__
#define __PROC_STATUS_H__

#include <string.h>

#include <glib.h>

/* A kB field ("VmRSS", "VmHWM", "VmPeak") of /proc/self/status; 0 when
 * it cannot be read. */
static inline guint64
proc_status_read_kb (const gchar * field)
{
  gchar *contents = NULL, **lines;
  guint64 kb = 0;
  gsize len = strlen (field);
  guint i;

  if (!g_file_get_contents ("/proc/self/status", &contents, NULL, NULL))
    return 0;
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i]; i++)
    if (strncmp (lines[i], field, len) == 0 && lines[i][len] == ':')
      kb = g_ascii_strtoull (lines[i] + len + 1, NULL, 10);
  g_strfreev (lines);
  g_free (contents);
  return kb;
}

/* Under valgrind, compute-sanitizer or AddressSanitizer the process's
 * memory is the tool's (ASan's quarantine keeps freed blocks): bounds on
 * it mean nothing there, and the tools' own checks do that job.
 * compute-sanitizer injects itself through CUDA_INJECTION64_PATH. */
static inline gboolean
proc_status_under_memory_tool (void)
{
  const gchar *preload = g_getenv ("LD_PRELOAD");

#if defined (__SANITIZE_ADDRESS__)
  return TRUE;
#elif defined (__has_feature)
#if __has_feature (address_sanitizer)
  return TRUE;
#endif
#endif
  return (preload && strstr (preload, "vgpreload") != NULL) ||
      g_getenv ("CUDA_INJECTION64_PATH") != NULL;
}

#endif /* __PROC_STATUS_H__ */
