#!/usr/bin/env python3
"""Writes ball_pile.xml: 100 spheres dropped into a square bin, where they form a pile.

Run from anywhere:

    python3 scenes/generate_ball_pile.py

Standard library only and deterministic: the small horizontal offsets come from
random.Random(SEED) and are rounded before they are written, so the same script writes a
byte-identical file. The generated file is committed; edit this script, not it.
"""

import os
import random

from scene_writer import bin_walls, fmt

SEED = 7

RADIUS = 0.05  # m
MASS = 0.5  # kg
FRICTION = 0.5
GRID = 5  # balls per row and per column of a layer
LAYERS = 4  # GRID * GRID * LAYERS = 100 balls
PITCH = 0.12  # m between ball centres in a layer (more than a diameter: no initial overlap)
LAYER_HEIGHTS = (0.3, 0.7, 1.1, 1.5)  # m, ball centres
LAYER_SHIFT = 0.02  # m, odd layers shifted diagonally so that balls do not land on top of balls
JITTER = 0.008  # m, at most, per ball and axis (PITCH - 2 JITTER > 2 RADIUS)

BIN_HALF = 0.33  # m, inner half width of the square bin
WALL_HALF_THICKNESS = 0.025
WALL_HALF_HEIGHT = 0.2  # walls 0.4 m high, standing on the floor


def main():
    assert LAYERS == len(LAYER_HEIGHTS)
    assert PITCH - 2 * JITTER > 2 * RADIUS
    extent = (GRID - 1) / 2 * PITCH + LAYER_SHIFT + JITTER + RADIUS
    assert extent < BIN_HALF, extent

    rng = random.Random(SEED)
    n = GRID * GRID * LAYERS
    out = ["""<!--
  {n} balls dropped into a square bin on the floor, where they form a pile: a scene with many
  simultaneous sphere-sphere, sphere-plane and sphere-box contacts and one subsystem per ball.
  Written by scenes/generate_ball_pile.py (seed {seed}); edit the script, not this file.

  Units: SI (m, kg, s). Timestep 1/240 s, gravity -9.81 m/s^2 along z, MuJoCo 2.2.2.
  <size> only gives MuJoCo room for its contact buffers (alsim ignores it).

  - Balls: radius {r} m, {m} kg each (inertia from the geom: a uniform sphere), each its own free
    body ({n} subsystems, nv = {nv}). They start at rest on a lattice of {g} x {g} balls per layer,
    {pitch} m apart, in {layers} layers with centres at z = {heights} m; odd layers are shifted by
    {shift} m in x and y, and every ball by up to +-{jitter} m in x and y (seeded), so that no two
    balls start in contact and none lands squarely on another.
  - Bin: four static box walls on the floor, {height} m high and {thick} m thick, inner size
    {inner} x {inner} m, centred on the origin.
  - Contact: friction {mu} on every geom, condim 3, margin 0.
-->""".format(n=n, seed=SEED, r=fmt(RADIUS), m=fmt(MASS), nv=6 * n, g=GRID, pitch=fmt(PITCH),
              layers=LAYERS, heights=", ".join(fmt(h) for h in LAYER_HEIGHTS),
              shift=fmt(LAYER_SHIFT), jitter=fmt(JITTER), height=fmt(2 * WALL_HALF_HEIGHT),
              thick=fmt(2 * WALL_HALF_THICKNESS), inner=fmt(2 * BIN_HALF), mu=fmt(FRICTION))]
    out.append('<mujoco model="ball_pile">')
    out.append('  <option timestep="0.0041666666666666667"/>')
    # Room for MuJoCo's contact and constraint buffers (its defaults, 100 contacts and 500 rows,
    # overflow here); alsim sizes its own buffers and ignores these.
    out.append('  <size nconmax="%d" njmax="%d"/>' % (8 * n, 32 * n))
    out.append('  <default>')
    out.append('    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>'
               % fmt(FRICTION))
    out.append('  </default>')
    out.append('  <worldbody>')
    out.extend(bin_walls(BIN_HALF, WALL_HALF_THICKNESS, WALL_HALF_HEIGHT))
    k = 0
    for layer, z in enumerate(LAYER_HEIGHTS):
        shift = LAYER_SHIFT if layer % 2 else 0.0
        for i in range(GRID):
            for j in range(GRID):
                x = (i - (GRID - 1) / 2) * PITCH + shift + rng.uniform(-JITTER, JITTER)
                y = (j - (GRID - 1) / 2) * PITCH + shift + rng.uniform(-JITTER, JITTER)
                out.append('    <body name="ball%d" pos="%s %s %s">'
                           % (k, fmt(round(x, 4)), fmt(round(y, 4)), fmt(z)))
                out.append('      <freejoint name="ball%d"/>' % k)
                out.append('      <geom name="ball%d" type="sphere" size="%s" mass="%s"/>'
                           % (k, fmt(RADIUS), fmt(MASS)))
                out.append('    </body>')
                k += 1
    out.append('  </worldbody>')
    out.append('</mujoco>')
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ball_pile.xml")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
