/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstcudaconvolvevalue.h"

gboolean
gst_cuda_convolve_value_get_number (const GValue * v, double *out)
{
  switch (G_VALUE_TYPE (v)) {
    case G_TYPE_DOUBLE:
      *out = g_value_get_double (v);
      break;
    case G_TYPE_FLOAT:
      *out = g_value_get_float (v);
      break;
    case G_TYPE_INT:
      *out = g_value_get_int (v);
      break;
    case G_TYPE_UINT:
      *out = g_value_get_uint (v);
      break;
    case G_TYPE_INT64:
      *out = (double) g_value_get_int64 (v);
      break;
    case G_TYPE_UINT64:
      *out = (double) g_value_get_uint64 (v);
      break;
    default:
      return FALSE;
  }
  return TRUE;
}

gboolean
gst_cuda_convolve_value_get_int (const GValue * v, gint * out)
{
  gint64 i;

  switch (G_VALUE_TYPE (v)) {
    case G_TYPE_INT:
      *out = g_value_get_int (v);
      return TRUE;
    case G_TYPE_UINT:
      i = g_value_get_uint (v);
      break;
    case G_TYPE_INT64:
      i = g_value_get_int64 (v);
      break;
    case G_TYPE_UINT64:
      if (g_value_get_uint64 (v) > G_MAXINT)
        return FALSE;
      i = (gint64) g_value_get_uint64 (v);
      break;
    default:
      return FALSE;
  }
  if (i < G_MININT || i > G_MAXINT)
    return FALSE;
  *out = (gint) i;
  return TRUE;
}

gchar *
gst_cuda_convolve_value_describe (const GValue * v)
{
  double d;

  if (gst_cuda_convolve_value_get_number (v, &d))
    return g_strdup_printf ("%g", d);
  if (G_VALUE_HOLDS_STRING (v)) {
    const gchar *str = g_value_get_string (v);

    return str ? g_strdup_printf ("the string \"%s\"", str) :
        g_strdup ("a NULL string");
  }
  if (GST_VALUE_HOLDS_ARRAY (v))
    return g_strdup_printf ("an array of %u values",
        gst_value_array_get_size (v));
  return g_strdup_printf ("a value of type %s", G_VALUE_TYPE_NAME (v));
}
