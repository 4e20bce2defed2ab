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

#include "gstcudaconvolveregions.h"
#include "cuconv-pixelate.h"
#include "gstcudaconvolvevalue.h"

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#define ANALYTICS_NOTE ""
#else
#define ANALYTICS_NOTE " (this build reads no analytics metadata: it needs " \
    "GStreamer 1.24 or newer with gstreamer-analytics-1.0 when it is built)"
#endif

GType
gst_cuda_convolve_region_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CONVOLVE_REGION_FRAME, "The whole frame is filtered; "
          "regions are ignored", "frame"},
    {GST_CUDA_CONVOLVE_REGION_ROI, "Only the pixels inside the regions "
          "are filtered (privacy: blur faces, plates)", "roi"},
    {GST_CUDA_CONVOLVE_REGION_OUTSIDE_ROI, "Every pixel but those inside "
          "the regions is filtered (blur the background)", "outside-roi"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveRegion", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cuda_convolve_roi_shape_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CONVOLVE_ROI_SHAPE_BOX, "The region's box", "box"},
    {GST_CUDA_CONVOLVE_ROI_SHAPE_ELLIPSE, "The ellipse inscribed in the "
          "region's box (a face's outline)", "ellipse"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaConvolveRoiShape", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_cuda_convolve_region_props_param_specs (GParamSpec ** specs)
{
  const GParamFlags live = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;
  /* no controller interpolates strings or arrays */
  const GParamFlags lists = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;

  specs[GST_CUDA_CONVOLVE_REGION_PROP_REGION] = g_param_spec_enum ("region",
      "Region", "Where the filter applies: frame (everywhere, regions "
      "ignored), roi (inside the regions only; a frame without any passes "
      "through unchanged) or outside-roi (everywhere but inside the "
      "regions). The regions are the frame's GstVideoRegionOfInterestMeta "
      "of the roi-types, grown by roi-margin, and the fixed rectangles of "
      "the regions property. Inside a region the output is the whole-frame "
      "filter's, elsewhere the input unchanged. A frame with more than "
      G_STRINGIFY (GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME)
      " rectangles is filtered whole, with a warning",
      GST_TYPE_CUDA_CONVOLVE_REGION, GST_CUDA_CONVOLVE_REGION_FRAME, live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_TYPES] =
      g_param_spec_string ("roi-types", "ROI types",
      "The roi_type names of the GstVideoRegionOfInterestMeta, "
      "and the labels of the object detections of the "
      "GstAnalyticsRelationMeta, that count as regions, separated by commas "
      "(e.g. \"face,license-plate\"); empty or NULL = every one of the "
      "frame" ANALYTICS_NOTE, NULL, lists);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_MARGIN] =
      g_param_spec_uint ("roi-margin", "ROI margin",
      "Luma pixels, 0-" G_STRINGIFY (GST_CUDA_CONVOLVE_REGIONS_MAX_MARGIN)
      ", by which every ROI meta's "
      "rectangle grows on each side before it is clipped to the frame "
      "(detector boxes are tight); 0 = the box as detected. The fixed "
      "rectangles of regions are used as given", 0,
      GST_CUDA_CONVOLVE_REGIONS_MAX_MARGIN, 0, live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_REGIONS] =
      gst_param_spec_array ("regions", "Regions",
      "Fixed rectangles, in luma pixels, that count as regions "
      "on every frame, with or without ROI metas: an array of up to "
      G_STRINGIFY (GST_CUDA_CONVOLVE_REGIONS_MAX_FIXED) " arrays of 4 integers "
      "<x, y, w, h>, e.g. \"<<10,10,100,50>,<200,200,64,64>>\"; w and h "
      "not negative, x and y may be. Clipped to the frame; an empty or "
      "off-frame one is ignored. Default: none. An invalid value is "
      "refused with a warning and the previous one stays", NULL, lists);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_MIN_CONFIDENCE] =
      g_param_spec_double ("roi-min-confidence", "ROI minimum confidence",
      "The confidence (0-1) an object detection of the frame's "
      "GstAnalyticsRelationMeta needs to count as a region; weaker ones are "
      "ignored. 0 = every detection. ROI metas and the fixed regions have "
      "no confidence and always count" ANALYTICS_NOTE, 0.0, 1.0, 0.0, live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_HOLD] =
      g_param_spec_uint ("roi-hold", "ROI hold", "Frames, 0-"
      G_STRINGIFY (GST_CUDA_CONVOLVE_REGIONS_MAX_HOLD) ", for which a "
      "detection (ROI meta or analytics detection) is still applied after "
      "the last frame that carried it, so that a detector missing an "
      "object for a frame or two does not show it. A later detection of "
      "the same object (the same tracking id, or a box that overlaps where "
      "either has no tracking id) takes its place. Counts the frames "
      "filtered with region=roi or outside-roi; starts afresh after caps "
      "changes, flushes, seeks and gaps. 0 = off", 0,
      GST_CUDA_CONVOLVE_REGIONS_MAX_HOLD, 0, live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_SHAPE] =
      g_param_spec_enum ("roi-shape", "ROI shape",
      "The shape each region (ROI meta, detection or fixed rectangle, grown "
      "by roi-margin) takes in its box with region=roi or outside-roi: the "
      "box itself, or the ellipse inscribed in it",
      GST_TYPE_CUDA_CONVOLVE_ROI_SHAPE, GST_CUDA_CONVOLVE_ROI_SHAPE_BOX, live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_FEATHER] =
      g_param_spec_double ("roi-feather", "ROI feather",
      "Luma pixels, 0-" G_STRINGIFY (CUCONV_MAX_FEATHER) ", over which the "
      "output goes smoothly from the input to the filtered value inside the "
      "edge of each region's shape (roi-shape), so that no hard edge shows "
      "where a region ends; 0 = a hard edge", 0.0, CUCONV_MAX_FEATHER, 0.0,
      live);
  specs[GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE] =
      g_param_spec_double ("roi-scale", "ROI scale",
      "With region=roi and kernel=gaussian: each region's own sigma, this "
      "times the shorter side of its box (grown by roi-margin) in luma "
      "pixels, at most " G_STRINGIFY (CUCONV_MAX_SIGMA) " (radius from "
      "sigma), so that a large face is blurred as hard as a small one: "
      "0.1 gives a 40-pixel face sigma 4, a 400-pixel face sigma 40; with "
      "kernel=pixelate, each region's block side, rounded. The strongest "
      "applies where regions overlap. 0 = off: every region takes radius, "
      "sigma and sigma-y (block-size). Other kernels and regions ignore it",
      0.0, GST_CUDA_CONVOLVE_REGIONS_MAX_SCALE, 0.0, live);
}

