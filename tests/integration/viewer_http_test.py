"""`alsim view`'s HTTP side against real servers, without a browser: the page and its files, the
JSON endpoints against the gRPC answers, the event stream (a slow reader gets the newest frame and
the ones in between are dropped, never queued; a destroyed instance ends the stream), requests it
must refuse (404, 405, 400, 413, a foreign Host), and a server with tokens (the viewer sees what
its token sees, and nothing without one).
"""
import json
import os
import socket
import sys
import tempfile
import time
import unittest

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client",
                                "python"))

import viewer_harness  # noqa: E402
from alsim.scenes import Scene  # noqa: E402
from alsim.v1 import alsim_pb2  # noqa: E402
from google.protobuf import json_format  # noqa: E402

BIN_DIR = None


def read_events(sock, until, stop_after=None):
    """Server-sent events from `sock` until the monotonic time `until` (or `stop_after` events);
    returns [(event, data dict, monotonic arrival)]."""
    events, buffer = [], b""
    while time.monotonic() < until and (stop_after is None or len(events) < stop_after):
        sock.settimeout(max(0.01, until - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            name, data = "message", None
            for line in block.decode().split("\n"):
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
            if data is not None:
                events.append((name, data, time.monotonic()))
    return events


def open_stream(address, query, receive_buffer=None):
    """A raw connection to /api/stream?QUERY, past the response's headers."""
    host, port = address.rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:  # before connecting, so that the window stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect((host, int(port)))
    sock.sendall(("GET /api/stream?%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (query, address)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"text/event-stream" in head, head
    return sock


class ViewerHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server, cls.address, _ = server_harness.start_server(BIN_DIR, metrics="none")
        cls.channel, cls.stub = viewer_harness.channel_stub(cls.address)
        created = viewer_harness.create(cls.stub, "humanoid", 16)
        cls.group, cls.ids, cls.nu = created.group_id, list(created.instance_ids), created.specs.nu
        cls.viewer, cls.http = viewer_harness.start_viewer(BIN_DIR, cls.address)

    @classmethod
    def tearDownClass(cls):
        viewer_harness.stop(cls.viewer)
        viewer_harness.stop(cls.server)
        cls.channel.close()

    def test_the_page_and_its_files(self):
        status, headers, body = viewer_harness.http(self.http, "/")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        self.assertIn(b"viewer.js", body)
        for name in ("viewer.js", "three.module.js", "OrbitControls.js"):
            status, headers, body = viewer_harness.http(self.http, "/" + name)
            self.assertEqual(status, 200, name)
            self.assertTrue(headers["content-type"].startswith("text/javascript"), name)
            with open(os.path.join(BIN_DIR, "viewer", name), "rb") as f:
                self.assertEqual(body, f.read(), name)
        status, headers, body = viewer_harness.http(self.http, "/", method="HEAD")
        self.assertEqual((status, body), (200, b""))
        self.assertGreater(int(headers["content-length"]), 0)

    def test_instances_and_scene_match_the_grpc_answers(self):
        status, listed = viewer_harness.http_json(self.http, "/api/instances")
        self.assertEqual(status, 200)
        # Ids as strings: they exceed JavaScript's exact integers.
        self.assertEqual([i["instance_id"] for i in listed["instances"]],
                         [str(i) for i in self.ids])
        status, scene = viewer_harness.http_json(self.http, "/api/scene?id=%d" % self.ids[3])
        self.assertEqual(status, 200)
        expected = self.stub.GetScene(alsim_pb2.GetSceneRequest(instance_id=self.ids[3]),
                                      timeout=30)
        self.assertEqual(scene, json.loads(json_format.MessageToJson(
            expected, preserving_proto_field_name=True, including_default_value_fields=True)))
        self.assertEqual(len(scene["geoms"]), len(expected.geoms))
        self.assertGreater(len(scene["geoms"]), 10)

    def test_sdf_geoms_come_with_their_triangulations_and_the_page_draws_them(self):
        """dish_pile's dishes are SDF geoms: /api/scene names them GEOM_TYPE_SDF with the index of
        a mesh after the scene's own, the triangulation ("sdf:GEOM"), which viewer.js draws as it
        draws a mesh geom's."""
        created = viewer_harness.create(self.stub, "dish_pile", 1)
        ident = created.instance_ids[0]
        try:
            status, scene = viewer_harness.http_json(self.http, "/api/scene?id=%d" % ident)
            self.assertEqual(status, 200)
            sdf = [g for g in scene["geoms"] if g["type"] == "GEOM_TYPE_SDF"]
            self.assertEqual(sorted(g["name"] for g in sdf),
                             ["bowl_1", "bowl_2", "plate", "pot"])
            for geom in sdf:
                mesh = scene["meshes"][geom["mesh"]]
                self.assertEqual(mesh["name"], "sdf:" + geom["name"])
                self.assertGreater(len(mesh["faces"]), 0)
                self.assertEqual(len(mesh["faces"]) % 3, 0)
                self.assertLess(max(mesh["faces"]), len(mesh["vertices"]) // 3)
            # The Python client's table knows the type too.
            client_scene = Scene(self.stub.GetScene(alsim_pb2.GetSceneRequest(instance_id=ident),
                                                    timeout=30))
            self.assertEqual(client_scene.geom_type_names.count("sdf"), 4)
            self.assertEqual(int((client_scene.geom_type == Scene.SDF).sum()), 4)
        finally:
            self.stub.Destroy(alsim_pb2.DestroyRequest(
                instances=alsim_pb2.InstanceSelection(instance_ids=[ident])), timeout=30)
        status, _, page = viewer_harness.http(self.http, "/viewer.js")
        self.assertEqual(status, 200)
        self.assertIn(b"case 'GEOM_TYPE_SDF'", page)

    def test_bad_requests_are_refused_clearly(self):
        cases = [
            ("/nope", {}, "GET", 404, b"no such page"),
            ("/../etc/passwd", {}, "GET", 404, b"no such page"),
            ("/", {}, "POST", 405, b"only GET"),
            ("/api/scene?id=abc", {}, "GET", 400, b"not a decimal number"),
            ("/api/scene", {}, "GET", 400, b"id=ID"),
            ("/api/scene?id=12345", {}, "GET", 404, b"NOT_FOUND"),
            ("/api/stream?ids=1&rate=1000", {}, "GET", 400, b"rate"),
            ("/api/instances", {"Host": "attacker.example:8080"}, "GET", 403, b"loopback"),
            ("/", {"X-Padding": "x" * 9000}, "GET", 413, b"too large"),
        ]
        for path, headers, method, code, text in cases:
            with self.subTest(path=path, method=method):
                status, fields, body = viewer_harness.http(self.http, path, method=method,
                                                           headers=headers)
                self.assertEqual(status, code, body)
                self.assertIn(text, body)
                if code == 405:
                    self.assertEqual(fields["allow"], "GET, HEAD")
        host, port = self.http.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"NONSENSE\r\n\r\n")
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 400"))

    def test_a_slow_reader_gets_the_newest_frame_and_no_backlog(self):
        ids = ",".join(str(i) for i in self.ids)
        with viewer_harness.Stepper(self.stub, self.group, len(self.ids), self.nu, rate=30):
            sock = open_stream(self.http, "ids=%s&rate=30" % ids, receive_buffer=4096)
            try:
                first = read_events(sock, time.monotonic() + 30, stop_after=2)
                self.assertEqual([name for name, _, _ in first], ["frame", "frame"])
                frame = first[-1][1]
                self.assertEqual(frame["ids"], [str(i) for i in self.ids])
                nbody = 17
                self.assertEqual(len(frame["body_pos"]), 16 * nbody * 3)
                self.assertEqual(len(frame["body_quat"]), 16 * nbody * 4)
                self.assertEqual(len(frame["details"]), 16)
                # Stop reading for 3 s: about 90 frames come due meanwhile.
                time.sleep(3)
                resumed = time.monotonic()
                later = read_events(sock, resumed + 2)
            finally:
                sock.close()
        # What waited in the sockets' buffers comes first: a few frames, written before the
        # pause. The first frame the viewer took afterwards says how many it replaced unsent
        # meanwhile; a queue would deliver the stale frames instead. How many came due depends on
        # how fast the server steps (a sanitizer build under load sends only a few), so the
        # checks hold at any speed: a frame replaced unsent, at most the buffers' few frames
        # before it, and the server's sequence jumping by exactly the replaced frames plus one
        # (every frame in between was received and dropped, none sent late).
        fresh = [k for k, (_, data, _) in enumerate(later) if data["viewer_dropped"] > 0]
        self.assertTrue(fresh, "no frame was dropped while the reader slept")
        self.assertLess(fresh[0], 10, "a backlog of frames was queued for a slow reader")
        dropped = later[fresh[0]][1]["viewer_dropped"]
        before = later[fresh[0] - 1][1] if fresh[0] > 0 else first[-1][1]
        self.assertEqual(later[fresh[0]][1]["sequence"] - before["sequence"], dropped + 1)
        # Poses move forward: the newest frame after the pause is newer than the first ones.
        times = [data["time"][0] for _, data, _ in later]
        self.assertGreater(times[-1], first[-1][1]["time"][0])

    def test_contacts_ride_along_on_request_and_the_stream_ends_with_its_instances(self):
        created = viewer_harness.create(self.stub, "humanoid", 1)
        ident = created.instance_ids[0]
        self.stub.Step(alsim_pb2.StepRequest(
            instances=alsim_pb2.InstanceSelection(instance_ids=[ident]), substeps=200),
            timeout=60)
        sock = open_stream(self.http, "id=%d&contacts=1" % ident)
        try:
            events = read_events(sock, time.monotonic() + 30, stop_after=1)
            details = events[0][1]["details"][0]
            self.assertGreater(details["contacts"], 0)
            self.assertEqual(len(details["contact_position"]), 3 * details["contacts"])
            self.assertEqual(len(details["contact_normal"]), 3 * details["contacts"])
            self.assertEqual(details["steps"], 200)
            self.stub.Destroy(alsim_pb2.DestroyRequest(
                instances=alsim_pb2.InstanceSelection(instance_ids=[ident])), timeout=30)
            events = read_events(sock, time.monotonic() + 30)
            self.assertEqual(events[-1][0], "end")
            self.assertIn("NOT_FOUND", events[-1][1]["error"])
        finally:
            sock.close()
        sock = open_stream(self.http, "id=%d" % self.ids[0])
        try:
            events = read_events(sock, time.monotonic() + 30, stop_after=1)
            self.assertNotIn("contact_position", events[0][1]["details"][0])
        finally:
            sock.close()


class ViewerWithTokensTest(unittest.TestCase):
    TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-9876543210xx"}

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        tokens = os.path.join(cls.directory.name, "tokens")
        with open(tokens, "w") as f:
            for tenant, token in cls.TOKENS.items():
                f.write("%s %s\n" % (token, tenant))
        cls.server, cls.address, _ = server_harness.start_server(
            BIN_DIR, "--auth-tokens", tokens, metrics="none")
        cls.channel, cls.stub = viewer_harness.channel_stub(cls.address)
        cls.created = {}
        for tenant, token in cls.TOKENS.items():
            cls.created[tenant] = cls.stub.Create(alsim_pb2.CreateRequest(
                scene=alsim_pb2.SceneSource(builtin="box_stack"), count=2), timeout=120,
                metadata=[("authorization", "Bearer " + token)])

    @classmethod
    def tearDownClass(cls):
        viewer_harness.stop(cls.server)
        cls.channel.close()
        cls.directory.cleanup()

    def test_the_viewer_sees_what_its_token_sees(self):
        viewer, address = viewer_harness.start_viewer(
            BIN_DIR, self.address, global_args=("--token", self.TOKENS["alice"]))
        try:
            status, listed = viewer_harness.http_json(address, "/api/instances")
            self.assertEqual(status, 200)
            self.assertEqual([i["instance_id"] for i in listed["instances"]],
                             [str(i) for i in self.created["alice"].instance_ids])
            bob = self.created["bob"].instance_ids[0]
            status, body = viewer_harness.http_json(address, "/api/scene?id=%d" % bob)
            self.assertEqual(status, 404)
            sock = open_stream(address, "id=%d" % bob)
            try:
                events = read_events(sock, time.monotonic() + 30)
            finally:
                sock.close()
            self.assertEqual(events[-1][0], "end")
            self.assertIn("NOT_FOUND", events[-1][1]["error"])
        finally:
            viewer_harness.stop(viewer)

    def test_without_a_token_the_viewer_gets_nothing(self):
        viewer, address = viewer_harness.start_viewer(BIN_DIR, self.address)
        try:
            status, body = viewer_harness.http_json(address, "/api/instances")
            self.assertEqual(status, 502)
            self.assertIn("UNAUTHENTICATED", body["error"])
        finally:
            viewer_harness.stop(viewer)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
