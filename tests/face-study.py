#!/usr/bin/env python3
# face-study.py: does region=roi anonymize a face at every size?
#
#   face-study.py [--backend=cpu|cuda] [--pictures=DIR]
#
# A photograph with a face (python-matplotlib-data's portrait of Grace
# Hopper) is scaled so that the face is 32, 64, 128, 256 and 512 pixels
# wide and put in the middle of a 1920x1080 frame.  Debian's OpenCV face
# detector (the frontal-face Haar cascade of opencv-data) looks for it
# before and after each treatment of the face's box (attached to the frame
# as a "face" GstVideoRegionOfInterestMeta, as a detector upstream would):
#
#   - relative: cudaconvolve region=roi roi-scale=0.15 roi-margin=4%
#     roi-shape=ellipse roi-feather=4% (the margin and feather as a share
#     of the face, as an application sets them per stream);
#   - sigma 12: cudaconvolve region=roi sigma=12, one strength for all;
#   - mosaic: DeepStream's nvdsosd blur-bbox, computed here: the box scaled
#     to 32x32, a 7-tap box filter, scaled back by nearest neighbour.
#
# Prints a table of the faces found over the face's box at each size and
# exits 1 unless the face is found before at every size and never after
# the relative treatment.  With --pictures=DIR, writes DIR/face-*.png: the
# face's neighbourhood for each treatment at 128 pixels, 160 pixels wide
# (docs/usage.md's pictures).  Needs python3-gi,
# python3-opencv, opencv-data and python-matplotlib-data; exits 77
# without them.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys

try:
    import cv2
    import numpy as np
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstVideo
except (ImportError, ValueError) as e:
    print(f"SKIP: {e}")
    sys.exit(77)

PORTRAIT = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
CASCADE = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"
W, H = 1920, 1080
SIZES = (32, 64, 128, 256, 512)
SCALE = 0.15


def find_faces(cascade, bgr):
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    return cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5)


def overlaps(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def frame_with_face(portrait, face, size):
    """The portrait scaled so that its face is `size` wide, centred in a
    grey W x H frame (cut where it is larger); the face's box there."""
    fx, fy, fw, fh = face
    k = size / fw
    img = cv2.resize(portrait, None, fx=k, fy=k,
                     interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC)
    frame = np.full((H, W, 3), 128, np.uint8)
    # the face's centre at the frame's
    cx, cy = int((fx + fw / 2) * k), int((fy + fh / 2) * k)
    ox, oy = W // 2 - cx, H // 2 - cy
    x0, y0 = max(ox, 0), max(oy, 0)
    x1, y1 = min(ox + img.shape[1], W), min(oy + img.shape[0], H)
    frame[y0:y1, x0:x1] = img[y0 - oy:y1 - oy, x0 - ox:x1 - ox]
    box = (int(fx * k) + ox, int(fy * k) + oy, round(fw * k), round(fh * k))
    return frame, box


def through_element(bgr, box, args, backend):
    """The frame through cudaconvolve, with the box as a face ROI meta."""
    pipe = Gst.parse_launch(
        f"appsrc name=src caps=video/x-raw,format=BGRx,width={W},height={H},"
        f"framerate=0/1 ! cudaconvolve backend={backend} {args} ! "
        "appsink name=sink sync=false")
    src, sink = pipe.get_by_name("src"), pipe.get_by_name("sink")
    data = cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA).tobytes()
    buf = Gst.Buffer.new_wrapped(data)
    GstVideo.buffer_add_video_region_of_interest_meta(buf, "face", *box)
    pipe.set_state(Gst.State.PLAYING)
    src.emit("push-buffer", buf)
    src.emit("end-of-stream")
    sample = sink.emit("pull-sample")
    msg = pipe.get_bus().timed_pop_filtered(0, Gst.MessageType.ERROR)
    pipe.set_state(Gst.State.NULL)
    if sample is None or msg is not None:
        sys.exit(f"cudaconvolve {args}: "
                 f"{msg.parse_error()[0].message if msg else 'no output'}")
    ok, m = sample.get_buffer().map(Gst.MapFlags.READ)
    out = np.frombuffer(m.data, np.uint8).reshape(H, W, 4)[:, :, :3].copy()
    sample.get_buffer().unmap(m)
    return out


