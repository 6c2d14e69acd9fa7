#!/usr/bin/env python3
"""Writes icf_clutter.xml: the clutter of Irrotational Contact Fields (seed 000, Sec. XII-A), 40
objects dropped in four columns of 10 into an 80 x 80 x 80 cm box.

Run from anywhere:

    python3 scenes/generate_icf_clutter.py

Standard library only and deterministic: the small horizontal offsets and the boxes' small tilts
come from random.Random(SEED) and are rounded before they are written, so the same script writes a
byte-identical file. The generated file is committed; edit this script, not it.
"""

import math
import os
import random

from scene_writer import bin_walls, fmt

SEED = 45

# The paper's objects (Sec. XII-A): 10 cm spheres and 10 cm boxes of water's density.
RADIUS = 0.05  # m
SPHERE_MASS = 1000 * 4 / 3 * math.pi * RADIUS ** 3  # 0.524 kg
BOX_HALF = 0.05  # m
BOX_MASS = 1000 * (2 * BOX_HALF) ** 3  # 1.0 kg
FRICTION = 1.0  # "all surfaces"
COLUMNS = ((-0.2, -0.2), (0.2, -0.2), (-0.2, 0.2), (0.2, 0.2))  # m, the four columns' x, y
PER_COLUMN = 10
BOTTOM = 0.1  # m, the lowest object's centre
PITCH = 0.14  # m between centres in a column: more than a sphere's radius plus a box's half diagonal
JITTER = 0.01  # m, at most, per object and horizontal axis
TILT = 0.2  # rad, at most, per box and axis

BOX_INNER_HALF = 0.4  # m: the 80 x 80 x 80 cm box
WALL_HALF_THICKNESS = 0.025
WALL_HALF_HEIGHT = 0.4


def quat(roll, pitch, yaw):
    """The unit quaternion (w, x, y, z) of the x-y-z rotations, MuJoCo's euler="roll pitch yaw"."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    # q = q_x(roll) * q_y(pitch) * q_z(yaw): intrinsic x, then y, then z (MuJoCo's default "xyz").
    w = cr * cp * cy - sr * sp * sy
    x = sr * cp * cy + cr * sp * sy
    y = cr * sp * cy - sr * cp * sy
    z = cr * cp * sy + sr * sp * cy
    return (w, x, y, z)


def main():
    assert PITCH > RADIUS + BOX_HALF * math.sqrt(3)  # a sphere and a box, tilted, do not touch
    assert max(abs(c) for xy in COLUMNS for c in xy) + JITTER + 0.09 < BOX_INNER_HALF
    rng = random.Random(SEED)
    n = len(COLUMNS) * PER_COLUMN
    out = ["""<!--
  Irrotational Contact Fields (seed 000), Sec. XII-A, the clutter of the SAP paper: {n} objects
  dropped in four columns of {per} into an 80 x 80 x 80 cm box. Written by
  scenes/generate_icf_clutter.py (seed {seed}); edit the script, not this file.

  Units: SI (m, kg, s). Timestep 2e-3 s (the paper's Figs. 15-16), gravity -9.81 m/s^2 along z,
  MuJoCo 2.2.2. <size> only gives MuJoCo room for its contact buffers (alsim ignores it).

  - Objects: the paper's, of water's density: spheres of {d} m diameter ({ms} kg) and boxes of
    {d} m sides ({mb} kg), each its own free body (nv = {nv}). Columns at x, y = +-0.2 m;
    each column alternates sphere and box (two columns start with a sphere, two with a box, so that
    every layer mixes them; the paper gives no exact mix), centres {pitch} m apart from z = {bottom}
    m, offset by up to +-{jitter} m in x and y and boxes tilted by up to +-{tilt} rad about each
    axis (seeded), so that nothing starts in contact and nothing lands squarely on another.
  - Box: the floor plane and four static box walls {height} m high and {thick} m thick, inner
    size {inner} x {inner} m, centred on the origin.
  - Contact: friction {mu} on every geom ("all surfaces"), condim 3, margin 0; the contact's
    stiffness and dissipation are the solver's options (bench/icf_experiments.cc sweeps k).
-->""".format(n=n, per=PER_COLUMN, seed=SEED, d=fmt(2 * RADIUS), ms=fmt(round(SPHERE_MASS, 4)),
              mb=fmt(round(BOX_MASS, 6)), nv=6 * n, pitch=fmt(PITCH), bottom=fmt(BOTTOM),
              jitter=fmt(JITTER), tilt=fmt(TILT), height=fmt(2 * WALL_HALF_HEIGHT),
              thick=fmt(2 * WALL_HALF_THICKNESS), inner=fmt(2 * BOX_INNER_HALF),
              mu=fmt(FRICTION))]
    out.append('<mujoco model="icf_clutter">')
    out.append('  <option timestep="0.002" gravity="0 0 -9.81"/>')
    out.append('  <size nconmax="%d" njmax="%d"/>' % (16 * n, 64 * n))
    out.append('  <default>')
    out.append('    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>'
               % fmt(FRICTION))
    out.append('  </default>')
    out.append('  <worldbody>')
    out.extend(bin_walls(BOX_INNER_HALF, WALL_HALF_THICKNESS, WALL_HALF_HEIGHT))
    k = 0
    for level in range(PER_COLUMN):
        for c, (cx, cy) in enumerate(COLUMNS):
            x = cx + rng.uniform(-JITTER, JITTER)
            y = cy + rng.uniform(-JITTER, JITTER)
            z = BOTTOM + level * PITCH
            sphere = (level + c) % 2 == 0
            name = ("sphere%d" if sphere else "box%d") % k
            attributes = ""
            if not sphere:
                q = quat(*(rng.uniform(-TILT, TILT) for _ in range(3)))
                attributes = ' quat="%s"' % " ".join(fmt(round(v, 6)) for v in q)
            out.append('    <body name="%s" pos="%s %s %s"%s>'
                       % (name, fmt(round(x, 4)), fmt(round(y, 4)), fmt(round(z, 4)), attributes))
            out.append('      <freejoint name="%s"/>' % name)
            if sphere:
                out.append('      <geom name="%s" type="sphere" size="%s" mass="%s"/>'
                           % (name, fmt(RADIUS), fmt(round(SPHERE_MASS, 6))))
            else:
                out.append('      <geom name="%s" type="box" size="%s %s %s" mass="%s"/>'
                           % (name, fmt(BOX_HALF), fmt(BOX_HALF), fmt(BOX_HALF), fmt(round(BOX_MASS, 6))))
            out.append('    </body>')
            k += 1
    out.append('  </worldbody>')
    out.append('</mujoco>')
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "icf_clutter.xml")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