void
gst_cuda_convolve_region_props_init (GstCudaConvolveRegionProps * props)
{
  memset (props, 0, sizeof (*props));
  props->mode = CUCONV_REGION_FRAME;
}

void
gst_cuda_convolve_region_props_clear (GstCudaConvolveRegionProps * props)
{
  g_clear_pointer (&props->types_str, g_free);
  g_clear_pointer (&props->types, g_ptr_array_unref);
  g_clear_pointer (&props->fixed, g_array_unref);
}

void
gst_cuda_convolve_region_props_copy (GstCudaConvolveRegionProps * dst,
    const GstCudaConvolveRegionProps * src)
{
  gst_cuda_convolve_region_props_clear (dst);
  dst->mode = src->mode;
  dst->margin = src->margin;
  dst->min_confidence = src->min_confidence;
  dst->hold = src->hold;
  dst->shape = src->shape;
  dst->feather = src->feather;
  dst->scale = src->scale;
  /* the string stays behind: frames need the names only */
  dst->types = src->types ? g_ptr_array_ref (src->types) : NULL;
  dst->fixed = src->fixed ? g_array_ref (src->fixed) : NULL;
}

/* The names of str, without interning them: a quark is never freed, and
 * an application may set ever new names. */
static GPtrArray *
parse_types (const gchar * str)
{
  GPtrArray *types;
  gchar **names;
  guint i;

  if (!str)
    return NULL;
  types = g_ptr_array_new_with_free_func (g_free);
  names = g_strsplit (str, ",", -1);
  for (i = 0; names[i]; i++) {
    const gchar *name = g_strstrip (names[i]);

    if (*name)
      g_ptr_array_add (types, g_strdup (name));
  }
  g_strfreev (names);

  if (types->len == 0) {
    g_ptr_array_unref (types);
    return NULL;
  }
  return types;
}

static const gchar *const rect_fields[] = { "x", "y", "w", "h" };

