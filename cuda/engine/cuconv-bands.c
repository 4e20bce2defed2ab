/* gst-cudaconvolve: the CPU's band threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The threads that filter a frame's bands of rows on the CPU backend: a
 * GThreadPool of n - 1 exclusive threads, made with the object, and the
 * calling thread, which takes band 0 and then waits for the others. */

#include "cuconv-bands.h"

struct _CuconvBands
{
  guint n_bands;
  GThreadPool *pool;            /* NULL with one band */

  /* The job in progress, under lock. */
  GMutex lock;
  GCond done;
  CuconvBandFunc func;
  gpointer data;
  guint pending;
  gboolean ok;
};

static void
run_band (gpointer band_plus_one, gpointer user_data)
{
  CuconvBands *bands = user_data;
  gboolean ok = bands->func (GPOINTER_TO_UINT (band_plus_one) - 1,
      bands->data);

  g_mutex_lock (&bands->lock);
  bands->ok &= ok;
  if (--bands->pending == 0)
    g_cond_signal (&bands->done);
  g_mutex_unlock (&bands->lock);
}

CuconvBands *
cuconv_bands_new (guint n_bands)
{
  CuconvBands *bands = g_new0 (CuconvBands, 1);

  bands->n_bands = MAX (n_bands, 1);
  g_mutex_init (&bands->lock);
  g_cond_init (&bands->done);
  if (bands->n_bands > 1)
    bands->pool = g_thread_pool_new (run_band, bands, bands->n_bands - 1,
        TRUE, NULL);
  /* without threads, one band */
  if (!bands->pool)
    bands->n_bands = 1;
  return bands;
}

void
cuconv_bands_free (CuconvBands * bands)
{
  if (!bands)
    return;
  if (bands->pool)
    g_thread_pool_free (bands->pool, FALSE, TRUE);
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
  gboolean ok;
  guint b;

  bands->func = func;
  bands->data = data;
  bands->ok = TRUE;
  bands->pending = bands->n_bands - 1;
  for (b = 1; b < bands->n_bands; b++)
    g_thread_pool_push (bands->pool, GUINT_TO_POINTER (b + 1), NULL);
  ok = func (0, data);

  g_mutex_lock (&bands->lock);
  while (bands->pending > 0)
    g_cond_wait (&bands->done, &bands->lock);
  ok &= bands->ok;
  g_mutex_unlock (&bands->lock);
  return ok;
}
