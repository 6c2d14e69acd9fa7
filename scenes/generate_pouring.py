#!/usr/bin/env python3
"""Writes pouring_9.xml, pouring_18.xml, pouring_27.xml, pouring_36.xml and pouring_45.xml: the
SubADMM/CANAL paper's pouring (Sec. VII-C, Figs. 10 and 11; digest seed-004-subadmm-canal.md
8.3) without its robot: a bottle holding N spheres, tilted about a hinge at its lip by a position
servo, pours them into a wider, static bottle.

Run from anywhere:

    python3 scenes/generate_pouring.py

Standard library only and deterministic. The generated files are committed; edit this script,
not them. bench/pouring_bench.cc drives the servo (its comment gives the tilt schedule) and
measures the solvers on the five scenes.

Geometry (m; SDFs of revolution of eq. (45), docs/engine.md; the paper gives no numbers):
  - bottle: a = (0.03, 0), b = (0.03, 0.12), d = 0.002: a straight 6 cm bottle, 12 cm tall (the
    brief's; no neck), 0.2 kg as a thin shell (dish_geometry.shell_inertial). Its body frame is
    the hinge, about +y through P, the point of the rim on the +x side (the lip), P = (0, 0,
    PIVOT_Z); the field's frame, the bottle's bottom center, is at P + (-0.03, 0, -0.12). A
    positive tilt turns the mouth toward +x. Rotating about P keeps the lip in place; the
    bottle's solid stays at x <= 0.002 (relative to P) up to 90 deg and above P from there on, so
    it never meets the jar.
  - jar (the second bottle): a = (0.05, 0), b = (0.05, 0.10), d = 0.002, static, standing on the
    table with its axis at x = JAR_X; its rim 4 cm below the lip.
  - particles: spheres of radius 5 mm and density 10 g/cm^3 (the paper's; 5.236 g each), in
    N / 9 layers of 3 x 3 on a grid of 11.5 mm (corner centers 16.3 mm off the axis, 6.7 mm
    inside the wall), the lowest 0.5 mm above the bottle's floor and the layers 1.5 mm apart.
  - collision filter: the bottle meets the particles only (not the table or the jar), the
    particles meet everything.
  - friction 0.5 everywhere [OURS], condim 3, margin 0; timestep 1/240 s (the paper's).
  - servo: position actuator, kp = 20 N m/rad, ctrl in [0, 2.6] rad; the hinge has damping
    0.5 N m s/rad (implicit in the step) and armature 0.002 kg m^2 (with the bottle's ~1e-3 kg m^2
    about the hinge, h sqrt(kp / I) ~ 0.4 for the explicit servo).
DOF = 1 + 6 N: 55, 109, 163, 217 and 271 (the paper's 88 to 304 add a 28-DOF robot and the
bottle's free body).
"""

import math
import os

from dish_geometry import inertial_line, revolution_text
from scene_writer import fmt

COUNTS = (9, 18, 27, 36, 45)
FRICTION = 0.5
BOTTLE = ((0.03, 0.0), (0.03, 0.12), 0.002)
BOTTLE_MASS = 0.2  # kg
JAR = ((0.05, 0.0), (0.05, 0.10), 0.002)
PIVOT_Z = 0.142  # m: the jar's rim at 0.102 plus 4 cm
JAR_X = 0.065  # m: the jar's outer wall 11 mm from the bottle's at the start
RADIUS = 0.005  # m
DENSITY = 10000  # kg/m^3
GRID = 0.0115  # m between particle centers in a layer
LAYER_PITCH = 0.0115  # m between layers
KP = 20  # N m/rad
DAMPING = 0.5  # N m s/rad
ARMATURE = 0.002  # kg m^2


