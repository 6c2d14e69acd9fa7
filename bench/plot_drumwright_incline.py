#!/usr/bin/python3
"""Plots bench/drumwright_incline_bench's CSV: Drumwright's Fig. 9 (seed 003, Sec. 6.4).

Left: the distance the box slides in 1 s against mu, beside Coulomb's for the same stepping, at
the paper's zeta = 1 / h and at zeta h = 1e12.
Right: the largest summed normal force over its spring law m g cos15, against mu (both zetas)
and against zeta h at mu 0.125 (the normal-force inflation while the friction cone binds).

Usage: /usr/bin/python3 bench/plot_drumwright_incline.py CSV PNG
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def column(rows, key):
    return [float(r[key]) for r in rows]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    paper = [r for r in rows if r["sweep"] == "mu_paper"]
    large = [r for r in rows if r["sweep"] == "mu_large_zeta"]
    zeta_rows = [r for r in rows if r["sweep"] == "zeta"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(column(paper, "mu"), column(paper, "distance"), "o-",
              label="first-order step, zeta = 1/h (paper)")
    left.plot(column(large, "mu"), column(large, "distance"), "s",
              label="first-order step, zeta h = 1e12")
    left.plot(column(large, "mu"), column(large, "coulomb"), "k--",
              label="Coulomb, same stepping")
    left.set_xlabel("mu")
    left.set_ylabel("distance after 1 s (m)")
    left.set_title("box on a 15 deg incline, h = 0.01 s")
    left.legend()
    for subset, style, label in ((paper, "o-", "against mu, zeta = 1/h"),
                                 (large, "s-", "against mu, zeta h = 1e12")):
        ratio = [m / s for m, s in zip(column(subset, "max_normal"),
                                       column(subset, "spring_law"))]
        right.plot(column(subset, "mu"), ratio, style, label=label)
    right.set_xlabel("mu")
    right.set_ylabel("largest normal force / m g cos15")
    top = right.twiny()
    top.semilogx(column(zeta_rows, "zeta_h"),
                 [m / s for m, s in zip(column(zeta_rows, "max_normal"),
                                        column(zeta_rows, "spring_law"))],
                 "^-", color="tab:red", label="against zeta h (mu 0.125)")
    top.set_xlabel("zeta h", color="tab:red")
    right.set_yscale("log")
    lines = right.get_legend_handles_labels()
    more = top.get_legend_handles_labels()
    right.legend(lines[0] + more[0], lines[1] + more[1], loc="upper right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
