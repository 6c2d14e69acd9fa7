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

Run from anywhere:

    python3 scenes/generate_nsn_scenes.py

Standard library only and deterministic: the table pile's tilts come from random.Random(SEED) and
every number is rounded before it is written, so the same script writes byte-identical files. The
generated files are committed; edit this script, not them.

Common choices: SI units (m, kg, s), the paper's step h = 0.0083 s (Table 2: every scene), default
gravity -9.81 m/s^2 along z, MuJoCo 2.2.2's compiler, condim 3 (the nsn solver refuses 4 and 6),
margin 0, every body its own free joint.

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


def main():
    arch()
    table_pile()
    heavy_stacks()


if __name__ == "__main__":
    main()
