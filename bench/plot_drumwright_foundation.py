#!/usr/bin/python3
"""Plots bench/drumwright_foundation_bench's fig7.csv: Drumwright's Fig. 7 (seed 003, Sec. 5.5).

The element forces (N) of the first-order step's last step (t 0.99 -> 1 s) under the cube's
bottom face, 900 elements, E 1e7 Pa, the 50 N load (its point on the top face at the step's
t0 = 0.99 s, angle 9.9 rad, marked); white elements carry no force (lifted off, or no row).

Usage: /usr/bin/python3 bench/plot_drumwright_foundation.py CSV PNG
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    xs = sorted({float(r["x"]) for r in rows})
    ys = sorted({float(r["y"]) for r in rows})
    grid = [[float("nan")] * len(xs) for _ in ys]
    for r in rows:
        force = float(r["force"])
        grid[ys.index(float(r["y"]))][xs.index(float(r["x"]))] = force if force > 0 else float("nan")
    step = xs[1] - xs[0]
    extent = [xs[0] - step / 2, xs[-1] + step / 2, ys[0] - step / 2, ys[-1] + step / 2]
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(grid, origin="lower", extent=extent, cmap="magma_r")
    fig.colorbar(image, ax=ax, label="element force (N)")
    ax.plot([0.5 * math.cos(9.9)], [0.5 * math.sin(9.9)], "o", color="cyan",
            markeredgecolor="k", label="load point (top face), t = 0.99 s")
    ax.set_xlabel("x (m, cube frame)")
    ax.set_ylabel("y (m, cube frame)")
    ax.set_title("element forces, last step to t = 1 s: 900 elements, E 1e7, 50 N, h 0.01",
                 fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
