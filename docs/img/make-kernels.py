#!/usr/bin/env python3
"""Draws the before/after pictures of docs/usage.md's table of kernel types
(docs/img/kernel-*.png, 320x240): a small scene drawn here, then filtered by
cudaconvolve on the CPU backend through gst-launch-1.0, as I420, so that the
planes rule shows (sharpen leaves colour alone, edge maps are grey).

    ./run pictures                      # builds, then runs this
    GST_PLUGIN_PATH=build/gst python3 docs/img/make-kernels.py [OUTDIR]

Each kernel gets the scene it is for: the blurs a noisy one, sharpen a soft
one, the edge detectors and the custom kernels a clean one.  Needs Pillow
(pip install pillow) and gst-launch-1.0 with the png plugin
(gstreamer1.0-plugins-good).
"""
import os
import random
import shlex
import subprocess
import sys

from PIL import Image, ImageDraw, ImageFilter, ImageFont

W, H = 320, 240

# (name, scene, cudaconvolve properties): the rows of the table in
# docs/usage.md, in its order.  Keep the two in step.
KERNELS = [
    ("gaussian", "noisy", "kernel=gaussian sigma=1 radius=0"),
    ("box", "noisy", "kernel=box radius=1"),
    ("sharpen", "soft", "kernel=sharpen sigma=1.5 radius=0 amount=2"),
    ("sobel", "clean", "kernel=sobel radius=1"),
    ("laplacian", "clean", "kernel=laplacian radius=1"),
    ("custom-motion", "clean",
     'kernel=custom kernel-x="<1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1>"'),
    ("custom-emboss", "clean",
     'kernel=custom matrix="<<-2, -1, 0>, <-1, 1, 1>, <0, 1, 2>>" '
     'planes=luma'),
    ("pixelate", "clean", "kernel=pixelate block-size=8"),
    ("nlmeans", "noisy",
     "kernel=nlmeans radius=3 patch-radius=2 sigma-range=20"),
    ("canny", "noisy", "kernel=canny radius=2"),
]


def font(size):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:               # Pillow < 10.1: one bitmap size
        return ImageFont.load_default()


def draw_scene():
    """A house on a hill under the sun: flat areas, straight and round
    edges, fine stripes and text."""
    img = Image.new("RGB", (W, H))
    d = ImageDraw.Draw(img)
    for y in range(H):                                  # sky
        t = y / H
        d.line([(0, y), (W, y)], fill=(int(70 + 120 * t), int(130 + 90 * t),
                                       int(220 + 30 * t)))
    d.ellipse([236, 22, 286, 72], fill=(255, 214, 80))  # sun
    d.ellipse([-80, 150, 260, 330], fill=(70, 150, 60))     # hills
    d.ellipse([150, 165, 420, 320], fill=(95, 170, 70))
    for x in range(0, W, 6):                            # fence
        d.rectangle([x, 196, x + 2, 216], fill=(245, 240, 225))
    d.rectangle([0, 200, W, 202], fill=(245, 240, 225))
    d.rectangle([0, 210, W, 212], fill=(245, 240, 225))
    d.rectangle([60, 110, 160, 190], fill=(190, 70, 50))     # house
    d.polygon([(50, 112), (110, 62), (170, 112)], fill=(110, 45, 40))
    d.rectangle([98, 150, 122, 190], fill=(90, 55, 30))      # door
    for x0 in (70, 130):                                # windows
        d.rectangle([x0, 122, x0 + 20, 142], fill=(250, 245, 200))
        d.line([(x0 + 10, 122), (x0 + 10, 142)], fill=(60, 40, 30), width=2)
        d.line([(x0, 132), (x0 + 20, 132)], fill=(60, 40, 30), width=2)
    d.text((12, 14), "cudaconvolve", font=font(22), fill=(20, 20, 40))
    return img


def add_noise(img, sigma, seed):
    rng = random.Random(seed)
    px = img.load()
    for y in range(H):
        for x in range(W):
            px[x, y] = tuple(max(0, min(255, int(round(c + rng.gauss(0, sigma)))))
                             for c in px[x, y])
    return img


def filtered(src, dst, props):
    pipeline = (f"filesrc location={shlex.quote(src)} ! pngdec ! videoconvert "
                f"! video/x-raw,format=I420 ! cudaconvolve backend=cpu {props} "
                f"! videoconvert ! pngenc compression-level=9 "
                f"! filesink location={shlex.quote(dst)}")
    subprocess.run(["gst-launch-1.0", "-q"] + shlex.split(pipeline),
                   check=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)

    clean = draw_scene()
    scenes = {
        "clean": clean,
        "noisy": add_noise(clean.copy(), 12, 1),
        "soft": clean.filter(ImageFilter.GaussianBlur(1.2)),
    }
    for name, img in scenes.items():
        img.save(os.path.join(out, f"scene-{name}.png"), optimize=True)
    for name, scene, props in KERNELS:
        dst = os.path.join(out, f"kernel-{name}.png")
        filtered(os.path.join(out, f"scene-{scene}.png"), dst, props)
        print(dst)


if __name__ == "__main__":
    main()
