#!/usr/bin/env python3
"""Writes the Fetch Tomato scene of the non-smooth Newton paper (Macklin et al. 2019, seed 002;
digest /work/shared/research/seed-002-nsn.md 9.1 (Table 2: 4 Newton x 50 linear iterations),
9.2 item 1 and 14, test 20) with our own gripper, since there is no Fetch model:

    nsn_tomato.xml               the gripper, the mechanical scale and the floor (MJCF)
    nsn_tomato_deformables.xml   its companion (custom text alsim:deformables): the tomato
    assets/nsn_tomato.node       the tomato's TetGen mesh (0-based, meters, centred on the origin)
    assets/nsn_tomato.ele

Run from anywhere:

    python3 scenes/generate_nsn_tomato.py

Standard library only and deterministic (no randomness; every coordinate rounded to 1e-12 m
before it is written), so the same script writes byte-identical files. The generated files are
committed; edit this script, not them. Stepped by `--solver nsn` only (the other solvers refuse a
free deformable); tests/solver/nsn_coupling_test.cc holds the tests that use it.

Common choices: SI units (m, kg, s, N), the paper's step h = 0.0083 s (Table 2: every scene),
default gravity -9.81 m/s^2 along z, condim 3 (nsn refuses 4 and 6), margin 0, every servo a
MuJoCo <position> actuator (kp) with the joint's damping beside it, no force limits (nsn refuses
force-limited servos).

The tomato (paper: Young's modulus Y = 0.1 MPa, Poisson nu = 0.45, rho = 1000 kg/m^3, mu = 0.75
against the gripper; 319 tets from a mesh we do not have):
- a ball of radius RADIUS = 3.5 cm, meshed as a cube of N x N x N cells (N = 4) whose points are
  mapped radially onto the ball (p -> R p |p|_inf / |p|_2 for p in [-1, 1]^3: every cube shell
  |p|_inf = s goes to the sphere of radius R s), each cell split into the six Kuhn tets about the
  diagonal that points away from the centre in its octant (the splits are mirror images across
  the planes x, y, z = 0, so they conform). A single diagonal for all cells leaves slivers at four
  of the cube's corners (smallest normalized volume 0.07); the mirrored one keeps every tet at
  0.53 or more (1 is a regular tet). 6 N^3 = 384 tets and 125 vertices: the nearest structured
  ball to the paper's 319 (N = 3 gives 162 tets).
- flat facets at the six poles: each pole vertex is pulled in along its axis onto the plane of its
  four edge neighbours (R / sqrt(1.25) = 3.1305 cm from the centre), so the tomato rests on the
  floor and the platform, and meets each finger, with a flat square of five coplanar vertices
  (their ring of four more touches once it is squeezed). On a lone pole vertex it would be a point
  contact: a ball balanced on its pole tips over and rolls (it did, on the platform), and one
  pinched at two poles turns freely about the grip's axis (condim 3 has no torsional friction).
  The other 92 surface vertices lie on the sphere. Volume 1.6086e-4 m^3 (0.896 of the ball's), so
  the lumped mass is 0.1609 kg (weight 1.578 N). Every tet positively oriented (TetGen's
  orientation), checked here.
- material corotated (the engine's default: 6 rows a tet against Neo-Hookean's 9), friction
  0.75 (a vertex contact takes the larger of the geom's and the deformable's mu, and every geom
  here has less, so the tomato meets everything at 0.75), thickness 1 mm (the skin kept between
  its surface and what it touches), resting on the floor at the origin: its bottom facet 1 mm up.

The gripper (a parallel two-finger gripper on a gantry, all prismatic):
- carriage: 0.5 kg on the slide "slide_x" along x (range -0.05..0.35 m, damping 100 N s/m), held
  by the position servo "slide_x" (kp 3000 N/m: critically damped near 2 sqrt(kp m) = 113 N s/m
  with the whole load of about 1.07 kg); its rail geom is visual only (contype 0).
- palm: 0.3 kg box, 4 x 16 x 2 cm, on the slide "lift" along z (range -0.05..0.2 m, damping
  60 N s/m), held by the position servo "lift" (kp 3000 N/m: the 0.57 kg it carries sags it
  1.9 mm); at lift = 0 its centre is 2.9 cm above the tomato's top.
- fingers "left" and "right": 0.05 kg boxes, 3 x 1 x 4 cm (x y z), hanging from the palm with their
  centres at the tomato's centre height, inner faces FINGER_OPEN = 5.5 cm from the middle (2.3 cm
  from the tomato's side facets); each on its own slide whose positive direction closes it (range
  -0.005..0.05 m, damping 5 N s/m: about critical, 2 sqrt(300 x 0.05) = 7.7), driven by its own
  position servo "left" / "right" (kp 300 N/m, ctrl -0.005..0.05 m). The fingers touch the
  tomato's facets at closing 0.0227 m (thickness included); commanding GRIP = 0.043 m squeezes it
  with kp (0.043 - 0.0227 - indentation): measured 5.67 N per finger (a 1.4 mm indentation).
  Friction capacity 2 mu N = 8.5 N against the tomato's 1.58 N weight: a margin of about 5 for
  the accelerations of transport (the script's peak 3.2 m/s^2).

The mechanical scale (the paper's needle reads the weight; ours is read off its spring):
- platform: a 0.3 kg box, 12 x 12 x 2 cm, its top 5 cm above the floor, centred at x = 0.25 m,
  on the vertical slide "scale" (range -0.03..0.03 m, so no limit row near the loaded rest) with
  stiffness SCALE_K = 500 N/m and damping 25 N s/m (critical for the platform alone,
  2 sqrt(500 x 0.3) = 24.5; 0.8 with the tomato on it). springref = m_platform g / k = 5.886 mm
  tares it: unloaded it rests at scale = 0, and the reading is -k * qpos(scale) (the tomato's
  1.578 N deflects it 3.16 mm). With alsim's Euler (theta 0, which nsn requires) the spring is
  explicit and the damping implicit: stable for h^2 k / m < 4 (here 0.1), and the static
  equilibrium, k times the deflection = the load, is exact.
- base: a static box under the platform (visual only) standing on the floor.

The pick-and-place sequence (tests/solver/nsn_coupling_test.cc scripts it; ctrl are the joints'
targets): close both fingers to GRIP, lift to 0.085 m (the tomato's bottom 3.5 cm above the
platform's top), move x to 0.25 m, lower to lift 0.051 m (onto the platform), open the fingers,
lift the palm away.
"""

