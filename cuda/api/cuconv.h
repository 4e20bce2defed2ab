/* gst-cudaconvolve: the convolution engine's C API, shared by the CPU
 * reference, the CUDA kernels and the GStreamer element.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_H__
#define __CUCONV_H__

#include <stdint.h>
#include <stddef.h>

#include "cuconv-border.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The widest separable kernel: radius 0..1024 for every kernel type but
 * custom, sigma and sigma_y 0..256 (docs/semantics.md, section 2). */
#define CUCONV_MAX_RADIUS 1024
#define CUCONV_MAX_TAPS (2 * CUCONV_MAX_RADIUS + 1)
#define CUCONV_MAX_SIGMA 256.0
/* The smallest sigma the taps are computed with (a plane's sigma, and the
 * bilateral's range sigma in samples): a smaller one counts as this.  At
 * 0.1 a neighbour weighs exp (-50) of the centre, nothing in float; below
 * about 0.03, exp () of the neighbours underflows even in double and the
 * derivatives' sums become 0 / 0. */
#define CUCONV_MIN_SIGMA 0.1
/* With radius 0 a gaussian or sharpen direction whose ceil (3 sigma) is
 * at most this is the truncated kernel of that radius; above it, the
 * untruncated gaussian (CuconvTaps.untruncated). */
#define CUCONV_TRUNCATED_MAX_RADIUS 64
/* A custom separable kernel: an odd number of taps up to 129. */
#define CUCONV_MAX_CUSTOM_RADIUS 64
#define CUCONV_MAX_CUSTOM_TAPS (2 * CUCONV_MAX_CUSTOM_RADIUS + 1)
/* The largest magnitude of a custom tap or matrix value, as given and
 * after normalising: sums of 961 products with 16-bit samples, twice over
 * for a separable kernel, stay far inside a float's range. */
#define CUCONV_MAX_CUSTOM_TAP 1e6
#define CUCONV_MAX_AMOUNT 10.0
/* The bilateral's window: radius and ceil (3 sigma) are cut to 16 luma
 * samples, (2 * 16 + 1)^2 taps a sample at most; sigma-range, in 8-bit
 * levels, up to 1000 (past a few hundred the range weights are all 1). */
#define CUCONV_MAX_BILATERAL_RADIUS 16
#define CUCONV_MAX_SIGMA_RANGE 1000.0
/* nlmeans: the search window's radius is cut to 16 luma samples, the
 * patch's to 8: (2 * 16 + 1)^2 patches of (2 * 8 + 1)^2 samples at most. */
#define CUCONV_MAX_NLMEANS_RADIUS 16
#define CUCONV_MAX_PATCH_RADIUS 8
/* pixelate: blocks of 1 (the identity) to 4096 luma pixels a side. */
#define CUCONV_MAX_BLOCK 4096
/* canny: the smoothing's radius is cut to 16 luma samples; the
 * thresholds, in 8-bit gradient levels, reach past the largest 3x3 Sobel
 * magnitude (4 * 255 * sqrt (2) = 1442.5) */
#define CUCONV_MAX_CANNY_RADIUS 16
#define CUCONV_MAX_CANNY_TAPS (2 * CUCONV_MAX_CANNY_RADIUS + 1)
#define CUCONV_MAX_CANNY_THRESHOLD 1500.0
/* the smoothing's taps in fixed point: integers summing to 2^12 */
#define CUCONV_CANNY_TAP_SHIFT 12
/* A custom 2-D matrix is at most 31 x 31 (radius 15). */
#define CUCONV_MAX_MATRIX_RADIUS 15
#define CUCONV_MAX_MATRIX_SIDE (2 * CUCONV_MAX_MATRIX_RADIUS + 1)
/* The largest chroma subsampling factor of a supported format. */
#define CUCONV_MAX_SUBSAMPLE 2
/* The most components interleaved in one plane (RGBA, AYUV). */
#define CUCONV_MAX_COMP 4
/* The most planes of one frame (any supported format, alpha included). */
#define CUCONV_MAX_PLANES 4

