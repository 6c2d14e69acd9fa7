"""End to end: the real alsim-server binary, the alsim CLI and the generated Python stubs.

Run by CTest with PYTHONPATH=client/python; needs Debian's /usr/bin/python3 (python3-grpcio).
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file
import urllib.request

import grpc

from alsim.v1 import alsim_pb2, alsim_pb2_grpc

BIN_DIR = None


def start_server(*extra_args):
    """Starts alsim-server on ephemeral ports; returns (process, grpc_address, metrics_url)."""
    return server_harness.start_server(BIN_DIR, *extra_args)


def health_check(channel, service=""):
    """grpc.health.v1.Health/Check by hand (Debian ships no grpc_health module).

    HealthCheckRequest{service=1: string}; HealthCheckResponse{status=1: enum}.
    """
    encoded = service.encode()
    request = (b"\x0a" + bytes([len(encoded)]) + encoded) if encoded else b""
    check = channel.unary_unary("/grpc.health.v1.Health/Check")
    response = check(request, timeout=5)
    return {b"": "UNKNOWN", b"\x08\x01": "SERVING", b"\x08\x02": "NOT_SERVING"}.get(response, response)


class ServerProcessTest(unittest.TestCase):
    def setUp(self):
        self.process, self.address, self.metrics_url = start_server()

    def tearDown(self):
        server_harness.stop_server(self.process)

    def test_python_stubs_call_server_info_and_health(self):
        with grpc.insecure_channel(self.address) as channel:
            info = alsim_pb2_grpc.SimulatorStub(channel).ServerInfo(
                alsim_pb2.ServerInfoRequest(), timeout=5)
            self.assertRegex(info.version, r"^\d+\.\d+\.\d+$")
            self.assertEqual(info.dependencies["mujoco"], "2.2.2")
            self.assertEqual(health_check(channel), "SERVING")
            self.assertEqual(health_check(channel, "alsim.v1.Simulator"), "SERVING")

    def test_metrics_endpoint_has_build_info(self):
        with urllib.request.urlopen(self.metrics_url, timeout=5) as response:
            text = response.read().decode()
        self.assertRegex(text, r'alsim_build_info\{[^}]*version="\d+\.\d+\.\d+"[^}]*\} 1')

    def test_cli_prints_health_and_server_info(self):
        cli = os.path.join(BIN_DIR, "alsim")
        out = subprocess.run([cli, "--address", self.address, "--wait", "5", "server-info", "--json"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        answer = json.loads(out.stdout)
        self.assertEqual(answer["health"], "SERVING")
        self.assertEqual(answer["server_info"]["dependencies"]["mujoco"], "2.2.2")

        human = subprocess.run([cli, "--address", self.address, "server-info"],
                               capture_output=True, text=True, timeout=30)
        self.assertEqual(human.returncode, 0, human.stderr)
        self.assertIn("health:           SERVING", human.stdout)

    def test_sigterm_stops_cleanly(self):
        self.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = self.process.wait(timeout=30)
        self.assertEqual(code, 0, self.process.stderr.read())
        self.assertLess(time.monotonic() - started, 15)
        self.assertIn("stopped", self.process.stdout.read())
        # The port is released: nothing answers there any more.
        with grpc.insecure_channel(self.address) as channel:
            with self.assertRaises(grpc.RpcError):
                alsim_pb2_grpc.SimulatorStub(channel).ServerInfo(alsim_pb2.ServerInfoRequest(), timeout=1)

    def test_reflection_lists_the_services(self):
        # ServerReflectionRequest{list_services = 7: ""}, encoded by hand (Debian ships no
        # reflection module for Python); the reply names every service.
        with grpc.insecure_channel(self.address) as channel:
            for version in ("v1alpha", "v1"):
                call = channel.stream_stream(
                    "/grpc.reflection.%s.ServerReflection/ServerReflectionInfo" % version)
                try:
                    replies = list(call(iter([b"\x3a\x00"]), timeout=5))
                except grpc.RpcError as error:
                    if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                        continue  # this gRPC registers only the other version
                    raise
                self.assertTrue(replies)
                self.assertIn(b"alsim.v1.Simulator", replies[0])
                self.assertIn(b"grpc.health.v1.Health", replies[0])
                return
        self.fail("neither grpc.reflection.v1alpha nor v1 answered")

    def test_sigterm_ends_open_streams_with_unavailable(self):
        with grpc.insecure_channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            created = stub.Create(alsim_pb2.CreateRequest(
                scene=alsim_pb2.SceneSource(builtin="box_stack")), timeout=30)
            stream = stub.StreamStates(alsim_pb2.StreamStatesRequest(
                instances=alsim_pb2.InstanceSelection(group_id=created.group_id), rate_hz=20))
            next(stream)  # the stream is open
            self.process.send_signal(signal.SIGTERM)
            with self.assertRaises(grpc.RpcError) as ended:
                for _ in stream:
                    pass
            self.assertEqual(ended.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertIn("shutting down", ended.exception.details())
        self.assertEqual(self.process.wait(timeout=30), 0)

    def test_deadline_stops_a_long_step_between_substeps(self):
        with grpc.insecure_channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            created = stub.Create(alsim_pb2.CreateRequest(
                scene=alsim_pb2.SceneSource(builtin="quadruped_drop_27")), timeout=30)
            selection = alsim_pb2.InstanceSelection(group_id=created.group_id)
            with self.assertRaises(grpc.RpcError) as stopped:
                stub.Step(alsim_pb2.StepRequest(instances=selection, substeps=100000), timeout=0.3)
            self.assertEqual(stopped.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
            # The steps taken before the deadline are kept, and the instance is free again.
            time.sleep(0.5)
            listed = stub.List(alsim_pb2.ListRequest(), timeout=5)
            steps = [i.steps for i in listed.instances if i.group_id == created.group_id]
            self.assertEqual(len(steps), 1)
            self.assertGreater(steps[0], 0)
            self.assertLess(steps[0], 100000)
            stub.Step(alsim_pb2.StepRequest(instances=selection), timeout=30)

    def test_scene_size_limit_is_resource_exhausted(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.process.stderr.close()
        self.process, self.address, self.metrics_url = start_server("--max-scene-bytes", "1000")
        text = "<mujoco><worldbody>%s</worldbody></mujoco>" % (
            "<geom size='0.1'/>" * 100)
        with grpc.insecure_channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            with self.assertRaises(grpc.RpcError) as refused:
                stub.Create(alsim_pb2.CreateRequest(scene=alsim_pb2.SceneSource(
                    text=alsim_pb2.SceneText(text=text, filename="big.xml"))), timeout=30)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertIn("--max-scene-bytes", refused.exception.details())

    def test_sigint_stops_cleanly(self):
        self.process.send_signal(signal.SIGINT)
        self.assertEqual(self.process.wait(timeout=30), 0)


class ServerCommandLineTest(unittest.TestCase):
    def run_server(self, *args):
        return subprocess.run([os.path.join(BIN_DIR, "alsim-server"), *args],
                              capture_output=True, text=True, timeout=30)

    def test_bad_flag_exits_2_with_message(self):
        out = self.run_server("--listen", "nowhere")
        self.assertEqual(out.returncode, 2)
        self.assertIn("is not host:port or unix:PATH", out.stderr)

    def test_help_exits_0(self):
        out = self.run_server("--help")
        self.assertEqual(out.returncode, 0)
        self.assertIn("ALSIM_LISTEN", out.stdout)

    def test_cli_reports_unreachable_server(self):
        out = subprocess.run([os.path.join(BIN_DIR, "alsim"), "--address", "127.0.0.1:1",
                              "--wait", "0.5", "server-info"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn("no server answered at 127.0.0.1:1", out.stderr)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