static gboolean
parse_rects (const GValue * value, GArray ** rects, gchar ** why)
{
  GArray *parsed;
  guint n, i, j;

  g_return_val_if_fail (GST_VALUE_HOLDS_ARRAY (value), FALSE);

  n = gst_value_array_get_size (value);
  if (n > GST_CUDA_CONVOLVE_REGIONS_MAX_FIXED) {
    *why = g_strdup_printf ("it has %u rectangles; at most %d", n,
        GST_CUDA_CONVOLVE_REGIONS_MAX_FIXED);
    return FALSE;
  }

  parsed = g_array_sized_new (FALSE, FALSE, sizeof (CuconvRect), n);
  for (i = 0; i < n; i++) {
    const GValue *rv = gst_value_array_get_value (value, i);
    gint f[4];

    if (!GST_VALUE_HOLDS_ARRAY (rv) || gst_value_array_get_size (rv) != 4) {
      gchar *str = gst_cuda_convolve_value_describe (rv);

      *why = g_strdup_printf ("rectangle %u, %s, is not 4 integers "
          "<x, y, w, h>", i + 1, str);
      g_free (str);
      goto refused;
    }
    for (j = 0; j < 4; j++) {
      const GValue *v = gst_value_array_get_value (rv, j);

      if (!gst_cuda_convolve_value_get_int (v, &f[j])) {
        gchar *str = gst_cuda_convolve_value_describe (v);

        *why = g_strdup_printf ("rectangle %u, %s %s, is not an integer "
            "from %d to %d", i + 1, rect_fields[j], str, G_MININT, G_MAXINT);
        g_free (str);
        goto refused;
      }
    }
    if (f[2] < 0 || f[3] < 0) {
      *why = g_strdup_printf ("rectangle %u is %d x %d; width and height "
          "must not be negative", i + 1, f[2], f[3]);
      goto refused;
    }
    {
      CuconvRect r = { f[0], f[1], f[2], f[3] };

      g_array_append_val (parsed, r);
    }
  }

  if (*rects)
    g_array_unref (*rects);
  if (parsed->len == 0) {
    g_array_unref (parsed);
    parsed = NULL;
  }
  *rects = parsed;
  return TRUE;

refused:
  g_array_unref (parsed);
  return FALSE;
}

static void
append_int (GValue * array, gint i)
{
  GValue v = G_VALUE_INIT;

  g_value_init (&v, G_TYPE_INT);
  g_value_set_int (&v, i);
  gst_value_array_append_and_take_value (array, &v);
}

static void
rects_to_value (const GArray * rects, GValue * value)
{
  guint i;

  for (i = 0; rects && i < rects->len; i++) {
    const CuconvRect *r = &g_array_index (rects, CuconvRect, i);
    GValue rv = G_VALUE_INIT;

    g_value_init (&rv, GST_TYPE_ARRAY);
    append_int (&rv, r->x);
    append_int (&rv, r->y);
    append_int (&rv, r->w);
    append_int (&rv, r->h);
    gst_value_array_append_and_take_value (value, &rv);
  }
}

