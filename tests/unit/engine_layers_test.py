#!/usr/bin/env python3
"""The layers flow one way (docs/DESIGN.md, "Layers"): the project's folders include only the
folders below them (client/cli -> client/viewer -> client/command -> the client library -> the
proto; server -> engine), each folder of engine/ includes only the folders below it, and the
server's batch-step core includes no protobuf or gRPC. Fails naming the file and the include that
breaks the order."""
import os
import re
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# What each folder may include besides itself, bottom to top (docs/DESIGN.md).
ALLOWED = {
    "math": set(),
    "core": set(),
    "model": {"math", "core"},
    "linalg": {"math", "core"},
    "data": {"model", "linalg", "math", "core"},
    "dynamics": {"data", "model", "linalg", "math", "core"},
    "collision": {"data", "model", "linalg", "math", "core"},
    "constraint": {"data", "model", "linalg", "math", "core"},
    "island": {"data", "model", "math", "core"},
    "deformable": {"data", "model", "linalg", "math", "core"},
    "solver": {"data", "constraint", "island", "dynamics", "deformable", "linalg", "model", "math",
               "core"},
    "sim": {"data", "constraint", "island", "dynamics", "collision", "deformable", "solver",
            "linalg", "model", "math", "core"},
}
INCLUDE = re.compile(r'#include "engine/([a-z_]+)/')
# Pure geometry kept beside its narrowphase pairs in collision/ but built of math/ alone, so that
# the importer (model/) may validate a scene's SDF geoms and triangulate them with it.
GEOMETRY_LEAVES = {"engine/collision/sdf_revolution.h": {"model"},
                   "engine/collision/sdf_thread.h": {"model"}}

# What each folder of the project may include with quotes besides itself, by path prefix. The
# generated headers are "alsim/..." (our protos) and "grpc/..." (gRPC's health service). The CLI
# links the engine for `alsim run`, the one deliberate arrow from the client side (DESIGN.md).
PROJECT_ALLOWED = {
    "engine": {"alsim/build_config.h"},
    "server": {"engine/", "alsim/"},
    "client/client": {"alsim/", "grpc/"},  # the client library: client.h, client.cc
    "client/command": {"client/client.h", "alsim/"},
    "client/viewer": {"client/command/", "client/client.h", "alsim/"},
    "client/cli": {"client/viewer/", "client/command/", "client/client.h", "alsim/", "engine/"},
}
QUOTED = re.compile(r'#include "([^"]+)"')
# The batch-step core (server/batch_step.h) and the instance it steps: plain C++ on the engine.
CORE = ("server/batch_step.h", "server/batch_step.cc", "server/instance.h", "server/instance.cc")
CORE_ALLOWED = ("engine/", "server/batch_step.h", "server/instance.h", "server/memory_budget.h")


def sources(folder):
    """The .h and .cc files under ROOT/folder, as paths relative to ROOT."""
    for directory, _, files in os.walk(os.path.join(ROOT, folder)):
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(directory, name), ROOT)


def includes(path):
    """(line number, included path, line) for every #include of the file at ROOT/path."""
    with open(os.path.join(ROOT, path)) as f:
        for number, line in enumerate(f, 1):
            match = re.match(r'#include [<"]([^>"]+)[>"]', line.strip())
            if match:
                yield number, match.group(1), line.strip()


