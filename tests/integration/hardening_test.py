"""The server against an adversarial client: every finding of the hardening issue, against a real
alsim-server process, each followed by a check that the server still serves everyone.

Run by CTest with PYTHONPATH=client/python; needs Debian's /usr/bin/python3 (python3-grpcio).
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import grpc

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

from alsim.v1 import alsim_pb2, alsim_pb2_grpc

BIN_DIR = None

BOX = """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>"""


def many_bodies(n, tag=""):
    """A scene whose compile takes MuJoCo 2.2.2 seconds (it grows with n squared)."""
    bodies = "".join('<body pos="%d 0 1"><freejoint/><geom size=".1"/></body>' % i
                     for i in range(n))
    return ('<mujoco model="%s"><worldbody><geom type="plane" size="100 100 .1"/>%s'
            "</worldbody></mujoco>" % (tag, bodies))


def text_scene(text, filename="scene.xml", assets=None):
    return alsim_pb2.SceneSource(text=alsim_pb2.SceneText(
        text=text, filename=filename, assets=assets or {}))


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def gauge(body, name):
    match = re.search(r"^%s (\S+)$" % name, body, re.M)
    return float(match.group(1)) if match else None


class ServerCase(unittest.TestCase):
    """A fresh server per test, in its own working directory; tearDown checks it survived."""
    ARGS = ()

    def setUp(self):
        self.workdir = tempfile.TemporaryDirectory()
        cwd = os.getcwd()
        os.chdir(self.workdir.name)  # where MuJoCo would write MUJOCO_LOG.TXT
        try:
            self.process, self.address, self.metrics_url = server_harness.start_server(
                BIN_DIR, *self.ARGS)
        finally:
            os.chdir(cwd)
        self.channel = grpc.insecure_channel(self.address)
        self.stub = alsim_pb2_grpc.SimulatorStub(self.channel)

    def tearDown(self):
        alive = self.process.poll() is None
        serving = False
        if alive:
            try:
                self.stub.ServerInfo(alsim_pb2.ServerInfoRequest(), timeout=10)
                serving = True
            except grpc.RpcError:
                pass
        log_written = os.path.exists(os.path.join(self.workdir.name, "MUJOCO_LOG.TXT"))
        self.stop_server()
        self.assertTrue(alive, "the server process died")
        self.assertTrue(serving, "the server no longer answers ServerInfo")
        self.assertFalse(log_written, "client input made MuJoCo write MUJOCO_LOG.TXT")

    def stop_server(self):
        self.channel.close()
        server_harness.stop_server(self.process)
        self.workdir.cleanup()

    def create(self, scene, count=1, timeout=30, **solver):
        return self.stub.Create(alsim_pb2.CreateRequest(
            scene=scene, count=count, solver=alsim_pb2.SolverConfig(**solver)), timeout=timeout)

    def assert_code(self, code, call, *args, **kwargs):
        with self.assertRaises(grpc.RpcError) as caught:
            call(*args, **kwargs)
        self.assertEqual(caught.exception.code(), code, caught.exception.details())
        return caught.exception.details()

    def step(self, ids, substeps=1, timeout=30, observations=()):
        return self.stub.Step(alsim_pb2.StepRequest(
            instances=alsim_pb2.InstanceSelection(instance_ids=ids), substeps=substeps,
            observations=observations), timeout=timeout)


class CrashTest(ServerCase):
    """Finding 1 and 2: inputs that killed the server through MuJoCo's exit(1) or an endless read."""

    def test_empty_text_empty_asset_and_long_names_are_invalid_argument(self):
        cases = [
            text_scene(""),
            text_scene(BOX, assets={"empty.stl": b""}),
            text_scene(BOX, filename="a" * 1000),
            text_scene(BOX, assets={"m" * 1000 + ".stl": b"solid"}),
            text_scene(BOX, filename="b" * 5000, assets={"": b"x"}),
        ]
        for scene in cases:
            self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, self.create, scene)
        self.create(text_scene(BOX))  # and it still compiles

    def test_includes_of_endless_devices_fail_fast(self):
        for device in ("/dev/zero", "/dev/urandom", "/dev/stdin"):
            started = time.monotonic()
            details = self.assert_code(
                grpc.StatusCode.INVALID_ARGUMENT, self.create,
                text_scene('<mujoco><include file="%s"/></mujoco>' % device))
            self.assertLess(time.monotonic() - started, 10, device)
            self.assertIn(device, details)

    def test_a_compile_that_crashes_or_runs_out_of_memory_costs_only_the_compiler(self):
        # A 40000 x 40000 height field is 6.4 GB of floats: past the compile's memory limit.
        scene = ('<mujoco><asset><hfield name="h" nrow="40000" ncol="40000" size="1 1 1 1"/>'
                 '</asset><worldbody/></mujoco>')
        details = self.assert_code(grpc.StatusCode.RESOURCE_EXHAUSTED, self.create,
                                   text_scene(scene))
        self.assertIn("max-compile-memory", details)


