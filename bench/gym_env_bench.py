"""Instance steps per second through alsim.GymVectorEnv: sync ``step`` against async stepping
(two halves of the environments in flight over StepStream), on one or several servers.

    PYTHONPATH=client/python /usr/bin/python3 bench/gym_env_bench.py --bin-dir build/bin \\
        --servers 2 --threads 1 --num-envs 256 --steps 200

starts ``--servers`` alsim-server processes on loopback (each with ``--threads``) and stops them
at the end; ``--address`` uses running servers instead (repeat it, or give a DNS name). The
humanoid gets random actions within its control ranges, the README's standing reward and fall
termination, and ``--max-episode-steps`` truncation, so autoresets are part of what is timed.
Python standard library, numpy and grpcio only.
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

import alsim  # noqa: E402
import server_harness  # noqa: E402


def rate(env, steps, actions, overlapped):
    """Instance steps per second of ``steps`` steps of every environment."""
    halves = np.array_split(np.arange(env.num_envs), 2)
    start = time.perf_counter()
    if not overlapped:
        for _ in range(steps):
            env.step(actions)
    else:
        # One half's next step goes out before the other half's step comes back.
        env.step_async(actions[halves[0]], halves[0])
        for t in range(steps):
            env.step_async(actions[halves[1]], halves[1])
            env.step_wait()
            if t + 1 < steps:
                env.step_async(actions[halves[0]], halves[0])
            env.step_wait()
    return env.num_envs * steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", default="build/bin", help="where alsim-server is")
    parser.add_argument("--address", action="append", help="a running server (repeatable)")
    parser.add_argument("--servers", type=int, default=1, help="local servers to start")
    parser.add_argument("--threads", type=int, default=0, help="--threads of each local server")
    parser.add_argument("--scene", default="humanoid")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--max-episode-steps", type=int, default=1000)
    args = parser.parse_args()

    processes = []
    try:
        addresses = args.address
        if not addresses:
            addresses = []
            for _ in range(args.servers):
                process, address, _ = server_harness.start_server(
                    args.bin_dir, "--threads", str(args.threads))
                processes.append(process)
                addresses.append(address)
        with alsim.GymVectorEnv(addresses if len(addresses) > 1 else addresses[0], args.scene,
                                args.num_envs, reward_fn=lambda o, a, n: n[:, 2],
                                termination_fn=lambda n: n[:, 2] < 1.0, reset_noise=0.01,
                                max_episode_steps=args.max_episode_steps) as env:
            env.reset(seed=0)
            env.action_space.seed(0)
            actions = env.action_space.sample()
            rate(env, max(1, args.steps // 10), actions, False)  # warm up
            sync = rate(env, args.steps, actions, False)
            overlapped = rate(env, args.steps, actions, True)
        print("%s x %d envs on %d server(s): sync %.0f, async (2 halves in flight) %.0f "
              "instance steps/s" % (args.scene, args.num_envs, len(env.servers), sync, overlapped))
    finally:
        for process in processes:
            process.kill()
            process.wait()
            process.stdout.close()
            process.stderr.close()


if __name__ == "__main__":
    main()
