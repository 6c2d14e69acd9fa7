#!/usr/bin/env python3
"""Writes dish_pile.xml: the SubADMM/CANAL paper's dish pile (Sec. VII-B, Fig. 9; digest
seed-004-subadmm-canal.md 8.2), bowl-bowl-plate-pot read bottom to top on a table, every dish a
free body colliding as its SDF of revolution (eq. 45), each at the height where it rests on the
one below.

Run from anywhere:

    python3 scenes/generate_dish_pile.py

Standard library only and deterministic. The generated file is committed; edit this script, not
it.

The rest heights, from the profiles (O-A-B, padding d; O the dish's origin, on its axis):
  - bowl_1 on the table: its bottom's underside at z = -d, so z_1 = d.
  - bowl_2 nested in bowl_1: the conical walls are parallel, and lifting a cone by dz moves it off
    its twin by dz e_r / |e| along the wall's normal (e = B - A), so two paddings apart takes
    dz = 2 d |e| / e_r.
  - the plate on bowl_2's rim: the rim is a torus of tube radius d_bowl about the circle of B, and
    the plate's flat bottom reaches r = a_r >= the rim's b_r, so the plate's underside (z_p -
    d_plate) lies on the torus's top (z_2 + b_z + d_bowl).
  - the pot on the plate's wall: the pot's bottom (radius a_r = 0.10) is wider than the plate's
    floor (0.08), so the pot rests on the plate's conical wall by the round corner about A_pot:
    the corner's center C = (A_pot_r, z_pot) lies d_plate + d_pot from the plate's wall line
    through A_plate along its unit normal n = (-e_z, e_r) / |e|:
    n . (C - (A_plate_r, z_p)) = d_plate + d_pot.
"""

import math
import os

from dish_geometry import inertial_line, revolution_text
from scene_writer import fmt

FRICTION = 0.5  # [OURS]: the paper gives no friction coefficient for any experiment
DISH_MASS = 0.1  # kg, the paper's light bowls and plate
POT_MASS = 5.0  # kg, the paper's heavy pot

# Profiles (a, b, padding) in m: the digest's example dishes (8.2); the paper gives none.
BOWL = ((0.04, 0.0), (0.08, 0.06), 0.003)
PLATE = ((0.08, 0.0), (0.12, 0.02), 0.003)
POT = ((0.10, 0.0), (0.10, 0.12), 0.004)

# Proxy cylinders (radius, half height) for MuJoCo's compiler, about the dishes' size; the mass
# and inertia come from each body's <inertial> (dish_geometry.shell_inertial).
PROXY = {"bowl": (0.08, 0.03), "plate": (0.12, 0.01), "pot": (0.10, 0.06)}


def rest_heights():
    (_, bowl_b, bowl_d) = BOWL
    bowl_a = BOWL[0]
    z1 = bowl_d
    e = (bowl_b[0] - bowl_a[0], bowl_b[1] - bowl_a[1])
    z2 = z1 + 2 * bowl_d * math.hypot(*e) / e[0]
    plate_a, plate_b, plate_d = PLATE
    assert plate_a[0] >= bowl_b[0] and plate_a[1] == 0
    zp = z2 + bowl_b[1] + bowl_d + plate_d
    pot_a, _, pot_d = POT
    e = (plate_b[0] - plate_a[0], plate_b[1] - plate_a[1])
    length = math.hypot(*e)
    n = (-e[1] / length, e[0] / length)
    assert plate_a[0] < pot_a[0] < plate_b[0]
    zpot = zp + (plate_d + pot_d - n[0] * (pot_a[0] - plate_a[0])) / n[1]
    return z1, z2, zp, zpot



def scene_opening(model, dishes):
    """The scene's lines from <mujoco> through the dishes' bodies (left inside <worldbody>): the
    timestep, the contact defaults, each dish's SDF text, the table and each dish as a free body
    on its proxy cylinder. dishes: (name, kind, (a, b, padding), mass, z) each. Shared with
    generate_dish_place.py."""
    lines = [
        '<mujoco model="%s">' % model,
        '  <option timestep="0.0041666666666666667"/>',
        "  <default>",
        '    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>' % fmt(FRICTION),
        "  </default>",
        "  <custom>",
    ]
    for name, _, (a, b, d), _, _ in dishes:
        lines.append(revolution_text(name, a, b, d))
    lines += ["  </custom>", "  <worldbody>",
              '    <geom name="table" type="plane" size="0 0 1"/>']
    for name, kind, (a, b, _), mass, z in dishes:
        radius, half_height = PROXY[kind]
        lines += [
            '    <body name="%s" pos="0 0 %s">' % (name, fmt(round(z, 6))),
            '      <freejoint name="%s"/>' % name,
            inertial_line(a, b, mass),
            '      <geom name="%s" type="cylinder" size="%s %s"/>'
            % (name, fmt(radius), fmt(half_height)),
            "    </body>",
        ]
    return lines

def main():
    z1, z2, zp, zpot = rest_heights()
    dishes = (("bowl_1", "bowl", BOWL, DISH_MASS, z1), ("bowl_2", "bowl", BOWL, DISH_MASS, z2),
              ("plate", "plate", PLATE, DISH_MASS, zp), ("pot", "pot", POT, POT_MASS, zpot))
    lines = [
        "<!--",
        "  The SubADMM/CANAL paper's dish pile (Sec. VII-B, Fig. 9; digest 8.2): bowl, bowl, plate",
        "  and pot stacked on a table, read bottom to top, 0.1 kg dishes under a 5 kg pot (1:50).",
        "  Written by generate_dish_pile.py (its docstring derives the rest heights); edit that.",
        "",
        "  Units: SI (m, kg, s). Timestep 1/240 s (the paper's), gravity -9.81 m/s^2 along z,",
        "  MuJoCo 2.2.2.",
        "",
        "  - Dishes: SDF geoms of eq. (45) (custom text alsim:sdf:GEOM, docs/engine.md) with the",
        "    digest's profiles: bowl a = (0.04, 0), b = (0.08, 0.06), d = 3 mm; plate a = (0.08, 0),",
        "    b = (0.12, 0.02), d = 3 mm; pot a = (0.10, 0), b = (0.10, 0.12), d = 4 mm. MuJoCo sees",
        "    proxy cylinders centered on each dish's origin (the bottom's mid-surface, where the",
        "    field's frame is); each body's explicit inertial is its profile as a thin shell.",
        "  - Stack: both bowls and the plate are coaxial on z; bowl_2 nests in bowl_1, the plate's",
        "    flat bottom lies on bowl_2's rim and the pot's bottom corner on the plate's wall, each",
        "    at its analytic rest height, so nothing overlaps and the pile starts at rest.",
        "  - Contact: friction %s everywhere (ours: the paper gives none), condim 3, margin 0."
        % fmt(FRICTION),
        "-->",
    ]
    lines += scene_opening("dish_pile", dishes)
    lines += ["  </worldbody>", "</mujoco>"]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dish_pile.xml")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