gboolean
gst_cuda_convolve_region_props_set (GstCudaConvolveRegionProps * props,
    guint id, const GValue * value, gchar ** why)
{
  switch (id) {
    case GST_CUDA_CONVOLVE_REGION_PROP_REGION:
      props->mode = (CuconvRegionMode) g_value_get_enum (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_TYPES:
      g_free (props->types_str);
      props->types_str = g_value_dup_string (value);
      g_clear_pointer (&props->types, g_ptr_array_unref);
      props->types = parse_types (props->types_str);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_MARGIN:
      props->margin = g_value_get_uint (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_REGIONS:
      return parse_rects (value, &props->fixed, why);
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_MIN_CONFIDENCE:
      props->min_confidence = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_HOLD:
      props->hold = g_value_get_uint (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_SHAPE:
      props->shape = (CuconvShape) g_value_get_enum (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_FEATHER:
      props->feather = g_value_get_double (value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE:
      props->scale = g_value_get_double (value);
      break;
    default:
      g_assert_not_reached ();
  }
  return TRUE;
}

void
gst_cuda_convolve_region_props_get (const GstCudaConvolveRegionProps * props,
    guint id, GValue * value)
{
  switch (id) {
    case GST_CUDA_CONVOLVE_REGION_PROP_REGION:
      g_value_set_enum (value, props->mode);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_TYPES:
      g_value_set_string (value, props->types_str);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_MARGIN:
      g_value_set_uint (value, props->margin);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_REGIONS:
      rects_to_value (props->fixed, value);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_MIN_CONFIDENCE:
      g_value_set_double (value, props->min_confidence);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_HOLD:
      g_value_set_uint (value, props->hold);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_SHAPE:
      g_value_set_enum (value, props->shape);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_FEATHER:
      g_value_set_double (value, props->feather);
      break;
    case GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE:
      g_value_set_double (value, props->scale);
      break;
    default:
      g_assert_not_reached ();
  }
}

static gboolean
type_wanted (const GPtrArray * types, GQuark type)
{
  const gchar *name = g_quark_to_string (type);
  guint i;

  if (!types)
    return TRUE;
  for (i = 0; name && i < types->len; i++)
    if (strcmp (g_ptr_array_index (types, i), name) == 0)
      return TRUE;
  return FALSE;
}

/* Appends a detection of the box (x, y, w, h) grown by margin to dets
 * (n of max).  A detector's empty box marks nothing, whatever the margin.
 * FALSE when there is no room. */
static gboolean
add_detection (GstCudaConvolveDetection * dets, guint * n, guint max,
    gint64 x, gint64 y, gint64 w, gint64 h, guint margin, gboolean tracked,
    guint64 track_id)
{
  GstCudaConvolveDetection *d;

  if (w <= 0 || h <= 0)
    return TRUE;
  if (*n == max)
    return FALSE;
  d = &dets[(*n)++];
  d->x = x - margin;
  d->y = y - margin;
  d->w = w + 2 * (gint64) margin;
  d->h = h + 2 * (gint64) margin;
  d->tracked = tracked;
  d->track_id = track_id;
  return TRUE;
}

#ifdef HAVE_GST_ANALYTICS
/* The tracking id of od: that of a tracking entry related to it. */
static gboolean
detection_track_id (GstAnalyticsRelationMeta * meta, GstAnalyticsODMtd * od,
    guint64 * id)
{
  GstAnalyticsTrackingMtd trk;
  GstClockTime first, last;
  gpointer state = NULL;
  gboolean lost;

  return gst_analytics_relation_meta_get_direct_related (meta,
      od->id,
      GST_ANALYTICS_REL_TYPE_ANY, gst_analytics_tracking_mtd_get_mtd_type (),
      &state, &trk) && gst_analytics_tracking_mtd_get_info (&trk, id, &first,
      &last, &lost);
}

/* The object detections of buf's GstAnalyticsRelationMeta (what
 * GStreamer's own inference elements attach) whose label is of
 * props->types and whose confidence is at least props->min_confidence,
 * appended to dets.  FALSE when there are more than max. */
static gboolean
collect_analytics (const GstCudaConvolveRegionProps * props, GstBuffer * buf,
    GstCudaConvolveDetection * dets, guint * n, guint max)
{
  GstAnalyticsRelationMeta *meta = gst_buffer_get_analytics_relation_meta (buf);
  gpointer state = NULL;
  GstAnalyticsODMtd od;

  while (meta && gst_analytics_relation_meta_iterate (meta, &state,
          gst_analytics_od_mtd_get_mtd_type (), &od)) {
    gint x, y, w, h;
    gfloat confidence;
    guint64 id = 0;
    gboolean tracked;

    if (!type_wanted (props->types, gst_analytics_od_mtd_get_obj_type (&od))
        || !gst_analytics_od_mtd_get_location (&od, &x, &y, &w, &h,
            &confidence))
      continue;
    /* a NaN confidence is no confidence */
    if (!(confidence >= props->min_confidence))
      continue;
    tracked = detection_track_id (meta, &od, &id);
    if (!add_detection (dets, n, max, x, y, w, h, props->margin, tracked, id))
      return FALSE;
  }
  return TRUE;
}
#endif

/* The detections of buf (ROI metas, then analytics detections) into dets.
 * Returns their number, or -1 when there are more than max. */
static gint
collect_detections (const GstCudaConvolveRegionProps * props,
    GstBuffer * buf, GstCudaConvolveDetection * dets, guint max)
{
  GstVideoRegionOfInterestMeta *meta;
  gpointer state = NULL;
  guint n = 0;

  while (buf && (meta = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    if (type_wanted (props->types, meta->roi_type) &&
        !add_detection (dets, &n, max, meta->x, meta->y, meta->w, meta->h,
            props->margin, FALSE, 0))
      return -1;
  }
#ifdef HAVE_GST_ANALYTICS
  if (buf && !collect_analytics (props, buf, dets, &n, max))
    return -1;
#endif
  return n;
}

/* Rectangle i of the frame: r, clipped from the box (x, y, w, h). */
static void
add_rect (GstCudaConvolveRegionFrame * frame, guint i, const CuconvRect * r,
    gint64 x, gint64 y, gint64 w, gint64 h)
{
  CuconvBox *b = &frame->boxes[i];

  frame->rects[i] = *r;
  b->x0 = x;
  b->y0 = y;
  /* saturated: a box past the 64-bit range ends there */
  if (__builtin_add_overflow (x, w, &b->x1))
    b->x1 = G_MAXINT64;
  if (__builtin_add_overflow (y, h, &b->y1))
    b->y1 = G_MAXINT64;
}

gint
gst_cuda_convolve_regions_collect (GstCudaConvolveRegionFrame * frame,
    const GstCudaConvolveRegionProps * props, GstBuffer * buf, gint width,
    gint height)
{
  const guint max = GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME;
  const GArray *fixed = props->fixed;
  gint n_dets;
  guint n = 0, i;
  CuconvRect r;

  n_dets = collect_detections (props, buf, frame->dets, max);
  if (n_dets >= 0)
    n_dets = gst_cuda_convolve_hold_frame (&frame->hold, props->hold,
        frame->dets, n_dets, max);
  if (n_dets < 0)
    return -1;
  if (width <= 0 || height <= 0)
    return 0;

  for (i = 0; i < (guint) n_dets; i++) {
    const GstCudaConvolveDetection *d = &frame->dets[i];

    if (cuconv_rect_clip (d->x, d->y, d->w, d->h, 0, width, height, &r))
      add_rect (frame, n++, &r, d->x, d->y, d->w, d->h);
  }
  for (i = 0; fixed && i < fixed->len; i++) {
    const CuconvRect *f = &g_array_index (fixed, CuconvRect, i);

    if (f->w == 0 || f->h == 0 ||
        !cuconv_rect_clip (f->x, f->y, f->w, f->h, 0, width, height, &r))
      continue;
    if (n == max)
      return -1;
    add_rect (frame, n++, &r, f->x, f->y, f->w, f->h);
  }
  return n;
}

void
gst_cuda_convolve_region_frame_init (GstCudaConvolveRegionFrame * frame)
{
  memset (frame, 0, sizeof (*frame));
  frame->rects = g_new (CuconvRect, GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME);
  frame->boxes = g_new (CuconvBox, GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME);
  frame->dets = g_new (GstCudaConvolveDetection,
      GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME);
  frame->strength = g_new (gdouble, GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME);
  frame->scaled = g_new0 (CuconvSettings, 1);
  gst_cuda_convolve_hold_init (&frame->hold);
  frame->regions.mode = CUCONV_REGION_FRAME;
  frame->regions.rects = frame->rects;
  frame->regions.boxes = frame->boxes;
}

void
gst_cuda_convolve_region_frame_clear (GstCudaConvolveRegionFrame * frame)
{
  g_clear_pointer (&frame->rects, g_free);
  g_clear_pointer (&frame->boxes, g_free);
  g_clear_pointer (&frame->dets, g_free);
  g_clear_pointer (&frame->strength, g_free);
  g_clear_pointer (&frame->scaled, g_free);
  gst_cuda_convolve_hold_clear (&frame->hold);
}

gboolean
gst_cuda_convolve_region_frame_prepare (GstCudaConvolveRegionFrame * frame,
    GstElement * element, const GstCudaConvolveRegionProps * props,
    GstBuffer * buf, const GstVideoInfo * info)
{
  gint width = GST_VIDEO_INFO_WIDTH (info);
  gint height = GST_VIDEO_INFO_HEIGHT (info);
  gint n, i;

  frame->regions.mode = CUCONV_REGION_FRAME;
  frame->regions.rects = frame->rects;
  frame->regions.n_rects = 0;
  frame->regions.strength = NULL;
  if (props->mode == CUCONV_REGION_FRAME)
    return FALSE;

  n = gst_cuda_convolve_regions_collect (frame, props, buf, width, height);
  if (n < 0)
    goto too_many;
  frame->over_cap = FALSE;

  frame->regions.mode = props->mode;
  frame->regions.n_rects = n;
  frame->regions.boxes = frame->boxes;
  frame->regions.shape = props->shape;
  frame->regions.feather = props->feather;
  /* outside-roi without a rectangle: the whole frame, on its usual path */
  if (cuconv_regions_whole_frame (&frame->regions)) {
    frame->regions.mode = CUCONV_REGION_FRAME;
    return FALSE;
  }
  if (cuconv_regions_filter_nothing (&frame->regions))
    return TRUE;
  /* a soft region's shape may leave part of its rectangle filtered */
  for (i = 0; i < n && !cuconv_regions_soft (&frame->regions); i++) {
    if (props->mode == CUCONV_REGION_OUTSIDE && frame->rects[i].w == width &&
        frame->rects[i].h == height)
      return TRUE;
  }
  return FALSE;

  /* ERRORS */
too_many:
  {
    /* A privacy filter must not leave a face sharp: more filtered than
     * asked, never less. */
    if (!frame->over_cap)
      GST_ELEMENT_WARNING (element, STREAM, FAILED,
          ("A frame has more than %d regions, the most the element takes: "
              "such frames are filtered whole.",
              GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME), ("region=%s",
              props->mode == CUCONV_REGION_INSIDE ? "roi" : "outside-roi"));
    frame->over_cap = TRUE;
    return FALSE;
  }
}

/* A rectangle's filter: the frame's gaussian with the rectangle's sigma. */
static void
make_scaled_gaussian (CuconvFilter * f, double sigma, const CuconvBox * box,
    void *data)
{
  CuconvSettings *scaled = data;

  scaled->radius = 0;
  scaled->sigma = sigma;
  scaled->sigma_y = sigma;
  cuconv_filter_init (f, scaled);
}

/* A rectangle's mosaic: blocks of its side on the grid of its box. */
static void
make_pixelate (CuconvFilter * f, double side, const CuconvBox * box,
    void *data)
{
  CuconvSettings *scaled = data;
  gint s;

  scaled->block_size = (guint) side;
  cuconv_filter_init (f, scaled);
  /* the same grid through a point near the frame, 0 to block - 1: no
   * overflow after */
  for (s = 0; s < CUCONV_MAX_SUBSAMPLE; s++) {
    f->block_x0[s] = box->x0 - cuconv_floor_div (box->x0, f->block) *
        f->block;
    f->block_y0[s] = box->y0 - cuconv_floor_div (box->y0, f->block) *
        f->block;
  }
}

void
gst_cuda_convolve_region_frame_relative (GstCudaConvolveRegionFrame * frame,
    const GstCudaConvolveRegionProps * props, const CuconvSettings * settings)
{
  const gboolean pixelate = settings->kernel == CUCONV_KERNEL_PIXELATE;
  const gboolean scaled = props->scale > 0.0 && (pixelate ||
      settings->kernel == CUCONV_KERNEL_GAUSSIAN);
  CuconvRegions *r = &frame->regions;
  gint i;

  r->strength = NULL;
  if (r->mode != CUCONV_REGION_INSIDE || r->n_rects <= 0 ||
      !(scaled || pixelate))
    return;
  for (i = 0; i < r->n_rects; i++) {
    const CuconvBox *b = &frame->boxes[i];
    /* boxes hold a non-empty rectangle: the sides are 1 to 2^64 - 1 */
    const gdouble side = MIN ((gdouble) ((guint64) b->x1 - (guint64) b->x0),
        (gdouble) ((guint64) b->y1 - (guint64) b->y0));

    if (!scaled)
      frame->strength[i] = settings->block_size;
    else if (pixelate)
      frame->strength[i] = CLAMP (floor (props->scale * side + 0.5), 1,
          CUCONV_MAX_BLOCK);
    else
      frame->strength[i] = MIN (props->scale * side, CUCONV_MAX_SIGMA);
  }
  *frame->scaled = *settings;
  r->strength = frame->strength;
  r->make_filter = pixelate ? make_pixelate : make_scaled_gaussian;
  r->make_data = frame->scaled;
}