class ProjectLayersTest(unittest.TestCase):
    def test_every_folder_includes_only_folders_below_it(self):
        folders = {
            "engine": list(sources("engine")),
            "server": list(sources("server")),
            "client/client": ["client/client.h", "client/client.cc"],
            "client/command": list(sources("client/command")),
            "client/viewer": list(sources("client/viewer")),
            "client/cli": list(sources("client/cli")),
        }
        self.assertEqual(sorted(f for f in os.listdir(os.path.join(ROOT, "client"))
                                if f.endswith((".h", ".cc"))), ["client.cc", "client.h"],
                         "the client library's files are client.h and client.cc")
        broken = []
        for folder, paths in folders.items():
            own = "client/client" if folder == "client/client" else folder + "/"
            allowed = PROJECT_ALLOWED[folder] | {own}
            self.assertTrue(paths, folder + " has no sources: a moved folder needs its row")
            for path in paths:
                for number, included, line in includes(path):
                    if not QUOTED.match(line):
                        continue
                    if not any(included.startswith(prefix) for prefix in allowed):
                        broken.append("%s:%d: %s" % (path, number, line))
        self.assertEqual(broken, [], "includes against the layer order:\n" + "\n".join(broken))

    def test_the_viewer_is_under_client_and_no_arrow_runs_back_up(self):
        self.assertFalse(os.path.exists(os.path.join(ROOT, "viewer")), "the viewer is client/viewer")
        broken = []
        for folder, forbidden in (("client/viewer", "client/cli/"),
                                  ("client/command", ("client/cli/", "client/viewer/")),
                                  ("server", "client/"), ("engine", ("server/", "client/"))):
            for path in sources(folder):
                for number, included, line in includes(path):
                    if included.startswith(forbidden):
                        broken.append("%s:%d: %s" % (path, number, line))
        self.assertEqual(broken, [], "an include runs back up:\n" + "\n".join(broken))

    def test_the_batch_step_core_includes_no_protobuf_or_grpc(self):
        broken = []
        for path in CORE:
            for number, included, line in includes(path):
                quoted = QUOTED.match(line) is not None
                if (quoted and not included.startswith(CORE_ALLOWED)) or \
                        included.startswith(("grpc", "google/protobuf", "alsim/")):
                    broken.append("%s:%d: %s" % (path, number, line))
        self.assertEqual(broken, [], "the core includes more than the engine:\n" +
                         "\n".join(broken))


class EngineLayersTest(unittest.TestCase):
    def test_every_folder_includes_only_folders_below_it(self):
        engine = os.path.join(ROOT, "engine")
        folders = sorted(f for f in os.listdir(engine) if os.path.isdir(os.path.join(engine, f)))
        self.assertEqual(sorted(ALLOWED), folders, "a new engine folder needs a row in ALLOWED")
        broken = []
        for folder in folders:
            for directory, _, files in os.walk(os.path.join(engine, folder)):
                for name in files:
                    if not name.endswith((".h", ".cc")):
                        continue
                    path = os.path.join(directory, name)
                    with open(path) as f:
                        for number, line in enumerate(f, 1):
                            match = INCLUDE.match(line.strip())
                            leaf = re.match(r'#include "([^"]+)"', line.strip())
                            if leaf and folder in GEOMETRY_LEAVES.get(leaf.group(1), ()):
                                continue
                            if match and match.group(1) not in ALLOWED[folder] | {folder}:
                                broken.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number,
                                                             line.strip()))
        self.assertEqual(broken, [], "includes against the layer order:\n" + "\n".join(broken))

    def test_geometry_leaves_include_only_math(self):
        broken = []
        for leaf in GEOMETRY_LEAVES:
            for stem in (leaf, leaf[:-2] + ".cc"):
                if not os.path.exists(os.path.join(ROOT, stem)):
                    continue
                for number, included, line in includes(stem):
                    if included.startswith("engine/") and included not in GEOMETRY_LEAVES \
                            and not included.startswith("engine/math/"):
                        broken.append("%s:%d: %s" % (stem, number, line))
        self.assertEqual(broken, [], "a geometry leaf includes more than math/ and leaves:\n" +
                         "\n".join(broken))

    def test_the_newton_folder_includes_no_solver_built_on_it(self):
        # engine/solver/newton/ holds the Newton loop, line search and island Hessian that CANAL
        # and the Newton kit share; the solvers built on it include it, never the other way.
        newton = os.path.join(ROOT, "engine", "solver", "newton")
        broken = []
        for name in sorted(os.listdir(newton)):
            with open(os.path.join(newton, name)) as f:
                for number, line in enumerate(f, 1):
                    if re.match(r'#include "engine/solver/(canal|hybrid)/', line.strip()):
                        broken.append("engine/solver/newton/%s:%d: %s" % (name, number,
                                                                          line.strip()))
        self.assertEqual(broken, [], "newton/ includes a solver built on it:\n" + "\n".join(broken))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
