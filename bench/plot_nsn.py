#!/usr/bin/python3
"""Plots bench/nsn_experiments' CSVs: Figs. 11, 16, 17 and 18 of the non-smooth Newton paper
(Macklin et al. 2019, seed 002; digest seed-002-nsn.md 9.3, tests 10, 13, 14 and 17), FB against
min-map force noise and the damping's per-step velocity loss.

fig17.png: the heavy stack (a box of M kg on two 1 kg boxes, heavy_stack.csv): the largest
interpenetration over 1 s (120 steps of 8.3 ms) as the next step's collision detection measures
it, against M, one panel per complementarity scaling (columns: effective mass, h^2, identity)
and budget (rows: 4 Newton x 20 and x 200 linear iterations), one line per linear solver.
Penetrations are clipped to [1e-6, 10] m so that a collapsed run stays on the plot.

fig18.png: one step per scene at 30 Newton x 40 linear iterations (fig18.csv): the weighted row
residual (top) and the momentum residual |g|_inf (bottom) at every Newton iterate, one line per
linear solver. Non-finite and huge values are clipped to 1e12 (the undamped Jacobi iteration
diverges).

fig11.png: one linear sub-problem per scene (fig11.csv): the first Newton iteration's Schur system
(59) of a settled step, the relative preconditioned residual ||r_k||_{P^-1} / ||b||_{P^-1} after
k iterations of each linear solver, k = 1 .. 60 (each k a separate run of the step; residuals
clipped to [1e-17, 1e12]).

fig16.png: the beam's 132 steps at 100 Newton x 40 PCR iterations (fig16.csv), r = effective
mass against r = 1 on the same states: per Newton iterate the median over the steps (line) and
the quartiles (band) of the weighted row residual (left; each scaling's own NCP values) and of
the momentum residual (right); values clipped to [1e-18, 1e12].

noise.png: the table of scenes/nsn_redundant.xml at rest on its 16 foot contacts (noise.csv):
each contact's normal force over the steps, Fischer-Burmeister (left) against min-map (right),
at 4 x 20 (top) and converged (bottom); y from 2 to 3.6 N (m g / 16 = 2.88 N).

damping.png: the velocity a free sphere loses in one step, 1 - u.u~ / |u~|^2 (damping.csv),
against N Newton iterations at t = 0.5, 0.75, 1: the formula (1 - t)^N (lines), measured on a
sphere with an inactive speculative contact row (filled) and one in the air in no island
(open; a loss of 0 is drawn at 1e-17).

Usage: /usr/bin/python3 bench/plot_nsn.py DIR OUTDIR
(plots each figure whose CSV DIR holds: heavy_stack.csv, fig18.csv, fig11.csv, fig16.csv,
noise.csv, damping.csv; from
Debian's python3-matplotlib.)
"""

import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (name, colour, marker, line style, marker size): PCG dashed and smaller, since on these small
# islands it often lands exactly on PCR's line.
SOLVERS = (("pcr", "C3", "o", "-", 8), ("pcg", "C2", "s", "--", 4), ("jacobi", "C0", "v", "-", 6),
           ("gauss-seidel", "C1", "^", "-", 6))
SCALINGS = (("effective-mass", "r = effective mass (66)"), ("h2", "r = h^2"),
            ("identity", "r = 1"))


def clip(x, low, high):
    x = float(x)
    if not math.isfinite(x):
        return high
    return min(max(x, low), high)


