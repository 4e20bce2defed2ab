#!/usr/bin/env python3
"""Denoise quality against peers: PSNR and SSIM of each denoiser's output
against the clean frames of a noisy sequence made from a real photograph,
each denoiser at the best setting (highest PSNR) of a small grid search.

Four sequences of 48 I420 frames of 480x270, BT.601 limited range.  pan
and still, from Grace Hopper's portrait in matplotlib's sample data
(python-matplotlib-data), Lanczos: the camera pans and zooms (crops of
512x288 down to 410x231 source pixels, the centre moving 20 pixels right
and 110 down), or holds the first of those frames still.  rotate and
rotate-heavy, which no grid was tuned on, from another photograph, the
motorcycle of scikit-image's sample data (motorcycle_left.png,
python3-skimage), bicubic: a faster pan, about 4 pixels a frame (the
centre moving 150 source pixels right and 100 down, about 3.3 and 2.2
frame pixels a frame), turning 4 degrees and zooming in by 1.09 (480 source
pixels wide down to 440) over the clip.  The noise, seeded, new on every
frame, added to the planes in 8 bit: luma gets Poisson photon noise (0.25
of a level a photon: variance 0.25 Y) plus gaussian read noise of sigma 6,
chroma gaussian noise of sigma 4 (input PSNR about 30 dB); rotate-heavy
twice the photon noise's variance (variance 0.5 Y), read noise of sigma 10
and chroma noise of sigma 6 (26.4 dB).  PSNR and SSIM are ffmpeg's psnr
and ssim filters on luma, the mean over every frame (the first included:
the temporal filters' warm-up counts; a column leaves the first 8 out).

The denoisers, all on the CPU: cudaconvolve (backend=cpu) through
gst-launch-1.0: its gaussian, bilateral, non-local means, temporal,
temporal + bilateral and temporal + non-local means in one element (the
temporal step first), the same three temporal rows with
temporal-mode=compensated (the previous frame follows the motion), and a
bilateral element followed by a temporal one.  FFmpeg's hqdn3d, nlmeans,
bilateral, atadenoise, fftdnoiz, vaguedenoiser and bm3d through ffmpeg, on
I420 (fftdnoiz and bm3d on luma alone, planes=1, the chroma costing time
and not being measured); bm3d as its basic estimate with its default
group=1: its block grouping (group above 1, with thmse above 0) took 46 s
a run against 2.6 and scored lower on pan (34.80 dB against 35.23, sigma
30, bstep 4), and its final estimate (a second bm3d with the basic one as
ref) lower too (34.77).  OpenCV (python3-opencv) on the luma plane: its
bilateral (cv2.bilateralFilter) and multi-frame non-local means
(cv2.fastNlMeansDenoisingMulti, the window mirrored at the clip's ends).
atadenoise, fftdnoiz with next=1 and OpenCV's multi-frame filter look
ahead (frames of latency); cudaconvolve's temporal step and hqdn3d do
not.  OpenCV's bilateral is also tried through GStreamer, cvsmooth
type=bilateral (gstreamer1.0-opencv); where that element fails, as on
GStreamer 1.22, its row says how.  Without a `temporal` property on the
plugin, or without python3-opencv, those rows say "not available".

    apt-get install ffmpeg python3-numpy python3-pil python-matplotlib-data \\
        python3-skimage python3-opencv gstreamer1.0-opencv
    GST_PLUGIN_PATH=$PWD/build/gst nice -n 19 python3 tests/denoise-study.py

It runs every setting of every grid on each sequence (pan and still about
1060 runs each, rotate and rotate-heavy, on the short grids, about 450
each: an hour and a quarter on 2 cores; the slowest runs are bm3d's
bstep=1, about 20 s, OpenCV's multi-frame non-local means, 12 to 25 s, and
fftdnoiz with prev or next, about 5 s, where most take 1 to 2 s), keeps
what it measured in WORKDIR/MOTION/results.json (a second run measures
only what is missing), prints the tables and writes them to
WORKDIR/table.md, and draws docs/img/denoise-MOTION.png for each
sequence: a crop of the luma of the last frame, clean, noisy and each
denoiser at its best.

Options: --workdir DIR (default /tmp/denoise-study), --img-dir DIR (default
docs/img), --frames N (default 48), --motion pan|still|rotate|rotate-heavy
(repeatable: those sequences; the default runs all four), --quick (one
setting a denoiser, the best measured so far: checks the pipelines),
--only NAME (repeatable: those denoisers alone, by their names in
METHODS).
"""
import argparse
import hashlib
import importlib.util
import inspect
import itertools
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

