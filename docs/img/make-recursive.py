#!/usr/bin/env python3
"""Draws docs/img/recursive-carries.png: how the recursive gaussian
(cuda/kernels/cuconv-recursive.cu) cuts a line into bands and segments and where
the states between them come from, and how a plane's two directions read
and write (the intermediate stored transposed).

    python3 docs/img/make-recursive.py     # writes docs/img/recursive-carries.png

Needs Pillow (pip install pillow, or apt-get install python3-pil).  Keep
SEG, NSEG and LINES in step with cuda/kernels/cuconv-recursive.cu.
"""
import os

from PIL import Image, ImageDraw, ImageFont

SEG = 32        # samples a thread (a segment)
NSEG = 8        # segments a band: warps a block
LINES = 32      # lines a block

W, H = 1400, 1000
INK = (30, 30, 30)
CAUSAL = (31, 119, 180)
ANTI = (214, 39, 40)
BAND_FILL = ((230, 238, 248), (246, 240, 226))
SEG_EDGE = (150, 150, 150)


def font(size, bold=False):
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    for d in ("/usr/share/fonts/truetype/dejavu", ""):
        try:
            return ImageFont.truetype(os.path.join(d, name), size)
        except OSError:
            pass
    return ImageFont.load_default()


def arrow(dr, x0, y0, x1, y1, colour, width=3):
    dr.line((x0, y0, x1, y1), fill=colour, width=width)
    dx, dy = x1 - x0, y1 - y0
    n = max((dx * dx + dy * dy) ** 0.5, 1)
    ux, uy = dx / n, dy / n
    a = 12
    dr.polygon([(x1, y1),
                (x1 - a * ux + a * 0.5 * uy, y1 - a * uy - a * 0.5 * ux),
                (x1 - a * ux - a * 0.5 * uy, y1 - a * uy + a * 0.5 * ux)],
               fill=colour)


def line_picture(dr, top):
    """One line of 3 bands (the last one short) of NSEG segments each."""
    f, fb, fs = font(20), font(22, True), font(16)
    dr.text((40, top), "One line (a row or a column): bands of %d samples "
            "(a block), segments of %d (a thread)" % (SEG * NSEG, SEG),
            font=fb, fill=INK)
    x0, y0, seg_w, h = 60, top + 120, 38, 56
    bands = (NSEG, NSEG, 5)
    x = x0
    band_x = []
    for b, n in enumerate(bands):
        bx = x
        for s in range(n):
            w = seg_w if (b < 2 or s < n - 1) else seg_w * 0.55
            dr.rectangle((x, y0, x + w, y0 + h), fill=BAND_FILL[b % 2],
                         outline=SEG_EDGE)
            x += w
        dr.rectangle((bx, y0, x, y0 + h), outline=INK, width=3)
        band_x.append((bx, x))
        dr.text(((bx + x) / 2 - 30, y0 + h + 8), "band %d" % b, font=f,
                fill=INK)
    dr.text((x + 14, y0 + 14), "n samples", font=f, fill=INK)

    # zero-initial states of each segment, combined into band totals
    ty = top + 40
    dr.text((x0, ty), "rec_bands: each segment's zero-initial end "
            "states, saved, and combined into its band's totals", font=fs,
            fill=INK)
    # the line's ends: border states
    ly = y0 + h + 90
    dr.text((x0 - 40, ly), "sc = z[-1]", font=f, fill=CAUSAL)
    arrow(dr, x0 - 10, ly + 30, x0 + 4, y0 + h + 2, CAUSAL)
    dr.text((x - 90, ly), "sa = w[n]", font=f, fill=ANTI)
    arrow(dr, x - 20, ly + 30, x - 4, y0 + h + 2, ANTI)

    # carries: causal from the left into band 1, anticausal from the right
    b1 = band_x[1]
    cy = y0 - 16
    arrow(dr, band_x[0][0] + 8, cy, b1[0] + 2, cy, CAUSAL)
    dr.text((band_x[0][0] + 40, cy - 26), "z entering band 1: sc carried "
            "over band 0's totals", font=fs, fill=CAUSAL)
    arrow(dr, x - 8, y0 + h + 44, b1[1] - 2, y0 + h + 44, ANTI)
    dr.text((b1[0] + 60, y0 + h + 52), "w entering band 1 from the right",
            font=fs, fill=ANTI)
    # inside band 1: segment by segment
    sy = ly + 80
    dr.text((x0, sy), "rec_filter, a warp a section (a lane a line): "
            "every band's totals -> the line's zero-initial totals -> the "
            "border's states sc, sa (exact: clamp, mirror, wrap, zero)",
            font=fs, fill=INK)
    dr.text((x0, sy + 26), "-> the states entering this band -> through "
            "the saved states, those entering each of its segments; then "
            "every thread runs its segment forward (z) and back (w):",
            font=fs, fill=INK)
    dr.text((x0, sy + 52), "y[k] = sum over sections s of Re(a_s (z_s[k] "
            "+ w_s[k])) - c x[k]", font=f, fill=INK)
    return sy + 100


