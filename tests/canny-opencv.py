#!/usr/bin/env python3
# canny-opencv.py: cudaconvolve kernel=canny beside OpenCV's cv::Canny.
#
#   canny-opencv.py [--backend=cpu|cuda] [--min-agree=F] [--bench]
#
# The same GRAY8 frames through cudaconvolve kernel=canny radius=0 sigma=0
# border=clamp (no smoothing; the 3x3 Sobel reads repeat the edge sample,
# as OpenCV's BORDER_REPLICATE) and through cv2.Canny (aperture 3, the L2
# gradient), at three pairs of thresholds: a photograph (python-matplotlib-
# data's portrait of Grace Hopper) and seeded random frames of odd sizes
# (noise with blobs: many edges, many ties).  Prints, for each, the share
# of pixels on which both agree and the edge pixels of each; exits 1 when
# any share is below --min-agree (default 1: every pixel the same).  The
# definitions agree by construction: the same gradient, the same
# quantisation of its direction (tan 22.5 degrees as 13573 / 2^15), the
# same ties in the suppression (strictly above the left and upper
# neighbours, above or equal to the right and lower ones, strictly above
# both on a diagonal) and thresholds on the squared magnitude (docs/
# semantics.md, "Canny").  With --bench, a benchmark instead: ms a frame
# of cv2.Canny and of the element on the portrait scaled to 1920x1080 (the
# median of 15; the element's less the same pipeline with identity in its
# place).  Needs python3-gi, python3-opencv and python-matplotlib-data;
# exits 77 without them.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys

try:
    import cv2
    import numpy as np
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
except (ImportError, ValueError) as e:
    print(f"SKIP: {e}")
    sys.exit(77)

PORTRAIT = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
THRESHOLDS = ((50, 150), (20, 60), (100, 300))


def through_element(gray, low, high, backend):
    """gray (2-D uint8) through cudaconvolve kernel=canny."""
    h, w = gray.shape
    pipe = Gst.parse_launch(
        f"appsrc name=src caps=video/x-raw,format=GRAY8,width={w},"
        f"height={h},framerate=0/1 ! cudaconvolve backend={backend} "
        f"kernel=canny radius=0 sigma=0 border=clamp threshold-low={low} "
        f"threshold-high={high} ! appsink name=sink sync=false")
    src, sink = pipe.get_by_name("src"), pipe.get_by_name("sink")
    # GRAY8 rows are 4-byte aligned in GStreamer's default layout
    stride = (w + 3) // 4 * 4
    padded = np.zeros((h, stride), np.uint8)
    padded[:, :w] = gray
    pipe.set_state(Gst.State.PLAYING)
    src.emit("push-buffer", Gst.Buffer.new_wrapped(padded.tobytes()))
    src.emit("end-of-stream")
    sample = sink.emit("pull-sample")
    msg = pipe.get_bus().timed_pop_filtered(0, Gst.MessageType.ERROR)
    pipe.set_state(Gst.State.NULL)
    if sample is None or msg is not None:
        sys.exit(f"cudaconvolve kernel=canny: "
                 f"{msg.parse_error()[0].message if msg else 'no output'}")
    ok, m = sample.get_buffer().map(Gst.MapFlags.READ)
    out = np.frombuffer(m.data, np.uint8).reshape(h, stride)[:, :w].copy()
    sample.get_buffer().unmap(m)
    return out


