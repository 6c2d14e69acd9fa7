#!/usr/bin/env python3
"""Writes the PneuNet gripper of the non-smooth Newton paper (Macklin et al. 2019, seed 002;
digest /work/shared/research/seed-002-nsn.md 9.1 Table 2's PneuNet row: 1 body, 2241 tets,
4 Newton x 80 linear iterations; 9.2 item 5, the paper's Sec 10.1.4 and Fig 2):

    nsn_pneunet.xml               the palm on its lift, the ball and the floor (MJCF)
    nsn_pneunet_deformables.xml   its companion (custom text alsim:deformables): three fingers,
                                  each an inline <tetmesh> (world coordinates, pos 0)

Run from anywhere:

    python3 scenes/generate_nsn_pneunet.py

Standard library only and deterministic (no randomness; every coordinate rounded to 1e-12 m
before it is written), so the same script writes byte-identical files. The generated files are
committed; edit this script, not them. Stepped by `--solver nsn` only (the other solvers refuse a
free deformable); tests/solver/nsn_pneunet_test.cc holds the tests that use it.

Common choices: SI units (m, kg, s, N), the paper's step h = 0.0083 s (Table 2: every scene),
default gravity -9.81 m/s^2 along z, condim 3 (nsn refuses 4 and 6), margin 0, the lift a MuJoCo
<position> actuator (kp) with the joint's damping beside it, no force limit (nsn refuses
force-limited servos).

The fingers (paper: three FEM fingers, 2241 tets in all, LINEAR isotropic silicone, Young's
modulus Y = 0.01 GPa = 1e7 Pa, Poisson nu = 0.47, rho = 1200 kg/m^3; inflation is an activation
that adds a uniform internal volumetric stress to the tets of the finger "arches", with no explicit
cavity; an inextensible lower "paper" layer). The paper gives no finger geometry, so ours:
- each finger a bar of NX x NY x NZ = 3 x 2 x 21 cells (thickness x width x length) of
  5 x 8 x 5 mm: 15 mm thick (radial), 16 mm wide (tangential), 105 mm long (vertical), the
  proportions of a PneuNet finger. Each cell is split into the six Kuhn tets about its main
  diagonal (tests/support/kuhn_grid.h's MakeKuhnGrid, the same vertex and tet numbering in the
  finger's own frame: vertex (x, y, z) = (z (NY + 1) + y) (NX + 1) + x, tets cell by cell, x
  fastest, then y, then z, six per cell in the order (x y z), (x z y), (y x z), (y z x), (z x y),
  (z y x); a negatively oriented one gets its 2nd and 3rd vertices swapped). 6 x 126 = 756 tets
  and 4 x 3 x 22 = 264 vertices per finger, 2268 tets in all: the nearest Kuhn grid to the
  paper's 2241 with three layers through the thickness (2241 / 3 = 747 is not a multiple of 6;
  2 x 2 x 31 cells would give 2232 tets but only two layers, which lock more in bending).
- material "linear" (the paper's; it is not rotation invariant, so large curls strain it
  spuriously: engine/deformable/tet_material.h), friction 0.7 (the ball's), thickness (skin)
  1 mm.
- the finger's frame: x radial (x = 0 the inner face, toward the ball), y tangential, z up from
  the tip (z = 0) to the base (z = L). Finger i sits at the angle 120 i degrees about the ball's
  vertical axis: world = (R_IN + x) e_r + (y - W / 2) e_t + (TIP_Z + z) e_z with e_r = (cos, sin,
  0), e_t = (-sin, cos, 0) (a right-handed frame, so the tets stay positively oriented).
- the paper layer: the inner layer of cells (x cell 0, 5 mm) is never activated. The engine has
  one material per deformable, so it cannot be made stiffer (or inextensible) per tet; an
  unactivated layer bonded to a growing one is what makes the bilayer bend (Timoshenko's bimetal
  strip), toward the unactivated side: the fingers curl inward, around the ball.
- the arch: the outer two layers (x cells 1 and 2, 10 mm) of every cell row but the base's
  (z cells 0 .. NZ - 2; the base row is the solid mount held by the palm, as in a real PneuNet
  whose chambers stop short of its inlet end): 480 tets per finger, the activation "fingerI"
  (range 0 .. ACTIVATION_MAX = 0.2; a control a grows those tets' rest shape by 1 + a). One
  activation per finger, so a policy may drive them apart; the tests drive them together.
  Timoshenko's bimetal formula with equal moduli and the thickness ratio m = 5 / 10 gives the
  curvature 1 / rho = 1.333 a / T (T = 15 mm): at a = 0.1 the free finger curls through L / rho =
  0.93 rad, its tip 4.5 cm inward.
- the base: the top face (z = L, 4 x 3 = 12 vertices) of each finger attached to the palm.
- mass: 1200 x 15 x 16 x 105 mm^3 = 0.0302 kg per finger.

The ball (paper: rigid, m = 0.32 kg, mu = 0.7; its size is not given): radius BALL_R = 4 cm
(density 1194 kg/m^3, a solid rubber ball), solid-sphere inertia, friction 0.7, on a freejoint,
resting on the floor at the origin (its centre at z = BALL_R). The fingers' inner faces are at
R_IN = 4.4 cm from its axis: 3 mm clear of its equator outside the fingers' 1 mm skin. Spheres
meet deformables through their surface triangles (docs/engine.md, Deformables).

The palm (Table 2 counts one body: ours is the palm; the ball is the second): a 0.5 kg box of
14 x 14 x 2 cm, its bottom at the fingers' base (TIP_Z + L = 0.13 m), visual only (contype 0 and
conaffinity 0: the fingers' attached vertices lie on its face and would otherwise touch it), on
the vertical slide "lift" (range -0.02 .. 0.15 m, damping 100 N s/m) held by the position servo
"lift" (kp 3000 N/m; critical damping 2 sqrt(kp m) = 95 N s/m for the 0.9 kg it may carry; the
palm, the fingers and the ball sag it 3 mm). TIP_Z = 2.5 cm: the straight fingers' tips hang
2.5 cm above the floor, 1.5 cm below the ball's equator, so that a curl closes them under it;
inflated, the fingers also lengthen (the arch by 1 + a), and at 1.5 cm the tips met the floor.

Floor: a plane, friction 0.7.

Actuators (ctrl order): "lift" (m, the slide's target), then the activations "finger0",
"finger1", "finger2" (appended after MuJoCo's actuators by the engine).

The grasp (tests/solver/nsn_pneunet_test.cc scripts it): ramp the activations to 0.2 over
0.25 s, hold 0.1 s, ramp lift to 0.05 m over 0.35 s, hold 0.15 s. Its gripper test runs a reduced
copy (2 x 1 x 7 cells per finger, 84 tets) built in the test, where the ball rises with the hand;
this scene at the paper's 4 Newton x 80 linear iterations does not converge (Y = 1e7 Pa on 5 mm
cells is stiff for Jacobi-preconditioned conjugate residuals) and the ball stays on the floor;
at the gripper test's 12 x 200 (still unconverged) it rises 5.6 cm with the palm's 4.9 cm
(measured with the test file's disabled DISABLED_TheScenesGraspAtTheTestsBudget).
"""

