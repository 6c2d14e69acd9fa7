#!/usr/bin/python3
"""Plots bench/drumwright_stack_bench's CSV: Drumwright's Fig. 10 (seed 003, Sec. 6.5).

Left: the wall time per simulated second (500 steps of 10 ms) against the number of spheres, for
stacks dropped from mid-air with the linearized Hertz row and the paper's, and stacks started at
Hertz's static depths, with slopes N^1 and N^3 for reference.
Right: whether the stack stands: the highest rise of a centre above its start and the final
depths' largest error against Hertz's static depths.

Usage: /usr/bin/python3 bench/plot_drumwright_stack.py CSV PNG
(matplotlib from Debian's python3-matplotlib.)
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = {"linearized": "dropped, linearized Hertz row",
             "paper": "dropped, paper's Hertz row",
             "settled": "from Hertz's static depths, linearized"}
    for name, marker in (("linearized", "o"), ("paper", "s"), ("settled", "^")):
        subset = [r for r in rows if r["case"] == name]
        spheres = [int(r["spheres"]) for r in subset]
        left.loglog(spheres, [float(r["wall_per_second"]) for r in subset], marker + "-",
                    label=names[name])
        right.semilogy(spheres, [max(float(r["max_rise"]), 1e-6) for r in subset], marker + "-",
                       label=name + ": highest rise (m)")
        right.semilogy(spheres, [max(float(r["max_depth_error"]), 1e-12) for r in subset],
                       marker + ":",
                       label=name + ": depth error vs Hertz")
    first = [r for r in rows if r["case"] == "settled"][0]
    n0, t0 = int(first["spheres"]), float(first["wall_per_second"])
    reference = [1, 100]
    left.loglog(reference, [t0 * (n / n0) for n in reference], "k:", label="N^1")
    left.loglog(reference, [t0 * (n / n0) ** 3 for n in reference], "k-.", label="N^3")
    left.set_xlabel("spheres")
    left.set_ylabel("wall time per simulated second (s)")
    left.set_title("sphere stack, h = 10 ms, 500 steps, dense step")
    left.legend()
    right.set_xscale("log")
    right.set_xlabel("spheres")
    right.set_ylabel("after 5 s")
    right.set_title("does it stand? (1e-6 / 1e-12 = floor of the plot)")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
