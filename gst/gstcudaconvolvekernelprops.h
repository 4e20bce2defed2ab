/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_KERNEL_PROPS_H__
#define __GST_CUDA_CONVOLVE_KERNEL_PROPS_H__

#include <gst/gst.h>

#include "cuconv.h"

G_BEGIN_DECLS

/* The custom kernel properties (kernel-x, kernel-y, matrix) as GstValueArray
 * values: checking them completely before anything is changed, and giving
 * back the kernel in effect. */

/* A GstValueArray property of numbers.  The arrays have no element spec: an
 * element spec of doubles would make GObject refuse integers (what
 * gst-launch makes of `<1, 2, 1>` without one, and what applications often
 * build) with a message that does not say which rule was broken. */
GParamSpec *gst_cuda_convolve_kernel_props_param_spec (const gchar * name,
    const gchar * nick, const gchar * blurb, GParamFlags flags);

/* Reads value, a GstValueArray of numbers (integers or floating point),
 * into taps[0..*len - 1].  An empty array gives *len = 0 (not set).
 * Returns FALSE, leaving taps and *len untouched, when the array is not an
 * odd number of finite numbers up to CUCONV_MAX_CUSTOM_TAPS; *why then holds a
 * sentence saying which rule was broken (free it). */
gboolean gst_cuda_convolve_kernel_props_parse_taps (const GValue * value,
    double *taps, int *len, gchar ** why);

/* Reads value, a GstValueArray of rows, each a GstValueArray of numbers,
 * into m (row-major) and *side.  An empty array gives *side = 0 (not set).
 * Returns FALSE, leaving m and *side untouched, unless the matrix is
 * square with an odd side up to CUCONV_MAX_MATRIX_SIDE, of finite numbers;
 * *why then says why (free it). */
gboolean gst_cuda_convolve_kernel_props_parse_matrix (const GValue * value,
    double *m, int *side, gchar ** why);

/* Appends the len taps to value, an empty GstValueArray, as doubles. */
void gst_cuda_convolve_kernel_props_taps_to_value (const double *taps, int len,
    GValue * value);

/* Appends side rows of side doubles to value, an empty GstValueArray. */
void gst_cuda_convolve_kernel_props_matrix_to_value (const double *m, int side,
    GValue * value);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_KERNEL_PROPS_H__ */
