"""End to end: the Python client package (client/python/alsim, VectorEnv) against a real
alsim-server on ephemeral ports: batches, autoreset, state round trips, errors, several servers,
and the scene (env.scene() against GetScene's raw answer) and the state stream (env.stream()
against Step's diagnostics of the same steps).

Run by CTest with PYTHONPATH=client/python:BUILD/python (the sources and the stubs the build
generated); needs Debian's /usr/bin/python3 (python3-grpcio, python3-numpy).
"""
import os
import struct
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

import grpc
import numpy as np

import alsim
from alsim.v1 import alsim_pb2, alsim_pb2_grpc

BIN_DIR = None


def start_server(*extra_args):
    """Starts alsim-server on ephemeral ports; returns (process, grpc_address)."""
    process, address, _ = server_harness.start_server(BIN_DIR, *extra_args)
    return process, address


def random_actions(env, rng):
    """Uniform actions inside the action bounds (clipped to +-0.3 where unbounded)."""
    spec = env.action_spec["action"]
    lower = np.maximum(spec.lower, -0.3)
    upper = np.minimum(spec.upper, 0.3)
    return rng.uniform(lower, upper, size=(env.num_envs, env.nu))


def write_binary_stl(path, half):
    """A cube of half-size `half` as a binary STL (12 triangles, outward normals)."""
    corners = [(x, y, z) for x in (-half, half) for y in (-half, half) for z in (-half, half)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = []
    for a, b, c, d in faces:
        triangles += [(a, b, c), (a, c, d)]
    with open(path, "wb") as f:
        f.write(b"alsim python_client_test cube".ljust(80, b" "))
        f.write(struct.pack("<I", len(triangles)))
        for tri in triangles:
            p = [np.array(corners[i]) for i in tri]
            normal = np.cross(p[1] - p[0], p[2] - p[0])
            if np.dot(normal, p[0]) < 0:  # the cube is centred at 0: outward = away from it
                p[1], p[2] = p[2], p[1]
                normal = -normal
            normal = normal / np.linalg.norm(normal)
            f.write(struct.pack("<3f", *normal))
            for vertex in p:
                f.write(struct.pack("<3f", *vertex))
            f.write(struct.pack("<H", 0))


MESH_SCENE = """<mujoco model="mesh_drop">
  <compiler meshdir="meshes"/>
  <option timestep="0.005"/>
  <include file="floor.xml"/>
  <asset>
    <mesh name="cube" file="cube.stl"/>
    <mesh name="tetra" file="shapes/tetra.obj"/>
  </asset>
  <worldbody>
    <body name="cube" pos="0 0 0.2">
      <freejoint/>
      <geom type="mesh" mesh="cube" density="500"/>
    </body>
    <body name="tetra" pos="0.5 0 0.3">
      <freejoint/>
      <geom type="mesh" mesh="tetra" density="500"/>
    </body>
    <body name="arm" pos="-0.5 0 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor" joint="hinge" ctrlrange="-1 1" ctrllimited="true"/>
  </actuator>
</mujoco>
"""

FLOOR = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
  </worldbody>
</mujoco>
"""

TETRA_OBJ = """v 0 0 0
v 0.1 0 0
v 0 0.1 0
v 0 0 0.1
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
"""

DIVERGING_SCENE = server_harness.DIVERGING_SCENE


FLOATING_BOX_SCENE = """<mujoco model="floating box">
  <option timestep="0.005"/>
  <worldbody>
    <body name="box" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.1" mass="2.5"/>
    </body>
  </worldbody>
</mujoco>
"""


# A cart (slide) with a pendulum (hinge), nq = nv = 2, nu = 1, and two keyframes: "home" (time,
# qpos, qvel, ctrl) and an unnamed one (qpos only). Sent as a local file, which the client uploads.
KEYFRAMES_SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keyframes_scene.xml")
KEYFRAME_OBSERVATIONS = ("qpos", "qvel", "ctrl", "time")


def scene_keyframes(path=KEYFRAMES_SCENE):
    """The keyframes of the MJCF at ``path`` as its text gives them, in the scene's order:
    ``[{"name", "time", "qpos", "qvel", "ctrl"}]``, MuJoCo's defaults (0; the scene's qpos0 is 0)
    where a key leaves a field out."""
    root = ElementTree.parse(path).getroot()
    sizes = {"qpos": len(root.findall(".//joint")), "qvel": len(root.findall(".//joint")),
             "ctrl": len(root.findall("./actuator/*"))}
    keys = []
    for key in root.findall("./keyframe/key"):
        values = {"name": key.get("name", ""), "time": np.array([float(key.get("time", 0))])}
        for field, size in sizes.items():
            text = key.get(field)
            values[field] = np.zeros(size) if text is None else np.array(text.split(), float)
        keys.append(values)
    return keys


# A particle on slide joints x and z with a motor on each, resting on a floor (mass 2 kg, friction
# 0.5): the gradient tests' scene.
PARTICLE_SCENE = """<mujoco><option timestep="0.002"/><worldbody>
  <geom name="floor" type="plane" size="5 5 0.1" friction="0.5"/>
  <body name="ball" pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>
    <joint name="z" type="slide" axis="0 0 1"/>
    <geom name="ball" type="sphere" size="0.1" mass="2" friction="0.5"/></body></worldbody>
  <actuator><motor joint="x" gear="1"/><motor joint="z" gear="1"/></actuator></mujoco>
"""


def kuhn_grid(n, a):
    """An n^3 cube of voxels of edge a from the origin, six Kuhn tets per voxel, each positively
    oriented (as tests/support/kuhn_grid.h): (points [(n+1)^3, 3], tets [6 n^3, 4])."""
    def ident(x, y, z):
        return (z * (n + 1) + y) * (n + 1) + x

    points = np.array([(a * x, a * y, a * z) for z in range(n + 1) for y in range(n + 1)
                       for x in range(n + 1)], dtype=np.float64)
    tets = []
    for z in range(n):
        for y in range(n):
            for x in range(n):
                for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
                    corner = [x, y, z]
                    tet = [ident(*corner)]
                    for axis in order:
                        corner[axis] += 1
                        tet.append(ident(*corner))
                    edges = points[tet[1:]] - points[tet[0]]
                    if np.dot(edges[0], np.cross(edges[1], edges[2])) < 0:
                        tet[1], tet[2] = tet[2], tet[1]
                    tets.append(tet)
    return points, np.array(tets)


# A scene with a tetrahedral deformable (docs/engine.md "Deformables"): the companion file
# soft.xml names TetGen's files; every vertex is pinned, so it stays at rest.
SOFT_SCENE = """<mujoco><custom><text name="alsim:deformables" data="soft.xml"/></custom>
  <worldbody><geom type="plane" size="5 5 0.1"/>
    <body name="box" pos="1 0 0.2"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
  </worldbody></mujoco>
