"""End to end: `alsim run`, the in-process headless runner, on a scene written here.

Python standard library only. CTest passes --bin-dir, the folder holding the alsim binary.
"""
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import unittest

import entry  # tests/integration, next to this file

BIN_DIR = None

# Boxes dropped 2 cm onto a plane in three separate stacks (two boxes, one, one), so that at
# rest the contacts form three islands. (x, y, half-height) of each box, bottom first per stack.
BOXES = [
    ("a0", 0.0, 0.0, 0.05),
    ("a1", 0.0, 0.0, 0.04),
    ("b0", 1.0, 0.0, 0.05),
    ("c0", -1.0, 1.0, 0.03),
]
DROP = 0.02  # m of free fall before the first contact


def scene_xml():
    """The MJCF text, and the resting height of each box centre (in BOXES order)."""
    bodies = []
    resting_z = []
    top = {}  # (x, y) of a stack -> height of its top face at rest so far
    below = {}  # (x, y) of a stack -> boxes placed in it so far
    for name, x, y, half in BOXES:
        base = top.get((x, y), 0.0)
        resting_z.append(base + half)
        top[(x, y)] = base + 2 * half
        below[(x, y)] = below.get((x, y), 0) + 1
        # A gap of DROP under every box of the stack, so each one falls onto the one below it.
        z = base + half + DROP * below[(x, y)]
        bodies.append(
            '<body name="%s" pos="%g %g %g"><freejoint/>'
            '<geom type="box" size="0.1 0.1 %g" mass="1"/></body>' % (name, x, y, z, half))
    xml = """<mujoco model="three_stacks">
  <option timestep="0.004166666666666667"/>
  <default><geom friction="0.8 0.005 0.0001" condim="3"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    %s
  </worldbody>
</mujoco>
""" % "\n    ".join(bodies)
    return xml, resting_z


# Sliders in zero gravity, each pushed by a motor: with a ctrlrange of (-0.5, 0.5), one of
# (0.25, 2), and none ([-1, 1] for random actions). No contacts: the controls alone move them.
ACTUATED_RANGES = [(-0.5, 0.5), (0.25, 2.0), None] * 3


def actuated_xml():
    bodies, motors = [], []
    for i, ctrlrange in enumerate(ACTUATED_RANGES):
        bodies.append(
            '<body pos="0 %g 0"><joint name="j%d" type="slide" axis="1 0 0"/>'
            '<geom type="sphere" size="0.05" mass="1" contype="0" conaffinity="0"/></body>'
            % (0.2 * i, i))
        limits = ('ctrllimited="true" ctrlrange="%g %g"' % ctrlrange if ctrlrange
                  else 'ctrllimited="false"')
        motors.append('<motor joint="j%d" gear="1" %s/>' % (i, limits))
    return """<mujoco model="sliders">
  <option timestep="0.01" gravity="0 0 0"/>
  <worldbody>
    %s
  </worldbody>
  <actuator>
    %s
  </actuator>
</mujoco>
""" % ("\n    ".join(bodies), "\n    ".join(motors))


MASK64 = (1 << 64) - 1


def mix(x):
    """splitmix64's finalizer, as client/cli/random_actions.h has it."""
    x = (x + 0x9e3779b97f4a7c15) & MASK64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK64
    return x ^ (x >> 31)


def action(seed, instance, step, actuator, lower=-1.0, upper=1.0):
    """random_actions.h's Action: uniform in [lower, upper), a pure function of its arguments."""
    bits = mix(seed ^ mix(instance ^ mix(step ^ mix(actuator))))
    return lower + (upper - lower) * ((bits >> 11) * 2.0**-53)


class RunCommandTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        xml, cls.resting_z = scene_xml()
        cls.scene = os.path.join(cls.tmp.name, "three_stacks.xml")
        with open(cls.scene, "w") as f:
            f.write(xml)
        cls.actuated = os.path.join(cls.tmp.name, "sliders.xml")
        with open(cls.actuated, "w") as f:
            f.write(actuated_xml())
        cls.results = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def alsim(self, *args, **kwargs):
        return subprocess.run([os.path.join(BIN_DIR, "alsim"), *args],
                              capture_output=True, text=True, timeout=120, **kwargs)

    def run_json(self, threads, steps=600):
        """`alsim run --json` on the scene (cached per thread count); returns the parsed object."""
        key = (threads, steps)
        if key not in self.results:
            out = self.alsim("run", self.scene, "--steps", str(steps), "--threads", str(threads),
                             "--json")
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            self.assertEqual(len(lines), 1, "stdout must be exactly one JSON object: %r" % out.stdout)
            self.results[key] = json.loads(lines[0])
        return self.results[key]

    def test_json_has_every_key_with_its_type(self):
        result = self.run_json(threads=2)
        types = {
            "scene": str, "solver": str, "threads": int, "steps": int, "dof": int,
            "subsystems": int, "mean_contacts": (int, float), "mean_islands": (int, float),
            "steps_per_second": (int, float), "mean_iterations": (int, float),
            "mean_contact_residual": (int, float), "max_penetration_m": (int, float),
            "state_hash": str, "qpos": list, "diverged": bool, "split_steps": int,
        }
        for key, expected in types.items():
            self.assertIn(key, result)
            self.assertIsInstance(result[key], expected, key)
            if expected is not bool:  # json gives booleans as bool, a subclass of int
                self.assertNotIsInstance(result[key], bool, key)
        self.assertEqual(result["scene"], self.scene)
        self.assertEqual(result["solver"], "subadmm")
        self.assertEqual(result["threads"], 2)
        self.assertRegex(result["state_hash"], r"^[0-9a-f]{16}$")
        self.assertTrue(all(isinstance(x, (int, float)) for x in result["qpos"]))
        self.assertFalse(result["diverged"])

    def test_sizes_and_statistics_match_the_scene(self):
        result = self.run_json(threads=2)
        self.assertEqual(result["steps"], 600)
        self.assertEqual(result["dof"], 6 * len(BOXES))
        self.assertEqual(result["subsystems"], len(BOXES))
        self.assertEqual(len(result["qpos"]), 7 * len(BOXES))
        self.assertGreater(result["steps_per_second"], 0)
        # Each resting face-face contact has 4 corner points; three stacks are three islands for
        # all but the first few falling steps.
        self.assertGreater(result["mean_contacts"], 10)
        self.assertGreater(result["mean_islands"], 2.5)
        self.assertLessEqual(result["mean_islands"], 3)
        self.assertGreater(result["mean_iterations"], 0)
        self.assertGreaterEqual(result["mean_contact_residual"], 0)
        self.assertGreaterEqual(result["max_penetration_m"], 0)
        self.assertLess(result["max_penetration_m"], 0.005)

    def test_boxes_end_resting(self):
        qpos = self.run_json(threads=2)["qpos"]
        for i, (name, x, y, _) in enumerate(BOXES):
            px, py, pz, qw = qpos[7 * i:7 * i + 4]
            self.assertAlmostEqual(pz, self.resting_z[i], delta=0.002, msg=name)
            self.assertAlmostEqual(px, x, delta=0.002, msg=name)
            self.assertAlmostEqual(py, y, delta=0.002, msg=name)
            self.assertAlmostEqual(abs(qw), 1.0, delta=1e-3, msg=name)  # still upright

    def test_state_hash_is_the_same_for_any_thread_count(self):
        hashes = {threads: self.run_json(threads)["state_hash"] for threads in (1, 2, 8)}
        self.assertEqual(len(set(hashes.values())), 1, hashes)
        qpos = {threads: self.run_json(threads)["qpos"] for threads in (1, 2, 8)}
        self.assertEqual(qpos[1], qpos[8])
        self.assertEqual(self.run_json(8)["threads"], 8)

    def test_solver_options_are_taken(self):
        out = self.alsim("run", self.scene, "--steps", "50", "--iterations", "7", "--tolerance",
                         "1e-6", "--budget-us", "0", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertEqual(result["steps"], 50)
        self.assertLessEqual(result["mean_iterations"], 7)
        out = self.alsim("run", self.scene, "--steps", "20", "--relaxation", "1",
                         "--penalty-scaling", "pseudo-density", "--anderson", "0", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertEqual(result["relaxation"], 1.0)
        self.assertEqual(result["penalty_scaling"], "pseudo-density")
        self.assertEqual(result["anderson_memory"], 0)
        out = self.alsim("run", self.scene, "--steps", "20", "--response-after", "0",
                         "--delassus-refresh", "3", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertEqual(result["response_after_iterations"], 0)
        self.assertEqual(result["delassus_refresh_steps"], 3)
        # CANAL with its own options, and its figures averaged over the steps.
        out = self.alsim("run", self.scene, "--steps", "20", "--solver", "canal",
                         "--canal-kappa", "4", "--canal-warm-velocity", "on", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertEqual(result["solver"], "canal")
        self.assertEqual(result["canal_kappa"], 4.0)
        self.assertIs(result["canal_start_from_previous_velocity"], True)
        figures = result["mean_solver_figures"]
        self.assertGreater(figures["newton_steps"], 0)
        self.assertGreaterEqual(figures["outer_iterations"], 1)

    def run_actuated(self, *args):
        out = self.alsim("run", self.actuated, "--json", *args)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def test_default_actions_are_zero_controls(self):
        default = self.run_actuated("--steps", "50")
        self.assertEqual(default["actions"], "zero")
        self.assertEqual(default["seed"], 0)
        self.assertEqual(default["ctrl"], [0.0] * len(ACTUATED_RANGES))
        # Nothing moves the sliders whose ctrlrange holds 0 (the engine clamps 0 to 0.25 in the
        # others, as MuJoCo does).
        for q, ctrlrange in zip(default["qpos"], ACTUATED_RANGES):
            if ctrlrange is None or ctrlrange[0] <= 0 <= ctrlrange[1]:
                self.assertEqual(q, 0.0)
        zero = self.run_actuated("--steps", "50", "--actions", "zero", "--seed", "9")
        self.assertEqual(zero["state_hash"], default["state_hash"])
        self.assertEqual(zero["actions"], "zero")
        self.assertEqual(zero["seed"], 9)
        # On a scene without actuators random actions change nothing.
        self.assertEqual(
            self.run_json(threads=1, steps=60)["state_hash"],
            json.loads(self.alsim("run", self.scene, "--steps", "60", "--threads", "1",
                                  "--actions", "random", "--json").stdout)["state_hash"])

    def test_random_actions_are_reproducible_and_seeded(self):
        first = self.run_actuated("--steps", "40", "--actions", "random", "--seed", "3",
                                  "--threads", "1")
        again = self.run_actuated("--steps", "40", "--actions", "random", "--seed", "3",
                                  "--threads", "2")
        other = self.run_actuated("--steps", "40", "--actions", "random", "--seed", "4",
                                  "--threads", "1")
        zero = self.run_actuated("--steps", "40")
        self.assertEqual(first["actions"], "random")
        self.assertEqual(first["seed"], 3)
        self.assertEqual(first["state_hash"], again["state_hash"])
        self.assertEqual(first["qpos"], again["qpos"])
        self.assertNotEqual(first["state_hash"], other["state_hash"])
        self.assertNotEqual(first["state_hash"], zero["state_hash"])
        self.assertNotEqual(first["qpos"], [0.0] * len(ACTUATED_RANGES))
        # The default seed is 0.
        self.assertEqual(self.run_actuated("--steps", "5", "--actions", "random")["state_hash"],
                         self.run_actuated("--steps", "5", "--actions", "random", "--seed",
                                           "0")["state_hash"])

    def test_random_actions_lie_in_the_ctrlrange_and_are_redrawn_every_step(self):
        seed = 2**64 - 5  # the whole 64-bit range is a seed
        previous = None
        for steps in range(1, 9):
            ctrl = self.run_actuated("--steps", str(steps), "--actions", "random", "--seed",
                                     str(seed))["ctrl"]
            self.assertEqual(len(ctrl), len(ACTUATED_RANGES))
            for a, (value, ctrlrange) in enumerate(zip(ctrl, ACTUATED_RANGES)):
                lower, upper = ctrlrange or (-1.0, 1.0)
                self.assertGreaterEqual(value, lower, (steps, a))
                self.assertLessEqual(value, upper, (steps, a))
                # The draw of instance 0 at the last step, exactly.
                self.assertEqual(value, action(seed, 0, steps - 1, a, lower, upper), (steps, a))
            self.assertNotEqual(ctrl, previous)
            previous = ctrl

    def test_split_steps_counts_deep_corrections(self):
        # The stacks rest exactly: no step needs a split. A box placed 5 cm into the floor at
        # 2 ms asks for 5 m/s of correction: its first steps split, and it is not thrown.
        self.assertEqual(self.run_json(1)["split_steps"], 0)
        sunk = os.path.join(self.tmp.name, "sunk.xml")
        with open(sunk, "w") as f:
            f.write("""<mujoco><option timestep="0.002"/><worldbody>
                <geom type="plane" size="2 2 .1"/>
                <body pos="0 0 0.05"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
                </worldbody></mujoco>""")
        out = self.alsim("run", sunk, "--steps", "200", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertGreater(result["split_steps"], 5)
        self.assertAlmostEqual(result["qpos"][2], 0.1, delta=1e-3)

    def test_summary_without_json(self):
        out = self.alsim("run", self.scene, "--steps", "20")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("state hash", out.stdout)
        self.assertIn("20 steps", out.stdout)
        self.assertEqual(out.stderr, "")  # stderr is no terminal here: no progress bar

    def test_progress_bar_only_on_a_terminal_and_never_with_json(self):
        for extra, expect_bar in (([], True), (["--json"], False)):
            controller, terminal = pty.openpty()
            try:
                out = subprocess.run(
                    [os.path.join(BIN_DIR, "alsim"), "run", self.scene, "--steps", "50", *extra],
                    stdout=subprocess.PIPE, stderr=terminal, text=True, timeout=120)
                os.close(terminal)
                terminal = None
                shown = b""
                while True:
                    try:
                        chunk = os.read(controller, 4096)
                    except OSError:  # EIO: the terminal's other end is closed
                        break
                    if not chunk:
                        break
                    shown += chunk
            finally:
                if terminal is not None:
                    os.close(terminal)
                os.close(controller)
            self.assertEqual(out.returncode, 0)
            self.assertEqual(b"50/50 steps" in shown, expect_bar, shown)
            if extra:
                json.loads(out.stdout)  # stdout stays one clean JSON object

    def test_help_documents_run_and_every_flag(self):
        out = self.alsim("--help")
        self.assertEqual(out.returncode, 0)
        for flag in ("run SCENE", "--steps", "--solver", "--threads", "--iterations",
                     "--tolerance", "--budget-us", "--relaxation", "--penalty-scaling",
                     "--anderson", "--delassus-refresh", "--response-after", "--json",
                     "--actions", "--seed", "--keyframe",
                     "server-info", "health"):
            self.assertIn(flag, out.stdout)
        self.assertIn("[default 1000]", out.stdout)

    def test_keyframe_by_name_or_index_is_the_start_state(self):
        # A hinge arm with a position servo and two keyframes: one named, setting time, qpos,
        # qvel and ctrl; one unnamed, setting qpos only. MJCF's qpos is in radians.
        scene = os.path.join(self.tmp.name, "keyframes.xml")
        with open(scene, "w") as f:
            f.write("""<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
  <body pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" contype="0" conaffinity="0"/></body>
</worldbody><actuator><position joint="hinge" kp="5"/></actuator>
<keyframe><key name="up" time="2" qpos="0.5" qvel="0.25" ctrl="0.75"/><key qpos="-0.25"/></keyframe>
</mujoco>""")
        for spec in ("up", "0"):
            start = json.loads(self.alsim("run", scene, "--keyframe", spec, "--steps", "0",
                                          "--json").stdout)
            self.assertEqual((start["qpos"], start["time"], start["ctrl"]), ([0.5], 2.0, [0.75]))
        start = json.loads(self.alsim("run", scene, "--keyframe", "1", "--steps", "0",
                                      "--json").stdout)
        self.assertEqual((start["qpos"], start["time"], start["ctrl"]), ([-0.25], 0.0, [0.0]))
        # Zero actions hold the keyframe's controls; time runs on from the keyframe's.
        moved = json.loads(self.alsim("run", scene, "--keyframe", "up", "--steps", "10",
                                      "--json").stdout)
        self.assertEqual(moved["ctrl"], [0.75])
        self.assertAlmostEqual(moved["time"], 2.1, places=12)
        self.assertNotEqual(moved["qpos"], [0.5])
        summary = self.alsim("run", scene, "--keyframe", "up", "--steps", "1")
        self.assertIn("start     keyframe 0 'up'", summary.stdout)
        for bad, message in (("down", "no keyframe is named 'down'"),
                             ("2", "keyframe index 2 is out of range")):
            out = self.alsim("run", scene, "--keyframe", bad, "--json")
            self.assertEqual(out.returncode, 2, bad)
            self.assertIn(message + "; the scene's keyframes: 0 'up', 1 (unnamed)", out.stderr)
            self.assertEqual(out.stdout, "")
        out = self.alsim("run", self.scene, "--keyframe", "0")
        self.assertEqual(out.returncode, 2)
        self.assertIn("the scene's keyframes: none", out.stderr)

    def test_missing_file(self):
        missing = os.path.join(self.tmp.name, "no_such_scene.xml")
        out = self.alsim("run", missing)
        self.assertEqual(out.returncode, 2)
        self.assertIn(missing, out.stderr)
        self.assertEqual(out.stdout, "")

    def test_malformed_xml_reports_file_and_line(self):
        bad = os.path.join(self.tmp.name, "bad.xml")
        with open(bad, "w") as f:
            f.write('<mujoco>\n<worldbody>\n<body>\n<geom type="box"\n</worldbody>\n</mujoco>\n')
        out = self.alsim("run", bad, "--json")
        self.assertEqual(out.returncode, 2)
        self.assertRegex(out.stderr, re.escape(bad) + r":\d+: ")
        self.assertEqual(out.stdout, "")

    def test_bad_values_exit_2(self):
        for args in (["--solver", "nope"], ["--steps", "-1"], ["--steps", "ten"],
                     ["--threads", "0"], ["--iterations", "0"], ["--tolerance", "-1"],
                     ["--budget-us", "x"], ["--relaxation", "2"], ["--relaxation", "0"],
                     ["--penalty-scaling", "unit"], ["--anderson", "9"], ["--steps"],
                     ["--response-after", "-1"], ["--delassus-refresh", "0"],
                     ["--actions", "foo"], ["--actions"], ["--seed", "-1"], ["--seed", "x"],
                     ["--seed", "18446744073709551616"], ["--no-such-flag"]):
            out = self.alsim("run", self.scene, *args)
            self.assertEqual(out.returncode, 2, args)
            self.assertIn("alsim: run: ", out.stderr, args)
            self.assertEqual(out.stdout, "", args)
        out = self.alsim("run", self.scene, "--actions", "foo")
        self.assertIn("--actions 'foo' is not one of zero or random", out.stderr)
        out = self.alsim("run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("no scene file", out.stderr)

    def test_divergence_exits_1_and_names_the_step(self):
        # A hinge spring far too stiff for the step: symplectic Euler grows it until it overflows.
        scene = os.path.join(self.tmp.name, "diverges.xml")
        with open(scene, "w") as f:
            f.write("""<mujoco><option timestep="0.01"/><worldbody><body>
  <joint type="hinge" axis="0 0 1" stiffness="1e10" springref="1"/>
  <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.1" contype="0" conaffinity="0"/>
</body></worldbody></mujoco>""")
        out = self.alsim("run", scene, "--json")
        self.assertEqual(out.returncode, 1)
        result = json.loads(out.stdout)
        self.assertTrue(result["diverged"])
        self.assertEqual(result["diverged_step"], result["steps"])
        self.assertLess(result["steps"], 1000)
        self.assertIn("diverged at step %d" % result["steps"], out.stderr)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
