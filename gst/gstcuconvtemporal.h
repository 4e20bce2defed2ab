/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef __GST_CUCONV_TEMPORAL_H__
#define __GST_CUCONV_TEMPORAL_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuconv.h"
#include "cuconv-cuda.h"

G_BEGIN_DECLS

/* The temporal denoise in cudaconvolve (docs/semantics.md, "Temporal
 * denoise"): the properties temporal and temporal-threshold, when the
 * state starts afresh, and the state itself: in host memory for the CPU
 * backend, the engine's CuconvTemporalState in the element's CUDA context
 * for the CUDA backend. */

#define GST_CUCONV_TEMPORAL_DEFAULT_STRENGTH 0.0
#define GST_CUCONV_TEMPORAL_DEFAULT_THRESHOLD 20.0

/* Offsets from the first of the element's properties that are these. */
enum
{
  GST_CUCONV_TEMPORAL_PROP_STRENGTH,
  GST_CUCONV_TEMPORAL_PROP_THRESHOLD,
  GST_CUCONV_TEMPORAL_N_PROPS
};

/* The properties, under the element's object lock. */
typedef struct
{
  gdouble strength;
  gdouble threshold;
} GstCuconvTemporalProps;

void gst_cuconv_temporal_props_init (GstCuconvTemporalProps * props);
/* Fills specs[0 .. GST_CUCONV_TEMPORAL_N_PROPS - 1]. */
void gst_cuconv_temporal_param_specs (GParamSpec ** specs);
void gst_cuconv_temporal_props_set (GstCuconvTemporalProps * props,
    guint prop, const GValue * value);
void gst_cuconv_temporal_props_get (const GstCuconvTemporalProps * props,
    guint prop, GValue * value);

typedef struct
{
  /* Any thread, atomically: the next frame filtered starts afresh. */
  gint reset;

  /* Streaming thread only (and start/stop, close_cuda). */
  GstCuconvTemporalProps lut_props;     /* what lut was made from */
  gboolean lut_valid;
  guint8 lut[CUCONV_TEMPORAL_LUT];
  gboolean on;                  /* this frame is denoised */
  gboolean have_last;           /* a frame was denoised since the reset */
  gboolean last_on_cuda;        /* on which backend */
  /* the CPU backend's state: one block, planes one after the other */
  guint8 *host;
  gsize host_size;
  gsize host_offset[GST_VIDEO_MAX_PLANES];
  gint host_stride[GST_VIDEO_MAX_PLANES];
  gint host_rows[GST_VIDEO_MAX_PLANES];
  guint host_n_planes;
  /* the CUDA backend's, made on its first frame in the element's context
   * and freed by close_cuda */
  CuconvTemporalState *gpu;
} GstCuconvTemporal;

void gst_cuconv_temporal_init (GstCuconvTemporal * t);
/* Frees the host state (t->gpu is freed in the context, before). */
void gst_cuconv_temporal_clear (GstCuconvTemporal * t);

/* Any thread: the next frame passes through and becomes the state. */
void gst_cuconv_temporal_reset (GstCuconvTemporal * t);

/* Streaming thread, once a buffer: the table for props (rebuilt when
 * they changed), a DISCONT buffer's reset.  Returns whether the frame is
 * denoised (t->on); while it is not, the next one that is starts afresh. */
gboolean gst_cuconv_temporal_prepare (GstCuconvTemporal * t,
    const GstCuconvTemporalProps * props, GstBuffer * inbuf);

/* Streaming thread, as a denoised frame is filtered on the backend
 * (on_cuda): whether it starts afresh (a reset, or the last frame was
 * denoised on the other backend).  The host state goes once frames are
 * denoised on the GPU. */
gboolean gst_cuconv_temporal_begin (GstCuconvTemporal * t, gboolean on_cuda);

/* The CPU backend: state[p] is planes[p] with dst the host state
 * (allocated for the planes' geometry, kept while it stays), for
 * cuconv_temporal_rows ().  *first becomes TRUE when the state was
 * (re)allocated.  FALSE when memory runs out. */
gboolean gst_cuconv_temporal_host_planes (GstCuconvTemporal * t,
    const CuconvPlane * planes, guint n_planes, CuconvPlane * state,
    gboolean * first);

/* Copies the samples of each plane's src rows to its dst rows. */
void gst_cuconv_temporal_copy_planes (const CuconvPlane * planes,
    guint n_planes);

G_END_DECLS

#endif /* __GST_CUCONV_TEMPORAL_H__ */
