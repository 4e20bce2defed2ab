/* GStreamer
 * Copyright (C) 2024 gst-cudaconvolve authors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_CUDA_CONVOLVE_REGIONS_H__
#define __GST_CUDA_CONVOLVE_REGIONS_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuconv.h"
#include "gstcudaconvolvehold.h"

G_BEGIN_DECLS

/* cudaconvolve's regions (docs/semantics.md, "Regions"): the properties
 * region, roi-types, roi-margin and regions, checked in full before they
 * replace the value in effect, and the rectangles of one frame collected
 * from them and the buffer's GstVideoRegionOfInterestMeta. */

/* The most rectangles the regions property holds. */
#define GST_CUDA_CONVOLVE_REGIONS_MAX_FIXED 1024
/* The most rectangles one frame is filtered by (metas and fixed regions,
 * after clipping, empty ones not counted); a frame with more is filtered
 * whole. */
#define GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME 4096
/* The largest roi-margin, in luma pixels. */
#define GST_CUDA_CONVOLVE_REGIONS_MAX_MARGIN 4096
/* The largest roi-hold, in frames. */
#define GST_CUDA_CONVOLVE_REGIONS_MAX_HOLD 300

/* Values equal CuconvRegionMode. */
typedef enum
{
  GST_CUDA_CONVOLVE_REGION_FRAME = CUCONV_REGION_FRAME,
  GST_CUDA_CONVOLVE_REGION_ROI = CUCONV_REGION_INSIDE,
  GST_CUDA_CONVOLVE_REGION_OUTSIDE_ROI = CUCONV_REGION_OUTSIDE,
} GstCudaConvolveRegion;

#define GST_TYPE_CUDA_CONVOLVE_REGION (gst_cuda_convolve_region_get_type ())
GType gst_cuda_convolve_region_get_type (void);

typedef enum
{
  GST_CUDA_CONVOLVE_ROI_SHAPE_BOX = CUCONV_SHAPE_BOX,
  GST_CUDA_CONVOLVE_ROI_SHAPE_ELLIPSE = CUCONV_SHAPE_ELLIPSE,
} GstCudaConvolveRoiShape;

#define GST_TYPE_CUDA_CONVOLVE_ROI_SHAPE (gst_cuda_convolve_roi_shape_get_type ())
GType gst_cuda_convolve_roi_shape_get_type (void);

/* The properties, in this order from the element's first id on. */
enum
{
  GST_CUDA_CONVOLVE_REGION_PROP_REGION,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_TYPES,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_MARGIN,
  GST_CUDA_CONVOLVE_REGION_PROP_REGIONS,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_MIN_CONFIDENCE,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_HOLD,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_SHAPE,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_FEATHER,
  GST_CUDA_CONVOLVE_REGION_PROP_ROI_SCALE,
  GST_CUDA_CONVOLVE_REGION_N_PROPS
};

/* The values of the properties.  The arrays are immutable once made and
 * reference-counted: a copy taken under the element's object lock holds
 * a frame's value however the properties change meanwhile. */
typedef struct
{
  CuconvRegionMode mode;
  gchar *types_str;             /* roi-types as set; NULL = every type */
  GPtrArray *types;             /* the names; NULL = every type */
  guint margin;                 /* luma pixels, metas only */
  GArray *fixed;                /* of CuconvRect as given; NULL = none */
  gdouble min_confidence;       /* analytics detections weaker are ignored */
  guint hold;                   /* frames a detection outlasts its meta */
  CuconvShape shape;            /* soft regions: the shape in each box */
  gdouble feather;              /* and the band it fades in, luma pixels */
  gdouble scale;                /* roi-scale: sigma (or pixelate's block)
                                 * per luma pixel of the shorter side;
                                 * 0 = off */
} GstCudaConvolveRegionProps;

/* The largest roi-scale. */
#define GST_CUDA_CONVOLVE_REGIONS_MAX_SCALE 4.0

/* Fills specs[0 .. GST_CUDA_CONVOLVE_REGION_N_PROPS - 1]. */
void gst_cuda_convolve_region_props_param_specs (GParamSpec ** specs);

/* The defaults: region=frame, nothing else set. */
void gst_cuda_convolve_region_props_init (GstCudaConvolveRegionProps * props);
void gst_cuda_convolve_region_props_clear (GstCudaConvolveRegionProps * props);

