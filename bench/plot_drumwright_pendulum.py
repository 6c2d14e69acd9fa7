#!/usr/bin/python3
"""Plots bench/drumwright_pendulum_bench's CSVs: Drumwright's Figs. 4 and 6 (seed 003).

Reads DIR/fig4.csv, fig4_trace.csv, fig6.csv, fig6_restitution.csv and fig6_entry.csv and writes
into DIR:
  fig4.png  the rod in absolute coordinates, k 1e15, b 1: |phi(t)| at h = 0.1 and h = 1e-4 (the
            paper's two panels); max |phi| over 1 s against h by both bilateral forms with the
            fitted slope; (E(t) - E(0)) / h for four h beside semi-implicit Euler's first-order
            modified-energy term (1/2) c theta' sin theta; max |E - E0| against h beside its
            closed form (h/2) max c theta' sin theta; the error of q(1 s) against the rigid rod;
  fig6.png  the minimal-coordinate pendulum on the soft limit theta >= 0, k 1e12, b 0: theta(t)
            over 2 s for h = 1e-5 .. 1e-8 (the paper's colors and dashes); the impact window in
            microradians against the exact elastic bounce -(v / omega) sin(omega t); the
            restitution per omega h (the run's, the one entered at theta = 0, the range over
            entry depths) beside implicit Euler's (1 + (omega h)^2)^(-N/2); the restitution
            against the entry depth.

Usage: /usr/bin/python3 bench/plot_drumwright_pendulum.py DIR
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The paper's Fig. 6 styles: 1e-5 red solid, 1e-6 blue dash-dot, 1e-7 grey dotted, 1e-8 green
# dashed.
STYLES = {1e-5: ("tab:red", "-"), 1e-6: ("tab:blue", "-."), 1e-7: ("grey", ":"),
          1e-8: ("tab:green", "--")}
# Fig. 4 (the rod): c = m g L / 2, J_p = I + m L^2 / 4 (bench/drumwright_pendulum.h).
ROD_C = 1.0 * 9.8 * 1.0 / 2
# Fig. 6 (the limit): J = 1, K = 1e12, m g l = 9.8.
OMEGA = 1e6
IMPACT_SPEED = math.sqrt(2 * 9.8)


def rows(path):
    with open(path, newline="") as file:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(file)]


def by_h(table):
    runs = defaultdict(lambda: defaultdict(list))
    for row in table:
        for name, value in row.items():
            runs[row["h"]][name].append(value)
    return runs


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxy = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    sxx = sum((a - mx) ** 2 for a in lx)
    return sxy / sxx


def fit_line(axis, hs, ys, label, style="k--"):
    """The least-squares power law over h <= 1e-3, drawn over the whole sweep."""
    fine = [(h, y) for h, y in zip(hs, ys) if h <= 1e-3 + 1e-12]
    p = slope([h for h, _ in fine], [y for _, y in fine])
    h0, y0 = fine[-1]
    axis.loglog(hs, [y0 * (h / h0) ** p for h in hs], style, lw=0.8,
                label=f"{label}: slope {p:.3f} (h 1e-3 .. 1e-4)")


def fig4(directory):
    sweep = rows(os.path.join(directory, "fig4.csv"))
    traces = by_h(rows(os.path.join(directory, "fig4_trace.csv")))
    hs = [r["h"] for r in sweep]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for axis, h in ((axes[0][0], 0.1), (axes[0][1], 1e-4)):
        run = traces[h]
        axis.plot(run["t"], run["phi"], "-" if h < 0.05 else "o-", ms=3)
        axis.set_xlabel("t (s)")
        axis.set_ylabel("|phi| (m)")
        axis.set_title(f"deviation from the joint, h = {h:g} s, k = 1e15, b = 1")
    axis = axes[0][2]
    axis.loglog(hs, [r["max_phi"] for r in sweep], "o-", label="n x n form (61)-(62), (53)")
    axis.loglog(hs, [r["max_phi_velocity_form"] for r in sweep], "x", ms=8,
                label="velocity form")
    fit_line(axis, hs, [r["max_phi"] for r in sweep], "fit")
    axis.set_xlabel("h (s)")
    axis.set_ylabel("max |phi| over 1 s (m)")
    axis.set_title("constraint drift (paper: quadratic in h)")
    axis.legend(fontsize=8)
    axis = axes[1][0]
    for h in sorted(traces, reverse=True):
        run = traces[h]
        axis.plot(run["t"], [e / h for e in run["energy"]], label=f"h = {h:g}")
    finest = traces[min(traces)]
    term = [(e - r) / min(traces) for e, r in zip(finest["energy"], finest["energy_residual"])]
    axis.plot(finest["t"], term, "k--", lw=0.8, label="(1/2) c theta' sin theta")
    axis.axhline(0, color="grey", lw=0.5)
    axis.set_xlabel("t (s)")
    axis.set_ylabel("(E(t) - E(0)) / h (J/s)")
    axis.set_title("energy error / h (paper: exactly 0)")
    axis.legend(fontsize=8)
    axis = axes[1][1]
    axis.loglog(hs, [r["energy_max"] for r in sweep], "o-", label="max |E - E0| over 1 s")
    axis.loglog(hs, [r["energy_predicted"] for r in sweep], "k--", lw=0.8,
                label="(h/2) max c theta' sin theta")
    axis.loglog(hs, [abs(r["energy_end"]) for r in sweep], "s:", label="|E(1 s) - E(0)|")
    axis.loglog(hs, [r["energy_residual"] for r in sweep], "^-",
                label="max |E - E0 - (h/2) c theta' sin theta|")
    fit_line(axis, hs, [r["energy_residual"] for r in sweep], "residual", "k:")
    axis.set_xlabel("h (s)")
    axis.set_ylabel("J")
    axis.set_title("energy error against h")
    axis.legend(fontsize=8)
    axis = axes[1][2]
    axis.loglog(hs, [r["error"] for r in sweep], "o-", label="|q(1 s) - q_ref| / |q_ref|")
    fit_line(axis, hs, [r["error"] for r in sweep], "fit")
    axis.set_xlabel("h (s)")
    axis.set_ylabel("relative error")
    axis.set_title("state at 1 s vs the rigid rod (RK4, 1e-5 s)")
    axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "fig4.png"), dpi=90)


def fig6(directory):
    runs = by_h(rows(os.path.join(directory, "fig6.csv")))
    table = rows(os.path.join(directory, "fig6_restitution.csv"))
    entry = by_h(rows(os.path.join(directory, "fig6_entry.csv")))
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    axis = axes[0][0]
    for h in sorted(runs, reverse=True):
        color, dash = STYLES.get(h, ("k", "-"))
        run = runs[h]
        axis.plot(run["t"], run["theta"], dash, color=color, label=f"h = {h:g}")
    axis.set_xlabel("t (s)")
    axis.set_ylabel("theta (rad)")
    axis.set_title("pendulum on the soft limit theta >= 0, k = 1e12, b = 0, from pi/2")
    axis.legend()
    axis = axes[0][1]
    for h in sorted(runs, reverse=True):
        color, dash = STYLES.get(h, ("k", "-"))
        run = runs[h]
        points = [(t, th) for t, th, w in zip(run["t"], run["theta"], run["window"]) if w == 1]
        start = table[0]["t_exact"]
        axis.plot([(t - start) * 1e6 for t, _ in points], [th * 1e6 for _, th in points],
                  dash + ("o" if h >= 1e-6 else ""), color=color, ms=3, label=f"h = {h:g}")
    tau = [i * math.pi / OMEGA / 200 for i in range(201)]
    axis.plot([t * 1e6 for t in tau], [-IMPACT_SPEED / OMEGA * math.sin(OMEGA * t) * 1e6
                                       for t in tau], "k-", lw=0.8, label="elastic, exact")
    axis.set_xlim(-5, 15)
    axis.set_ylim(-15, 40)
    axis.set_xlabel("t - t_impact (us), t_impact: the exact free swing's")
    axis.set_ylabel("theta (urad)")
    axis.set_title("the impact window")
    axis.legend(fontsize=8)
    axis = axes[1][0]
    grid = [10 ** (-3 + i * 0.05) for i in range(101)]
    axis.semilogx(grid, [(1 + x * x) ** (-math.pi / math.atan(x) / 2) for x in grid], "k-",
                  lw=0.8, label="(1 + (omega h)^2)^(-N/2)")
    wh = [r["omega_h"] for r in table]
    axis.semilogx(wh, [r["restitution"] for r in table], "o", ms=8, label="the run from pi/2")
    axis.semilogx(wh, [r["restitution_at_limit"] for r in table], "x", ms=10,
                  label="entered at theta = 0")
    for r in table:
        values = entry[r["h"]]["restitution"]
        axis.plot([r["omega_h"]] * 2, [min(values), max(values)], "-", color="tab:orange",
                  lw=3, alpha=0.5)
    axis.plot([], [], "-", color="tab:orange", lw=3, alpha=0.5, label="over entry depths")
    axis.set_xlabel("omega h")
    axis.set_ylabel("restitution")
    axis.set_title("restitution (h = 1e-8, 1e-7, 1e-6, 1e-5 left to right)")
    axis.legend(fontsize=8)
    axis = axes[1][1]
    for h in sorted(entry, reverse=True):
        color, dash = STYLES.get(h, ("k", "-"))
        axis.plot(entry[h]["fraction"], entry[h]["restitution"], dash, color=color,
                  label=f"h = {h:g}")
    axis.set_xlabel("entry depth / (h v)")
    axis.set_ylabel("restitution")
    axis.set_title("restitution against where the last free step lands")
    axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "fig6.png"), dpi=90)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "docs/img/drumwright"
    fig4(directory)
    fig6(directory)


if __name__ == "__main__":
    main()
