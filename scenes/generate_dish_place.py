#!/usr/bin/env python3
"""Writes dish_place.xml: the SubADMM/CANAL paper's dish placing (Sec. VII-B, Fig. 9; digest
seed-004-subadmm-canal.md 8.2) with a simple gripper in place of the paper's arm and hand: bowl,
bowl and plate stacked on a table at their analytic rest heights, as in dish_pile.xml, and the 5 kg
pot held above them by two fingers that squeeze its outer wall, hanging from a carriage that a
position servo moves along z. bench/dish_place_script.h lowers the pot onto the plate, opens the
fingers and lifts the carriage away.

Run from anywhere:

    python3 scenes/generate_dish_place.py

Standard library only and deterministic. The generated file is committed; edit this script, not
it. The dishes (profiles, masses, friction, proxies, rest heights) come from generate_dish_pile.py.

The gripper's numbers [OURS: the paper's arm, hand and controller are not given]:
  - Height: the pot starts HOLD_HEIGHT = 3 cm above its rest height on the plate, its bottom
    corner clear of the plate's wall. The carriage's frame is at the fingers' grip height, so its
    slide "lift" reads 0 there and -HOLD_HEIGHT where the pot rests.
  - Fingers: vertical capsules of radius FINGER_RADIUS = 1 cm and half length FINGER_HALF = 3 cm,
    one on each side along y, touching the pot's outer wall r = a_r + d = 0.104 (pot a = (0.10, 0),
    b = (0.10, 0.12), d = 4 mm) at the start: their axes at y = +-(0.104 + 0.01). An SDF against a
    capsule collides along the capsule's axis in 8 pieces, so each finger is a line contact that
    resists the pot's swing about x. The axis spans the pot's z = 0.03..0.09 (GRIP_Z = 0.06 at its
    middle): with the pot at rest, the capsule's lowest point z_pot + 0.02 = 0.1176 stays 15 mm
    above the plate's rim z_plate + b_z + d = 0.1028, and its top, 0.10 above the pot's origin,
    below the pot's rim at b_z + d = 0.124 (main() asserts both).
  - Squeeze: a motor per finger on a slide along y (positive closes), force = ctrl N, ctrlrange
    +-150 N. The script squeezes with 120 N: two fingers at mu 0.5 hold 2 x 0.5 x 120 = 120 N of
    friction against the pot's 5 x 9.81 = 49 N, a margin of 2.4. The finger slides' range
    -0.03..0.005 m stops an opened finger 3 cm out (clear of the pot and the plate's rim r = 0.123
    while the carriage rises) and an empty closing one 5 mm in. Damping FINGER_DAMPING = 50 N s/m
    caps an opening finger's speed at F / c (0.6 m/s for the script's 30 N); MuJoCo 2.2.2's Euler
    integrates joint damping implicitly, so m / c = 4 ms near the step is stable.
  - Carriage: CARRIAGE_MASS = 2 kg (its geom does not collide), fingers FINGER_MASS = 0.2 kg each,
    so the servo carries M = 7.4 kg with the pot and 2.4 kg without it. The position servo
    kp = KP = 5000 N/m gives omega = sqrt(kp / M) = 26 rad/s loaded, 46 rad/s unloaded:
    omega h = 0.11 and 0.19 at h = 1/240 s, far inside the explicit spring's limit of 2. The
    slide's damping c = 2 zeta sqrt(kp M) with zeta = ZETA = 0.7 loaded is 270 N s/m, rounded
    to 10 (zeta = 1.2 unloaded). The sag M g / kp (14.5 mm loaded) is compensated by the script, which
    commands the target plus M g / kp; the range -0.05..0.15 m of "lift" leaves the descent
    (-0.03) and the retraction room, and the servo's ctrlrange -0.05..0.2 m adds the sag to it.
  - The carriage's box (visual only) spans both fingers 0.02 m above the pot's rim.
"""

import math
import os

import generate_dish_pile as pile
from scene_writer import fmt

HOLD_HEIGHT = 0.03  # m above the pot's rest height at the start
FINGER_RADIUS = 0.01  # m
FINGER_HALF = 0.03  # m, half the capsule's axis
GRIP_Z = 0.06  # m, the fingers' middle above the pot's origin
FINGER_MASS = 0.2  # kg each
FINGER_DAMPING = 50  # N s/m
FINGER_RANGE = (-0.03, 0.005)  # m, positive closes
SQUEEZE_LIMIT = 150  # N, the motors' ctrlrange
CARRIAGE_MASS = 2.0  # kg
KP = 5000  # N/m, the lift servo
ZETA = 0.7  # the lift's damping ratio with the pot held
LIFT_RANGE = (-0.05, 0.15)  # m
GRAVITY = 9.81


def gripper_numbers():
    """The pot's wall radius, the finger axis' distance from the pot's axis and the lift's
    damping (the docstring's derivations)."""
    (pot_a, pot_b, pot_d) = pile.POT
    assert pot_a[0] == pot_b[0]  # a straight wall
    wall = pot_a[0] + pot_d
    loaded = CARRIAGE_MASS + 2 * FINGER_MASS + pile.POT_MASS
    damping = round(2 * ZETA * math.sqrt(KP * loaded), -1)
    return wall, wall + FINGER_RADIUS, damping