/* The kernel types, in one place: the engine's enum, the element's GEnum
 * (value, nick, description) and the coefficient switch in cuconv-coeffs.c are
 * generated from or keyed on this list.  X (NAME, "nick", "description") */
#define CUCONV_KERNEL_TYPES(X) \
  X (GAUSSIAN, "gaussian", \
      "Gaussian blur (sigma 0 = 0.3 * (radius - 1) + 0.8)") \
  X (BOX, "box", "Box (mean) blur over (2 * radius + 1)^2 samples") \
  X (SHARPEN, "sharpen", \
      "Unsharp mask: in + amount * (in - gaussian (in))") \
  X (SOBEL, "sobel", \
      "Gradient magnitude sqrt (gx^2 + gy^2); radius 1 = 3x3 Sobel, " \
      "larger radii derivative-of-Gaussian") \
  X (LAPLACIAN, "laplacian", \
      "Absolute Laplacian of Gaussian; radius 1 = 3x3 Laplacian") \
  X (CUSTOM, "custom", \
      "The user's kernel: kernel-x/kernel-y (separable) or matrix (2-D)") \
  X (BILATERAL, "bilateral", \
      "Edge-preserving blur: gaussian weights in space (sigma) times " \
      "gaussian weights of the sample difference (sigma-range)") \
  X (PIXELATE, "pixelate", \
      "Mosaic: each block of block-size luma pixels becomes its mean " \
      "(blocks aligned to the frame, or to each region with region=roi)") \
  X (NLMEANS, "nlmeans", \
      "Non-local means denoise: the mean of the samples within radius, " \
      "each weighted by how alike its patch (patch-radius) is to the " \
      "sample's (sigma-range)") \
  X (CANNY, "canny", \
      "Canny edges: a gaussian of sigma/radius (0 = none), 3x3 Sobel, " \
      "thin edges along the gradient, kept above threshold-high or " \
      "connected to such an edge above threshold-low")

typedef enum
{
#define CUCONV_KERNEL_ENUM(name, nick, desc) CUCONV_KERNEL_##name,
  CUCONV_KERNEL_TYPES (CUCONV_KERNEL_ENUM)
#undef CUCONV_KERNEL_ENUM
  CUCONV_KERNEL_N
} CuconvKernel;

/* Which planes a frame's filter applies to (the element's `planes`
 * property).  X (NAME, "nick", "description") */
#define CUCONV_PLANES_TYPES(X) \
  X (AUTO, "auto", "By kernel: blurs and custom filter all planes, " \
      "sharpen luma only, sobel and laplacian give a grey edge map") \
  X (ALL, "all", "Every colour plane or channel") \
  X (LUMA, "luma", "Luma only (every channel of RGB); chroma copied") \
  X (CHROMA, "chroma", "Chroma only; luma copied")

typedef enum
{
#define CUCONV_PLANES_ENUM(name, nick, desc) CUCONV_PLANES_##name,
  CUCONV_PLANES_TYPES (CUCONV_PLANES_ENUM)
#undef CUCONV_PLANES_ENUM
  CUCONV_PLANES_N
} CuconvPlanes;

/* What the user asked for, in luma samples.  Zero-initialised settings
 * with kernel, border, radius and sigma set are a complete request: every
 * other field's 0 asks for nothing more. */
