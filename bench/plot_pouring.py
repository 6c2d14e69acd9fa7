#!/usr/bin/python3
"""Plots bench/pouring_bench's CSV: the SubADMM/CANAL paper's Fig. 11 (pouring at fixed
iterations: mean solve time and mean Sec. VII residual over the task against the system DOF).

Writes STEM.png next to the CSV (STEM: the CSV's name without .csv, or --out): two log-log
panels, time and residual against DOF, one line per solver with its fitted power law dashed.
Prints, per solver, the exponents p of least-squares fits of log10(y) = c + p log10(DOF) for the
time and the residual, as a Markdown table.

Usage: /usr/bin/python3 bench/plot_pouring.py FILE.csv [--out STEM]
(matplotlib from Debian's python3-matplotlib.)
"""

import argparse
import csv
import math
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"canal": "tab:red", "subadmm": "tab:blue", "pgs": "tab:green"}


def fit(xs, ys):
    """(c, p) of the least-squares line log10(y) = c + p log10(x)."""
    lx = [math.log10(x) for x in xs]
    ly = [math.log10(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    sxx = sum((x - mx) ** 2 for x in lx)
    p = sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx
    return my - p * mx, p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    series = defaultdict(list)
    iterations = {}
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            series[row["solver"]].append((int(row["dof"]), float(row["mean_solve_ms"]),
                                          float(row["mean_residual"])))
            iterations[row["solver"]] = row["iterations"]
    stem = args.out or os.path.splitext(args.csv)[0]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    print("| solver | iterations | time exponent | residual exponent |")
    print("|---|---|---|---|")
    for solver, points in series.items():
        points.sort()
        dof = [p[0] for p in points]
        color = COLORS.get(solver)
        exponents = []
        for ax, index in ((axes[0], 1), (axes[1], 2)):
            values = [p[index] for p in points]
            c, p = fit(dof, values)
            exponents.append(p)
            ax.plot(dof, values, "o-", color=color,
                    label=f"{solver} ({iterations[solver]} it.), p = {p:.2f}")
            ax.plot(dof, [10 ** (c + p * math.log10(x)) for x in dof], "--", color=color,
                    linewidth=0.8)
        print(f"| {solver} | {iterations[solver]} | {exponents[0]:.2f} | {exponents[1]:.2f} |")
    for ax, label in ((axes[0], "mean solve time per step [ms]"),
                      (axes[1], "mean residual (Sec. VII) per step")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("system DOF")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{os.path.basename(stem)}: fixed iterations, tolerance 0", fontsize=10)
    fig.tight_layout()
    fig.savefig(stem + ".png")
    plt.close(fig)
    print(f"wrote {stem}.png")


if __name__ == "__main__":
    main()
