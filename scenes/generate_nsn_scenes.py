#!/usr/bin/env python3
"""Writes the rigid scenes of the non-smooth Newton paper (Macklin et al. 2019, seed 002; digest
/work/shared/research/seed-002-nsn.md sections 9.1-9.2 and 14, tests 10-11) for
bench/nsn_experiments.cc:

    nsn_arch.xml                 Fig. 14's self-supporting parabolic arch: 20 free voussoirs,
                                 masses 15-110 kg, mu 0.6
    nsn_table_pile.xml           Table 2's table pile: 54 tables (one free body each, a top and
                                 four legs), 4.7 kg, mu 0.7, dropped into a bin
    nsn_heavy_stack_<M>.xml      the mass-ratio test (digest test 10): a box of M kg on two 1 kg
                                 boxes, M = 8, 64, 512, 4096, 32768, mu 0.5
    nsn_heavy_stack_geometric.xml  the paper's own heavy stack (Sec 10.1.5): five boxes of 8, 64,
                                 512, 4096 and 32768 kg, the heaviest on top, mu 0.5
    nsn_redundant.xml            redundant contact sets at rest (digest 9.3, Sec 10.3 and test 17):
                                 a box on the floor (4 corner contacts) and one of the table pile's
                                 tables standing on its four legs (16), mu 0.7
    nsn_beam.xml                 Fetch Beam without the Fetch (Fig. 7, digest 9.2 item 2): a
                                 flexible beam of 16 rigid links of 0.003 kg on hinges of bending
                                 stiffness 250 N m/rad, held at its top by a clamp on a driven
                                 slide and pushed down through a funnel into a narrow slot

Run from anywhere:

    python3 scenes/generate_nsn_scenes.py

Standard library only and deterministic: the table pile's tilts come from random.Random(SEED) and
every number is rounded before it is written, so the same script writes byte-identical files. The
generated files are committed; edit this script, not them.

Common choices: SI units (m, kg, s), the paper's step h = 0.0083 s (Table 2: every scene), default
gravity -9.81 m/s^2 along z, MuJoCo 2.2.2's compiler, condim 3 (the nsn solver refuses 4 and 6),
margin 0, every body its own free joint.

The beam scene (no Fetch robot exists here; every number below is ours unless the paper gives
it): the paper gives the beam's 16 rigid links, 0.003 kg each, and the joints' bending stiffness
250 N m (read as N m/rad); its contacts come from inserting the beam into a fixture. Ours:
- Links: boxes BEAM_LINK_LENGTH long (0.4 m of beam), BEAM_THICKNESS thick in x (the bending
  direction) and BEAM_WIDTH wide in y, each its own body on a hinge about y at its top end, with
  stiffness BEAM_STIFFNESS (spring reference 0: straight) and no damping; link 0 hangs from the
  clamp by the same kind of hinge (16 hinges, as the paper's 16 joints of the beam). Boxes rather
  than capsules, so that a link lying against a wall touches it at up to four corners (redundant
  contacts, as a flat beam's). Adjacent links do not collide (MuJoCo's parent filtering).
- Clamp: a CLAMP_MASS body on a vertical slide joint from the world (it stands in for the robot's
  gripper: it holds the beam's top fixed in x and y and moves it in z only), driven by a position
  servo of stiffness CLAMP_KP (an implicit soft row in alsim). Its geom collides with nothing.
  The drive is the bench's (bench/nsn_experiments.cc, BeamControl): the servo's target goes down
  at BEAM_SPEED from 0 until it has moved BEAM_TRAVEL, then holds.
- Fixture: a slot of width SLOT_GAP (the beam's thickness plus 2 mm of clearance each side)
  between two static walls SLOT_DEPTH high standing on the floor (the slot's bottom), its
  centre line SLOT_OFFSET to the side of the beam's axis, and above it a 45 deg funnel
  FUNNEL_WIDTH wide on each side; each side (wall and funnel plate) is one convex mesh prism:
  with a box plate on a box wall, the tip caught on the wall's top face inside the plate. The
  beam's tip starts TIP_CLEARANCE above the funnel's top: it lands on the funnel's slope, is
  steered sideways into the slot (the beam bends into an S between the clamp and the slot),
  slides down the slot in contact with its walls, and reaches the floor at about BEAM_TRAVEL -
  BEAM_PUSH, after which the clamp presses it onto the floor by up to BEAM_PUSH through the
  servo: the contacts carry up to CLAMP_KP BEAM_PUSH (about 20 N) against links of 0.003 kg.
- Friction BEAM_FRICTION on every geom (the paper gives none for this scene), condim 3.
- The hinges' stiffness needs an implicit spring: on links of 0.003 kg and 2.5 cm, 250 N m/rad
  is far beyond an explicit spring's stable step at h = 0.0083 s. The nsn solver takes every
  hinge spring as a compliance row E = 1 / K (the paper's compliant joints) whatever the
  integrator; the other solvers need alsim's integrator implicit-euler (A holds h^2 K; MJCF 2.2.2
  cannot say so in the file).
- Steps: the paper's Fig. 16 runs 132 steps (1.1 s). By the geometry, at BEAM_SPEED the tip
  meets the funnel's slope after 0.032 m of travel (0.16 s) and the floor after 0.16 m (0.8 s):
  the run holds the pressed beam for its last 0.25 s.

The arch's blocks are convex mesh wedges (8 vertices each), not boxes: a curved arch needs joint
faces that meet flat, and boxes along a curve touch only at an edge, which makes every joint a
hinge and the arch a mechanism. alsim clips mesh faces against each other (convex_pairs.h), so each
joint and each springing gives up to four corner contacts.
"""

