"""Scenes both ways: ``scene_source`` sends a local MJCF/URDF file (or names a built-in scene),
``Scene`` holds what GetScene answers, as numpy arrays.

    with alsim.VectorEnv("127.0.0.1:50051", "box_stack", num_envs=2) as env:
        scene = env.scene()
        boxes = scene.geom_type == alsim.Scene.BOX         # bool [ngeom]
        print(scene.body_names[scene.geom_body[boxes]])    # the bodies that carry them
"""

import collections
import os
import posixpath
import xml.etree.ElementTree as ElementTree

import numpy as np

from alsim.v1 import alsim_pb2

__all__ = ["scene_source", "Scene", "Mesh", "Deformable"]


_MODEL_SUFFIXES = (".xml", ".mjcf", ".urdf")
# MJCF elements whose file attributes name files, and the compiler directory they are relative to.
_MESH_DIR_ELEMENTS = ("mesh", "hfield", "skin")
_TEXTURE_FILE_ATTRIBUTES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront",
                            "fileback")
# The custom text that names a scene's tetrahedral deformables' companion file, and the attributes
# of its <deformable> elements that name TetGen's files (docs/engine.md "Deformables").
_DEFORMABLES_TEXT = "alsim:deformables"
_DEFORMABLE_FILE_ATTRIBUTES = ("node", "ele")


def _is_path(scene):
    if isinstance(scene, os.PathLike):
        return True
    return (os.path.exists(scene) or "/" in scene or os.sep in scene
            or scene.lower().endswith(_MODEL_SUFFIXES))


def _parse(text):
    try:
        return ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None  # the server reports the malformed XML with MuJoCo's file:line message