class FilesystemTest(ServerCase):
    """Scenes see only what the request sent; errors do not tell whether a server path exists."""

    def error_for(self, scene):
        return self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, self.create, text_scene(scene))

    def test_includes_and_meshes_never_read_the_servers_files(self):
        existing, missing = "/etc/passwd", "/etc/no-such-file-here"
        templates = [
            '<mujoco><include file="%s"/></mujoco>',
            '<mujoco><include file="../../../..%s"/></mujoco>',
            '<mujoco><asset><mesh name="m" file="%s"/></asset>'
            '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>',
        ]
        for template in templates:
            seen, unseen = self.error_for(template % existing), self.error_for(template % missing)
            self.assertEqual(seen.replace(existing, "PATH"), unseen.replace(missing, "PATH"),
                             "the error differs for a path that exists")
            self.assertNotIn("root:", seen, "file content leaked")
        # meshdir pointing at the server's directories changes nothing either.
        meshdir = ('<mujoco><compiler meshdir="%s"/><asset><mesh name="m" file="passwd"/></asset>'
                   '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>')
        self.assertEqual(self.error_for(meshdir % "/etc").replace("/etc", "DIR"),
                         self.error_for(meshdir % "/nonexistent").replace("/nonexistent", "DIR"))

    def test_included_files_come_from_the_assets(self):
        created = self.create(text_scene(
            '<mujoco><include file="parts/body.xml"/></mujoco>',
            assets={"body.xml": BOX.encode()}))
        self.assertEqual(len(created.instance_ids), 1)


class LimitsTest(ServerCase):
    """Findings 3 and 4: work and memory a single request can demand are bounded."""
    ARGS = ("--max-memory", "256M", "--max-call-seconds", "2", "--threads", "2")

    def test_a_create_beyond_the_memory_budget_is_resource_exhausted(self):
        details = self.assert_code(
            grpc.StatusCode.RESOURCE_EXHAUSTED, self.create,
            alsim_pb2.SceneSource(builtin="humanoid100"), count=4096)
        self.assertIn("--max-memory", details)
        self.assertEqual(len(self.stub.List(alsim_pb2.ListRequest(), timeout=5).instances), 0)
        body = scrape(self.metrics_url)
        self.assertLess(gauge(body, "alsim_memory_reserved_bytes"),
                        gauge(body, "alsim_memory_limit_bytes"))
        self.create(alsim_pb2.SceneSource(builtin="box_stack"), count=2)

    def test_iteration_caps_are_enforced_before_anything_runs(self):
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, self.create,
                         alsim_pb2.SceneSource(builtin="box_stack"), max_iterations=4000000000)
        ids = list(self.create(alsim_pb2.SceneSource(builtin="box_stack"),
                               max_iterations=10000, tolerance=1e-300).instance_ids)
        details = self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, self.step, ids,
                                   substeps=1000000)
        self.assertIn("--max-call-iterations", details)

    def test_a_long_solve_ends_at_the_deadline_and_stalls_nobody(self):
        slow = list(self.create(alsim_pb2.SceneSource(builtin="humanoid100"),
                                max_iterations=10000, tolerance=1e-300).instance_ids)
        fast = list(self.create(alsim_pb2.SceneSource(builtin="box_stack")).instance_ids)
        self.step(slow, substeps=20)  # into contact
        started = time.monotonic()
        self.assert_code(grpc.StatusCode.DEADLINE_EXCEEDED, self.step, slow, substeps=100000,
                         timeout=0.5)
        self.assertLess(time.monotonic() - started, 1.5)
        # Two calls that would run for hours, without a deadline: the server's own limit ends
        # them, and meanwhile another client's steps go through.
        results = []
        def hog():
            try:
                self.step(slow, substeps=100000, timeout=60)
                results.append("OK")
            except grpc.RpcError as error:
                results.append((error.code(), time.monotonic() - started))
        started = time.monotonic()
        hogs = [threading.Thread(target=hog) for _ in range(2)]
        for thread in hogs:
            thread.start()
        time.sleep(0.3)
        for _ in range(5):
            before = time.monotonic()
            self.step(fast)
            self.assertLess(time.monotonic() - before, 2.5, "a step waited for the hogs")
        for thread in hogs:
            thread.join()
        self.assertEqual(len(results), 2)
        for code, seconds in results:
            self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertLess(seconds, 8)


