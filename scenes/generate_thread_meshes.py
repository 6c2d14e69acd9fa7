"""Writes the M48 bolt-nut pair of the SubADMM paper's assembly (seed-004 8.1) as binary STL.

Usage: python3 scenes/generate_thread_meshes.py [--out-dir scenes/assets]
(standard library only; deterministic). Writes m48_nut.stl and m48_bolt.stl, in meters, each
in the frame of engine/collision/sdf_thread.h's SdfThread (the bolt's field): the thread's axis
is z, and the screw coordinate u = z - P theta / (2 pi) (right-handed) is 0 at a crest center.

The thread profile is ISO 68-1's basic profile, as SdfThread's: major radius r_maj = 24 mm,
pitch P = 5 mm, H = sqrt(3)/2 P, crest flat P/8 wide at r_maj, flanks at 30 deg off radial,
root flat P/4 wide at r_min = r_maj - 5H/8 (d1 = 42.587 mm). In the (r, u) half-plane it is
the periodic curve r = R(u); the solid is r <= R(u).

- The nut (ISO 4032 M48: across flats s = 75 mm, height m = 38 mm, no chamfers) is a hexagonal
  prism, corners at theta = 0, 60, ... deg, z in [-m/2, m/2], whose hole is the internal thread
  r >= R_c(u): the curve at planar distance c = 50 um outside the bolt's profile (the level set
  SdfThread distance = c: the crest flat and flanks moved out by c along their normals, a circular
  arc of radius c about each crest corner, the flank's offset meeting the root flat's at
  w = 3P/8 + c tan 30 deg). Screwed onto the bolt with the frames coinciding (or turned by any
  angle a and advanced P a / (2 pi)) the nut is centered in its play: c along every normal, so it
  can move 2c / cos 30 deg = 0.115 mm along the axis and about 2c radially before touching.
- The bolt is the threaded shank r <= R(u), z in [-50, 50] mm (SdfThread's defaults), its ends
  flat: a proxy of the SDF for MuJoCo's compiler (inertia) and for drawing.

Triangulation. Both threads are height fields over (theta, z): r = R(z - b theta), b = P/(2 pi).
theta takes N = 120 equal steps; at each step a column of vertices runs from the bottom face to
the top, one wherever a helix through a profile breakpoint crosses it (the crest and root flat
ends, the arc's points, the flank's ends); where such a helix meets an end face between two
columns, a rim vertex. Neighbouring columns are stitched by merging their vertices in u, so no
triangle straddles a profile corner, and every vertex lies on the surface. A face's points lie within the chords' sag of it: r (1 - cos(pi / N)) = 8.2 um across
the 3 deg steps and c (1 - cos 15 deg) = 1.7 um on the arcs, both toward the bolt, so the nut's
faces keep more than c - 10 um = 40 um of clearance. N = 120 (3 deg, 1.26 mm at the crests) and two
arc segments keep that sag below a fifth of the clearance at about 16k triangles per part, ~0.8 MB
each: the local search of the nut's triangles against the bolt's field and MuJoCo's hull and
inertia of them stay cheap. End faces fan from the hole's rim to the hexagon (the nut) or to the
axis (the bolt), a fan per column step; the hexagon's sides are a quad per column. MuJoCo 2.2.2
reads them (binary STL); its default mesh inertia assumes a convex mesh, so a scene with the nut
sets <compiler exactmeshinertia="true"/>. The parts are
watertight (every edge in exactly two triangles, once each way) with outward normals.
"""

import argparse
import math
import os
import struct

MAJOR_RADIUS = 0.024
PITCH = 0.005
TRIANGLE_HEIGHT = math.sqrt(3) / 2 * PITCH
MINOR_RADIUS = MAJOR_RADIUS - 5 * TRIANGLE_HEIGHT / 8
LEAD = PITCH / (2 * math.pi)

CLEARANCE = 50e-6
NUT_ACROSS_FLATS = 0.075
NUT_HEIGHT = 0.038
BOLT_Z0, BOLT_Z1 = -0.05, 0.05
COLUMNS = 120
ARC_SEGMENTS = 2

TAN30 = math.tan(math.pi / 6)
SIN60, COS60 = math.sqrt(3) / 2, 0.5