def scene(count):
    (bottle_a, bottle_b, bottle_d) = BOTTLE
    (jar_a, jar_b, jar_d) = JAR
    inner = bottle_a[0] - bottle_d
    assert math.sqrt(2) * GRID + RADIUS < inner
    # Bottle frame (the field's) relative to the hinge at P.
    frame = (-bottle_a[0], 0.0, -bottle_b[1])
    lines = [
        "<!--",
        "  The SubADMM/CANAL paper's pouring (Sec. VII-C, Fig. 11; digest 8.3) without its robot:",
        "  a bottle with %d spheres (r 5 mm, 10 g/cm^3) tilted about its lip by a position servo"
        % count,
        "  pours them into a static jar. Written by generate_pouring.py (its docstring gives every",
        "  number and its reason); edit that. bench/pouring_bench.cc scripts the tilt.",
        "",
        "  Units: SI (m, kg, s). Timestep 1/240 s, gravity -9.81 m/s^2 along z, MuJoCo 2.2.2.",
        "  DOF %d: the hinge and %d free spheres. Bottle and jar are SDF geoms of eq. (45) (custom"
        % (1 + 6 * count, count),
        "  text alsim:sdf:GEOM, docs/engine.md) on proxy cylinders for MuJoCo; the bottle's body",
        "  has an explicit inertial (its profile as a 0.2 kg thin shell). Friction %s (ours)."
        % fmt(FRICTION),
        "-->",
        '<mujoco model="pouring_%d">' % count,
        '  <option timestep="0.0041666666666666667"/>',
        "  <default>",
        '    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>' % fmt(FRICTION),
        "  </default>",
        "  <custom>",
        revolution_text("bottle", bottle_a, bottle_b, bottle_d),
        revolution_text("jar", jar_a, jar_b, jar_d),
        "  </custom>",
        "  <worldbody>",
        '    <geom name="table" type="plane" size="0 0 1" contype="1" conaffinity="2"/>',
        '    <geom name="jar" type="cylinder" size="%s %s" pos="%s 0 %s" contype="1"'
        ' conaffinity="2"/>' % (fmt(jar_a[0]), fmt(jar_b[1] / 2), fmt(JAR_X), fmt(jar_d)),
        '    <body name="bottle" pos="0 0 %s">' % fmt(PIVOT_Z),
        '      <joint name="tilt" type="hinge" axis="0 1 0" damping="%s" armature="%s"/>'
        % (fmt(DAMPING), fmt(ARMATURE)),
    ]
    inertial = inertial_line(bottle_a, bottle_b, BOTTLE_MASS)
    z_c = float(inertial.split('pos="0 0 ')[1].split('"')[0])
    lines.append(inertial.replace('pos="0 0 %s"' % fmt(z_c), 'pos="%s 0 %s"'
                                  % (fmt(frame[0]), fmt(round(frame[2] + z_c, 6)))))
    lines += [
        '      <geom name="bottle" type="cylinder" size="%s %s" pos="%s 0 %s" contype="4"'
        ' conaffinity="2"/>' % (fmt(bottle_a[0]), fmt(bottle_b[1] / 2), fmt(frame[0]),
                                fmt(frame[2])),
        "    </body>",
    ]
    axis_x = frame[0]
    floor_z = PIVOT_Z + frame[2] + bottle_d
    for k in range(count):
        layer, cell = divmod(k, 9)
        row, col = divmod(cell, 3)
        x = axis_x + (col - 1) * GRID
        y = (row - 1) * GRID
        z = floor_z + RADIUS + 0.0005 + layer * LAYER_PITCH
        lines += [
            '    <body name="particle_%d" pos="%s %s %s">'
            % (k, fmt(round(x, 6)), fmt(round(y, 6)), fmt(round(z, 6))),
            "      <freejoint/>",
            '      <geom type="sphere" size="%s" density="%s" contype="2" conaffinity="7"/>'
            % (fmt(RADIUS), fmt(DENSITY)),
            "    </body>",
        ]
    lines += [
        "  </worldbody>",
        "  <actuator>",
        '    <position name="tilt" joint="tilt" kp="%s" ctrllimited="true" ctrlrange="0 2.6"/>'
        % fmt(KP),
        "  </actuator>",
        "</mujoco>",
    ]
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for count in COUNTS:
        assert count % 9 == 0
        with open(os.path.join(here, "pouring_%d.xml" % count), "w") as out:
            out.write(scene(count))


if __name__ == "__main__":
    main()
