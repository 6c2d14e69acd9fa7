"""Writes the generated half of the alsim Python package into a folder OUT:

- OUT/alsim/v1/: the gRPC stubs of proto/alsim/v1/alsim.proto (``alsim_pb2.py``,
  ``alsim_pb2_grpc.py``, made by grpc_tools.protoc) and their ``__init__.py``;
- OUT/alsim/version.py: ``VERSION``, the project's version (CMakeLists.txt's
  ``project(alsim VERSION ...)``, the server's version too).

The package's build (setup.py's build_py) writes them into the wheel, CMake (proto/
CMakeLists.txt) into BUILD/python for the tests; neither writes into client/python. Needs
grpc_tools (Debian: python3-grpc-tools). Standard library otherwise.

    python3 client/python/generate.py --out build/python [--proto-root proto]
        [--version X.Y.Z | --cmake-lists CMakeLists.txt]
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))  # client/python -> the repository
PROTOS = ("alsim/v1/alsim.proto",)

V1_INIT = ('"""Generated stubs of proto/alsim/v1/alsim.proto (written by '
           'client/python/generate.py)."""\n')
VERSION_MODULE = '''"""The alsim release this package was built from (written by
client/python/generate.py from CMakeLists.txt's project VERSION, which the server reports too)."""

VERSION = "{version}"
'''

_PROJECT = re.compile(r"project\s*\(\s*alsim\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", re.IGNORECASE)


def project_version(cmake_lists=os.path.join(REPOSITORY, "CMakeLists.txt")):
    """The version in ``project(alsim VERSION X.Y.Z ...)`` of the top-level CMakeLists.txt."""
    try:
        with open(cmake_lists, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise SystemExit("%s not found: the alsim package is built from a checkout of the alsim "
                         "repository (client/python next to ../../CMakeLists.txt and ../../proto)"
                         % cmake_lists) from None
    match = _PROJECT.search(text)
    if not match:
        raise SystemExit("%s has no 'project(alsim VERSION X.Y.Z ...)'" % cmake_lists)
    return match.group(1)


def generate(out, proto_root=os.path.join(REPOSITORY, "proto"), version=None,
             cmake_lists=os.path.join(REPOSITORY, "CMakeLists.txt"), python=sys.executable):
    """Writes OUT/alsim/v1/{__init__,alsim_pb2,alsim_pb2_grpc}.py and OUT/alsim/version.py;
    returns their paths. ``version`` None reads it from ``cmake_lists``."""
    if version is None:
        version = project_version(cmake_lists)
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        raise SystemExit("version %r is not X.Y.Z" % version)
    for proto in PROTOS:
        if not os.path.isfile(os.path.join(proto_root, proto)):
            raise SystemExit("%s not found under %s: the alsim package is built from a checkout "
                             "of the alsim repository (proto/ next to client/)"
                             % (proto, proto_root))
    package = os.path.join(out, "alsim")
    os.makedirs(os.path.join(package, "v1"), exist_ok=True)
    # Through `python -m grpc_tools.protoc`, which adds grpc_tools' copy of the well-known
    # protos (google/protobuf/wrappers.proto) to the include path.
    command = [python, "-m", "grpc_tools.protoc", "-I", proto_root, "--python_out=" + out,
               "--grpc_python_out=" + out] + list(PROTOS)
    try:
        subprocess.run(command, check=True, cwd=proto_root)
    except FileNotFoundError:
        raise SystemExit("cannot run %s" % python) from None
    except subprocess.CalledProcessError as error:
        raise SystemExit("grpc_tools.protoc failed (exit %d): %s (Debian: apt-get install "
                         "python3-grpc-tools)" % (error.returncode, " ".join(command))) from None
    written = []
    for path, text in ((os.path.join(package, "v1", "__init__.py"), V1_INIT),
                       (os.path.join(package, "version.py"),
                        VERSION_MODULE.format(version=version))):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written.append(path)
    for proto in PROTOS:
        stem = os.path.join(out, os.path.splitext(proto)[0])
        written += [stem + "_pb2.py", stem + "_pb2_grpc.py"]
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the folder that receives alsim/")
    parser.add_argument("--proto-root", default=os.path.join(REPOSITORY, "proto"),
                        help="the folder holding alsim/v1/alsim.proto (default: ../../proto)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--version", help="the version to write (default: from --cmake-lists)")
    source.add_argument("--cmake-lists", default=os.path.join(REPOSITORY, "CMakeLists.txt"),
                        help="the CMakeLists.txt with project(alsim VERSION ...)")
    args = parser.parse_args(argv)
    generate(os.path.abspath(args.out), os.path.abspath(args.proto_root), args.version,
             args.cmake_lists)


if __name__ == "__main__":
    main()
