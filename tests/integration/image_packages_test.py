"""deploy/Dockerfile: the runtime image installs exactly the Debian packages the binaries link.

The image is too slow to build in every test run (deploy/build-image.sh), so this test keeps its
package list from rotting instead. For each binary the Dockerfile copies into the runtime stage
(alsim-server, alsim-scene-compiler, alsim), from the build under test:
- the libraries it links directly (readelf's NEEDED entries, located where ldd finds them) are
  mapped to the Debian packages owning them (dpkg-query -S, trying the path ldd gives, its
  realpath and the other side of the merged /usr, since dpkg records some libraries under /lib
  and some under /usr/lib); less libc6, libstdc++6 and libgcc-s1, which debian:bookworm-slim has;
- that set must equal the runtime `apt-get install` list of the Dockerfile's last stage: a package
  missing from the list fails, and so does a listed package that no binary links, unless the
  Dockerfile names it in a `# image-package: NAME -- reason` comment line;
- every library ldd resolves, transitively, must belong to a package the image gets: the list, the
  base packages, or their Depends, followed recursively through the installed packages' metadata
  (dpkg-query), so what the direct libraries link in turn arrives with them.
Failures name the binary, the library, its path and the package.

Run by CTest: image_packages_test.py --bin-dir DIR (the directory of alsim-server).
"""
import os
import re
import subprocess
import sys
import unittest

import entry  # tests/integration, next to this file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCKERFILE = os.path.join(ROOT, "deploy", "Dockerfile")
BIN_DIR = None
# In debian:bookworm-slim (libstdc++6 and libgcc-s1 because apt needs them): never listed.
BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}


def runtime_stage(text):
    """The Dockerfile's last stage (from its last FROM line), with continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    stages = re.split(r"(?m)^FROM\s", joined)
    if len(stages) < 2:
        raise AssertionError("%s has no FROM line" % DOCKERFILE)
    return stages[-1]


def parse_dockerfile(text):
    """(packages, extras, binaries) of the Dockerfile's runtime stage.

    packages: the names after `apt-get install` (options dropped) in the last stage's RUN lines;
    extras: {name: reason} from `# image-package: NAME -- reason` comment lines (anywhere);
    binaries: the file names its `COPY --from=...` line puts into /usr/local/bin/.
    """
    stage = runtime_stage(text)
    packages = []
    for line in stage.splitlines():
        if not line.startswith("RUN"):
            continue
        for command in re.split(r"&&|;", line):
            words = command.split()
            if "apt-get" in words and "install" in words:
                after = words[words.index("install") + 1:]
                packages += [w for w in after if not w.startswith("-")]
    extras = {}
    for match in re.finditer(r"(?m)^#\s*image-package:\s*(\S+)\s*--\s*(\S.*)$", text):
        extras[match.group(1)] = match.group(2).strip()
    binaries = []
    for line in stage.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and any(w.startswith("--from=") for w in words):
            if words[-1].rstrip("/") == "/usr/local/bin":
                binaries += [os.path.basename(w) for w in words[1:-1] if not w.startswith("--")]
    return packages, extras, binaries


def needed(binary):
    """The sonames `binary` links directly (readelf -d NEEDED)."""
    out = subprocess.run(["readelf", "-d", binary], stdout=subprocess.PIPE, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def ldd(binary):
    """{soname: path} of every library ldd resolves for `binary` (transitively)."""
    out = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, check=True)
    libraries = {}
    for line in out.stdout.splitlines():
        match = re.match(r"\s*(\S+) => (.*)$", line)
        if not match:
            continue
        if match.group(2).strip().startswith("not found"):
            raise AssertionError("%s: ldd finds no %s" % (binary, match.group(1)))
        libraries[match.group(1)] = match.group(2).split(" (")[0].strip()
    return libraries


def candidates(path):
    """The names dpkg may have recorded for `path`: itself, its realpath, each across /usr."""
    names = []
    for p in (path, os.path.realpath(path)):
        for q in (p, p[len("/usr"):] if p.startswith("/usr/") else "/usr" + p):
            if q not in names:
                names.append(q)
    return names


def owners(paths):
    """{path: package} for every path dpkg knows (one dpkg-query -S for all)."""
    result = subprocess.run(["dpkg-query", "-S"] + sorted(set(paths)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    owned = {}
    for line in result.stdout.splitlines():
        package, _, path = line.partition(": ")
        if ", " in package or "diversion" in line:
            continue
        owned[path.strip()] = package.split(":")[0]
    return owned


def package_of(path, owned):
    """The package owning the library at `path`, or None."""
    for name in candidates(path):
        if name in owned:
            return owned[name]
    return None


def depends_closure(packages):
    """`packages` and everything they depend on (Depends and Pre-Depends, recursively), read from
    the installed packages' metadata; alternatives count all installed ones."""
    seen = set()
    pending = list(packages)
    while pending:
        package = pending.pop()
        if package in seen:
            continue
        seen.add(package)
        out = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode != 0:
            continue  # not installed here: its libraries cannot be what ldd found
        for clause in out.stdout.split(","):
            for alternative in clause.split("|"):
                name = alternative.strip().split(" ")[0].split(":")[0]
                if name:
                    pending.append(name)
    return seen


