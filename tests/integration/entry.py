"""The command line of every Python test here: CTest passes --bin-dir, the folder of the built
binaries; the rest of the arguments go to unittest.

Each test module ends with

    if __name__ == "__main__":
        entry.run(sys.modules[__name__])

and reads the folder from its module-level BIN_DIR.
"""
import argparse
import os
import sys
import unittest


def run(module):
    """Sets ``module.BIN_DIR`` from --bin-dir (made absolute) and runs the module's tests."""
    parser = argparse.ArgumentParser(description=(module.__doc__ or "").splitlines()[0]
                                     if module.__doc__ else None)
    parser.add_argument("--bin-dir", required=True, help="the folder of the built binaries")
    args, rest = parser.parse_known_args()
    module.BIN_DIR = os.path.abspath(args.bin_dir)
    unittest.main(module=module, argv=[sys.argv[0]] + rest, verbosity=2)