typedef struct
{
  CuconvKernel kernel;
  CuconvBorder border;
  unsigned radius;              /* 0..1024; 0 = from sigma */
  double sigma;                 /* 0..256; 0 = from radius */
  double sigma_y;               /* 0..256; 0 = sigma (anisotropic blurs) */
  double amount;                /* sharpen: 0..10 */
  int normalize;                /* custom: divide by the sum when not 0 */
  /* custom, separable: odd lengths up to CUCONV_MAX_CUSTOM_TAPS; 0 = not
   * set, which filters nothing in that direction */
  int custom_x_len, custom_y_len;
  double custom_x[CUCONV_MAX_CUSTOM_TAPS];
  double custom_y[CUCONV_MAX_CUSTOM_TAPS];
  /* custom, 2-D: an odd side up to CUCONV_MAX_MATRIX_SIDE, row-major;
   * 0 = not set.  When set it is used instead of custom_x/custom_y. */
  int matrix_side;
  double matrix[CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE];
  /* bilateral: the range sigma in 8-bit levels, 0..1000, scaled by
   * 2^(depth - 8) on deeper samples; 0 weighs only equal samples */
  double sigma_range;
  /* pixelate: the blocks' side in luma pixels, 1..CUCONV_MAX_BLOCK */
  unsigned block_size;
  /* nlmeans: the patch's radius in luma samples, 0..CUCONV_MAX_PATCH_RADIUS
   * (radius is the search window's; sigma_range the weights' strength) */
  unsigned patch_radius;
  /* canny: the hysteresis thresholds on the 3x3 Sobel magnitude, in 8-bit
   * gradient levels (scaled by 2^(depth - 8)), 0..CUCONV_MAX_CANNY_THRESHOLD;
   * the larger is the high one */
  double threshold_low, threshold_high;
} CuconvSettings;

/* A 1-D kernel of 2 * radius + 1 taps (radius 0 to 1024); w[radius] is
 * the centre.  When untruncated is not 0 the kernel is instead the
 * untruncated sampled gaussian of sigma, g[k] = exp (-k^2 / (2 sigma^2))
 * / sum over every integer j of exp (-j^2 / (2 sigma^2)), for every k,
 * applied to the border-extended plane without limit; radius is then 0
 * and w unused.  sigma is the direction's sigma for every gaussian-based
 * kernel (0 for box and custom). */
typedef struct
{
  int radius;
  int untruncated;
  double sigma;
  float w[CUCONV_MAX_TAPS];
} CuconvTaps;

/* A 2-D kernel of (2 * radius + 1)^2 taps, row-major: w[(j + radius) *
 * (2 * radius + 1) + (i + radius)] weighs in (x + i, y + j). */
typedef struct
{
  int radius;
  float w[CUCONV_MAX_MATRIX_SIDE * CUCONV_MAX_MATRIX_SIDE];
} CuconvMatrix;

/* How a filter's separable terms t0 (and t1) become the output, before
 * rounding and saturation; `in` is the source sample itself. */
typedef enum
{
  CUCONV_COMBINE_NONE = 0,         /* t0 */
  CUCONV_COMBINE_SHARPEN,          /* in + amount * (in - t0) */
  CUCONV_COMBINE_MAGNITUDE,        /* sqrt (t0^2 + t1^2) */
  CUCONV_COMBINE_ABS_SUM,          /* |t0 + t1| */
  CUCONV_COMBINE_BILATERAL,        /* not a sum of taps: the bilateral
                                    * (cuconv_bilateral_rows), x and y
                                    * holding its spatial weights */
  CUCONV_COMBINE_PIXELATE,         /* not a sum of taps: each block's mean
                                    * (cuconv_pixelate_plane); the taps
                                    * are the one tap [1] */
  CUCONV_COMBINE_NLMEANS,          /* not a sum of taps: non-local means
                                    * (cuconv_nlmeans_rows); the taps'
                                    * radius is its whole reach, the search
                                    * radius plus the patch's */
  CUCONV_COMBINE_CANNY,            /* not a sum of taps: Canny's edges
                                    * (cuconv_canny_plane), whole planes;
                                    * x and y hold the smoothing's taps */
} CuconvCombine;

/* What the settings compute, for every plane geometry of a frame.  A
 * separable term is t = sum_j ky[j] * sum_i kx[i] * in (x + i, y + j);
 * x[s - 1] and y[s - 1] are term 0's horizontal and vertical taps for a
 * plane subsampled by s in that direction, x2/y2 term 1's.  With
 * n_terms == 0 the 2-D matrix m is the only term (the same for every
 * plane). */