def profile_radius(u, offset):
    """R_c(u): the radius of the curve at planar distance `offset` outside the basic profile."""
    w = abs(u - PITCH * math.floor(u / PITCH + 0.5))
    crest_end = PITCH / 16
    if w <= crest_end:
        return MAJOR_RADIUS + offset
    if w <= crest_end + offset * SIN60:  # the arc about the crest corner
        dw = w - crest_end
        return MAJOR_RADIUS + math.sqrt(max(offset * offset - dw * dw, 0.0))
    if w <= 3 * PITCH / 8 + offset * TAN30:  # the flank moved out along its normal (1/2, sqrt 3/2)
        return MINOR_RADIUS + 2 * (offset - SIN60 * (w - 3 * PITCH / 8))
    return MINOR_RADIUS + offset


def breakpoints(offset):
    """The profile's corners in w = |u| on [0, P/2): the crest flat's end, the arc's points and
    the flank's end; mirrored to u in [-P/2, P/2), sorted."""
    half = [PITCH / 16]
    if offset > 0:
        for j in range(1, ARC_SEGMENTS + 1):
            a = (math.pi / 3) * j / ARC_SEGMENTS
            half.append(PITCH / 16 + offset * math.sin(a))
    half.append(3 * PITCH / 8 + offset * TAN30)
    return sorted([-w for w in half] + half)


class Mesh:
    def __init__(self):
        self.vertices = []
        self.faces = []

    def add(self, p):
        self.vertices.append(p)
        return len(self.vertices) - 1


def corners_between(corners, lo, hi):
    """The profile corners' helices u = k P + corner with lo < u < hi, ascending; those within
    1e-7 P of an end are left to it (a column's end vertex already lies there)."""
    epsilon = 1e-7 * PITCH
    found = []
    k = math.floor(lo / PITCH) - 1
    while k * PITCH + corners[0] < hi:
        for corner in corners:
            u = k * PITCH + corner
            if lo + epsilon < u < hi - epsilon:
                found.append(u)
        k += 1
    return found


def vertex_at(mesh, offset, theta, u, z):
    r = profile_radius(u, offset)
    return mesh.add((r * math.cos(theta), r * math.sin(theta), z))


def thread_surface(mesh, offset, z_lo, z_hi, toward_axis):
    """The thread surface r = R_c(z - b theta), z_lo <= z <= z_hi, right-handed. Returns the rims
    of its two ends, bottom and top, as vertex lists in theta order, one list per column step.

    Columns at theta_i = 2 pi i / N (column N is column 0 turned once: the same vertices, u lower
    by P) carry (u, vertex) from z_lo to z_hi. A strip between columns i and i + 1 is bounded in
    (theta, u) by the two columns and the end faces' lines u = z_end - b theta; where a corner's
    helix crosses such a line between the columns, a rim vertex joins the strip's chains, so the
    strip's triangles, merged in u (ties: the chain at theta_i first, so a quad between two helices
    splits inside its strip), never straddle a corner. Normals toward the axis or away."""
    corners = breakpoints(offset)
    columns = []
    for i in range(COLUMNS):
        theta = 2 * math.pi * i / COLUMNS
        shift = LEAD * theta
        us = [z_lo - shift] + corners_between(corners, z_lo - shift, z_hi - shift) + [z_hi - shift]
        column = []
        for j, u in enumerate(us):
            z = z_lo if j == 0 else z_hi if j == len(us) - 1 else u + shift
            column.append((u, vertex_at(mesh, offset, theta, u, z)))
        columns.append(column)
    columns.append([(u - PITCH, v) for u, v in columns[0]])
    bottoms, tops = [], []
    for a_col, b_col in zip(columns, columns[1:]):
        bottom = [(u, vertex_at(mesh, offset, (z_lo - u) / LEAD, u, z_lo))
                  for u in corners_between(corners, b_col[0][0], a_col[0][0])]
        top = [(u, vertex_at(mesh, offset, (z_hi - u) / LEAD, u, z_hi))
               for u in corners_between(corners, b_col[-1][0], a_col[-1][0])]
        left, right = bottom + a_col, b_col + top
        a = b = 0
        while a < len(left) - 1 or b < len(right) - 1:
            advance_left = b == len(right) - 1 or (
                a < len(left) - 1 and left[a + 1][0] <= right[b + 1][0] + 1e-12)
            if advance_left:
                tri = (left[a][1], left[a + 1][1], right[b][1])
                a += 1
            else:
                tri = (left[a][1], right[b + 1][1], right[b][1])
                b += 1
            mesh.faces.append(tri if toward_axis else (tri[0], tri[2], tri[1]))
        # Along a rim theta grows as u falls.
        bottoms.append([a_col[0][1]] + [v for _, v in reversed(bottom)] + [b_col[0][1]])
        tops.append([a_col[-1][1]] + [v for _, v in reversed(top)] + [b_col[-1][1]])
    return bottoms, tops