PHOTO = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
ROTATE_PHOTO = ("/usr/lib/python3/dist-packages/skimage/data/"
                "motorcycle_left.png")
W, H = 480, 270
SEED = 20261129
PHOTON_GAIN = 0.25          # luma levels a photon: Poisson variance 0.25 Y
READ_SIGMA = 6.0            # luma gaussian read noise, 8-bit levels
CHROMA_SIGMA = 4.0          # chroma gaussian noise, 8-bit levels
WARM = 8                    # the steady-state column skips this many frames
CROP = (150, 40, 310, 160)  # the pictures' crop of the frame (x0, y0, x1, y1)
MOTIONS = {"pan": "panning and zooming", "still": "still",
           "rotate": "panning fast and rotating, another photograph",
           "rotate-heavy": "panning fast and rotating, another photograph, "
           "heavier noise"}
# Each sequence's noise: photon gain, read sigma, chroma sigma.
NOISE = {"pan": (PHOTON_GAIN, READ_SIGMA, CHROMA_SIGMA),
         "still": (PHOTON_GAIN, READ_SIGMA, CHROMA_SIGMA),
         "rotate": (PHOTON_GAIN, READ_SIGMA, CHROMA_SIGMA),
         "rotate-heavy": (2 * PHOTON_GAIN, 10.0, 6.0)}
UNTUNED = ("rotate", "rotate-heavy")    # no grid was made on these

