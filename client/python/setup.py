"""The alsim package's build steps that pyproject.toml cannot state: the version and the
generated files.

- The version is the project's (``project(alsim VERSION ...)`` in ../../CMakeLists.txt, which
  the server reports too), read at build time so that there is no second copy to drift.
- build_py writes the generated half of the package (alsim/v1, the gRPC stubs of
  ../../proto/alsim/v1/alsim.proto, and alsim/version.py) straight into the build folder, with
  generate.py (next to this file), so that nothing is generated into client/python.

Offline, against Debian's packages (python3-setuptools, python3-wheel, python3-grpc-tools):

    pip install --no-build-isolation ./client/python
"""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _generator():
    spec = importlib.util.spec_from_file_location("alsim_generate",
                                                  os.path.join(HERE, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithStubs(build_py):
    """build_py, then the generated files into the same build folder."""

    def run(self):
        super().run()
        if not self.dry_run:
            _generator().generate(os.path.abspath(self.build_lib))


setup(version=_generator().project_version(), cmdclass={"build_py": BuildWithStubs})