/* dst (cleared or initialised) becomes a copy of src, sharing its arrays. */
void gst_cuda_convolve_region_props_copy (GstCudaConvolveRegionProps * dst,
    const GstCudaConvolveRegionProps * src);

/* Sets property id (GST_CUDA_CONVOLVE_REGION_PROP_*) from value.  Returns
 * FALSE, leaving props as they were, when the value breaks a rule; *why
 * then says which (free it). */
gboolean gst_cuda_convolve_region_props_set (GstCudaConvolveRegionProps * props,
    guint id, const GValue * value, gchar ** why);
void gst_cuda_convolve_region_props_get (const GstCudaConvolveRegionProps *
    props, guint id, GValue * value);

/* One frame's regions, in the streaming thread. */
typedef struct
{
  CuconvRegions regions;        /* mode FRAME: the whole frame is filtered */
  CuconvRect *rects;            /* room for ..._REGIONS_MAX_FRAME */
  CuconvBox *boxes;             /* each rectangle before clipping */
  GstCudaConvolveDetection *dets;       /* the same */
  gdouble *strength;            /* each rectangle's sigma or block */
  CuconvSettings *scaled;       /* the settings a rectangle's sigma or
                                 * block is put into */
  GstCudaConvolveHold hold;     /* roi-hold's detections */
  gboolean over_cap;            /* the last frame had more */
} GstCudaConvolveRegionFrame;

/* The rectangles one frame of width x height is filtered by, clipped to
 * the frame, empty ones dropped, into frame->rects: first the detections,
 * every GstVideoRegionOfInterestMeta of buf whose roi_type is in
 * props->types (every one when NULL), then (GStreamer 1.24 and newer)
 * every object-detection entry of its GstAnalyticsRelationMeta whose label
 * is in props->types and whose confidence is at least
 * props->min_confidence, each grown by props->margin on every side (an
 * empty box stays empty), then those roi-hold still applies, then the
 * fixed rectangles as they are, never grown; each one's box before
 * clipping into frame->boxes.  Returns their number, or -1 when there are
 * more than GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME. */
gint gst_cuda_convolve_regions_collect (GstCudaConvolveRegionFrame * frame,
    const GstCudaConvolveRegionProps * props, GstBuffer * buf, gint width,
    gint height);

void gst_cuda_convolve_region_frame_init (GstCudaConvolveRegionFrame * frame);
void gst_cuda_convolve_region_frame_clear (GstCudaConvolveRegionFrame * frame);

/* Sets frame->regions for buf (may be NULL: no metas), a frame of info,
 * as props say: mode FRAME when the whole frame is to be filtered
 * (region=frame, outside-roi without a rectangle, or more than
 * GST_CUDA_CONVOLVE_REGIONS_MAX_FRAME rectangles: more filtered than
 * asked, never less, with an element warning on element at the first
 * such frame of a run).  Returns TRUE when the regions leave the frame
 * unchanged: region=roi without a rectangle, outside-roi with one covering
 * the frame. */
gboolean gst_cuda_convolve_region_frame_prepare (GstCudaConvolveRegionFrame *
    frame, GstElement * element, const GstCudaConvolveRegionProps * props,
    GstBuffer * buf, const GstVideoInfo * info);

/* Filters of their own for frame->regions' rectangles (docs/semantics.md,
 * "Strength that follows the region"), with region=roi and a rectangle:
 * for kernel=pixelate, each rectangle's mosaic on the grid of its box,
 * of blocks of block-size or, with roi-scale, of props->scale times the
 * shorter side of its box (rounded, 1 to CUCONV_MAX_BLOCK); for a
 * gaussian with roi-scale, settings' gaussian with sigma and sigma-y
 * props->scale times that side (at most CUCONV_MAX_SIGMA) and radius 0.
 * Call after gst_cuda_convolve_region_frame_prepare (). */
void gst_cuda_convolve_region_frame_relative (GstCudaConvolveRegionFrame *
    frame, const GstCudaConvolveRegionProps * props,
    const CuconvSettings * settings);

G_END_DECLS
#endif /* __GST_CUDA_CONVOLVE_REGIONS_H__ */
