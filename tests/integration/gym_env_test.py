"""Gymnasium-shaped conformance of alsim.GymVectorEnv against real alsim-server processes.

Shapes, dtypes and spaces; the three autoreset modes as Gymnasium 1.x defines them; reset_mask;
seeds; truncation at max_episode_steps; step_async/step_wait against step; several servers (a
list, and one DNS name with several addresses) against one. The independent answers are
alsim.VectorEnv (the plain client) and the same environment run another way: on one server,
synchronously, without an episode limit.

Gymnasium itself, against a stand-in gymnasium package with Gymnasium 1.x's documented names
and behaviour (Debian has none; see stand_in_gymnasium below): alsim imported anew under it is a
gymnasium.vector.VectorEnv with Gymnasium's spaces and AutoresetMode, `import alsim` registers
alsim/Humanoid-v0 and alsim/Scene-v0 for make_vec, and RecordEpisodeStatistics wraps it with the
episode lengths and returns of each autoreset mode; without gymnasium, alsim stands alone.

Run by CTest with PYTHONPATH=client/python:BUILD/python (the sources and the stubs the build
generated); needs Debian's /usr/bin/python3 (python3-grpcio, python3-numpy).
"""
import collections
import importlib
import os
import socket
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from unittest import mock

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

import numpy as np

import alsim

BIN_DIR = None
SCENE = "humanoid"  # MuJoCo's humanoid.xml: a free-floating torso (qpos[0:3]) and 21 motors
TORSO_Z = 2         # column of the torso's height in obs = [qpos | qvel]
FALLEN = 1.0        # m: below this the humanoid has fallen

DIVERGING_SCENE = server_harness.DIVERGING_SCENE

# A cart (slide) with a pendulum (hinge), nq = nv = 2, nu = 1, and two keyframes: "home" (time,
# qpos, qvel, ctrl) and an unnamed one (qpos only). Sent as a local file, which the client uploads.
KEYFRAMES_SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keyframes_scene.xml")
KEYFRAME_OBSERVATIONS = ("qpos", "qvel", "ctrl", "time")  # obs columns 0-1, 2-3, 4, 5
KEYFRAME_LISTING = "the scene's keyframes: 0 'home', 1 (unnamed)"


def keyframe_rows(path=KEYFRAMES_SCENE, observations=KEYFRAME_OBSERVATIONS):
    """Each keyframe of the MJCF at ``path``, in the scene's order, as the obs row of
    ``observations`` it sets, from the file's text (MuJoCo's defaults, 0, where a key leaves a
    field out; the scene's qpos0 is 0)."""
    root = ElementTree.parse(path).getroot()
    joints, actuators = len(root.findall(".//joint")), len(root.findall("./actuator/*"))
    sizes = {"qpos": joints, "qvel": joints, "ctrl": actuators, "time": 1}
    rows = []
    for key in root.findall("./keyframe/key"):
        rows.append(np.concatenate([
            np.zeros(sizes[name]) if key.get(name) is None
            else np.array(key.get(name).split(), dtype=float) for name in observations]))
    return rows


def standing_reward(obs, actions, next_obs):
    """The README's example: the torso's height is the reward."""
    return next_obs[:, TORSO_Z]


def fallen(next_obs):
    """The README's example: the episode ends when the torso falls below FALLEN."""
    return next_obs[:, TORSO_Z] < FALLEN


def stop(process):
    if process.poll() is None:
        process.kill()
    process.wait()
    process.stdout.close()
    process.stderr.close()


# ---- a stand-in gymnasium ------------------------------------------------------------------------
#
# Debian has no gymnasium, so these tests build one with the names and the documented behaviour of
# Gymnasium 1.x that alsim relies on: gymnasium.spaces.Box; gymnasium.vector.VectorEnv (class
# attributes metadata, spec, render_mode, closed; close() calls close_extras() once and sets
# closed), VectorWrapper (wraps a VectorEnv, forwards reset/step/close and the attributes) and
# AutoresetMode; gymnasium.register / registry / make_vec (an id "[module:]namespace/Name-vN",
# the spec's kwargs updated by make_vec's, the spec's max_episode_steps passed on unless given,
# vector_entry_point called as entry(num_envs=N, **kwargs), the env's unwrapped.spec set to the
# spec with the kwargs used, metadata["autoreset_mode"] an AutoresetMode); and
# gymnasium.wrappers.vector.RecordEpisodeStatistics (info["episode"] = {"r", "l"} and
# info["_episode"] at the steps where episodes end; under NEXT_STEP the step after an episode's
# end is the reset and counts for no episode, under SAME_STEP every step counts).