def fig17(rows, path):
    budgets = sorted({int(r["linear"]) for r in rows})
    fig, axes = plt.subplots(len(budgets), len(SCALINGS), figsize=(13, 4 * len(budgets)),
                             sharex=True, sharey=True, squeeze=False)
    for i, linear in enumerate(budgets):
        for j, (scaling, label) in enumerate(SCALINGS):
            ax = axes[i][j]
            for solver, color, marker, style, size in SOLVERS:
                subset = [r for r in rows if r["stack"] != "geometric" and r["solver"] == solver
                          and r["scaling"] == scaling and int(r["linear"]) == linear]
                subset.sort(key=lambda r: float(r["stack"]))
                ax.plot([float(r["stack"]) for r in subset],
                        [clip(r["max_collision_penetration"], 1e-6, 10) for r in subset],
                        color=color, marker=marker, linestyle=style, markersize=size,
                        label=solver)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title("%s, 4 x %d" % (label, linear))
            ax.grid(True, which="both", alpha=0.3)
            if i == len(budgets) - 1:
                ax.set_xlabel("heavy box mass M, kg (on two 1 kg boxes)")
            if j == 0:
                ax.set_ylabel("max interpenetration over 1 s, m")
    axes[0][0].legend()
    fig.suptitle("Heavy stack (Fig. 17 / test 10): nsn, h = 8.3 ms, mu 0.5")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def fig18(rows, path):
    scenes = []
    for r in rows:
        if r["scene"] not in scenes:
            scenes.append(r["scene"])
    fig, axes = plt.subplots(2, len(scenes), figsize=(5 * len(scenes), 8), squeeze=False)
    for j, scene in enumerate(scenes):
        for solver, color, marker, style, size in SOLVERS:
            subset = [r for r in rows if r["scene"] == scene and r["solver"] == solver]
            subset.sort(key=lambda r: int(r["iterate"]))
            n = [int(r["iterate"]) for r in subset]
            for i, column in enumerate(("row_residual", "momentum_residual")):
                axes[i][j].plot(n, [clip(r[column], 1e-16, 1e12) for r in subset], color=color,
                                marker=marker, linestyle=style, markersize=size / 2,
                                label=solver)
        for i, label in enumerate(("weighted row residual |h|_inf, m/s",
                                   "momentum residual |g|_inf, N s")):
            ax = axes[i][j]
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_ylabel(label)
            ax.set_xlabel("Newton iterate")
        axes[0][j].set_title(scene.replace("_", " "))
    axes[0][0].legend()
    fig.suptitle("Linear solvers inside Newton (Fig. 18 / test 14): one step, 40 linear "
                 "iterations per Newton iteration")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def fig11(rows, path):
    scenes = []
    for r in rows:
        if r["scene"] not in scenes:
            scenes.append(r["scene"])
    fig, axes = plt.subplots(1, len(scenes), figsize=(5 * len(scenes), 4.5), squeeze=False)
    for j, scene in enumerate(scenes):
        ax = axes[0][j]
        size = ""
        for solver, color, marker, style, msize in SOLVERS:
            subset = [r for r in rows if r["scene"] == scene and r["solver"] == solver]
            subset.sort(key=lambda r: int(r["iterations"]))
            if not subset:
                continue
            size = subset[0]["rows"]
            ax.plot([int(r["iterations"]) for r in subset],
                    [clip(r["linear_residual"], 1e-17, 1e12) for r in subset], color=color,
                    marker=marker, linestyle=style, markersize=msize / 2, label=solver)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("linear iterations k")
        ax.set_ylabel("||r_k||_{P^-1} / ||b||_{P^-1}")
        ax.set_title("%s (%s rows)" % (scene.replace("_", " "), size))
    axes[0][0].legend()
    fig.suptitle("One linear sub-problem (Fig. 11): the first Newton iteration's Schur system, "
                 "Jacobi preconditioner")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def quartiles(values):
    v = sorted(values)
    return tuple(v[int(q * (len(v) - 1))] for q in (0.25, 0.5, 0.75))