class MessageLimitTest(ServerCase):
    ARGS = ("--max-message-bytes", "65536")

    def test_a_reply_over_the_message_limit_is_refused_before_stepping(self):
        # 20 x 117 bodies x 7 doubles: 131 kB of body poses.
        ids = list(self.create(alsim_pb2.SceneSource(builtin="humanoid100"),
                               count=20).instance_ids)
        details = self.assert_code(grpc.StatusCode.RESOURCE_EXHAUSTED, self.step, ids,
                                   observations=[alsim_pb2.OBSERVATION_BODY_POSES])
        self.assertIn("nothing was stepped", details)
        for listed in self.stub.List(alsim_pb2.ListRequest(), timeout=5).instances:
            self.assertEqual(listed.steps, 0)
            self.assertEqual(listed.time, 0)
        # The same flaw in the other calls that return observations: Reset and StreamStates.
        selection = alsim_pb2.InstanceSelection(instance_ids=ids)
        self.step(ids, substeps=3)
        details = self.assert_code(
            grpc.StatusCode.RESOURCE_EXHAUSTED, self.stub.Reset, alsim_pb2.ResetRequest(
                instances=selection, observations=[alsim_pb2.OBSERVATION_BODY_POSES]), timeout=10)
        self.assertIn("nothing was reset", details)
        for listed in self.stub.List(alsim_pb2.ListRequest(), timeout=5).instances:
            self.assertEqual(listed.steps, 3)
        frames = self.stub.StreamStates(alsim_pb2.StreamStatesRequest(
            instances=selection, observations=[alsim_pb2.OBSERVATION_BODY_POSES]), timeout=10)
        with self.assertRaises(grpc.RpcError) as caught:
            list(frames)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)


class ShutdownTest(ServerCase):
    ARGS = ("--shutdown-grace", "1", "--max-call-seconds", "0", "--threads", "2")

    def tearDown(self):  # the server is meant to be gone here
        self.stop_server()

    def test_sigterm_ends_the_server_within_the_grace_whatever_clients_asked(self):
        slow = list(self.create(alsim_pb2.SceneSource(builtin="humanoid100"), count=2,
                                max_iterations=10000, tolerance=1e-300).instance_ids)
        self.step(slow, substeps=20)
        codes = []
        def hog(ids):
            try:
                self.step(ids, substeps=100000, timeout=120)
            except grpc.RpcError as error:
                codes.append(error.code())
        hogs = [threading.Thread(target=hog, args=([i],)) for i in slow]
        for thread in hogs:
            thread.start()
        time.sleep(1.0)
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.assertLess(time.monotonic() - started, 1 + 2.5, "grace 1 s, plus civetweb's stop")
        self.assertEqual(self.process.returncode, 0)
        for thread in hogs:
            thread.join()
        self.assertEqual(len(codes), 2)


