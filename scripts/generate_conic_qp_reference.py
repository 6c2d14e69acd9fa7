#!/usr/bin/python3
"""Writes CVXOPT's answers to small random conic QPs for tests/solver/conic_qp_test.cc.

    /usr/bin/python3 scripts/generate_conic_qp_reference.py > tests/solver/data/conic_qp_cvxopt.txt

Needs Debian's python3-cvxopt (1.3.0) and python3-numpy, for /usr/bin/python3 only; the test
reads the committed file and needs neither. Each problem is CVXOPT coneqp's standard form
    min 1/2 x^T P x + c^T x  s.t.  G x + s = h,  s in R+^l x Q^{m_1} x ... x Q^{m_k}
in three families, all feasible with P SPD:
  unilateral  Drumwright's QP (83)-(85): P = I, c = 0, rows (I + W S) lam >= r and lam >= 0;
  master      the shape of the master problem (181)-(189): contacts (n, r, s) and unilateral
              variables u, P = H SPD, rows A x >= q and x_u >= 0, one Q^3 block
              (mu x_n, x_r, x_s) per contact;
  general     random G, h = G x0 + s0 with s0 interior, orthant rows and cones of sizes 1-4.
Format, one problem after another, numbers with 17 significant digits, matrices row-major:
    problem NAME
    n N linear L soc K M_1 ... M_K
    P ...   c ...   G ...   h ...   (one line each, after the key)
    x ...   z ...   objective V
    end
"""
import sys

import numpy as np
from cvxopt import matrix, solvers


def spd(rng, n, low, high):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q @ np.diag(np.exp(rng.uniform(np.log(low), np.log(high), n))) @ q.T


def unilateral(rng, n):
    s_mat = spd(rng, n, 0.2, 2.0)  # S = G M^-1 G^T
    w = np.diag(rng.uniform(0.1, 3.0, n))  # W = h^2 K + h B
    a = np.eye(n) + w @ s_mat
    r = rng.uniform(-1.0, 1.0, n)
    g = np.vstack([-a, -np.eye(n)])
    h = np.concatenate([-r, np.zeros(n)])
    return np.eye(n), np.zeros(n), g, h, 2 * n, []


def master(rng, contacts, unilaterals):
    n = 3 * contacts + unilaterals
    p = spd(rng, n, 0.5, 20.0)
    c = rng.standard_normal(n)
    rows = contacts + unilaterals
    a = rng.uniform(-0.3, 0.3, (rows, n))
    # row i of A >= q on contact i's normal or on unilateral u_i, diagonally dominant: I + chi S
    for i in range(contacts):
        a[i, 3 * i] += 2.0
    for j in range(unilaterals):
        a[contacts + j, 3 * contacts + j] += 2.0
    q = rng.uniform(-0.5, 1.0, rows)
    g_rows = [-a]
    h_parts = [-q]
    if unilaterals:
        sel = np.zeros((unilaterals, n))
        for j in range(unilaterals):
            sel[j, 3 * contacts + j] = -1.0
        g_rows.append(sel)
        h_parts.append(np.zeros(unilaterals))
    for i in range(contacts):
        mu = rng.uniform(0.1, 1.0)
        block = np.zeros((3, n))
        block[0, 3 * i] = -mu
        block[1, 3 * i + 1] = -1.0
        block[2, 3 * i + 2] = -1.0
        g_rows.append(block)
        h_parts.append(np.zeros(3))
    return p, c, np.vstack(g_rows), np.concatenate(h_parts), rows + unilaterals, [3] * contacts


def general(rng, n, linear, cones):
    p = spd(rng, n, 0.1, 10.0)
    c = rng.standard_normal(n)
    rows = linear + sum(cones)
    g = rng.standard_normal((rows, n))
    x0 = rng.standard_normal(n)
    s0 = np.concatenate([rng.uniform(0.1, 1.0, linear)] + [
        np.concatenate([[1.0 + rng.uniform(0.0, 1.0)],
                        rng.standard_normal(m - 1) / (np.sqrt(m) + 1.0)]) for m in cones])
    return p, c, g, g @ x0 + s0, linear, cones


def line(key, values):
    return key + " " + " ".join("%.17g" % v for v in np.ravel(values)) + "\n"


def main():
    rng = np.random.default_rng(20260303)
    problems = [("unilateral_%d" % n, unilateral(rng, n)) for n in (1, 2, 3, 5, 8)]
    problems += [("master_%dc_%du" % (k, u), master(rng, k, u))
                 for k, u in ((1, 0), (2, 0), (2, 1), (3, 2), (4, 1))]
    problems += [("general_%d" % i, general(rng, n, l, cones))
                 for i, (n, l, cones) in enumerate(((3, 2, [3]), (4, 0, [3, 2]), (5, 3, [4, 1]),
                                                    (6, 4, [3, 3, 3]), (2, 1, [2])))]
    solvers.options.update(show_progress=False, abstol=1e-10, reltol=1e-10, feastol=1e-10,
                           maxiters=200)
    out = sys.stdout
    out.write("# CVXOPT coneqp answers; written by scripts/generate_conic_qp_reference.py\n")
    for name, (p, c, g, h, linear, cones) in problems:
        dims = {"l": linear, "q": list(cones), "s": []}
        sol = solvers.coneqp(matrix(p), matrix(c), matrix(g), matrix(h), dims)
        if sol["status"] != "optimal":
            raise SystemExit("%s: cvxopt status %s" % (name, sol["status"]))
        x = np.array(sol["x"]).ravel()
        z = np.array(sol["z"]).ravel()
        out.write("problem %s\n" % name)
        out.write("n %d linear %d soc %d %s\n" % (len(c), linear, len(cones),
                                                  " ".join(str(m) for m in cones)))
        for key, value in (("P", p), ("c", c), ("G", g), ("h", h), ("x", x), ("z", z)):
            out.write(line(key, value))
        out.write(line("objective", [sol["primal objective"]]))
        out.write("end\n")


if __name__ == "__main__":
    main()