typedef struct
{
  CuconvBorder border;          /* how every term reads past the plane */
  /* term 0 is the box: a blur whose taps in each direction are all
   * 1 / (2r + 1), which running sums compute exactly */
  int box;
  /* CUCONV_COMBINE_BILATERAL: the range sigma in 8-bit levels
   * (CuconvSettings.sigma_range) */
  double sigma_range;
  int n_terms;                  /* 0 (matrix), 1 or 2 */
  CuconvCombine combine;
  float amount;                 /* CUCONV_COMBINE_SHARPEN */
  CuconvTaps x[CUCONV_MAX_SUBSAMPLE];
  CuconvTaps y[CUCONV_MAX_SUBSAMPLE];
  CuconvTaps x2[CUCONV_MAX_SUBSAMPLE];
  CuconvTaps y2[CUCONV_MAX_SUBSAMPLE];
  CuconvMatrix m;
  /* CUCONV_COMBINE_PIXELATE: blocks of `block` luma pixels a side on the
   * grid through (block_x0[s - 1], block_y0[s - 1]), in luma pixels from
   * the first sample of a plane subsampled by s (the frame's origin: 0) */
  int block;
  long long block_x0[CUCONV_MAX_SUBSAMPLE];
  long long block_y0[CUCONV_MAX_SUBSAMPLE];
  /* CUCONV_COMBINE_NLMEANS: the patch's radius in a direction subsampled
   * by s, patch[s - 1]; the search radius is the taps' radius less it */
  int patch[CUCONV_MAX_SUBSAMPLE];
  /* CUCONV_COMBINE_CANNY: the smoothing's taps in a direction subsampled
   * by s, in fixed point (canny_x[s - 1][i], i = 0 .. 2 x[s - 1].radius,
   * summing to 2^CUCONV_CANNY_TAP_SHIFT), and the thresholds in 8-bit
   * levels, low <= high */
  int canny_x[CUCONV_MAX_SUBSAMPLE][CUCONV_MAX_CANNY_TAPS];
  int canny_y[CUCONV_MAX_SUBSAMPLE][CUCONV_MAX_CANNY_TAPS];
  double canny_low, canny_high;
} CuconvFilter;

/* What happens to one component of a plane.  Zero is FILTER, so a
 * zero-initialised op[] filters every component. */
typedef enum
{
  CUCONV_COMP_FILTER = 0,          /* the filter's output */
  CUCONV_COMP_COPY,                /* the source sample, unchanged */
  CUCONV_COMP_FILL,                /* CuconvPlane.fill (neutral chroma) */
} CuconvCompOp;

/* One plane.  n_comp components (1 to 4) are interleaved: 1 for planar
 * formats, 2 for the UV plane of NV12/P010, 4 for RGBA/AYUV, and each
 * component is filtered on its own, or copied or filled as op[] says.
 * width counts samples of one component.  A sample is one byte when depth
 * is 8 (or 0), else a little-endian 16-bit word holding a depth-bit value
 * shifted left by shift (P010: depth 10, shift 6; the low bits read as
 * nothing and are written 0).  src and dst are host or device pointers
 * depending on the function they are passed to; they must not overlap. */
typedef struct
{
  const uint8_t *src;
  uint8_t *dst;
  ptrdiff_t src_stride;
  ptrdiff_t dst_stride;
  int width;
  int height;
  int n_comp;
  int sub_x;                    /* subsampling factor, 1 or 2 */
  int sub_y;
  int depth;                    /* 8 (or 0), 10, 12 or 16 */
  int shift;                    /* 0, or 6 for P010 */
  uint8_t op[CUCONV_MAX_COMP];     /* CuconvCompOp per component */
  unsigned fill;                /* CUCONV_COMP_FILL's value, 0..2^depth - 1 */
} CuconvPlane;

/* Regions (docs/semantics.md, "Regions"): rectangles in luma pixels of
 * the frame, [x, x + w) x [y, y + h).  Callers clip them to the frame and
 * drop empty ones (cuconv_rect_clip); they may overlap. */
typedef struct
{
  int x, y, w, h;
} CuconvRect;

typedef enum
{
  CUCONV_REGION_FRAME = 0,      /* the whole frame is filtered */
  CUCONV_REGION_INSIDE,         /* filtered inside the rectangles only */
  CUCONV_REGION_OUTSIDE,        /* filtered outside the rectangles only */
} CuconvRegionMode;

