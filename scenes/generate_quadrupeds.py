#!/usr/bin/env python3
"""Writes quadruped_drop_8.xml and quadruped_drop_27.xml: Laikago-like quadrupeds dropped on a floor.

The scenes reproduce the setup of Table III of the SubADMM paper (several Unitree Laikago robots,
18 DOF each, dropped on the floor and held by joint PD servos). Run from anywhere:

    python3 scenes/generate_quadrupeds.py

Standard library only and deterministic: the drop poses come from random.Random(SEED) and are
rounded before they are written, so the same script writes byte-identical files. The generated
files are committed; edit this script, not them.
"""

import math
import os
import random

SEED = 20230614  # fixed: changing it changes every drop pose

# ---- Laikago-like robot (SI units: m, kg, kg m^2, rad, N m) -----------------------------------
# Masses as in Unitree's public Laikago description (laikago_description), rounded; inertias of the
# same order, chosen consistent with the link shapes below (principal axes = body axes).
TRUNK_HALF = (0.28, 0.086, 0.05)  # box 0.56 x 0.172 x 0.10 m
TRUNK_MASS = 13.733
TRUNK_INERTIA = (0.0734, 0.2507, 0.2545)
HIP_X, HIP_Y = 0.22, 0.0875  # abduction joints at the trunk's four corners (trunk frame)
HIP_MASS = 1.096
HIP_INERTIA = (0.0008, 0.0010, 0.0009)
HIP_RADIUS = 0.041  # hip motor housing, a capsule across the body (y)
THIGH_OFFSET = 0.037  # lateral offset of the pitch joint from the abduction joint
THIGH_LENGTH = 0.25
THIGH_RADIUS = 0.022
THIGH_MASS = 1.528
THIGH_COM = -0.04  # along the thigh, from the pitch joint (the knee motor sits high)
THIGH_INERTIA = (0.0099, 0.0093, 0.0018)
CALF_LENGTH = 0.25  # knee to foot centre
CALF_RADIUS = 0.015
CALF_MASS = 0.241  # includes the foot
CALF_COM = -0.13
CALF_INERTIA = (0.0030, 0.0030, 0.00004)
FOOT_RADIUS = 0.0265
ARMATURE = 0.01  # reflected rotor inertia of each geared joint motor, kg m^2

# Posture at q = 0: each leg splayed outward by SPLAY about the trunk's x axis (like the default
# standing pose of Unitree robots in legged_gym, +-0.1 rad), each thigh is pitched back by THETA (knee behind the hip, as on Laikago) and the
# knee bent by -2 THETA, so the foot is 2 L cos(THETA) = 0.40 m from its hip along the splayed leg
# (the splay also lifts the pitch joint by THIGH_OFFSET sin(SPLAY)).
SPLAY = 0.1
THETA = math.acos(0.40 / (THIGH_LENGTH + CALF_LENGTH))  # 36.87 degrees
STAND_HEIGHT = (0.40 * math.cos(SPLAY) - THIGH_OFFSET * math.sin(SPLAY)
                + FOOT_RADIUS)  # trunk centre above the floor, standing at q = 0

# Joint ranges relative to the q = 0 posture (Laikago allows about -50..60 deg of abduction, and the
# absolute knee angle between -159 and -35 deg, i.e. -1.49..+0.67 rad from -2 THETA).
RANGE_ABDUCTION = (-0.8, 0.8)
RANGE_HIP_PITCH = (-1.0, 1.6)
RANGE_KNEE = (-1.4, 0.6)

# PD servo per hinge: force = KP ctrl - KP q - KD qdot, clamped to +-TORQUE (N m).
KP = 150.0
KD = 4.0
TORQUE = 35.0

LEGS = (("FR", 1, -1), ("FL", 1, 1), ("RR", -1, -1), ("RL", -1, 1))  # name, x sign, y sign

FRICTION = 0.5  # the SubADMM digest's default for the Laikago experiment (paper: not given)

SPACING = 0.9  # m between neighbouring robots


def fmt(x):
    """A number as the shortest decimal that reads back as the same double, without '-0'."""
    if x == 0:
        return "0"
    s = repr(float(x))
    if s.endswith(".0"):
        s = s[:-2]
    return s


def vec(*xs):
    return " ".join(fmt(x) for x in xs)


def quat_y(angle):
    """Unit quaternion (w x y z) of a rotation by angle about the y axis."""
    return (math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)


def quat_x(angle):
    """Unit quaternion (w x y z) of a rotation by angle about the x axis."""
    return (math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0)


