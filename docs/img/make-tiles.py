#!/usr/bin/env python3
"""Draws docs/img/tiles.png: which tiles of the CUDA engine's separable
(gaussian) kernel take the interior path and which the border path, for a
1920x1080 frame's luma plane and its 4:2:0 chroma planes (I420/YV12 U or V,
NV12/NV21 UV), at luma radius 4 and 16.

The classification is is_interior () from cuda/kernels/cuconv-tile.cuh, applied to
the launch geometry of cuconv_host_frames_strips () in cuda/pipelines/cuconv-host-frames.cu
(strips of whole tiles), with a 16-byte aligned source and a 4-byte
aligned destination, as cudaMallocPitch gives.

    python3 docs/img/make-tiles.py            # writes docs/img/tiles.png
    python3 docs/img/make-tiles.py --table    # the counts, gaussian and box
    python3 docs/img/make-tiles.py --limits   # tile rows by opt-in smem

Needs Pillow to draw (pip install pillow).  Keep the constants and the
shared memory formulas in step with cuda/kernels/cuconv-tile.cuh,
cuda/kernels/cuconv-separable.cu, cuda/kernels/cuconv-box.cu and cuda/pipelines/cuconv-host-frames.cu.
"""
import math
import os
import sys

# cuda/kernels/cuconv-tile.cuh, cuconv-separable.cu, cuconv-box.cu, cuconv-kernels.cuh,
# cuda/pipelines/cuconv-host-frames.cu
TILE_W = 128
THREADS = 256
ROW_GROUPS = THREADS // (TILE_W // 4)             # 8
FIXED_RADII = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16)    # CUCONV_FIXED_RADII
MAX_STRIPS = 8                                    # CUCONV_MAX_STRIPS
TILE_ROWS = ROW_GROUPS * 8                        # separable_tile_rows ()


def round_up16(v):
    return (v + 15) & ~15


def geom(rx, ry, nc, tile_h):
    """TileGeom: (span, rows, bytes of the border tables)."""
    span = TILE_W + 2 * round_up16(rx * nc)
    rows = tile_h + 2 * ry
    return span, rows, (span + rows) * 4


def sep_smem(rx, ry, nc, tile_h):
    """sep_smem_bytes (): float rows, then the border tables."""
    span, rows, maps = geom(rx, ry, nc, tile_h)
    return rows * TILE_W * 4 + maps


def box_smem(rx, ry, nc, tile_h):
    """box_smem_bytes (): staged bytes, int sums, border tables."""
    span, rows, maps = geom(rx, ry, nc, tile_h)
    return rows * (span + 4) + rows * (TILE_W + 1) * 4 + maps


def fit(smem, rx, ry, nc, max_smem):
    """fit_tile_rows (): the tallest of 64, 32, 16, 8 rows that fits."""
    for tile_h in (64, 32, 16, 8):
        if smem(rx, ry, nc, tile_h) <= max_smem:
            return tile_h
    return 0


def path(rx, ry, nc, kernel="gaussian", max_smem=227 * 1024):
    """(name, tile_h) of the launch, on a GPU with max_smem bytes of opt-in
    shared memory a block (227 KiB: sm_90); tile_h 0: the launch fails."""
    if kernel == "box":
        return "box", fit(box_smem, rx, ry, nc, max_smem)
    if rx == ry and nc in (1, 2) and rx in FIXED_RADII:
        return "fixed", ROW_GROUPS * (4 if rx <= 4 else 8)
    return "generic", fit(sep_smem, rx, ry, nc, max_smem)


def is_interior(x0, y0, tile_h, rx, ry, nc, wb, height, row_end,
                src_aligned16=True, dst_aligned4=True):
    return (src_aligned16 and dst_aligned4 and x0 - rx * nc >= 0
            and x0 + TILE_W + rx * nc <= wb and y0 - ry >= 0
            and y0 + tile_h + ry <= height and y0 + tile_h <= row_end)


def strips(height):
    """The bands of cuconv_host_frames_strips ()."""
    strip = (height + MAX_STRIPS - 1) // MAX_STRIPS
    strip = (strip + TILE_ROWS - 1) // TILE_ROWS * TILE_ROWS
    return [(y, min(y + strip, height)) for y in range(0, height, strip)]


