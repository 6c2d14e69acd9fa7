#!/usr/bin/python3
"""Plots bench/icf_experiments' CSV: the Irrotational Contact Fields paper's Sec. XI-A and XI-B.

Writes into DIR:
  conveyor.png        slip speed, vertical velocity and normal force (over m g) of the box on the
                      oscillating belt against time, one line per solver (XI-A, the paper's Fig. 3);
  falling_sphere.png  the sphere's velocity and rolling speed omega r, its height and the normal
                      force against time, with 5/7 U0 dashed (XI-B, the paper's Fig. 6).
Each figure's title states the paper's finding beside which the curves stand.

Usage: /usr/bin/python3 bench/plot_icf.py FILE.csv DIR
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"icf-lagged": "tab:blue", "icf-similar": "tab:orange", "sap": "tab:green"}


def read(path):
    """{experiment: {solver: {column: [values]}}} from the CSV."""
    series = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            columns = series[row["experiment"]][row["solver"]]
            for key, value in row.items():
                if key not in ("experiment", "solver"):
                    columns[key].append(float(value))
    return series


def conveyor(runs, out):
    figure, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for solver, c in runs.items():
        keep = [i for i, t in enumerate(c["t"]) if t >= 1.0]  # after the first second
        t = [c["t"][i] for i in keep]
        axes[0].plot(t, [c["slip"][i] for i in keep], color=COLORS[solver], label=solver)
        axes[1].plot(t, [1e3 * c["vz"][i] for i in keep], color=COLORS[solver], label=solver)
        axes[2].plot(t, [c["normal_over_mg"][i] for i in keep], color=COLORS[solver],
                     label=solver)
    axes[0].set_ylabel("slip speed, m/s")
    axes[1].set_ylabel("vertical velocity, mm/s")
    axes[2].set_ylabel("normal force / m g")
    axes[2].set_xlabel("t, s")
    axes[0].legend()
    figure.suptitle("Oscillating conveyor (XI-A), dt 0.01 s, k 1e7 N/m, mu 0.7.\n"
                    "Paper: Lagged has no vertical motion and its normal force balances the "
                    "weight;\nSAP and Similar glide while slipping, with normal-force spikes at "
                    "the return to stiction.", fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


def falling_sphere(runs, out):
    figure, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    rolling = 2.0 * 5 / 7
    for solver, c in runs.items():
        t = c["t"]
        color = COLORS[solver]
        axes[0].plot(t, c["vx"], color=color, label=solver + " v")
        omega_r = [v - s for v, s in zip(c["vx"], c["slip"])]
        axes[0].plot(t, omega_r, color=color, linestyle=":", label=solver + " omega r")
        axes[1].plot(t, [1e3 * (z - 0.025) for z in c["height"]], color=color, label=solver)
        axes[2].plot(t, [max(f, 1e-2) for f in c["normal_over_mg"]], color=color, label=solver)
    axes[0].axhline(rolling, color="k", linestyle="--", linewidth=0.8,
                    label="5/7 U0 = %.4f m/s" % rolling)
    axes[0].set_ylabel("m/s")
    axes[1].set_ylabel("height above contact, mm")
    axes[1].set_ylim(-0.05, 2.0)
    axes[2].set_ylabel("normal force / m g")
    axes[2].set_yscale("log")
    axes[2].set_ylim(0.5, 100)
    axes[2].set_xlim(0.08, 0.2)  # the impact and the slide; it rolls on unchanged to 0.4 s
    axes[2].set_xlabel("t, s")
    axes[0].legend(fontsize=8, ncol=2)
    figure.suptitle("Falling sphere (XI-B), dt 2e-3 s, U0 = 2 m/s, k 1e7 N/m, mu 0.5.\n"
                    "Paper: it slides, then rolls at 5/7 U0; SAP and Similar touch down earlier "
                    "(action at a distance),\nLagged brings the normal velocity to zero at once.",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    series = read(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    conveyor(series["conveyor"], os.path.join(sys.argv[2], "conveyor.png"))
    falling_sphere(series["falling_sphere"], os.path.join(sys.argv[2], "falling_sphere.png"))
    for solver, c in series["falling_sphere"].items():
        touchdown = next(t for t, v in zip(c["t"], c["vx"]) if v < 2.0)
        print("%s: rolls at %.6f m/s (5/7 U0 = %.6f), first friction at t = %.3f s"
              % (solver, c["vx"][-1], 2.0 * 5 / 7, touchdown))
    for solver, c in series["conveyor"].items():
        late = [i for i, t in enumerate(c["t"]) if t >= 1.0]
        print("%s: conveyor max |v_z| %.3g m/s, normal force %.4f..%.4f m g, max slip %.3f m/s"
              % (solver, max(abs(c["vz"][i]) for i in late),
                 min(c["normal_over_mg"][i] for i in late),
                 max(c["normal_over_mg"][i] for i in late), max(abs(c["slip"][i]) for i in late)))


if __name__ == "__main__":
    main()