def quat_rpy(roll, pitch, yaw):
    """Unit quaternion (w x y z) of Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


def rounded(values, digits):
    return tuple(round(v, digits) for v in values)


def robot_xml(i, pos, quat, mask, all_robots):
    """One robot as MJCF lines; `mask` is its own collision bit."""
    p = "r%d_" % i
    contact = 'contype="%d" conaffinity="%d"' % (mask, all_robots & ~mask)
    lines = []
    lines.append('    <body name="%strunk" pos="%s" quat="%s">' % (p, vec(*pos), vec(*quat)))
    lines.append('      <freejoint name="%sroot"/>' % p)
    lines.append('      <inertial pos="0 0 0" mass="%s" diaginertia="%s"/>'
                 % (fmt(TRUNK_MASS), vec(*TRUNK_INERTIA)))
    lines.append('      <geom name="%strunk" type="box" size="%s" %s/>'
                 % (p, vec(*TRUNK_HALF), contact))
    for leg, sx, sy in LEGS:
        q = p + leg + "_"
        lines.append('      <body name="%ship" pos="%s" quat="%s">'
                     % (q, vec(sx * HIP_X, sy * HIP_Y, 0), vec(*quat_x(sy * SPLAY))))
        lines.append('        <inertial pos="0 0 0" mass="%s" diaginertia="%s"/>'
                     % (fmt(HIP_MASS), vec(*HIP_INERTIA)))
        lines.append('        <joint name="%ship_abduction" axis="1 0 0" range="%s"/>'
                     % (q, vec(*RANGE_ABDUCTION)))
        lines.append('        <geom name="%ship" type="capsule" fromto="0 0 0 %s" size="%s" %s/>'
                     % (q, vec(0, sy * THIGH_OFFSET, 0), fmt(HIP_RADIUS), contact))
        lines.append('        <body name="%sthigh" pos="%s" quat="%s">'
                     % (q, vec(0, sy * THIGH_OFFSET, 0), vec(*quat_y(THETA))))
        lines.append('          <inertial pos="0 0 %s" mass="%s" diaginertia="%s"/>'
                     % (fmt(THIGH_COM), fmt(THIGH_MASS), vec(*THIGH_INERTIA)))
        lines.append('          <joint name="%ship_pitch" axis="0 1 0" range="%s"/>'
                     % (q, vec(*RANGE_HIP_PITCH)))
        lines.append('          <geom name="%sthigh" type="capsule" fromto="0 0 0 0 0 %s" size="%s" %s/>'
                     % (q, fmt(-THIGH_LENGTH), fmt(THIGH_RADIUS), contact))
        lines.append('          <body name="%scalf" pos="0 0 %s" quat="%s">'
                     % (q, fmt(-THIGH_LENGTH), vec(*quat_y(-2 * THETA))))
        lines.append('            <inertial pos="0 0 %s" mass="%s" diaginertia="%s"/>'
                     % (fmt(CALF_COM), fmt(CALF_MASS), vec(*CALF_INERTIA)))
        lines.append('            <joint name="%sknee" axis="0 1 0" range="%s"/>'
                     % (q, vec(*RANGE_KNEE)))
        lines.append('            <geom name="%scalf" type="capsule" fromto="0 0 0 0 0 %s" size="%s" %s/>'
                     % (q, fmt(-(CALF_LENGTH - FOOT_RADIUS)), fmt(CALF_RADIUS), contact))
        lines.append('            <geom name="%sfoot" type="sphere" pos="0 0 %s" size="%s" %s/>'
                     % (q, fmt(-CALF_LENGTH), fmt(FOOT_RADIUS), contact))
        lines.append('          </body>')
        lines.append('        </body>')
        lines.append('      </body>')
    lines.append('    </body>')
    return lines


def actuators_xml(i):
    p = "r%d_" % i
    lines = []
    for leg, _, _ in LEGS:
        for joint in ("hip_abduction", "hip_pitch", "knee"):
            name = "%s%s_%s" % (p, leg, joint)
            lines.append('    <general name="%s" joint="%s" class="pd"/>' % (name, name))
    return lines


def drop_poses(rows, cols, rng):
    """Grid positions, heights and orientations of rows x cols robots, centred on the origin."""
    poses = []
    for r in range(rows):
        for c in range(cols):
            x = (c - (cols - 1) / 2) * SPACING
            y = (r - (rows - 1) / 2) * SPACING
            z = rng.uniform(0.5, 0.65)
            roll = math.radians(rng.uniform(-20, 20))
            pitch = math.radians(rng.uniform(-20, 20))
            yaw = math.radians(rng.uniform(-40, 40))
            poses.append(((round(x, 4), round(y, 4), round(z, 3)),
                          rounded(quat_rpy(roll, pitch, yaw), 6)))
    return poses


HEADER = """<!--
  {n} Laikago-like quadrupeds dropped on a floor and held by joint PD servos: the scene of Table III
  of the SubADMM paper ({n} robots x 18 DOF = {nv} DOF, {n} subsystems). The paper reports about
  80-100 contacts for 8 robots built from boxes and spheres; these robots have single-sphere feet
  and most land standing, so there are fewer (8 robots: about 20-35 once landed in MuJoCo 2.2.2).
  Written by scenes/generate_quadrupeds.py (seed {seed} + {n}); edit the script, not this file.

  Units: SI (m, kg, s, rad, N, N m). Timestep 1/240 s, gravity -9.81 m/s^2 along z, MuJoCo 2.2.2.
  <size> only gives MuJoCo room for its contact buffers (alsim ignores it).

  Each robot r<i>_ is a trunk with a free joint (6 DOF) and four legs FR, FL, RR, RL, each with
  hinges hip_abduction (about the trunk's x axis), hip_pitch and knee (about y): 18 DOF, 12 actuators.
  - Masses from Unitree's public Laikago description, rounded: trunk {tm} kg (box 0.56 x 0.172 x
    0.10 m), hip {hm} kg (capsule across the body), thigh {thm} kg (capsule, 0.25 m), calf {cm} kg
    with its foot (capsule, 0.25 m to the centre of a foot sphere of radius {fr} m): {total:.3f} kg
    per robot. Every body has an explicit inertial (inertias of the order of the URDF's); each hinge
    has an armature of {arm} kg m^2 (reflected motor inertia).
  - Posture at q = 0: legs splayed outward by {splay:g} rad, thighs pitched back by {theta:.2f} deg
    (knees behind the hips, as on Laikago) and knees bent by -{knee:.2f} deg, so each foot is 0.40 m
    from its hip pitch joint along the leg and a robot standing at q = 0 has its trunk centre
    {stand:.4f} m above the floor (0.407 m once the servos carry the weight). Joint ranges are relative to q = 0.
  - Actuators: PD servos on every hinge, force = KP ctrl - KP q - KD qdot with KP = {kp:g} N m/rad,
    KD = {kd:g} N m s/rad, clamped to +-{tau:g} N m (a Laikago-class joint motor). Controls
    default to zero, so the servos hold the q = 0 standing posture.
  - Drop: robots on a {rows} x {cols} grid with {spacing} m spacing, trunk centres 0.5-0.65 m high
    (feet 0.07-0.22 m above the floor), roll and pitch up to +-20 deg and yaw up to +-40 deg, drawn
    from that seed. The stance is narrow, so some robots land on their feet and stay standing while
    others tip over their feet and knees and end on their backs (in MuJoCo 2.2.2, about two
    thirds stay standing).
  - Contact: friction {mu} on every geom (the value the project uses for the Laikago experiment;
    the paper does not give one), condim 3, margin 0. Collision filtering: robot i's geoms have
    contype = 2^i and conaffinity = every other robot's bit; the floor has contype 0 and conaffinity
    = every robot's bit. So robots collide with the floor and with each other (a robot that falls
    over can touch its neighbour), but a robot's own links never collide with each other (no
    self-collision, as in the usual Laikago models).