class CompileConcurrencyTest(ServerCase):
    """Finding 5: compiles neither block steps nor each other, and a cancelled Create leaves
    nothing behind."""
    ARGS = ("--threads", "1", "--scene-cache", "0")

    def test_a_slow_compile_blocks_no_step(self):
        fast = list(self.create(alsim_pb2.SceneSource(builtin="box_stack")).instance_ids)
        done = []
        def compile_slow():
            self.create(text_scene(many_bodies(3000)), timeout=120)
            done.append(time.monotonic())
        thread = threading.Thread(target=compile_slow)
        thread.start()
        time.sleep(0.3)
        steps = 0
        while not done and steps < 1000:
            before = time.monotonic()
            self.step(fast)
            self.assertLess(time.monotonic() - before, 0.5, "a step waited for a compile")
            steps += 1
        thread.join()
        self.assertGreater(steps, 5, "the compile finished before steps could overlap it")

    def test_a_cancelled_create_leaves_nothing_behind(self):
        self.assert_code(grpc.StatusCode.DEADLINE_EXCEEDED, self.create,
                         text_scene(many_bodies(3000, "cancelled")), timeout=0.5)
        time.sleep(0.5)  # the server notices within its 20 ms poll
        self.assertEqual(len(self.stub.List(alsim_pb2.ListRequest(), timeout=5).instances), 0)
        self.assertEqual(gauge(scrape(self.metrics_url), "alsim_scenes"), 0)
        compilers = subprocess.run(["pgrep", "-P", str(self.process.pid)],
                                   capture_output=True, text=True).stdout.split()
        self.assertEqual(compilers, [], "a scene compiler outlived its cancelled Create")


class CompileLimitTest(ServerCase):
    ARGS = ("--max-compile-seconds", "0.5")

    def test_a_compile_over_the_time_limit_is_resource_exhausted(self):
        details = self.assert_code(grpc.StatusCode.RESOURCE_EXHAUSTED, self.create,
                                   text_scene(many_bodies(3000)))
        self.assertIn("--max-compile-seconds", details)


class LeakTest(ServerCase):
    """Compiled scenes die with their last instance (plus a bounded cache); client input never
    creates metric series."""
    ARGS = ("--scene-cache", "2")

    def test_distinct_scenes_are_freed_with_their_instances(self):
        for k in range(12):
            scene = BOX.replace("<worldbody>", '<worldbody><site name="s%d"/>' % k)
            created = self.create(text_scene(scene))
            self.stub.Destroy(alsim_pb2.DestroyRequest(instances=alsim_pb2.InstanceSelection(
                group_id=created.group_id)), timeout=5)
        body = scrape(self.metrics_url)
        self.assertEqual(gauge(body, "alsim_scenes"), 2, "the cache keeps two, no more")
        self.assertEqual(gauge(body, "alsim_instances"), 0)

    def test_unknown_methods_create_no_metric_series(self):
        for k in range(50):
            method = self.channel.unary_unary("/evil.Service%d/Method%d" % (k, k))
            try:
                method(b"", timeout=5)
            except grpc.RpcError as error:
                self.assertEqual(error.code(), grpc.StatusCode.UNIMPLEMENTED)
        body = scrape(self.metrics_url)
        self.assertNotIn("evil", body)
        self.assertNotIn("Method7", body)
        self.assertRegex(body, r'grpc_server_started_total\{[^}]*grpc_method="unknown"[^}]*\} 50')


