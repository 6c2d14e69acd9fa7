"""Pieces the scene generators share (scenes/generate_*.py): numbers as the shortest decimal that
reads back as the same double, and a square bin of four static box walls on a floor plane.

Standard library only; the generators import it from their own directory.
"""


def fmt(x):
    """x as the shortest decimal that reads back as the same double ("0" for zero, no ".0")."""
    if x == 0:
        return "0"
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def bin_walls(inner_half, wall_half_thickness, wall_half_height):
    """The floor plane and four box walls standing on it around the square [-inner_half,
    inner_half]^2, as MJCF worldbody lines; the x walls run past the y walls to close the
    corners."""
    centre = inner_half + wall_half_thickness
    long = inner_half + 2 * wall_half_thickness
    lines = ['    <geom name="floor" type="plane" size="0 0 1"/>']
    for name, pos, size in (
            ("wall_px", (centre, 0, wall_half_height),
             (wall_half_thickness, long, wall_half_height)),
            ("wall_nx", (-centre, 0, wall_half_height),
             (wall_half_thickness, long, wall_half_height)),
            ("wall_py", (0, centre, wall_half_height),
             (inner_half, wall_half_thickness, wall_half_height)),
            ("wall_ny", (0, -centre, wall_half_height),
             (inner_half, wall_half_thickness, wall_half_height))):
        lines.append('    <geom name="%s" type="box" pos="%s" size="%s"/>'
                     % (name, " ".join(fmt(round(v, 6)) for v in pos),
                        " ".join(fmt(round(v, 6)) for v in size)))
    return lines