def check(dockerfile_text, bin_dir):
    """Every problem with `dockerfile_text`'s runtime packages for the binaries in `bin_dir`, as
    messages (empty when the list is right)."""
    packages, extras, binaries = parse_dockerfile(dockerfile_text)
    problems = []
    if not packages:
        problems.append("no `apt-get install` in the runtime stage of %s" % DOCKERFILE)
    if not binaries:
        problems.append("no `COPY --from=... /usr/local/bin/` in the runtime stage")
    direct = {}  # package -> [(binary, soname, path)]
    linked = {}  # package -> [(binary, soname, path)], transitively
    libraries = []
    for binary in binaries:
        path = os.path.join(bin_dir, binary)
        if not os.path.isfile(path):
            problems.append("%s: not built (the Dockerfile ships it)" % path)
            continue
        resolved = ldd(path)
        for soname in needed(path):
            if soname not in resolved:
                problems.append("%s links %s, which ldd does not resolve" % (binary, soname))
        libraries.append((binary, resolved, set(needed(path))))
    owned = owners([c for _, resolved, _ in libraries for p in resolved.values()
                    for c in candidates(p)])
    for binary, resolved, direct_names in libraries:
        for soname, path in sorted(resolved.items()):
            package = package_of(path, owned)
            if package is None:
                problems.append("%s links %s (%s), which no Debian package owns" %
                                (binary, soname, path))
                continue
            linked.setdefault(package, []).append((binary, soname, path))
            if soname in direct_names:
                direct.setdefault(package, []).append((binary, soname, path))
    listed = set(packages)
    for package in sorted(set(direct) - BASE_PACKAGES - listed):
        binary, soname, path = direct[package][0]
        problems.append("missing: %s links %s (%s) from package %s, which the Dockerfile's "
                        "runtime apt-get install does not list" % (binary, soname, path, package))
    for package in sorted(listed - set(direct) - set(extras)):
        why = (" (it is loaded only through another library: %s loads %s)" %
               linked[package][0][:2]
               if package in linked else "")
        problems.append("extra: the Dockerfile installs %s, which no shipped binary links "
                        "directly%s; drop it, or give the reason in a "
                        "`# image-package: %s -- reason` comment" % (package, why, package))
    for package in sorted(listed & BASE_PACKAGES):
        problems.append("the Dockerfile lists %s, which the base image has" % package)
    image = depends_closure(listed | BASE_PACKAGES | set(extras))
    for package in sorted(set(linked) - image):
        binary, soname, path = linked[package][0]
        problems.append("missing: %s loads %s (%s) from package %s, which is neither listed nor "
                        "a dependency of a listed package" % (binary, soname, path, package))
    return problems


class ImagePackagesTest(unittest.TestCase):
    def setUp(self):
        with open(DOCKERFILE) as f:
            self.text = f.read()

    def test_runtime_packages_match_the_linked_libraries(self):
        problems = check(self.text, BIN_DIR)
        self.assertEqual(problems, [], "deploy/Dockerfile's runtime packages:\n  " +
                         "\n  ".join(problems))

    def test_the_dockerfile_ships_the_three_binaries(self):
        _, _, binaries = parse_dockerfile(self.text)
        self.assertEqual(sorted(binaries), ["alsim", "alsim-scene-compiler", "alsim-server"])

    def test_a_missing_package_fails_naming_library_and_package(self):
        # The Dockerfile with libccd2 taken out of its list: alsim-server links libccd.so.2.
        packages, _, _ = parse_dockerfile(self.text)
        self.assertIn("libccd2", packages)
        rotten = re.sub(r"(?<=\s)libccd2(?=\s)", "", self.text)
        problems = check(rotten, BIN_DIR)
        self.assertTrue(any(p.startswith("missing:") and "libccd.so.2" in p and "libccd2" in p
                            for p in problems), problems)

    def test_an_extra_package_fails_unless_its_reason_is_given(self):
        # libssl3 is loaded (through gRPC) but linked directly by none of the binaries.
        rotten = self.text.replace("libtbb12 ", "libtbb12 libssl3 ", 1)
        self.assertNotEqual(rotten, self.text)
        problems = check(rotten, BIN_DIR)
        self.assertTrue(any(p.startswith("extra:") and "libssl3" in p for p in problems),
                        problems)
        excused = rotten + "# image-package: libssl3 -- for the test\n"
        self.assertEqual(check(excused, BIN_DIR), [])


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
