"""Shared by the viewer tests: `alsim view` processes, instances stepped at a steady pace, and
raw HTTP requests (the viewer's server is tested below any HTTP library's politeness).

The standard library, numpy, grpcio and the generated stubs (client/python on sys.path).
"""
import json
import os
import re
import socket
import subprocess
import threading
import time

from alsim.v1 import alsim_pb2, alsim_pb2_grpc
import grpc
import numpy as np

URL = re.compile(r"alsim viewer: http://(\S+)/")


def start_viewer(bin_dir, server_address, *extra_args, global_args=()):
    """Starts `alsim view` on an ephemeral loopback port; returns (process, "host:port")."""
    process = subprocess.Popen(
        [os.path.join(bin_dir, "alsim"), "--address", server_address, *global_args, "view",
         "--listen", "127.0.0.1:0", *extra_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = URL.search(line)
    if not match:
        process.kill()
        raise AssertionError("viewer did not start: %r %r" % (line, process.stderr.read()))
    return process, match.group(1)


def stop(process):
    """Ends a process started by a test (SIGTERM, then SIGKILL) and reaps it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def http(address, path, method="GET", headers=None, timeout=10):
    """One raw HTTP/1.1 request; returns (status, headers dict, body bytes)."""
    host, port = address.rsplit(":", 1)
    head = {"Host": address}
    head.update(headers or {})
    request = "%s %s HTTP/1.1\r\n%s\r\n" % (
        method, path, "".join("%s: %s\r\n" % item for item in head.items()))
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(request.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    header, _, body = data.partition(b"\r\n\r\n")
    lines = header.decode().split("\r\n")
    status = int(lines[0].split()[1])
    fields = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return status, fields, body


def http_json(address, path):
    """A GET whose body is JSON; returns (status, the parsed body)."""
    status, _, body = http(address, path)
    return status, json.loads(body)


class Stepper:
    """Steps a group of `count` instances with random controls in a thread, at most `rate` Step
    calls per second of `substeps` steps each, so that a test's browser and server share the
    machine. A scene without actuators (nu 0) is stepped without actions. Use as a context
    manager; `error` holds a failed call's RpcError."""

    def __init__(self, stub, group, count, nu, rate=60, substeps=4):
        self.stub, self.group, self.count, self.nu = stub, group, count, nu
        self.period, self.substeps = 1.0 / rate, substeps
        self.error = None
        self.calls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        rng = np.random.default_rng(0)
        selection = alsim_pb2.InstanceSelection(group_id=self.group)
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                request = alsim_pb2.StepRequest(instances=selection, substeps=self.substeps)
                if self.nu:
                    actions = rng.uniform(-1, 1, size=(self.count, self.nu))
                    request.actions.CopyFrom(alsim_pb2.Tensor(
                        dtype=alsim_pb2.DTYPE_FLOAT64, shape=actions.shape,
                        data=actions.astype("<f8").tobytes()))
                self.stub.Step(request, timeout=30)
                self.calls += 1
                self._stop.wait(max(0.0, self.period - (time.monotonic() - started)))
        except grpc.RpcError as e:  # the test reads it
            self.error = e


def create(stub, scene, count, **kwargs):
    """Creates `count` instances of a built-in scene; returns the CreateResponse."""
    return stub.Create(alsim_pb2.CreateRequest(scene=alsim_pb2.SceneSource(builtin=scene),
                                               count=count, **kwargs), timeout=120)


def channel_stub(address):
    """An insecure channel to `address` and a Simulator stub on it; the caller closes the channel."""
    channel = grpc.insecure_channel(address)
    return channel, alsim_pb2_grpc.SimulatorStub(channel)