/* A region's box before clipping, [x0, x1) x [y0, y1) in luma pixels of
 * the frame: what soft regions weigh a sample by. */
typedef struct
{
  long long x0, y0, x1, y1;
} CuconvBox;

/* The shape a soft region takes in its box. */
typedef enum
{
  CUCONV_SHAPE_BOX = 0,
  CUCONV_SHAPE_ELLIPSE,         /* inscribed in the box */
} CuconvShape;

/* Which pixels of a frame are filtered: inside them the output is the
 * whole-frame filter's output at that pixel, elsewhere the input sample
 * unchanged.  FRAME ignores rects; INSIDE with no rects filters nothing,
 * OUTSIDE with none filters the whole frame.
 *
 * Soft regions (cuconv_regions_soft): boxes[i] is rects[i] before
 * clipping, and each sample is weighed by the shape in its box, going from
 * the input to the filter's output across `feather` luma pixels inside
 * the shape's edge (docs/semantics.md, "Soft regions"). */
typedef struct
{
  CuconvRegionMode mode;
  const CuconvRect *rects;
  int n_rects;
  const CuconvBox *boxes;       /* NULL: hard rectangles */
  CuconvShape shape;
  double feather;               /* luma pixels, 0 to CUCONV_MAX_FEATHER */
  /* Region-relative filters (INSIDE only, cuconv_regions_relative): NULL,
   * or strength[i] for rects[i], which is then filtered with the filter
   * make_filter makes of its strength and its box (boxes[i], or the
   * rectangle where boxes is NULL) instead of the frame's.  A pixelate
   * filter is made anew for each rectangle (its grid may follow the box),
   * any other only when the strength changes. */
  const double *strength;
  void (*make_filter) (CuconvFilter * f, double strength,
      const CuconvBox * box, void *data);
  void *make_data;
} CuconvRegions;

#define CUCONV_MAX_FEATHER 4096.0

/* Whether r's samples are weighed (the shape, the feather) rather than
 * in or out. */
static inline int
cuconv_regions_soft (const CuconvRegions * r)
{
  return r && r->mode != CUCONV_REGION_FRAME && r->boxes &&
      (r->shape != CUCONV_SHAPE_BOX || r->feather > 0);
}

/* Whether each of r's rectangles has a filter of its own
 * (docs/semantics.md, "Strength that follows the region"): where several
 * cover a sample, that of the largest weight there applies, and among
 * equal weights that of the largest strength. */
static inline int
cuconv_regions_relative (const CuconvRegions * r)
{
  return r && r->mode == CUCONV_REGION_INSIDE && r->strength &&
      r->make_filter && r->rects && r->n_rects > 0;
}

/* The one rule for what regions leave: whether they filter the whole
 * frame (NULL, FRAME, OUTSIDE without a rectangle), and whether they
 * filter nothing (INSIDE without a rectangle). */
static inline int
cuconv_regions_whole_frame (const CuconvRegions * r)
{
  return !r || r->mode == CUCONV_REGION_FRAME ||
      (r->mode == CUCONV_REGION_OUTSIDE && (!r->rects || r->n_rects <= 0));
}

static inline int
cuconv_regions_filter_nothing (const CuconvRegions * r)
{
  return r && r->mode == CUCONV_REGION_INSIDE && (!r->rects ||
      r->n_rects <= 0);
}

/* Clips r, grown by margin on every side, to a width x height frame, in
 * 64-bit arithmetic (no input overflows).  Returns 0 and leaves out
 * untouched when nothing is left. */
int cuconv_rect_clip (long long x, long long y, long long w, long long h,
    long long margin, int width, int height, CuconvRect * out);

/* The rectangle r (luma pixels) on plane p: divided by the plane's
 * subsampling, rounded outward (floor of the start, ceiling of the end),
 * clipped to the plane.  0 when nothing is left. */
int cuconv_rect_on_plane (const CuconvRect * r, const CuconvPlane * p,
    CuconvRect * out);