def fig16(rows, path):
    scalings = (("effective-mass", "C3", "r = effective mass (66)"), ("identity", "C0", "r = 1"))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for j, (column, label) in enumerate((("row_residual", "weighted row residual, m/s"),
                                         ("momentum_residual", "momentum residual |g|_inf, N s"))):
        ax = axes[j]
        for scaling, color, name in scalings:
            by_iterate = {}
            for r in rows:
                if r["scaling"] == scaling:
                    by_iterate.setdefault(int(r["iterate"]), []).append(
                        clip(r[column], 1e-18, 1e12))
            n = sorted(by_iterate)
            q = [quartiles(by_iterate[i]) for i in n]
            ax.fill_between(n, [x[0] for x in q], [x[2] for x in q], color=color, alpha=0.25,
                            linewidth=0)
            ax.plot(n, [x[1] for x in q], color=color, label="%s: median, quartiles" % name)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("Newton iterate")
        ax.set_ylabel(label)
    axes[0].legend()
    steps = len({r["step"] for r in rows})
    fig.suptitle("Complementarity preconditioner on the beam (Fig. 16): %d steps, 40 PCR "
                 "iterations per Newton iteration, quartiles over the steps" % steps)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def noise(rows, path):
    budgets = []
    for r in rows:
        if r["budget"] not in budgets:
            budgets.append(r["budget"])
    fig, axes = plt.subplots(len(budgets), 2, figsize=(12, 4 * len(budgets)), squeeze=False)
    for i, budget in enumerate(budgets):
        for j, ncp in enumerate(("fb", "min-map")):
            ax = axes[i][j]
            subset = [r for r in rows if r["budget"] == budget and r["ncp"] == ncp
                      and r["body"] == "table"]
            for c in sorted({int(r["contact"]) for r in subset}):
                points = sorted((int(r["step"]), float(r["force"])) for r in subset
                                if int(r["contact"]) == c)
                ax.plot([p[0] for p in points], [p[1] for p in points], linewidth=0.8)
            ax.set_title("table on 16 contacts, %s, %s" % (ncp, budget.replace("x", " x ")))
            ax.set_xlabel("step (8.3 ms)")
            ax.set_ylabel("normal force per contact, N")
            ax.grid(True, alpha=0.3)
            ax.set_ylim(2.0, 3.6)
    fig.suptitle("FB against min-map on a redundant contact set at rest (Sec 10.3): one line per "
                 "contact")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def damping(rows, path):
    fig, ax = plt.subplots(1, 1, figsize=(7, 4.5))
    for t, color in (("0.5", "C0"), ("0.75", "C3"), ("1", "C2")):
        for body, marker, fill in (("near", "o", "full"), ("air", "s", "none")):
            subset = sorted(((int(r["N"]), r) for r in rows
                             if r["t"] == t and r["body"] == body), key=lambda p: p[0])
            n = [p[0] for p in subset]
            if body == "near":
                ax.plot(n, [1 - float(p[1]["formula"]) for p in subset], color=color,
                        label="formula (1 - t)^N, t = %s" % t)
            ax.plot(n, [max(1 - float(p[1]["measured"]), 1e-17) for p in subset], color=color,
                    marker=marker, fillstyle=fill, linestyle="none",
                    label="measured, %s (%s rows), t = %s" % (
                        body, subset[0][1]["rows"] if subset else "?", t))
    ax.set_yscale("log")
    ax.set_xlabel("Newton iterations N")
    ax.set_ylabel("velocity lost in one step: 1 - u.u~ / |u~|^2")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Damped Newton from u = 0: one step of a free sphere\n"
                 "(loss 0 drawn at 1e-17; t = 1: none)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    # Each figure whose CSV is in DIR (the subcommands run separately).
    for name, plot in (("heavy_stack.csv", fig17), ("fig18.csv", fig18), ("fig11.csv", fig11),
                         ("fig16.csv", fig16), ("noise.csv", noise),
                         ("damping.csv", damping)):
        source = os.path.join(src, name)
        if os.path.exists(source):
            png = {"heavy_stack.csv": "fig17.png"}.get(name, name.replace(".csv", ".png"))
            plot(list(csv.DictReader(open(source))), os.path.join(out, png))


if __name__ == "__main__":
    main()
