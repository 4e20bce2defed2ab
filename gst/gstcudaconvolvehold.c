/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* roi-hold: the detections of the last frames, each with the number of
 * frames it is still applied for when no frame carries it again.  A frame's
 * detection that is one of them (the same tracking id, or boxes that
 * overlap where either has none) takes its place and its count starts
 * again. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaconvolvehold.h"

typedef struct
{
  GstCudaConvolveDetection det;
  guint left;                   /* frames it is still applied for */
} Held;

void
gst_cuda_convolve_hold_init (GstCudaConvolveHold * hold)
{
  hold->held = g_array_new (FALSE, FALSE, sizeof (Held));
  hold->matched = g_array_new (FALSE, TRUE, sizeof (gboolean));
  hold->reset = 0;
}

void
gst_cuda_convolve_hold_clear (GstCudaConvolveHold * hold)
{
  g_clear_pointer (&hold->held, g_array_unref);
  g_clear_pointer (&hold->matched, g_array_unref);
}

void
gst_cuda_convolve_hold_reset (GstCudaConvolveHold * hold)
{
  g_atomic_int_set (&hold->reset, 1);
}

/* Whether a and b are the same object: the same tracking id when both
 * have one, else boxes whose intersection is not empty. */
static gboolean
same_object (const GstCudaConvolveDetection * a,
    const GstCudaConvolveDetection * b)
{
  if (a->tracked && b->tracked)
    return a->track_id == b->track_id;
  return MAX (a->x, b->x) < MIN (a->x + a->w, b->x + b->w) &&
      MAX (a->y, b->y) < MIN (a->y + a->h, b->y + b->h);
}

gint
gst_cuda_convolve_hold_frame (GstCudaConvolveHold * hold, guint frames,
    GstCudaConvolveDetection * dets, guint n, guint max)
{
  gboolean *matched, over = FALSE;
  guint i, j, kept = 0, out = n;

  if (g_atomic_int_compare_and_exchange (&hold->reset, 1, 0) || frames == 0)
    g_array_set_size (hold->held, 0);
  if (frames == 0)
    return n;

  g_array_set_size (hold->matched, 0);
  g_array_set_size (hold->matched, n);
  matched = (gboolean *) hold->matched->data;

  /* each held detection, in order: replaced by the first of the frame's
   * that is the same object, else applied while its count lasts */
  for (i = 0; i < hold->held->len; i++) {
    Held *h = &g_array_index (hold->held, Held, i);

    for (j = 0; j < n; j++)
      if (!matched[j] && same_object (&h->det, &dets[j]))
        break;
    if (j < n) {
      matched[j] = TRUE;
      continue;
    }
    if (h->left == 0)
      continue;
    h->left--;
    if (out < max)
      dets[out++] = h->det;
    else
      over = TRUE;
    g_array_index (hold->held, Held, kept++) = *h;
  }

  /* then the frame's own, at most max held in all */
  g_array_set_size (hold->held, kept);
  for (j = 0; j < n && hold->held->len < max; j++) {
    Held h = { dets[j], frames };

    g_array_append_val (hold->held, h);
  }
  return over ? -1 : (gint) out;
}