/* After a whole-frame filter has written dst: copies the source samples
 * back where regions says the input stays (every component, host
 * memory); soft regions blend the two by each sample's weight
 * (cuconv-region-weight.h).  Nothing for CUCONV_REGION_FRAME. */
void cuconv_regions_restore (const CuconvPlane * planes, int n_planes,
    const CuconvRegions * regions);

/* Region-relative filters (cuconv_regions_relative), on host memory:
 * dst becomes the source, then each rectangle, in the order of their
 * strengths, is filtered by `filter` from a crop of the source around it
 * (cuconv_regions_relative_crops) into a crop of scratch memory, and
 * written into dst where it applies.  The reference passes
 * cuconv_reference_frame and exact, the CPU engine its own.  Returns 0,
 * -1 without memory, or what `filter` returned. */
typedef int (*CuconvPlanesFilter) (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, void *data);
int cuconv_regions_relative_filter (const CuconvPlane * planes, int n_planes,
    const CuconvRegions * regions, int exact, CuconvPlanesFilter filter,
    void *data);

/* order[0 .. n_rects - 1] becomes the indices of regions' rectangles by
 * strength, then index: the order in which they are written, so that the
 * strongest of equal weights is the last.  Returns 0, -1 without
 * memory. */
int cuconv_regions_relative_order (const CuconvRegions * regions,
    int *order);

/* Makes f for the k-th rectangle of `order` (cuconv_regions_relative_order)
 * with regions->make_filter: anew for a pixelate filter or a strength
 * other than the last one's, else f stays. */
void cuconv_regions_relative_make (const CuconvRegions * regions,
    const int *order, int k, CuconvFilter * f);

/* For the rectangle rect (clipped to the frame) and f, just made for it:
 * pr[p], rect on each plane, and cr[p], the crop of the plane f reads
 * for it: pr grown by the filter's reach where that stays on the plane,
 * the plane's whole width or height where it does not; for the
 * untruncated gaussian the whole plane when exact, else a reach of 6
 * sigmas (what lies further weighs under 1/1000 of a step); pixelate's
 * whole blocks.  A pixelate f's grid then counts from each crop's first
 * sample.  Returns 0 when the rectangle is on no plane. */
int cuconv_regions_relative_crops (const CuconvRect * rect,
    const CuconvPlane * planes, int n_planes, CuconvFilter * f, int exact,
    CuconvRect * pr, CuconvRect * cr);

/* Bytes of one sample of p: 1 or 2. */
static inline int
cuconv_plane_sample_bytes (const CuconvPlane * p)
{
  return p->depth > 8 ? 2 : 1;
}

/* TRUE when the settings leave every frame unchanged: a blur or sharpen
 * with radius, sigma and sigma_y 0, a sharpen of amount 0, a custom kernel
 * with nothing set.  Sobel and laplacian are never the identity. */
int cuconv_settings_is_identity (const CuconvSettings * s);

/* The luma radius and sigma the settings resolve to horizontally: sigma 0
 * becomes 0.3 * (r - 1) + 0.8, radius 0 becomes ceil (3 * sigma) (sobel
 * and laplacian: radius 0 and sigma 0 mean radius 1).  For an untruncated
 * gaussian or sharpen (cuconv_settings_untruncated) *radius is 0. */
void cuconv_settings_resolve (const CuconvSettings * s, int *radius, double *sigma);

/* The same vertically: sigma_y when it is set, else as horizontally. */
void cuconv_settings_resolve_y (const CuconvSettings * s, int *radius,
    double *sigma);

/* Whether s is an untruncated gaussian or sharpen: radius 0 and ceil (3
 * sigma) above CUCONV_TRUNCATED_MAX_RADIUS for sigma or sigma_y.  Both
 * directions with a sigma are then untruncated; a direction without one
 * (sigma 0 beside sigma_y > 0) stays the one tap [1]. */
int cuconv_settings_untruncated (const CuconvSettings * s);

/* Fills t with the gaussian or box taps of s for a direction subsampled by
 * factor sub (1 or 2): radius ceil (r / sub), sigma / sub.  The taps sum
 * to 1. */
void cuconv_taps_init (CuconvTaps * t, const CuconvSettings * s, int sub);