import math
import os

from scene_writer import fmt

H = 0.0083  # s, Table 2's step for every scene
GRAVITY = 9.81

# Tomato (digest 9.2 item 1).
RADIUS = 0.035  # m
CELLS = 4  # per side of the cube mapped onto the ball: 6 CELLS^3 tets
YOUNG = 1e5  # Pa
POISSON = 0.45
DENSITY = 1000.0  # kg/m^3
FRICTION = 0.75
THICKNESS = 0.001  # m
TOMATO_RGBA = "0.85 0.12 0.08 1"

# Gripper.
FINGER_HALF = (0.015, 0.005, 0.02)  # m
FINGER_OPEN = 0.055  # m, inner face from the middle at closing 0
FINGER_MASS = 0.05  # kg
FINGER_KP = 300.0  # N/m
FINGER_DAMPING = 5.0  # N s/m
FINGER_RANGE = (-0.005, 0.05)  # m of closing
GRIP = 0.043  # m, the closing commanded to squeeze the tomato
PALM_HALF = (0.02, 0.08, 0.01)  # m
PALM_MASS = 0.3  # kg
PALM_CLEARANCE = 0.019  # m, the palm's bottom above the tomato's top at lift 0
LIFT_KP = 3000.0  # N/m
LIFT_DAMPING = 60.0  # N s/m
LIFT_RANGE = (-0.05, 0.2)  # m
CARRIAGE_MASS = 0.5  # kg
CARRIAGE_HEIGHT = 0.25  # m, the carriage's (and the palm's slide's) origin
SLIDE_KP = 3000.0  # N/m
SLIDE_DAMPING = 100.0  # N s/m
SLIDE_RANGE = (-0.05, 0.35)  # m
GRIPPER_FRICTION = 0.5  # the tomato's 0.75 wins (the larger of the two)

# Scale.
SCALE_X = 0.25  # m
PLATFORM_HALF = (0.06, 0.06, 0.01)  # m
PLATFORM_TOP = 0.05  # m above the floor
PLATFORM_MASS = 0.3  # kg
SCALE_K = 500.0  # N/m
SCALE_DAMPING = 25.0  # N s/m
SCALE_RANGE = (-0.03, 0.03)  # m
BASE_HALF = (0.05, 0.05, 0.005)  # m, the visual base on the floor

HERE = os.path.dirname(os.path.abspath(__file__))


