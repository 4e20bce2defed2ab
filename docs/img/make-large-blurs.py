#!/usr/bin/env python3
"""Draws the pictures of docs/usage.md's "Large blurs": a background blur
(facedetect ahead of cudaconvolve region=outside-roi) and a wide "clarity"
sharpen, each at sigma 8, 32 and 128, on Grace Hopper's portrait from
matplotlib's sample data (Debian: python-matplotlib-data).

    GST_PLUGIN_PATH=build/gst python3 docs/img/make-large-blurs.py [OUTDIR]

Sigma 32 and 128 are the untruncated gaussian (radius 0, ceil (3 sigma)
above 64).  The element runs on backend=cpu, the reference itself, on the
photograph's own size (512x600); the pictures are then scaled to 200
pixels wide for the page.  Needs gst-launch-1.0, gstreamer1.0-opencv and
opencv-data.
"""
import os
import shlex
import subprocess
import sys

PHOTO = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
SIGMAS = (8, 32, 128)
# The properties of the documented pipelines: keep in step with usage.md.
EFFECTS = {
    "background": "region=outside-roi roi-types=face roi-margin=48 "
                  "radius=0 sigma={}",
    "clarity": "kernel=sharpen radius=0 sigma={} amount=0.8",
}
PAGE = ("videoscale ! video/x-raw,width=200,height=234 ! videoconvert "
        "! pngenc compression-level=9")


def launch(description):
    cmd = ["gst-launch-1.0", "-q"] + shlex.split(description)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"failed: {shlex.join(cmd)}\n{run.stdout}{run.stderr}")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    if not os.path.exists(PHOTO):
        sys.exit(f"{PHOTO} is missing: apt-get install python-matplotlib-data")
    source = (f"filesrc location={PHOTO} ! decodebin ! videoconvert "
              "! imagefreeze num-buffers=1 ! videoconvert "
              "! video/x-raw,format=I420")
    launch(f"{source} ! {PAGE} ! filesink "
           f"location={os.path.join(outdir, 'large-before.png')}")
    for name, props in EFFECTS.items():
        for sigma in SIGMAS:
            out = os.path.join(outdir, f"large-{name}-{sigma}.png")
            detect = ("videoconvert ! facedetect display=false ! videoconvert "
                      "! video/x-raw,format=I420 ! " if name == "background"
                      else "")
            launch(f"{source} ! {detect}cudaconvolve backend=cpu "
                   f"{props.format(sigma)} ! {PAGE} ! filesink location={out}")
            print(f"wrote {out}")


if __name__ == "__main__":
    main()