def main():
    z1, z2, zp, zpot = pile.rest_heights()
    wall, finger_y, lift_damping = gripper_numbers()
    (_, plate_b, plate_d) = pile.PLATE
    assert zpot + GRIP_Z - FINGER_HALF - FINGER_RADIUS > zp + plate_b[1] + plate_d  # above rim
    assert GRIP_Z + FINGER_HALF + FINGER_RADIUS < pile.POT[1][1] + pile.POT[2]  # below pot rim
    z_start = zpot + HOLD_HEIGHT
    dishes = (("bowl_1", "bowl", pile.BOWL, pile.DISH_MASS, z1),
              ("bowl_2", "bowl", pile.BOWL, pile.DISH_MASS, z2),
              ("plate", "plate", pile.PLATE, pile.DISH_MASS, zp),
              ("pot", "pot", pile.POT, pile.POT_MASS, z_start))
    lines = [
        "<!--",
        "  The SubADMM/CANAL paper's dish placing (Sec. VII-B, Fig. 9; digest 8.2) with a simple",
        "  gripper for the paper's arm: bowl, bowl and plate stacked on a table at their analytic",
        "  rest heights (as dish_pile.xml), the 5 kg pot held %s m above its rest height on the"
        % fmt(HOLD_HEIGHT),
        "  plate (z %s) by two fingers that squeeze its outer wall. Written by"
        % fmt(round(zpot, 6)),
        "  generate_dish_place.py (its docstring derives every number); edit that.",
        "",
        "  Units: SI (m, kg, s). Timestep 1/240 s (the paper's), gravity -9.81 m/s^2 along z,",
        "  MuJoCo 2.2.2.",
        "",
        "  - Dishes: dish_pile.xml's SDF geoms (custom text alsim:sdf:GEOM) on proxy cylinders,",
        "    thin-shell inertias, 0.1 kg bowls and plate, 5 kg pot; friction %s everywhere (ours),"
        % fmt(pile.FRICTION),
        "    condim 3, margin 0.",
        "  - carriage: %s kg, its frame at the fingers' middle (the pot's z + %s), on the world"
        % (fmt(CARRIAGE_MASS), fmt(GRIP_Z)),
        "    slide lift along z (range %s..%s m, damping %s N s/m: damping ratio %s with the pot)"
        % (fmt(LIFT_RANGE[0]), fmt(LIFT_RANGE[1]), fmt(lift_damping), fmt(ZETA)),
        "    held by the position servo lift (kp %s N/m; omega h = 0.11 loaded, 0.19 empty);" % KP,
        "    lift = -%s puts the pot at rest; the script adds the sag M g / kp to its targets."
        % fmt(HOLD_HEIGHT),
        "    Its box does not collide (contype 0, conaffinity 0).",
        "  - finger_l, finger_r: %s kg capsules (radius %s m, half length %s m) along z, touching"
        % (fmt(FINGER_MASS), fmt(FINGER_RADIUS), fmt(FINGER_HALF)),
        "    the pot's wall r = %s at the start, on slides along -y and +y (positive closes, range"
        % fmt(round(wall, 6)),
        "    %s..%s m, damping %s N s/m) driven by motors (force = ctrl N, ctrl +-%s). The script"
        % (fmt(FINGER_RANGE[0]), fmt(FINGER_RANGE[1]), fmt(FINGER_DAMPING), SQUEEZE_LIMIT),
        "    squeezes with 120 N each: 120 N of friction at mu 0.5 against the pot's 49 N.",
        "-->",
    ]
    lines += pile.scene_opening("dish_place", dishes)
    # The carriage's box spans the fingers above the pot's rim (0.124 above its origin).
    palm_z = pile.POT[1][1] + pile.POT[2] + 0.02 - GRIP_Z
    lines += [
        '    <body name="carriage" pos="0 0 %s">' % fmt(round(z_start + GRIP_Z, 6)),
        '      <joint name="lift" type="slide" axis="0 0 1" limited="true" range="%s %s"'
        ' damping="%s"/>' % (fmt(LIFT_RANGE[0]), fmt(LIFT_RANGE[1]), fmt(lift_damping)),
        '      <geom name="carriage" type="box" pos="0 0 %s" size="0.02 %s 0.01" mass="%s"'
        ' contype="0" conaffinity="0"/>'
        % (fmt(round(palm_z, 6)), fmt(round(finger_y + FINGER_RADIUS, 6)), fmt(CARRIAGE_MASS)),
    ]
    for name, sign in (("finger_l", 1), ("finger_r", -1)):
        lines += [
            '      <body name="%s" pos="0 %s 0">' % (name, fmt(round(sign * finger_y, 6))),
            '        <joint name="%s" type="slide" axis="0 %s 0" limited="true" range="%s %s"'
            ' damping="%s"/>' % (name, -sign, fmt(FINGER_RANGE[0]), fmt(FINGER_RANGE[1]),
                                 fmt(FINGER_DAMPING)),
            '        <geom name="%s" type="capsule" size="%s %s" mass="%s"/>'
            % (name, fmt(FINGER_RADIUS), fmt(FINGER_HALF), fmt(FINGER_MASS)),
            "      </body>",
        ]
    lines += ["    </body>", "  </worldbody>", "  <actuator>",
              '    <position name="lift" joint="lift" kp="%s" ctrllimited="true"'
              ' ctrlrange="%s %s"/>' % (KP, fmt(LIFT_RANGE[0]), fmt(LIFT_RANGE[1] + 0.05))]
    for name in ("finger_l", "finger_r"):
        lines.append('    <motor name="%s" joint="%s" gear="1" ctrllimited="true"'
                     ' ctrlrange="-%s %s"/>' % (name, name, SQUEEZE_LIMIT, SQUEEZE_LIMIT))
    lines += ["  </actuator>", "</mujoco>"]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dish_place.xml")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