class SmallerFindingsTest(ServerCase):
    def test_a_timestep_of_zero_or_below_is_refused(self):
        for timestep in ("0", "-0.002"):
            details = self.assert_code(
                grpc.StatusCode.INVALID_ARGUMENT, self.create,
                text_scene(BOX.replace("<mujoco>", '<mujoco><option timestep="%s"/>' % timestep)))
            self.assertIn("timestep", details)

    def test_a_stream_message_that_does_not_parse_ends_the_stream_with_an_error(self):
        ids = list(self.create(alsim_pb2.SceneSource(builtin="box_stack")).instance_ids)
        good = alsim_pb2.StepRequest(
            instances=alsim_pb2.InstanceSelection(instance_ids=ids)).SerializeToString()
        stream = self.channel.stream_stream(
            "/alsim.v1.Simulator/StepStream", request_serializer=lambda raw: raw,
            response_deserializer=alsim_pb2.StepResponse.FromString)
        replies = []
        with self.assertRaises(grpc.RpcError) as caught:
            for reply in stream(iter([good, b"\xff\xff\xff", good, good]), timeout=10):
                replies.append(reply)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("message 2", caught.exception.details())
        self.assertEqual(len(replies), 1)
        listed = self.stub.List(alsim_pb2.ListRequest(), timeout=5).instances
        self.assertEqual(listed[0].steps, 1, "the messages after the bad one did not run")

    def test_stream_rates_outside_the_range_are_refused(self):
        ids = list(self.create(alsim_pb2.SceneSource(builtin="box_stack")).instance_ids)
        for rate in (1e-12, -1e-300, float("nan"), 1001.0):
            frames = self.stub.StreamStates(alsim_pb2.StreamStatesRequest(
                instances=alsim_pb2.InstanceSelection(instance_ids=ids), rate_hz=rate), timeout=5)
            with self.assertRaises(grpc.RpcError) as caught:
                list(frames)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, rate)

    def test_reset_noise_that_overflows_changes_nothing(self):
        ids = list(self.create(alsim_pb2.SceneSource(builtin="quadruped_drop_8"), count=2)
                   .instance_ids)
        self.step(ids, substeps=5)
        before = [self.stub.GetState(alsim_pb2.GetStateRequest(instance_id=i), timeout=5).state
                  for i in ids]
        for noise in (1e308, float("inf"), float("nan"), -1.0):
            self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Reset,
                             alsim_pb2.ResetRequest(
                                 instances=alsim_pb2.InstanceSelection(instance_ids=ids),
                                 noise=noise), timeout=5)
        after = [self.stub.GetState(alsim_pb2.GetStateRequest(instance_id=i), timeout=5).state
                 for i in ids]
        self.assertEqual(before, after)

    def test_ids_are_random_and_unique(self):
        ids = list(self.create(alsim_pb2.SceneSource(builtin="box_stack"), count=50).instance_ids)
        self.assertEqual(len(set(ids)), 50)
        self.assertGreater(min(ids), 2 ** 32, "ids look sequential")
        self.assertNotEqual(sorted(ids), list(range(min(ids), min(ids) + 50)))