def stand_in_gymnasium():
    """The stand-in's modules by name, for sys.modules."""
    import copy
    import dataclasses
    import enum
    import importlib
    import types

    gymnasium = types.ModuleType("gymnasium")
    spaces = types.ModuleType("gymnasium.spaces")
    vector = types.ModuleType("gymnasium.vector")
    wrappers = types.ModuleType("gymnasium.wrappers")
    wrappers_vector = types.ModuleType("gymnasium.wrappers.vector")
    envs = types.ModuleType("gymnasium.envs")
    registration = types.ModuleType("gymnasium.envs.registration")

    class Box:
        def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
            self.dtype = np.dtype(dtype)
            self.shape = tuple(shape) if shape is not None else np.shape(low)
            self.low = np.broadcast_to(np.asarray(low, self.dtype), self.shape)
            self.high = np.broadcast_to(np.asarray(high, self.dtype), self.shape)
            self.rng = np.random.default_rng(seed)

        def seed(self, seed=None):
            self.rng = np.random.default_rng(seed)

        def sample(self):
            low = np.where(np.isfinite(self.low), self.low, -1.0)
            high = np.where(np.isfinite(self.high), self.high, 1.0)
            return self.rng.uniform(low, high).astype(self.dtype)

        def contains(self, x):
            x = np.asarray(x)
            return x.shape == self.shape and bool(np.all((x >= self.low) & (x <= self.high)))

    class AutoresetMode(enum.Enum):
        NEXT_STEP = "NextStep"
        SAME_STEP = "SameStep"
        DISABLED = "Disabled"

    class VectorEnv:
        metadata = {}
        spec = None
        render_mode = None
        closed = False

        def reset(self, *, seed=None, options=None):
            raise NotImplementedError

        def step(self, actions):
            raise NotImplementedError

        def close(self, **kwargs):
            if self.closed:
                return
            self.close_extras(**kwargs)
            self.closed = True

        def close_extras(self, **kwargs):
            pass

        @property
        def unwrapped(self):
            return self

    class VectorWrapper(VectorEnv):
        def __init__(self, env):
            if not isinstance(env, VectorEnv):
                raise TypeError("VectorWrapper wraps a gymnasium.vector.VectorEnv, not %r" % env)
            self.env = env

        def reset(self, *, seed=None, options=None):
            return self.env.reset(seed=seed, options=options)

        def step(self, actions):
            return self.env.step(actions)

        def close(self, **kwargs):
            return self.env.close(**kwargs)

        def __getattr__(self, name):  # num_envs, spaces, metadata, render_mode, spec, ...
            if name.startswith("_"):
                raise AttributeError(name)
            return getattr(self.env, name)

        @property
        def unwrapped(self):
            return self.env.unwrapped

        @property
        def closed(self):
            return self.env.closed

        @property
        def metadata(self):
            return self.env.metadata

        @property
        def spec(self):
            return self.env.spec

        @property
        def render_mode(self):
            return self.env.render_mode


    class RecordEpisodeStatistics(VectorWrapper):
        def __init__(self, env, buffer_length=100, stats_key="episode"):
            super().__init__(env)
            self.mode = env.metadata["autoreset_mode"]
            if not isinstance(self.mode, AutoresetMode):
                raise TypeError("metadata['autoreset_mode'] must be an AutoresetMode, not %r"
                                % (self.mode,))
            self.key = stats_key
            self.returns = np.zeros(env.num_envs)
            self.lengths = np.zeros(env.num_envs, dtype=int)
            self.ended = np.zeros(env.num_envs, dtype=bool)
            self.return_queue = collections.deque(maxlen=buffer_length)
            self.length_queue = collections.deque(maxlen=buffer_length)

        def reset(self, *, seed=None, options=None):
            obs, info = self.env.reset(seed=seed, options=options)
            mask = (options or {}).get("reset_mask")
            mask = np.ones(self.env.num_envs, dtype=bool) if mask is None else mask
            self.returns[mask], self.lengths[mask], self.ended[mask] = 0, 0, False
            return obs, info

        def step(self, actions):
            obs, reward, terminated, truncated, info = self.env.step(actions)
            if not isinstance(info, dict):
                raise TypeError("a vector env's info is a dict, not %r" % type(info))
            if self.mode == AutoresetMode.SAME_STEP:
                counted = np.ones(self.env.num_envs, dtype=bool)
            else:  # the step after an episode's end is the reset: it counts for none
                counted = ~self.ended
                self.returns[self.ended], self.lengths[self.ended] = 0, 0
            self.returns[counted] += reward[counted]
            self.lengths[counted] += 1
            done = terminated | truncated
            if done.any():
                if self.key in info or "_" + self.key in info:
                    raise ValueError("info already holds %r" % self.key)
                info[self.key] = {"r": np.where(done, self.returns, 0.0),
                                  "l": np.where(done, self.lengths, 0)}
                info["_" + self.key] = done
                self.return_queue.extend(self.returns[done])
                self.length_queue.extend(self.lengths[done])
                if self.mode == AutoresetMode.SAME_STEP:
                    self.returns[done], self.lengths[done] = 0, 0
            self.ended = done
            return obs, reward, terminated, truncated, info

    @dataclasses.dataclass
    class EnvSpec:
        id: str
        entry_point: object = None
        vector_entry_point: object = None
        max_episode_steps: object = None
        kwargs: dict = dataclasses.field(default_factory=dict)

    registry = {}

    def register(id, entry_point=None, max_episode_steps=None, vector_entry_point=None,
                 kwargs=None, **others):
        if entry_point is None and vector_entry_point is None:
            raise ValueError("either entry_point or vector_entry_point")
        if others:
            raise TypeError("the stand-in's register takes no %s" % sorted(others))
        registry[id] = EnvSpec(id, entry_point, vector_entry_point, max_episode_steps,
                               dict(kwargs or {}))

    def load(entry_point):
        if callable(entry_point):
            return entry_point
        module, attribute = entry_point.split(":")
        return getattr(importlib.import_module(module), attribute)

    def make_vec(id, num_envs=1, vectorization_mode=None, vector_kwargs=None, wrappers=None,
                 **kwargs):
        if ":" in id:
            module, id = id.split(":")
            importlib.import_module(module)
        if id not in registry:
            raise KeyError("No registered env with id: %s" % id)
        spec = copy.deepcopy(registry[id])
        arguments = dict(spec.kwargs)
        arguments.update(kwargs)
        if vectorization_mode is None:
            vectorization_mode = "vector_entry_point" if spec.vector_entry_point else "sync"
        if vectorization_mode != "vector_entry_point":
            raise NotImplementedError("the stand-in makes vector_entry_point envs only")
        if vector_kwargs or wrappers:
            raise ValueError("vector_entry_point takes neither vector_kwargs nor wrappers")
        if spec.max_episode_steps is not None and "max_episode_steps" not in arguments:
            arguments["max_episode_steps"] = spec.max_episode_steps
        env = load(spec.vector_entry_point)(num_envs=num_envs, **arguments)
        spec.kwargs = dict(arguments, num_envs=num_envs, vectorization_mode=vectorization_mode)
        env.unwrapped.spec = spec
        if not isinstance(env.metadata.get("autoreset_mode"), AutoresetMode):
            raise TypeError("metadata['autoreset_mode'] is not an AutoresetMode")
        return env

    spaces.Box = Box
    vector.VectorEnv, vector.VectorWrapper, vector.AutoresetMode = (VectorEnv, VectorWrapper,
                                                                    AutoresetMode)
    wrappers_vector.RecordEpisodeStatistics = RecordEpisodeStatistics
    wrappers.vector = wrappers_vector
    registration.EnvSpec, registration.register = EnvSpec, register
    registration.registry, registration.make_vec = registry, make_vec
    envs.registration = registration
    gymnasium.spaces, gymnasium.vector, gymnasium.wrappers, gymnasium.envs = (spaces, vector,
                                                                              wrappers, envs)
    gymnasium.register, gymnasium.registry, gymnasium.make_vec = register, registry, make_vec
    return {"gymnasium": gymnasium, "gymnasium.spaces": spaces, "gymnasium.vector": vector,
            "gymnasium.wrappers": wrappers, "gymnasium.wrappers.vector": wrappers_vector,
            "gymnasium.envs": envs, "gymnasium.envs.registration": registration}


def is_alsim_module(name):
    """alsim's modules, but not the generated stubs (their protos are registered once per
    process: they cannot be imported twice)."""
    return (name == "alsim" or name.startswith("alsim.")) and not (
        name == "alsim.v1" or name.startswith("alsim.v1."))


