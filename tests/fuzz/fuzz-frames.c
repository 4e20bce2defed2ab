/* gst-cudaconvolve fuzzer: frames, caps and video metas.
 *
 * The input chooses caps (a format of the 18, up to 70x70) and settings
 * (identity, a blur, the bilateral, Canny, the temporal denoise still or
 * compensated, a region), then
 * buffers: of any size, in one to three memories, with or without a
 * GstVideoMeta whose format, size, plane count, offsets and strides are
 * the layout's, near it, or anything.  The element must drop what does
 * not hold a frame and filter the rest, reading and writing inside the
 * buffers only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "fuzz-common.h"


static const gchar *const settings[] = {
  "radius=0", "radius=2", "kernel=box radius=3 border=wrap",
  "kernel=bilateral radius=2", "temporal=0.5 radius=0",
  "kernel=sobel border=zero", "region=outside-roi regions=<<1,1,5,5>>",
  "kernel=custom matrix=<<1,2,1>,<2,4,2>,<1,2,1>>",
  "kernel=canny radius=1 threshold-low=10",
  "temporal=0.8 temporal-mode=compensated radius=0",
};

/* A size near size: the same, a little more or less, or anything up to
 * 64 KiB. */
static gsize
fuzz_near (FuzzInput * in, gsize size)
{
  gsize d;

  switch (fuzz_below (in, 4)) {
    case 0:
      return size;
    case 1:
      return size + fuzz_below (in, 64);
    case 2:
      d = fuzz_below (in, 64);
      return size - MIN (size, d);
    default:
      return fuzz_below (in, 65536);
  }
}

/* A buffer of size bytes (from the input, then zeros) in up to three
 * memories. */
static GstBuffer *
fuzz_memories (FuzzInput * in, gsize size)
{
  guint n = 1 + fuzz_below (in, 3), i;
  GstBuffer *buf = gst_buffer_new ();
  gsize left = size;

  for (i = 0; i < n; i++) {
    gsize part = i + 1 == n ? left : fuzz_near (in, left / 2);
    GstMemory *mem;

    part = MIN (part, left);
    mem = fuzz_memory_new (in, MAX (part, 1));
    if (part == 0)
      gst_memory_resize (mem, 0, 0);
    gst_buffer_append_memory (buf, mem);
    left -= part;
  }
  return buf;
}

/* A GstVideoMeta for a frame of info on buf: each field the layout's,
 * near it, or anything. */
static void
fuzz_meta (FuzzInput * in, GstBuffer * buf, const GstVideoInfo * info)
{
  GstVideoFormat format = GST_VIDEO_INFO_FORMAT (info);
  guint w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  guint n = GST_VIDEO_INFO_N_PLANES (info), p;
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
  guint8 wrong = fuzz_u8 (in);

  if (wrong & 1)
    format = (GstVideoFormat) fuzz_below (in, 100);
  if (wrong & 2)
    w = fuzz_u8 (in) & 1 ? w + fuzz_below (in, 8) - 4 : fuzz_u32 (in);
  if (wrong & 4)
    h = fuzz_u8 (in) & 1 ? h + fuzz_below (in, 8) - 4 : fuzz_u32 (in);
  if (wrong & 8)
    n = fuzz_below (in, GST_VIDEO_MAX_PLANES + 1);
  for (p = 0; p < GST_VIDEO_MAX_PLANES; p++) {
    offset[p] = info->offset[p];
    stride[p] = info->stride[p];
    switch (fuzz_below (in, 4)) {
      case 0:
        break;
      case 1:
        offset[p] += fuzz_below (in, 16);
        stride[p] += (gint) fuzz_below (in, 16) - 8;
        break;
      case 2:
        offset[p] -= fuzz_below (in, 16);
        break;
      default:
        offset[p] = (gsize) fuzz_u64 (in);
        stride[p] = (gint) fuzz_u32 (in);
        break;
    }
  }
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format,
      w, h, n, offset, stride);
}

/* Sets args ("name=value" separated by spaces) as gst-launch-1.0 would. */
static void
fuzz_set_args (GstElement * e, const gchar * args)
{
  gchar **kv = g_strsplit (args, " ", -1);
  guint i;

  for (i = 0; kv[i]; i++) {
    gchar **pair = g_strsplit (kv[i], "=", 2);

    gst_util_set_object_arg (G_OBJECT (e), pair[0], pair[1]);
    g_strfreev (pair);
  }
  g_strfreev (kv);
}

int
LLVMFuzzerTestOneInput (const guint8 * data, gsize size)
{
  FuzzInput in = { data, size };
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h = fuzz_harness_new (&in, 70, 70, &e, &info);
  guint steps = 0;

  fuzz_set_args (e, settings[fuzz_below (&in, G_N_ELEMENTS (settings))]);
  while (fuzz_more (&in) && steps++ < 16) {
    GstBuffer *buf = fuzz_memories (&in, fuzz_near (&in, info.size));

    if (fuzz_u8 (&in) & 1)
      fuzz_meta (&in, buf, &info);
    fuzz_push (h, buf);
  }
  fuzz_harness_free (h, e);
  return 0;
}
