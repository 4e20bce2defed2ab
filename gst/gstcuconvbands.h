/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef __GST_CUCONV_BANDS_H__
#define __GST_CUCONV_BANDS_H__

#include <glib.h>

G_BEGIN_DECLS

/* Runs the bands of one job side by side: band 0 in the calling thread,
 * the others on threads that live as long as the object. */
typedef struct _GstCuconvBands GstCuconvBands;

typedef gboolean (*GstCuconvBandFunc) (guint band, gpointer data);

/* n_bands threads' worth of work, the caller's included (1 or more). */
GstCuconvBands *gst_cuconv_bands_new (guint n_bands);
void gst_cuconv_bands_free (GstCuconvBands * bands);
guint gst_cuconv_bands_n (const GstCuconvBands * bands);

/* Calls func (band, data) for every band and returns once all are done:
 * FALSE when one returned FALSE. */
gboolean gst_cuconv_bands_run (GstCuconvBands * bands, GstCuconvBandFunc func,
    gpointer data);

G_END_DECLS

#endif /* __GST_CUCONV_BANDS_H__ */
