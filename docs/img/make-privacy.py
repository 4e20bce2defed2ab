#!/usr/bin/env python3
"""Draws the before/after pair of docs/usage.md's "Regions and privacy"
(docs/img/privacy-before.png, privacy-after.png): a real photograph through
the real pipeline, OpenCV's facedetect ahead of cudaconvolve region=roi,
as documented there and tested by tests/test-facedetect.sh.

    GST_PLUGIN_PATH=build/gst python3 docs/img/make-privacy.py [OUTDIR]

The photograph is Grace Hopper's portrait from matplotlib's sample data
(Debian: python-matplotlib-data); facedetect comes from gstreamer1.0-opencv
and its cascades from opencv-data.  The pipeline runs on the photograph's
own size (512x600); both pictures are then scaled to 320 pixels wide for
the page.  Needs gst-launch-1.0 and nothing from Python but the standard
library.
"""
import os
import re
import shlex
import subprocess
import sys

PHOTO = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
# The properties of the documented pipeline: keep in step with usage.md.
BLUR = "region=roi roi-types=face roi-margin=16 sigma=12 radius=0"
PAGE_WIDTH, PAGE_HEIGHT = 320, 375          # 512x600 scaled, aspect kept


def launch(description):
    """Runs gst-launch-1.0 -m on a pipeline; returns its output."""
    cmd = ["gst-launch-1.0", "-m"] + shlex.split(description)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"failed: {shlex.join(cmd)}\n{run.stdout}{run.stderr}")
    return run.stdout


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    if not os.path.exists(PHOTO):
        sys.exit(f"{PHOTO} is missing: apt-get install python-matplotlib-data")
    source = (f"filesrc location={PHOTO} ! decodebin ! videoconvert "
              "! imagefreeze num-buffers=1")
    page = (f"videoscale ! video/x-raw,width={PAGE_WIDTH},"
            f"height={PAGE_HEIGHT} ! videoconvert ! pngenc compression-level=9")

    before = os.path.join(outdir, "privacy-before.png")
    launch(f"{source} ! {page} ! filesink location={before}")

    after = os.path.join(outdir, "privacy-after.png")
    log = launch(f"{source} ! videoconvert ! facedetect display=false "
                 f"! videoconvert ! cudaconvolve {BLUR} ! {page} "
                 f"! filesink location={after}")
    faces = re.findall(r"x\\=\\\(uint\\\)(\d+)\\,\\ y\\=\\\(uint\\\)(\d+)"
                       r"\\,\\ width\\=\\\(uint\\\)(\d+)"
                       r"\\,\\ height\\=\\\(uint\\\)(\d+)", log)
    if not faces:
        sys.exit("facedetect found no face: the after picture would show "
                 "nothing blurred")
    for x, y, w, h in faces:
        print(f"face at {x},{y} {w}x{h}")
    print(f"wrote {before} and {after}")


if __name__ == "__main__":
    main()
