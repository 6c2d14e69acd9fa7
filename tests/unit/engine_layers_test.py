#!/usr/bin/env python3
"""The engine's layers flow one way (docs/DESIGN.md, "Layers"): each folder of engine/ includes
only the folders below it. Fails naming the file and the include that breaks the order."""
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
    "solver": {"data", "constraint", "island", "dynamics", "linalg", "model", "math", "core"},
    "sim": {"data", "constraint", "island", "dynamics", "collision", "solver", "linalg", "model",
            "math", "core"},
}
INCLUDE = re.compile(r'#include "engine/([a-z_]+)/')


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
                            if match and match.group(1) not in ALLOWED[folder] | {folder}:
                                broken.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number,
                                                             line.strip()))
        self.assertEqual(broken, [], "includes against the layer order:\n" + "\n".join(broken))

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
