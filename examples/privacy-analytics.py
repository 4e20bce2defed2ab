#!/usr/bin/env python3
# privacy-analytics.py: the detections GStreamer's own analytics produce
# (GStreamer 1.24 and newer) blurred by cudaconvolve.  The application
# plays the detector: it attaches to each frame a GstAnalyticsRelationMeta
# with object-detection entries (label, box, confidence) and a tracking
# entry for the face, as an inference element followed by a tracker would:
#
#   appsrc ! cudaconvolve region=roi roi-types=face roi-min-confidence=0.5
#            roi-margin=8 roi-hold=2 roi-shape=ellipse roi-feather=6
#            roi-scale=0.15 ! appsink
#
# Each frame has a face (confidence 0.9, tracked as object 1) that moves,
# and a second, weak "face" (confidence 0.3) that stays below
# roi-min-confidence.  In frame 2 the detector misses the face: roi-hold
# keeps blurring where it was last seen.  The blur is an oval (the ellipse
# inscribed in the face box grown by the margin) that fades in over 6
# pixels inside its edge, with a sigma of 0.15 times the box's shorter
# side with the margin (12 for the 64x80 face, 14.4 for the 80x80 one),
# so that a face is as unrecognisable close up as far away.  The check on the frames pulled from appsink:
# deeper in the oval than the fade the picture changed, outside the oval
# (the box's corners, the weak detection, the rest of the frame) it is the
# input bit for bit.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Needs PyGObject and GStreamer's typelibs with GstAnalytics (Debian 13:
# python3-gi, gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0,
# gir1.2-gst-plugins-bad-1.0), and a plugin built against GStreamer 1.24
# or newer.  Run, with the plugin built in build/:
#   GST_PLUGIN_PATH=build/gst python3 examples/privacy-analytics.py
# Exits 0 when the frames are as they should be, 1 otherwise, 77 where
# GStreamer's analytics library is missing.

import math
import random
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

try:
    gi.require_version("GstAnalytics", "1.0")
    from gi.repository import GstAnalytics  # noqa: E402
except (ValueError, ImportError):
    print("no GstAnalytics typelib (GStreamer 1.24 or newer, "
          "gir1.2-gst-plugins-bad-1.0)", file=sys.stderr)
    sys.exit(77)

WIDTH, HEIGHT, FRAMES = 320, 240, 5
MARGIN = 8
FEATHER = 6
BLUR = (f"region=roi roi-types=face roi-min-confidence=0.5 "
        f"roi-margin={MARGIN} roi-hold=2 roi-shape=ellipse "
        f"roi-feather={FEATHER} roi-scale=0.15")

# Where the detector finds the face in each frame (x, y, w, h), None where
# it misses it; the weak detection never moves.
FACES = [(40, 30, 64, 80), (60, 40, 64, 80), None, (100, 60, 64, 80),
         (270, 140, 80, 80)]
WEAK_BOX = (200, 10, 60, 50)


def blurred_box(n):
    """The face box the element must blur in frame n: the frame's own, or
    while the detector misses it the last one seen (roi-hold)."""
    while FACES[n] is None:
        n -= 1
    return FACES[n]


def make_frame(rng):
    """A textured I420 frame (noise), planes packed tightly."""
    return rng.randbytes(WIDTH * HEIGHT * 3 // 2)


def planes():
    """(offset, width, height, subsampling) of each I420 plane."""
    cw, ch = (WIDTH + 1) // 2, (HEIGHT + 1) // 2
    return [(0, WIDTH, HEIGHT, 1),
            (WIDTH * HEIGHT, cw, ch, 2),
            (WIDTH * HEIGHT + cw * ch, cw, ch, 2)]


def depth(box, x, y, sub):
    """How far the centre of sample (x, y) of a plane subsampled by sub
    lies inside the ellipse inscribed in the face box grown by the margin,
    in luma pixels; 0 or less outside it (docs/semantics.md, "Soft
    regions")."""
    bx, by, bw, bh = box
    x0, y0 = bx - MARGIN, by - MARGIN
    x1, y1 = bx + bw + MARGIN, by + bh + MARGIN
    a, b = (x1 - x0) / 2, (y1 - y0) / 2
    tx = ((x + 0.5) * sub - (x0 + x1) / 2) / a
    ty = ((y + 0.5) * sub - (y0 + y1) / 2) / b
    return (1 - math.sqrt(tx * tx + ty * ty)) * min(a, b)


def check(n, before, after):
    errors = []
    for index, (offset, pw, ph, sub) in enumerate(planes()):
        changed_inside = inside = changed_outside = 0
        for y in range(ph):
            row = offset + y * pw
            for x in range(pw):
                changed = before[row + x] != after[row + x]
                d = depth(blurred_box(n), x, y, sub)
                if d >= FEATHER:
                    inside += 1
                    changed_inside += changed
                elif d <= 0:
                    changed_outside += changed
        print(f"frame {n} plane {index}: {changed_inside}/{inside} samples "
              f"changed inside the oval, {changed_outside} outside it")
        if changed_inside < 0.9 * inside:
            errors.append(f"frame {n} plane {index}: only {changed_inside} "
                          f"of {inside} samples changed inside the oval")
        if changed_outside:
            errors.append(f"frame {n} plane {index}: {changed_outside} "
                          "samples changed outside the oval")
    return errors


def attach_detections(buf, n):
    """What an inference element and a tracker attach to frame n."""
    meta = GstAnalytics.buffer_add_analytics_relation_meta(buf)
    face = GLib.quark_from_string("face")
    if FACES[n] is not None:
        ok, od = meta.add_od_mtd(face, *FACES[n], 0.9)
        assert ok
        ok, track = meta.add_tracking_mtd(1, 0)
        assert ok
        assert meta.set_relation(GstAnalytics.RelTypes.RELATE_TO, od.id,
                                 track.id)
    ok, _ = meta.add_od_mtd(face, *WEAK_BOX, 0.3)
    assert ok


def main():
    Gst.init(None)
    rng = random.Random(11)
    caps = (f"video/x-raw,format=I420,width={WIDTH},height={HEIGHT},"
            "framerate=30/1")
    try:
        pipeline = Gst.parse_launch(
            f"appsrc name=src format=time caps={caps} "
            f"! cudaconvolve name=blur {BLUR} "
            "! appsink name=sink sync=false")
    except GLib.Error as e:
        print(f"cannot build the pipeline: {e.message}", file=sys.stderr)
        return 1
    blurb = pipeline.get_by_name("blur").find_property("roi-types").blurb
    if "reads no analytics metadata" in blurb:
        print("this build of the plugin reads no analytics metadata",
              file=sys.stderr)
        return 77
    src = pipeline.get_by_name("src")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)

    errors = []
    for n in range(FRAMES):
        data = make_frame(rng)
        buf = Gst.Buffer.new_wrapped(data)
        buf.pts = n * Gst.SECOND // 30
        buf.duration = Gst.SECOND // 30
        attach_detections(buf, n)
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
        # The analytics meta goes on downstream, untouched.
        if GstAnalytics.buffer_get_analytics_relation_meta(out) is None:
            errors.append(f"frame {n}: the analytics meta did not come out")

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