# The denoisers, in the table's order: how each runs ("gst": a
# gst-launch-1.0 fragment from the noisy I420 file, "gst-gray" the same
# from its luma as GRAY8, "ffmpeg" a filter on I420, "cv2" OpenCV in this
# process on luma), its grid (every combination is run), the smaller grid
# "short" that the untuned sequences run instead (around the best on pan,
# reaching further toward strength for the heavier noise; without one, the
# grid) and whether it needs the temporal properties.
METHODS = [
    dict(name="gaussian", kind="gst", label="cudaconvolve `kernel=gaussian`",
         grid={"sigma": [0.4, 0.5, 0.6, 0.7, 0.8, 1.0]},
         short={"sigma": [0.5, 0.6, 0.7, 0.8, 1.0]}),
    dict(name="bilateral", kind="gst",
         label="cudaconvolve `kernel=bilateral`",
         grid={"sigma": [0.6, 0.7, 0.85, 1.0, 1.5, 2.0],
               "sigma-range": [15, 20, 25, 30, 40]},
         short={"sigma": [0.7, 0.85, 1.0, 1.5],
                "sigma-range": [20, 30, 40, 50]}),
    dict(name="nlmeans", kind="gst", label="cudaconvolve `kernel=nlmeans`",
         grid={"radius": [1, 2, 3], "patch-radius": [1, 2, 3, 4],
               "sigma-range": [7, 9, 10, 11, 12, 14]},
         short={"radius": [1, 2], "patch-radius": [2, 3],
                "sigma-range": [9, 11, 14, 18]}),
    dict(name="temporal", kind="gst", label="cudaconvolve `temporal`",
         temporal=True,
         grid={"temporal": [0.3, 0.5, 0.7, 0.9, 1.0],
               "temporal-threshold": [10, 20, 40, 60, 100]},
         short={"temporal": [0.3, 0.5, 0.7],
                "temporal-threshold": [20, 60, 100]}),
    dict(name="temporal + bilateral", kind="gst",
         label="cudaconvolve `temporal` + `kernel=bilateral` (one element)",
         temporal=True,
         grid={"temporal": [0.3, 0.6, 0.9, 1.0],
               "temporal-threshold": [15, 30, 60, 100],
               "sigma": [0.6, 0.7, 0.85, 1.0],
               "sigma-range": [15, 20, 30, 40]},
         short={"temporal": [0.3, 0.6], "temporal-threshold": [30, 60],
                "sigma": [0.85, 1.0], "sigma-range": [30, 40]}),
    dict(name="temporal + nlmeans", kind="gst",
         label="cudaconvolve `temporal` + `kernel=nlmeans` (one element)",
         temporal=True,
         grid={"temporal": [0.3, 0.6, 0.9], "temporal-threshold": [15, 30, 60],
               "radius": [1], "patch-radius": [2, 3],
               "sigma-range": [7, 10, 14]},
         short={"temporal": [0.3, 0.6], "temporal-threshold": [30, 60],
                "radius": [1], "patch-radius": [2, 3],
                "sigma-range": [10, 14]}),
    dict(name="compensated temporal", kind="gst",
         label="cudaconvolve `temporal-mode=compensated`", temporal=True,
         grid={"temporal": [0.5, 0.7, 0.9, 1.0],
               "temporal-threshold": [20, 40, 60, 100, 150]},
         short={"temporal": [0.7, 0.9, 1.0],
                "temporal-threshold": [100, 150, 200]}),
    dict(name="compensated + bilateral", kind="gst",
         label="cudaconvolve `temporal-mode=compensated` + "
         "`kernel=bilateral` (one element)", temporal=True,
         grid={"temporal": [0.7, 0.9, 1.0],
               "temporal-threshold": [60, 100, 150],
               "sigma": [0.6, 0.85], "sigma-range": [10, 15, 20]},
         short={"temporal": [0.7, 0.9],
                "temporal-threshold": [100, 150, 200],
                "sigma": [0.6, 0.85], "sigma-range": [15, 20, 30]}),
    dict(name="compensated + nlmeans", kind="gst",
         label="cudaconvolve `temporal-mode=compensated` + "
         "`kernel=nlmeans` (one element)", temporal=True,
         grid={"temporal": [0.7, 0.9, 1.0],
               "temporal-threshold": [60, 100, 150],
               "radius": [1], "patch-radius": [2],
               "sigma-range": [5, 7, 10]},
         short={"temporal": [0.3, 0.5, 0.7, 0.9],
                "temporal-threshold": [100, 150, 200, 255],
                "radius": [1], "patch-radius": [2],
                "sigma-range": [5, 7, 10, 14]}),
    dict(name="bilateral, then temporal", kind="gst", picture=False,
         label="cudaconvolve `kernel=bilateral` ! cudaconvolve `temporal`",
         temporal=True,
         grid={"sigma": [0.7, 0.85, 1.0],
               "sigma-range": [20, 25, 30],
               "temporal": [0.3, 0.6, 0.9, 1.0],
               "temporal-threshold": [10, 20, 40, 100]},
         short={"sigma": [0.85, 1.0], "sigma-range": [25, 30, 40],
                "temporal": [0.3, 0.6], "temporal-threshold": [20, 40]}),
    dict(name="hqdn3d", kind="ffmpeg", label="FFmpeg `hqdn3d`",
         grid={"luma_spatial": [4, 8, 16, 24, 32, 48],
               "luma_tmp": [1, 2, 4, 9, 16, 25, 36, 49]},
         short={"luma_spatial": [8, 16, 24, 32, 48],
                "luma_tmp": [1, 2, 4, 9]}),
    dict(name="ffmpeg nlmeans", kind="ffmpeg", label="FFmpeg `nlmeans`",
         grid={"s": [2, 3, 4, 5, 6, 8, 10, 12], "p": [3, 5, 7],
               "r": [3, 5, 9, 15]},
         short={"s": [6, 8, 10, 12, 14], "p": [3, 5, 7], "r": [3, 5, 9]}),
    dict(name="ffmpeg bilateral", kind="ffmpeg", label="FFmpeg `bilateral`",
         grid={"sigmaS": [2, 3, 5, 8],
               "sigmaR": [0.06, 0.08, 0.12, 0.16, 0.24]},
         short={"sigmaS": [2, 3, 5], "sigmaR": [0.08, 0.12, 0.16, 0.24]}),
    dict(name="atadenoise", kind="ffmpeg", label="FFmpeg `atadenoise`",
         grid={"0a": [0.05, 0.1, 0.2, 0.3], "0b": [0.3, 1, 5],
               "s": [5, 9, 17, 33]}),
    dict(name="fftdnoiz", kind="ffmpeg", label="FFmpeg `fftdnoiz` (luma)",
         grid={"sigma": [8, 12, 16, 20, 25, 30, 40], "prev": [0, 1],
               "next": [0, 1]}),
    dict(name="vaguedenoiser", kind="ffmpeg",
         label="FFmpeg `vaguedenoiser`",
         grid={"threshold": [3, 4, 6, 8, 10, 14, 20, 28],
               "method": ["hard", "soft", "garrote"], "percent": [85, 100]}),
    dict(name="bm3d", kind="ffmpeg", label="FFmpeg `bm3d` (luma)",
         grid={"sigma": [25, 30, 35, 45, 60], "bstep": [1, 2]}),
    dict(name="opencv bilateral", kind="cv2",
         label="OpenCV `cv2.bilateralFilter`",
         grid={"d": [3, 5, 7, 9], "sigmaColor": [15, 20, 30, 40],
               "sigmaSpace": [0.7, 1.0, 1.5, 2.5]},
         short={"d": [3, 5, 7, 9], "sigmaColor": [30, 40, 50],
                "sigmaSpace": [1.0, 1.5]}),
    dict(name="opencv nlmeans multi", kind="cv2",
         label="OpenCV `cv2.fastNlMeansDenoisingMulti`",
         grid={"temporalWindowSize": [3, 5], "h": [7, 8, 9, 10, 12, 16],
               "templateWindowSize": [7], "searchWindowSize": [21]},
         short={"temporalWindowSize": [3, 5], "h": [7, 9, 12, 16],
                "templateWindowSize": [7], "searchWindowSize": [21]}),
    dict(name="cvsmooth bilateral", kind="gst-gray", picture=False,
         label="OpenCV through GStreamer, `cvsmooth type=bilateral`",
         grid={"kernel-width": [5], "color": [20], "spatial": [1.5]}),
]