def _read_text(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def _key(*parts):
    """The asset's name as the model spells it: a normalized, '/'-separated relative path."""
    joined = posixpath.normpath(posixpath.join(*[p.replace(os.sep, "/") for p in parts if p]))
    return joined


def scene_source(scene):
    """An ``alsim.v1.SceneSource`` for a local MJCF/URDF file or a built-in scene name.

    ``scene`` is a path (``str`` or ``os.PathLike``) when it is an existing file, contains a path
    separator or ends in .xml/.mjcf/.urdf; otherwise it is a built-in name
    (``ServerInfoResponse.builtin_scenes``). For a file, the text is sent with its base name as the
    filename, and every file the model references is sent with it as an asset keyed by the path
    the model uses (relative to the model file's directory): ``<include file>``, the ``file``
    attributes of ``mesh``, ``hfield`` and ``skin`` (under ``compiler/@meshdir``, else
    ``@assetdir``) and of ``texture`` (incl. the cube faces ``fileright``..., under
    ``@texturedir``, else ``@assetdir``), URDF ``<mesh filename>`` (MuJoCo looks those up by
    base name in ``meshdir``), and the tetrahedral deformables' companion file that the custom
    text ``alsim:deformables`` names (``<text name="alsim:deformables" data="soft.xml"/>``) with
    the TetGen ``node`` / ``ele`` files of its ``<deformable>`` elements, all next to the model.
    Raises FileNotFoundError naming the element for a missing file.
    """
    if not _is_path(scene):
        return alsim_pb2.SceneSource(builtin=scene)
    path = os.fspath(scene)
    text = _read_text(path)
    model_dir = os.path.dirname(os.path.abspath(path))
    assets = {}

    # The model and the files it includes (MuJoCo resolves includes against the model's directory).
    trees = []
    root = _parse(text)
    pending = [(root, path)] if root is not None else []
    while pending:
        tree, source = pending.pop(0)
        trees.append(tree)
        # MuJoCo matches <include> in any case (<INCLUDE>), unlike the schema's other elements.
        for include in (e for e in tree.iter() if isinstance(e.tag, str)
                        and e.tag.lower() == "include"):
            name = include.get("file")
            if not name:
                continue
            key = _key(name)
            if key in assets:
                continue
            included_path = os.path.join(model_dir, name)
            try:
                with open(included_path, "rb") as f:
                    assets[key] = f.read()
            except FileNotFoundError:
                raise FileNotFoundError("%s: <include file=%r>: no such file %s"
                                        % (source, name, included_path)) from None
            included = _parse(assets[key].decode("utf-8", errors="replace"))
            if included is not None:
                pending.append((included, included_path))

    directories = {}
    for tree in trees:
        for compiler in tree.iter("compiler"):
            for attribute in ("meshdir", "texturedir", "assetdir"):
                if compiler.get(attribute) is not None:
                    directories[attribute] = compiler.get(attribute)
    assetdir = directories.get("assetdir", "")
    meshdir = directories.get("meshdir", assetdir)
    texturedir = directories.get("texturedir", assetdir)
    urdf = root is not None and root.tag.lower() == "robot"  # MuJoCo: any case

    def add(element, attribute, directory, name, key=None):
        key = key or _key(directory, name)
        if key in assets:
            return
        file_path = os.path.join(model_dir, directory, name)
        try:
            with open(file_path, "rb") as f:
                assets[key] = f.read()
        except FileNotFoundError:
            raise FileNotFoundError("%s: <%s %s=%r>: no such file %s"
                                    % (path, element.tag, attribute, name, file_path)) from None

    for tree in trees:
        for element in tree.iter():
            if urdf and element.tag == "mesh" and element.get("filename"):
                name = element.get("filename")
                base = posixpath.basename(name.replace(os.sep, "/"))
                if os.path.exists(os.path.join(model_dir, meshdir, base)):
                    add(element, "filename", meshdir, base)
                else:
                    add(element, "filename", "", name)
            elif element.tag in _MESH_DIR_ELEMENTS and element.get("file"):
                add(element, "file", meshdir, element.get("file"))
            elif element.tag == "texture":
                for attribute in _TEXTURE_FILE_ATTRIBUTES:
                    if element.get(attribute):
                        add(element, attribute, texturedir, element.get(attribute))
            elif (element.tag == "text" and element.get("name") == _DEFORMABLES_TEXT
                  and element.get("data")):
                name = element.get("data").strip()
                add(element, "data", "", name)
                companion = _parse(assets[_key(name)].decode("utf-8", errors="replace"))
                for deformable in companion.iter("deformable") if companion is not None else ():
                    for attribute in _DEFORMABLE_FILE_ATTRIBUTES:
                        if deformable.get(attribute):
                            add(deformable, attribute, "", deformable.get(attribute))
    return alsim_pb2.SceneSource(text=alsim_pb2.SceneText(
        text=text, filename=os.path.basename(path), assets=assets))



Mesh = collections.namedtuple("Mesh", ["name", "vertices", "faces"])
Mesh.__doc__ = """A triangle mesh of a ``Scene``, in the frame of the geoms that use it: ``name``
(str), ``vertices`` float32 ``[nvert, 3]`` (m) and ``faces`` uint32 ``[nface, 3]`` (vertex
indices, counter-clockwise seen from outside)."""

Deformable = collections.namedtuple("Deformable", ["name", "rgba", "vertex_start", "vertex_count",
                                                   "faces"])
Deformable.__doc__ = """A tetrahedral deformable of a ``Scene`` (docs/engine.md "Deformables"):
``name`` (str), ``rgba`` float32 ``[4]`` (colour and opacity in [0, 1]), its vertices' rows
``[vertex_start, vertex_start + vertex_count)`` of the ``deformable_vertices`` observation
(float64 ``[nvert, 3]``, m, world frame), and ``faces`` uint32 ``[ntri, 3]``: its surface
triangles as vertex indices local to it (0 to ``vertex_count - 1``), counter-clockwise seen from
outside. ``vertices[vertex_start:vertex_start + vertex_count][faces]`` are the triangles'
corners."""


class Scene:
    """A scene as a viewer draws it (``GetSceneResponse``), as numpy arrays.

    Bodies, in MuJoCo's order, the world (0) included:

    - ``body_names``: str array ``[nbody]`` ("" when unnamed).
    - ``body_parent``: int32 ``[nbody]``, the parent body (-1 for the world).

    Geoms, as MuJoCo's compiler leaves them (``ngeom`` rows each):

    - ``geom_names``: str array.
    - ``geom_type``: int32, ``alsim.v1.GeomType`` values (MuJoCo's mjtGeom plus one):
      ``Scene.PLANE``, ``HFIELD``, ``SPHERE``, ``CAPSULE``, ``ELLIPSOID``, ``CYLINDER``,
      ``BOX``, ``MESH``, and alsim's ``SDF`` (an analytic signed distance field, drawn through
      its triangulation in ``meshes``); ``geom_type_names`` has them as lowercase names ("box",
      ...).
    - ``geom_body``: int32, the body each is attached to (a row of ``body_names`` and of the
      ``body_pos`` / ``body_quat`` observations, which place every body in the world).
    - ``geom_size``: float64 ``[ngeom, 3]``, MuJoCo's size parameters of the type (m; unused
      ones 0).
    - ``geom_pos``: float64 ``[ngeom, 3]`` and ``geom_quat``: float64 ``[ngeom, 4]`` (w, x, y,
      z), the pose in the body's frame.
    - ``geom_rgba``: float32 ``[ngeom, 4]``, colour and opacity in [0, 1].
    - ``geom_group``: int32, MuJoCo's visibility group (0 to 5).
    - ``geom_mesh``: int32, an index into ``meshes`` for mesh geoms and for SDF geoms (their
      triangulation), -1 otherwise.
    - ``geom_collides``: bool, whether it takes part in contacts.

    And ``meshes``: a list of ``Mesh`` (name, vertices ``[n, 3]``, faces ``[m, 3]``), the
    scene's, then one per SDF geom named "sdf:GEOM"; ``deformables``: a list of ``Deformable``
    (name, rgba, vertex_start, vertex_count, faces ``[m, 3]``), the scene's tetrahedral
    deformables in its order (empty without any), whose vertices the ``deformable_vertices``
    observation places;
    ``name`` (the built-in name or the scene's filename), ``timestep`` (s) and ``gravity``
    (float64 ``[3]``, m/s^2, world frame). ``Scene(response)`` reads a ``GetSceneResponse``.
    """

    PLANE = alsim_pb2.GEOM_TYPE_PLANE
    HFIELD = alsim_pb2.GEOM_TYPE_HFIELD
    SPHERE = alsim_pb2.GEOM_TYPE_SPHERE
    CAPSULE = alsim_pb2.GEOM_TYPE_CAPSULE
    ELLIPSOID = alsim_pb2.GEOM_TYPE_ELLIPSOID
    CYLINDER = alsim_pb2.GEOM_TYPE_CYLINDER
    BOX = alsim_pb2.GEOM_TYPE_BOX
    MESH = alsim_pb2.GEOM_TYPE_MESH
    SDF = alsim_pb2.GEOM_TYPE_SDF

    def __init__(self, response):
        geoms = response.geoms
        self.name = response.scene
        self.timestep = response.timestep
        self.gravity = np.array(response.gravity, dtype=np.float64)
        self.body_names = np.array(list(response.body_names), dtype=str)
        self.body_parent = np.array(response.body_parent, dtype=np.int32)
        self.geom_names = np.array([g.name for g in geoms], dtype=str)
        self.geom_type = np.array([g.type for g in geoms], dtype=np.int32)
        self.geom_type_names = [alsim_pb2.GeomType.Name(t)[len("GEOM_TYPE_"):].lower()
                                for t in self.geom_type]
        self.geom_body = np.array([g.body for g in geoms], dtype=np.int32)
        self.geom_size = _rows([g.size for g in geoms], 3, np.float64, "size", pad=True)
        self.geom_pos = _rows([g.pos for g in geoms], 3, np.float64, "pos")
        self.geom_quat = _rows([g.quat for g in geoms], 4, np.float64, "quat")
        self.geom_rgba = _rows([g.rgba for g in geoms], 4, np.float32, "rgba")
        self.geom_group = np.array([g.group for g in geoms], dtype=np.int32)
        self.geom_mesh = np.array([g.mesh for g in geoms], dtype=np.int32)
        self.geom_collides = np.array([g.collides for g in geoms], dtype=bool)
        self.meshes = [Mesh(m.name, np.array(m.vertices, dtype=np.float32).reshape(-1, 3),
                            np.array(m.faces, dtype=np.uint32).reshape(-1, 3))
                       for m in response.meshes]
        self.deformables = [Deformable(d.name, np.array(d.rgba, dtype=np.float32),
                                       int(d.vertex_start), int(d.vertex_count),
                                       np.array(d.faces, dtype=np.uint32).reshape(-1, 3))
                            for d in response.deformables]

    @property
    def nbody(self):
        return len(self.body_names)

    @property
    def ngeom(self):
        return len(self.geom_type)

    @property
    def nvert(self):
        """The deformables' vertex count, all together (the rows of ``deformable_vertices``)."""
        return sum(d.vertex_count for d in self.deformables)

    def __repr__(self):
        return "Scene(%r, nbody=%d, ngeom=%d, meshes=%d, deformables=%d)" % (
            self.name, self.nbody, self.ngeom, len(self.meshes), len(self.deformables))


def _rows(values, width, dtype, what, pad=False):
    """Per-geom repeated fields as one ``[n, width]`` array; with ``pad``, a shorter field is
    zero-padded (MuJoCo's unused size parameters), otherwise it must have ``width`` values."""
    out = np.zeros((len(values), width), dtype=dtype)
    for row, value in enumerate(values):
        if len(value) > width or (not pad and len(value) != width):
            raise ValueError("GetScene: geom %d's %s has %d values, not %d"
                             % (row, what, len(value), width))
        out[row, :len(value)] = value
    return out