import math
import os
import random

from scene_writer import bin_walls, fmt

H = 0.0083  # s, Table 2's step for every scene

# Arch (Fig. 14; digest 9.2 item 6): the centre line is the parabola z = RISE (1 - (x / HALF)^2)
# from x = -HALF to HALF, cut into BLOCKS pieces of equal arc length by joint planes normal to it;
# each block spans the centre line +-thickness / 2 along the joint and DEPTH in y. The thickness
# tapers linearly with height from THICK_BASE at the springings to THICK_CROWN at the crown; the
# masses (the paper's range 15-110 kg) fall linearly from MASS_BASE at the two springing blocks to
# MASS_CROWN at the two crown blocks (mass attributes: inertia from the mesh scaled to that mass).
# The springing blocks' bottom faces are horizontal (cut by z = 0) so they stand flat on the
# floor. Thrust at the springings over the weight they carry: about HALF / (2 RISE) = 0.4 for a
# parabola under load uniform in x, below mu = 0.6, so the arch can stand by friction alone.
ARCH_BLOCKS = 20
ARCH_HALF = 2.0  # m, half span of the centre line at z = 0
ARCH_RISE = 2.5  # m, crown height of the centre line
ARCH_THICK_BASE = 0.45  # m
ARCH_THICK_CROWN = 0.3  # m
ARCH_DEPTH = 0.5  # m, along y
ARCH_MASS_BASE = 110.0  # kg
ARCH_MASS_CROWN = 15.0  # kg
ARCH_FRICTION = 0.6

# Table pile (Table 2: 54 bodies; Sec 10.1.5: 4.7 kg, mu 0.7): each table is one free body of five
# box geoms, a top TOP_HALF (half sizes) and four square legs LEG_HALF_WIDTH wide under its
# corners, inset by LEG_INSET; the 4.7 kg is split over the geoms by volume (uniform density).
# GRID x GRID tables per layer, PITCH apart, LAYERS layers LAYER_GAP apart from FIRST_HEIGHT up;
# each table turned by 0 or 90 deg about z (alternating per layer and position) and tilted by up to
# TILT rad about x and y (seeded), so the pile is irregular. The bin (scene_writer.bin_walls) keeps
# the pile together: its walls are static, so they join no islands.
SEED = 2019
TABLES_GRID = 3
TABLES_LAYERS = 6
TABLE_MASS = 4.7  # kg
TABLE_FRICTION = 0.7
TOP_HALF = (0.3, 0.2, 0.015)  # m: a 0.6 x 0.4 m top, 3 cm thick
LEG_HALF_WIDTH = 0.02  # m: 4 cm square legs
LEG_HALF_LENGTH = 0.125  # m: 0.25 m legs
LEG_INSET = 0.03  # m, leg centre from the top's edges
TABLE_PITCH = 0.7  # m between table centres in a layer
TABLE_FIRST_HEIGHT = 0.4  # m, the lowest layer's body origin (the top's centre)
TABLE_LAYER_GAP = 0.5  # m
TABLE_TILT = 0.25  # rad, at most, about x and about y
TABLE_BIN_HALF = 1.2  # m, inner half width of the bin
TABLE_WALL_HALF_THICKNESS = 0.05
TABLE_WALL_HALF_HEIGHT = 0.5

# Heavy stack (digest test 10, Fig. 17): cubes of STACK_HALF half size standing exactly on each
# other (gap 0) on the floor, mu 0.5. The ratio sweep puts one box of M kg on LIGHT_BOXES boxes of
# LIGHT_MASS; the geometric stack is the paper's five masses, lightest at the bottom.
STACK_HALF = 0.25  # m: 0.5 m cubes
STACK_FRICTION = 0.5
LIGHT_MASS = 1.0  # kg
LIGHT_BOXES = 2
HEAVY_MASSES = (8, 64, 512, 4096, 32768)  # kg