class TenantTest(ServerCase):
    """Tokens name tenants; a tenant sees and touches only its own instances."""
    TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-9876543210xx"}

    def setUp(self):
        self.tokens_file = tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False)
        self.tokens_file.write("# token tenant\n")
        for tenant, token in self.TOKENS.items():
            self.tokens_file.write("%s %s\n" % (token, tenant))
        self.tokens_file.close()
        self.ARGS = ("--auth-tokens", self.tokens_file.name, "--max-instances-per-tenant", "5",
                     "--reflection", "off")
        super().setUp()

    def tearDown(self):
        os.unlink(self.tokens_file.name)
        # tearDown's liveness check calls ServerInfo, which needs a token now.
        self.stub = self.as_tenant("alice")
        super().tearDown()

    def as_tenant(self, tenant):
        token = self.TOKENS[tenant]
        stub = alsim_pb2_grpc.SimulatorStub(self.channel)

        class WithToken:
            def __getattr__(self, name):
                method = getattr(stub, name)
                def call(request, **kwargs):
                    return method(request, metadata=[("authorization", "Bearer " + token)],
                                  **kwargs)
                return call
        return WithToken()

    def test_calls_without_a_valid_token_are_unauthenticated(self):
        for metadata in ([], [("authorization", "Bearer wrong-token-000000000")],
                         [("authorization", "alice-token-0123456789")]):
            with self.assertRaises(grpc.RpcError) as caught:
                self.stub.List(alsim_pb2.ListRequest(), metadata=metadata, timeout=5)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            self.assertNotIn("alice-token", caught.exception.details())

    def test_tenants_see_and_touch_only_their_own_instances(self):
        alice, bob = self.as_tenant("alice"), self.as_tenant("bob")
        created = alice.Create(alsim_pb2.CreateRequest(
            scene=text_scene(BOX, filename="alice-secret.xml"), count=2), timeout=30)
        ids = list(created.instance_ids)
        self.assertEqual(len(bob.List(alsim_pb2.ListRequest(), timeout=5).instances), 0)
        self.assertEqual([i.instance_id for i in alice.List(alsim_pb2.ListRequest(),
                                                             timeout=5).instances], ids)
        selection = alsim_pb2.InstanceSelection(instance_ids=ids[:1])
        by_group = alsim_pb2.InstanceSelection(group_id=created.group_id)
        for call, request in [
                (bob.Step, alsim_pb2.StepRequest(instances=selection)),
                (bob.Step, alsim_pb2.StepRequest(instances=by_group)),
                (bob.Reset, alsim_pb2.ResetRequest(instances=selection)),
                (bob.GetState, alsim_pb2.GetStateRequest(instance_id=ids[0])),
                (bob.SetState, alsim_pb2.SetStateRequest(instance_id=ids[0], state=b"x")),
                (bob.Destroy, alsim_pb2.DestroyRequest(instances=by_group))]:
            with self.assertRaises(grpc.RpcError) as caught:
                call(request, timeout=5)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)
            self.assertNotIn("alice", caught.exception.details())
        self.assertEqual(len(alice.List(alsim_pb2.ListRequest(), timeout=5).instances), 2)
        alice.Step(alsim_pb2.StepRequest(instances=by_group), timeout=5)

    def test_the_per_tenant_limit_leaves_other_tenants_room(self):
        alice, bob = self.as_tenant("alice"), self.as_tenant("bob")
        box = alsim_pb2.SceneSource(builtin="box_stack")
        alice.Create(alsim_pb2.CreateRequest(scene=box, count=5), timeout=30)
        with self.assertRaises(grpc.RpcError) as caught:
            alice.Create(alsim_pb2.CreateRequest(scene=box, count=1), timeout=30)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("--max-instances-per-tenant", caught.exception.details())
        bob.Create(alsim_pb2.CreateRequest(scene=box, count=5), timeout=30)

    def test_health_needs_no_token_and_reflection_can_be_off(self):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        self.assertEqual(check(b"", timeout=5), b"\x08\x01")  # SERVING
        reflection = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        with self.assertRaises(grpc.RpcError) as caught:
            list(reflection(iter([b"\x3a\x00"]), timeout=5))  # list_services
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNIMPLEMENTED)


