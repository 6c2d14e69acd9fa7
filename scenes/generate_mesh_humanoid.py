#!/usr/bin/env python3
"""Writes mesh_humanoid.xml: a procedurally generated humanoid whose 13 collision geoms are convex
meshes of 2562 vertices each (33,306 in all), dropped 1 cm above a floor with zero controls so
that it collapses and comes to rest on the floor and on itself: the mesh-heavy robot of issue 32
(plane-mesh and mesh-mesh contacts, hinge chains).

Run from anywhere:

    python3 scenes/generate_mesh_humanoid.py

Standard library only and deterministic. Each link is an icosphere (4 subdivisions of an
icosahedron: 2562 vertices) pushed onto a superellipsoid |x/a|^P + |y/b|^P + |z/c|^P = 1 (P = 2.5,
a rounded capsule-like body) and then bumped radially by a smooth noise of at most 3 percent
(sums of sines with phases from random.Random(SEED)), so that most vertices stay on the convex
hull but no two links are alike. Coordinates are rounded before they are written, so the same
script writes a byte-identical file. The generated file is committed; edit this script, not it.

The body plan (metres, body frames; z up): a free torso (with the head mesh on it), a pelvis on a
waist hinge, legs with a two-hinge hip, a knee and an ankle, arms with a two-hinge shoulder and an
elbow: 12 bodies, 21 dofs, each hinge limited and damped. Links that are not parent and child are
at least 1.5 cm apart at the start, and the feet 1 cm above the floor.
"""

import math
import os
import random

from mesh_geometry import icosphere, normalize

SEED = 7
SUBDIVISIONS = 4  # 10 * 4^4 + 2 = 2562 vertices per link
P = 2.5  # superellipsoid exponent: a rounded capsule-like link
NOISE = 0.03  # largest radial bump, as a fraction of the radius
DENSITY = 1000.0  # kg/m^3
FRICTION = 0.8
DAMPING = 1.0  # N m s/rad on every hinge
ARMATURE = 0.01  # kg m^2


def link_vertices(unit, axes, centre, rng):
    """The unit sphere's points on the superellipsoid with these semi-axes, bumped by a smooth
    noise (at most NOISE of the radius, inward only so the link stays inside its box), shifted to
    `centre` (body frame)."""
    phases = [rng.uniform(0, 2 * math.pi) for _ in range(6)]
    out = []
    for u in unit:
        s = sum(abs(u[i] / axes[i]) ** P for i in range(3)) ** (-1.0 / P)
        bump = (math.sin(3 * u[0] + phases[0]) * math.sin(2 * u[1] + phases[1]) +
                math.sin(4 * u[2] + phases[2]) * math.sin(3 * u[0] + phases[3]) +
                math.sin(2 * u[1] + phases[4]) * math.sin(3 * u[2] + phases[5]))
        scale = s * (1 - NOISE * (bump + 3) / 6)  # bump in [-3, 3] -> scale in [s(1-NOISE), s]
        out.append(tuple(centre[i] + scale * u[i] for i in range(3)))
    return out


# Links: name -> (semi-axes, centre in the body frame).
LINKS = {
    "torso": ((0.11, 0.16, 0.20), (0, 0, 0.20)),
    "head": ((0.09, 0.09, 0.10), (0, 0, 0.53)),
    "pelvis": ((0.10, 0.15, 0.07), (0, 0, -0.08)),
    "thigh": ((0.065, 0.065, 0.18), (0, 0, -0.20)),
    "shin": ((0.05, 0.05, 0.18), (0, 0, -0.20)),
    "foot": ((0.11, 0.05, 0.03), (0.05, 0, 0)),
    "upper_arm": ((0.045, 0.045, 0.14), (0, 0, -0.15)),
    "forearm": ((0.04, 0.04, 0.13), (0, 0, -0.14)),
}


def hinge(name, axis, low, high):
    return (f'<joint name="{name}" type="hinge" axis="{axis}" limited="true" range="{low} {high}" '
            f'damping="{DAMPING:g}" armature="{ARMATURE:g}"/>')


