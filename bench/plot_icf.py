#!/usr/bin/python3
"""Plots bench/icf_experiments' CSVs: the Irrotational Contact Fields paper's Secs. XI and XII-A.

Writes into DIR, for each experiment found in the CSVs:
  conveyor.png        slip speed, vertical velocity and normal force (over m g) of the box on the
                      oscillating belt against time, one line per solver (XI-A, the paper's Fig. 3);
  falling_sphere.png  the sphere's velocity and rolling speed omega r, its height and the normal
                      force against time, with 5/7 U0 dashed (XI-B, the paper's Fig. 6);
  rod.png             (rod and rod_summary) the sliding rod's contact force without and with
                      dissipation, a close-up of the jam, and Lagged's peak force against dt with
                      the paper's 1e-3 s (XI-C, Figs. 9-13);
  convergence.png     e_q(dt) per case and solver, log-log, with the fitted slopes (Figs. 4, 7, 13);
  clutter.png         Newton iterations and cond(H) against time (XII-A, Fig. 15);
  clutter_stiffness.png  mean steady penetration, iterations and cond(H) against k (Figs. 18-19).
Each figure's title states the paper's finding beside which the curves stand; the numbers it
prints go to BENCHMARKS.md.

Usage: /usr/bin/python3 bench/plot_icf.py FILE.csv [FILE.csv ...] DIR
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

COLORS = {"icf-lagged": "tab:blue", "icf-similar": "tab:orange", "sap": "tab:green",
          "icf-lagged-regularized": "tab:purple"}


def read(path, series):
    """Adds the CSV's rows to {experiment: {key: {column: [values]}}}: the key is the solver, or
    (case, solver) for convergence and (solver, dissipation) for rod and rod_summary."""
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            experiment = row["experiment"]
            if experiment == "convergence":
                key = (row["case"], row["solver"])
            elif experiment in ("rod", "rod_summary"):
                key = (row["solver"], int(row["dissipation"]))
            else:
                key = row["solver"]
            columns = series[experiment][key]
            for name, value in row.items():
                if name not in ("experiment", "solver", "case", "dissipation"):
                    columns[name].append(float(value))
    return series


def slope(x, y):
    """The least-squares slope of log y against log x."""
    lx = [math.log(v) for v in x]
    ly = [math.log(v) for v in y]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return (sum((a - mx) * (b - my) for a, b in zip(lx, ly))
            / sum((a - mx) ** 2 for a in lx))


def finish(figure, title, out):
    """The figure's title (the setup, and the paper's finding beside it), laid out and written."""
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


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
    finish(figure, "Oscillating conveyor (XI-A), dt 0.01 s, k 1e7 N/m, mu 0.7.\n"
           "Paper: Lagged has no vertical motion and its normal force balances the "
           "weight;\nSAP and Similar glide while slipping, with normal-force spikes at "
           "the return to stiction.", out)


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
    finish(figure, "Falling sphere (XI-B), dt 2e-3 s, U0 = 2 m/s, k 1e7 N/m, mu 0.5.\n"
           "Paper: it slides, then rolls at 5/7 U0; SAP and Similar touch down earlier "
           "(action at a distance),\nLagged brings the normal velocity to zero at once.", out)


def rod(runs, summary, out):
    figure, axes = plt.subplots(2, 2, figsize=(12, 9))
    for dissipation, ax in ((0, axes[0][0]), (1, axes[0][1])):
        for (solver, dis), c in runs.items():
            if dis != dissipation:
                continue
            t = [1e3 * v for v in c["t"]]
            ax.plot(t, c["normal_force"], color=COLORS[solver], label=solver, linewidth=0.8)
        ax.set_yscale("symlog", linthresh=10)
        ax.set_xlim(0, 25 if dissipation == 0 else 50)  # SAP's late impact with dissipation
        ax.set_xlabel("t, ms")
        ax.set_ylabel("normal force, N")
        ax.set_title("dt 1e-7 s, " + ("no dissipation" if dissipation == 0 else
                                       "d 0.2 s/m (SAP tau_d 4e-6 s)"), fontsize=10)
        ax.legend(fontsize=8)
    ax = axes[1][0]
    for (solver, dis), c in runs.items():
        if dis != 0:
            continue
        keep = [i for i, t in enumerate(c["t"]) if 0.0171 <= t <= 0.0177]
        ax.plot([1e3 * c["t"][i] for i in keep], [c["slip"][i] for i in keep],
                color=COLORS[solver], label=solver + " slip")
    ax.axhline(0, color="k", linewidth=0.5)
    ax.set_xlabel("t, ms")
    ax.set_ylabel("slip of the lower end, m/s")
    ax.set_title("the jam, no dissipation: slip to zero, then the jump", fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[1][1]
    for (solver, dis), c in summary.items():
        if dis != 0:
            continue
        similar = solver == "icf-similar"  # on SAP's curve: drawn on top, smaller
        ax.plot(c["dt"], c["peak_force"], "s--" if similar else "o-", color=COLORS[solver],
                markersize=4 if similar else 6, zorder=3 if similar else 2, label=solver)
    ax.axvline(1e-3, color="k", linestyle="--", linewidth=0.8, label="paper: Lagged misses above")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("dt, s")
    ax.set_ylabel("peak normal force, N")
    ax.set_title("peak force against dt (no dissipation); weight ~3 N", fontsize=10)
    ax.legend(fontsize=8)
    finish(figure, "Sliding rod (XI-C), mu 2.3, 30 deg, U0 10 m/s, k 1e7 N/m.\n"
           "Paper: all three jam and jump alike without dissipation; with it Similar "
           "impacts earlier and SAP later, Similar's force\noscillates faster (k_eff = "
           "k (1 + mu |v_t| d), 5.6x); Lagged misses the impact for dt > 1e-3 s and is "
           "first order below.", out)


CASES = (("conveyor", "Conveyor (XI-A, Fig. 4)"),
         ("falling_sphere", "Falling sphere (XI-B, Fig. 7)"),
         ("rod", "Rod, no dissipation (XI-C, Fig. 13 left)"),
         ("rod_dissipative", "Rod, d 0.2 s/m (Fig. 13 right)"))


def convergence(runs, out):
    figure, axes = plt.subplots(2, 2, figsize=(11, 9))
    for (case, title), ax in zip(CASES, [a for row in axes for a in row]):
        for (c, solver), values in runs.items():
            if c != case:
                continue
            ax.plot(values["dt"], values["error"], "o-", color=COLORS[solver],
                    label="%s (slope %.2f)" % (solver, slope(values["dt"], values["error"])))
            if solver == "icf-lagged":  # first order through Lagged's smallest dt
                dt0, e0 = min(zip(values["dt"], values["error"]))
                ax.plot([dt0, max(values["dt"])], [e0, e0 * max(values["dt"]) / dt0], "k--",
                        linewidth=0.8, label="first order")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dt, s")
        ax.set_ylabel("e_q, m (rod: m and rad)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    finish(figure, "Convergence against Lagged at dt / 10 (the smallest dt of each study).\n"
           "Paper: Lagged first order everywhere (rod: below 1e-3 s); Similar first order "
           "with larger errors; SAP plateaus (tau_d mu |v_t|);\nrod without dissipation: "
           "SAP and Similar indistinguishable, Lagged largest at the largest dt.", out)


def moving_mean(values, window):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def clutter(runs, out):
    figure, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for solver, c in runs.items():
        axes[0].plot(c["t"], moving_mean(c["iterations"], 25), color=COLORS[solver], label=solver)
        keep = [i for i, v in enumerate(c["condition"]) if v > 0]
        axes[1].plot([c["t"][i] for i in keep], [c["condition"][i] for i in keep],
                     color=COLORS[solver], label=solver, linewidth=0.7)
    axes[0].set_ylabel("Newton iterations (50 ms mean)")
    axes[1].set_ylabel("cond(H), every 5th step")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("t, s")
    axes[0].legend(fontsize=8)
    finish(figure, "Clutter (XII-A), 40 objects, dt 2e-3 s, k 1e7 N/m, d 10 s/m, mu 1.\n"
           "Paper (Fig. 15): transient until ~2 s; Lagged and Similar take more "
           "iterations and have higher cond(H) in it, SAP after it;\nregularized Lagged "
           "(26) lowers both in the transient.", out)


def clutter_stiffness(runs, out):
    figure, axes = plt.subplots(1, 3, figsize=(15, 5))
    for solver, c in runs.items():
        ok = [i for i, f in enumerate(c["failed_step"]) if f < 0]
        k = [c["stiffness"][i] for i in ok]
        axes[0].plot(k, [c["mean_penetration"][i] for i in ok], "o-", color=COLORS[solver],
                     label=solver)
        axes[1].plot(c["stiffness"], c["mean_iterations"], "o-", color=COLORS[solver],
                     label=solver)
        axes[2].plot(c["stiffness"], c["mean_condition"], "o-", color=COLORS[solver],
                     label=solver)
        for i, f in enumerate(c["failed_step"]):
            if f >= 0:
                axes[1].plot(c["stiffness"][i], c["mean_iterations"][i], "x", color="k",
                             markersize=10)
    ks = [10.0 ** e for e in range(5, 14)]
    axes[0].plot(ks, [1.0 * 9.81 / k for k in ks], "k--", linewidth=0.8, label="m g / k, 1 kg")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("k, N/m")
    axes[0].set_yscale("log")
    axes[2].set_yscale("log")
    axes[0].set_ylabel("mean penetration, last 1.25 s, m")
    axes[1].set_ylabel("mean Newton iterations (x: a step failed; cap 100)")
    axes[2].set_ylabel("mean cond(H)")
    axes[0].legend(fontsize=8)
    finish(figure, "Clutter against stiffness (XII-A, Figs. 18-19), dt 5e-3 s, 3 s.\n"
           "Paper: penetration falls with k over eight orders; the solver converges up "
           "to 1e12 N/m and fails from round-off at 1e13; iterations within 20%.", out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    series = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sys.argv[1:-1]:
        read(path, series)
    out = sys.argv[-1]
    os.makedirs(out, exist_ok=True)
    if "conveyor" in series:
        conveyor(series["conveyor"], os.path.join(out, "conveyor.png"))
        for solver, c in series["conveyor"].items():
            late = [i for i, t in enumerate(c["t"]) if t >= 1.0]
            print("%s: conveyor max |v_z| %.3g m/s, normal force %.4f..%.4f m g, max slip %.3f m/s"
                  % (solver, max(abs(c["vz"][i]) for i in late),
                     min(c["normal_over_mg"][i] for i in late),
                     max(c["normal_over_mg"][i] for i in late),
                     max(abs(c["slip"][i]) for i in late)))
    if "falling_sphere" in series:
        falling_sphere(series["falling_sphere"], os.path.join(out, "falling_sphere.png"))
        for solver, c in series["falling_sphere"].items():
            touchdown = next(t for t, v in zip(c["t"], c["vx"]) if v < 2.0)
            print("%s: rolls at %.6f m/s (5/7 U0 = %.6f), first friction at t = %.3f s"
                  % (solver, c["vx"][-1], 2.0 * 5 / 7, touchdown))
    if "rod" in series and "rod_summary" in series:
        rod(series["rod"], series["rod_summary"], os.path.join(out, "rod.png"))
    if "rod_summary" in series:
        for (solver, dissipation), c in sorted(series["rod_summary"].items()):
            for i, dt in enumerate(c["dt"]):
                print("rod %s d%d dt %g: impact %s at %.4f ms, peak %.0f N, stiction %.1f us "
                      "(%.1f us below 10 v_s), omega^2 %.4g, slip %.3f"
                      % (solver, dissipation, dt,
                         "jam+jump" if c["jumped"][i] else "none", 1e3 * c["impact_time"][i],
                         c["peak_force"][i], 1e6 * c["stiction_time"][i], 1e6 * c["slow_time"][i],
                         c["omega_squared"][i], c["mean_slip"][i]))
    if "convergence" in series:
        convergence(series["convergence"], os.path.join(out, "convergence.png"))
        for (case, solver), c in series["convergence"].items():
            print("convergence %s %s: slope %.3f, e_q %s"
                  % (case, solver, slope(c["dt"], c["error"]),
                     " ".join("%.3g" % e for e in c["error"])))
    if "clutter" in series:
        clutter(series["clutter"], os.path.join(out, "clutter.png"))
        for solver, c in series["clutter"].items():
            for name, lo, hi in (("transient", 0, 2.0), ("settled", 2.0, 9.0)):
                rows = [i for i, t in enumerate(c["t"]) if lo < t <= hi]
                cond = [c["condition"][i] for i in rows if c["condition"][i] > 0]
                print("clutter %s %s: iterations mean %.2f max %d, cond mean %.3g max %.3g"
                      % (solver, name, sum(c["iterations"][i] for i in rows) / len(rows),
                         max(c["iterations"][i] for i in rows), sum(cond) / len(cond), max(cond)))
            print("clutter %s: rebuild residual max %.2g" % (solver, max(c["relative_residual"])))
    if "clutter_stiffness" in series:
        clutter_stiffness(series["clutter_stiffness"],
                          os.path.join(out, "clutter_stiffness.png"))
        for solver, c in series["clutter_stiffness"].items():
            for i, k in enumerate(c["stiffness"]):
                print("clutter_stiffness %s k %.0e: failed at %d, capped %d, iterations %.2f "
                      "(max %d), cond %.3g, penetration %.3g m"
                      % (solver, k, c["failed_step"][i], c["capped_steps"][i],
                         c["mean_iterations"][i], c["max_iterations"][i], c["mean_condition"][i],
                         c["mean_penetration"][i]))


if __name__ == "__main__":
    main()