def tiles(width, height, nc, rx, ry, kernel="gaussian", bands=None):
    """[(x0, y0, tile_h, interior)] for one plane, launched band by band."""
    _, tile_h = path(rx, ry, nc, kernel)
    wb = width * nc
    out = []
    for b0, b1 in bands or strips(height):
        for by in range((b1 - b0 + tile_h - 1) // tile_h):
            for bx in range((wb + TILE_W - 1) // TILE_W):
                x0, y0 = bx * TILE_W, b0 + by * tile_h
                out.append((x0, y0, tile_h, is_interior(
                    x0, y0, tile_h, rx, ry, nc, wb, height, b1)))
    return out


# Planes of a 1920x1080 frame: (label, width, height, n_comp, sub)
PLANES = [
    ("Y: 1920x1080", 1920, 1080, 1, 1),
    ("I420/YV12 U, V: 960x540", 960, 540, 1, 2),
    ("NV12/NV21 UV: 960x540 x 2", 960, 540, 2, 2),
]
RADII = (4, 16)


def case(label, w, h, nc, sub, r, kernel="gaussian"):
    rc = (r + sub - 1) // sub
    t = tiles(w, h, nc, rc, rc, kernel)
    # cuconv_filter_device () launches one band: same tiles, same classes
    assert t == tiles(w, h, nc, rc, rc, kernel, bands=[(0, h)])
    name, tile_h = path(rc, rc, nc, kernel)
    n_in = sum(1 for x in t if x[3])
    return dict(label=label, w=w, h=h, nc=nc, r=r, rc=rc, path=name,
                tile_h=tile_h, tiles=t, n_in=n_in, n=len(t))


def table():
    print("| plane | luma r | plane r | kernel: path | tile (bytes x rows) "
          "| grid | interior tiles | output bytes in interior tiles |")
    print("|---|---:|---:|---|---|---|---:|---:|")
    for kernel in ("gaussian", "box"):
        for r in RADII:
            for label, w, h, nc, sub in PLANES:
                c = case(label, w, h, nc, sub, r, kernel)
                gx = (w * nc + TILE_W - 1) // TILE_W
                gy = c["n"] // gx
                area = sum(min(TILE_W, w * nc - x0) * min(th, h - y0)
                           for x0, y0, th, i in c["tiles"] if i)
                print("| %s | %d | %d | %s: %s | %d x %d | %d x %d | "
                      "%d of %d | %.0f%% |" % (
                          label, r, c["rc"], kernel, c["path"], TILE_W,
                          c["tile_h"], gx, gy, c["n_in"], c["n"],
                          100.0 * area / (w * nc * h)))


# Opt-in shared memory a block (cudaDevAttrMaxSharedMemoryPerBlockOptin)
# of the architectures built by default (-Dcuda-arch=75,80,86,89,90).
SMEM_OPTIN = [("sm_75", 64 * 1024), ("sm_86, sm_89", 99 * 1024),
              ("sm_80", 163 * 1024), ("sm_90", 227 * 1024)]


def limits():
    """Tile rows of the paths whose tile height depends on the device, by
    luma radius: where they shrink, and from which radius they fail."""
    shapes = [
        ("Y, Y444 U/V (generic separable)", "gaussian", 1,
         lambda r: (r, r)),
        ("Y42B U/V (generic separable)", "gaussian", 1,
         lambda r: ((r + 1) // 2, r)),
        ("I420/YV12 U/V (generic separable)", "gaussian", 1,
         lambda r: ((r + 1) // 2, (r + 1) // 2)),
        ("NV12/NV21 UV (generic separable)", "gaussian", 2,
         lambda r: ((r + 1) // 2, (r + 1) // 2)),
        ("Y, Y444 U/V (box)", "box", 1, lambda r: (r, r)),
        ("Y42B U/V (box)", "box", 1, lambda r: ((r + 1) // 2, r)),
        ("I420/YV12 U/V (box)", "box", 1,
         lambda r: ((r + 1) // 2, (r + 1) // 2)),
        ("NV12/NV21 UV (box)", "box", 2,
         lambda r: ((r + 1) // 2, (r + 1) // 2)),
    ]
    print("| plane (path) | " + " | ".join(n for n, _ in SMEM_OPTIN) + " |")
    print("|---|" + "---|" * len(SMEM_OPTIN))
    for label, kernel, nc, radii in shapes:
        cells = []
        for _, lim in SMEM_OPTIN:
            runs, prev = [], None
            for r in range(1, 65):
                rx, ry = radii(r)
                name, th = path(rx, ry, nc, kernel, lim)
                if kernel == "gaussian" and name == "fixed":
                    continue
                if th != prev:
                    runs.append([r, r, th])
                    prev = th
                else:
                    runs[-1][1] = r
            cells.append(", ".join(
                ("r %d-%d: " % (a, b) if a != b else "r %d: " % a)
                + ("**fails**" if th == 0 else "%d rows" % th)
                for a, b, th in runs))
        print("| %s | %s |" % (label, " | ".join(cells)))


def font(size, bold=False):
    from PIL import ImageFont
    names = ["DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"]
    for d in ("/usr/share/fonts/truetype/dejavu", ""):
        for n in names:
            try:
                return ImageFont.truetype(os.path.join(d, n), size)
            except OSError:
                pass
    return ImageFont.load_default()


INTERIOR = (86, 150, 214)
BORDER = (240, 150, 60)
OUTSIDE = (250, 222, 190)       # the part of a border tile past the plane
GRID = (255, 255, 255)
INK = (30, 30, 30)


def draw():
    from PIL import Image, ImageDraw

    S = 0.3                      # pixels a plane byte / row
    PAD, GAP, HEAD, CAP = 30, 56, 80, 58
    col_w = [math.ceil(math.ceil(w * nc / TILE_W) * TILE_W * S)
             for _, w, _, nc, _ in PLANES]
    row_h = [math.ceil((1088 + 64) * S) for _ in RADII]
    width = PAD * 2 + sum(col_w) + GAP * (len(PLANES) - 1)
    height = HEAD + sum(h + CAP + GAP for h in row_h) + 40
    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    f_title, f_lab, f_small = font(22, True), font(15, True), font(13)

    d.text((PAD, 14), "Interior and border tiles of the gaussian (separable) "
           "kernel: tile_is_interior (), aligned pitch, cuconv_host_frames_strips",
           fill=INK, font=f_title)
    lx = PAD
    for colour, text in ((INTERIOR, "interior: 16-byte loads, no checks"),
                         (BORDER, "border: border tables, guarded stores"),
                         (OUTSIDE, "part of a border tile past the plane")):
        d.rectangle([lx, 50, lx + 18, 66], fill=colour, outline=INK)
        d.text((lx + 24, 50), text, fill=INK, font=f_small)
        lx += 24 + d.textlength(text, font=f_small) + 30
    for xx in range(int(lx), int(lx) + 26, 10):
        d.line([xx, 58, xx + 5, 58], fill=(200, 0, 0), width=2)
    d.text((lx + 32, 50), "strip boundary (bands of one launch each)",
           fill=INK, font=f_small)

    y_top = HEAD
    for ri, r in enumerate(RADII):
        x_left = PAD
        for pi, (label, w, h, nc, sub) in enumerate(PLANES):
            c = case(label, w, h, nc, sub, r)
            wb = w * nc
            ox, oy = x_left, y_top + CAP
            for x0, y0, th, inside in c["tiles"]:
                x1, y1 = x0 + TILE_W, y0 + th
                box = [ox + x0 * S, oy + y0 * S, ox + x1 * S - 1,
                       oy + y1 * S - 1]
                d.rectangle(box, fill=INTERIOR if inside else BORDER,
                            outline=GRID)
                if x1 > wb or y1 > h:   # the tile sticks out of the plane
                    d.rectangle([ox + min(x1, wb) * S if x1 > wb else box[0],
                                 oy + min(y1, h) * S if y1 > h and x1 <= wb
                                 else box[1], box[2], box[3]], fill=OUTSIDE)
                    if x1 > wb and y1 > h:
                        d.rectangle([box[0], oy + h * S, box[2], box[3]],
                                    fill=OUTSIDE)
            d.rectangle([ox, oy, ox + wb * S, oy + h * S], outline=INK,
                        width=2)
            for b0, _ in strips(h)[1:]:
                yy = oy + b0 * S
                for xx in range(int(ox) - 8, int(ox + wb * S) + 8, 10):
                    d.line([xx, yy, xx + 5, yy], fill=(200, 0, 0), width=2)
            d.text((ox, y_top + 2), "%s, luma r = %d" % (label, r),
                   fill=INK, font=f_lab)
            d.text((ox, y_top + 22), "plane radius %d: %s path, tiles %d bytes x %d "
                   "rows" % (c["rc"], c["path"], TILE_W, c["tile_h"]),
                   fill=INK, font=f_small)
            d.text((ox, y_top + 38), "%d of %d tiles interior (%.0f%%)" %
                   (c["n_in"], c["n"], 100.0 * c["n_in"] / c["n"]),
                   fill=INK, font=f_small)
            x_left += col_w[pi] + GAP
        y_top += CAP + row_h[ri] + GAP
    d.text((PAD, height - 30), "Scale: 1 pixel = %.1f bytes. A tile is %d "
           "bytes wide (%d samples of a 2-component plane); on the right "
           "and bottom, tiles stick out of the plane." %
           (1 / S, TILE_W, TILE_W // 2), fill=INK, font=f_small)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "tiles.png")
    img.save(out, optimize=True)
    print("wrote", out)


if __name__ == "__main__":
    if "--table" in sys.argv[1:]:
        table()
    elif "--limits" in sys.argv[1:]:
        limits()
    else:
        draw()