def mosaic(bgr, box):
    """DeepStream 8's nvdsosd blur-bbox: the box scaled to 32x32, a 7-tap
    box filter, scaled back by nearest neighbour."""
    x, y, w, h = box
    out = bgr.copy()
    small = cv2.resize(bgr[y:y + h, x:x + w], (32, 32),
                       interpolation=cv2.INTER_LINEAR)
    small = cv2.blur(small, (7, 7))
    out[y:y + h, x:x + w] = cv2.resize(small, (w, h),
                                       interpolation=cv2.INTER_NEAREST)
    return out


def main():
    backend, pictures = "cpu", None
    for a in sys.argv[1:]:
        if a.startswith("--backend="):
            backend = a.split("=", 1)[1]
        elif a.startswith("--pictures="):
            pictures = a.split("=", 1)[1]
        else:
            sys.exit(__doc__ or "usage: face-study.py [--backend=] "
                     "[--pictures=DIR]")
    for f in (PORTRAIT, CASCADE):
        if not os.path.exists(f):
            print(f"SKIP: {f} is missing")
            sys.exit(77)
    Gst.init(None)
    if not Gst.ElementFactory.find("cudaconvolve"):
        sys.exit("cudaconvolve not found: is GST_PLUGIN_PATH set?")
    cascade = cv2.CascadeClassifier(CASCADE)
    portrait = cv2.imread(PORTRAIT)
    faces = find_faces(cascade, portrait)
    if len(faces) != 1:
        sys.exit(f"the portrait shows {len(faces)} faces to the detector")

    rows, failed = [], False
    for size in SIZES:
        frame, box = frame_with_face(portrait, faces[0], size)
        margin, feather = max(1, round(0.04 * size)), max(1, round(0.04 * size))
        relative = (f"region=roi roi-scale={SCALE} roi-margin={margin} "
                    f"roi-shape=ellipse roi-feather={feather}")
        treated = {
            "before": frame,
            "relative": through_element(frame, box, relative, backend),
            "sigma 12": through_element(frame, box,
                                        "region=roi radius=0 sigma=12",
                                        backend),
            "mosaic": mosaic(frame, box),
        }
        found = {k: sum(overlaps(f, box) for f in find_faces(cascade, v))
                 for k, v in treated.items()}
        rows.append((size, found))
        failed |= found["before"] == 0 or found["relative"] != 0
        if pictures and size == 128:
            os.makedirs(pictures, exist_ok=True)
            x, y, w, h = box
            for k, v in treated.items():
                crop = v[max(y - h // 2, 0):y + h + h // 2,
                         max(x - w // 2, 0):x + w + w // 2]
                crop = cv2.resize(crop, (160, 160 * crop.shape[0] //
                                         crop.shape[1]),
                                  interpolation=cv2.INTER_AREA)
                cv2.imwrite(os.path.join(
                    pictures, f"face-{k.replace(' ', '-')}.png"), crop,
                    [cv2.IMWRITE_PNG_COMPRESSION, 9])

    print(f"Faces the OpenCV Haar detector finds over the face's box "
          f"(backend={backend}; relative: roi-scale={SCALE}, margin and "
          f"feather 4 % of the face, ellipse)\n")
    print("| face width | before | relative | sigma 12 | 32x32 mosaic |")
    print("|---:|---:|---:|---:|---:|")
    for size, f in rows:
        print(f"| {size} px | {f['before']} | {f['relative']} | "
              f"{f['sigma 12']} | {f['mosaic']} |")
    print("\nFAIL" if failed else "\nPASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