# Redundant contacts (Sec 10.3; digest test 17): a box and a table (the pile's) at rest.
REDUNDANT_BOX_HALF = 0.1  # m: a 0.2 m cube
REDUNDANT_BOX_MASS = 1.0  # kg

# Beam (Fig. 7; digest 9.2 item 2 and test 12): see the docstring.
BEAM_LINKS = 16
BEAM_LINK_MASS = 0.003  # kg, the paper's
BEAM_STIFFNESS = 250.0  # N m/rad, the paper's
BEAM_LINK_LENGTH = 0.025  # m
BEAM_THICKNESS = 0.004  # m, along x
BEAM_WIDTH = 0.02  # m, along y
BEAM_FRICTION = 0.5
CLAMP_MASS = 0.2  # kg
CLAMP_HALF = (0.02, 0.02, 0.01)  # m
CLAMP_KP = 2000.0  # N/m
BEAM_SPEED = 0.2  # m/s, the servo target's speed (bench/nsn_experiments.cc)
BEAM_PUSH = 0.01  # m, how far the target goes past the tip's first touch of the floor
SLOT_GAP = BEAM_THICKNESS + 0.004  # m
SLOT_DEPTH = 0.12  # m
SLOT_OFFSET = 0.012  # m, the slot's centre line from the beam's axis, along +x
SLOT_WALL_HALF = (0.02, 0.05)  # m, half the flat top's width (x) and half the depth (y)
FUNNEL_WIDTH = 0.03  # m, horizontal reach of each funnel plate from the slot's edge
TIP_CLEARANCE = 0.01  # m
BEAM_TRAVEL = SLOT_DEPTH + FUNNEL_WIDTH + TIP_CLEARANCE + BEAM_PUSH  # m


def header(model, comment, friction, size=None):
    """The file's opening: the comment, <mujoco>, <option>, <size> and the geom default."""
    lines = ["<!--"] + ["  " + line if line else "" for line in comment.strip("\n").split("\n")]
    lines += ["-->", '<mujoco model="%s">' % model, '  <option timestep="%s"/>' % fmt(H)]
    if size is not None:
        lines.append('  <size nconmax="%d" njmax="%d"/>' % size)
    lines += ["  <default>",
              '    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>'
              % fmt(friction),
              "  </default>"]
    return lines


def write(name, lines):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def r6(x):
    return fmt(round(x, 6))


def arch_stations():
    """Joint stations: arc-length parameter points on the parabola, as (x, z, tangent angle)."""
    samples = 20000
    xs = [-ARCH_HALF + 2 * ARCH_HALF * k / samples for k in range(samples + 1)]

    def z(x):
        return ARCH_RISE * (1 - (x / ARCH_HALF) ** 2)

    s = [0.0]
    for k in range(samples):
        s.append(s[-1] + math.hypot(xs[k + 1] - xs[k], z(xs[k + 1]) - z(xs[k])))
    stations = []
    k = 0
    for j in range(ARCH_BLOCKS + 1):
        target = s[-1] * j / ARCH_BLOCKS
        while k < samples and s[k + 1] < target:
            k += 1
        k1 = min(k + 1, samples)
        f = 0 if s[k1] == s[k] else (target - s[k]) / (s[k1] - s[k])
        x = xs[k] + f * (xs[k1] - xs[k])
        slope = -2 * ARCH_RISE * x / ARCH_HALF ** 2
        stations.append((x, z(x), math.atan2(slope, 1.0)))
    return stations, s[-1]


