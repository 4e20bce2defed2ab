/* gst-cudaconvolve: the CPU's band threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The threads that filter a frame's bands of rows on the CPU backend: one
 * GThreadPool for the process, a thread a processor, made when bands
 * first need it and kept until the process ends (as the process's CUDA
 * context is), and the calling thread, which takes band 0 and then waits
 * for the others.  A stream of frames that stops and starts again (a
 * pipeline restarted, an element made anew) makes no threads: threads
 * made at every start and ended at every stop, a processor's worth each
 * time, leave the C library's per-thread memory behind, which grew a
 * process on 16 processors by several KiB a start. */

#include <unistd.h>

#include "cuconv-bands.h"

/* One band of a job, as the pool gets it. */
typedef struct
{
  CuconvBands *bands;
  guint band;
} Task;

struct _CuconvBands
{
  guint n_bands;
  Task *tasks;                  /* bands 1 .. n_bands - 1 */

  /* The job in progress, under lock. */
  GMutex lock;
  GCond done;
  CuconvBandFunc func;
  gpointer data;
  guint pending;
  gboolean ok;
};

static void
run_band (gpointer task_ptr, gpointer user_data)
{
  const Task *task = task_ptr;
  CuconvBands *bands = task->bands;
  gboolean ok = bands->func (task->band, bands->data);

  g_mutex_lock (&bands->lock);
  bands->ok &= ok;
  if (--bands->pending == 0)
    g_cond_signal (&bands->done);
  g_mutex_unlock (&bands->lock);
}

/* The process's pool, or NULL when GLib cannot make its threads.  A
 * child process after fork () has none of its parent's threads: it makes
 * a pool of its own. */
static GThreadPool *
process_pool (void)
{
  static GMutex lock;
  static GThreadPool *pool;
  static pid_t owner;
  GThreadPool *p;

  g_mutex_lock (&lock);
  if (!pool || owner != getpid ()) {
    pool = g_thread_pool_new (run_band, NULL, g_get_num_processors (), TRUE,
        NULL);
    owner = getpid ();
  }
  p = pool;
  g_mutex_unlock (&lock);
  return p;
}

CuconvBands *
cuconv_bands_new (guint n_bands)
{
  CuconvBands *bands = g_new0 (CuconvBands, 1);
  guint b;

  bands->n_bands = MAX (n_bands, 1);
  /* without threads, one band */
  if (bands->n_bands > 1 && !process_pool ())
    bands->n_bands = 1;
  bands->tasks = g_new (Task, bands->n_bands);
  for (b = 0; b < bands->n_bands; b++)
    bands->tasks[b] = (Task) {
    bands, b};
  g_mutex_init (&bands->lock);
  g_cond_init (&bands->done);
  return bands;
}

void
cuconv_bands_free (CuconvBands * bands)
{
  if (!bands)
    return;
  g_free (bands->tasks);
  g_mutex_clear (&bands->lock);
  g_cond_clear (&bands->done);
  g_free (bands);
}

guint
cuconv_bands_n (const CuconvBands * bands)
{
  return bands->n_bands;
}

gboolean
cuconv_bands_run (CuconvBands * bands, CuconvBandFunc func,
    gpointer data)
{
  GThreadPool *pool = bands->n_bands > 1 ? process_pool () : NULL;
  gboolean ok;
  guint b;

  bands->func = func;
  bands->data = data;
  bands->ok = TRUE;
  bands->pending = bands->n_bands - 1;
  for (b = 1; b < bands->n_bands; b++)
    g_thread_pool_push (pool, &bands->tasks[b], NULL);
  ok = func (0, data);

  g_mutex_lock (&bands->lock);
  while (bands->pending > 0)
    g_cond_wait (&bands->done, &bands->lock);
  ok &= bands->ok;
  g_mutex_unlock (&bands->lock);
  return ok;
}
