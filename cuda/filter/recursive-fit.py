#!/usr/bin/env python3
"""Fits the sections of the recursive gaussian (cuda/filter/cuconv-recursive-coeffs.c,
docs/design.md, "The recursive gaussian") and prints their error table.

The kernel of n sections, for x >= 0 in units of sigma and mirrored for
x < 0, is

    h(x) = sum_i exp(-l_i x) (a_i cos(w_i x) + b_i sin(w_i x))

fitted by least squares to exp(-x^2 / 2) on [0, 14] (x = 0 weighs half:
the two-sided kernel counts it once).  Two sections start from Deriche's
constants (1993); n + 1 sections from the n-section fit and a small extra
section (random starts with --search, else the rounded published ones).
The error is the L1 distance of the discrete kernels, both normalised
over all integers: h(|k| / sigma) against exp(-k^2 / (2 sigma^2)).

    python3 cuda/filter/recursive-fit.py            # constants and the table
    python3 cuda/filter/recursive-fit.py --search   # multi-start search (minutes)
"""
import sys

import numpy as np
from scipy.optimize import least_squares

X = np.linspace(0.0, 14.0, 1401)
G = np.exp(-X * X / 2)
WT = np.sqrt(np.where(X == 0, 0.5, 1.0))
DERICHE = [1.680, 3.735, 1.783, 0.6318, -0.6803, -0.2598, 1.723, 1.997]
# (a, b, l, w) per section, rounded: the starts that reproduce the fits
START = {
    3: [3.155, 7.316, 2.183, 0.5266, -2.314, -0.9211, 2.152, 1.616,
        0.1586, -0.04383, 2.079, 2.857],
    4: [6.143, 14.53, 2.517, 0.4609, -6.029, -2.465, 2.498, 1.401,
        0.9056, -0.3093, 2.455, 2.404, -0.02004, 0.02320, 2.378, 3.570],
}
SIGMAS = (0.8, 1, 2, 4, 8, 10.67, 16, 21.33, 32, 64, 128, 256)


def model(th, x):
    h = np.zeros_like(x)
    for a, b, l, w in np.reshape(th, (-1, 4)):
        h += np.exp(-l * x) * (a * np.cos(w * x) + b * np.sin(w * x))
    return h


def jac(th):
    cols = []
    for a, b, l, w in np.reshape(th, (-1, 4)):
        e, c, s = np.exp(-l * X), np.cos(w * X), np.sin(w * X)
        cols += [e * c, e * s, -X * e * (a * c + b * s), X * e * (b * c - a * s)]
    return np.array(cols).T * WT[:, None]


def fit(th0):
    return least_squares(lambda th: (model(th, X) - G) * WT, th0, jac=jac,
        method='lm', xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=4000)


def l1(th, sigma):
    k = np.arange(-int(20 * sigma + 60), int(20 * sigma + 60) + 1)
    g = np.exp(-k * k / (2.0 * sigma * sigma))
    h = model(th, np.abs(k) / sigma)
    return np.abs(h / h.sum() - g / g.sum()).sum()


def main():
    rng = np.random.default_rng(1)
    fits = {2: fit(DERICHE).x}
    for n in (3, 4):
        if '--search' not in sys.argv:
            fits[n] = fit(START[n]).x
            continue
        best = None
        for trial in range(40):
            extra = [rng.normal(0, 0.1), rng.normal(0, 0.1),
                rng.uniform(1.5, 3.5), rng.uniform(2, 7)]
            th0 = np.concatenate([fits[n - 1], extra])
            r = fit(th0 * (1 + 0.1 * rng.normal(size=th0.size) * (trial > 0)))
            if np.all(np.reshape(r.x, (-1, 4))[:, 2] > 0.2) and (
                    best is None or r.cost < best.cost):
                best = r
        fits[n] = best.x
    for n, th in fits.items():
        print('/* %d sections: a, b, lambda, omega */' % n)
        for a, b, l, w in np.reshape(th, (-1, 4)):
            print('  {%.9f, %.9f, %.9f, %.9f},' % (a, b, l, w))
    print('\n| sigma | ' + ' | '.join('%d sections' % n for n in fits) + ' |')
    print('|---|' + '---|' * len(fits))
    for s in SIGMAS:
        print('| %g | ' % s + ' | '.join('%.2e' % l1(th, s)
            for th in fits.values()) + ' |')


if __name__ == '__main__':
    main()