def fresh_alsim(gymnasium_modules):
    """``import alsim`` anew with ``gymnasium_modules`` in sys.modules (``{"gymnasium": None}``:
    gymnasium does not import). Returns (the alsim package, a function that puts the modules of
    before back)."""
    saved = {name: module for name, module in sys.modules.items() if is_alsim_module(name)
             or name == "gymnasium" or name.startswith("gymnasium.")}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(gymnasium_modules)

    def restore():
        for name in [n for n in sys.modules if is_alsim_module(n) or n == "gymnasium"
                     or n.startswith("gymnasium.")]:
            del sys.modules[name]
        sys.modules.update(saved)

    try:
        return importlib.import_module("alsim"), restore
    except BaseException:
        restore()
        raise


class GymVectorEnvTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.processes = []
        cls.first = cls.start()
        cls.second = cls.start()

    @classmethod
    def start(cls, *args):
        process, address, _ = server_harness.start_server(BIN_DIR, *args)
        cls.processes.append(process)
        return address

    @classmethod
    def tearDownClass(cls):
        for process in cls.processes:
            stop(process)

    def gym(self, address=None, num_envs=4, scene=SCENE, **kwargs):
        kwargs.setdefault("reward_fn", standing_reward)
        kwargs.setdefault("termination_fn", fallen)
        env = alsim.GymVectorEnv(address or self.first, scene, num_envs, **kwargs)
        self.addCleanup(env.close)
        return env

    def plain(self, num_envs=4, **kwargs):
        env = alsim.VectorEnv(self.first, SCENE, num_envs, **kwargs)
        self.addCleanup(env.close)
        return env

    @staticmethod
    def actions(env, steps, seed=0):
        """Random actions within the control ranges, one [num_envs, nu] array per step."""
        env.single_action_space.seed(seed)
        return [np.stack([env.single_action_space.sample() for _ in range(env.num_envs)])
                for _ in range(steps)]

    def run_until_done(self, env, limit=400):
        """Steps with zero actions until some episode ends; returns that step's outcome."""
        for _ in range(limit):
            outcome = env.step(np.zeros((env.num_envs, env.nu)))
            if (outcome[2] | outcome[3]).any():
                return outcome
        self.fail("no episode ended in %d steps" % limit)

    # ---- shapes, dtypes, spaces ----

    def test_shapes_dtypes_and_spaces_follow_the_scene(self):
        env = self.gym(num_envs=3, observations=("qpos", "body_pos", "time"))
        plain = self.plain(num_envs=3, observations=("body_pos", "time"))
        nq, nbody, nu = plain.nq, plain.nbody, plain.nu
        dim = nq + 3 * nbody + 1
        self.assertEqual((env.num_envs, env.nq, env.nbody, env.nu), (3, nq, nbody, nu))
        self.assertEqual(env.obs_slices, {"qpos": slice(0, nq),
                                          "body_pos": slice(nq, nq + 3 * nbody),
                                          "time": slice(dim - 1, dim)})
        for space, shape in ((env.single_observation_space, (dim,)),
                             (env.observation_space, (3, dim)),
                             (env.single_action_space, (nu,)), (env.action_space, (3, nu))):
            self.assertEqual(space.shape, shape)
            self.assertEqual(space.dtype, np.float64)
        lower, upper = plain.action_spec["action"].lower, plain.action_spec["action"].upper
        np.testing.assert_array_equal(env.single_action_space.low, lower)
        np.testing.assert_array_equal(env.single_action_space.high, upper)
        np.testing.assert_array_equal(env.action_space.low, np.tile(lower, (3, 1)))
        self.assertTrue(env.single_action_space.is_bounded())
        self.assertFalse(env.single_observation_space.is_bounded())
        self.assertEqual(env.metadata["autoreset_mode"], alsim.AutoresetMode.NEXT_STEP)

        # sample() lies within the bounds; contains() checks shape, dtype and bounds.
        for space in (env.single_action_space, env.action_space, env.single_observation_space):
            for _ in range(20):
                x = space.sample()
                self.assertEqual((x.shape, x.dtype), (space.shape, space.dtype))
                self.assertTrue(np.all(np.isfinite(x)))
                self.assertTrue(space.contains(x))
                self.assertIn(x, space)
        a = env.action_space.sample()
        self.assertTrue((a >= env.action_space.low).all() and (a <= env.action_space.high).all())
        self.assertFalse(env.action_space.contains(env.action_space.high + 1.0))
        self.assertFalse(env.action_space.contains(np.zeros((3, nu + 1))))
        self.assertFalse(env.action_space.contains(np.zeros((3, nu), dtype=complex)))

        # The observations are the plain client's tensors, flattened and concatenated.
        obs, info = env.reset(seed=7)
        reference = plain.reset(seed=7)
        self.assertEqual((obs.shape, obs.dtype, info), ((3, dim), np.float64, {}))
        np.testing.assert_array_equal(obs[:, env.obs_slices["qpos"]], reference["qpos"])
        np.testing.assert_array_equal(obs[:, env.obs_slices["body_pos"]],
                                      reference["body_pos"].reshape(3, -1))
        np.testing.assert_array_equal(obs[:, env.obs_slices["time"]], reference["time"])
        self.assertIn(obs[0], env.single_observation_space)
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        self.assertEqual((obs.shape, obs.dtype), ((3, dim), np.float64))
        self.assertEqual((reward.shape, reward.dtype), ((3,), np.float64))
        self.assertEqual((terminated.shape, terminated.dtype), ((3,), np.bool_))
        self.assertEqual((truncated.shape, truncated.dtype), ((3,), np.bool_))
        self.assertEqual((info["diverged"].shape, info["diverged"].dtype), ((3,), np.bool_))

    # ---- Gymnasium (the stand-in below) ----

    def test_without_gymnasium_it_stands_alone_and_registers_nothing(self):
        fresh, restore = fresh_alsim({"gymnasium": None})  # `import gymnasium` fails
        self.addCleanup(restore)
        self.assertIsNone(importlib.import_module("alsim.gymnasium_api").GYMNASIUM)
        core = importlib.import_module("alsim.core")
        self.assertEqual(fresh.GymVectorEnv.__mro__[1:], (core.BatchEnv, object))
        self.assertEqual(fresh.register_environments(), ())
        env = fresh.GymVectorEnv(self.first, SCENE, 2)
        self.addCleanup(env.close)
        for space in (env.single_observation_space, env.observation_space,
                      env.single_action_space, env.action_space):
            self.assertIsInstance(space, fresh.Box)
        self.assertIs(env.metadata["autoreset_mode"], fresh.AutoresetMode.NEXT_STEP)
        self.assertIsNone(env.render_mode)

    def test_with_gymnasium_it_is_a_vector_env_that_make_vec_builds(self):
        modules = stand_in_gymnasium()
        gym = modules["gymnasium"]
        fresh, restore = fresh_alsim(modules)
        self.addCleanup(restore)
        # `import alsim` registered its ids (once: registering again leaves them).
        self.assertEqual(sorted(gym.registry), ["alsim/Humanoid-v0", "alsim/Scene-v0"])
        self.assertEqual(fresh.register_environments(), ())
        env = gym.make_vec("alsim/Humanoid-v0", num_envs=3, vectorization_mode="vector_entry_point",
                           address=self.first)
        self.addCleanup(env.close)
        self.assertIsInstance(env, gym.vector.VectorEnv)
        self.assertIsInstance(env, fresh.GymVectorEnv)
        self.assertIs(fresh.AutoresetMode, gym.vector.AutoresetMode)
        dim = env.nq + env.nv
        for space, shape in ((env.single_observation_space, (dim,)),
                             (env.observation_space, (3, dim)),
                             (env.single_action_space, (env.nu,)),
                             (env.action_space, (3, env.nu))):
            self.assertIsInstance(space, gym.spaces.Box)
            self.assertEqual((space.shape, space.dtype), (shape, np.float64))
        self.assertEqual(env.num_envs, 3)
        self.assertIsNone(env.render_mode)
        self.assertIs(env.metadata["autoreset_mode"], gym.vector.AutoresetMode.NEXT_STEP)
        self.assertEqual(env.spec.id, "alsim/Humanoid-v0")
        self.assertEqual((env.spec.kwargs["num_envs"], env.spec.kwargs["max_episode_steps"]),
                         (3, 1000))
        self.assertIs(env.unwrapped, env)

        # The registered task is the module's example: the torso's height as reward, the end
        # when it falls below 1 m, 1000 steps at most; the bits of a GymVectorEnv made directly.
        direct = self.gym(num_envs=3, max_episode_steps=1000)
        obs, info = env.reset(seed=1)
        self.assertEqual(info, {})
        np.testing.assert_array_equal(obs, direct.reset(seed=1)[0])
        for actions in self.actions(direct, 40):
            for a, b in zip(env.step(actions)[:4], direct.step(actions)[:4]):
                np.testing.assert_array_equal(a, b)

        # alsim/Scene-v0: any scene; the address from $ALSIM_ADDRESS; "module:id" imports.
        with mock.patch.dict(os.environ, {"ALSIM_ADDRESS": self.second}):
            boxes = gym.make_vec("alsim:alsim/Scene-v0", num_envs=2, scene="box_stack",
                                 autoreset_mode="same_step")
        self.addCleanup(boxes.close)
        self.assertEqual(boxes.servers, (self.second,))
        self.assertIs(boxes.metadata["autoreset_mode"], gym.vector.AutoresetMode.SAME_STEP)
        with self.assertRaisesRegex(ValueError, "name the scene"):
            gym.make_vec("alsim/Scene-v0", num_envs=1, address=self.first)
        with self.assertRaisesRegex(ValueError, "render_mode must be None"):
            gym.make_vec("alsim/Humanoid-v0", num_envs=1, address=self.first,
                         render_mode="rgb_array")
        with self.assertRaisesRegex(ValueError, "must start with 'qpos'"):
            gym.make_vec("alsim/Humanoid-v0", num_envs=1, address=self.first,
                         observations=("qvel", "qpos"))

        # Gymnasium's close(): `closed` set, idempotent.
        env.close()
        self.assertTrue(env.closed)
        env.close()
        with self.assertRaisesRegex(ValueError, "closed"):
            env.reset()

    def test_gymnasiums_vector_wrappers_take_it(self):
        modules = stand_in_gymnasium()
        gym = modules["gymnasium"]
        _, restore = fresh_alsim(modules)
        self.addCleanup(restore)
        limit = 5
        for mode in ("next_step", "same_step"):
            with self.subTest(mode=mode):
                env = gym.make_vec("alsim/Scene-v0", num_envs=2, address=self.first, scene=SCENE,
                                   reward_fn=standing_reward, max_episode_steps=limit,
                                   autoreset_mode=mode)
                self.addCleanup(env.close)
                wrapped = gym.wrappers.vector.RecordEpisodeStatistics(env)
                self.assertIs(wrapped.unwrapped, env)
                self.assertEqual(wrapped.num_envs, 2)
                self.assertIs(wrapped.single_action_space, env.single_action_space)
                dim = env.single_observation_space.shape[0]
                obs, info = wrapped.reset(seed=0, options=None)
                self.assertEqual((obs.shape, info), ((2, dim), {}))
                rewards, ends = [], []
                for t in range(3 * limit):
                    obs, reward, terminated, truncated, info = wrapped.step(
                        np.zeros((2, env.nu)))
                    self.assertEqual((obs.shape, reward.shape, terminated.shape, truncated.shape),
                                     ((2, dim), (2,), (2,), (2,)))
                    self.assertEqual((reward.dtype, terminated.dtype, truncated.dtype),
                                     (np.float64, np.bool_, np.bool_))
                    self.assertIsInstance(info, dict)
                    rewards.append(reward)
                    if "episode" in info:
                        ends.append((t, info["episode"], info["_episode"]))
                # Episodes are `limit` steps long; under NEXT_STEP one more step resets.
                period = limit + 1 if mode == "next_step" else limit
                self.assertEqual([t for t, _, _ in ends], list(range(limit - 1, 3 * limit, period)))
                for t, episode, mask in ends:
                    self.assertTrue(mask.all())
                    np.testing.assert_array_equal(episode["l"], [limit, limit])
                    np.testing.assert_allclose(episode["r"],
                                               np.sum(rewards[t - limit + 1:t + 1], axis=0))
                self.assertEqual(list(wrapped.length_queue), [limit] * 2 * len(ends))
                wrapped.close()
                self.assertTrue(env.closed and wrapped.closed)

    def test_box_samples_unbounded_and_half_bounded_elements(self):
        box = alsim.Box(np.array([-1.0, -np.inf, 2.0, -np.inf]),
                        np.array([1.0, np.inf, np.inf, -3.0]), seed=1)
        samples = np.array([box.sample() for _ in range(200)])
        self.assertTrue(np.all((samples[:, 0] >= -1) & (samples[:, 0] < 1)))
        self.assertTrue(np.all(samples[:, 2] >= 2) and np.all(samples[:, 3] <= -3))
        self.assertGreater(samples[:, 1].std(), 0.5)  # a normal, not a constant
        self.assertTrue(box.is_bounded("below") is False and box.is_bounded("above") is False)
        self.assertTrue(alsim.Box(0.0, 1.0, shape=(2,)).is_bounded())
        with self.assertRaises(ValueError):
            alsim.Box(1.0, 0.0, shape=(2,))

    # ---- stepping, rewards, seeds ----

    def test_steps_rewards_and_terminations_are_the_plain_clients_bits(self):
        env = self.gym(num_envs=4)
        plain = self.plain(num_envs=4)
        obs, _ = env.reset(seed=3)
        reference = plain.reset(seed=3)
        np.testing.assert_array_equal(obs, np.hstack([reference["qpos"], reference["qvel"]]))
        for actions in self.actions(env, 20):
            obs, reward, terminated, truncated, _ = env.step(actions)
            reference, _ = plain.step(actions)
            np.testing.assert_array_equal(obs, np.hstack([reference["qpos"], reference["qvel"]]))
            np.testing.assert_array_equal(reward, reference["qpos"][:, 2])
            np.testing.assert_array_equal(terminated, reference["qpos"][:, 2] < FALLEN)
            self.assertFalse(truncated.any())

    def test_seeds_decide_the_reset_noise(self):
        env = self.gym(num_envs=4, reset_noise=0.05)
        first, _ = env.reset(seed=11)
        env.step(np.zeros((4, env.nu)))
        again, _ = env.reset(seed=11)
        np.testing.assert_array_equal(first, again)
        listed, _ = env.reset(seed=[11 + k for k in range(4)])
        np.testing.assert_array_equal(first, listed)
        other, _ = env.reset(seed=12)
        self.assertTrue((first != other).any(axis=1).all())
        self.assertFalse(np.array_equal(first[0], first[1]))  # env k has its own seed + k
        np.testing.assert_array_equal(first[1], other[0])       # 11 + 1 == 12 + 0
        exact = self.gym(num_envs=2)                            # reset_noise 0: the scene itself
        a, _ = exact.reset(seed=1)
        b, _ = exact.reset(seed=2)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a[0], a[1])

    def test_bad_input_is_refused_naming_the_argument(self):
        env = self.gym(num_envs=2)
        with self.assertRaisesRegex(ValueError, "reset\\(\\) first"):
            env.step(np.zeros((2, env.nu)))
        env.reset()
        with self.assertRaisesRegex(ValueError, "actions have shape"):
            env.step(np.zeros((3, env.nu)))
        with self.assertRaisesRegex(ValueError, "reset_mask must be a bool array"):
            env.reset(options={"reset_mask": np.ones(3, dtype=bool)})
        with self.assertRaisesRegex(ValueError, "unknown options"):
            env.reset(options={"noise": 1})
        with self.assertRaisesRegex(ValueError, "autoreset_mode"):
            self.gym(autoreset_mode="sometimes")
        with self.assertRaisesRegex(ValueError, "fewer than the servers"):
            self.gym([self.first, self.second], num_envs=1)
        wrong = self.gym(num_envs=2, reward_fn=lambda obs, actions, next_obs: next_obs[:, :2])
        wrong.reset()
        with self.assertRaisesRegex(ValueError, "reward_fn returned shape"):
            wrong.step(np.zeros((2, env.nu)))
        with self.assertRaises(alsim.AlsimError) as refused:
            env.step(np.full((2, env.nu), np.nan))
        self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")

    # ---- autoreset modes ----

    def test_next_step_autoreset(self):
        env = self.gym(num_envs=4, reset_noise=0.0)
        start, _ = env.reset(seed=0)
        env.single_action_space.seed(0)
        obs, reward, terminated, truncated, _ = self.run_until_done(env)
        done = terminated | truncated
        self.assertTrue((obs[done, TORSO_Z] < FALLEN).all())  # the last observation, as it ended
        np.testing.assert_array_equal(reward, obs[:, TORSO_Z])
        # The next step resets the finished envs whatever their actions, with reward 0 and
        # neither flag; the others step on.
        actions = np.zeros((4, env.nu))
        actions[done] = env.single_action_space.high
        before = obs
        obs, reward, terminated, truncated, _ = env.step(actions)
        np.testing.assert_array_equal(obs[done], start[done])
        self.assertTrue((reward[done] == 0).all())
        self.assertFalse(terminated[done].any() or truncated[done].any())
        self.assertTrue((obs[~done] != before[~done]).any(axis=1).all())
        # The reset envs start a fresh episode: their next step is their first step again.
        obs, *_ = env.step(np.zeros((4, env.nu)))
        fresh = self.gym(num_envs=4)
        fresh.reset(seed=0)
        first, *_ = fresh.step(np.zeros((4, env.nu)))
        np.testing.assert_array_equal(obs[done], first[done])
        # reset() drops a pending autoreset: the step after it is a step for every env.
        self.run_until_done(env)
        env.reset(seed=0)
        obs, reward, *_ = env.step(np.zeros((4, env.nu)))
        np.testing.assert_array_equal(obs, first)
        self.assertTrue((reward > 0).all())

    def test_a_diverged_simulation_terminates_and_autoresets(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "overflow.xml")
            with open(path, "w") as f:
                f.write(DIVERGING_SCENE)
            env = self.gym(scene=path, num_envs=2, reward_fn=None, termination_fn=None)
        start, _ = env.reset()
        obs, reward, terminated, truncated, info = env.step(np.array([[1e300], [0.0]]))
        np.testing.assert_array_equal(info["diverged"], [True, False])
        np.testing.assert_array_equal(terminated, [True, False])
        np.testing.assert_array_equal(reward, [0.0, 0.0])  # no reward_fn: rewards are 0
        obs, _, terminated, _, info = env.step(np.array([[1e300], [0.0]]))  # env 0 resets
        np.testing.assert_array_equal(obs[0], start[0])
        np.testing.assert_array_equal(terminated, [False, False])
        self.assertFalse(info["diverged"].any())

    def test_same_step_autoreset(self):
        same = self.gym(num_envs=4, autoreset_mode="same_step")
        nxt = self.gym(num_envs=4)
        self.assertEqual(same.metadata["autoreset_mode"], alsim.AutoresetMode.SAME_STEP)
        start, _ = same.reset(seed=0)
        nxt.reset(seed=0)
        zeros = np.zeros((4, same.nu))
        for _ in range(400):
            obs, reward, terminated, truncated, info = same.step(zeros)
            last, last_reward, last_terminated, *_ = nxt.step(zeros)
            if terminated.any():
                break
            self.assertNotIn("final_obs", info)
            np.testing.assert_array_equal(obs, last)
        else:
            self.fail("no episode ended")
        # The ending step returns the new episode's start; the last observation is in final_obs,
        # the rewards and terminations are those of the last observation.
        np.testing.assert_array_equal(terminated, last_terminated)
        np.testing.assert_array_equal(reward, last_reward)
        np.testing.assert_array_equal(info["_final_obs"], terminated | truncated)
        np.testing.assert_array_equal(obs[terminated], start[terminated])
        np.testing.assert_array_equal(info["final_obs"][terminated], last[terminated])
        self.assertTrue((info["final_obs"][~terminated] == 0).all())
        np.testing.assert_array_equal(obs[~terminated], last[~terminated])
        # The following step is an ordinary first step for them (NEXT_STEP spends it resetting).
        obs, reward, *_ = same.step(zeros)
        fresh = self.gym(num_envs=4)
        fresh.reset(seed=0)
        first, *_ = fresh.step(zeros)
        np.testing.assert_array_equal(obs[terminated], first[terminated])
        self.assertTrue((reward[terminated] > 0).all())

    def test_disabled_autoreset_and_reset_mask(self):
        env = self.gym(num_envs=4, autoreset_mode="disabled")
        self.assertEqual(env.metadata["autoreset_mode"], alsim.AutoresetMode.DISABLED)
        start, _ = env.reset(seed=0)
        obs, reward, terminated, truncated, info = self.run_until_done(env)
        self.assertNotIn("final_obs", info)
        # Nothing resets by itself: the finished env steps on from where it ended.
        ended = obs
        obs, *_ = env.step(np.zeros((4, env.nu)))
        self.assertTrue((obs[terminated] != ended[terminated]).any(axis=1).all())
        self.assertTrue((obs[terminated, TORSO_Z] < FALLEN).all())
        # reset_mask resets those envs only; the others keep their state and observations.
        mask = terminated.copy()
        reset_obs, info = env.reset(options={"reset_mask": mask})
        self.assertEqual(info, {})
        np.testing.assert_array_equal(reset_obs[mask], start[mask])
        np.testing.assert_array_equal(reset_obs[~mask], obs[~mask])
        stepped, *_ = env.step(np.zeros((4, env.nu)))
        fresh = self.gym(num_envs=4)
        fresh.reset(seed=0)
        first, *_ = fresh.step(np.zeros((4, env.nu)))
        np.testing.assert_array_equal(stepped[mask], first[mask])
        self.assertTrue((stepped[~mask] != obs[~mask]).any(axis=1).all())

    def test_reset_mask_with_seeds_and_noise(self):
        env = self.gym(num_envs=4, autoreset_mode="disabled", reset_noise=0.05)
        everyone, _ = env.reset(seed=5)
        env.step(np.zeros((4, env.nu)))
        mask = np.array([False, True, False, True])
        before = env.step(np.zeros((4, env.nu)))[0]
        obs, _ = env.reset(seed=5, options={"reset_mask": mask})
        np.testing.assert_array_equal(obs[mask], everyone[mask])   # env k still gets seed + k
        np.testing.assert_array_equal(obs[~mask], before[~mask])

    # ---- keyframes ----

    def assert_at_keyframe(self, obs, key, noise=0.0):
        """Every row of ``obs`` (columns KEYFRAME_OBSERVATIONS) is keyframe row ``key``, or within
        ``noise`` of it on qpos and qvel (and not equal) and exactly on ctrl and time."""
        obs = np.atleast_2d(obs)
        expected = np.broadcast_to(key, obs.shape)
        if not noise:
            np.testing.assert_allclose(obs, expected, rtol=0, atol=1e-12)
            return
        noisy = slice(0, 4)  # qpos, qvel
        self.assertTrue((np.abs(obs[:, noisy] - expected[:, noisy]) <= noise).all(), obs)
        self.assertTrue((obs[:, noisy] != expected[:, noisy]).any(axis=1).all(), "no noise")
        np.testing.assert_allclose(obs[:, 4:], expected[:, 4:], rtol=0, atol=1e-12)

    def keyframe_gym(self, address=None, num_envs=2, **kwargs):
        return self.gym(address, num_envs=num_envs, scene=KEYFRAMES_SCENE, reward_fn=None,
                        termination_fn=kwargs.pop("termination_fn", None),
                        observations=KEYFRAME_OBSERVATIONS, **kwargs)

    def test_keyframes_at_creation_at_reset_and_at_autoresets(self):
        home, second = keyframe_rows()
        push = np.full((2, 1), 0.5)
        env = self.keyframe_gym(keyframe="home", max_episode_steps=2)  # NEXT_STEP
        self.assertEqual((env.nq, env.nv, env.nu, env.keyframe), (2, 2, 1, "home"))
        obs, info = env.reset()
        self.assertEqual(info, {})
        self.assert_at_keyframe(obs, home)

        # options["keyframe"]: for this reset only; the autoreset returns to Create's keyframe.
        self.assert_at_keyframe(env.reset(options={"keyframe": 1})[0], second)
        self.assertFalse(env.step(push)[3].any())
        obs, _, _, truncated, _ = env.step(push)
        self.assertTrue(truncated.all())
        self.assertTrue((obs != second).any(axis=1).all())  # it moved
        obs, reward, terminated, truncated, _ = env.step(push)  # NEXT_STEP: the reset
        self.assert_at_keyframe(obs, home)
        self.assertFalse(reward.any() or terminated.any() or truncated.any())
        # With reset_mask: those environments only; None is the creation keyframe.
        moved = env.step(push)[0]
        obs, _ = env.reset(options={"keyframe": 1, "reset_mask": np.array([True, False])})
        self.assert_at_keyframe(obs[0], second)
        np.testing.assert_array_equal(obs[1], moved[1])
        self.assert_at_keyframe(env.reset(options={"keyframe": None})[0], home)
        self.assert_at_keyframe(env.reset(options={"keyframe": np.int64(0)})[0], home)

        # An unknown keyframe: the server's INVALID_ARGUMENT naming the scene's keyframes; no
        # environment reset, observations kept and a pending autoreset still pending.
        env.step(push)
        ended = env.step(push)
        self.assertTrue(ended[3].all())
        states = [env.batch.get_state(k) for k in range(2)]
        for options in ({"keyframe": "away"}, {"keyframe": 2},
                        {"keyframe": "away", "reset_mask": np.array([False, True])}):
            with self.assertRaises(alsim.AlsimError, msg=options) as refused:
                env.reset(options=options)
            self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
            self.assertIn(KEYFRAME_LISTING, refused.exception.message)
            self.assertEqual([env.batch.get_state(k) for k in range(2)], states)
        self.assertIn("no keyframe is named 'away'", refused.exception.message)
        # Refused here, before any call: a bool, a negative index, another type.
        for keyframe, error in ((True, TypeError), (-1, ValueError), (1.5, TypeError)):
            with self.assertRaises(error, msg=keyframe):
                env.reset(options={"keyframe": keyframe})
        self.assertEqual([env.batch.get_state(k) for k in range(2)], states)
        obs, reward, terminated, truncated, _ = env.step(push)  # the pending autoreset
        self.assert_at_keyframe(obs, home)
        self.assertFalse(truncated.any())

        # Noise on top of the keyframe at every reset: reset(), the server's reset of a
        # truncation (SAME_STEP, reset_truncated) and the Reset call after a termination.
        noisy = self.keyframe_gym(num_envs=3, seed=3, keyframe=1, reset_noise=0.05,
                                  autoreset_mode="same_step", max_episode_steps=2,
                                  termination_fn=lambda next_obs: np.arange(len(next_obs)) == 0)
        self.assert_at_keyframe(noisy.reset()[0], second, noise=0.05)
        zero = np.zeros((3, 1))
        obs, _, terminated, truncated, info = noisy.step(zero)  # env 0 terminates
        np.testing.assert_array_equal(terminated, [True, False, False])
        self.assertFalse(truncated.any())
        self.assert_at_keyframe(obs[0], second, noise=0.05)
        obs, _, terminated, truncated, info = noisy.step(zero)  # 1 and 2 truncate, 0 terminates
        np.testing.assert_array_equal(truncated, [False, True, True])
        self.assertTrue(info["_final_obs"].all())
        self.assert_at_keyframe(obs, second, noise=0.05)
        self.assert_at_keyframe(noisy.reset(seed=1, options={"keyframe": "home"})[0], home,
                                noise=0.05)

        # Two servers: the keyframe is every group's; a refusal names a server.
        two = self.keyframe_gym([self.first, self.second], num_envs=4, keyframe="home")
        self.assert_at_keyframe(two.reset()[0], home)
        self.assert_at_keyframe(two.reset(options={"keyframe": 1})[0], second)
        with self.assertRaises(alsim.AlsimError) as refused:
            two.reset(options={"keyframe": "away"})
        self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
        self.assertIn(refused.exception.address, (self.first, self.second))
        self.assertIn(KEYFRAME_LISTING, refused.exception.message)

        # Creation at a keyframe the scene lacks: INVALID_ARGUMENT listing them; bad arguments
        # are refused before any call.
        for address in (self.first, [self.first, self.second]):
            with self.assertRaises(alsim.AlsimError) as refused:
                alsim.GymVectorEnv(address, KEYFRAMES_SCENE, 2, keyframe="away")
            self.assertEqual(refused.exception.code, "INVALID_ARGUMENT")
            self.assertIn("no keyframe is named 'away'; " + KEYFRAME_LISTING,
                          refused.exception.message)
        for keyframe, error in ((False, TypeError), (-2, ValueError), (("home",), TypeError)):
            with self.assertRaises(error, msg=keyframe):
                alsim.GymVectorEnv(self.first, KEYFRAMES_SCENE, 2, keyframe=keyframe)

    def test_make_vec_passes_the_keyframe(self):
        modules = stand_in_gymnasium()
        gym = modules["gymnasium"]
        _, restore = fresh_alsim(modules)
        self.addCleanup(restore)
        home, second = keyframe_rows(observations=("qpos", "qvel"))
        env = gym.make_vec("alsim/Scene-v0", num_envs=2, address=self.first,
                           scene=KEYFRAMES_SCENE, keyframe="home")
        self.addCleanup(env.close)
        self.assertEqual((env.keyframe, env.spec.kwargs["keyframe"]), ("home", "home"))
        np.testing.assert_allclose(env.reset()[0], [home, home], rtol=0, atol=1e-12)
        np.testing.assert_allclose(env.reset(options={"keyframe": 1})[0], [second, second],
                                   rtol=0, atol=1e-12)
        # A registration's kwargs may name one too.
        gym.register("test/Keyframes-v0", vector_entry_point="alsim.registration:make_vector_env",
                     kwargs={"scene": KEYFRAMES_SCENE, "keyframe": 1})
        other = gym.make_vec("test/Keyframes-v0", num_envs=1, address=self.first)
        self.addCleanup(other.close)
        self.assertEqual(other.keyframe, 1)
        np.testing.assert_allclose(other.reset()[0], [second], rtol=0, atol=1e-12)

    # ---- truncation ----

    def test_truncation_at_max_episode_steps_in_every_mode(self):
        limit = 5
        unlimited = self.gym(num_envs=2, termination_fn=None)
        unlimited.reset(seed=0)
        actions = self.actions(unlimited, 2 * limit + 2)
        reference = [unlimited.step(a)[0] for a in actions]

        for mode in ("next_step", "same_step", "disabled"):
            with self.subTest(mode=mode):
                env = self.gym(num_envs=2, termination_fn=None, max_episode_steps=limit,
                               autoreset_mode=mode)
                start, _ = env.reset(seed=0)
                for t in range(limit - 1):
                    obs, _, _, truncated, _ = env.step(actions[t])
                    np.testing.assert_array_equal(obs, reference[t])
                    self.assertFalse(truncated.any())
                obs, reward, terminated, truncated, info = env.step(actions[limit - 1])
                self.assertTrue(truncated.all())
                self.assertFalse(terminated.any())
                np.testing.assert_array_equal(reward, reference[limit - 1][:, TORSO_Z])
                if mode == "same_step":
                    np.testing.assert_array_equal(obs, start)
                    np.testing.assert_array_equal(info["final_obs"], reference[limit - 1])
                    self.assertTrue(info["_final_obs"].all())
                    # A new episode of `limit` steps: truncated again after `limit` more.
                    for t in range(limit - 1):
                        self.assertFalse(env.step(actions[t])[3].any())
                    self.assertTrue(env.step(actions[limit - 1])[3].all())
                elif mode == "next_step":
                    np.testing.assert_array_equal(obs, reference[limit - 1])
                    obs, reward, terminated, truncated, _ = env.step(actions[limit])
                    np.testing.assert_array_equal(obs, start)
                    self.assertFalse(truncated.any() or terminated.any() or reward.any())
                    for t in range(limit - 1):
                        self.assertFalse(env.step(actions[t])[3].any())
                    self.assertTrue(env.step(actions[limit - 1])[3].all())
                else:
                    np.testing.assert_array_equal(obs, reference[limit - 1])
                    obs, _, _, truncated, _ = env.step(actions[limit])
                    np.testing.assert_array_equal(obs, reference[limit])  # went on, not reset
                    self.assertTrue(truncated.all())  # and is still past its limit
                    env.reset(options={"reset_mask": np.array([True, False])})
                    truncated = env.step(actions[limit + 1])[3]
                    np.testing.assert_array_equal(truncated, [False, True])

    # ---- async stepping ----

    def run_sync(self, env, steps, seed):
        env.reset(seed=seed)
        out = []
        for actions in self.actions(env, steps, seed):
            out.append(env.step(actions)[:4])
        return out

    def test_async_stepping_equals_sync_stepping(self):
        steps = 150
        kwargs = dict(num_envs=6, max_episode_steps=70, reset_noise=0.02)
        for mode in ("next_step", "same_step"):
            with self.subTest(mode=mode):
                expected = self.run_sync(self.gym(autoreset_mode=mode, **kwargs), steps, 4)
                env = self.gym(autoreset_mode=mode, **kwargs)
                env.reset(seed=4)
                halves = (np.array([5, 0, 3]), np.array([2, 4, 1]))  # any order, any envs
                got = [[np.empty((6,) + x.shape[1:], x.dtype) for x in expected[0]]
                       for _ in range(steps)]
                plan = self.actions(env, steps, 4)
                # Two batches in flight at all times: one half's step t+1 goes out before the
                # other half's step t comes back.
                env.step_async(plan[0][halves[0]], halves[0])
                for t in range(steps):
                    env.step_async(plan[t][halves[1]], halves[1])
                    for half, when in ((0, t), (1, t)):
                        outcome = env.step_wait()
                        np.testing.assert_array_equal(outcome[4]["env_id"], halves[half])
                        for slot, value in zip(got[when], outcome[:4]):
                            slot[halves[half]] = value
                        if half == 0 and t + 1 < steps:
                            env.step_async(plan[t + 1][halves[0]], halves[0])
                for t in range(steps):
                    for a, b in zip(expected[t], got[t]):
                        np.testing.assert_array_equal(a, b)
                # Autoresets of both kinds happened on the way.
                self.assertGreater(sum(int(e[2].sum()) for e in expected), 0)
                self.assertGreater(sum(int(e[3].sum()) for e in expected), 0)

    def test_async_misuse_is_refused(self):
        env = self.gym(num_envs=4)
        env.reset()
        with self.assertRaisesRegex(ValueError, "no batch in flight"):
            env.step_wait()
        env.step_async(np.zeros((2, env.nu)), [0, 1])
        with self.assertRaisesRegex(ValueError, "in flight"):
            env.step_async(np.zeros((1, env.nu)), [1])
        with self.assertRaisesRegex(ValueError, "step_wait"):
            env.step(np.zeros((4, env.nu)))
        with self.assertRaisesRegex(ValueError, "twice"):
            env.step_async(np.zeros((2, env.nu)), [2, 2])
        with self.assertRaisesRegex(ValueError, "in \\[0, 4\\)"):
            env.step_async(np.zeros((1, env.nu)), [4])
        env.step_wait()
        env.step(np.zeros((4, env.nu)))

    # ---- several servers ----

    def test_two_servers_give_the_bits_of_one(self):
        kwargs = dict(num_envs=8, max_episode_steps=70, reset_noise=0.05)
        one = self.gym(self.first, **kwargs)
        two = self.gym([self.first, self.second], **kwargs)
        self.assertEqual(two.servers, (self.first, self.second))
        self.assertEqual(two.env_servers, (self.first,) * 4 + (self.second,) * 4)
        # Without a reset seed, env k draws from its creation seed 0 + k on either server.
        unseeded = one.reset()[0]
        np.testing.assert_array_equal(unseeded, two.reset()[0])
        self.assertEqual(len({row.tobytes() for row in unseeded}), 8)
        np.testing.assert_array_equal(one.reset(seed=9)[0], two.reset(seed=9)[0])
        terminated = truncated = 0
        for actions in self.actions(one, 150, 9):
            a, b = one.step(actions), two.step(actions)
            for x, y in zip(a[:4], b[:4]):
                np.testing.assert_array_equal(x, y)
            terminated, truncated = terminated + a[2].sum(), truncated + a[3].sum()
        self.assertGreater(terminated, 0)  # autoresets of both kinds happened on the way
        self.assertGreater(truncated, 0)
        # Async over both servers, one batch spanning them and one on each.
        one.reset(seed=2)
        two.reset(seed=2)
        for actions in self.actions(one, 10, 2):
            expected = one.step(actions)
            two.step_async(actions[[7, 0]], [7, 0])
            two.step_async(actions[1:7], np.arange(1, 7))
            first, rest = two.step_wait(), two.step_wait()
            np.testing.assert_array_equal(first[0], expected[0][[7, 0]])
            np.testing.assert_array_equal(rest[0], expected[0][1:7])
            np.testing.assert_array_equal(rest[1], expected[1][1:7])

    def test_a_dns_name_with_several_addresses_is_several_servers(self):
        host, port = self.first.rsplit(":", 1)
        self.assertEqual(host, "127.0.0.1")
        self.start("--listen", "127.0.0.2:" + port)  # the same port on another address
        real = socket.getaddrinfo

        def headless(name, *args, **kwargs):  # what a Kubernetes headless Service answers
            if name == "alsim.headless.test":
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, int(port)))
                        for ip in ("127.0.0.1", "127.0.0.2")]
            return real(name, *args, **kwargs)

        name = "alsim.headless.test:" + port
        with mock.patch("socket.getaddrinfo", headless):
            self.assertEqual(alsim.resolve_servers(name),
                             ["127.0.0.1:" + port, "127.0.0.2:" + port])
            sharded = self.gym(name, num_envs=6, reset_noise=0.05)
        self.assertEqual(sharded.servers, ("127.0.0.1:" + port, "127.0.0.2:" + port))
        single = self.gym(num_envs=6, reset_noise=0.05)
        np.testing.assert_array_equal(sharded.reset(seed=1)[0], single.reset(seed=1)[0])
        for actions in self.actions(single, 5, 1):
            np.testing.assert_array_equal(sharded.step(actions)[0], single.step(actions)[0])
        # One address, a literal, a socket path: one server, kept as written.
        self.assertEqual(alsim.resolve_servers("localhost:" + port), ["localhost:" + port])
        self.assertEqual(alsim.resolve_servers("127.0.0.1:1"), ["127.0.0.1:1"])
        self.assertEqual(alsim.resolve_servers("unix:/tmp/x"), ["unix:/tmp/x"])
        with self.assertRaises(alsim.AlsimError) as unresolved:
            alsim.resolve_servers("no-such-host.invalid:1")
        self.assertEqual(unresolved.exception.address, "no-such-host.invalid:1")

    def test_a_failing_server_is_named(self):
        doomed = self.start()
        env = self.gym([self.first, doomed], num_envs=4, timeout=10)
        env.reset(seed=0)
        env.step_async(np.zeros((4, env.nu)))  # the streams are open when the server dies
        env.step_wait()
        stop(self.processes[-1])
        env.step_async(np.zeros((4, env.nu)))
        with self.assertRaises(alsim.AlsimError) as failed:
            env.step_wait()
        self.assertEqual(failed.exception.address, doomed)
        self.assertIn("server " + doomed, str(failed.exception))
        with self.assertRaisesRegex(ValueError, "no batch in flight"):
            env.step_wait()  # the failed stream's batches are dropped
        with self.assertRaises(alsim.AlsimError) as failed:
            env.step(np.zeros((4, env.nu)))
        self.assertEqual(failed.exception.address, doomed)
        self.assertIn("server " + doomed, str(failed.exception))
        self.assertEqual(failed.exception.code, "UNAVAILABLE")
        with self.assertRaises(alsim.AlsimError) as refused:
            alsim.GymVectorEnv([self.first, doomed], SCENE, 2, timeout=10)
        self.assertEqual(refused.exception.address, doomed)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