def arch():
    stations, length = arch_stations()
    faces = []  # per joint: (inner point, outer point) in the xz plane
    for j, (x, z, angle) in enumerate(stations):
        t = abs(z) / ARCH_RISE if ARCH_RISE else 0
        thick = ARCH_THICK_BASE + (ARCH_THICK_CROWN - ARCH_THICK_BASE) * t
        if j == 0 or j == ARCH_BLOCKS:  # springings: horizontal faces on the floor
            faces.append(((x + math.copysign(thick / 2, -x), 0.0),
                          (x - math.copysign(thick / 2, -x), 0.0)))
            continue
        # The joint's direction: normal to the tangent (cos a, sin a) in the xz plane, pointing
        # to the outside (away from the parabola's focus side, i.e. with positive z part).
        nx, nz = -math.sin(angle), math.cos(angle)
        faces.append(((x - nx * thick / 2, z - nz * thick / 2),
                      (x + nx * thick / 2, z + nz * thick / 2)))
    half_blocks = ARCH_BLOCKS // 2
    assets, bodies = [], []
    for b in range(ARCH_BLOCKS):
        quad = [faces[b][0], faces[b][1], faces[b + 1][1], faces[b + 1][0]]
        cx = sum(p[0] for p in quad) / 4
        cz = sum(p[1] for p in quad) / 4
        from_base = min(b, ARCH_BLOCKS - 1 - b)  # 0 at a springing, half_blocks - 1 at the crown
        mass = ARCH_MASS_BASE + (ARCH_MASS_CROWN - ARCH_MASS_BASE) * from_base / (half_blocks - 1)
        verts = []
        for (px, pz) in quad:
            for y in (-ARCH_DEPTH / 2, ARCH_DEPTH / 2):
                verts += [r6(px - cx), r6(y), r6(pz - cz)]
        assets.append('    <mesh name="block%d" vertex="%s"/>' % (b, " ".join(verts)))
        bodies += ['    <body name="block%d" pos="%s 0 %s">' % (b, r6(cx), r6(cz)),
                   '      <freejoint name="block%d"/>' % b,
                   '      <geom name="block%d" type="mesh" mesh="block%d" mass="%s"/>'
                   % (b, b, r6(mass)),
                   "    </body>"]
    masses = [ARCH_MASS_BASE + (ARCH_MASS_CROWN - ARCH_MASS_BASE) * min(b, ARCH_BLOCKS - 1 - b)
              / (half_blocks - 1) for b in range(ARCH_BLOCKS)]
    comment = """
Fig. 14 of the non-smooth Newton paper (Macklin et al. 2019; digest seed-002-nsn.md 9.2 item 6,
test 11): a self-supporting parabolic arch of {n} free blocks standing on the floor, mu {mu}.
Written by scenes/generate_nsn_scenes.py; edit the script, not this file.

Units: SI (m, kg, s). Timestep {h} s (the paper's, Table 2), gravity -9.81 m/s^2 along z,
MuJoCo 2.2.2.

- Centre line: z = {rise} (1 - (x / {half})^2), {length} m long, cut into {n} blocks of equal arc
  length by joint planes normal to it; the two springing blocks' bottom faces are horizontal and
  lie exactly on the floor (z = 0).
- Blocks: convex mesh wedges (8 vertices: the joint faces' corners, {depth} m deep in y), so
  neighbours meet face to face (boxes along a curve would touch at an edge only); thickness along
  the joint from {tb} m at the springings to {tc} m at the crown (linear in height); masses from
  {mb} kg (springings) to {mc} kg (crown), linear in the block's place (total {total} kg), inertia
  from the mesh scaled to the mass; each block its own free body, its origin at its corners' mean.
- Start: at rest, exactly in place (gaps 0 up to the 1 um rounding of the vertices).
- Contact: friction {mu} on every geom, condim 3, margin 0; up to four corner contacts per joint
  (mesh faces clipped against each other).
""".format(n=ARCH_BLOCKS, mu=fmt(ARCH_FRICTION), h=fmt(H), rise=fmt(ARCH_RISE),
           half=fmt(ARCH_HALF), length=r6(round(length, 3)), depth=fmt(ARCH_DEPTH),
           tb=fmt(ARCH_THICK_BASE), tc=fmt(ARCH_THICK_CROWN), mb=fmt(ARCH_MASS_BASE),
           mc=fmt(ARCH_MASS_CROWN), total=r6(round(sum(masses), 3)))
    lines = header("nsn_arch", comment, ARCH_FRICTION)
    lines += ["  <asset>"] + assets + ["  </asset>", "  <worldbody>",
                                        '    <geom name="floor" type="plane" size="0 0 1"/>']
    lines += bodies + ["  </worldbody>", "</mujoco>"]
    write("nsn_arch.xml", lines)


def quat_xyz(rx, ry, rz):
    """Unit quaternion (w x y z) of the rotation Rz(rz) Ry(ry) Rx(rx)."""
    cx, sx = math.cos(rx / 2), math.sin(rx / 2)
    cy, sy = math.cos(ry / 2), math.sin(ry / 2)
    cz, sz = math.cos(rz / 2), math.sin(rz / 2)
    return (cz * cy * cx + sz * sy * sx, cz * cy * sx - sz * sy * cx,
            cz * sy * cx + sz * cy * sx, sz * cy * cx - cz * sy * sx)