-->
"""


def scene_xml(rows, cols, rng):
    n = rows * cols
    all_robots = (1 << n) - 1
    total = TRUNK_MASS + 4 * (HIP_MASS + THIGH_MASS + CALF_MASS)
    out = [HEADER.format(n=n, nv=18 * n, seed=SEED, tm=TRUNK_MASS, hm=HIP_MASS, thm=THIGH_MASS,
                         cm=CALF_MASS, fr=FOOT_RADIUS, total=total, arm=ARMATURE,
                         theta=math.degrees(THETA), knee=math.degrees(2 * THETA),
                         stand=STAND_HEIGHT, splay=SPLAY, kp=KP, kd=KD, tau=TORQUE, rows=rows, cols=cols,
                         spacing=SPACING, mu=FRICTION)]
    out.append('<mujoco model="quadruped_drop_%d">' % n)
    out.append('  <compiler angle="radian"/>')
    out.append('  <option timestep="0.0041666666666666667" gravity="0 0 -9.81"/>')
    # Room for MuJoCo's contact and constraint buffers (its defaults, 100 contacts and 500 rows,
    # overflow with 27 robots); alsim sizes its own buffers and ignores these.
    out.append('  <size nconmax="%d" njmax="%d"/>' % (20 * n, 100 * n))
    out.append('  <default>')
    out.append('    <geom friction="%s 0.005 0.0001" condim="3" margin="0" gap="0"/>' % fmt(FRICTION))
    out.append('    <joint type="hinge" limited="true" armature="%s" damping="0"/>' % fmt(ARMATURE))
    out.append('    <default class="pd">')
    out.append('      <general gaintype="fixed" biastype="affine" gainprm="%s" biasprm="0 %s %s"'
               % (fmt(KP), fmt(-KP), fmt(-KD)))
    out.append('               forcelimited="true" forcerange="%s"/>' % vec(-TORQUE, TORQUE))
    out.append('    </default>')
    out.append('  </default>')
    out.append('  <worldbody>')
    out.append('    <geom name="floor" type="plane" size="0 0 1" contype="0" conaffinity="%d"/>'
               % all_robots)
    for i, (pos, quat) in enumerate(drop_poses(rows, cols, rng)):
        out.extend(robot_xml(i, pos, quat, 1 << i, all_robots))
    out.append('  </worldbody>')
    out.append('  <actuator>')
    for i in range(n):
        out.extend(actuators_xml(i))
    out.append('  </actuator>')
    out.append('</mujoco>')
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for rows, cols in ((2, 4), (3, 9)):
        rng = random.Random(SEED + rows * cols)  # each file its own stream
        path = os.path.join(here, "quadruped_drop_%d.xml" % (rows * cols))
        with open(path, "w") as f:
            f.write(scene_xml(rows, cols, rng))
        print("wrote", path)


if __name__ == "__main__":
    main()
