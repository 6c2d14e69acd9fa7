"""Soak test of alsim-server: clients create, step, stream, save/restore and destroy instances for
a set time while the server's resident memory is sampled; prints the slope after warm-up.

Usage (scripts/soak.sh wraps this): soak.py --bin-dir build/bin --seconds 3600 --out soak.csv
Samples the server's resident memory (/proc) and malloc's bytes in use (its /metrics gauge
alsim_heap_in_use_bytes): a rising heap is a leak, a rising gap between them fragmentation.
Standard library, grpc and the generated stubs (PYTHONPATH=client/python) only.
"""
import argparse
import os
import random
import sys
import threading
import time
import urllib.request

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import server_harness  # noqa: E402

from alsim.v1 import alsim_pb2, alsim_pb2_grpc  # noqa: E402

BOX = """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  <site name="s%d"/></worldbody></mujoco>"""


def resident_bytes(pid):
    with open("/proc/%d/statm" % pid) as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def heap_bytes(metrics_url):
    """malloc's bytes in use in the server (alsim_heap_in_use_bytes), or -1."""
    try:
        with urllib.request.urlopen(metrics_url, timeout=10) as response:
            for line in response.read().decode().splitlines():
                if line.startswith("alsim_heap_in_use_bytes "):
                    return int(float(line.split()[1]))
    except OSError:
        pass
    return -1


def client_loop(address, stop, counts, seed):
    rng = random.Random(seed)
    channel = grpc.insecure_channel(address)
    stub = alsim_pb2_grpc.SimulatorStub(channel)
    while not stop.is_set():
        try:
            if rng.random() < 0.5:
                scene = alsim_pb2.SceneSource(builtin=rng.choice(["box_stack", "quadruped_drop_8"]))
            else:  # a distinct text scene each time: the catalog must free it again
                scene = alsim_pb2.SceneSource(text=alsim_pb2.SceneText(
                    text=BOX % rng.randrange(1 << 30)))
            created = stub.Create(alsim_pb2.CreateRequest(scene=scene, count=rng.randint(1, 8)),
                                  timeout=30)
            group = alsim_pb2.InstanceSelection(group_id=created.group_id)
            for _ in range(rng.randint(1, 20)):
                stub.Step(alsim_pb2.StepRequest(
                    instances=group, substeps=rng.randint(1, 5),
                    observations=[alsim_pb2.OBSERVATION_QPOS, alsim_pb2.OBSERVATION_BODY_POSES]),
                    timeout=30)
            frames = stub.StreamStates(alsim_pb2.StreamStatesRequest(
                instances=group, rate_hz=200), timeout=0.2)
            try:
                for _ in frames:
                    pass
            except grpc.RpcError:
                pass  # the deadline ends the stream
            requests = [alsim_pb2.StepRequest(instances=group) for _ in range(rng.randint(1, 10))]
            for _ in stub.StepStream(iter(requests), timeout=30):
                pass
            first = created.instance_ids[0]
            state = stub.GetState(alsim_pb2.GetStateRequest(instance_id=first), timeout=30).state
            stub.SetState(alsim_pb2.SetStateRequest(instance_id=first, state=state), timeout=30)
            stub.Reset(alsim_pb2.ResetRequest(instances=group, noise=0.01), timeout=30)
            try:  # a bad request now and then
                stub.Step(alsim_pb2.StepRequest(instances=alsim_pb2.InstanceSelection(
                    instance_ids=[rng.randrange(1, 1 << 62)])), timeout=30)
            except grpc.RpcError:
                pass
            stub.Destroy(alsim_pb2.DestroyRequest(instances=group), timeout=30)
            counts[seed] += 1
        except grpc.RpcError as error:
            if not stop.is_set():
                print("client %d: %s %s" % (seed, error.code(), error.details()), file=sys.stderr)
    channel.close()


def slope_per_hour(samples):
    """Least-squares slope of (seconds, bytes) in bytes per hour."""
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_b = sum(b for _, b in samples) / n
    num = sum((t - mean_t) * (b - mean_b) for t, b in samples)
    den = sum((t - mean_t) ** 2 for t, _ in samples)
    return num / den * 3600 if den > 0 else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--sample-seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=0.2,
                        help="fraction of the run left out of the slope (default 0.2)")
    parser.add_argument("--out", default="soak.csv", help="CSV of seconds,rss_bytes,cycles")
    args = parser.parse_args()

    process, address, metrics_url = server_harness.start_server(os.path.abspath(args.bin_dir))
    stop = threading.Event()
    counts = [0] * args.clients
    threads = [threading.Thread(target=client_loop, args=(address, stop, counts, k))
               for k in range(args.clients)]
    for thread in threads:
        thread.start()
    samples, heap_samples = [], []
    started = time.monotonic()
    with open(args.out, "w") as out:
        out.write("seconds,rss_bytes,heap_bytes,cycles\n")
        while time.monotonic() - started < args.seconds and process.poll() is None:
            elapsed = time.monotonic() - started
            rss, heap = resident_bytes(process.pid), heap_bytes(metrics_url)
            samples.append((elapsed, rss))
            heap_samples.append((elapsed, heap))
            out.write("%.1f,%d,%d,%d\n" % (elapsed, rss, heap, sum(counts)))
            out.flush()
            print("%7.0f s  rss %7.1f MB  heap %7.1f MB  cycles %d" % (
                elapsed, rss / 2**20, heap / 2**20, sum(counts)), flush=True)
            time.sleep(args.sample_seconds)
    stop.set()
    for thread in threads:
        thread.join()
    alive = process.poll() is None
    if alive:
        process.terminate()
        process.wait()
    after = [s for s in samples if s[0] >= args.warmup * args.seconds]
    heap_after = [s for s in heap_samples if s[0] >= args.warmup * args.seconds]
    if not alive:
        print("soak: the server died (exit status %s): %s" % (
            process.returncode, process.stderr.read()[-20000:]), file=sys.stderr)
        return 1
    if len(after) < 3:
        print("soak: too few samples after warm-up", file=sys.stderr)
        return 1
    print("soak: %d cycles by %d clients in %.0f s; after warm-up (%.0f%%): RSS %.1f -> %.1f MB, "
          "slope %+.2f MB/hour; heap in use %.1f -> %.1f MB, slope %+.2f MB/hour" % (
              sum(counts), args.clients, args.seconds, args.warmup * 100, after[0][1] / 2**20,
              after[-1][1] / 2**20, slope_per_hour(after) / 2**20, heap_after[0][1] / 2**20,
              heap_after[-1][1] / 2**20, slope_per_hour(heap_after) / 2**20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