def table_pile():
    rng = random.Random(SEED)
    top_volume = 8 * TOP_HALF[0] * TOP_HALF[1] * TOP_HALF[2]
    leg_volume = 8 * LEG_HALF_WIDTH * LEG_HALF_WIDTH * LEG_HALF_LENGTH
    density = TABLE_MASS / (top_volume + 4 * leg_volume)
    top_mass = density * top_volume
    leg_mass = density * leg_volume
    # Neighbours are turned 90 deg to each other: their tops reach TOP_HALF[0] + TOP_HALF[1]
    # towards each other, less than the pitch with room for the tilts; the half diagonal must fit
    # the bin.
    radius = math.hypot(TOP_HALF[0], TOP_HALF[1])
    assert TOP_HALF[0] + TOP_HALF[1] + 0.1 < TABLE_PITCH
    extent = (TABLES_GRID - 1) / 2 * TABLE_PITCH + radius
    assert extent < TABLE_BIN_HALF, extent
    # Tilted by TILT, a table reaches radius sin(TILT) + leg length below/above its top: the
    # layers must clear each other.
    reach = radius * math.sin(TABLE_TILT) + 2 * LEG_HALF_LENGTH + TOP_HALF[2]
    assert 2 * reach < TABLE_LAYER_GAP + 0.35, reach
    leg_z = -TOP_HALF[2] - LEG_HALF_LENGTH
    leg_x = TOP_HALF[0] - LEG_INSET
    leg_y = TOP_HALF[1] - LEG_INSET
    bodies = []
    n = 0
    for layer in range(TABLES_LAYERS):
        z = TABLE_FIRST_HEIGHT + TABLE_LAYER_GAP * layer
        for i in range(TABLES_GRID):
            for j in range(TABLES_GRID):
                x = (i - (TABLES_GRID - 1) / 2) * TABLE_PITCH
                y = (j - (TABLES_GRID - 1) / 2) * TABLE_PITCH
                yaw = math.pi / 2 if (layer + i + j) % 2 else 0.0
                q = quat_xyz(rng.uniform(-TABLE_TILT, TABLE_TILT),
                             rng.uniform(-TABLE_TILT, TABLE_TILT), yaw)
                bodies += ['    <body name="table%d" pos="%s %s %s" quat="%s">'
                           % (n, r6(x), r6(y), r6(z), " ".join(r6(c) for c in q)),
                           '      <freejoint name="table%d"/>' % n,
                           '      <geom name="table%d_top" type="box" size="%s" mass="%s"/>'
                           % (n, " ".join(fmt(v) for v in TOP_HALF), r6(top_mass))]
                for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
                    bodies.append(
                        '      <geom name="table%d_leg%d" type="box" pos="%s %s %s" size="%s %s %s"'
                        ' mass="%s"/>' % (n, k, r6(sx * leg_x), r6(sy * leg_y), r6(leg_z),
                                          fmt(LEG_HALF_WIDTH), fmt(LEG_HALF_WIDTH),
                                          fmt(LEG_HALF_LENGTH), r6(leg_mass)))
                bodies.append("    </body>")
                n += 1
    comment = """
Table 2's table pile of the non-smooth Newton paper (Macklin et al. 2019; digest seed-002-nsn.md
9.1 and 9.2 item 6): {n} tables, {m} kg each, mu {mu}, dropped into a bin where they pile up
(stick-slip transitions, non-convex bodies). Written by scenes/generate_nsn_scenes.py (seed {seed});
edit the script, not this file.

Units: SI (m, kg, s). Timestep {h} s (the paper's, Table 2), gravity -9.81 m/s^2 along z,
MuJoCo 2.2.2. <size> only gives MuJoCo room for its contact buffers (alsim ignores it).

- Tables: each one free body of five box geoms: a {tx} x {ty} x {tz} m top and four {lw} x {lw} x
  {ll} m legs under it, {inset} m in from the top's edges; {m} kg split by volume (top {mt} kg,
  legs {ml} kg each); the body origin is the top's centre. {n} subsystems, nv = {nv}.
- Start: at rest, {g} x {g} tables per layer {pitch} m apart, {layers} layers with the tops at
  z = {z0} + {dz} k m; turned 0 or 90 deg about z (alternating) and tilted by up to +-{tilt} rad
  about x and y (seeded), no two touching.
- Bin: four static box walls on the floor, {wh} m high and {wt} m thick, inner size {inner} x
  {inner} m, centred on the origin.
- Contact: friction {mu} on every geom, condim 3, margin 0.
""".format(n=n, m=fmt(TABLE_MASS), mu=fmt(TABLE_FRICTION), seed=SEED, h=fmt(H),
           tx=fmt(2 * TOP_HALF[0]), ty=fmt(2 * TOP_HALF[1]), tz=fmt(2 * TOP_HALF[2]),
           lw=fmt(2 * LEG_HALF_WIDTH), ll=fmt(2 * LEG_HALF_LENGTH), inset=fmt(LEG_INSET),
           mt=r6(round(top_mass, 4)), ml=r6(round(leg_mass, 4)), nv=6 * n, g=TABLES_GRID,
           pitch=fmt(TABLE_PITCH), layers=TABLES_LAYERS, z0=fmt(TABLE_FIRST_HEIGHT),
           dz=fmt(TABLE_LAYER_GAP), tilt=fmt(TABLE_TILT), wh=fmt(2 * TABLE_WALL_HALF_HEIGHT),
           wt=fmt(2 * TABLE_WALL_HALF_THICKNESS), inner=fmt(2 * TABLE_BIN_HALF))
    lines = header("nsn_table_pile", comment, TABLE_FRICTION, size=(1500, 3000))
    lines.append("  <worldbody>")
    lines += bin_walls(TABLE_BIN_HALF, TABLE_WALL_HALF_THICKNESS, TABLE_WALL_HALF_HEIGHT)
    lines += bodies + ["  </worldbody>", "</mujoco>"]
    write("nsn_table_pile.xml", lines)


