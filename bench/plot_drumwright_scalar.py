#!/usr/bin/python3
"""Plots bench/drumwright_scalar_bench's CSVs: Drumwright's Sec. 3 (seed 003), Figs. 1-3.

Reads DIR/fig1.csv, fig2.csv, fig3.csv and DIR/radii.csv and writes into DIR:
  fig1.png  explicit Euler, h = 1e-5, k = 1e6, m = 1: x(t) for b = 1, 10 and 2e5 against the exact
            solution with the envelopes rho^n; b = 2.1e5 as |x| per step on a log scale against
            rho^n (the growing eigenvalue -1.09995 flips the sign every step);
  fig2.png  semi-implicit Euler, h = 1e-3, b = 1, m = 1: k = 1e6 over its first 50 ms against the
            exact curve (omega h = 1: the damping rate is right, the frequency is not) and over 2 s
            with rho^n and the exact envelope e^{-b t/(2m)}; k = 1e7 as |x| per step against 7.864^n;
  fig3.png  implicit Euler, k = 1e6, m = 1, b = 0: h = 1e-5 (blue) and h = 1e-2 (red, dashed)
            against the undamped exact cos(1000 t), with the envelope (1 + h^2 k/m)^{-n/2}.

Usage: /usr/bin/python3 bench/plot_drumwright_scalar.py DIR
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


def read_runs(path):
    """{(h, b, k): {column: [values]}} from one figure's CSV."""
    runs = defaultdict(lambda: defaultdict(list))
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            key = (float(row["h"]), float(row["b"]), float(row["k"]))
            for name in ("step", "t", "x", "v", "x_exact", "v_exact"):
                runs[key][name].append(float(row[name]))
    return runs


def read_radii(path):
    """{(integrator, h, b, k): rho} from radii.csv."""
    radii = {}
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            key = (row["integrator"], float(row["h"]), float(row["b"]), float(row["k"]))
            radii[key] = float(row["rho"])
    return radii


def exact_underdamped(t, m, b, k, x0=1.0, v0=0.0):
    """The exact x(t) of m x'' + b x' + k x = 0 for b^2 < 4 m k (the plots' fine reference)."""
    sigma = b / (2.0 * m)
    omega = math.sqrt(k / m - sigma * sigma)
    return math.exp(-sigma * t) * (x0 * math.cos(omega * t)
                                   + (v0 + sigma * x0) / omega * math.sin(omega * t))


def envelope(ax, t, steps, rho, **style):
    """Draws +-rho^n over the run."""
    upper = [rho ** n for n in steps]
    ax.plot(t, upper, **style)
    style.pop("label", None)
    ax.plot(t, [-u for u in upper], **style)


def fig1(directory, radii):
    runs = read_runs(os.path.join(directory, "fig1.csv"))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, b, name in zip((axes[0][0], axes[0][1], axes[1][0]), (1.0, 10.0, 2e5),
                           ("1", "10", "2e5")):
        run = runs[(1e-5, b, 1e6)]
        rho = radii[("explicit", 1e-5, b, 1e6)]
        ax.plot(run["t"], run["x"], color="tab:blue", lw=0.6, label="explicit Euler")
        ax.plot(run["t"], run["x_exact"], color="black", lw=0.6, ls="--", label="exact")
        envelope(ax, run["t"], run["step"], rho, color="tab:red", lw=1.0, ls=":",
                 label="$\\pm\\rho^n$, $\\rho$ = %.7f" % rho)
        ax.set_title("b = %s: rho(A) = %.7f" % (name, rho))
        ax.set_xlabel("t [s]")
        ax.set_ylabel("x")
        ax.legend(loc="upper left", fontsize=8)
    ax = axes[1][1]
    run = runs[(1e-5, 2.1e5, 1e6)]
    rho = radii[("explicit", 1e-5, 2.1e5, 1e6)]
    ax.semilogy(run["step"], [abs(x) for x in run["x"]], color="tab:blue", marker=".", ms=3,
                lw=0.6, label="|x|, explicit Euler")
    ax.semilogy(run["step"], [abs(x) for x in run["x_exact"]], color="black", ls="--", lw=0.8,
                label="|x|, exact")
    last = run["step"][-1]
    scale = abs(run["x"][-1]) / rho ** last
    ax.semilogy(run["step"], [scale * rho ** n for n in run["step"]], color="tab:red", ls=":",
                label="$\\propto\\rho^n$, $\\rho$ = %.5f" % rho)
    ax.set_title("b = 2.1e5: rho(A) = %.5f (eigenvalue < -1)" % rho)
    ax.set_xlabel("step n (h = 1e-5 s)")
    ax.set_ylabel("|x|")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Fig. 1: explicit Euler, f = 0, h = 1e-5, m = 1, k = 1e6, x0 = 1, v0 = 0: "
                 "b = 1 grows, b = 10 keeps, b = 2e5 decays, b = 2.1e5 blows up")
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "fig1.png"), dpi=110)
    plt.close(fig)


