/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef __GST_CUDA_CONVOLVE_TEMPORAL_H__
#define __GST_CUDA_CONVOLVE_TEMPORAL_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuconv.h"

G_BEGIN_DECLS

/* The temporal denoise in cudaconvolve (docs/semantics.md, "Temporal
 * denoise"): the properties temporal, temporal-threshold and
 * temporal-mode, their table, and when the state starts afresh; the
 * engine keeps the state. */

#define GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_STRENGTH 0.0
#define GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_THRESHOLD 20.0

typedef enum
{
  GST_CUDA_CONVOLVE_TEMPORAL_STILL,
  GST_CUDA_CONVOLVE_TEMPORAL_COMPENSATED,
} GstCudaConvolveTemporalMode;

#define GST_TYPE_CUDA_CONVOLVE_TEMPORAL_MODE \
  (gst_cuda_convolve_temporal_mode_get_type ())
GType gst_cuda_convolve_temporal_mode_get_type (void);

/* Offsets from the first of the element's properties that are these. */
enum
{
  GST_CUDA_CONVOLVE_TEMPORAL_PROP_STRENGTH,
  GST_CUDA_CONVOLVE_TEMPORAL_PROP_THRESHOLD,
  GST_CUDA_CONVOLVE_TEMPORAL_PROP_MODE,
  GST_CUDA_CONVOLVE_TEMPORAL_N_PROPS
};

/* The properties, under the element's object lock. */
typedef struct
{
  gdouble strength;
  gdouble threshold;
  GstCudaConvolveTemporalMode mode;
} GstCudaConvolveTemporalProps;

void gst_cuda_convolve_temporal_props_init (GstCudaConvolveTemporalProps *
    props);
/* Fills specs[0 .. GST_CUDA_CONVOLVE_TEMPORAL_N_PROPS - 1]. */
void gst_cuda_convolve_temporal_param_specs (GParamSpec ** specs);
void gst_cuda_convolve_temporal_props_set (GstCudaConvolveTemporalProps * props,
    guint prop, const GValue * value);
void gst_cuda_convolve_temporal_props_get (const GstCudaConvolveTemporalProps
    * props, guint prop, GValue * value);

typedef struct
{
  /* Any thread, atomically: the next frame filtered starts afresh. */
  gint reset;

  /* Streaming thread only. */
  GstCudaConvolveTemporalProps lut_props;     /* what lut was made from */
  gboolean lut_valid;
  guint8 lut[CUCONV_TEMPORAL_LUT];
  gboolean on;                  /* this frame is denoised */
  gboolean compensate;          /* following the motion */
} GstCudaConvolveTemporal;

void gst_cuda_convolve_temporal_init (GstCudaConvolveTemporal * t);

/* Any thread: the next frame passes through and becomes the state. */
void gst_cuda_convolve_temporal_reset (GstCudaConvolveTemporal * t);

/* Streaming thread, once a buffer: the table for props (rebuilt when
 * they changed) and the mode, a DISCONT buffer's reset.  Returns whether the frame is
 * denoised (t->on); while it is not, the next one that is starts afresh. */
gboolean gst_cuda_convolve_temporal_prepare (GstCudaConvolveTemporal * t,
    const GstCudaConvolveTemporalProps * props, GstBuffer * inbuf);

/* Streaming thread, as a denoised frame is handed to the engine: whether
 * a reset asked for since the last one.  Taken there, not in prepare: a
 * buffer dropped between the two keeps it for the next. */
gboolean gst_cuda_convolve_temporal_take_reset (GstCudaConvolveTemporal * t);

G_END_DECLS

#endif /* __GST_CUDA_CONVOLVE_TEMPORAL_H__ */