def stack(name, masses, comment):
    """A stack of cubes of the given masses, bottom first, on the floor."""
    lines = header(name, comment, STACK_FRICTION)
    lines += ["  <worldbody>", '    <geom name="floor" type="plane" size="0 0 1"/>']
    for k, mass in enumerate(masses):
        lines += ['    <body name="box%d" pos="0 0 %s">' % (k, fmt(STACK_HALF * (2 * k + 1))),
                  '      <freejoint name="box%d"/>' % k,
                  '      <geom name="box%d" type="box" size="%s %s %s" mass="%s"/>'
                  % (k, fmt(STACK_HALF), fmt(STACK_HALF), fmt(STACK_HALF), fmt(mass)),
                  "    </body>"]
    lines += ["  </worldbody>", "</mujoco>"]
    write(name + ".xml", lines)


STACK_COMMON = """
Units: SI (m, kg, s). Timestep {h} s (the paper's, Table 2), gravity -9.81 m/s^2 along z,
MuJoCo 2.2.2.

- Boxes: {size} m cubes (inertia from the geom at the given mass), each its own free body, box k
  (bottom first) centred at z = {half} (2 k + 1): exactly on each other and on the floor (gap 0).
- Contact: friction {mu} on every geom, condim 3, margin 0; four corner contacts per interface.
"""


def heavy_stacks():
    common = STACK_COMMON.format(h=fmt(H), size=fmt(2 * STACK_HALF), half=fmt(STACK_HALF),
                                 mu=fmt(STACK_FRICTION))
    for mass in HEAVY_MASSES:
        masses = [LIGHT_MASS] * LIGHT_BOXES + [mass]
        comment = """
The mass-ratio stress test of the non-smooth Newton paper (Macklin et al. 2019, Sec 10.1.5 and
Fig. 17; digest seed-002-nsn.md test 10): a {m} kg box on {k} boxes of {l} kg (ratio {ratio}:1),
standing on the floor. Written by scenes/generate_nsn_scenes.py; edit the script, not this file.
""".format(m=mass, k=LIGHT_BOXES, l=fmt(LIGHT_MASS), ratio=fmt(mass / LIGHT_MASS)) + common
        stack("nsn_heavy_stack_%d" % mass, masses, comment)
    comment = """
The heavy stack of the non-smooth Newton paper (Macklin et al. 2019, Sec 10.1.5 and Fig. 17;
digest seed-002-nsn.md 9.2 item 6): five boxes of geometrically increasing mass, {masses} kg from
the bottom up (the heaviest on top), total mass ratio 4096:1. Written by
scenes/generate_nsn_scenes.py; edit the script, not this file.
""".format(masses=", ".join(str(m) for m in HEAVY_MASSES)) + common
    stack("nsn_heavy_stack_geometric", list(HEAVY_MASSES), comment)


