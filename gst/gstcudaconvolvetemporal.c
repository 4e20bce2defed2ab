/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstcudaconvolvetemporal.h"

GType
gst_cuda_convolve_temporal_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CONVOLVE_TEMPORAL_STILL,
        "Each sample blends with the previous frame at its place: for a "
          "still camera", "still"},
    {GST_CUDA_CONVOLVE_TEMPORAL_COMPENSATED,
        "Each sample blends with the previous frame where the motion "
          "(found on luma, blocks of 8 pixels, up to 39 pixels a frame) "
          "brings it from: for a moving camera", "compensated"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveTemporalMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_cuda_convolve_temporal_props_init (GstCudaConvolveTemporalProps * props)
{
  props->strength = GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_STRENGTH;
  props->threshold = GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_THRESHOLD;
  props->mode = GST_CUDA_CONVOLVE_TEMPORAL_STILL;
}

void
gst_cuda_convolve_temporal_param_specs (GParamSpec ** specs)
{
  const GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;

  specs[GST_CUDA_CONVOLVE_TEMPORAL_PROP_STRENGTH] =
      g_param_spec_double ("temporal", "Temporal denoise",
      "Strength of the temporal denoise, 0-1: each "
      "sample is blended with the previous denoised frame (this step's own "
      "output, before the kernel), out = in + k * (previous - in), k = "
      "temporal where the sample did not change, "
      "falling to 0 as the change nears temporal-threshold (motion). Still "
      "areas average over many frames, moving ones keep the current frame. "
      "Runs before the kernel, on the components the kernel filters, on the "
      "whole frame whatever the region. No added latency; starts afresh "
      "after caps changes, flushes, seeks, gaps, discontinuities and "
      "backend switches. A change while playing applies from the next frame "
      "and keeps the state. 0 = off (with identity kernel settings: "
      "passthrough)", 0.0, 1.0, GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_STRENGTH,
      live);
  specs[GST_CUDA_CONVOLVE_TEMPORAL_PROP_THRESHOLD] =
      g_param_spec_double ("temporal-threshold", "Temporal threshold",
      "Temporal denoise: the difference between a sample and the previous "
      "denoised frame, in 8-bit levels (0-255; times 4 in 10-bit, 256 in "
      "16-bit samples), from which it counts as motion and takes the input "
      "as it is; below it the blend grows smoothly to full strength at 0. "
      "Set it above the noise (2 to 3 times its standard deviation). A "
      "change while playing applies from the next frame and keeps the "
      "state. 0 = no blending (the denoise is off)", 0.0,
      CUCONV_MAX_TEMPORAL_THRESHOLD,
      GST_CUDA_CONVOLVE_TEMPORAL_DEFAULT_THRESHOLD, live);
  specs[GST_CUDA_CONVOLVE_TEMPORAL_PROP_MODE] =
      g_param_spec_enum ("temporal-mode", "Temporal mode",
      "Temporal denoise: where each sample finds its previous frame. still: "
      "at its own place; compensated: where the camera's or the object's "
      "motion, found by block matching on luma (or green), brings it from, "
      "so that a panning camera averages as a still one does (occlusions "
      "and cuts fall back to the input, as motion does). A change while "
      "playing applies from the next frame and keeps the state",
      GST_TYPE_CUDA_CONVOLVE_TEMPORAL_MODE, GST_CUDA_CONVOLVE_TEMPORAL_STILL,
      live & ~GST_PARAM_CONTROLLABLE);
}

void
gst_cuda_convolve_temporal_props_set (GstCudaConvolveTemporalProps * props,
    guint prop, const GValue * value)
{
  switch (prop) {
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_STRENGTH:
      props->strength = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_THRESHOLD:
      props->threshold = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_MODE:
      props->mode = g_value_get_enum (value);
      break;
    default:
      g_assert_not_reached ();
  }
}

void
gst_cuda_convolve_temporal_props_get (const GstCudaConvolveTemporalProps *
    props, guint prop, GValue * value)
{
  switch (prop) {
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_STRENGTH:
      g_value_set_double (value, props->strength);
      break;
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_THRESHOLD:
      g_value_set_double (value, props->threshold);
      break;
    case GST_CUDA_CONVOLVE_TEMPORAL_PROP_MODE:
      g_value_set_enum (value, props->mode);
      break;
    default:
      g_assert_not_reached ();
  }
}

void
gst_cuda_convolve_temporal_init (GstCudaConvolveTemporal * t)
{
  memset (t, 0, sizeof (*t));
  t->reset = 1;
}

void
gst_cuda_convolve_temporal_reset (GstCudaConvolveTemporal * t)
{
  g_atomic_int_set (&t->reset, 1);
}

gboolean
gst_cuda_convolve_temporal_prepare (GstCudaConvolveTemporal * t,
    const GstCudaConvolveTemporalProps * props, GstBuffer * inbuf)
{
  if (!t->lut_valid || t->lut_props.strength != props->strength ||
      t->lut_props.threshold != props->threshold) {
    cuconv_temporal_lut (t->lut, props->strength, props->threshold);
    t->lut_props = *props;
    t->lut_valid = TRUE;
  }
  t->on = !cuconv_temporal_is_off (t->lut);
  t->compensate = props->mode == GST_CUDA_CONVOLVE_TEMPORAL_COMPENSATED;
  /* a state from before the frames not denoised would be stale */
  if (!t->on || GST_BUFFER_IS_DISCONT (inbuf))
    gst_cuda_convolve_temporal_reset (t);
  return t->on;
}

gboolean
gst_cuda_convolve_temporal_take_reset (GstCudaConvolveTemporal * t)
{
  return g_atomic_int_compare_and_exchange (&t->reset, 1, 0);
}
