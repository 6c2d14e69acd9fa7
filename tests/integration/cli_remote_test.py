"""End to end: the alsim CLI's server commands (create, step, watch, bench, list, destroy) against
the real alsim-server binary on ephemeral ports.

Python standard library only; run by CTest with Debian's /usr/bin/python3 (ALSIM_PYTHON).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

BIN_DIR = None


def start_server():
    """Starts alsim-server on an ephemeral port; returns (process, grpc_address)."""
    process, address, _ = server_harness.start_server(BIN_DIR, metrics="none")
    return process, address


def write_binary_stl(path, vertices, faces):
    data = b"\0" * 80 + struct.pack("<I", len(faces))
    for face in faces:
        data += struct.pack("<3f", 0, 0, 0)
        for index in face:
            data += struct.pack("<3f", *vertices[index])
        data += struct.pack("<H", 0)
    with open(path, "wb") as out:
        out.write(data)


class CliRemoteTest(unittest.TestCase):
    def setUp(self):
        self.process, self.address = start_server()

    def tearDown(self):
        server_harness.stop_server(self.process)

    def alsim(self, *args, timeout=60):
        return subprocess.run(
            [os.path.join(BIN_DIR, "alsim"), "--address", self.address, "--wait", "5",
             "--timeout", "30", *args],
            capture_output=True, text=True, timeout=timeout)

    def alsim_ok(self, *args):
        out = self.alsim(*args)
        self.assertEqual(out.returncode, 0, "alsim %s: %s" % (" ".join(args), out.stderr))
        return out

    def test_create_at_a_keyframe(self):
        scene = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keyframes_scene.xml")
        for key in ("home", "0"):
            created = json.loads(self.alsim_ok("create", scene, "--keyframe", key, "--json").stdout)
            self.assertEqual(created["nq"], 2)
        for key in ("away", "7"):
            failed = self.alsim("create", scene, "--keyframe", key)
            self.assertEqual(failed.returncode, 1, failed.stderr)
            self.assertIn("INVALID_ARGUMENT", failed.stderr)
            self.assertIn("0 'home', 1 (unnamed)", failed.stderr)
        failed = self.alsim("create", scene, "--keyframe", "99999999999")
        self.assertEqual(failed.returncode, 2, failed.stderr)

    def test_create_step_watch_list_destroy(self):
        created = json.loads(self.alsim_ok("create", "quadruped_drop_8", "--count", "3",
                                           "--json").stdout)
        group = created["group_id"]
        ids = created["instance_ids"]
        self.assertGreater(group, 0)
        self.assertEqual(len(ids), 3)
        self.assertEqual((created["nq"], created["nv"], created["nu"]), (8 * 19, 8 * 18, 8 * 12))
        timestep = created["timestep"]
        self.assertAlmostEqual(timestep, 1.0 / 240.0, delta=1e-15)

        stepped = json.loads(self.alsim_ok("step", "--group", str(group), "--steps", "20",
                                           "--json").stdout)
        self.assertEqual(stepped["steps"], 20)
        self.assertEqual([row["id"] for row in stepped["instances"]], ids)
        for row in stepped["instances"]:
            self.assertLessEqual(abs(row["time"] - 20 * timestep), 1e-12, row)
            self.assertEqual(row["status"], "OK")
            for key in ("contacts", "islands", "max_iterations", "mean_iterations",
                        "primal_residual", "dual_residual", "contact_residual"):
                self.assertIn(key, row)

        # Random controls and substeps on a subset, by ids; the human-readable table.
        human = self.alsim_ok("step", "--ids", "%d,%d" % (ids[2], ids[0]), "--substeps", "2",
                              "--random-actions", "--seed", "7")
        self.assertIn("stepped 2 instances 1 time x 2 substeps", human.stdout)
        self.assertRegex(human.stdout, r"\n\s+%d\s+0\.091667\s+OK" % ids[2])

        watched = self.alsim_ok("watch", "--group", str(group), "--frames", "3", "--rate", "50")
        lines = watched.stdout.splitlines()
        self.assertEqual(len(lines), 3, watched.stdout)
        for sequence, line in enumerate(lines, start=1):
            self.assertTrue(line.startswith("frame %d " % sequence), line)
            self.assertIn("dropped", line)
            for instance in ids:
                # The trunk's free joint: its height is shown as z; contacts as c.
                self.assertRegex(line, r"\| %d: t=\d+\.\d+ z=-?\d+\.\d+ c=\d+" % instance)

        listed = self.alsim_ok("list")
        for instance in ids:
            self.assertRegex(listed.stdout, r"\n\s+%d\s+%d\s+quadruped_drop_8\s+subadmm\s" %
                             (instance, group))
        rows = json.loads(self.alsim_ok("list", "--json").stdout)["instances"]
        self.assertEqual([row["id"] for row in rows], ids)
        self.assertEqual([row["steps"] for row in rows], [22, 20, 22])

        destroyed = self.alsim_ok("destroy", "--group", str(group))
        self.assertIn("destroyed 3 instances", destroyed.stdout)
        self.assertIn("no instances", self.alsim_ok("list").stdout)

    def test_bench_reports_throughput_and_cleans_up(self):
        for mode in ("--batch", "--no-batch"):
            out = self.alsim_ok("bench", "quadruped_drop_8", "--instances", "4", "--steps", "10",
                                mode, "--json")
            result = json.loads(out.stdout)
            self.assertEqual((result["instances"], result["steps"]), (4, 10))
            self.assertEqual(result["calls"], 10 if mode == "--batch" else 40)
            for key in ("instance_steps_per_second", "server_instance_steps_per_second",
                        "latency_p50_us", "latency_p99_us"):
                self.assertGreater(result[key], 0, key)
            self.assertLessEqual(result["latency_p50_us"], result["latency_p99_us"])
        human = self.alsim_ok("bench", "box_stack", "--instances", "2", "--steps", "5")
        self.assertRegex(human.stdout, r"throughput \d+ instance steps/s")
        self.assertRegex(human.stdout, r"p50 \d+ us, p99 \d+ us")
        # Every benchmark destroyed its instances.
        self.assertEqual(json.loads(self.alsim_ok("list", "--json").stdout)["instances"], [])

    def test_scene_file_with_include_and_mesh(self):
        with tempfile.TemporaryDirectory() as directory:
            os.makedirs(os.path.join(directory, "meshes"))
            os.makedirs(os.path.join(directory, "parts"))
            write_binary_stl(os.path.join(directory, "meshes", "tet.stl"),
                             [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)],
                             [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)])
            # An include in any case is one, as MuJoCo reads it, and its own includes are sent.
            with open(os.path.join(directory, "parts", "body.xml"), "w") as out:
                out.write('<mujoco><body pos="0 0 0.3"><freejoint/>'
                          '<include file="parts/geom.xml"/></body></mujoco>')
            with open(os.path.join(directory, "parts", "geom.xml"), "w") as out:
                out.write('<mujoco><geom type="mesh" mesh="tet"/></mujoco>')
            scene = os.path.join(directory, "scene.xml")
            with open(scene, "w") as out:
                out.write('<mujoco model="tet">\n'
                          '  <!-- not a reference: file="missing.stl" -->\n'
                          '  <compiler meshdir="meshes"/>\n'
                          '  <option timestep="0.002"/>\n'
                          '  <asset><mesh name="tet" file="tet.stl"/></asset>\n'
                          '  <worldbody>\n'
                          '    <geom type="plane" size="1 1 0.1"/>\n'
                          '    <INCLUDE file="parts/body.xml"/>\n'
                          '  </worldbody>\n'
                          '</mujoco>\n')
            created = json.loads(self.alsim_ok("create", scene, "--json").stdout)
            self.assertEqual((created["nq"], created["nv"], created["nu"]), (7, 6, 0))
            self.assertEqual(created["timestep"], 0.002)
            stepped = json.loads(self.alsim_ok("step", "--ids", str(created["instance_ids"][0]),
                                               "--steps", "10", "--json").stdout)
            self.assertLessEqual(abs(stepped["instances"][0]["time"] - 0.02), 1e-12)
            listed = json.loads(self.alsim_ok("list", "--json").stdout)["instances"]
            self.assertEqual(listed[0]["scene"], "scene.xml")

            # Without the mesh the server names what it misses; the CLI warns first.
            os.remove(os.path.join(directory, "meshes", "tet.stl"))
            out = self.alsim("create", scene)
            self.assertEqual(out.returncode, 1, out.stderr)
            self.assertIn("alsim: create: warning: cannot read", out.stderr)
            self.assertIn("alsim: create: INVALID_ARGUMENT: ", out.stderr)

    def test_server_errors_exit_1_with_the_code(self):
        for args in (("step", "--ids", "999999"), ("destroy", "--ids", "999999"),
                     ("watch", "--ids", "999999", "--frames", "1"),
                     ("step", "--group", "999999"), ("create", "no_such_scene")):
            out = self.alsim(*args)
            self.assertEqual(out.returncode, 1, args)
            self.assertRegex(out.stderr, r"^alsim: %s: NOT_FOUND: \S" % args[0], args)
        out = self.alsim("create", "box_stack", "--solver", "nonsense")
        self.assertEqual(out.returncode, 1)
        self.assertIn("alsim: create: INVALID_ARGUMENT: solver must be one of subadmm, pgs",
                      out.stderr)

    def test_usage_errors_exit_2(self):
        for args in (("step", "--group", "1", "--bogus"), ("step",), ("destroy", "--group", "x"),
                     ("step", "--group", "1", "--ids", "2"), ("watch", "--ids", "1,,2"),
                     ("create",), ("create", "./no/such/file.xml"), ("bench", "box_stack",
                                                                    "--instances", "0"),
                     ("list", "extra"), ("view", "--rate", "0"), ("view", "--bogus"),
                     ("step", "--group", "1", "--rate", "-1")):
            out = self.alsim(*args)
            self.assertEqual(out.returncode, 2, (args, out.stderr))
            self.assertRegex(out.stderr, r"^alsim: %s: " % args[0], args)
            self.assertIn("Try 'alsim %s --help'." % args[0], out.stderr)
        out = self.alsim("frobnicate")
        self.assertEqual(out.returncode, 2)

    def test_step_rate_paces_the_calls(self):
        created = json.loads(self.alsim_ok("create", "box_stack", "--json").stdout)
        try:
            # 6 calls at 20 per second: the last starts 5 intervals (0.25 s) after the first.
            out = json.loads(self.alsim_ok("step", "--group", str(created["group_id"]), "--steps",
                                           "6", "--rate", "20", "--json").stdout)
            self.assertEqual(out["steps"], 6)
            self.assertGreaterEqual(out["wall_seconds"], 0.25)
        finally:
            self.alsim_ok("destroy", "--group", str(created["group_id"]))

    def test_view_reports_what_keeps_it_from_serving(self):
        out = self.alsim("view", "--listen", "nonsense")
        self.assertEqual(out.returncode, 1)
        self.assertIn("alsim: view: --listen 'nonsense' is not HOST:PORT", out.stderr)
        with tempfile.TemporaryDirectory() as empty:
            out = self.alsim("view", "--listen", "127.0.0.1:0", "--web-dir", empty)
        self.assertEqual(out.returncode, 1)
        self.assertIn("alsim: view: the page's file %s/index.html cannot be read" % empty,
                      out.stderr)

    def test_help_documents_every_command(self):
        out = self.alsim_ok("--help")
        for command in ("create SCENE", "step SELECTION", "watch SELECTION", "bench SCENE",
                        "list [--json]", "destroy SELECTION", "view [OPTIONS]"):
            self.assertIn(command, out.stdout)
        for flag in ("--count", "--seed", "--solver", "--iterations", "--tolerance", "--steps",
                     "--substeps", "--random-actions", "--rate", "--frames", "--instances",
                     "--batch", "--group", "--ids", "--json", "--listen", "--web-dir",
                     "--max-connections"):
            self.assertIn(flag, out.stdout)
        step_help = self.alsim_ok("step", "--help")
        self.assertIn("--random-actions", step_help.stdout)
        self.assertNotIn("bench SCENE", step_help.stdout)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
