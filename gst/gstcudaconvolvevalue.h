/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_VALUE_H__
#define __GST_CUDA_CONVOLVE_VALUE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The values inside the array properties (kernel-x, kernel-y, matrix,
 * regions), as gst_value_deserialize () and applications make them: the
 * numbers they hold, and what a refusal says of them. */

/* The number v holds, for the integer and floating-point types. */
gboolean gst_cuda_convolve_value_get_number (const GValue * v, double *out);

/* The integer v holds, for the integer types, in the range of a gint. */
gboolean gst_cuda_convolve_value_get_int (const GValue * v, gint * out);

/* v in words for a message (free it): a number or a string as it is, an
 * array by its length, anything else by its type.  Never through
 * gst_value_serialize (), which cannot print every value (an array holding
 * a NULL string raises a critical). */
gchar *gst_cuda_convolve_value_describe (const GValue * v);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_VALUE_H__ */