import math
import os

from scene_writer import fmt

H = 0.0083  # s, Table 2's step for every scene

# Fingers (digest 9.2 item 5).
NX, NY, NZ = 3, 2, 21  # cells: thickness (radial), width (tangential), length (vertical)
DX, DY, DZ = 0.005, 0.008, 0.005  # m
YOUNG = 1e7  # Pa (0.01 GPa)
POISSON = 0.47
DENSITY = 1200.0  # kg/m^3
MATERIAL = "linear"
FINGER_FRICTION = 0.7
SKIN = 0.001  # m, the deformable's thickness attribute
PAPER_CELLS = 1  # inner x cells never activated
ACTIVATION_MAX = 0.2
FINGERS = 3
FINGER_RGBA = ("0.95 0.55 0.2 1", "0.95 0.75 0.2 1", "0.9 0.4 0.3 1")

# Ball.
BALL_R = 0.04  # m
BALL_MASS = 0.32  # kg
BALL_FRICTION = 0.7
GAP = 0.004  # m, the fingers' inner faces from the ball's equator (skin included)
R_IN = BALL_R + GAP
TIP_Z = 0.025  # m, the straight fingers' tips above the floor

# Palm.
PALM_HALF = (0.07, 0.07, 0.01)  # m
PALM_MASS = 0.5  # kg
LIFT_KP = 3000.0  # N/m
LIFT_DAMPING = 100.0  # N s/m
LIFT_RANGE = (-0.02, 0.15)  # m

FLOOR_FRICTION = 0.7

HERE = os.path.dirname(os.path.abspath(__file__))

