/* gst-cudaconvolve fuzzer: properties set while frames flow.
 *
 * The input chooses the caps (a format of the 18, up to 48x32), then up
 * to 64 steps: set a property (a deserialised string or a value of its
 * type, arrays nested two deep, as fuzz_set_property () makes them),
 * push a frame, change the caps, or send a flush, gap or discontinuity.
 * Nothing may crash, leave a buffer, raise a critical or trip a sanitizer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"


/* Events a stream sees besides frames. */
static void
fuzz_event (FuzzInput * in, GstHarness * h)
{
  switch (fuzz_below (in, 3)) {
    case 0:{
      GstSegment segment;

      /* a flushing seek: a new segment after the flush, as upstream sends */
      gst_harness_push_event (h, gst_event_new_flush_start ());
      gst_harness_push_event (h, gst_event_new_flush_stop (TRUE));
      gst_segment_init (&segment, GST_FORMAT_TIME);
      gst_harness_push_event (h, gst_event_new_segment (&segment));
      break;
    }
    case 1:
      gst_harness_push_event (h, gst_event_new_gap (0, GST_SECOND));
      break;
    default:{
      GstBuffer *empty = gst_buffer_new ();

      /* a discontinuity marker without a frame: dropped as too small */
      GST_BUFFER_FLAG_SET (empty, GST_BUFFER_FLAG_DISCONT);
      gst_harness_push (h, empty);
      break;
    }
  }
}

int
LLVMFuzzerTestOneInput (const guint8 * data, gsize size)
{
  FuzzInput in = { data, size };
  GstVideoInfo info;
  GstElement *e;
  GstHarness *h = fuzz_harness_new (&in, 48, 32, &e, &info);
  guint steps = 0;

  while (fuzz_more (&in) && steps++ < 64) {
    switch (fuzz_below (&in, 8)) {
      case 0:
      case 1:
      case 2:
      case 3:
        fuzz_set_property (&in, e);
        break;
      case 4:
      case 5:
        fuzz_push (h, fuzz_frame (&in, &info));
        break;
      case 6:
        fuzz_video_info (&in, &info, 48, 32);
        gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
        break;
      default:
        fuzz_event (&in, h);
        break;
    }
  }
  /* the settings the input ended with, on a frame */
  fuzz_push (h, fuzz_frame (&in, &info));
  fuzz_harness_free (h, e);
  return 0;
}
