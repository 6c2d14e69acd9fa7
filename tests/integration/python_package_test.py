"""The Python package installs and runs from no source path.

A copy of the checkout's package sources (client/python, proto/, CMakeLists.txt, laid out as in
the repository) is installed with ``pip install --no-build-isolation --no-index`` into a fresh
virtual environment that sees Debian's packages (``--system-site-packages``): offline, the way
docs/python.md says. Then, with PYTHONPATH unset and the working directory an empty temporary
folder, that environment's python imports alsim from the installed copy, checks that
``alsim.__version__`` is the server's version (and CMakeLists.txt's), and runs a short
Gymnasium-shaped episode, the scene and a stream against a real alsim-server.

Run by CTest (--bin-dir); needs Debian's /usr/bin/python3 with python3-venv, python3-pip,
python3-setuptools, python3-wheel and python3-grpc-tools.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

BIN_DIR = None
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Run by the installed environment's python, from an empty folder: prints one JSON line.
CLIENT = r'''
import importlib.util
import json
import sys

import numpy as np

import alsim
import alsim.v1.alsim_pb2 as alsim_pb2
import alsim.v1.alsim_pb2_grpc as alsim_pb2_grpc

address = sys.argv[1]
with alsim.channel(address) as channel:
    info = alsim_pb2_grpc.SimulatorStub(channel).ServerInfo(alsim_pb2.ServerInfoRequest(),
                                                             timeout=30)

def reward_fn(obs, actions, next_obs):
    return next_obs[:, 2]                 # the humanoid's torso height

with alsim.GymVectorEnv(address, "humanoid", 2, reward_fn=reward_fn, max_episode_steps=10,
                        timeout=60) as env:
    obs, _ = env.reset(seed=0)
    shapes = [list(obs.shape)]
    truncated_at = None
    for t in range(10):
        obs, reward, terminated, truncated, _ = env.step(np.zeros((2, env.nu)))
        if truncated.all() and truncated_at is None:
            truncated_at = t + 1
    with env.stream(diagnostics=True) as frames:
        frame = next(frames)
    scene = env.scene()
    result = {
        "version": alsim.__version__,
        "server_version": info.version,
        "files": {name: module.__file__ for name, module in sys.modules.items()
                  if name == "alsim" or name.startswith("alsim.")},
        "sys_path": sys.path,
        "gym_bases": [c.__module__ + "." + c.__name__ for c in type(env).__mro__],
        "gymnasium": importlib.util.find_spec("gymnasium") is not None,
        "spaces": [list(env.single_observation_space.shape),
                   list(env.single_action_space.shape)],
        "nq_nv": [env.nq, env.nv],
        "shapes": shapes + [list(obs.shape), list(reward.shape)],
        "rewards": reward.tolist(),
        "truncated_at": truncated_at,
        "stream_steps": frame.steps.tolist(),
        "scene": [scene.name, scene.ngeom, len(scene.body_names)],
    }
print(json.dumps(result))
'''


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(alsim VERSION (\S+)", f.read()).group(1)


class PythonPackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.address, _ = server_harness.start_server(BIN_DIR)
        cls.tmp = tempfile.TemporaryDirectory(prefix="alsim-package-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        server_harness.stop_server(cls.process)

    def run_checked(self, command, **kwargs):
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=150, **kwargs)
        self.assertEqual(result.returncode, 0, "%s\n%s" % (" ".join(command), result.stdout))
        return result.stdout

    def test_pip_installs_the_package_and_it_runs_an_episode(self):
        # The tests' own import finds the stubs in the build folder, not among the sources.
        import alsim.v1
        sources = os.path.join(ROOT, "client", "python")
        self.assertFalse(os.path.abspath(alsim.v1.__file__).startswith(sources + os.sep),
                         alsim.v1.__file__)

        # A copy of what the package's build reads, laid out as in the repository.
        src = os.path.join(self.tmp.name, "src")
        shutil.copytree(sources, os.path.join(src, "client", "python"), ignore=(
            shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "v1", "version.py")))
        shutil.copytree(os.path.join(ROOT, "proto"), os.path.join(src, "proto"))
        shutil.copy(os.path.join(ROOT, "CMakeLists.txt"), src)

        venv = os.path.join(self.tmp.name, "venv")
        self.run_checked([sys.executable, "-m", "venv", "--system-site-packages", venv])
        python = os.path.join(venv, "bin", "python")
        environment = {k: v for k, v in os.environ.items()
                       if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        environment.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1",
                           PIP_NO_INPUT="1")
        self.run_checked([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                          os.path.join(src, "client", "python")], env=environment,
                         cwd=self.tmp.name)
        # The build generated into its own folder, not among the package's sources.
        self.assertFalse(os.path.exists(os.path.join(src, "client", "python", "alsim", "v1")))
        self.assertFalse(os.path.exists(os.path.join(src, "client", "python", "alsim",
                                                     "version.py")))
        shutil.rmtree(src)  # nothing of the sources is left to import

        empty = os.path.join(self.tmp.name, "empty")
        os.mkdir(empty)
        script = os.path.join(empty, "client.py")
        with open(script, "w") as f:
            f.write(CLIENT)
        output = self.run_checked([python, script, self.address], env=environment, cwd=empty)
        result = json.loads(output.strip().splitlines()[-1])

        site = os.path.join(venv, "lib")
        for name, path in result["files"].items():
            self.assertTrue(os.path.abspath(path).startswith(site + os.sep), (name, path))
        self.assertIn("alsim.v1.alsim_pb2", result["files"])
        self.assertFalse([p for p in result["sys_path"] if p.startswith(ROOT)],
                         result["sys_path"])
        self.assertEqual(result["version"], result["server_version"])
        self.assertEqual(result["version"], cmake_version())

        nq, nv = result["nq_nv"]
        self.assertEqual(result["spaces"], [[nq + nv], [21]])
        self.assertEqual(result["shapes"], [[2, nq + nv], [2, nq + nv], [2]])
        self.assertTrue(all(0.5 < r < 2 for r in result["rewards"]), result["rewards"])
        self.assertEqual(result["truncated_at"], 10)
        self.assertEqual(result["stream_steps"], [10, 10])
        self.assertEqual(result["scene"][0], "humanoid")
        self.assertGreater(result["scene"][1], 10)
        # Debian has no gymnasium: the class stands alone (gym_env_test checks it is a
        # gymnasium.vector.VectorEnv when gymnasium imports).
        if result["gymnasium"]:
            self.assertIn("gymnasium.vector.vector_env.VectorEnv", result["gym_bases"])
        else:
            self.assertEqual(result["gym_bases"], ["alsim.gym_env.GymVectorEnv",
                                                   "alsim.core.BatchEnv", "builtins.object"])


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