def pipeline_ms(gray, element, runs=15):
    """The median ms a frame of appsrc ! element ! appsink on gray."""
    import time
    h, w = gray.shape
    pipe = Gst.parse_launch(
        f"appsrc name=src caps=video/x-raw,format=GRAY8,width={w},"
        f"height={h},framerate=0/1 ! {element} ! appsink name=sink "
        "sync=false")
    src, sink = pipe.get_by_name("src"), pipe.get_by_name("sink")
    data = gray.tobytes()
    pipe.set_state(Gst.State.PLAYING)
    times = []
    for _ in range(runs + 2):
        t = time.perf_counter()
        src.emit("push-buffer", Gst.Buffer.new_wrapped(data))
        sink.emit("pull-sample")
        times.append(time.perf_counter() - t)
    pipe.set_state(Gst.State.NULL)
    return 1000 * sorted(times[2:])[runs // 2]


def bench(backend):
    """ms a 1920x1080 frame: cv2.Canny beside the element."""
    import time
    gray = cv2.resize(cv2.imread(PORTRAIT, cv2.IMREAD_GRAYSCALE),
                      (1920, 1080))
    times = []
    for _ in range(15):
        t = time.perf_counter()
        cv2.Canny(gray, 50, 150, apertureSize=3, L2gradient=True)
        times.append(time.perf_counter() - t)
    theirs = 1000 * sorted(times)[7]
    base = pipeline_ms(gray, "identity")
    ours = pipeline_ms(gray, f"cudaconvolve backend={backend} kernel=canny "
                       "radius=0 sigma=0 border=clamp") - base
    print(f"| frame | cudaconvolve backend={backend} (ms) | cv2.Canny (ms, "
          f"{cv2.getNumThreads()} threads) | ours / theirs |\n"
          f"|---|---:|---:|---:|\n"
          f"| GRAY8 1920x1080, 50/150 | {ours:.1f} | {theirs:.1f} | "
          f"{ours / theirs:.1f} |")


def random_frame(rng, w, h):
    """Noise over smooth blobs."""
    blobs = cv2.resize(rng.integers(0, 256, (h // 16 + 2, w // 16 + 2),
                                    dtype=np.uint8), (w, h),
                       interpolation=cv2.INTER_CUBIC)
    noise = rng.integers(-20, 21, (h, w))
    return np.clip(blobs.astype(int) + noise, 0, 255).astype(np.uint8)


def main():
    backend, min_agree, timing = "cpu", 1.0, False
    for a in sys.argv[1:]:
        if a.startswith("--backend="):
            backend = a.split("=", 1)[1]
        elif a.startswith("--min-agree="):
            min_agree = float(a.split("=", 1)[1])
        elif a == "--bench":
            timing = True
        else:
            sys.exit("usage: canny-opencv.py [--backend=cpu|cuda] "
                     "[--min-agree=F] [--bench]")
    if not os.path.exists(PORTRAIT):
        print(f"SKIP: {PORTRAIT} is missing")
        sys.exit(77)
    Gst.init(None)
    if not Gst.ElementFactory.find("cudaconvolve"):
        sys.exit("cudaconvolve not found: is GST_PLUGIN_PATH set?")
    if timing:
        bench(backend)
        return

    rng = np.random.default_rng(20261205)
    frames = [("portrait 512x600",
               cv2.imread(PORTRAIT, cv2.IMREAD_GRAYSCALE))]
    for w, h in ((333, 197), (641, 359), (17, 9)):
        frames.append((f"random {w}x{h}", random_frame(rng, w, h)))

    worst = 1.0
    print("| frame | thresholds | agree | edges (cudaconvolve) | "
          "edges (OpenCV) |\n|---|---|---:|---:|---:|")
    for name, gray in frames:
        for low, high in THRESHOLDS:
            ours = through_element(gray, low, high, backend)
            ref = cv2.Canny(gray, low, high, apertureSize=3,
                            L2gradient=True)
            agree = float((ours == ref).mean())
            worst = min(worst, agree)
            print(f"| {name} | {low}/{high} | {agree:.6f} | "
                  f"{int((ours > 0).sum())} | {int((ref > 0).sum())} |")
    if worst < min_agree:
        sys.exit(f"FAIL: agreement {worst:.6f} below {min_agree}")
    print(f"PASS: agreement at least {worst:.6f}")


if __name__ == "__main__":
    main()