def plane_picture(dr, top):
    f, fb, fs = font(20), font(22, True), font(16)
    dr.text((40, top), "A plane: columns first, into an intermediate "
            "stored transposed; then its rows", font=fb, fill=INK)
    y0 = top + 60
    # the plane with a tile of LINES columns x a band of rows
    px, pw, ph = 60, 360, 230
    dr.rectangle((px, y0, px + pw, y0 + ph), outline=INK, width=3)
    dr.text((px, y0 + ph + 8), "src (row-major)", font=f, fill=INK)
    tx, tw, th = px + 120, 40, 120
    dr.rectangle((tx, y0 + 60, tx + tw, y0 + 60 + th), fill=BAND_FILL[0],
                 outline=CAUSAL, width=3)
    dr.text((tx + tw + 8, y0 + 70), "a block: %d columns" % LINES,
            font=fs, fill=INK)
    dr.text((tx + tw + 8, y0 + 92), "x %d rows, read a row" % (SEG * NSEG),
            font=fs, fill=INK)
    dr.text((tx + tw + 8, y0 + 114), "(32 lines) at a time", font=fs,
            fill=INK)
    arrow(dr, px + pw + 20, y0 + ph / 2, px + pw + 120, y0 + ph / 2, INK)
    dr.text((px + pw + 24, y0 + ph / 2 - 30), "columns", font=fs, fill=INK)

    # the intermediate: transposed
    mx, mw, mh = px + pw + 140, 230, 340
    dr.rectangle((mx, y0, mx + mw, y0 + mh), outline=INK, width=3)
    dr.text((mx, y0 + mh + 8), "mid: column g of the plane", font=f,
            fill=INK)
    dr.text((mx, y0 + mh + 32), "is row g (16-bit fixed point to",
            font=fs, fill=INK)
    dr.text((mx, y0 + mh + 52), "10 bits, else float)", font=fs,
            fill=INK)
    dr.rectangle((mx + 60, y0 + 40, mx + 60 + 120, y0 + 80),
                 fill=BAND_FILL[0], outline=CAUSAL, width=3)
    dr.text((mx + 70, y0 + 88), "written as 32 runs", font=fs, fill=INK)
    dr.text((mx + 70, y0 + 108), "of 256 samples", font=fs, fill=INK)
    dr.rectangle((mx + 30, y0 + 170, mx + 30 + 40, y0 + 170 + 120),
                 fill=BAND_FILL[1], outline=ANTI, width=3)
    dr.text((mx + 78, y0 + 200), "a rows block reads", font=fs, fill=INK)
    dr.text((mx + 78, y0 + 220), "32 rows side by side", font=fs, fill=INK)
    arrow(dr, mx + mw + 20, y0 + ph / 2, mx + mw + 120, y0 + ph / 2, INK)
    dr.text((mx + mw + 34, y0 + ph / 2 - 30), "rows", font=fs, fill=INK)

    dx = mx + mw + 140
    dr.rectangle((dx, y0, dx + pw, y0 + ph), outline=INK, width=3)
    dr.text((dx, y0 + ph + 8), "dst: rounded, ops, sharpen", font=f,
            fill=INK)
    dr.rectangle((dx + 40, y0 + 100, dx + 40 + 120, y0 + 100 + 40),
                 fill=BAND_FILL[1], outline=ANTI, width=3)
    dr.text((dx + 40, y0 + 150), "written as 32 runs of 256", font=fs,
            fill=INK)


def main():
    img = Image.new("RGB", (W, H), "white")
    dr = ImageDraw.Draw(img)
    y = line_picture(dr, 20)
    plane_picture(dr, y + 40)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "recursive-carries.png")
    img.save(out, optimize=True)
    print(out)


if __name__ == "__main__":
    main()