/* Computes f from s: terms, taps for every subsampling, combine, matrix. */
void cuconv_filter_init (CuconvFilter * f, const CuconvSettings * s);

static inline const CuconvTaps *
cuconv_filter_taps_x (const CuconvFilter * f, const CuconvPlane * p)
{
  return &f->x[p->sub_x - 1];
}

static inline const CuconvTaps *
cuconv_filter_taps_y (const CuconvFilter * f, const CuconvPlane * p)
{
  return &f->y[p->sub_y - 1];
}

/* The CPU reference, which defines the semantics (docs/semantics.md):
 * a separable term is sum_j ky[j] * sum_i kx[i] * in (B (x + i), B (y + j)),
 * accumulated in float, horizontal first; terms are combined as f says,
 * rounded half away from zero and saturated to 0..2^depth - 1.
 * Components are filtered, copied or filled as p->op says.  Host
 * pointers.  Returns 0, or -1 when memory for the row buffer could not be
 * allocated (dst is then untouched). */
int cuconv_reference_plane_filter (const CuconvPlane * p, const CuconvFilter * f);

/* pixelate (f->combine CUCONV_COMBINE_PIXELATE, docs/semantics.md,
 * "Pixelate"): each filtered component of p becomes the mean of its
 * block's samples, rounded half up; copied and filled ones as p->op
 * says.  The definition, and fast enough for the CPU engine: one pass to
 * sum, one to write.  Host pointers.  Returns 0, or -1 without memory. */
int cuconv_pixelate_plane (const CuconvPlane * p, const CuconvFilter * f);


/* One separable term with the given taps (combine NONE). */
int cuconv_reference_plane (const CuconvPlane * p, const CuconvTaps * kx,
    const CuconvTaps * ky, CuconvBorder border);

int cuconv_reference_frame (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f);

/* The definition of regions: cuconv_reference_frame, then
 * cuconv_regions_restore.  Returns what cuconv_reference_frame returns. */
int cuconv_reference_frame_regions (const CuconvPlane * planes, int n_planes,
    const CuconvFilter * f, const CuconvRegions * regions);

/* The CPU engine (cuconv-cpu.c): the reference's semantics, for speed.
 * A frame is filtered in n_bands bands, each band's call free to run in a
 * thread of its own, in cuconv_cpu_passes () passes of the frame's planes
 * one after the other (2 for the untruncated gaussian: its columns, then
 * its rows; for Canny 4 or 5 stages of each component of each plane that
 * has pixels; 1 otherwise), after cuconv_cpu_prepare () for the frame.
 * The engine keeps its memory, grown only.  cuconv_cpu_takes () says
 * whether it computes f (else the reference does: pixelate, and taps
 * wider than CUCONV_TRUNCATED_MAX_RADIUS but the box's); the others
 * return 0, or -1 without memory. */
typedef struct _CuconvCpu CuconvCpu;
CuconvCpu *cuconv_cpu_new (int n_bands);
void cuconv_cpu_free (CuconvCpu * cpu);
int cuconv_cpu_takes (const CuconvFilter * f);
int cuconv_cpu_passes (const CuconvFilter * f, const CuconvPlane * planes,
    int n_planes);
int cuconv_cpu_prepare (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f);
int cuconv_cpu_frame_band (CuconvCpu * cpu, const CuconvPlane * planes,
    int n_planes, const CuconvFilter * f, int pass, int band);

/* The bilateral (cuconv-bilateral.c, docs/semantics.md): for each
 * filtered sample p, over the window j = -ry..ry (rows outer), i =
 * -rx..rx of its plane's taps,
 *   w = (kx[i] * ky[j]) * wr[|q - p|],  v = (sum w * q) / (sum w)
 * in float32, q the sample at (B (x + i), B (y + j)) (0 outside the plane
 * with the zero border), kx and ky the unnormalised spatial gaussians of
 * f->x and f->y, wr the range weights of cuconv_bilateral_range_lut ().
 * Writes rows row_begin..row_end - 1 of p (components copied or filled as
 * p->op says).  Returns 0, or -1 without memory (those rows untouched). */