def r12(x):
    """x rounded to 1e-12 (m), without a negative zero."""
    y = round(x, 12)
    return 0.0 if y == 0 else y


def vec(values):
    return " ".join(fmt(r12(v)) for v in values)


# The six Kuhn tets of a cell: the path from its low corner to its high corner steps along the
# axes in each order.
KUHN_ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def signed_volume(p, t):
    a, b, c, d = (p[i] for i in t)
    u = [b[k] - a[k] for k in range(3)]
    v = [c[k] - a[k] for k in range(3)]
    w = [d[k] - a[k] for k in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0


def quality(p, t):
    """Volume over that of the regular tet with the same rms edge: 1 regular, 0 flat."""
    squares = []
    for i in range(4):
        for j in range(i + 1, 4):
            squares.append(sum((p[t[i]][k] - p[t[j]][k]) ** 2 for k in range(3)))
    rms = math.sqrt(sum(squares) / 6.0)
    return signed_volume(p, t) / (rms ** 3 / (6.0 * math.sqrt(2.0)))


def ball_mesh(radius, cells):
    """Points (m, centred on the origin) and positively oriented tets of the mapped cube."""
    assert cells % 2 == 0, "even, so that the poles are vertices and the octants whole cells"
    index = {}
    points = []
    half = cells // 2

    def vertex(c):
        c = tuple(c)
        if c not in index:
            x = [2.0 * ci / cells - 1.0 for ci in c]
            inf = max(abs(v) for v in x)
            l2 = math.sqrt(sum(v * v for v in x))
            f = inf / l2 if l2 > 0 else 0.0
            index[c] = len(points)
            points.append([r12(radius * v * f) for v in x])
        return index[c]

    # Vertices numbered in grid order first, so the numbering does not depend on the tet walk.
    for k in range(cells + 1):
        for j in range(cells + 1):
            for i in range(cells + 1):
                vertex((i, j, k))
    tets = []
    for k in range(cells):
        for j in range(cells):
            for i in range(cells):
                # The diagonal points away from the centre: +1 along an axis in the upper half.
                sign = [1 if c >= half else -1 for c in (i, j, k)]
                start = [c + (0 if s > 0 else 1) for c, s in zip((i, j, k), sign)]
                for order in KUHN_ORDERS:
                    c = list(start)
                    t = [vertex(c)]
                    for axis in order:
                        c[axis] += sign[axis]
                        t.append(vertex(c))
                    if signed_volume(points, t) < 0:
                        t[1], t[2] = t[2], t[1]
                    tets.append(t)
    assert len(points) == (cells + 1) ** 3
    # Flat facets at the six poles: each pole vertex is pulled in along its axis onto the plane of
    # its four edge neighbours (|p|_inf = 1 at (+-1/2, 0) across the face: radius R / sqrt(1.25)).
    for axis in range(3):
        for end in (0, cells):
            c = [half, half, half]
            c[axis] = end
            sign = 1.0 if end == cells else -1.0
            p = points[index[tuple(c)]]
            p[axis] = r12(sign * radius / math.sqrt(1.25))
    for t in tets:
        assert signed_volume(points, t) > 0, t
    return points, tets


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def main():
    points, tets = ball_mesh(RADIUS, CELLS)
    volume = sum(signed_volume(points, t) for t in tets)
    mass = DENSITY * volume
    worst = min(quality(points, t) for t in tets)
    os.makedirs(os.path.join(HERE, "assets"), exist_ok=True)
    node = ["# nsn_tomato.node: written by scenes/generate_nsn_tomato.py (edit that, not this)",
            "%d 3 0 0" % len(points)]
    for i, p in enumerate(points):
        node.append("%d %s" % (i, vec(p)))
    write(os.path.join(HERE, "assets", "nsn_tomato.node"), "\n".join(node) + "\n")
    ele = ["# nsn_tomato.ele: written by scenes/generate_nsn_tomato.py (edit that, not this)",
           "%d 4 0" % len(tets)]
    for i, t in enumerate(tets):
        ele.append("%d %d %d %d %d" % (i, t[0], t[1], t[2], t[3]))
    write(os.path.join(HERE, "assets", "nsn_tomato.ele"), "\n".join(ele) + "\n")

    flat = RADIUS / math.sqrt(1.25)  # the pole facets' distance from the centre
    tomato_z = flat + THICKNESS
    companion = """<!--
  nsn_tomato_deformables.xml: the tomato of nsn_tomato.xml (written by
  scenes/generate_nsn_tomato.py; edit that, not this). Macklin et al. 2019's Fetch Tomato (digest
  9.2 item 1): Y = 0.1 MPa, nu = 0.45, rho = 1000 kg/m^3, mu = 0.75. A ball of radius %s m,
  flat facets at its six poles, %d tets, %d vertices (assets/nsn_tomato.node, .ele; the mesh
  is centred on the origin), volume %s m^3, mass %s kg; material corotated, thickness %s m;
  resting on the floor at the origin.
-->
<deformables>
  <deformable name="tomato" node="assets/nsn_tomato.node" ele="assets/nsn_tomato.ele"
              material="corotated" young="%s" poisson="%s" density="%s" friction="%s"
              thickness="%s" rgba="%s" pos="0 0 %s" scale="1"/>
</deformables>
""" % (fmt(RADIUS), len(tets), len(points), "%.6g" % volume, "%.6g" % mass, fmt(THICKNESS),
       fmt(YOUNG), fmt(POISSON), fmt(DENSITY), fmt(FRICTION), fmt(THICKNESS), TOMATO_RGBA,
       fmt(r12(tomato_z)))
    write(os.path.join(HERE, "nsn_tomato_deformables.xml"), companion)

    palm_z = tomato_z + flat + PALM_CLEARANCE + PALM_HALF[2]  # world, at lift 0
    finger_y = FINGER_OPEN + FINGER_HALF[1]  # finger centre from the middle at closing 0
    finger_dz = tomato_z - palm_z  # finger centre below the palm's
    platform_z = PLATFORM_TOP - PLATFORM_HALF[2]
    springref = PLATFORM_MASS * GRAVITY / SCALE_K
    carriage_dz = palm_z - CARRIAGE_HEIGHT

    header = """<!--
  nsn_tomato.xml: Macklin et al. 2019's Fetch Tomato (seed 002, digest 9.2 item 1; Table 2: 4
  Newton x 50 linear iterations) with our own gripper: a soft tomato picked up by a parallel
  two-finger gripper and placed on a mechanical scale. Written by scenes/generate_nsn_tomato.py
  (its docstring gives every choice; edit it, not this). Needs solver nsn (the tomato is a free
  deformable: nsn_tomato_deformables.xml, mesh assets/nsn_tomato.node, .ele).

  Units SI; timestep h = 0.0083 s (the paper's); gravity -9.81 m/s^2 along z; condim 3.
  - tomato: ball of radius 0.035 m with flat facets at its six poles (3.13 cm from the centre),
    384 corotated tets, Y 1e5 Pa, nu 0.45, rho 1000 kg/m^3 (%s kg), mu 0.75 against everything,
    thickness 1 mm; on the floor at the origin.
  - gripper: carriage %s kg on slide_x (x), palm %s kg on lift (z, its centre %s m up at 0),
    fingers left / right %s kg on slides closing toward y = 0 (inner faces %s m from the middle
    at 0, touching the tomato at closing 0.0227 m). Position servos: slide_x and lift kp %s N/m
    (damping %s and %s N s/m), left and right kp %s N/m (damping %s N s/m); ctrl = the joint's
    target (m). Closing both to %s m squeezes the tomato with 5.67 N per finger.
  - scale: a %s kg platform (top %s m up, at x = %s m) on the vertical slide "scale" with
    stiffness k = %s N/m, damping %s N s/m and springref %s m (tared: unloaded it rests at 0);
    it reads -k qpos(scale) (the tomato: 1.578 N, 3.16 mm).
  tests/solver/nsn_coupling_test.cc: the scale reads the tomato's weight, a grasped tomato does
  not slip, the same state at 1, 2 and 8 threads; it scripts the pick and place.
-->
""" % ("%.4g" % mass, fmt(CARRIAGE_MASS), fmt(PALM_MASS), "%.4g" % palm_z, fmt(FINGER_MASS),
       fmt(FINGER_OPEN), fmt(SLIDE_KP), fmt(SLIDE_DAMPING), fmt(LIFT_DAMPING), fmt(FINGER_KP),
       fmt(FINGER_DAMPING), fmt(GRIP), fmt(PLATFORM_MASS), fmt(PLATFORM_TOP), fmt(SCALE_X),
       fmt(SCALE_K), fmt(SCALE_DAMPING), fmt(r12(springref)))

    finger_range = vec(FINGER_RANGE)
    lines = [
        '<mujoco model="nsn_tomato">',
        '  <option timestep="%s"/>' % fmt(H),
        '  <custom>',
        '    <text name="alsim:deformables" data="nsn_tomato_deformables.xml"/>',
        '  </custom>',
        '  <default>',
        '    <geom condim="3" friction="%s 0.005 0.0001"/>' % fmt(GRIPPER_FRICTION),
        '  </default>',
        '  <worldbody>',
        '    <geom name="floor" type="plane" size="1 1 0.1"/>',
        '    <geom name="scale_base" type="box" pos="%s" size="%s" contype="0" conaffinity="0" '
        'rgba="0.3 0.3 0.3 1"/>' % (vec((SCALE_X, 0, BASE_HALF[2])), vec(BASE_HALF)),
        '    <body name="platform" pos="%s">' % vec((SCALE_X, 0, platform_z)),
        '      <joint name="scale" type="slide" axis="0 0 1" limited="true" range="%s" '
        'stiffness="%s" springref="%s" damping="%s"/>'
        % (vec(SCALE_RANGE), fmt(SCALE_K), fmt(r12(springref)), fmt(SCALE_DAMPING)),
        '      <geom name="platform" type="box" size="%s" mass="%s" rgba="0.7 0.7 0.75 1"/>'
        % (vec(PLATFORM_HALF), fmt(PLATFORM_MASS)),
        '    </body>',
        '    <body name="carriage" pos="%s">' % vec((0, 0, CARRIAGE_HEIGHT)),
        '      <joint name="slide_x" type="slide" axis="1 0 0" limited="true" range="%s" '
        'damping="%s"/>' % (vec(SLIDE_RANGE), fmt(SLIDE_DAMPING)),
        '      <geom name="carriage" type="box" size="0.03 0.03 0.01" mass="%s" contype="0" '
        'conaffinity="0" rgba="0.4 0.4 0.4 1"/>' % fmt(CARRIAGE_MASS),
        '      <body name="palm" pos="%s">' % vec((0, 0, carriage_dz)),
        '        <joint name="lift" type="slide" axis="0 0 1" limited="true" range="%s" '
        'damping="%s"/>' % (vec(LIFT_RANGE), fmt(LIFT_DAMPING)),
        '        <geom name="palm" type="box" size="%s" mass="%s" rgba="0.2 0.2 0.25 1"/>'
        % (vec(PALM_HALF), fmt(PALM_MASS)),
        '        <body name="left" pos="%s">' % vec((0, finger_y, finger_dz)),
        '          <joint name="left" type="slide" axis="0 -1 0" limited="true" range="%s" '
        'damping="%s"/>' % (finger_range, fmt(FINGER_DAMPING)),
        '          <geom name="left" type="box" size="%s" mass="%s" rgba="0.2 0.4 0.8 1"/>'
        % (vec(FINGER_HALF), fmt(FINGER_MASS)),
        '        </body>',
        '        <body name="right" pos="%s">' % vec((0, -finger_y, finger_dz)),
        '          <joint name="right" type="slide" axis="0 1 0" limited="true" range="%s" '
        'damping="%s"/>' % (finger_range, fmt(FINGER_DAMPING)),
        '          <geom name="right" type="box" size="%s" mass="%s" rgba="0.2 0.4 0.8 1"/>'
        % (vec(FINGER_HALF), fmt(FINGER_MASS)),
        '        </body>',
        '      </body>',
        '    </body>',
        '  </worldbody>',
        '  <actuator>',
        '    <position name="slide_x" joint="slide_x" kp="%s" ctrllimited="true" ctrlrange="%s"/>'
        % (fmt(SLIDE_KP), vec(SLIDE_RANGE)),
        '    <position name="lift" joint="lift" kp="%s" ctrllimited="true" ctrlrange="%s"/>'
        % (fmt(LIFT_KP), vec(LIFT_RANGE)),
        '    <position name="left" joint="left" kp="%s" ctrllimited="true" ctrlrange="%s"/>'
        % (fmt(FINGER_KP), finger_range),
        '    <position name="right" joint="right" kp="%s" ctrllimited="true" ctrlrange="%s"/>'
        % (fmt(FINGER_KP), finger_range),
        '  </actuator>',
        '</mujoco>',
    ]
    write(os.path.join(HERE, "nsn_tomato.xml"), header + "\n".join(lines) + "\n")
    print("nsn_tomato: %d tets, %d vertices, volume %.6g m^3, mass %.6g kg, worst tet quality %.3f"
          % (len(tets), len(points), volume, mass, worst))


if __name__ == "__main__":
    main()