def hexagon_radius(theta, across_flats):
    """The distance from the axis to the hexagon's boundary at angle theta (corners at multiples
    of 60 deg)."""
    sector = math.pi / 3
    phi = theta - sector * math.floor(theta / sector) - sector / 2
    return across_flats / 2 / math.cos(phi)


def nut():
    mesh = Mesh()
    z_lo, z_hi = -NUT_HEIGHT / 2, NUT_HEIGHT / 2
    bottoms, tops = thread_surface(mesh, CLEARANCE, z_lo, z_hi, toward_axis=True)
    outer = {}
    for i in range(COLUMNS):
        theta = 2 * math.pi * i / COLUMNS
        rho = hexagon_radius(theta, NUT_ACROSS_FLATS)
        for z in (z_lo, z_hi):
            outer[i, z] = mesh.add((rho * math.cos(theta), rho * math.sin(theta), z))
    for i in range(COLUMNS):
        n = (i + 1) % COLUMNS
        # The bottom face looks down (-z), the top face up: each step's rim fans to the hexagon's
        # vertex at theta_i, then one triangle closes it to theta_i+1's. The sides look out.
        bottom, top = bottoms[i], tops[i]
        for v, w in zip(bottom, bottom[1:]):
            mesh.faces.append((v, w, outer[i, z_lo]))
        mesh.faces.append((bottom[-1], outer[n, z_lo], outer[i, z_lo]))
        for v, w in zip(top, top[1:]):
            mesh.faces.append((v, outer[i, z_hi], w))
        mesh.faces.append((top[-1], outer[i, z_hi], outer[n, z_hi]))
        mesh.faces.append((outer[i, z_lo], outer[n, z_lo], outer[n, z_hi]))
        mesh.faces.append((outer[i, z_lo], outer[n, z_hi], outer[i, z_hi]))
    return mesh


def bolt():
    mesh = Mesh()
    bottoms, tops = thread_surface(mesh, 0.0, BOLT_Z0, BOLT_Z1, toward_axis=False)
    bottom_center = mesh.add((0.0, 0.0, BOLT_Z0))
    top_center = mesh.add((0.0, 0.0, BOLT_Z1))
    for bottom, top in zip(bottoms, tops):
        for v, w in zip(bottom, bottom[1:]):
            mesh.faces.append((bottom_center, w, v))
        for v, w in zip(top, top[1:]):
            mesh.faces.append((top_center, v, w))
    return mesh


def signed_volume(mesh):
    total = 0.0
    for a, b, c in mesh.faces:
        pa, pb, pc = mesh.vertices[a], mesh.vertices[b], mesh.vertices[c]
        total += (pa[0] * (pb[1] * pc[2] - pb[2] * pc[1]) - pa[1] * (pb[0] * pc[2] - pb[2] * pc[0]) +
                  pa[2] * (pb[0] * pc[1] - pb[1] * pc[0])) / 6
    return total


def write_stl(path, mesh, title):
    with open(path, "wb") as f:
        f.write(title.encode("ascii")[:80].ljust(80, b" "))
        f.write(struct.pack("<I", len(mesh.faces)))
        for a, b, c in mesh.faces:
            pa, pb, pc = mesh.vertices[a], mesh.vertices[b], mesh.vertices[c]
            e1 = [pb[k] - pa[k] for k in range(3)]
            e2 = [pc[k] - pa[k] for k in range(3)]
            n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                 e1[0] * e2[1] - e1[1] * e2[0]]
            length = math.sqrt(sum(x * x for x in n)) or 1.0
            f.write(struct.pack("<12fH", *(x / length for x in n), *pa, *pb, *pc, 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "assets"))
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, mesh, title in (
            ("m48_nut.stl", nut(),
             "alsim M48 nut, ISO 4032 s 75 m 38, thread clearance 50 um, meters"),
            ("m48_bolt.stl", bolt(),
             "alsim M48x5 bolt shank z -0.05..0.05, ISO 68-1 basic profile, meters")):
        path = os.path.join(args.out_dir, name)
        write_stl(path, mesh, title + " (scenes/generate_thread_meshes.py)")
        print("%s: %d triangles, %d vertices, volume %.6e m^3, %d bytes" % (
            path, len(mesh.faces), len(mesh.vertices), signed_volume(mesh),
            os.path.getsize(path)))


if __name__ == "__main__":
    main()
