/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The watch that lets GstCudaVideoFilter hold a frame only while frames
 * keep coming: a thread that sleeps until an arm outlives the timeout.
 * Arming and disarming cost a mutex, and a signal only when the thread
 * sleeps without a deadline, which it does only once the last arm's
 * deadline has passed disarmed: cheap enough for every frame.  A disarm
 * leaves the deadline as it is, so that arms and disarms a frame apart
 * neither signal nor wake the thread. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudavideofilteridle.h"

struct _GstCudaVideoFilterIdle
{
  GMutex lock;
  GCond cond;
  GThread *thread;              /* from the first arm */
  gchar *name;
  GstCudaVideoFilterIdleFunc func;
  gpointer data;
  gint64 timeout_us;

  /* Under lock. */
  gboolean running;             /* FALSE: the thread is to end */
  gboolean sleeping;            /* the thread waits for an arm */
  gboolean armed;
  gint64 deadline;              /* of the last arm, g_get_monotonic_time () */
  guint serial;                 /* of the last arm or disarm */
  guint wakes;                  /* of the thread (the tests') */
};

GstCudaVideoFilterIdle *
gst_cuda_video_filter_idle_new (const gchar * name,
    GstCudaVideoFilterIdleFunc func, gpointer data, gint64 timeout_us)
{
  GstCudaVideoFilterIdle *idle = g_new0 (GstCudaVideoFilterIdle, 1);

  g_mutex_init (&idle->lock);
  g_cond_init (&idle->cond);
  idle->name = g_strdup (name);
  idle->func = func;
  idle->data = data;
  idle->timeout_us = timeout_us;
  idle->running = TRUE;
  return idle;
}

void
gst_cuda_video_filter_idle_stop (GstCudaVideoFilterIdle * idle)
{
  GThread *thread;

  g_mutex_lock (&idle->lock);
  thread = g_steal_pointer (&idle->thread);
  idle->running = FALSE;
  g_cond_signal (&idle->cond);
  g_mutex_unlock (&idle->lock);
  if (thread)
    g_thread_join (thread);

  g_mutex_lock (&idle->lock);
  idle->running = TRUE;
  idle->armed = FALSE;
  g_mutex_unlock (&idle->lock);
}

void
gst_cuda_video_filter_idle_free (GstCudaVideoFilterIdle * idle)
{
  if (!idle)
    return;
  gst_cuda_video_filter_idle_stop (idle);
  g_mutex_clear (&idle->lock);
  g_cond_clear (&idle->cond);
  g_free (idle->name);
  g_free (idle);
}

/* Sleeps until an arm runs out, calls func without the lock, again; waits
 * without a deadline only once the last arm's has passed disarmed. */
static gpointer
gst_cuda_video_filter_idle_loop (gpointer data)
{
  GstCudaVideoFilterIdle *idle = data;
  guint serial;

  g_mutex_lock (&idle->lock);
  while (idle->running) {
    idle->wakes++;
    if (g_get_monotonic_time () < idle->deadline) {
      g_cond_wait_until (&idle->cond, &idle->lock, idle->deadline);
    } else if (!idle->armed) {
      idle->sleeping = TRUE;
      g_cond_wait (&idle->cond, &idle->lock);
      idle->sleeping = FALSE;
    } else {
      idle->armed = FALSE;
      serial = idle->serial;
      g_mutex_unlock (&idle->lock);
      idle->func (idle->data, serial);
      g_mutex_lock (&idle->lock);
    }
  }
  g_mutex_unlock (&idle->lock);
  return NULL;
}

void
gst_cuda_video_filter_idle_arm (GstCudaVideoFilterIdle * idle)
{
  g_mutex_lock (&idle->lock);
  if (!idle->thread)
    idle->thread = g_thread_new (idle->name, gst_cuda_video_filter_idle_loop,
        idle);
  idle->armed = TRUE;
  idle->deadline = g_get_monotonic_time () + idle->timeout_us;
  idle->serial++;
  /* A thread waiting for an earlier deadline wakes then and waits again
   * for this one: a signal per frame would wake it per frame. */
  if (idle->sleeping)
    g_cond_signal (&idle->cond);
  g_mutex_unlock (&idle->lock);
}

void
gst_cuda_video_filter_idle_disarm (GstCudaVideoFilterIdle * idle)
{
  g_mutex_lock (&idle->lock);
  idle->armed = FALSE;
  idle->serial++;
  g_mutex_unlock (&idle->lock);
}

gboolean
gst_cuda_video_filter_idle_is_current (GstCudaVideoFilterIdle * idle,
    guint serial)
{
  gboolean current;

  g_mutex_lock (&idle->lock);
  current = idle->serial == serial;
  g_mutex_unlock (&idle->lock);
  return current;
}

guint
gst_cuda_video_filter_idle_wakes (GstCudaVideoFilterIdle * idle)
{
  guint wakes;

  g_mutex_lock (&idle->lock);
  wakes = idle->wakes;
  g_mutex_unlock (&idle->lock);
  return wakes;
}
