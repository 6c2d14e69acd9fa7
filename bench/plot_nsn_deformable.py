#!/usr/bin/python3
"""Plots bench/nsn_deformable_experiments' CSVs (Macklin et al. 2019, seed 002; digest
seed-002-nsn.md 9.2 item 7).

fig13.png: the bar pulled to twice its length (fig13.csv): its volume over its rest volume
against its length over its rest length, linear corotated against stable Neo-Hookean (E 1e5 Pa,
nu 0.45), with the line of an incompressible material (volume ratio 1).

fig12.png: two steps of the same pull (targets 1.5x and 1.95x the length; fig12.csv): the
weighted row residual (top) and the momentum residual (bottom) at every Newton iterate, each
material with (dashed) and without (solid) the geometric stiffness (the paper's stretched sheet:
without it, iterates overshoot and oscillate at large strain).

Usage: /usr/bin/python3 bench/plot_nsn_deformable.py DIR OUTDIR (from Debian's
python3-matplotlib).
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fig13(path, out_dir):
    series = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            s = series.setdefault(row["material"], ([], []))
            s[0].append(float(row["stretch"]))
            s[1].append(float(row["volume_ratio"]))
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = {"corotated": "linear corotated", "neohookean": "stable Neo-Hookean"}
    for material, (stretch, volume) in series.items():
        ax.plot(stretch, volume, label=labels.get(material, material))
    ax.axhline(1.0, color="gray", linestyle=":", label="volume kept")
    ax.set_xlabel("length / rest length")
    ax.set_ylabel("volume / rest volume")
    ax.set_title("Fig. 13: a bar pulled to twice its length (E 1e5 Pa, nu 0.45)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "fig13.png"), dpi=100)


def fig12(path, out_dir):
    runs = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["step"]), row["material"])
            r = runs.setdefault(key, ([], [], []))
            r[0].append(int(row["iteration"]))
            r[1].append(max(float(row["row_residual"]), 1e-18))
            r[2].append(max(float(row["momentum_residual"]), 1e-18))
    steps = sorted({k[0] for k in runs})
    fig, axes = plt.subplots(2, len(steps), figsize=(5 * len(steps), 6), squeeze=False)
    for c, step in enumerate(steps):
        for (s, material), (it, row, momentum) in sorted(runs.items()):
            if s != step:
                continue
            style = "--" if material.endswith("+gs") else "-"
            axes[0][c].semilogy(it, row, style, label=material)
            axes[1][c].semilogy(it, momentum, style, label=material)
        axes[0][c].set_title(f"step {step}")
        axes[0][c].set_ylabel("row residual (weighted), m/s")
        axes[1][c].set_ylabel("momentum residual |g|, N s")
        axes[1][c].set_xlabel("Newton iterate")
        for r in range(2):
            axes[r][c].grid(alpha=0.3)
            axes[r][c].legend(fontsize=7)
    fig.suptitle("Fig. 12: residuals per Newton iterate of the pulled bar, with (dashed) and "
                 "without geometric stiffness")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "fig12.png"), dpi=100)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_nsn_deformable.py DIR OUTDIR")
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if os.path.exists(os.path.join(data, "fig13.csv")):
        fig13(os.path.join(data, "fig13.csv"), out)
    if os.path.exists(os.path.join(data, "fig12.csv")):
        fig12(os.path.join(data, "fig12.csv"), out)


if __name__ == "__main__":
    main()
