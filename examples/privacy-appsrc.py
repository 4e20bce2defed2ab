#!/usr/bin/env python3
# privacy-appsrc.py: an application with its own detector blurs what it
# found.  It pushes frames from appsrc, attaches a
# GstVideoRegionOfInterestMeta to each (the way facedetect or an inference
# element would), and cudaconvolve blurs only those regions:
#
#   appsrc ! cudaconvolve region=roi roi-types=face roi-margin=8
#            sigma=12 radius=0 ! appsink
#
# Each frame carries a "face" box (moving from frame to frame) and a
# "plate" box.  roi-types=face selects the first only, so the check on the
# frames pulled from appsink is: inside the face box grown by the margin
# the picture changed, everywhere else (the plate included) it is the input
# bit for bit.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Needs PyGObject and GStreamer's typelibs (Debian: python3-gi,
# gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0).  Run, with the plugin
# built in build/:
#   GST_PLUGIN_PATH=build/gst python3 examples/privacy-appsrc.py
# Exits 0 when the frames are as they should be, 1 otherwise.

import random
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import GLib, Gst, GstVideo  # noqa: E402

WIDTH, HEIGHT, FRAMES = 320, 240, 4
MARGIN = 8
BLUR = f"region=roi roi-types=face roi-margin={MARGIN} sigma=12 radius=0"


def face_box(n):
    """Where our "detector" finds a face in frame n: x, y, w, h in pixels.
    The last frame's box runs past the right edge: the element clips it."""
    return [(40, 30, 64, 80), (90, 60, 64, 80), (180, 100, 72, 90),
            (270, 140, 80, 80)][n % 4]


PLATE_BOX = (200, 10, 100, 30)     # a region of another type, left alone


def make_frame(rng):
    """A textured I420 frame (noise), so that a blur changes every pixel
    it touches.  Planes are packed tightly: Y, then U, then V."""
    return rng.randbytes(WIDTH * HEIGHT * 3 // 2)


def planes():
    """(offset, width, height, subsampling) of each I420 plane."""
    cw, ch = (WIDTH + 1) // 2, (HEIGHT + 1) // 2
    return [(0, WIDTH, HEIGHT, 1),
            (WIDTH * HEIGHT, cw, ch, 2),
            (WIDTH * HEIGHT + cw * ch, cw, ch, 2)]


def grown(box, plane_w, plane_h, sub):
    """The box grown by the margin, clipped to the frame, in a plane's
    samples (a chroma plane's rectangle rounded outward)."""
    x, y, w, h = box
    x0, y0 = max(0, x - MARGIN), max(0, y - MARGIN)
    x1, y1 = min(WIDTH, x + w + MARGIN), min(HEIGHT, y + h + MARGIN)
    return (x0 // sub, y0 // sub, min(plane_w, -(-x1 // sub)),
            min(plane_h, -(-y1 // sub)))


def check(n, before, after):
    """Inside the grown face box: most samples changed; outside: none."""
    errors = []
    for index, (offset, pw, ph, sub) in enumerate(planes()):
        x0, y0, x1, y1 = grown(face_box(n), pw, ph, sub)
        changed_inside = inside = changed_outside = 0
        for y in range(ph):
            row = offset + y * pw
            for x in range(pw):
                changed = before[row + x] != after[row + x]
                if x0 <= x < x1 and y0 <= y < y1:
                    inside += 1
                    changed_inside += changed
                else:
                    changed_outside += changed
        print(f"frame {n} plane {index}: {changed_inside}/{inside} samples "
              f"changed inside the face box, {changed_outside} outside")
        # A sigma-12 blur of noise moves nearly every sample; 90 % leaves
        # room for the few that land on their own value.
        if changed_inside < 0.9 * inside:
            errors.append(f"frame {n} plane {index}: only {changed_inside} "
                          f"of {inside} samples changed inside the face box")
        if changed_outside:
            errors.append(f"frame {n} plane {index}: {changed_outside} "
                          "samples changed outside the face box")
    return errors


def main():
    Gst.init(None)
    rng = random.Random(10)
    caps = (f"video/x-raw,format=I420,width={WIDTH},height={HEIGHT},"
            "framerate=30/1")
    try:
        pipeline = Gst.parse_launch(
            f"appsrc name=src format=time caps={caps} "
            f"! cudaconvolve name=blur {BLUR} "
            "! appsink name=sink sync=false")
    except GLib.Error as e:
        # e.g. a cudaconvolve without the region properties (older build)
        print(f"cannot build the pipeline: {e.message}", file=sys.stderr)
        return 1
    src = pipeline.get_by_name("src")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)

    errors = []
    for n in range(FRAMES):
        data = make_frame(rng)
        buf = Gst.Buffer.new_wrapped(data)
        buf.pts = n * Gst.SECOND // 30
        buf.duration = Gst.SECOND // 30
        # What a detector does: one meta per thing found, typed by name.
        GstVideo.buffer_add_video_region_of_interest_meta(
            buf, "face", *face_box(n))
        GstVideo.buffer_add_video_region_of_interest_meta(
            buf, "plate", *PLATE_BOX)
        src.emit("push-buffer", buf)

        sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
        if sample is None:
            errors.append(f"frame {n}: nothing came out of the pipeline")
            break
        out = sample.get_buffer()
        ok, info = out.map(Gst.MapFlags.READ)
        if not ok:
            errors.append(f"frame {n}: the output buffer cannot be mapped")
            break
        try:
            errors += check(n, data, bytes(info.data))
        finally:
            out.unmap(info)
        # The metas go on downstream (to an overlay, an encoder...).
        roi_api = GstVideo.video_region_of_interest_meta_api_get_type()
        if out.get_n_meta(roi_api) != 2:
            errors.append(f"frame {n}: {out.get_n_meta(roi_api)} region "
                          "metas came out, 2 went in")

    src.emit("end-of-stream")
    msg = pipeline.get_bus().timed_pop_filtered(
        10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if msg is None:
        errors.append("no EOS")
    elif msg.type == Gst.MessageType.ERROR:
        err, debug = msg.parse_error()
        errors.append(f"error from {msg.src.get_name()}: {err.message}")
    pipeline.set_state(Gst.State.NULL)

    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
