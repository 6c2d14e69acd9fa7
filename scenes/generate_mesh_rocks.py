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

import os
import random

from mesh_geometry import icosphere, normalize

SEED = 11
SUBDIVISIONS = 4  # 10 * 4^4 + 2 = 2562 vertices per rock
P = 3.0  # superellipsoid exponent: between an ellipsoid (2) and a box (infinity)
ROCKS = 12
DENSITY = 1000.0  # kg/m^3
FRICTION = 0.6
GRID = 3  # rocks per row of a layer
PITCH = 0.3  # m between rock centres in a layer (more than two largest semi-axes)
LAYER_GAP = 0.28  # m between layers


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
