/* gst-cudaconvolve: the CPU's band threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef __CUCONV_BANDS_H__
#define __CUCONV_BANDS_H__

#include <glib.h>

G_BEGIN_DECLS

/* Runs the bands of one job side by side: band 0 in the calling thread,
 * the others on the process's band threads (one a processor, kept until
 * the process ends). */
typedef struct _CuconvBands CuconvBands;

typedef gboolean (*CuconvBandFunc) (guint band, gpointer data);

/* n_bands threads' worth of work, the caller's included (1 or more). */
CuconvBands *cuconv_bands_new (guint n_bands);
void cuconv_bands_free (CuconvBands * bands);
guint cuconv_bands_n (const CuconvBands * bands);

/* Calls func (band, data) for every band and returns once all are done:
 * FALSE when one returned FALSE. */
gboolean cuconv_bands_run (CuconvBands * bands, CuconvBandFunc func,
    gpointer data);

G_END_DECLS

#endif /* __CUCONV_BANDS_H__ */