def geom(name, mesh):
    return f'<geom name="{name}" type="mesh" mesh="{mesh}" density="{DENSITY:g}"/>'


def leg(side, y):
    s = side
    return f"""        <body name="thigh_{s}" pos="0 {y} -0.15">
          {hinge(f"hip_x_{s}", "1 0 0", -30, 30)}
          {hinge(f"hip_y_{s}", "0 1 0", -100, 30)}
          {geom(f"thigh_{s}", f"thigh_{s}")}
          <body name="shin_{s}" pos="0 0 -0.42">
            {hinge(f"knee_{s}", "0 1 0", -5, 140)}
            {geom(f"shin_{s}", f"shin_{s}")}
            <body name="foot_{s}" pos="0 0 -0.42">
              {hinge(f"ankle_{s}", "0 1 0", -40, 40)}
              {geom(f"foot_{s}", f"foot_{s}")}
            </body>
          </body>
        </body>"""


def arm(side, y):
    s = side
    return f"""      <body name="upper_arm_{s}" pos="0 {y} 0.36">
        {hinge(f"shoulder_x_{s}", "1 0 0", -60, 60)}
        {hinge(f"shoulder_y_{s}", "0 1 0", -120, 60)}
        {geom(f"upper_arm_{s}", f"upper_arm_{s}")}
        <body name="forearm_{s}" pos="0 0 -0.31">
          {hinge(f"elbow_{s}", "0 1 0", -140, 5)}
          {geom(f"forearm_{s}", f"forearm_{s}")}
        </body>
      </body>"""


def main():
    rng = random.Random(SEED)
    unit, faces = icosphere(SUBDIVISIONS)
    face = " ".join(str(i) for f in faces for i in f)
    meshes = ["torso", "head", "pelvis"]
    for base in ("thigh", "shin", "foot", "upper_arm", "forearm"):
        meshes += [f"{base}_l", f"{base}_r"]
    assets = []
    for name in meshes:
        base = name[:-2] if name.endswith(("_l", "_r")) else name
        axes, centre = LINKS[base]
        verts = link_vertices(unit, axes, centre, rng)
        vertex = " ".join(f"{x:.5f}" for v in verts for x in v)
        assets.append(f'    <mesh name="{name}" vertex="{vertex}" face="{face}"/>')
    header = f"""<!-- mesh_humanoid.xml: written by scenes/generate_mesh_humanoid.py (edit that, not this file).
  A procedurally generated humanoid of 12 bodies and 21 dofs (free torso; waist, two-hinge hips
  and shoulders, knees, ankles, elbows, all limited, damping {DAMPING:g} N m s/rad, armature
  {ARMATURE:g} kg m^2) whose 13 collision geoms are convex meshes of {len(unit)} vertices each
  (superellipsoids, exponent {P:g}, with a smooth radial noise of up to {100 * NOISE:g} percent;
  density {DENSITY:g} kg/m^3, friction {FRICTION:g}). It starts upright with its feet 1 cm above
  the floor and zero controls, so it collapses onto the floor and onto itself: the mesh-heavy
  robot of issue 32. SI units, timestep 1/240 s. -->"""
    xml = f"""{header}
<mujoco model="mesh_humanoid">
  <option timestep="0.004166666666666667"/>
  <default>
    <geom condim="3" friction="{FRICTION:g} 0.005 0.0001"/>
  </default>
  <asset>
{chr(10).join(assets)}
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="torso" pos="0 0 1.05">
      <freejoint name="root"/>
      {geom("torso", "torso")}
      {geom("head", "head")}
      <body name="pelvis" pos="0 0 -0.02">
        {hinge("waist", "0 1 0", -40, 60)}
        {geom("pelvis", "pelvis")}
{leg("l", 0.09)}
{leg("r", -0.09)}
      </body>
{arm("l", 0.22)}
{arm("r", -0.22)}
    </body>
  </worldbody>
</mujoco>
"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mesh_humanoid.xml")
    with open(path, "w") as f:
        f.write(xml)


if __name__ == "__main__":
    main()