def fmt(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def element_props(name, p):
    """cudaconvolve's properties for one setting of one of its rows."""
    out = []
    if name.startswith("compensated"):
        out += ["temporal-mode=compensated"]
        name = ("temporal" if name == "compensated temporal"
                else name.replace("compensated", "temporal"))
    if name == "gaussian":
        out += ["kernel=gaussian", f"sigma={fmt(p['sigma'])}", "radius=0"]
    if name in ("bilateral", "temporal + bilateral"):
        out += ["kernel=bilateral", f"sigma={fmt(p['sigma'])}", "radius=0",
                f"sigma-range={fmt(p['sigma-range'])}"]
    if name in ("nlmeans", "temporal + nlmeans"):
        out += ["kernel=nlmeans"] + [
            f"{k}={fmt(p[k])}" for k in ("radius", "patch-radius",
                                         "sigma-range")]
    if name in ("temporal", "temporal + bilateral", "temporal + nlmeans"):
        out += [f"temporal={fmt(p['temporal'])}",
                f"temporal-threshold={fmt(p['temporal-threshold'])}"]
    if name == "temporal":
        out += ["radius=0"]         # radius and sigma 0: no spatial filter
    return out


def ffmpeg_filter(name, p):
    """The filter string; chroma options, which do not change luma, as the
    filter's own defaults scale them (hqdn3d: 3/4 of the strengths).  The
    bilateral filters luma alone unless told; the slow fftdnoiz and bm3d
    are told to (planes=1: the chroma is not measured)."""
    if name == "hqdn3d":
        ls, lt = p["luma_spatial"], p["luma_tmp"]
        opts = [("luma_spatial", ls), ("chroma_spatial", 0.75 * ls),
                ("luma_tmp", lt), ("chroma_tmp", 0.75 * lt)]
    elif name == "ffmpeg bilateral":
        opts = list(p.items()) + [("planes", 7)]
    elif name in ("fftdnoiz", "bm3d"):
        opts = list(p.items()) + [("planes", 1)]
    else:
        opts = list(p.items())
    return f"{name.split()[-1]}=" + ":".join(f"{k}={fmt(v)}" for k, v in opts)


def settings_text(m, p):
    """One setting as a user writes it."""
    name = m["name"]
    if m["kind"] == "ffmpeg":
        return ffmpeg_filter(name, p)
    if m["kind"] == "cv2":
        call = ("bilateralFilter" if name == "opencv bilateral"
                else "fastNlMeansDenoisingMulti")
        return f"{call}(y, " + ", ".join(
            f"{k}={fmt(v)}" for k, v in p.items()) + ")"
    if name == "cvsmooth bilateral":
        return "cvsmooth type=bilateral " + " ".join(
            f"{k}={fmt(v)}" for k, v in p.items())
    if name == "bilateral, then temporal":
        return (" ".join(element_props("bilateral", p)) + " ! "
                + " ".join(element_props("temporal", p)))
    return " ".join(element_props(name, p))


def run(cmd, timeout=600):
    """Runs cmd; its stderr's tail when it fails, else None."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        # A pipeline whose element failed can stay up without data.
        return f"{shlex.join(cmd)}: killed after {e.timeout} s: {e.stderr}"
    if r.returncode != 0:
        return f"{shlex.join(cmd)}: exit {r.returncode}: {r.stderr[-1500:]}"
    return None


def rgb_to_i420(rgb):
    """BT.601 limited range, chroma the mean of each 2x2 block; floats."""
    r, g, b = [rgb[..., i].astype(np.float64) for i in range(3)]
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    u = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    v = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255

    def down(c):
        return c.reshape(H // 2, 2, W // 2, 2).mean(axis=(1, 3))
    return y, down(u), down(v)


def make_sequence(work, frames, motion):
    """Writes clean.yuv, noisy.yuv (I420) and their luma alone, clean.y and
    noisy.y (GRAY8): the camera pans and zooms, or holds the first frame
    still (the noise new on every frame)."""
    photo = Image.open(PHOTO).convert("RGB")
    pw, ph = photo.size
    rng = np.random.default_rng(SEED)
    files = {n: open(os.path.join(work, n), "wb")
             for n in ("clean.yuv", "noisy.yuv", "clean.y", "noisy.y")}
    for i in range(frames):
        t = i / max(frames - 1, 1) if motion == "pan" else 0.0
        cw = 512 - 102 * t                  # zoom in by 1.25 in all
        ch = cw * H / W
        cx = pw / 2 + 20 * t                # pan right and down
        cy = 190 + 110 * t
        box = (cx - cw / 2, cy - ch / 2, cx + cw / 2, cy + ch / 2)
        frame = photo.resize((W, H), Image.LANCZOS, box=box)
        y, u, v = rgb_to_i420(np.asarray(frame))
        clean = [np.clip(np.rint(c), 0, 255).astype(np.uint8)
                 for c in (y, u, v)]
        shot = rng.poisson(np.maximum(y, 0) / PHOTON_GAIN) * PHOTON_GAIN
        ny = shot + rng.normal(0, READ_SIGMA, y.shape)
        nu = u + rng.normal(0, CHROMA_SIGMA, u.shape)
        nv = v + rng.normal(0, CHROMA_SIGMA, v.shape)
        noisy = [np.clip(np.rint(c), 0, 255).astype(np.uint8)
                 for c in (ny, nu, nv)]
        for c in clean:
            files["clean.yuv"].write(c.tobytes())
        for c in noisy:
            files["noisy.yuv"].write(c.tobytes())
        files["clean.y"].write(clean[0].tobytes())
        files["noisy.y"].write(noisy[0].tobytes())
    for f in files.values():
        f.close()


def rotate_frame(photo, t):
    """The fast pan's frame at t (0 to 1 over the clip), clean RGB: the
    centre moves 150 source pixels right and 100 down while the view turns
    4 degrees and narrows from 480 to 440 source pixels (bicubic: PIL's
    affine transform has no Lanczos)."""
    s = (480 - 40 * t) / W                  # source pixels a frame pixel
    a = np.radians(4 * t)
    cx, cy = 300 + 150 * t, 190 + 100 * t
    m = [s * np.cos(a), -s * np.sin(a), 0, s * np.sin(a), s * np.cos(a), 0]
    m[2] = cx - m[0] * W / 2 - m[1] * H / 2
    m[5] = cy - m[3] * W / 2 - m[4] * H / 2
    return photo.transform((W, H), Image.AFFINE, m, Image.BICUBIC)


def add_noise(rng, planes, noise):
    """The noisy planes, 8 bit: Poisson photons and gaussian read noise on
    luma, gaussian noise on chroma (noise: gain, read sigma, chroma
    sigma)."""
    y, u, v = planes
    gain, read, chroma = noise
    ny = rng.poisson(np.maximum(y, 0) / gain) * gain
    ny = ny + rng.normal(0, read, y.shape)
    nu = u + rng.normal(0, chroma, u.shape)
    nv = v + rng.normal(0, chroma, v.shape)
    return [np.clip(np.rint(c), 0, 255).astype(np.uint8)
            for c in (ny, nu, nv)]


def make_rotate_sequence(work, frames, noise):
    """The same files as make_sequence for the fast pan over ROTATE_PHOTO
    with the given noise."""
    photo = Image.open(ROTATE_PHOTO).convert("RGB")
    rng = np.random.default_rng(SEED)
    files = {n: open(os.path.join(work, n), "wb")
             for n in ("clean.yuv", "noisy.yuv", "clean.y", "noisy.y")}
    for i in range(frames):
        frame = rotate_frame(photo, i / max(frames - 1, 1))
        planes = rgb_to_i420(np.asarray(frame))
        clean = [np.clip(np.rint(c), 0, 255).astype(np.uint8)
                 for c in planes]
        noisy = add_noise(rng, planes, noise)
        files["clean.yuv"].write(b"".join(c.tobytes() for c in clean))
        files["noisy.yuv"].write(b"".join(c.tobytes() for c in noisy))
        files["clean.y"].write(clean[0].tobytes())
        files["noisy.y"].write(noisy[0].tobytes())
    for f in files.values():
        f.close()


def recipe(motion, frames):
    """What makes the sequence, hashed: the results measured on it are
    kept while it stays the same.  pan and still hash as they always have
    (make_sequence, which makes them, is kept as it was for that)."""
    if motion in ("pan", "still"):
        parts = (motion, W, H, SEED, PHOTON_GAIN, READ_SIGMA, CHROMA_SIGMA,
                 frames, inspect.getsource(make_sequence),
                 inspect.getsource(rgb_to_i420))
    else:
        parts = (motion, W, H, SEED, NOISE[motion], frames, ROTATE_PHOTO) + (
            tuple(inspect.getsource(f) for f in (
                make_rotate_sequence, rotate_frame, add_noise, rgb_to_i420)))
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


def cv2_frames(name, p, y):
    """OpenCV on the luma frames y: the bilateral frame by frame, or the
    multi-frame non-local means on the temporalWindowSize frames centred on
    each (mirrored at the ends: frame 1 stands for frame -1)."""
    import cv2
    if name == "opencv bilateral":
        return [cv2.bilateralFilter(f, p["d"], p["sigmaColor"],
                                    p["sigmaSpace"]) for f in y]
    n, k = len(y), p["temporalWindowSize"] // 2

    def window(i):
        return [y[abs(j) if j < n else 2 * (n - 1) - j]
                for j in range(i - k, i + k + 1)]
    return [cv2.fastNlMeansDenoisingMulti(
        window(i), k, 2 * k + 1, None, p["h"], p["templateWindowSize"],
        p["searchWindowSize"]) for i in range(n)]


def denoise(m, p, work, out):
    """Filters the noisy sequence into out (I420, or GRAY8 for the luma
    denoisers); an error message, or None."""
    parse = ["rawvideoparse", f"width={W}", f"height={H}", "framerate=25/1"]
    if m["kind"] == "ffmpeg":
        return run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                    "-f", "rawvideo", "-pix_fmt", "yuv420p",
                    "-s", f"{W}x{H}", "-i", os.path.join(work, "noisy.yuv"),
                    "-vf", ffmpeg_filter(m["name"], p),
                    "-f", "rawvideo", "-pix_fmt", "yuv420p", out])
    if m["kind"] == "cv2":
        y = np.fromfile(os.path.join(work, "noisy.y"), np.uint8)
        with open(out, "wb") as f:
            for frame in cv2_frames(m["name"], p, y.reshape(-1, H, W)):
                f.write(frame.tobytes())
        return None
    if m["kind"] == "gst-gray":
        chain = (["filesrc", f"location={os.path.join(work, 'noisy.y')}",
                  "!"] + parse + ["format=gray8", "!", "cvsmooth",
                                  "type=bilateral"]
                 + [f"{k}={fmt(v)}" for k, v in p.items()])
    else:
        if m["name"] == "bilateral, then temporal":
            filters = (["cudaconvolve", "backend=cpu"]
                       + element_props("bilateral", p)
                       + ["!", "cudaconvolve", "backend=cpu"]
                       + element_props("temporal", p))
        else:
            filters = (["cudaconvolve", "backend=cpu"]
                       + element_props(m["name"], p))
        chain = (["filesrc", f"location={os.path.join(work, 'noisy.yuv')}",
                  "!"] + parse + ["format=i420", "!"] + filters)
    return run(["gst-launch-1.0", "-q"] + chain
               + ["!", "filesink", f"location={out}"], timeout=120)


def measure(out, gray, work, frames):
    """Per-frame luma PSNR and SSIM of out against the clean frames, by
    ffmpeg's psnr and ssim filters; or an error message."""
    pix, ref = ("gray", "clean.y") if gray else ("yuv420p", "clean.yuv")
    size = W * H if gray else W * H * 3 // 2
    got = os.path.getsize(out) // size if os.path.exists(out) else 0
    if got != frames or os.path.getsize(out) != size * frames:
        return f"{got} frames out of {frames}"
    plog = os.path.join(work, "psnr.log")
    slog = os.path.join(work, "ssim.log")
    raw = ["-f", "rawvideo", "-pix_fmt", pix, "-s", f"{W}x{H}", "-i"]
    err = run(["ffmpeg", "-nostdin", "-loglevel", "error"] + raw + [out]
              + raw + [os.path.join(work, ref), "-lavfi",
                       "[0:v]split[a0][a1];[1:v]split[b0][b1];"
                       f"[a0][b0]psnr=stats_file={plog};"
                       f"[a1][b1]ssim=stats_file={slog}",
                       "-f", "null", "-"])
    if err:
        return err
    psnr = [float(re.search(r"psnr_y:(\S+)", line).group(1))
            for line in open(plog)]
    ssim = [float(re.search(r"\bY:(\S+)", line).group(1))
            for line in open(slog)]
    if len(psnr) != frames or len(ssim) != frames:
        return f"{len(psnr)} PSNR and {len(ssim)} SSIM values"
    return {"psnr": float(np.mean(psnr)), "ssim": float(np.mean(ssim)),
            "psnr_warm": float(np.mean(psnr[WARM:])), "psnr_frames": psnr}


def failure(message):
    """A failed run's message, short enough for the table: the assertion or
    the error it printed."""
    found = (re.search(r"assertion '[^']*' failed", message)
             or re.search(r"^ERROR: .*$", message, re.M))
    return "fails: " + (found.group(0) if found else message[-200:])


def available(m, temporal):
    """None when the denoiser can run here, else why not."""
    if m.get("temporal") and not temporal:
        return "not available: the plugin has no `temporal` property"
    if m["kind"] == "cv2" and importlib.util.find_spec("cv2") is None:
        return "not available: no python3-opencv"
    return None


def crop(path, gray, frames):
    """The crop of the last frame's luma."""
    size = W * H if gray else W * H * 3 // 2
    with open(path, "rb") as f:
        f.seek(size * (frames - 1))
        y = np.frombuffer(f.read(W * H), np.uint8).reshape(H, W)
    x0, y0, x1, y1 = CROP
    return Image.fromarray(y[y0:y1, x0:x1].copy(), "L")


def draw(tiles, path):
    """The tiles in rows of five, each labelled underneath."""
    tw, th = tiles[0][1].size
    cols, label = 5, 14
    rows = (len(tiles) + cols - 1) // cols
    sheet = Image.new("L", (cols * (tw + 4) - 4, rows * (th + label + 4) - 4),
                      255)
    d = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for i, (name, img) in enumerate(tiles):
        x, y = (i % cols) * (tw + 4), (i // cols) * (th + label + 4)
        sheet.paste(img, (x, y))
        d.text((x + 2, y + th + 1), name, fill=0, font=font)
    sheet.save(path, optimize=True)


def study(motion, args, temporal):
    """Runs every grid on the sequence of one camera motion; its table (a
    markdown section) and its picture."""
    work = os.path.join(args.workdir, motion)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "out.yuv")

    # What was measured belongs to the sequence it was measured on: a new
    # recipe for the sequence starts the results afresh.
    made = recipe(motion, args.frames)
    cache_path = os.path.join(work, "results.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    if cache.get("recipe") != made:
        if motion in UNTUNED:
            make_rotate_sequence(work, args.frames, NOISE[motion])
        else:
            make_sequence(work, args.frames, motion)
        cache = {"recipe": made, "runs": {}}
    runs = cache["runs"]

    def save():
        json.dump(cache, open(cache_path + ".new", "w"))
        os.replace(cache_path + ".new", cache_path)

    best = {"input": ({}, measure(os.path.join(work, "noisy.yuv"), False,
                                  work, args.frames))}
    missing = {}
    for m in METHODS:
        why = available(m, temporal)
        if args.only and m["name"] not in args.only:
            why = "not run (`--only`)"
        if why:
            missing[m["name"]] = why
            continue
        g = m.get("short", m["grid"]) if motion in UNTUNED else m["grid"]
        settings = [dict(zip(g, v)) for v in itertools.product(*g.values())]
        if args.quick:
            known = [s for s in settings
                     if isinstance(runs.get(settings_text(m, s)), dict)]
            settings = ([max(known,
                             key=lambda s: runs[settings_text(m, s)]["psnr"])]
                        if known else settings[len(settings) // 2:][:1])
        for p in settings:
            key = settings_text(m, p)
            if key not in runs:
                if os.path.exists(out):
                    os.unlink(out)
                res = denoise(m, p, work, out) or measure(
                    out, m["kind"] in ("cv2", "gst-gray"), work, args.frames)
                runs[key] = res
                save()
                print(f"{motion}: " + (
                    f"{res['psnr']:6.2f} dB {res['ssim']:.4f}  {key}"
                    if isinstance(res, dict) else f"FAILED {key}: {res}"),
                    flush=True)
            res = runs[key]
            if not isinstance(res, dict):
                missing.setdefault(m["name"], failure(res))
            elif (m["name"] not in best
                    or res["psnr"] > best[m["name"]][1]["psnr"]):
                best[m["name"]] = (p, res)
                missing.pop(m["name"], None)

    # Each denoiser's best setting run again for the picture.
    tiles = [("clean", crop(os.path.join(work, "clean.yuv"), False,
                            args.frames)),
             ("noisy", crop(os.path.join(work, "noisy.yuv"), False,
                            args.frames))]
    for m in METHODS:
        if m["name"] in best and m.get("picture", True):
            err = denoise(m, best[m["name"]][0], work, out)
            if err:
                sys.exit(err)
            tiles.append((m["name"], crop(out, m["kind"] == "cv2",
                                          args.frames)))
    os.makedirs(args.img_dir, exist_ok=True)
    picture = f"denoise-{motion}.png"
    draw(tiles, os.path.join(args.img_dir, picture))

    lines = [f"### Camera {MOTIONS[motion]}", "",
             "| denoiser | best setting | PSNR (dB) | SSIM "
             f"| PSNR, frames {WARM + 1}-{args.frames} (dB) |",
             "|---|---|---:|---:|---:|"]
    for m in [dict(name="input", label="input (noisy)")] + METHODS:
        if m["name"] not in best:
            lines.append(f"| {m['label']} | {missing[m['name']]} | | | |")
            continue
        p, r = best[m["name"]]
        setting = f"`{settings_text(m, p)}`" if p else "-"
        lines.append(f"| {m['label']} | {setting} | {r['psnr']:.2f} "
                     f"| {r['ssim']:.4f} | {r['psnr_warm']:.2f} |")
    for name in ("temporal + bilateral", "compensated + nlmeans"):
        if name in best:
            ours = best[name][1]["psnr"]
            lines += ["", f"{name} against each peer's PSNR: " + ", ".join(
                f"{m['name']} {ours - best[m['name']][1]['psnr']:+.2f} dB"
                for m in METHODS if m["kind"] != "gst" and m["name"] in best)]
    lines += ["", f"Picture: {picture}", ""]
    return "\n".join(lines)


def grid_text(grid):
    return ", ".join(f"`{k}` {{{', '.join(fmt(v) for v in vals)}}}"
                     for k, vals in grid.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/denoise-study")
    ap.add_argument("--img-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "docs", "img"))
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--motion", choices=list(MOTIONS), action="append",
                    help="the camera's motion (default: each in turn)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", action="append",
                    help="a denoiser to run (repeatable; default: all)")
    args = ap.parse_args()
    if not os.path.exists(PHOTO):
        sys.exit(f"{PHOTO} is missing: apt-get install python-matplotlib-data")
    if not os.path.exists(ROTATE_PHOTO) and set(
            args.motion or MOTIONS) & set(UNTUNED):
        sys.exit(f"{ROTATE_PHOTO} is missing: apt-get install python3-skimage")
    r = subprocess.run(["gst-inspect-1.0", "cudaconvolve"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    if r.returncode != 0:
        sys.exit("no cudaconvolve: set GST_PLUGIN_PATH to the build's gst/")
    temporal = "temporal-threshold" in r.stdout
    sections = [study(motion, args, temporal)
                for motion in args.motion or list(MOTIONS)]
    grids = ["Grids (every combination run; on "
             + " and ".join(UNTUNED) + " the short one where given):",
             ""] + [f"- {m['name']}: " + grid_text(m["grid"]) + (
                 f"; short: {grid_text(m['short'])}" if "short" in m else "")
                    for m in METHODS]
    table = "\n".join(sections + grids) + "\n"
    with open(os.path.join(args.workdir, "table.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
