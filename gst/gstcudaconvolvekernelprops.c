/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gstcudaconvolvekernelprops.h"
#include "gstcudaconvolvevalue.h"

GParamSpec *
gst_cuda_convolve_kernel_props_param_spec (const gchar * name,
    const gchar * nick, const gchar * blurb, GParamFlags flags)
{
  return gst_param_spec_array (name, nick, blurb, NULL, flags);
}

/* Reads the n numbers of array (a GstValueArray) into out.  what names
 * them in *why ("tap", "row 2, column"). */
static gboolean
parse_numbers (const GValue * array, guint n, double *out,
    const gchar * what, gchar ** why)
{
  guint i;

  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (array, i);

    if (!gst_cuda_convolve_value_get_number (v, &out[i])) {
      gchar *str = gst_cuda_convolve_value_describe (v);

      *why = g_strdup_printf ("%s %u, %s, is not a number", what, i + 1, str);
      g_free (str);
      return FALSE;
    }
    /* so that every sum of products stays finite in float */
    if (!(fabs (out[i]) <= CUCONV_MAX_CUSTOM_TAP)) {
      *why = g_strdup_printf ("%s %u is %g; every value must be a finite "
          "number from %.0f to %.0f", what, i + 1, out[i],
          -CUCONV_MAX_CUSTOM_TAP, CUCONV_MAX_CUSTOM_TAP);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean
gst_cuda_convolve_kernel_props_parse_taps (const GValue * value, double *taps,
    int *len, gchar ** why)
{
  double parsed[CUCONV_MAX_CUSTOM_TAPS];
  guint n;

  g_return_val_if_fail (GST_VALUE_HOLDS_ARRAY (value), FALSE);

  n = gst_value_array_get_size (value);
  if (n % 2 == 0 && n != 0) {
    *why = g_strdup_printf ("it has %u taps; a kernel has an odd number of "
        "taps (1 to %d) so that it has a centre", n, CUCONV_MAX_CUSTOM_TAPS);
    return FALSE;
  }
  if (n > CUCONV_MAX_CUSTOM_TAPS) {
    *why = g_strdup_printf ("it has %u taps; a kernel has at most %d "
        "(radius %d)", n, CUCONV_MAX_CUSTOM_TAPS, CUCONV_MAX_CUSTOM_RADIUS);
    return FALSE;
  }
  if (!parse_numbers (value, n, parsed, "tap", why))
    return FALSE;

  memcpy (taps, parsed, n * sizeof (double));
  *len = n;
  return TRUE;
}

gboolean
gst_cuda_convolve_kernel_props_parse_matrix (const GValue * value, double *m,
    int *side, gchar ** why)
{
  double *parsed;
  guint n, j;

  g_return_val_if_fail (GST_VALUE_HOLDS_ARRAY (value), FALSE);

  n = gst_value_array_get_size (value);
  if ((n % 2 == 0 && n != 0) || n > CUCONV_MAX_MATRIX_SIDE) {
    *why = g_strdup_printf ("it has %u rows; a matrix is square with an odd "
        "side from 1 to %d", n, CUCONV_MAX_MATRIX_SIDE);
    return FALSE;
  }
  if (n == 0) {
    *side = 0;
    return TRUE;
  }

  parsed = g_new (double, n * n);
  for (j = 0; j < n; j++) {
    const GValue *row = gst_value_array_get_value (value, j);
    gchar *what;
    gboolean ok;

    if (!GST_VALUE_HOLDS_ARRAY (row)) {
      gchar *str = gst_cuda_convolve_value_describe (row);

      *why = g_strdup_printf ("row %u, %s, is not an array of numbers such "
          "as <1, 2, 1>", j + 1, str);
      g_free (str);
      goto refused;
    }
    if (gst_value_array_get_size (row) != n) {
      *why = g_strdup_printf ("row %u has %u values and there are %u rows; "
          "a matrix is square, every row as long as the number of rows",
          j + 1, gst_value_array_get_size (row), n);
      goto refused;
    }
    what = g_strdup_printf ("row %u, value", j + 1);
    ok = parse_numbers (row, n, parsed + j * n, what, why);
    g_free (what);
    if (!ok)
      goto refused;
  }

  memcpy (m, parsed, n * n * sizeof (double));
  *side = n;
  g_free (parsed);
  return TRUE;

refused:
  g_free (parsed);
  return FALSE;
}

static void
append_double (GValue * array, double d)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, d);
  gst_value_array_append_and_take_value (array, &v);
}

void
gst_cuda_convolve_kernel_props_taps_to_value (const double *taps, int len,
    GValue * value)
{
  int i;

  for (i = 0; i < len; i++)
    append_double (value, taps[i]);
}

void
gst_cuda_convolve_kernel_props_matrix_to_value (const double *m, int side,
    GValue * value)
{
  int j;

  for (j = 0; j < side; j++) {
    GValue row = G_VALUE_INIT;

    g_value_init (&row, GST_TYPE_ARRAY);
    gst_cuda_convolve_kernel_props_taps_to_value (m + j * side, side, &row);
    gst_value_array_append_and_take_value (value, &row);
  }
}
