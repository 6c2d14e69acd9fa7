#!/usr/bin/env python3
"""Writes mesh_rocks.xml: 12 convex mesh "rocks" of 2562 vertices each dropped on a floor and on
each other, a mesh-heavy collision benchmark (issue 32: mesh-mesh and plane-mesh pairs).

Run from anywhere:

    python3 scenes/generate_mesh_rocks.py

Standard library only and deterministic: each rock is an icosphere (4 subdivisions of an
icosahedron: 2562 vertices) pushed onto a superellipsoid |x/a|^P + |y/b|^P + |z/c|^P = 1 with
per-rock semi-axes from random.Random(SEED); every vertex lies on that convex surface, so nearly
all of them are on the convex hull. Coordinates are rounded before they are written, so the same
script writes a byte-identical file. The generated file is committed; edit this script, not it.
"""

import math
import os
import random

SEED = 11
SUBDIVISIONS = 4  # 10 * 4^4 + 2 = 2562 vertices per rock
P = 3.0  # superellipsoid exponent: between an ellipsoid (2) and a box (infinity)
ROCKS = 12
DENSITY = 1000.0  # kg/m^3
FRICTION = 0.6
GRID = 3  # rocks per row of a layer
PITCH = 0.3  # m between rock centres in a layer (more than two largest semi-axes)
LAYER_GAP = 0.28  # m between layers


def icosphere(subdivisions):
    t = (1 + math.sqrt(5)) / 2
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [normalize(v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(subdivisions):
        midpoint = {}

        def mid(i, j):
            key = (min(i, j), max(i, j))
            if key not in midpoint:
                a, b = verts[i], verts[j]
                verts.append(normalize(((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2)))
                midpoint[key] = len(verts) - 1
            return midpoint[key]

        new_faces = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new_faces += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new_faces
    return verts, faces


def normalize(v):
    n = math.sqrt(sum(x * x for x in v))
    return tuple(x / n for x in v)


def on_superellipsoid(u, axes):
    # The point s * u with sum |s u_i / a_i|^P = 1.
    s = sum(abs(u[i] / axes[i]) ** P for i in range(3)) ** (-1.0 / P)
    return tuple(s * u[i] for i in range(3))


def main():
    rng = random.Random(SEED)
    unit, faces = icosphere(SUBDIVISIONS)
    assets, bodies = [], []
    for r in range(ROCKS):
        axes = (rng.uniform(0.07, 0.12), rng.uniform(0.06, 0.11), rng.uniform(0.05, 0.09))
        verts = [on_superellipsoid(u, axes) for u in unit]
        vertex = " ".join(f"{x:.5f}" for v in verts for x in v)
        face = " ".join(str(i) for f in faces for i in f)
        assets.append(f'    <mesh name="rock{r}" vertex="{vertex}" face="{face}"/>')
        layer, k = divmod(r, GRID * GRID)
        row, col = divmod(k, GRID)
        shift = 0.5 * PITCH * (layer % 2)
        x = (col - (GRID - 1) / 2) * PITCH + shift + rng.uniform(-0.01, 0.01)
        y = (row - (GRID - 1) / 2) * PITCH + shift + rng.uniform(-0.01, 0.01)
        z = 0.15 + layer * LAYER_GAP
        yaw = rng.uniform(0, 180)
        tilt = rng.uniform(-20, 20)
        bodies.append(
            f'    <body name="rock{r}" pos="{x:.4f} {y:.4f} {z:.4f}" euler="{tilt:.2f} 0 {yaw:.2f}">\n'
            f'      <freejoint/>\n'
            f'      <geom name="rock{r}" type="mesh" mesh="rock{r}" density="{DENSITY:g}"/>\n'
            f'    </body>')
    header = f"""<!-- mesh_rocks.xml: written by scenes/generate_mesh_rocks.py (edit that, not this file).
  {ROCKS} convex mesh rocks, {len(unit)} vertices each (superellipsoids, exponent {P:g}, semi-axes
  0.05-0.12 m, density {DENSITY:g} kg/m^3, friction {FRICTION:g}), in two layers dropped on a floor
  plane: mesh-mesh and plane-mesh contacts for the mesh collision benchmark of issue 32. SI units,
  timestep 1/240 s. -->"""
    xml = f"""{header}
<mujoco model="mesh_rocks">
  <option timestep="0.004166666666666667"/>
  <default>
    <geom condim="3" friction="{FRICTION:g} 0.005 0.0001"/>
  </default>
  <asset>
{chr(10).join(assets)}
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
{chr(10).join(bodies)}
  </worldbody>
</mujoco>
"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mesh_rocks.xml")
    with open(path, "w") as f:
        f.write(xml)


if __name__ == "__main__":
    main()
