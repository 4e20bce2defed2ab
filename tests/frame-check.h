/* gst-cudaconvolve: frames for the element tests, and their check against
 * the CPU reference (shared by test-element and test-gpu-element).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __FRAME_CHECK_H__
#define __FRAME_CHECK_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuconv.h"

G_BEGIN_DECLS

/* info for format at w x h, 30 frames/s; fails the test on a bad format. */
void frame_check_info_init (GstVideoInfo * info, const gchar * format,
    gint w, gint h);

/* Every byte of buf random, padding included. */
void frame_check_fill_random (GstBuffer * buf, GRand * rand);

/* A random frame in info's default layout, or (padded) with every row
 * padded past its samples and planes at other offsets, described by a
 * GstVideoMeta: strides and offsets odd (for 16-bit samples, even: a
 * video meta must align them), the memory at an odd address. */
GstBuffer *frame_check_buffer_random (const GstVideoInfo * info,
    GRand * rand, gboolean padded);

/* The settings e filters with now, custom kernels included. */
void frame_check_element_settings (GstElement * e, CuconvSettings * s);

/* The planes property of e. */
CuconvPlanes frame_check_element_planes (GstElement * e);

/* Compares out, read through its own layout, with cuconv_reference_frame ()
 * on in for s and planes, the planes described from a table of the
 * formats' layouts written here, independently of the element.  Returns
 * the number of samples (bytes, or 16-bit words) whose value differs by
 * more than tolerance, or whose bits below the value (P010) differ, and
 * describes the first of them in first (first_len bytes).  Adds the
 * samples compared to *samples and those that differ but within tolerance
 * to *near, when given. */
guint64 frame_check_compare_planes (const GstVideoInfo * info,
    GstBuffer * in, GstBuffer * out, const CuconvSettings * s,
    CuconvPlanes planes, guint tolerance, gchar * first, gsize first_len,
    guint64 * samples, guint64 * near);

/* frame_check_compare_planes () with planes=auto. */
guint64 frame_check_compare (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * out, const CuconvSettings * s, guint tolerance,
    gchar * first, gsize first_len, guint64 * samples, guint64 * near);

/* The temporal denoise's definition on in, a frame of info: state, a
 * buffer of info's default layout, holds the previous output (unless
 * first) and becomes the new one (cuconv_temporal_rows () on every plane,
 * or compensated cuconv_motion_search () and
 * cuconv_temporal_rows_compensated (), the components filtered by the
 * planes rule for s's kernel and which, the table of strength and
 * threshold). */
void frame_check_temporal (const GstVideoInfo * info, GstBuffer * in,
    GstBuffer * state, const CuconvSettings * s, CuconvPlanes which,
    gdouble strength, gdouble threshold, gboolean compensated,
    gboolean first);

/* Regions: rectangles already clipped to the frame, luma pixels. */
typedef struct
{
  gint x, y, w, h;
} FrameCheckBox;

/* Over the pixels of a and b (info's format, any strides) that mode
 * (CUCONV_REGION_*) filters, or leaves (filtered FALSE), given boxes
 * carried to each plane rounded outward: copies b's into a (copy), or
 * counts those that differ, the first described in first. */
guint64 frame_check_region_pixels (const GstVideoInfo * info,
    GstBuffer * a, GstBuffer * b, gint mode, const FrameCheckBox * boxes, guint n, gboolean filtered,
    gboolean copy, gchar * first, gsize first_len);

/* A kB field ("VmRSS", "VmHWM", "VmPeak") of /proc/self/status; fails the
 * test when it cannot be read. */
guint64 frame_check_proc_kb (const gchar * field);

/* Sets the properties in args, "name=value" separated by spaces, from
 * strings as gst-launch-1.0 does. */
void frame_check_set_args (GstElement * e, const gchar * args);

/* A test meta with the given tags that copies itself (and its value)
 * whenever asked, so that only the element under test decides whether it
 * reaches the output.  Registered once per name. */
typedef struct
{
  GstMeta meta;
  gint value;
} FrameCheckMeta;

const GstMetaInfo *frame_check_meta_info (const gchar * name,
    const gchar ** tags);

/* The level GObject logs a value refused by a property's range or type
 * at: a warning up to GLib 2.7x, a critical in newer releases (Debian 13's
 * 2.84, for one).  Either is what a refusal looks like. */
#define FRAME_CHECK_REFUSAL_LEVELS (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL)

/* Like gstcheck's ASSERT_WARNING (): code must make GObject log a refusal,
 * at whichever level this GLib logs it. */
#define ASSERT_REFUSED(code)                                            \
G_STMT_START {                                                          \
  _gst_check_expecting_log = TRUE;                                      \
  _gst_check_raised_warning = FALSE;                                    \
  _gst_check_raised_critical = FALSE;                                   \
  code;                                                                 \
  if (!_gst_check_raised_warning && !_gst_check_raised_critical)        \
    _ck_assert_failed (__FILE__, __LINE__,                              \
        "Expected a refusal (g_warning or g_critical), got nothing",    \
        NULL);                                                          \
  _gst_check_expecting_log = FALSE;                                     \
} G_STMT_END

G_END_DECLS
#endif /* __FRAME_CHECK_H__ */