def beam():
    h = 0.5 * BEAM_LINK_LENGTH
    tip_z = SLOT_DEPTH + FUNNEL_WIDTH + TIP_CLEARANCE
    clamp_z = tip_z + BEAM_LINKS * BEAM_LINK_LENGTH + CLAMP_HALF[2]
    # Each side of the fixture is one convex mesh prism (wall and funnel plate together), so that
    # no internal face between two static geoms can catch the tip at the slot's mouth (a box wall
    # under a box plate exposes the wall's top face within the plate). In the xz plane, going
    # round: the slot's edge at the floor and at SLOT_DEPTH, the funnel's rim, the outer top
    # corner, the outer foot; SLOT_WALL_HALF[1] deep in y. Vertices relative to their mean (the
    # geom's pos), as the arch's.
    statics = ['    <geom name="floor" type="plane" size="0 0 1"/>']
    assets = []
    for side, sign in (("left", -1), ("right", 1)):
        x_in = SLOT_OFFSET + sign * SLOT_GAP / 2
        x_rim = x_in + sign * FUNNEL_WIDTH
        x_out = x_rim + sign * 2 * SLOT_WALL_HALF[0]
        top = SLOT_DEPTH + FUNNEL_WIDTH
        outline = [(x_in, 0.0), (x_in, SLOT_DEPTH), (x_rim, top), (x_out, top), (x_out, 0.0)]
        cx = sum(p[0] for p in outline) / len(outline)
        cz = sum(p[1] for p in outline) / len(outline)
        verts = []
        for (px, pz) in outline:
            for y in (-SLOT_WALL_HALF[1], SLOT_WALL_HALF[1]):
                verts += [r6(px - cx), r6(y), r6(pz - cz)]
        assets.append('    <mesh name="fixture_%s" vertex="%s"/>' % (side, " ".join(verts)))
        statics.append('    <geom name="fixture_%s" type="mesh" mesh="fixture_%s" pos="%s 0 %s"/>'
                       % (side, side, r6(cx), r6(cz)))
    bodies = ['    <body name="clamp" pos="0 0 %s">' % r6(clamp_z),
              '      <joint name="clamp" type="slide" axis="0 0 1"/>',
              '      <geom name="clamp" type="box" size="%s" mass="%s" contype="0" '
              'conaffinity="0"/>' % (" ".join(fmt(v) for v in CLAMP_HALF), fmt(CLAMP_MASS))]
    indent = "      "
    for i in range(BEAM_LINKS):
        pos = -CLAMP_HALF[2] if i == 0 else -BEAM_LINK_LENGTH
        bodies += [indent + '<body name="link%d" pos="0 0 %s">' % (i, r6(pos)),
                   indent + '  <joint name="hinge%d" type="hinge" axis="0 1 0" stiffness="%s"/>'
                   % (i, fmt(BEAM_STIFFNESS)),
                   indent + '  <geom name="link%d" type="box" pos="0 0 %s" size="%s %s %s" '
                   'mass="%s"/>' % (i, r6(-h), fmt(BEAM_THICKNESS / 2), fmt(BEAM_WIDTH / 2),
                                    r6(h), fmt(BEAM_LINK_MASS))]
        indent += "  "
    for i in range(BEAM_LINKS, -1, -1):
        bodies.append("    " + "  " * i + "</body>")
    comment = """
Fetch Beam of the non-smooth Newton paper without the Fetch robot (Macklin et al. 2019, Fig. 7;
digest seed-002-nsn.md 9.2 item 2, Table 2, Fig. 16): a flexible beam of {n} rigid links of {m} kg
on hinges of bending stiffness {k} N m/rad, held at its top by a clamp on a driven vertical slide
and pushed down through a funnel into a narrow slot. Written by scenes/generate_nsn_scenes.py;
edit the script, not this file (its docstring explains every choice).

Units: SI (m, kg, s). Timestep {h} s (the paper's, Table 2), gravity -9.81 m/s^2 along z,
MuJoCo 2.2.2. Its hinges' springs need an implicit step: `--solver nsn` makes them compliance
rows; other solvers need alsim's integrator implicit-euler.

- Beam: {n} box links {l} x {w} x {t} m (length, y width, x thickness), {m} kg each, each on a
  hinge about y at its top with stiffness {k} N m/rad (straight at rest), no damping; link 0
  hangs from the clamp. Initially straight and vertical, its tip at z = {tip}.
- Clamp: {cm} kg on a vertical slide, position servo kp {kp} N/m (actuator "drive", ctrl in m
  of slide travel, 0 at the start). The bench lowers the target at {v} m/s by {travel} m, then
  holds it: the tip reaches the floor {push} m before the target stops.
- Slot: {gap} m wide between two static walls {depth} m high on the floor, centred at
  x = {off}; a 45 deg funnel above it reaching {fw} m out on each side; each side's wall and
  funnel plate are one convex mesh prism (no internal faces at the slot's mouth).
- Contact: friction {mu} on every geom, condim 3, margin 0; the clamp collides with nothing.
""".format(n=BEAM_LINKS, m=fmt(BEAM_LINK_MASS), k=fmt(BEAM_STIFFNESS), h=fmt(H),
           l=fmt(BEAM_LINK_LENGTH), w=fmt(BEAM_WIDTH), t=fmt(BEAM_THICKNESS), tip=r6(tip_z),
           cm=fmt(CLAMP_MASS), kp=fmt(CLAMP_KP), v=fmt(BEAM_SPEED), travel=r6(BEAM_TRAVEL),
           push=fmt(BEAM_PUSH), gap=r6(SLOT_GAP), depth=fmt(SLOT_DEPTH), off=fmt(SLOT_OFFSET),
           fw=fmt(FUNNEL_WIDTH), mu=fmt(BEAM_FRICTION))
    lines = header("nsn_beam", comment, BEAM_FRICTION)
    lines += ["  <asset>"] + assets + ["  </asset>"]
    lines += ["  <worldbody>"] + statics + bodies + ["  </worldbody>", "  <actuator>",
                                                    '    <position name="drive" joint="clamp" '
                                                    'kp="%s"/>' % fmt(CLAMP_KP),
                                                    "  </actuator>", "</mujoco>"]
    write("nsn_beam.xml", lines)


