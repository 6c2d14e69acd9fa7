"""Dishes and bottles of revolution for the scene generators of the SubADMM/CANAL paper's dish
piling and pouring (generate_dish_pile.py, generate_pouring.py): the alsim:sdf text of eq. (45)
and the mass properties of a thin dish.

A dish is the profile O-A-B in the (r, z) half-plane, O = (0, 0) on the axis, swept about the
local z axis and padded by d (engine/collision/sdf_revolution.h). MuJoCo sees only its proxy
geom, so the generators give each dish body an explicit <inertial>: the profile's surface as a
thin shell of uniform areal density (the padding is small against the dish), which puts the
center of mass above the bottom where a real dish has it, instead of at the proxy's center.

Standard library only.
"""

import math

from scene_writer import fmt


def revolution_text(geom, a, b, padding):
    """The custom text element that makes `geom` an SDF of revolution (docs/engine.md)."""
    return ('    <text name="alsim:sdf:%s" data="revolution a %s %s b %s %s padding %s"/>'
            % (geom, fmt(a[0]), fmt(a[1]), fmt(b[0]), fmt(b[1]), fmt(padding)))


def shell_inertial(a, b, mass, samples=4000):
    """(z_c, I_xx, I_zz) of the surface swept by O-A-B as a shell of total `mass`: its center of
    mass on the axis at height z_c and its principal moments about it (I_yy = I_xx by symmetry).

    A ring of radius r at height z carrying dm has I_zz = dm r^2 and, about the x axis through
    the origin, I_xx = dm (r^2 / 2 + z^2); the ring's share of the area is dA = 2 pi r ds along
    the profile. The midpoint rule over `samples` pieces per segment integrates these to well
    below the digits written. I_xx moves to the center of mass by the parallel-axis theorem."""
    area = moment_z = izz = ixx = 0.0
    for p, q in (((0.0, 0.0), a), (a, b)):
        length = math.hypot(q[0] - p[0], q[1] - p[1])
        ds = length / samples
        for k in range(samples):
            t = (k + 0.5) / samples
            r = p[0] + t * (q[0] - p[0])
            z = p[1] + t * (q[1] - p[1])
            da = 2 * math.pi * r * ds
            area += da
            moment_z += da * z
            izz += da * r * r
            ixx += da * (r * r / 2 + z * z)
    density = mass / area
    z_c = moment_z / area
    return z_c, density * ixx - mass * z_c * z_c, density * izz


def inertial_line(a, b, mass):
    """The <inertial> element of a dish body whose frame is the dish's (O at the origin)."""
    z_c, i_xx, i_zz = shell_inertial(a, b, mass)
    return ('      <inertial pos="0 0 %s" mass="%s" diaginertia="%s %s %s"/>'
            % (fmt(round(z_c, 6)), fmt(mass), fmt(float("%.6g" % i_xx)),
               fmt(float("%.6g" % i_xx)), fmt(float("%.6g" % i_zz))))