int cuconv_bilateral_rows (const CuconvPlane * p, const CuconvFilter * f,
    int row_begin, int row_end);

/* Non-local means (cuconv-nlmeans.c, docs/semantics.md, "Non-local
 * means"): rows [row_begin, row_end) of p filtered by f (combine
 * CUCONV_COMBINE_NLMEANS), reading the whole plane through the border:
 * each filtered sample the weighted mean of the samples of its search
 * window, the weights exp (-d / (2 sr^2)) of d, the mean squared
 * difference of their patches, sr cuconv_bilateral_sigma_range ().
 * Returns 0, or -1 without memory. */
int cuconv_nlmeans_rows (const CuconvPlane * p, const CuconvFilter * f,
    int row_begin, int row_end);

/* Canny's edges (cuconv-canny.c, docs/semantics.md, "Canny"): of each
 * filtered component of p, the maximum on an edge and 0 elsewhere,
 * through f's border; a whole plane.  Returns 0, or -1 without memory. */
int cuconv_canny_plane (const CuconvPlane * p, const CuconvFilter * f);

/* The range sigma, in samples of depth bits, of the bilateral f:
 * f->sigma_range * 2^(depth - 8), at least CUCONV_MIN_SIGMA unless 0. */
double cuconv_bilateral_sigma_range (const CuconvFilter * f, int depth);

/* wr[d] = (float) exp (-d^2 / (2 sigma_r^2)) in double, for d = 0..n - 1;
 * sigma_r 0 gives wr[0] = 1 and 0 elsewhere. */
void cuconv_bilateral_range_lut (float *wr, int n, double sigma_r);

/* The temporal denoise (cuconv-temporal.c, docs/semantics.md): for each
 * sample a (the input) and b (the previous output, the state), of a
 * component the planes rule filters,
 *   t = k[|a - b| >> (depth - 8)],  out = a + ((t * (b - a) + 128) >> 8)
 * in integers (>> an arithmetic shift: floor), with k the table of
 * cuconv_temporal_lut (); out becomes the state.  Other components, and
 * every one on the first frame (first), take the input word itself. */
#define CUCONV_TEMPORAL_LUT 256
#define CUCONV_MAX_TEMPORAL_THRESHOLD 255.0

/* k[d] = round (255 * strength * (1 - d / threshold)^2) for d below
 * threshold (8-bit levels), else 0: strength (0..1) for still samples,
 * falling smoothly to 0 at the threshold.  threshold 0 or strength 0
 * gives a table of zeros: the filter is off. */
void cuconv_temporal_lut (uint8_t * k, double strength, double threshold);

/* The new state of a filtered sample: a of the input, b of the previous
 * output (depth bits), k the table, down = depth - 8. */
CUCONV_HD unsigned
cuconv_temporal_blend (int a, int b, const uint8_t * k, int down)
{
  const int t = k[(a > b ? a - b : b - a) >> down];

  /* t / 256 of the way to the previous output, rounded half up (>>
   * floors) */
  return (unsigned) (a + ((t * (b - a) + 128) >> 8));
}

/* Whether table k leaves every sample as it is. */
int cuconv_temporal_is_off (const uint8_t * k);

/* Rows row_begin..row_end - 1 of p: p->src the input frame's plane,
 * p->dst the state (the same layout), read as the previous output and
 * overwritten with the new one.  Host pointers. */
void cuconv_temporal_rows (const CuconvPlane * p, const uint8_t * k,
    int first, int row_begin, int row_end);

/* Round half away from zero, then saturate to 0..max (a NaN gives 0). */
CUCONV_HD unsigned
cuconv_round_sat (float v, unsigned max)
{
  float r = v < 0.0f ? v - 0.5f : v + 0.5f;
  if (!(r > 0.0f))
    return 0;
  if (r >= (float) max)
    return max;
  return (unsigned) r;
}

CUCONV_HD uint8_t
cuconv_round_sat_u8 (float v)
{
  return (uint8_t) cuconv_round_sat (v, 255);
}

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_H__ */