"""
SOFT_COMPANION = """<deformables><deformable name="jelly" node="cube.node" ele="cube.ele"
    young="1e5" density="1000" rgba="0.25 0.5 0.75 0.5" pos="0.25 -0.5 0.75">
  <pin vertices="%s"/></deformable></deformables>
"""


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.address = start_server()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        server_harness.stop_server(cls.process)

    def env(self, scene="quadruped_drop_8", num_envs=4, address=None, **kwargs):
        env = alsim.VectorEnv(address or self.address, scene, num_envs, **kwargs)
        self.addCleanup(env.close)
        return env

    def listing(self):
        with grpc.insecure_channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            return stub.List(alsim_pb2.ListRequest(), timeout=10).instances

    def live_instances(self):
        return {info.instance_id for info in self.listing()}

    def steps(self, env):
        """Each environment's step count on the server (List): unchanged when no Step ran."""
        steps = {info.instance_id: info.steps for info in self.listing()}
        return [steps[i] for i in env.instance_ids]

    def write_mesh_scene(self):
        """MESH_SCENE with its include and mesh files; returns the model's path."""
        directory = os.path.join(self.tmp.name, "mesh_scene")
        if not os.path.isdir(directory):
            os.makedirs(os.path.join(directory, "meshes", "shapes"))
            write_binary_stl(os.path.join(directory, "meshes", "cube.stl"), 0.05)
            with open(os.path.join(directory, "meshes", "shapes", "tetra.obj"), "w") as f:
                f.write(TETRA_OBJ)
            with open(os.path.join(directory, "floor.xml"), "w") as f:
                f.write(FLOOR)
            with open(os.path.join(directory, "mesh_drop.xml"), "w") as f:
                f.write(MESH_SCENE)
        return os.path.join(directory, "mesh_drop.xml")

    def test_builtin_scene_steps_with_random_actions_deterministically(self):
        envs = [self.env(seed=3, observations=("qpos", "qvel", "time")) for _ in range(2)]
        env = envs[0]
        self.assertEqual(env.num_envs, 4)
        self.assertEqual(len(env.instance_ids), 4)
        self.assertEqual((env.nq, env.nv, env.nu), (8 * 19, 8 * 18, 8 * 12))
        self.assertEqual(env.action_spec["action"].shape, (env.nu,))
        self.assertEqual(env.observation_spec["qpos"].shape, (env.nq,))
        self.assertEqual(env.observation_spec["qvel"].dtype, np.dtype("<f8"))
        self.assertAlmostEqual(env.timestep, 1 / 240)

        observations = [e.reset(seed=3) for e in envs]
        initial = observations[0]["qpos"].copy()
        self.assertEqual(initial.shape, (4, env.nq))
        self.assertEqual(observations[0]["qvel"].shape, (4, env.nv))
        np.testing.assert_array_equal(observations[0]["time"], np.zeros((4, 1)))

        rng = np.random.default_rng(7)
        for _ in range(100):
            actions = random_actions(env, rng)
            results = [e.step(actions) for e in envs]
        (obs, info), (other, _) = results
        self.assertEqual(obs["qpos"].shape, (4, env.nq))
        self.assertEqual(obs["qvel"].shape, (4, env.nv))
        self.assertTrue(np.isfinite(obs["qpos"]).all() and np.isfinite(obs["qvel"]).all())
        np.testing.assert_allclose(obs["time"], np.full((4, 1), 100 * env.timestep), rtol=1e-12)
        self.assertFalse(np.array_equal(obs["qpos"], initial))
        self.assertEqual(obs["qpos"].tobytes(), other["qpos"].tobytes())  # bit-equal
        self.assertEqual(obs["qvel"].tobytes(), other["qvel"].tobytes())
        for key in ("status", "diverged", "reset", "contacts", "iterations", "contact_residual"):
            self.assertEqual(info[key].shape, (4,), key)
        np.testing.assert_array_equal(info["status"], [env.STATUS_OK] * 4)
        self.assertFalse(info["diverged"].any() or info["reset"].any())
        self.assertTrue((info["contacts"] > 0).all())  # the robots have landed
        self.assertTrue((info["iterations"] > 0).all())

    def test_reset_noise_follows_the_seeds(self):
        env = self.env(num_envs=2, seed=11)
        exact = env.reset(noise=0)["qpos"].copy()
        np.testing.assert_array_equal(exact[0], exact[1])  # one scene, no noise
        first = env.reset(seed=5, noise=0.05)["qpos"].copy()
        again = env.reset(seed=[5, 6], noise=0.05)["qpos"].copy()  # seed 5 + k, spelled out
        other = env.reset(seed=6, noise=0.05)["qpos"].copy()
        np.testing.assert_array_equal(first, again)
        self.assertFalse(np.array_equal(first[0], first[1]))  # env k draws from seed + k
        self.assertFalse(np.array_equal(first[0], other[0]))
        np.testing.assert_array_equal(first[1], other[0])     # both seeded with 6
        self.assertFalse(np.array_equal(first, exact))
        with self.assertRaises(ValueError):
            env.reset(seed=[1, 2, 3])

    def assert_at_keyframe(self, obs, key, noise=0.0, rows=None):
        """Every environment's (or ``rows``') observations equal ``key``'s values, or within
        ``noise`` of them on qpos and qvel (each hinge and slide, each velocity) and exactly on
        ctrl and time."""
        for name in KEYFRAME_OBSERVATIONS:
            values = np.asarray(obs[name]) if rows is None else np.asarray(obs[name])[rows]
            expected = np.broadcast_to(key[name], values.shape)
            if noise and name in ("qpos", "qvel"):
                self.assertTrue((np.abs(values - expected) <= noise).all(), (name, values))
                self.assertTrue((values != expected).any(), (name, "no noise"))
            else:
                np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12, err_msg=name)

    def test_keyframes_at_creation_and_at_reset(self):
        home, second = scene_keyframes()
        self.assertEqual((home["name"], second["name"]), ("home", ""))
        env = self.env(KEYFRAMES_SCENE, num_envs=3, seed=4, keyframe="home",
                       observations=KEYFRAME_OBSERVATIONS)
        self.assertEqual((env.nq, env.nv, env.nu, env.keyframe), (2, 2, 1, "home"))

        # Created at "home": the state the server holds before any reset or step.
        with env.stream(observations=KEYFRAME_OBSERVATIONS, rate_hz=100) as frames:
            self.assert_at_keyframe(next(frames).observations, home)
        self.assertEqual(self.steps(env), [0, 0, 0])
        self.assert_at_keyframe(env.reset(), home)  # a plain reset returns to it

        # A reset naming a keyframe goes there for that call only; by index, by name, by a
        # numpy integer.
        env.step(np.full((3, 1), 0.5))
        self.assert_at_keyframe(env.reset(keyframe=1), second)
        env.step(None)
        self.assert_at_keyframe(env.reset(), home)
        self.assert_at_keyframe(env.reset(keyframe=np.uint32(1)), second)
        self.assert_at_keyframe(env.reset(keyframe="home"), home)
        self.assert_at_keyframe(env.reset(keyframe=0), home)

        # Noise on top of the keyframe: within the band on hinge and slide positions and on the
        # velocities, drawn per environment from its seed; ctrl and time as the keyframe sets.
        noisy = env.reset(seed=9, noise=0.05)
        self.assert_at_keyframe(noisy, home, noise=0.05)
        self.assertFalse(np.array_equal(noisy["qpos"][0], noisy["qpos"][1]))
        again = env.reset(seed=9, noise=0.05)
        np.testing.assert_array_equal(noisy["qpos"], again["qpos"])
        self.assert_at_keyframe(env.reset(seed=9, noise=0.05, keyframe=1), second, noise=0.05)

        # An unknown keyframe: the server's INVALID_ARGUMENT naming the scene's keyframes, and
        # no environment reset.
        env.step(np.full((3, 1), -0.5))
        before = [env.state(k) for k in range(3)]
        for keyframe, what in (("away", "no keyframe is named 'away'"),
                               ("", "no keyframe is named ''"),
                               (2, "keyframe index 2 is out of range")):
            with self.assertRaises(alsim.AlsimError, msg=keyframe) as refused:
                env.reset(keyframe=keyframe)
            self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
            self.assertIn(what, refused.exception.message)
            self.assertIn("the scene's keyframes: 0 'home', 1 (unnamed)",
                          refused.exception.message)
            self.assertEqual([env.state(k) for k in range(3)], before)
        # Refused here, before any call: a bool, a negative index, another type.
        for keyframe, error in ((True, TypeError), (np.bool_(False), TypeError),
                                (-1, ValueError), (1 << 32, ValueError), (1.0, TypeError),
                                (b"home", TypeError)):
            with self.assertRaises(error, msg=keyframe):
                env.reset(keyframe=keyframe)
            self.assertEqual([env.state(k) for k in range(3)], before)
        self.assert_at_keyframe(env.reset(), home)  # still created at "home"

        # Created without a keyframe: the scene's initial state (qpos0 = 0), which plain resets
        # return to; a reset may still name one.
        plain = self.env(KEYFRAMES_SCENE, num_envs=2, observations=KEYFRAME_OBSERVATIONS)
        self.assertIsNone(plain.keyframe)
        initial = {name: np.zeros(values.size) for name, values in home.items() if name != "name"}
        self.assert_at_keyframe(plain.reset(), initial)
        self.assert_at_keyframe(plain.reset(keyframe="home"), home)
        self.assert_at_keyframe(plain.reset(), initial)
        # Created at the unnamed keyframe, by its index.
        unnamed = self.env(KEYFRAMES_SCENE, num_envs=2, keyframe=1,
                           observations=KEYFRAME_OBSERVATIONS)
        self.assertEqual(unnamed.keyframe, 1)
        self.assert_at_keyframe(unnamed.reset(), second)

        # Creation at an unknown keyframe creates nothing; bad arguments make no call.
        live = self.live_instances()
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, KEYFRAMES_SCENE, 2, keyframe="away")
        self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
        self.assertIn("no keyframe is named 'away'; the scene's keyframes: 0 'home', 1 (unnamed)",
                      refused.exception.message)
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, KEYFRAMES_SCENE, 2, keyframe=2)
        self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
        self.assertIn("0 'home', 1 (unnamed)", refused.exception.message)
        for keyframe, error in ((False, TypeError), (-3, ValueError), (["home"], TypeError)):
            with self.assertRaises(error, msg=keyframe):
                alsim.VectorEnv(self.address, KEYFRAMES_SCENE, 2, keyframe=keyframe)
        self.assertEqual(self.live_instances(), live)

    def test_local_mjcf_with_mesh_assets_and_include(self):
        path = self.write_mesh_scene()
        directory = os.path.dirname(path)

        source = alsim.scene_source(path)
        self.assertEqual(source.text.filename, "mesh_drop.xml")
        self.assertEqual(sorted(source.text.assets),
                         ["floor.xml", "meshes/cube.stl", "meshes/shapes/tetra.obj"])

        env = self.env(path, num_envs=2, observations=("qpos", "time", "contact_count"))
        self.assertEqual((env.nq, env.nv, env.nu), (15, 13, 1))
        np.testing.assert_array_equal(env.action_spec["action"].lower, [-1])
        np.testing.assert_array_equal(env.action_spec["action"].upper, [1])
        self.assertEqual(env.action_names, ["motor"])
        start = env.reset()["qpos"].copy()
        for _ in range(10):
            obs, info = env.step(np.full((2, 1), 0.5, dtype=np.float32))
        np.testing.assert_allclose(obs["time"], np.full((2, 1), 10 * 0.005), rtol=1e-12)
        self.assertTrue(np.isfinite(obs["qpos"]).all())
        self.assertLess(obs["qpos"][0, 2], start[0, 2])  # the cube falls
        self.assertEqual(obs["contact_count"].dtype, np.dtype("<i4"))
        np.testing.assert_array_equal(info["status"], [env.STATUS_OK] * 2)

        with self.assertRaises(FileNotFoundError):
            alsim.scene_source(os.path.join(self.tmp.name, "missing.xml"))

        # An include in any case is one, as MuJoCo reads it.
        upper = os.path.join(directory, "upper.xml")
        with open(upper, "w") as f:
            f.write('<mujoco><INCLUDE file="floor.xml"/></mujoco>')
        self.assertEqual(sorted(alsim.scene_source(upper).text.assets), ["floor.xml"])

    def test_state_round_trip_is_bit_exact(self):
        env = self.env(num_envs=2, seed=1)
        env.reset(seed=1, noise=0.02)
        rng = np.random.default_rng(3)
        for _ in range(10):
            env.step(random_actions(env, rng))
        saved = env.state(0)
        self.assertIsInstance(saved, bytes)
        actions = [random_actions(env, rng) for _ in range(20)]
        for a in actions:
            first, _ = env.step(a)
        first_qpos = first["qpos"][0].copy()
        first_qvel = first["qvel"][0].copy()
        env.set_state(0, saved)
        for a in actions:
            second, _ = env.step(a)
        self.assertEqual(second["qpos"][0].tobytes(), first_qpos.tobytes())
        self.assertEqual(second["qvel"][0].tobytes(), first_qvel.tobytes())
        self.assertEqual(env.state(-1), env.state(1))
        with self.assertRaises(IndexError):
            env.state(2)

    def test_autoreset_next_step(self):
        path = os.path.join(self.tmp.name, "overflow.xml")
        with open(path, "w") as f:
            f.write(DIVERGING_SCENE)
        env = self.env(path, num_envs=3, observations=("qpos", "time"))
        env.reset()
        blowup = np.array([[0.0], [1e300], [0.0]])
        obs, info = env.step(blowup)
        np.testing.assert_array_equal(info["status"], [1, 2, 1])
        np.testing.assert_array_equal(info["diverged"], [False, True, False])
        self.assertFalse(info["reset"].any())
        self.assertFalse(np.isfinite(obs["qpos"][1]).all())

        # The next step resets env 1 (ignoring its action and forces) and steps the others.
        obs, info = env.step(blowup, external_forces=np.zeros((3, env.nbody, 6)))
        np.testing.assert_array_equal(info["reset"], [False, True, False])
        np.testing.assert_array_equal(info["status"], [1, 1, 1])
        self.assertFalse(info["diverged"].any())
        np.testing.assert_array_equal(obs["qpos"][1], [0.0])
        np.testing.assert_array_equal(obs["time"].ravel(), [0.02, 0.0, 0.02])

        obs, info = env.step(np.zeros((3, 1)))
        self.assertFalse(info["reset"].any())
        np.testing.assert_allclose(obs["time"].ravel(), [0.03, 0.01, 0.03])

        # Every env diverged: the next step only resets.
        env.step(np.full((3, 1), 1e300))
        obs, info = env.step(np.zeros((3, 1)))
        self.assertTrue(info["reset"].all())
        np.testing.assert_array_equal(obs["time"].ravel(), [0.0, 0.0, 0.0])

        manual = self.env(path, num_envs=2, autoreset=False)
        _, info = manual.step(np.array([[1e300], [0.0]]))
        np.testing.assert_array_equal(info["diverged"], [True, False])
        with self.assertRaises(alsim.AlsimError) as caught:
            manual.step(np.zeros((2, 1)))
        self.assertEqual(caught.exception.code, "FAILED_PRECONDITION")
        self.assertIsInstance(caught.exception, RuntimeError)
        manual.reset()
        _, info = manual.step(np.zeros((2, 1)))
        self.assertFalse(info["diverged"].any())

    def test_bad_input(self):
        env = self.env(num_envs=2)
        # Refused here, before any call: ValueError, and no instance stepped.
        for shape in [(2, env.nu + 1), (3, env.nu), (env.nu,), (2, env.nu, 1)]:
            with self.assertRaises(ValueError):
                env.step(np.zeros(shape))
        self.assertEqual(self.steps(env), [0, 0])

        env.reset()
        before = env.state(0)
        actions = np.zeros((2, env.nu), dtype=np.float32)
        actions[1, 5] = np.nan
        with self.assertRaises(alsim.AlsimError) as caught:
            env.step(actions)
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("not finite", caught.exception.message)
        self.assertEqual(env.state(0), before)  # no instance moved

        with self.assertRaises(alsim.AlsimError) as caught:
            alsim.VectorEnv(self.address, "no_such_scene", 2)
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        self.assertIn("no_such_scene", caught.exception.message)

    def test_external_forces_hold_a_box_against_gravity_for_one_step_call(self):
        path = os.path.join(self.tmp.name, "floating_box.xml")
        with open(path, "w") as f:
            f.write(FLOATING_BOX_SCENE)
        env = self.env(path, num_envs=2, substeps=10)
        self.assertEqual(env.nbody, 2)
        self.assertEqual(env.body_names, ["world", "box"])
        box = env.body_names.index("box")
        forces = np.zeros((2, env.nbody, 6))
        forces[0, box, 2] = 2.5 * 9.81  # MuJoCo's layout: force (N) then torque (N m), world
        for _ in range(20):
            obs, info = env.step(None, external_forces=forces)
        self.assertTrue((info["status"] == env.STATUS_OK).all())
        self.assertAlmostEqual(obs["qpos"][0, 2], 1.0, delta=1e-12)
        np.testing.assert_allclose(obs["qvel"][0], np.zeros(6), atol=1e-12)
        self.assertLess(obs["qpos"][1, 2], 0.0)  # the other box fell

        # The forces were those calls' only: without them the held box falls too.
        obs, _ = env.step(None)
        self.assertLess(obs["qvel"][0, 2], -0.4)
        # float32 works, and integer arrays are converted.
        env.step(None, external_forces=forces.astype(np.float32))
        env.step(None, external_forces=np.zeros((2, env.nbody, 6), dtype=np.int64))

        steps = self.steps(env)
        for shape in [(2, env.nbody), (2, env.nbody + 1, 6), (3, env.nbody, 6), (2, env.nbody, 3),
                      (2 * env.nbody * 6,)]:
            with self.assertRaises(ValueError):
                env.step(None, external_forces=np.zeros(shape))
        with self.assertRaises(TypeError):
            env.step(None, external_forces=np.full((2, env.nbody, 6), "x"))
        self.assertEqual(self.steps(env), steps)  # refused before any call

        before = env.state(0), env.state(1)
        forces[1, box, 4] = np.inf
        with self.assertRaises(alsim.AlsimError) as caught:
            env.step(None, external_forces=forces)
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("external force [1, 1, 4] (body 'box') is not finite",
                      caught.exception.message)
        self.assertEqual((env.state(0), env.state(1)), before)  # no instance moved

    def test_solver_options_by_name_and_their_figures(self):
        # Any option of the engine's table reaches the server by name; CANAL reports its own
        # figures (Newton steps, ...) next to the shared diagnostics.
        env = self.env("box_stack", 2, solver={"solver": "canal", "canal_beta0": 1e3,
                                               "canal_start_from_previous_velocity": True})
        for _ in range(3):
            _, info = env.step(None)
        figures = info["solver_figures"]
        self.assertEqual(sorted(figures), ["al_residual", "factorizations", "inner_failures",
                                           "line_search_iterations", "newton_residual",
                                           "newton_steps", "outer_iterations",
                                           "subadmm_fallbacks"])
        self.assertTrue((figures["subadmm_fallbacks"] == 0).all(), figures)  # no stall here
        self.assertTrue((figures["outer_iterations"] >= 1).all(), figures)
        self.assertTrue((figures["factorizations"] >= 1).all(), figures)
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "box_stack", 1, solver={"canal_zeta": 1.5})
        self.assertIn("canal_zeta must be a number in (0, 1)", str(refused.exception))

    def test_newton_solvers_and_the_integrator_by_name(self):
        # MuJoCo's model, SAP's (issue 43) and ICF's (issue 45) by their registered names, with
        # the Newton kit's figures; SAP's and ICF's physical parameters and the theta method's
        # integrator by option name.
        for solver in ({"solver": "mujoco"},
                       {"solver": "sap", "sap_stiffness": 1e5, "integrator": "midpoint"},
                       {"solver": "icf-lagged", "icf_stiffness": 1e5, "icf_regularized": True},
                       {"solver": "icf-similar", "icf_dissipation": 0}):
            env = self.env("box_stack", 2, solver=solver)
            for _ in range(20):
                _, info = env.step(None)
            figures = info["solver_figures"]
            for name in ("newton_iterations", "line_search_evaluations", "factorizations",
                         "warm_starts"):
                self.assertIn(name, figures, solver)
            self.assertTrue((figures["newton_iterations"] >= 1).all(), (solver, figures))
            env.close()
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "box_stack", 1, solver={"integrator": "rk4"})
        self.assertIn("integrator", str(refused.exception))

    def test_drumwright_by_name_with_its_options_and_refusals(self):
        # Drumwright's solver (issue 47) by name with an option of the table: its figures come
        # back; a scene with dry joint friction is refused by name, whatever the client sends.
        env = self.env("box_stack", 2,
                       solver={"solver": "drumwright", "drumwright_contact_stiffness": 1e7,
                               "drumwright_complementary": False,
                               "drumwright_velocity_product": True})
        for _ in range(10):
            _, info = env.step(None)
        figures = info["solver_figures"]
        for name in ("programs", "program_iterations", "failed_programs", "max_violation"):
            self.assertIn(name, figures)
        self.assertTrue((figures["programs"] >= 1).all(), figures)
        self.assertTrue((figures["failed_programs"] == 0).all(), figures)
        env.close()
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "frictionloss_arm", 1, solver="drumwright")
        self.assertIn("dry friction (frictionloss)", str(refused.exception))
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "box_stack", 1,
                            solver={"solver": "drumwright", "drumwright_zeta": -1})
        self.assertIn("drumwright_zeta", str(refused.exception))

    def test_nsn_by_name_with_its_options_and_refusals(self):
        # The non-smooth Newton solver (issue 48) by name with options of the table (a choice,
        # a number, a boolean): its figures come back and its islands converge; a scene with dry
        # joint friction is refused by name; an option out of range names itself.
        env = self.env("box_stack", 2,
                       solver={"solver": "nsn", "nsn_linear_solver": "pcr",
                               "nsn_newton_tolerance": 1e-7, "nsn_contact_rows_at_start": True})
        for _ in range(10):
            _, info = env.step(None)
        figures = info["solver_figures"]
        for name in ("newton_iterations", "linear_iterations", "unconverged_islands",
                     "max_penetration"):
            self.assertIn(name, figures)
        self.assertTrue((figures["newton_iterations"] >= 1).all(), figures)
        self.assertTrue((figures["unconverged_islands"] == 0).all(), figures)
        env.close()
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "frictionloss_arm", 1, solver="nsn")
        self.assertIn("dry friction (frictionloss)", str(refused.exception))
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.VectorEnv(self.address, "box_stack", 1,
                            solver={"solver": "nsn", "nsn_step_fraction": 1.5})
        self.assertIn("nsn_step_fraction", str(refused.exception))

    def test_two_servers_give_the_bits_of_one(self):
        # 8 environments on one server against 4 + 4 on two: env k is seeded seed + k on
        # either, so the batches agree bit for bit, autoresets and state round trips included.
        process, second = start_server()
        self.addCleanup(lambda: (process.kill(), process.wait(), process.stdout.close(),
                                 process.stderr.close()))
        one = self.env("quadruped_drop_8", 8, seed=3, observations=("qpos", "qvel", "time"))
        two = self.env("quadruped_drop_8", 8, [self.address, second], seed=3,
                       observations=("qpos", "qvel", "time"))
        self.assertEqual(two.servers, (self.address, second))
        self.assertEqual(two.env_servers, (self.address,) * 4 + (second,) * 4)
        self.assertEqual((one.group_id, two.group_id, len(two.group_ids)),
                         (one.group_ids[0], None, 2))
        self.assertEqual(len(set(two.instance_ids)), 8)
        a, b = one.reset(noise=0.02), two.reset(noise=0.02)  # the creation seeds 3 + k
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])
        rng = np.random.default_rng(1)
        forces = np.zeros((8, one.nbody, 6))
        forces[:, one.body_names.index("r0_trunk"), 2] = 20.0
        for t in range(30):
            actions = random_actions(one, rng)
            (a, info_a), (b, info_b) = (e.step(actions, forces if t % 3 == 0 else None)
                                        for e in (one, two))
            for name in a:
                np.testing.assert_array_equal(a[name], b[name])
            for key in ("status", "contacts", "iterations", "contact_residual"):
                np.testing.assert_array_equal(info_a[key], info_b[key], key)
        self.assertTrue((info_b["contacts"] > 0).all())
        self.assertEqual(one.state(6), two.state(6))  # env 6 lives on the second server
        self.assertEqual(two.scene(6).geom_names.tolist(), one.scene().geom_names.tolist())
        with self.assertRaisesRegex(ValueError, "2 servers"):
            two.stream()
        with two.stream(observations="qpos", envs=[5, 7]) as frames:  # the second server's
            np.testing.assert_array_equal(next(frames).observations["qpos"], b["qpos"][[5, 7]])
        saved = two.state(5)
        two.step(random_actions(two, rng))
        two.set_state(5, saved)
        self.assertEqual(two.state(5), saved)

        # Autoreset across servers: env 5 (second server) diverges, the next step resets it.
        path = os.path.join(self.tmp.name, "overflow_two.xml")
        with open(path, "w") as f:
            f.write(DIVERGING_SCENE)
        split = self.env(path, 6, [self.address, second], observations=("qpos", "time"))
        single = self.env(path, num_envs=6, observations=("qpos", "time"))
        blowup = np.zeros((6, 1))
        blowup[5] = 1e300
        for _ in range(2):  # the first step diverges env 5, the second resets it
            (a, info_a), (b, info_b) = single.step(blowup), split.step(blowup)
            np.testing.assert_array_equal(info_a["reset"], info_b["reset"])
            np.testing.assert_array_equal(info_a["diverged"], info_b["diverged"])
            np.testing.assert_array_equal(a["time"], b["time"])
        np.testing.assert_array_equal(info_b["reset"], [False] * 5 + [True])

        # A server that fails is named.
        process.kill()
        process.wait()
        with self.assertRaises(alsim.AlsimError) as failed:
            two.step(None)
        self.assertEqual(failed.exception.address, second)
        self.assertIn("server " + second, str(failed.exception))

    # ---- the scene and the stream ----

    def raw_scene(self, instance_id):
        with grpc.insecure_channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            return stub.GetScene(alsim_pb2.GetSceneRequest(instance_id=instance_id), timeout=10)

    def test_scene_is_get_scenes_answer_as_arrays(self):
        for scene in (self.write_mesh_scene(), "humanoid"):
            with self.subTest(scene=scene):
                env = self.env(scene, num_envs=2)
                got = env.scene()
                raw = self.raw_scene(env.instance_ids[0])
                ngeom, nbody = len(raw.geoms), len(raw.body_names)
                self.assertEqual((got.name, got.timestep), (raw.scene, raw.timestep))
                self.assertEqual((got.nbody, got.ngeom), (nbody, ngeom))
                self.assertEqual(nbody, env.nbody)
                np.testing.assert_array_equal(got.gravity, raw.gravity)
                self.assertEqual(got.body_names.tolist(), list(raw.body_names))
                self.assertEqual(got.body_names.tolist(), env.body_names)
                np.testing.assert_array_equal(got.body_parent, raw.body_parent)
                self.assertEqual(got.body_parent.dtype, np.int32)
                for name, shape, dtype in (("geom_size", (ngeom, 3), np.float64),
                                           ("geom_pos", (ngeom, 3), np.float64),
                                           ("geom_quat", (ngeom, 4), np.float64),
                                           ("geom_rgba", (ngeom, 4), np.float32),
                                           ("geom_type", (ngeom,), np.int32),
                                           ("geom_body", (ngeom,), np.int32),
                                           ("geom_group", (ngeom,), np.int32),
                                           ("geom_mesh", (ngeom,), np.int32),
                                           ("geom_collides", (ngeom,), np.bool_)):
                    array = getattr(got, name)
                    self.assertEqual((array.shape, array.dtype), (shape, dtype), name)
                for g, geom in enumerate(raw.geoms):
                    self.assertEqual(got.geom_names[g], geom.name)
                    self.assertEqual(got.geom_type[g], geom.type)
                    self.assertEqual(got.geom_type_names[g],
                                     alsim_pb2.GeomType.Name(geom.type)[10:].lower())
                    self.assertEqual(got.geom_body[g], geom.body)
                    np.testing.assert_array_equal(got.geom_size[g, :len(geom.size)], geom.size)
                    self.assertFalse(got.geom_size[g, len(geom.size):].any())
                    np.testing.assert_array_equal(got.geom_pos[g], geom.pos)
                    np.testing.assert_array_equal(got.geom_quat[g], geom.quat)
                    np.testing.assert_array_equal(got.geom_rgba[g],
                                                  np.array(geom.rgba, dtype=np.float32))
                    self.assertEqual((got.geom_group[g], got.geom_mesh[g], got.geom_collides[g]),
                                     (geom.group, geom.mesh, geom.collides))
                self.assertEqual(len(got.meshes), len(raw.meshes))
                for mesh, raw_mesh in zip(got.meshes, raw.meshes):
                    self.assertEqual(mesh.name, raw_mesh.name)
                    self.assertEqual((mesh.vertices.dtype, mesh.faces.dtype),
                                     (np.float32, np.uint32))
                    np.testing.assert_array_equal(mesh.vertices.ravel(),
                                                  np.array(raw_mesh.vertices, dtype=np.float32))
                    np.testing.assert_array_equal(mesh.faces.ravel(), raw_mesh.faces)
                    self.assertLess(mesh.faces.max(), len(mesh.vertices))
                # Mesh geoms index the meshes; every environment shares the scene.
                meshes = got.geom_type == alsim.Scene.MESH
                np.testing.assert_array_equal(got.geom_mesh >= 0, meshes)
                self.assertEqual(env.scene(1).geom_names.tolist(), got.geom_names.tolist())
                if scene != "humanoid":
                    self.assertEqual(sorted(m.name for m in got.meshes), ["cube", "tetra"])
                    self.assertIn("floor", got.geom_names.tolist())
                    self.assertEqual(got.geom_type_names[got.geom_names.tolist().index("floor")],
                                     "plane")
        with self.assertRaises(IndexError):
            env.scene(2)
        env.close()
        with self.assertRaisesRegex(ValueError, "closed"):
            env.scene()

    def next_frame_at(self, frames, steps):
        """The first frame of ``frames`` whose environments have all taken ``steps`` steps."""
        for _ in range(5000):
            frame = next(frames)
            if (frame.steps == steps).all():
                return frame
            self.assertTrue((frame.steps <= steps).all(), frame.steps)
        self.fail("no frame at %d steps" % steps)

    def test_stream_carries_steps_diagnostics_and_contacts(self):
        env = self.env("box_stack", num_envs=3, observations=("qpos", "time", "contact_count"))
        env.reset()
        with env.stream(observations=("qpos", "time"), rate_hz=500, contacts=True) as frames:
            first = next(frames)
            self.assertEqual(first.sequence, 1)
            np.testing.assert_array_equal(first.envs, [0, 1, 2])
            np.testing.assert_array_equal(first.steps, [0, 0, 0])
            self.assertEqual(sorted(first.observations), ["qpos", "time"])
            for step in range(1, 31):
                obs, info = env.step(None)
                if step % 5:
                    continue
                # The frame of the same steps: Step's observations, status and diagnostics.
                frame = self.next_frame_at(frames, step)
                self.assertEqual(frame.steps.dtype, np.uint64)
                np.testing.assert_array_equal(frame.observations["qpos"], obs["qpos"])
                np.testing.assert_array_equal(frame.observations["time"], obs["time"])
                np.testing.assert_array_equal(frame.status, info["status"])
                np.testing.assert_array_equal(frame.diverged, info["diverged"])
                for key in ("contacts", "islands", "iterations", "mean_iterations",
                            "primal_residual", "dual_residual", "contact_residual",
                            "solve_seconds", "split"):
                    np.testing.assert_array_equal(frame.diagnostics[key], info[key], key)
                    self.assertEqual(frame.diagnostics[key].dtype, info[key].dtype, key)
                self.assertEqual(sorted(frame.diagnostics["solver_figures"]),
                                 sorted(info["solver_figures"]))
                for name, values in info["solver_figures"].items():
                    np.testing.assert_array_equal(frame.diagnostics["solver_figures"][name],
                                                  values, name)
                # One contact point per contact of the step, in the world frame.
                self.assertEqual(len(frame.contacts), 3)
                for k, points in enumerate(frame.contacts):
                    count = obs["contact_count"][k, 0]
                    self.assertEqual(points.position.shape, (count, 3))
                    self.assertEqual(points.normal.shape, (count, 3))
                    self.assertEqual(points.distance.shape, (count,))
                    np.testing.assert_allclose(np.linalg.norm(points.normal, axis=1), 1,
                                               rtol=1e-9)
            self.assertTrue((info["contacts"] > 0).all())  # the boxes rest on each other
            self.assertGreater(frame.sequence, first.sequence)

        # A stream of some environments, in the order given; no details unless asked for.
        with env.stream(observations="qpos", envs=[2, 0]) as frames:
            frame = next(frames)
            np.testing.assert_array_equal(frame.envs, [2, 0])
            np.testing.assert_array_equal(frame.observations["qpos"], obs["qpos"][[2, 0]])
            self.assertIsNone(frame.diagnostics)
            self.assertIsNone(frame.steps)
            self.assertIsNone(frame.contacts)
        self.assertRaises(StopIteration, next, frames)  # closed: the stream has ended

        # Diagnostics without contacts; a diverged instance shows as such.
        path = os.path.join(self.tmp.name, "overflow_stream.xml")
        with open(path, "w") as f:
            f.write(DIVERGING_SCENE)
        overflow = self.env(path, num_envs=2, autoreset=False)
        _, info = overflow.step(np.array([[1e300], [0.0]]))
        with overflow.stream(diagnostics=True) as frames:
            frame = self.next_frame_at(frames, 1)
            np.testing.assert_array_equal(frame.diverged, [True, False])
            np.testing.assert_array_equal(frame.status, info["status"])
            self.assertIsNone(frame.contacts)

        # Bad arguments are refused before any call.
        for kwargs in ({"rate_hz": 0}, {"rate_hz": 2000}, {"observations": ("nope",)},
                       {"observations": ()}, {"envs": [3]}, {"envs": [0, 0]}, {"envs": []}):
            with self.assertRaises(ValueError, msg=kwargs):
                env.stream(**kwargs)

        # The instances destroyed under a stream (by another client): it ends with NOT_FOUND.
        doomed = self.env("box_stack", num_envs=1)
        frames = doomed.stream(rate_hz=200)
        next(frames)
        with grpc.insecure_channel(self.address) as channel:
            alsim_pb2_grpc.SimulatorStub(channel).Destroy(alsim_pb2.DestroyRequest(
                instances=alsim_pb2.InstanceSelection(instance_ids=doomed.instance_ids)),
                timeout=10)
        with self.assertRaises(alsim.AlsimError) as ended:
            for _ in range(1000):
                next(frames)
        self.assertEqual(ended.exception.code, "NOT_FOUND")
        self.assertEqual(ended.exception.address, self.address)
        self.assertRaises(StopIteration, next, frames)
        # Closing the environment ends its streams; a closed one opens none.
        frames = env.stream(rate_hz=200)
        next(frames)
        env.close()
        self.assertRaises(StopIteration, next, frames)
        with self.assertRaisesRegex(ValueError, "closed"):
            env.stream()

    def particle_scene(self):
        """PARTICLE_SCENE in a file; returns its path."""
        path = os.path.join(self.tmp.name, "particle.xml")
        if not os.path.isfile(path):
            with open(path, "w") as f:
                f.write(PARTICLE_SCENE)
        return path

    def soft_scene(self, n, a):
        """SOFT_SCENE with its companion and an n^3 voxel cube's TetGen files; returns the
        model's path and the vertices' rest positions (world frame)."""
        directory = os.path.join(self.tmp.name, "soft_%d" % n)
        points, tets = kuhn_grid(n, a)
        if not os.path.isdir(directory):
            os.makedirs(directory)
            with open(os.path.join(directory, "cube.node"), "w") as f:
                f.write("%d 3 0 0\n" % len(points))
                f.writelines("%d %r %r %r\n" % (i, *p) for i, p in enumerate(points))
            with open(os.path.join(directory, "cube.ele"), "w") as f:
                f.write("%d 4 0\n" % len(tets))
                f.writelines("%d %d %d %d %d\n" % (i, *t) for i, t in enumerate(tets))
            with open(os.path.join(directory, "soft.xml"), "w") as f:
                f.write(SOFT_COMPANION % " ".join(str(v) for v in range(len(points))))
            with open(os.path.join(directory, "soft_cube.xml"), "w") as f:
                f.write(SOFT_SCENE)
        return os.path.join(directory, "soft_cube.xml"), points + np.array([0.25, -0.5, 0.75])

    def test_deformables_come_with_the_scene_and_their_vertices_as_an_observation(self):
        n, a = 2, 0.05
        path, rest = self.soft_scene(n, a)
        nvert = len(rest)
        # scene_source sends the companion file and the TetGen files it names.
        self.assertEqual(sorted(alsim.scene_source(path).text.assets),
                         ["cube.ele", "cube.node", "soft.xml"])
        env = self.env(path, num_envs=2, observations=("qpos", "qvel", "deformable_vertices"))
        scene = env.scene(1)
        self.assertEqual(len(scene.deformables), 1)
        self.assertEqual(scene.nvert, nvert)
        jelly = scene.deformables[0]
        self.assertIsInstance(jelly, alsim.Deformable)
        self.assertEqual((jelly.name, jelly.vertex_start, jelly.vertex_count), ("jelly", 0, nvert))
        np.testing.assert_array_equal(jelly.rgba, np.array([0.25, 0.5, 0.75, 0.5], np.float32))
        self.assertEqual((jelly.rgba.dtype, jelly.faces.dtype), (np.float32, np.uint32))
        self.assertEqual(jelly.faces.shape, (12 * n * n, 3))
        self.assertLess(jelly.faces.max(), nvert)
        # Closed and wound outward: the divergence theorem over the surface gives the volume.
        corners = rest[jelly.vertex_start:jelly.vertex_start + jelly.vertex_count][jelly.faces]
        x0, x1, x2 = corners[:, 0], corners[:, 1], corners[:, 2]
        enclosed = np.sum(np.einsum("ij,ij->i", x0, np.cross(x1 - x0, x2 - x0))) / 6
        self.assertAlmostEqual(enclosed, n ** 3 * a ** 3, delta=1e-15)
        self.assertIn("deformables=1", repr(scene))

        # The vertices at rest from reset, step and the stream: [num_envs, nvert, 3] float64.
        expected = np.broadcast_to(rest, (2, nvert, 3))
        observations = env.reset()
        self.assertEqual(observations["deformable_vertices"].dtype, np.float64)
        np.testing.assert_allclose(observations["deformable_vertices"], expected, atol=1e-15)
        observations, _ = env.step(np.zeros((2, env.nu)))
        np.testing.assert_allclose(observations["deformable_vertices"], expected, atol=1e-15)
        with env.stream(observations=("deformable_vertices",), rate_hz=100) as frames:
            frame = next(iter(frames))
        np.testing.assert_allclose(frame.observations["deformable_vertices"], expected,
                                   atol=1e-15)

        # A scene without deformables: none in the scene, a [num_envs, 0, 3] observation.
        plain = self.env("box_stack", num_envs=2, observations="deformable_vertices")
        self.assertEqual(plain.scene().deformables, [])
        self.assertEqual(plain.scene().nvert, 0)
        self.assertEqual(plain.reset()["deformable_vertices"].shape, (2, 0, 3))

    def test_gradients_are_numpy_arrays_that_match_central_differences(self):
        # Three particles under icf-lagged, pushed along x past the friction bound (mu m g = 9.8
        # N): sliding, where the step is smooth in the controls. dv/du from the server against
        # central differences of two plain steps from the same saved state.
        env = self.env(self.particle_scene(), 3, solver="icf-lagged")
        self.assertEqual((env.nv, env.nu), (2, 2))
        actions = np.array([[15.0, 0.0], [20.0, -3.0], [-18.0, 2.0]])
        for _ in range(10):
            env.step(actions)
        saved = [env.state(k) for k in range(3)]
        observations, info = env.step(
            actions, gradients={"state": True, "controls": True, "parameters": ["body_mass:ball"]})
        gradients = info["gradients"]
        for name in ("dv_dv", "dv_dq", "dq_dv", "dq_dq", "dv_du", "dq_du"):
            self.assertIsInstance(gradients[name], np.ndarray)
            self.assertEqual(gradients[name].shape, (3, 2, 2), name)
            self.assertEqual(gradients[name].dtype, np.float64, name)
        self.assertEqual(gradients["dv_dp"].shape, (3, 2, 1))
        self.assertEqual(gradients["dq_dp"].shape, (3, 2, 1))
        self.assertEqual(gradients["parameters"], ("body_mass:ball",))
        np.testing.assert_array_equal(gradients["computed"], [True] * 3)
        self.assertTrue(np.all(np.isfinite(gradients["dv_du"])))
        # The gradient step is the plain step: the same next state.
        for k in range(3):
            env.set_state(k, saved[k])
        plain, _ = env.step(actions)
        np.testing.assert_array_equal(plain["qvel"], observations["qvel"])

        eps = 1e-3  # N
        difference = np.zeros((3, 2, 2))
        for a in range(2):
            moved = []
            for sign in (1.0, -1.0):
                for k in range(3):
                    env.set_state(k, saved[k])
                pushed = actions.copy()
                pushed[:, a] += sign * eps
                moved.append(env.step(pushed)[0]["qvel"])
            difference[:, :, a] = (moved[0] - moved[1]) / (2 * eps)
        # Sliding along x, a push along x changes v_x by h / m (0.002 / 2) and nothing else.
        scale = np.abs(difference).max()
        self.assertGreater(scale, 5e-4)
        np.testing.assert_allclose(gradients["dv_du"], difference, rtol=0, atol=1e-4 * scale)
        # dq = h dv on slide joints.
        np.testing.assert_allclose(gradients["dq_du"], 0.002 * gradients["dv_du"], rtol=1e-12)

        # Only the environments that ask: the others step plainly, with NaN rows.
        for k in range(3):
            env.set_state(k, saved[k])
        _, info = env.step(actions, gradients={"controls": True, "envs": [1]})
        masked = info["gradients"]
        np.testing.assert_array_equal(masked["computed"], [False, True, False])
        self.assertEqual(set(masked) & {"dv_dv", "dv_dp"}, set())
        self.assertTrue(np.all(np.isnan(masked["dv_du"][[0, 2]])))
        np.testing.assert_array_equal(masked["dv_du"][1], gradients["dv_du"][1])
        # No environment asks: a plain step, every row NaN.
        _, info = env.step(actions, gradients={"controls": True, "envs": np.zeros(3, bool)})
        self.assertFalse(info["gradients"]["computed"].any())
        self.assertTrue(np.all(np.isnan(info["gradients"]["dv_du"])))
        # The velocity half of the state blocks alone.
        for k in range(3):
            env.set_state(k, saved[k])
        _, info = env.step(actions, gradients={"state": True, "positions": False})
        velocities = info["gradients"]
        self.assertEqual(set(velocities) & {"dv_dq", "dq_dq", "dv_du"}, set())
        np.testing.assert_array_equal(velocities["dv_dv"], gradients["dv_dv"])
        np.testing.assert_array_equal(velocities["dq_dv"], gradients["dq_dv"])

    def test_gradients_over_two_servers_are_one_servers(self):
        # 4 environments on one server against 2 + 2 on two: the same Jacobians row for row,
        # also when the asking environments all sit on the first server.
        process, second = start_server()
        self.addCleanup(lambda: (process.kill(), process.wait(), process.stdout.close(),
                                 process.stderr.close()))
        one = self.env(self.particle_scene(), 4, solver="icf-lagged")
        two = self.env(self.particle_scene(), 4, [self.address, second], solver="icf-lagged")
        actions = np.array([[15.0, 0.0], [20.0, -3.0], [-18.0, 2.0], [0.0, 1.0]])
        for gradients in (True, {"state": True, "envs": [0, 1]}):
            _, a = one.step(actions, gradients=gradients)
            _, b = two.step(actions, gradients=gradients)
            for name in ("dv_dv", "dv_du", "computed"):
                if name in a["gradients"]:
                    np.testing.assert_array_equal(a["gradients"][name], b["gradients"][name])
        np.testing.assert_array_equal(b["gradients"]["computed"], [True, True, False, False])

    def test_gradients_are_refused_for_a_solver_without_them(self):
        env = self.env(self.particle_scene(), 2)  # the default solver, subadmm
        before = self.steps(env)
        with self.assertRaises(alsim.AlsimError) as refused:
            env.step(np.zeros((2, 2)), gradients=True)
        self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
        self.assertIn("icf-lagged, icf-similar or sap", str(refused.exception))
        self.assertEqual(self.steps(env), before)
        with self.assertRaises(ValueError):
            env.step(np.zeros((2, 2)), gradients={"controls": True, "envs": [5]})
        with self.assertRaises(ValueError):
            env.step(np.zeros((2, 2)), gradients={"velocities": True})
        with self.assertRaises(TypeError):
            env.step(np.zeros((2, 2)), gradients="all")
        self.assertEqual(self.steps(env), before)

    def test_close_destroys_the_group_and_is_idempotent(self):
        with alsim.VectorEnv(self.address, "box_stack", 3) as env:
            ids = set(env.instance_ids)
            self.assertTrue(ids <= self.live_instances())
        self.assertTrue(env.closed)
        self.assertFalse(ids & self.live_instances())
        env.close()
        with self.assertRaises(ValueError):
            env.step(None)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