def fig2(directory, radii):
    runs = read_runs(os.path.join(directory, "fig2.csv"))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    run = runs[(1e-3, 1.0, 1e6)]
    rho = radii[("semi-implicit", 1e-3, 1.0, 1e6)]
    window = [i for i, t in enumerate(run["t"]) if t <= 0.05 + 1e-12]
    fine = [i * 0.05 / 2000 for i in range(2001)]
    ax = axes[0]
    ax.plot([run["t"][i] for i in window], [run["x"][i] for i in window], color="tab:blue",
            marker="o", ms=3, lw=0.8, label="semi-implicit Euler")
    ax.plot(fine, [exact_underdamped(t, 1.0, 1.0, 1e6) for t in fine], color="black", lw=0.6,
            ls="--", label="exact")
    ax.set_title("k = 1e6, first 50 ms\n(omega h = 1: right damping, wrong frequency)")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("x")
    ax.legend(loc="upper right", fontsize=8)
    ax = axes[1]
    ax.plot(run["t"], run["x"], color="tab:blue", lw=0.4, label="semi-implicit Euler")
    envelope(ax, run["t"], run["step"], rho, color="tab:red", lw=1.2, ls=":",
             label="$\\pm\\rho^n$, $\\rho$ = %.7f" % rho)
    ax.plot(run["t"], [math.exp(-0.5 * t) for t in run["t"]], color="black", lw=0.8, ls="--",
            label="exact envelope $e^{-bt/2m}$")
    ax.set_title("k = 1e6: rho(A) = %.7f\n(stable, decays at the exact rate)" % rho)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("x")
    ax.legend(loc="upper right", fontsize=8)
    ax = axes[2]
    run = runs[(1e-3, 1.0, 1e7)]
    rho = radii[("semi-implicit", 1e-3, 1.0, 1e7)]
    ax.semilogy(run["step"], [abs(x) for x in run["x"]], color="tab:blue", marker="o", ms=3,
                lw=0.8, label="|x|, semi-implicit Euler")
    ax.semilogy(run["step"], [rho ** n for n in run["step"]], color="tab:red", ls=":",
                label="$\\rho^n$, $\\rho$ = %.4f" % rho)
    ax.set_title("k = 1e7: rho(A) = %.4f\n(unstable; stable iff k < 4.002e6)" % rho)
    ax.set_xlabel("step n (h = 1e-3 s)")
    ax.set_ylabel("|x|")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Fig. 2: semi-implicit Euler, f = 0, h = 1e-3, m = 1, b = 1, x0 = 1, v0 = 0: "
                 "stable iff h^2 k/m < 2(2 + h b/m)")
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "fig2.png"), dpi=110)
    plt.close(fig)


def fig3(directory, radii):
    runs = read_runs(os.path.join(directory, "fig3.csv"))
    fig, ax = plt.subplots(figsize=(11, 6))
    small = runs[(1e-5, 0.0, 1e6)]
    large = runs[(1e-2, 0.0, 1e6)]
    rho_small = radii[("implicit", 1e-5, 0.0, 1e6)]
    rho_large = radii[("implicit", 1e-2, 0.0, 1e6)]
    ax.plot(small["t"], small["x_exact"], color="0.6", lw=0.6, label="exact (b = 0: no decay)")
    ax.plot(small["t"], small["x"], color="tab:blue", lw=0.8,
            label="implicit Euler, h = 1e-5 (rho = %.5f)" % rho_small)
    envelope(ax, small["t"], small["step"], rho_small, color="tab:blue", lw=1.0, ls=":",
             label="$\\pm\\rho^n$, h = 1e-5")
    ax.plot(large["t"], large["x"], color="tab:red", lw=1.2, ls="--", marker="o", ms=4,
            label="implicit Euler, h = 1e-2 (rho = %.4f)" % rho_large)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("x")
    ax.set_ylim(-1.6, 1.1)
    ax.legend(loc="lower center", ncol=2, fontsize=8)
    ax.set_title("Fig. 3: implicit Euler, f = 0, k = 1e6, m = 1, b = 0, x0 = 1, v0 = 0\n"
                 "stable but dissipative: amplitude ratio 1/sqrt(1 + h^2 k/m) a step")
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "fig3.png"), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    radii = read_radii(os.path.join(directory, "radii.csv"))
    fig1(directory, radii)
    fig2(directory, radii)
    fig3(directory, radii)


if __name__ == "__main__":
    main()