def redundant():
    """A box and a table at rest on the floor, for FB against min-map force noise (Sec 10.3)."""
    top_volume = 8 * TOP_HALF[0] * TOP_HALF[1] * TOP_HALF[2]
    leg_volume = 8 * LEG_HALF_WIDTH * LEG_HALF_WIDTH * LEG_HALF_LENGTH
    density = TABLE_MASS / (top_volume + 4 * leg_volume)
    leg_x = TOP_HALF[0] - LEG_INSET
    leg_y = TOP_HALF[1] - LEG_INSET
    table_z = 2 * LEG_HALF_LENGTH + TOP_HALF[2]  # the legs' feet exactly on the floor
    bodies = ['    <body name="box" pos="-0.6 0 %s">' % fmt(REDUNDANT_BOX_HALF),
              '      <freejoint name="box"/>',
              '      <geom name="box" type="box" size="%s %s %s" mass="%s"/>'
              % (fmt(REDUNDANT_BOX_HALF), fmt(REDUNDANT_BOX_HALF), fmt(REDUNDANT_BOX_HALF),
                 fmt(REDUNDANT_BOX_MASS)),
              "    </body>",
              '    <body name="table" pos="0.6 0 %s">' % r6(table_z),
              '      <freejoint name="table"/>',
              '      <geom name="table_top" type="box" size="%s" mass="%s"/>'
              % (" ".join(fmt(v) for v in TOP_HALF), r6(density * top_volume))]
    for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        bodies.append('      <geom name="table_leg%d" type="box" pos="%s %s %s" size="%s %s %s" '
                      'mass="%s"/>' % (k, r6(sx * leg_x), r6(sy * leg_y),
                                       r6(-TOP_HALF[2] - LEG_HALF_LENGTH), fmt(LEG_HALF_WIDTH),
                                       fmt(LEG_HALF_WIDTH), fmt(LEG_HALF_LENGTH),
                                       r6(density * leg_volume)))
    bodies.append("    </body>")
    comment = """
Redundant contact sets at rest for the non-smooth Newton paper's NCP-function comparison
(Macklin et al. 2019, Sec 10.3; digest seed-002-nsn.md 9.3 and test 17: min-map gives noisy
contact force distributions on redundant contacts, Fischer-Burmeister smooth ones). Written by
scenes/generate_nsn_scenes.py; edit the script, not this file.

Units: SI (m, kg, s). Timestep {h} s (the paper's, Table 2), gravity -9.81 m/s^2 along z,
MuJoCo 2.2.2.

- Box: a {b} m cube of {bm} kg resting on the floor (gap 0): four corner contacts carry its
  weight, statically indeterminate.
- Table: one of the table pile's tables ({m} kg: a {tx} x {ty} m top on four {lw} m square legs
  {ll} m long), standing on its legs exactly on the floor: four contacts per foot, 16 in all.
- Contact: friction {mu} on every geom (the pile's), condim 3, margin 0.
""".format(h=fmt(H), b=fmt(2 * REDUNDANT_BOX_HALF), bm=fmt(REDUNDANT_BOX_MASS),
           m=fmt(TABLE_MASS), tx=fmt(2 * TOP_HALF[0]), ty=fmt(2 * TOP_HALF[1]),
           lw=fmt(2 * LEG_HALF_WIDTH), ll=fmt(2 * LEG_HALF_LENGTH), mu=fmt(TABLE_FRICTION))
    lines = header("nsn_redundant", comment, TABLE_FRICTION)
    lines += ["  <worldbody>", '    <geom name="floor" type="plane" size="0 0 1"/>']
    lines += bodies + ["  </worldbody>", "</mujoco>"]
    write("nsn_redundant.xml", lines)


def main():
    arch()
    table_pile()
    heavy_stacks()
    beam()
    redundant()


if __name__ == "__main__":
    main()