# MakeKuhnGrid's order of the six tets of a cell.
KUHN_ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def r12(x):
    """x rounded to 1e-12 (m), without a negative zero."""
    y = round(x, 12)
    return 0.0 if y == 0 else y


def vec(values):
    return " ".join(fmt(r12(v)) for v in values)


def vid(x, y, z):
    return (z * (NY + 1) + y) * (NX + 1) + x


def signed_volume(p, t):
    a, b, c, d = (p[i] for i in t)
    u = [b[k] - a[k] for k in range(3)]
    v = [c[k] - a[k] for k in range(3)]
    w = [d[k] - a[k] for k in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0


def kuhn_grid():
    """The finger in its own frame: points (m) and tets, MakeKuhnGrid's numbering."""
    points = []
    for z in range(NZ + 1):
        for y in range(NY + 1):
            for x in range(NX + 1):
                points.append((DX * x, DY * y, DZ * z))
    tets = []
    cells = []  # each tet's cell (x, y, z)
    for z in range(NZ):
        for y in range(NY):
            for x in range(NX):
                for order in KUHN_ORDERS:
                    c = [x, y, z]
                    t = [vid(*c)]
                    for axis in order:
                        c[axis] += 1
                        t.append(vid(*c))
                    if signed_volume(points, t) < 0:
                        t[1], t[2] = t[2], t[1]
                    tets.append(t)
                    cells.append((x, y, z))
    return points, tets, cells


def finger_world(points, angle):
    c, s = math.cos(angle), math.sin(angle)
    half_w = NY * DY / 2
    out = []
    for x, y, z in points:
        r, t = R_IN + x, y - half_w
        out.append((r12(r * c - t * s), r12(r * s + t * c), r12(TIP_Z + z)))
    return out


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def main():
    local, tets, cells = kuhn_grid()
    length = NZ * DZ
    thick = NX * DX
    width = NY * DY
    arch = [e for e, (x, _, z) in enumerate(cells) if x >= PAPER_CELLS and z <= NZ - 2]
    base = [vid(x, y, NZ) for y in range(NY + 1) for x in range(NX + 1)]
    finger_mass = DENSITY * thick * width * length
    palm_bottom = TIP_Z + length
    palm_z = palm_bottom + PALM_HALF[2]

    bodies = []
    for i in range(FINGERS):
        world = finger_world(local, 2 * math.pi * i / FINGERS)
        for t in tets:
            assert signed_volume(world, t) > 0, (i, t)
        vertices = " ".join(vec(p) for p in world)
        tet_text = " ".join("%d %d %d %d" % tuple(t) for t in tets)
        bodies.append(
            '  <deformable name="finger%d" material="%s" young="%s" poisson="%s" density="%s"\n'
            '              friction="%s" thickness="%s" rgba="%s">\n'
            '    <tetmesh vertices="%s"\n'
            '             tets="%s"/>\n'
            '    <attach body="palm" vertices="%s"/>\n'
            '    <activation name="finger%d" tets="%s" range="0 %s"/>\n'
            '  </deformable>\n'
            % (i, MATERIAL, fmt(YOUNG), fmt(POISSON), fmt(DENSITY), fmt(FINGER_FRICTION),
               fmt(SKIN), FINGER_RGBA[i], vertices, tet_text, " ".join(map(str, base)), i,
               " ".join(map(str, arch)), fmt(ACTIVATION_MAX)))

    companion = """<!--
  nsn_pneunet_deformables.xml: the three fingers of nsn_pneunet.xml (written by
  scenes/generate_nsn_pneunet.py; edit that, not this). Macklin et al. 2019's PneuNet (digest 9.2
  item 5): LINEAR silicone, Y = 1e7 Pa, nu = 0.47, rho = 1200 kg/m^3. Each finger: %d x %d x %d
  Kuhn cells (radial x tangential x vertical) of %s x %s x %s m, %d tets, %d vertices, %s kg,
  in world coordinates; its top face (%d vertices) attached to the palm; its outer two layers of
  cells (but the base's row: %d tets) the activation fingerI, range 0 .. %s (the arch; the inner
  layer is the unactivated paper layer). %d tets in all.
-->
<deformables>
%s</deformables>
""" % (NX, NY, NZ, fmt(DX), fmt(DY), fmt(DZ), len(tets), len(local), "%.4g" % finger_mass,
       len(base), len(arch), fmt(ACTIVATION_MAX), FINGERS * len(tets), "".join(bodies))
    write(os.path.join(HERE, "nsn_pneunet_deformables.xml"), companion)

    ball_inertia = 0.4 * BALL_MASS * BALL_R ** 2
    header = """<!--
  nsn_pneunet.xml: Macklin et al. 2019's PneuNet (seed 002, digest 9.2 item 5; Table 2: 2241
  tets, 4 Newton x 80 linear iterations): three soft pneumatic fingers hanging from a palm
  around a rigid ball on the floor; inflating them curls them around it and lifting the palm
  lifts it. Written by scenes/generate_nsn_pneunet.py (its docstring gives every choice; edit it,
  not this). Needs solver nsn (the fingers are deformables: nsn_pneunet_deformables.xml).

  Units SI; timestep h = 0.0083 s (the paper's); gravity -9.81 m/s^2 along z; condim 3.
  - fingers: 3 x %d linear tets (%d in all), Y 1e7 Pa, nu 0.47, rho 1200 kg/m^3, %s x %s x %s m
    (radial x tangential x vertical), 120 deg apart, inner faces %s m from the axis, tips %s m
    above the floor, bases attached to the palm; activations finger0..finger2 (ctrl 0 .. %s)
    grow their outer two layers (the arch) by 1 + a; the inner layer (paper layer) is never
    activated, so a finger curls inward.
  - ball: radius %s m, %s kg, mu %s, on the floor at the origin.
  - palm: %s kg, visual only, on the vertical slide "lift" (its bottom %s m up at 0), position
    servo kp %s N/m, damping %s N s/m; ctrl = the slide's target (m).
  tests/solver/nsn_pneunet_test.cc: a finger curls inward when inflated; the gripper lifts the
  ball when inflated and leaves it on the floor when not.
-->
""" % (len(tets), FINGERS * len(tets), fmt(thick), fmt(width), fmt(length), fmt(R_IN),
       fmt(TIP_Z), fmt(ACTIVATION_MAX), fmt(BALL_R), fmt(BALL_MASS), fmt(BALL_FRICTION),
       fmt(PALM_MASS), fmt(r12(palm_bottom)), fmt(LIFT_KP), fmt(LIFT_DAMPING))

    lines = [
        '<mujoco model="nsn_pneunet">',
        '  <option timestep="%s"/>' % fmt(H),
        '  <custom>',
        '    <text name="alsim:deformables" data="nsn_pneunet_deformables.xml"/>',
        '  </custom>',
        '  <default>',
        '    <geom condim="3" friction="%s 0.005 0.0001"/>' % fmt(FLOOR_FRICTION),
        '  </default>',
        '  <worldbody>',
        '    <geom name="floor" type="plane" size="1 1 0.1"/>',
        '    <body name="palm" pos="%s">' % vec((0, 0, palm_z)),
        '      <joint name="lift" type="slide" axis="0 0 1" limited="true" range="%s" '
        'damping="%s"/>' % (vec(LIFT_RANGE), fmt(LIFT_DAMPING)),
        '      <geom name="palm" type="box" size="%s" mass="%s" contype="0" conaffinity="0" '
        'rgba="0.3 0.3 0.35 1"/>' % (vec(PALM_HALF), fmt(PALM_MASS)),
        '    </body>',
        '    <body name="ball" pos="%s">' % vec((0, 0, BALL_R)),
        '      <freejoint name="ball"/>',
        '      <geom name="ball" type="sphere" size="%s" mass="%s" friction="%s 0.005 0.0001" '
        'rgba="0.2 0.5 0.9 1"/>' % (fmt(BALL_R), fmt(BALL_MASS), fmt(BALL_FRICTION)),
        '    </body>',
        '  </worldbody>',
        '  <actuator>',
        '    <position name="lift" joint="lift" kp="%s" ctrllimited="true" ctrlrange="%s"/>'
        % (fmt(LIFT_KP), vec(LIFT_RANGE)),
        '  </actuator>',
        '</mujoco>',
    ]
    write(os.path.join(HERE, "nsn_pneunet.xml"), header + "\n".join(lines) + "\n")
    print("nsn_pneunet: %d fingers x %d tets (%d), %d vertices each, %d arch tets each, "
          "finger mass %.4g kg, ball inertia %.4g kg m^2"
          % (FINGERS, len(tets), FINGERS * len(tets), len(local), len(arch), finger_mass,
             ball_inertia))


if __name__ == "__main__":
    main()
