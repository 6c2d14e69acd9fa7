#!/usr/bin/python3
"""Plots bench/single_step_bench's CSV: the SubADMM/CANAL paper's Figs. 7 and 9.

Writes two PNGs next to the CSV (STEM is the CSV's name without .csv):
  STEM_iterations.png  residual vs iterations,
  STEM_time.png        residual vs wall time of the solve,
each with one line per solver: the median over cases of the Sec. VII residual after k iterations
(against k, or against the median solve time at k), and a band from the 25th to the 75th
percentile of the residual. Both axes are logarithmic; a residual of exactly 0 is drawn at 1e-17.

It also prints, per solver, when its median curve first reaches 1e-6 and 1e-8 and where it ends,
and where the median curves of two solvers cross, in iterations and in time (the median curves
are joined linearly in log-log coordinates, and a crossing is where the difference of their
log10 residuals changes sign).

Usage: /usr/bin/python3 bench/plot_single_step.py FILE.csv [MORE.csv ...] [--out STEM]
                                                   [--title TEXT]
Several CSVs (runs of single_step_bench with other solvers, or fewer cases of a slow one) are
read as one; the PNGs are then named after --out, or the first CSV.
(matplotlib from Debian's python3-matplotlib.)
"""

import argparse
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FLOOR = 1e-17  # where a zero residual is drawn
COLORS = {"canal": "tab:red", "subadmm": "tab:blue", "pgs": "tab:green"}


def percentile(sorted_values, q):
    """Linear-interpolation percentile (numpy's default) of an ascending list."""
    if not sorted_values:
        return math.nan
    position = q * (len(sorted_values) - 1)
    low = int(math.floor(position))
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (position - low) * (sorted_values[high] - sorted_values[low])


def read_curves(paths):
    """{solver: [(k, median s, q25 residual, median residual, q75 residual, runs, diverged)]}."""
    samples = defaultdict(lambda: defaultdict(lambda: ([], [], [0])))
    order = []
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    for row in rows:
        solver = row["solver"]
        if solver not in order:
            order.append(solver)
        residuals, seconds, diverged = samples[solver][int(row["iterations"])]
        if row["status"] != "0":
            diverged[0] += 1
            continue
        residuals.append(max(float(row["residual"]), FLOOR))
        seconds.append(float(row["seconds"]))
    curves = {}
    for solver in order:
        points = []
        for k in sorted(samples[solver]):
            residuals, seconds, diverged = samples[solver][k]
            residuals.sort()
            seconds.sort()
            points.append(
                (
                    k,
                    percentile(seconds, 0.5),
                    percentile(residuals, 0.25),
                    percentile(residuals, 0.5),
                    percentile(residuals, 0.75),
                    len(residuals),
                    diverged[0],
                )
            )
        curves[solver] = points
    return curves


