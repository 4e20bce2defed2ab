/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_HOLD_H__
#define __GST_CUDA_CONVOLVE_HOLD_H__

#include <glib.h>

G_BEGIN_DECLS

/* roi-hold (docs/semantics.md, "Holding detections"): a detection keeps
 * being applied for a number of frames after the last frame that carried
 * it, so that a detector that misses an object for a frame or two does
 * not show it. */

/* A detection of one frame: its box in luma pixels, grown by roi-margin
 * and not clipped (64-bit: no meta's values overflow), and the tracking
 * id of the object when the meta has one. */
typedef struct
{
  gint64 x, y, w, h;
  gboolean tracked;
  guint64 track_id;
} GstCudaConvolveDetection;

typedef struct
{
  GArray *held;                 /* of the held detections and their count */
  GArray *matched;              /* of gboolean, one a detection: scratch */
  gint reset;                   /* any thread, atomically */
} GstCudaConvolveHold;

void gst_cuda_convolve_hold_init (GstCudaConvolveHold * hold);
void gst_cuda_convolve_hold_clear (GstCudaConvolveHold * hold);

/* Any thread: the next frame holds nothing from before. */
void gst_cuda_convolve_hold_reset (GstCudaConvolveHold * hold);

/* Streaming thread, once a frame, with dets[0 .. n - 1] its detections
 * (room for max): with frames (roi-hold) above 0, appends the held
 * detections this frame does not carry that are still held, and holds the
 * frame's own.  Returns the number of detections in dets, or -1 when they
 * would be more than max. */
gint gst_cuda_convolve_hold_frame (GstCudaConvolveHold * hold, guint frames,
    GstCudaConvolveDetection * dets, guint n, guint max);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_HOLD_H__ */
