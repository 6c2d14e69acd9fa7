#!/usr/bin/python3
"""Plots bench/drumwright_incline_bench's CSV: Drumwright's Fig. 9 (seed 003, Sec. 6.4).

Left: the distance the box slides in 1 s against mu, beside Coulomb's for the same stepping.
Right: the largest summed normal force over its spring law m g cos15, against mu (zeta h = 1) and
against zeta h at mu 0.125 (the normal-force inflation while the friction cone binds).

Usage: /usr/bin/python3 bench/plot_drumwright_incline.py CSV PNG
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    mu_rows = [r for r in rows if r["sweep"] == "mu"]
    zeta_rows = [r for r in rows if r["sweep"] == "zeta"]
    mu = [float(r["mu"]) for r in mu_rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(mu, [float(r["distance"]) for r in mu_rows], "o-", label="first-order step")
    left.plot(mu, [float(r["coulomb"]) for r in mu_rows], "k--", label="Coulomb, same stepping")
    left.set_xlabel("mu")
    left.set_ylabel("distance after 1 s (m)")
    left.set_title("box on a 15 deg incline, h = 0.01 s")
    left.legend()
    ratio = [float(r["max_normal"]) / float(r["spring_law"]) for r in mu_rows]
    right.plot(mu, ratio, "o-", label="against mu (zeta h = 1)")
    right.set_xlabel("mu")
    right.set_ylabel("largest normal force / m g cos15")
    top = right.twiny()
    top.semilogx([float(r["zeta_h"]) for r in zeta_rows],
                 [float(r["max_normal"]) / float(r["spring_law"]) for r in zeta_rows], "s-",
                 color="tab:red", label="against zeta h (mu 0.125)")
    top.set_xlabel("zeta h", color="tab:red")
    right.set_yscale("log")
    lines = right.get_legend_handles_labels()
    more = top.get_legend_handles_labels()
    right.legend(lines[0] + more[0], lines[1] + more[1], loc="upper right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