def plot(curves, x_index, xlabel, path, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
    for solver, points in curves.items():
        x = [p[x_index] for p in points]
        if x_index == 1:
            x = [1e3 * v for v in x]
        color = COLORS.get(solver)
        ax.plot(x, [p[3] for p in points], label=solver, color=color, linewidth=1.6)
        ax.fill_between(x, [p[2] for p in points], [p[4] for p in points], color=color, alpha=0.2,
                        linewidth=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("residual (Sec. VII), median and IQR over cases")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def interpolate(xs, ys, x):
    """Piecewise-linear interpolation in log-log coordinates; None outside [xs[0], xs[-1]]."""
    if x < xs[0] or x > xs[-1]:
        return None
    for i in range(1, len(xs)):
        if x <= xs[i]:
            if xs[i] == xs[i - 1]:
                return ys[i]
            t = (math.log10(x) - math.log10(xs[i - 1])) / (math.log10(xs[i]) - math.log10(xs[i - 1]))
            return 10 ** ((1 - t) * math.log10(ys[i - 1]) + t * math.log10(ys[i]))
    return ys[-1]


def monotone(xs, ys):
    """Keeps the points whose x grows (median times can tie or dip on a noisy machine)."""
    out_x, out_y = [], []
    for x, y in zip(xs, ys):
        if x > 0 and (not out_x or x > out_x[-1]):
            out_x.append(x)
            out_y.append(y)
    return out_x, out_y


def crossings(curve_a, curve_b, x_index, a, b):
    """Where two median curves cross: ([(x, residual, the solver that goes below)], the x range
    both curves cover (None when they do not overlap), the solver below at its start)."""
    xa, ya = monotone([p[x_index] for p in curve_a], [p[3] for p in curve_a])
    xb, yb = monotone([p[x_index] for p in curve_b], [p[3] for p in curve_b])
    if not xa or not xb:
        return [], None, None
    low, high = max(xa[0], xb[0]), min(xa[-1], xb[-1])
    if low > high:
        return [], None, None
    grid = sorted({x for x in xa + xb if low <= x <= high})
    found = []
    previous = None
    first_below = None
    for x in grid:
        diff = math.log10(interpolate(xa, ya, x)) - math.log10(interpolate(xb, yb, x))
        if previous is not None and (previous[1] > 0) != (diff > 0) and diff != 0:
            # Linear in log x between the two grid points.
            x0, d0 = previous
            t = d0 / (d0 - diff)
            xc = 10 ** (math.log10(x0) + t * (math.log10(x) - math.log10(x0)))
            found.append((xc, interpolate(xa, ya, xc), a if diff < 0 else b))
        if diff != 0:
            if previous is None:
                first_below = a if diff < 0 else b
            previous = (x, diff)
    return found, (low, high), first_below


def first_reaching(points, level):
    for p in points:
        if p[3] <= level:
            return p
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--out", default=None, help="the PNGs' stem (default: the first CSV's)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()
    curves = read_curves(args.csv)
    if not curves:
        sys.exit(f"plot_single_step: no rows in {', '.join(args.csv)}")
    stem = args.out or os.path.splitext(args.csv[0])[0]
    cases = {solver: max(p[5] + p[6] for p in points) for solver, points in curves.items()}
    counts = sorted(set(cases.values()))
    title = args.title or (f"{os.path.basename(stem)}: " + (
        f"{counts[0]} cases" if len(counts) == 1
        else ", ".join(f"{solver} {n}" for solver, n in cases.items()) + " cases"))
    plot(curves, 0, "iterations", stem + "_iterations.png", title)
    plot(curves, 1, "solve wall time [ms], median over cases", stem + "_time.png", title)
    print(f"wrote {stem}_iterations.png and {stem}_time.png")

    for solver, points in curves.items():
        line = []
        for level in (1e-6, 1e-8):
            p = first_reaching(points, level)
            line.append(
                f"median <= {level:.0e} at k = {p[0]} ({1e3 * p[1]:.3g} ms)"
                if p
                else f"median never <= {level:.0e}"
            )
        best = min(points, key=lambda p: p[3])
        last = points[-1]
        line.append(f"lowest median {best[3]:.2e} at k = {best[0]} ({1e3 * best[1]:.3g} ms)")
        line.append(f"at k = {last[0]}: {last[3]:.2e} (IQR {last[2]:.1e}-{last[4]:.1e}, "
                    f"{1e3 * last[1]:.3g} ms)")
        diverged = sum(p[6] for p in points)
        if diverged:
            line.append(f"{diverged} diverged runs")
        print(f"{solver}: " + "; ".join(line))

    solvers = list(curves)
    for i, a in enumerate(solvers):
        for b in solvers[i + 1:]:
            for x_index, unit in ((1, "time"), (0, "iterations")):
                found, span, below = crossings(curves[a], curves[b], x_index, a, b)
                show = (lambda x: f"{1e3 * x:.3g} ms") if x_index == 1 else (lambda x: f"k = {x:.3g}")
                for x, residual, lower in found:
                    upper = b if lower == a else a
                    print(f"crossing ({unit}): {lower} drops below {upper} at {show(x)}, "
                          f"residual {residual:.2e}")
                if not found and span:
                    print(f"no crossing ({unit}) of {a} and {b}: {below} lies below from "
                          f"{show(span[0])} to {show(span[1])}")


if __name__ == "__main__":
    main()
