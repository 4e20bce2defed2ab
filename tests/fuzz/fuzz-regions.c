/* gst-cudaconvolve fuzzer: region-of-interest metas.
 *
 * The input chooses the caps (up to 64x48), the element's region
 * settings (region, roi-types, roi-margin, roi-hold, roi-shape,
 * roi-feather, roi-scale and now and then pixelate, then regions, a
 * kernel and a few more properties, as fuzz_set_property () makes them),
 * then frames,
 * each with up to 15 GstVideoRegionOfInterestMeta of a type from a short
 * list or made up, and boxes anywhere (inside the frame, or any 32-bit
 * values), or now and then more metas than a frame may have regions; on
 * GStreamer 1.24 and newer as many object detections of a
 * GstAnalyticsRelationMeta too, with any confidence (NaN included).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "fuzz-common.h"
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif


static const gchar *const types[] = { "face", "license-plate", "person",
  "", "face,person"
};

/* A coordinate: inside a frame of up to 64 samples, or anything. */
static guint
fuzz_coord (FuzzInput * in)
{
  return fuzz_u8 (in) & 1 ? fuzz_below (in, 80) : fuzz_u32 (in);
}

static void
fuzz_roi_metas (FuzzInput * in, GstBuffer * buf)
{
  guint8 how = fuzz_u8 (in);
  /* past the frame's limit of rectangles now and then */
  guint n = how == 255 ? 4097 + fuzz_below (in, 8) : how % 16, i;

  for (i = 0; i < n; i++) {
    gchar *made = NULL;
    const gchar *type;
    guint x, y, w, h;

    if (fuzz_u8 (in) < 224) {
      type = types[fuzz_below (in, G_N_ELEMENTS (types))];
    } else {
      /* one of a few made names: GStreamer interns a meta's type as a
       * quark, which GLib never frees, so endless new names would grow
       * the process (LeakSanitizer reports the quark table's old blocks) */
      made = g_strdup_printf ("type %u", fuzz_below (in, 64));
      type = made;
    }
    x = fuzz_coord (in);
    y = fuzz_coord (in);
    w = fuzz_coord (in);
    h = fuzz_coord (in);
    gst_buffer_add_video_region_of_interest_meta (buf, type, x, y, w, h);
#ifdef HAVE_GST_ANALYTICS
    if (fuzz_u8 (in) & 1) {
      GstAnalyticsRelationMeta *meta =
          gst_buffer_get_analytics_relation_meta (buf);
      GstAnalyticsODMtd od;
      guint8 c = fuzz_u8 (in);

      if (!meta)
        meta = gst_buffer_add_analytics_relation_meta (buf);
      /* the box signed, as detections give them */
      gst_analytics_relation_meta_add_od_mtd (meta,
          g_quark_from_string (type), (gint) x, (gint) y, (gint) w, (gint) h,
          c == 255 ? NAN : c / 254.0f, &od);
    }
#endif
    g_free (made);
  }
}

int
LLVMFuzzerTestOneInput (const guint8 * data, gsize size)
{
  FuzzInput in = { data, size };
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h = fuzz_harness_new (&in, 64, 48, &e, &info);
  guint steps = 0;

  g_object_set (e, "region", 1 + fuzz_below (&in, 2), NULL);
  if (fuzz_u8 (&in) & 1) {
    gchar *str = fuzz_string (&in, 32);

    g_object_set (e, "roi-types", fuzz_u8 (&in) & 1 ? str :
        types[fuzz_below (&in, G_N_ELEMENTS (types))], NULL);
    g_free (str);
  }
  g_object_set (e, "roi-margin", fuzz_below (&in, 4097), NULL);
  g_object_set (e, "roi-hold", fuzz_below (&in, 4), NULL);
  /* soft regions often: an ellipse, or a feather up to 64 pixels */
  g_object_set (e, "roi-shape", fuzz_below (&in, 2), "roi-feather",
      fuzz_below (&in, 4) ? 0.0 : fuzz_below (&in, 6400) / 100.0, NULL);
  /* each region its own filter: a sigma, or a mosaic, by its size */
  g_object_set (e, "roi-scale", fuzz_below (&in, 2) ? 0.0 :
      fuzz_below (&in, 401) / 100.0, NULL);
  if (fuzz_below (&in, 3) == 0) {
    gst_util_set_object_arg (G_OBJECT (e), "kernel", "pixelate");
    g_object_set (e, "block-size", 1 + fuzz_below (&in, 40), NULL);
  }
  while (fuzz_more (&in) && steps++ < 32) {
    if (fuzz_below (&in, 4) == 0) {
      fuzz_set_property (&in, e);
    } else {
      GstBuffer *buf = fuzz_frame (&in, &info);

      fuzz_roi_metas (&in, buf);
      fuzz_push (h, buf);
    }
  }
  fuzz_harness_free (h, e);
  return 0;
}
