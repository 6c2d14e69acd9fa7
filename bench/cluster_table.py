#!/usr/bin/python3
"""The box table of issue 33: how many instance steps per second of humanoid.xml (random actions)
each way of running alsim gets from this machine, side by side in one run.

Rows, for each batch size K (instances stepped per step):
  MuJoCo 2.2.2 in T processes     mj_step, K/T instances per process (`cluster_bench mujoco`)
  alsim engine in T processes     the same with alsim's Step, 1 thread each (`cluster_bench engine`)
  `alsim run` in T processes      the CLI's own loop (zero controls, its own trajectory)
  in-process batch                K instances as one batch on T threads, no gRPC
  `alsim bench`                   the CLI against alsim-server --threads T, one Step per step
                                  (no observations asked for)
  remote sync                     one batched Step per step, qpos and qvel back
  remote async                    P sub-batches in flight over StepStream
  remote, S servers               S alsim-servers (T/S threads each), K/S instances on each,
                                  stepped concurrently (sync and async)

T is the number of cores (nproc) unless --threads says otherwise. Every row but `alsim run` steps
the same K trajectories (the same random actions, `--warmup` steps untimed, then `--steps` timed),
so the rows do the same physics. The T-process rows are timed from the first process's start to
the last one's end (their loops start together at an agreed time).

Also measured: the CPU time per instance step of the service path (server process CPU minus the
physics' CPU for the same steps replayed in process, checked bit for bit; the client's CPU
without making the actions), and the round trip of a 1-instance Step against a bare gRPC
ping-pong (`cluster_bench latency`).

The script starts its servers itself and always stops them (by PID). It prints a Markdown report
(with the command line and the commit) and writes the numbers as JSON (--json).
"""

import argparse
import json
import os
import platform
import select
import shlex
import signal
import subprocess
import sys
import time

HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def positive_list(text):
    """Parses a comma-separated list of positive integers (--instances)."""
    try:
        values = [int(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' needs positive integers")
    return values


def positive(text):
    """Parses a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not positive")
    return value


def parse_args(argv):
    """The command line; see --help."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                        help="the CMake build directory holding bin/ [default: %(default)s]")
    parser.add_argument("--instances", type=positive_list, default=[64, 256, 1024],
                        help="batch sizes K, comma-separated [default: 64,256,1024]")
    parser.add_argument("--steps", type=positive, default=100,
                        help="timed steps per instance [default: %(default)s]")
    parser.add_argument("--warmup", type=int, default=20,
                        help="untimed steps before them [default: %(default)s]")
    parser.add_argument("--threads", type=positive, default=os.cpu_count(),
                        help="T: processes, and server and in-process threads [default: nproc, "
                             "%(default)s here]")
    parser.add_argument("--servers", type=positive, default=2,
                        help="S for the several-servers rows [default: %(default)s]")
    parser.add_argument("--pipeline", type=positive, default=4,
                        help="P, sub-batches in flight per server in the async rows "
                             "[default: %(default)s]")
    parser.add_argument("--run-steps", type=positive, default=10000,
                        help="steps of each `alsim run` process [default: %(default)s]")
    parser.add_argument("--latency-calls", type=positive, default=1000,
                        help="round trips of each kind in the latency measurement "
                             "[default: %(default)s]")
    parser.add_argument("--repeats", type=positive, default=1,
                        help="runs of the whole table, interleaved; medians are reported "
                             "[default: %(default)s]")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random actions")
    parser.add_argument("--json", default="cluster_table.json",
                        help="where the numbers go [default: %(default)s]")
    args = parser.parse_args(argv)
    if args.warmup < 0:
        parser.error("--warmup must not be negative")
    if args.latency_calls < 100:
        parser.error("--latency-calls must be at least 100")
    for k in args.instances:
        if k < args.threads:
            parser.error(f"--instances {k} is fewer than one instance per process (--threads "
                         f"{args.threads})")
        if k < args.servers * args.pipeline:
            parser.error(f"--instances {k} is fewer than one instance per sub-batch (--servers "
                         f"{args.servers} x --pipeline {args.pipeline})")
    return args


class Processes:
    """The servers this script started; stop_all() ends each by its PID."""

    def __init__(self):
        self.running = []

    def start_server(self, argv, ready_prefix, timeout=60.0):
        """Starts `argv`, waits for its line starting with `ready_prefix`, returns (process,
        address): the address is the line's first "host:port" after "on "."""
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        self.running.append(process)
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                line = process.stdout.readline()
                if line.startswith(ready_prefix):
                    address = line.split(" on ", 1)[1].split(",")[0].strip()
                    return process, address
                if not line:
                    break
            if process.poll() is not None:
                break
        raise RuntimeError(f"{argv[0]} did not start ({process.poll()}): "
                           f"{line}{process.stderr.read() if process.poll() is not None else ''}")

    def stop_all(self):
        """SIGTERM to every process started here, SIGKILL to those still alive after 10 s."""
        for process in self.running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.running:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
        self.running = []


def run_json(argv):
    """Runs a command that prints one JSON object; returns it (an error names the command)."""
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_together(argvs):
    """Runs the commands side by side and returns their JSON objects."""
    processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for argv in argvs]
    results = []
    for argv, process in zip(argvs, processes):
        out, err = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{shlex.join(argv)} failed ({process.returncode}): {err.strip()}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def split(count, parts):
    """(first, size) of each of `parts` near-equal shares of `count` items."""
    return [(count * p // parts, count * (p + 1) // parts - count * p // parts)
            for p in range(parts)]


def independent_processes(binary, mode, k, args):
    """K instances over T processes of `cluster_bench MODE`, started together: instance steps per
    second from the first timed loop's start to the last one's end."""
    start_at = time.monotonic() + 1.0 + 0.002 * k  # after every process has loaded its model
    argvs = []
    for first, size in split(k, args.threads):
        argv = [binary, mode, "--instances", str(size), "--first", str(first), "--steps",
                str(args.steps), "--warmup", str(args.warmup), "--seed", str(args.seed),
                "--start-at", f"{start_at:.6f}"]
        if mode == "engine":
            argv += ["--threads", "1"]
        argvs.append(argv)
    results = run_together(argvs)
    span = max(r["end_monotonic"] for r in results) - min(r["start_monotonic"] for r in results)
    return k * args.steps / span, results


def alsim_run_processes(alsim, args):
    """T `alsim run` processes side by side: the sum of their steps per second."""
    results = run_together([[alsim, "run", HUMANOID, "--steps", str(args.run_steps), "--threads",
                             "1", "--json"]] * args.threads)
    return sum(r["steps"] / r["wall_seconds"] for r in results), results


def git(*argv):
    """Output of a git command in the repository, or "unknown"."""
    try:
        return subprocess.run(["git", "-C", REPO, *argv], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def median(values):
    """The median (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def fmt(rate):
    """A rate for the table."""
    return f"{rate:,.0f}"


def main(argv):
    """Runs the benchmark and prints its report."""
    args = parse_args(argv)
    bin_dir = os.path.join(args.build_dir, "bin")
    bench = os.path.join(bin_dir, "cluster_bench")
    alsim = os.path.join(bin_dir, "alsim")
    server_binary = os.path.join(bin_dir, "alsim-server")
    for path in (bench, alsim, server_binary):
        if not os.access(path, os.X_OK):
            sys.exit(f"cluster_table.py: {path} is missing: build the targets cluster_bench, alsim "
                     f"and alsim-server (--build-dir {args.build_dir})")
    commit = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    command = shlex.join([os.path.relpath(sys.argv[0], REPO)] + argv)
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass

    processes = Processes()
    # A SIGTERM or SIGINT to this script still stops its servers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report = {"command": command, "commit": commit, "cpu": cpu, "cores": os.cpu_count(),
              "threads": args.threads, "servers": args.servers, "pipeline": args.pipeline,
              "steps": args.steps, "warmup": args.warmup, "rows": {}, "cpu_time": {}}
    try:
        t = args.threads
        server_flags = ["--listen", "127.0.0.1:0", "--metrics", "none",
                        "--max-instances", str(max(args.instances) + 16),
                        "--max-call-iterations", str(1 << 50)]
        one, one_address = processes.start_server(
            [server_binary, *server_flags, "--threads", str(t)], "alsim-server ")
        several = [processes.start_server(
            [server_binary, *server_flags, "--threads", str(max(1, t // args.servers))],
            "alsim-server ") for _ in range(args.servers)]
        _, ping_address = processes.start_server([bench, "ping-server"], "ping-server ")

        rows = report["rows"]

        def record(name, k, rate, detail):
            cell = rows.setdefault(name, {}).setdefault(str(k), {"runs": []})
            cell["runs"].append({"instance_steps_per_second": rate, "detail": detail})
            print(f"  {name}, K={k}: {fmt(rate)}", file=sys.stderr, flush=True)

        addresses = ",".join(address for _, address in several)
        latencies = []
        # Repeats run every row once each, in turn, so that a slow phase of a shared machine
        # falls on all rows alike; the report gives medians.
        for _ in range(args.repeats):
            run_rate, run_detail = alsim_run_processes(alsim, args)
            for k in args.instances:
                rate, detail = independent_processes(bench, "mujoco", k, args)
                record("mujoco_processes", k, rate, detail)
                rate, detail = independent_processes(bench, "engine", k, args)
                record("engine_processes", k, rate, detail)
                record("alsim_run_processes", k, run_rate, run_detail)
                common = ["--steps", str(args.steps), "--warmup", str(args.warmup), "--seed",
                          str(args.seed), "--instances", str(k)]
                result = run_json([bench, "engine", "--threads", str(t), *common])
                record("in_process", k, result["instance_steps_per_second"], result)
                result = run_json([alsim, "--address", one_address, "bench", HUMANOID,
                                   "--instances", str(k), "--steps", str(args.steps), "--json"])
                record("alsim_bench", k, result["instance_steps_per_second"], result)
                for name, pipeline in (("remote_sync", 1), ("remote_async", args.pipeline)):
                    result = run_json([bench, "remote", "--address", one_address, "--server-pids",
                                       str(one.pid), "--replay-threads", str(t), "--pipeline",
                                       str(pipeline), *common])
                    record(name, k, result["instance_steps_per_second"], result)
                for name, pipeline in (("servers_sync", 1), ("servers_async", args.pipeline)):
                    result = run_json([bench, "remote", "--address", addresses, "--pipeline",
                                       str(pipeline), *common])
                    record(name, k, result["instance_steps_per_second"], result)
            latencies.append(run_json([bench, "latency", "--address", one_address, "--ping",
                                       ping_address, "--calls", str(args.latency_calls)]))
        for row in rows.values():
            for cell in row.values():
                cell["instance_steps_per_second"] = median(
                    [run["instance_steps_per_second"] for run in cell["runs"]])
        report["latency"] = {"runs": latencies}
        for key in latencies[0]:
            if key not in ("mode", "calls"):
                report["latency"][key] = median([run[key] for run in latencies])
        report["latency"]["calls"] = args.latency_calls
    finally:
        report["server_pids"] = [process.pid for process in processes.running]
        processes.stop_all()

    with open(args.json, "w") as out:
        json.dump(report, out, indent=1)
    print(markdown(report, args))
    return 0


def markdown(report, args):
    """The report as Markdown: the box table, the service path's CPU time, the latency."""
    t, s, p = args.threads, args.servers, args.pipeline
    ks = [str(k) for k in args.instances]
    rows = report["rows"]
    names = [
        ("mujoco_processes", f"MuJoCo 2.2.2, {t} independent processes"),
        ("engine_processes", f"alsim engine, {t} independent processes (1 thread each)"),
        ("alsim_run_processes", f"`alsim run`, {t} independent processes (zero controls, "
                                f"{args.run_steps} steps)"),
        ("in_process", f"in-process batch, {t} threads, no gRPC"),
        ("alsim_bench", f"`alsim bench`, alsim-server --threads {t} (no observations)"),
        ("remote_sync", "remote sync, 1 server, one batched Step per step"),
        ("remote_async", f"remote async, 1 server, {p} sub-batches in flight"),
        ("servers_sync", f"remote sync, {s} servers x {max(1, t // s)} threads"),
        ("servers_async", f"remote async, {s} servers x {p} sub-batches"),
    ]
    lines = [f"`{report['command']}` at {report['commit']}; {report['cpu']}, "
             f"{report['cores']} cores; humanoid.xml, random actions, {args.warmup} untimed + "
             f"{args.steps} timed steps; median of {args.repeats} interleaved run(s), their range "
             f"in brackets.", "",
             "| instance steps/s | " + " | ".join(f"K={k}" for k in ks) + " |",
             "|---|" + "---|" * len(ks)]
    def rates(key, k):
        return [run["instance_steps_per_second"] for run in rows[key][k]["runs"]]

    def spread(values, form):
        text = form(median(values))
        return text if len(values) == 1 else f"{text} [{form(min(values))}-{form(max(values))}]"

    for key, label in names:
        lines.append(f"| {label} | " + " | ".join(spread(rates(key, k), fmt) for k in ks) + " |")

    def ratios(a, b, k):  # per repeat: the rows of one repeat ran closest in time
        return spread([x / y for x, y in zip(rates(a, k), rates(b, k))], lambda r: f"{r:.2f}x")

    for key, label in (("remote_sync", "remote sync"), ("remote_async", "remote async"),
                       ("servers_async", f"remote async, {s} servers")):
        lines.append(f"| {label} / alsim engine processes (goal for async >= 0.9 from K=256) | " +
                     " | ".join(ratios(key, "engine_processes", k) for k in ks) + " |")
    lines.append("| remote async / MuJoCo processes (goal >= 2.5) | " +
                 " | ".join(ratios("remote_async", "mujoco_processes", k) for k in ks) + " |")
    lines += ["", "CPU time per instance step, 1 server (us; % of the physics' CPU time), and the "
              "share of the wall time in which the server was stepping:", "",
              "| K | mode | physics | server total | server service path | client | server "
              "stepping / wall | server CPU measured |",
              "|---|---|---|---|---|---|---|---|"]
    for k in ks:
        for key, mode in (("remote_sync", "sync"), ("remote_async", f"async x{p}")):
            runs = [run["detail"] for run in rows[key][k]["runs"]]
            physics = median([d["physics_cpu_us_per_instance_step"] for d in runs])
            server = median([d["server_cpu_us_per_instance_step"] for d in runs])
            service = median([d["server_cpu_us_per_instance_step"] -
                              d["physics_cpu_us_per_instance_step"] for d in runs])
            client = median([d["client_cpu_us_per_instance_step"] for d in runs])
            busy = median([d["server_stepping_share_of_wall"] for d in runs])
            # /proc counts CPU time in 10 ms ticks: the seconds measured tell the resolution.
            measured = median([d["server_cpu_seconds"] for d in runs])
            lines.append(f"| {k} | {mode} | {physics:.1f} | {server:.1f} | {service:.2f} "
                         f"({100 * service / physics:.1f}%) | {client:.2f} "
                         f"({100 * client / physics:.1f}%) | {100 * busy:.0f}% | "
                         f"{measured:.2f} s |")
    lat = report["latency"]
    lines += ["", f"Round trips over TCP loopback ({lat['calls']} of each, interleaved), p50 us:",
              "",
              "| bare gRPC ping-pong | ServerInfo | 1-instance Step | its physics | Step minus "
              "physics | Step / ping-pong | (Step minus physics) / ping-pong |",
              "|---|---|---|---|---|---|---|",
              f"| {lat['ping_p50_us']:.0f} | {lat['server_info_p50_us']:.0f} | "
              f"{lat['step_p50_us']:.0f} | {lat['step_physics_p50_us']:.0f} | "
              f"{lat['step_overhead_p50_us']:.0f} | {lat['step_over_ping']:.2f}x | "
              f"{lat['overhead_over_ping']:.2f}x |"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