class DrainResumeTest(unittest.TestCase):
    """SIGTERM with --state-dir saves every instance; the next server resumes them bit-exactly."""

    def observe(self, stub, ids, substeps):
        response = stub.Step(alsim_pb2.StepRequest(
            instances=alsim_pb2.InstanceSelection(instance_ids=ids), substeps=substeps,
            observations=[alsim_pb2.OBSERVATION_QPOS, alsim_pb2.OBSERVATION_QVEL]), timeout=60)
        return response.observations["qpos"].data, response.observations["qvel"].data

    def start(self, *args):
        process, address, _ = server_harness.start_server(BIN_DIR, *args, metrics="none")
        channel = grpc.insecure_channel(address)
        return process, channel, alsim_pb2_grpc.SimulatorStub(channel)

    def stop(self, process, channel):
        channel.close()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 0, err)
        return out

    def test_step_sigterm_restart_step_equals_an_uninterrupted_run(self):
        scenes = [alsim_pb2.SceneSource(builtin="quadruped_drop_8"),
                  text_scene(BOX, filename="box.xml")]
        with tempfile.TemporaryDirectory() as state_dir:
            # The reference: one server, 30 + 40 steps.
            process, channel, stub = self.start()
            reference = []
            for scene in scenes:
                ids = list(stub.Create(alsim_pb2.CreateRequest(
                    scene=scene, count=2, seed=7), timeout=60).instance_ids)
                stub.Reset(alsim_pb2.ResetRequest(
                    instances=alsim_pb2.InstanceSelection(instance_ids=ids), noise=0.05),
                    timeout=10)
                self.observe(stub, ids, 30)
                reference.append(self.observe(stub, ids, 40))
            self.stop(process, channel)

            # Interrupted: 30 steps, SIGTERM, a new server on the same directory, 40 steps.
            process, channel, stub = self.start("--state-dir", state_dir)
            groups = []
            for scene in scenes:
                created = stub.Create(alsim_pb2.CreateRequest(scene=scene, count=2, seed=7),
                                      timeout=60)
                ids = list(created.instance_ids)
                stub.Reset(alsim_pb2.ResetRequest(
                    instances=alsim_pb2.InstanceSelection(instance_ids=ids), noise=0.05),
                    timeout=10)
                self.observe(stub, ids, 30)
                groups.append((ids, created.group_id))
            listed = stub.List(alsim_pb2.ListRequest(), timeout=5).instances
            out = self.stop(process, channel)
            self.assertIn("saved 4 instance(s)", out)
            process, channel, stub = self.start("--state-dir", state_dir)
            self.assertIn("restored 4 instance(s)", process.stderr.readline())
            self.stop(process, channel)

            process, channel, stub = self.start("--state-dir", state_dir)
            try:
                relisted = stub.List(alsim_pb2.ListRequest(), timeout=5).instances
                self.assertEqual([(i.instance_id, i.group_id, i.scene, i.steps) for i in listed],
                                 [(i.instance_id, i.group_id, i.scene, i.steps)
                                  for i in relisted])
                for (ids, group), expected in zip(groups, reference):
                    self.assertEqual(self.observe(stub, ids, 40), expected,
                                     "resumed run differs from the uninterrupted one")
                    # The group survives too, and a later reset draws the same noise.
                    stub.Step(alsim_pb2.StepRequest(
                        instances=alsim_pb2.InstanceSelection(group_id=group)), timeout=10)
            finally:
                self.stop(process, channel)
            self.assertTrue(os.path.exists(os.path.join(state_dir, "instances.pb")))

    def test_episode_limits_and_counts_survive_a_restart(self):
        with tempfile.TemporaryDirectory() as state_dir:
            process, channel, stub = self.start("--state-dir", state_dir)
            ids = list(stub.Create(alsim_pb2.CreateRequest(
                scene=alsim_pb2.SceneSource(builtin="quadruped_drop_8"), count=1,
                max_episode_steps=5), timeout=60).instance_ids)
            step = alsim_pb2.StepRequest(instances=alsim_pb2.InstanceSelection(instance_ids=ids))
            for _ in range(3):
                self.assertEqual(list(stub.Step(step, timeout=10).truncated), [False])
            self.stop(process, channel)
            process, channel, stub = self.start("--state-dir", state_dir)
            try:
                # Calls 4 and 5 of the episode: the limit and the count came back.
                self.assertEqual(list(stub.Step(step, timeout=10).truncated), [False])
                self.assertEqual(list(stub.Step(step, timeout=10).truncated), [True])
            finally:
                self.stop(process, channel)

    def test_the_keyframe_of_a_group_survives_a_restart(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keyframes_scene.xml")
        with open(path) as f:
            scene = text_scene(f.read(), filename="keyframes_scene.xml")
        reset = alsim_pb2.ResetRequest(observations=[alsim_pb2.OBSERVATION_QPOS])
        with tempfile.TemporaryDirectory() as state_dir:
            process, channel, stub = self.start("--state-dir", state_dir)
            ids = list(stub.Create(alsim_pb2.CreateRequest(
                scene=scene, count=2, keyframe_name="home"), timeout=60).instance_ids)
            self.observe(stub, ids, 20)
            # The second instance shows the state its resets return to.
            reset.instances.instance_ids[:] = ids[1:]
            expected = stub.Reset(reset, timeout=10).observations["qpos"].data
            self.assertNotEqual(expected, self.observe(stub, ids[:1], 0)[0])
            self.stop(process, channel)
            process, channel, stub = self.start("--state-dir", state_dir)
            try:
                reset.instances.instance_ids[:] = ids[:1]
                self.assertEqual(stub.Reset(reset, timeout=10).observations["qpos"].data,
                                 expected, "a restored instance resets to its group's keyframe")
            finally:
                self.stop(process, channel)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
