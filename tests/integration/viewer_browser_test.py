"""The viewer in a real browser: headless Chromium (Debian's, WebGL through SwiftShader) loads
`alsim view`'s page against a real server whose humanoids are being stepped, and the test checks
through the DevTools protocol that frames arrive, that the scene is drawn (the bodies' colour
where the page projects the bodies, the floor's where it projects the floor), that it moves
between two screenshots a second apart, and that the page logged no error; and that a soft ball
(a tetrahedral deformable, stepped with nsn) is drawn as one mesh whose vertices the stream moves
in place while it falls onto the floor.

The screenshots stay in the build tree (BUILD/viewer-test/) as artefacts. Skips, saying why,
only where Chromium is not installed (scripts/install-deps.sh installs it).
"""
import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client",
                                "python"))

import numpy as np  # noqa: E402
from alsim.v1 import alsim_pb2  # noqa: E402
import viewer_harness  # noqa: E402

BIN_DIR = None
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 1000, 700


class DevTools:
    """A minimal Chrome DevTools Protocol client over one page's websocket."""

    def __init__(self, url):
        import websocket  # python3-websocket (Debian); imported here so that a skip needs none
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError("%s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self):
        from PIL import Image
        data = self.call("Page.captureScreenshot", format="png")["data"]
        png = base64.b64decode(data)
        return png, Image.open(io.BytesIO(png)).convert("RGB")

    def errors(self):
        """Console errors, uncaught exceptions and error log entries (failed loads) so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console.%s: %s" % (params["type"], [
                    a.get("value", a.get("description")) for a in params.get("args", [])]))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: %s" % params["exceptionDetails"])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append("log: %s %s" % (params["entry"].get("text"),
                                             params["entry"].get("url", "")))
        return found

    def close(self):
        self.ws.close()


def soft_ball(n, radius):
    """A ball of tetrahedra: an n^3 grid of cells over [-1, 1]^3, six Kuhn tets per cell (as
    tests/support/kuhn_grid.h), its points pushed out along their rays so that the cube's shells
    become spheres (a point at max-norm s lands at distance s), times `radius`. Returns (points
    [(n+1)^3, 3], tets [6 n^3, 4]), every tet positively oriented (TetGen's orientation)."""
    ticks = np.linspace(-1, 1, n + 1)
    cube = np.array([(x, y, z) for z in ticks for y in ticks for x in ticks])
    length = np.linalg.norm(cube, axis=1)
    stretch = np.divide(np.abs(cube).max(axis=1), length, out=np.zeros_like(length),
                        where=length > 0)
    points = radius * cube * stretch[:, None]

    def ident(x, y, z):
        return (z * (n + 1) + y) * (n + 1) + x

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
                    volume = np.dot(edges[0], np.cross(edges[1], edges[2]))
                    assert volume != 0, "a flat tet in the ball"
                    if volume < 0:
                        tet[1], tet[2] = tet[2], tet[1]
                    tets.append(tet)
    return points, np.array(tets)


# A soft ball over an infinite floor (docs/engine.md "Deformables": the companion file soft.xml
# with an inline tet mesh, no vertex pinned), opaque magenta: a colour nothing else on the page
# has.
SOFT_BALL_SCENE = """<mujoco><custom><text name="alsim:deformables" data="soft.xml"/></custom>
  <worldbody><geom type="plane" size="0 0 0.1"/></worldbody></mujoco>
"""
SOFT_BALL_COMPANION = """<deformables><deformable name="ball" young="2e4" density="500"
    rgba="0.9 0.2 0.6 1" pos="%r %r %r"><tetmesh vertices="%s" tets="%s"/></deformable>
</deformables>
"""


def near(image, x, y, test, r=4):
    """Whether some pixel within r of (x, y) passes `test`."""
    for dx in range(-r, r + 1):
        for dy in range(-r, r + 1):
            px, py = int(x) + dx, int(y) + dy
            if 0 <= px < image.width and 0 <= py < image.height and \
                    test(image.getpixel((px, py))):
                return True
    return False


@unittest.skipIf(CHROMIUM is None,
                 "Chromium is not installed (apt-get install chromium; scripts/install-deps.sh)")
class ViewerInBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.artefacts = os.path.join(os.path.dirname(os.path.abspath(BIN_DIR)), "viewer-test")
        os.makedirs(cls.artefacts, exist_ok=True)
        cls.server, cls.address, _ = server_harness.start_server(BIN_DIR, metrics="none")
        cls.channel, cls.stub = viewer_harness.channel_stub(cls.address)
        created = viewer_harness.create(cls.stub, "humanoid", 4)
        cls.group, cls.ids = created.group_id, list(created.instance_ids)
        cls.nu = created.specs.nu
        cls.viewer, cls.http = viewer_harness.start_viewer(BIN_DIR, cls.address)
        cls.profile = tempfile.mkdtemp(prefix="alsim-chromium-")
        # --no-sandbox: the tests may run as root (containers), where Chromium's sandbox refuses
        # to start; the page is our own.
        cls.browser = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--remote-debugging-port=0",
             "--user-data-dir=" + cls.profile, "--window-size=%d,%d" % (WIDTH, HEIGHT),
             "--no-first-run", "--no-default-browser-check", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = cls.browser.stderr.readline()
            if not line:
                break
            if "DevTools listening on ws://" in line:
                port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if port is None:
            cls.tearDownClass()
            raise AssertionError("Chromium did not start its DevTools server")
        # Chromium keeps writing to stderr; a thread drains it so that it never blocks.
        import threading
        threading.Thread(target=cls.browser.stderr.read, daemon=True).start()
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=30) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        cls.devtools = DevTools(pages[0]["webSocketDebuggerUrl"])

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "devtools", None):
            cls.devtools.close()
        for name in ("browser", "viewer", "server"):
            if getattr(cls, name, None):
                viewer_harness.stop(getattr(cls, name))
        shutil.rmtree(getattr(cls, "profile", ""), ignore_errors=True)
        if getattr(cls, "channel", None):
            cls.channel.close()

    def wait_for(self, expression, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.devtools.evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        self.fail("the page never got to %s; its errors: %s; lastError %r" % (
            expression, self.devtools.errors(),
            self.devtools.evaluate("window.alsimViewer && window.alsimViewer.lastError")))

    def paused_capture(self):
        """A screenshot taken with the view paused (the page's button), so that the projected
        points and the pixels show the same poses; the simulation runs on. Returns (png, image,
        screen points, frames applied, deformables)."""
        d = self.devtools
        d.evaluate("document.getElementById('pause').click()")
        self.assertTrue(d.evaluate("window.alsimViewer.paused"))
        time.sleep(0.3)  # a few animation frames draw the last poses
        frames = d.evaluate("window.alsimViewer.framesApplied")
        png, image = d.screenshot()
        points = d.evaluate("window.alsimViewer.screenPoints()")
        deformables = d.evaluate("window.alsimViewer.deformables()")
        time.sleep(0.3)
        self.assertEqual(d.evaluate("window.alsimViewer.framesApplied"), frames,
                         "a paused view applied frames")
        d.evaluate("document.getElementById('pause').click()")  # resume
        return png, image, points, frames, deformables

    def test_the_page_draws_the_humanoids_and_they_move(self):
        d = self.devtools
        for domain in ("Runtime", "Log", "Page"):
            d.call(domain + ".enable")
        d.call("Page.navigate", url="http://%s/" % self.http)
        with viewer_harness.Stepper(self.stub, self.group, len(self.ids), self.nu, rate=30):
            # Every created instance is shown (the first group is viewed by default) and frames
            # arrive.
            self.wait_for("window.alsimViewer && window.alsimViewer.framesApplied >= 10")
            shown = d.evaluate("window.alsimViewer.shownIds()")
            self.assertEqual(sorted(shown), sorted(str(i) for i in self.ids))
            first_png, first, first_points, frames_before, _ = self.paused_capture()
            time.sleep(1)
            second_png, second, second_points, frames_after, _ = self.paused_capture()
        for name, png in (("viewer-1.png", first_png), ("viewer-2.png", second_png)):
            with open(os.path.join(self.artefacts, name), "wb") as f:
                f.write(png)
        self.assertGreater(frames_after, frames_before, "no frame arrived in a second")

        # Drawn: around each body's projected origin, some pixel has the humanoid's colour
        # (MuJoCo's rgba 0.8 0.6 0.4: red well above blue), which neither the floor (white) nor
        # the background (blue-grey) has; around points of each floor, the floor's light grey.
        def body(p):
            return p[0] - p[2] > 40

        def floor(p):
            return abs(p[0] - p[2]) < 25 and sum(p) / 3 > 90

        background = d.evaluate("window.alsimViewer.background")  # "#rrggbb"
        bg = tuple(int(background[i:i + 2], 16) for i in (1, 3, 5))
        self.assertFalse(body(bg) or floor(bg))
        bodies = [p for p in first_points["bodies"] if p["visible"]]
        self.assertGreaterEqual(len(bodies), 4 * 10, first_points)
        hits = sum(near(first, p["x"], p["y"], body) for p in bodies)
        self.assertGreaterEqual(hits, 0.9 * len(bodies),
                                "bodies not drawn where the page projects them")
        floors = [p for p in first_points["floor"] if p["visible"]]
        self.assertGreaterEqual(len(floors), 4)
        self.assertGreaterEqual(sum(near(first, p["x"], p["y"], floor) for p in floors),
                                0.9 * len(floors), "floor not drawn")
        # The floor is not the whole picture: the background shows above the horizon.
        background_pixels = sum(1 for x in range(0, first.width, 10)
                                for y in range(0, first.height, 10)
                                if all(abs(a - b) <= 3 for a, b in zip(first.getpixel((x, y)), bg)))
        self.assertGreater(background_pixels, 0)

        # Moves: the bodies' projections moved and so did the pixels.
        moved = sum(1 for a, b in zip(first_points["bodies"], second_points["bodies"])
                    if abs(a["x"] - b["x"]) + abs(a["y"] - b["y"]) > 0.5)
        self.assertGreater(moved, 0, "no body moved on screen in a second")
        changed = sum(1 for x in range(0, first.width, 2) for y in range(0, first.height, 2)
                      if first.getpixel((x, y)) != second.getpixel((x, y)))
        self.assertGreater(changed, 50, "the two screenshots are the same")

        self.assertEqual(d.errors(), [])

    def test_contacts_and_shadows_on_demand(self):
        d = self.devtools
        for domain in ("Runtime", "Log", "Page"):
            d.call(domain + ".enable")
        d.call("Page.navigate", url="http://%s/?ids=%d,%d" % (self.http, self.ids[0], self.ids[1]))
        with viewer_harness.Stepper(self.stub, self.group, len(self.ids), self.nu, rate=30):
            self.wait_for("window.alsimViewer && window.alsimViewer.framesApplied >= 3")
            self.assertEqual(sorted(d.evaluate("window.alsimViewer.shownIds()")),
                             sorted(str(i) for i in self.ids[:2]))
            self.assertEqual(d.evaluate("window.alsimViewer.contactPointsShown()"), 0)
            self.assertFalse(d.evaluate("window.alsimViewer.shadows()"))
            # The humanoids lie on the floor by now: their contacts come once asked for.
            d.evaluate("document.getElementById('contacts').click()")
            d.evaluate("document.getElementById('shadows').click()")
            self.wait_for("window.alsimViewer.contactPointsShown() > 0")
            self.assertTrue(d.evaluate("window.alsimViewer.shadows()"))
            png, _ = d.screenshot()
        with open(os.path.join(self.artefacts, "viewer-contacts.png"), "wb") as f:
            f.write(png)
        self.assertEqual(d.errors(), [])

    def test_the_soft_ball_falls_and_its_mesh_moves_in_place(self):
        n, radius, start = 3, 0.15, (0.0, 0.0, 0.6)
        points, tets = soft_ball(n, radius)
        companion = SOFT_BALL_COMPANION % (*start, " ".join("%r" % x for x in points.ravel()),
                                           " ".join(str(i) for i in tets.ravel()))
        # Only nsn moves a deformable with free vertices (the server's default refuses it).
        created = self.stub.Create(alsim_pb2.CreateRequest(
            scene=alsim_pb2.SceneSource(text=alsim_pb2.SceneText(
                text=SOFT_BALL_SCENE, filename="soft_ball.xml",
                assets={"soft.xml": companion.encode()})),
            solver=alsim_pb2.SolverConfig(solver="nsn"), count=1), timeout=120)
        ball = created.instance_ids[0]
        self.addCleanup(self.stub.Destroy, alsim_pb2.DestroyRequest(
            instances=alsim_pb2.InstanceSelection(group_id=created.group_id)), timeout=30)
        nvert, ntri = (n + 1) ** 3, 12 * n * n  # the grid's points; two triangles per face cell
        rest = points + np.array(start)

        d = self.devtools
        for domain in ("Runtime", "Log", "Page"):
            d.call(domain + ".enable")
        d.call("Page.navigate", url="http://%s/?ids=%d" % (self.http, ball))
        # At rest before any step: one mesh with the scene's counts, drawn once a frame came.
        self.wait_for("window.alsimViewer && window.alsimViewer.deformables().length == 1 && "
                      "window.alsimViewer.deformables()[0].updates > 0")
        mesh = "window.alsimViewer.deformableMeshes()[0]"
        d.evaluate("window.ballPosition = %s.geometry.getAttribute('position'); "
                   "window.ballArray = window.ballPosition.array; true" % mesh)
        first_png, first, first_points, _, first_ball = self.paused_capture()
        first_ball = first_ball[0]
        self.assertEqual((first_ball["id"], first_ball["name"]), (str(ball), "ball"))
        self.assertEqual((first_ball["vertices"], first_ball["faces"]), (nvert, ntri))
        self.assertTrue(first_ball["visible"])
        np.testing.assert_allclose(np.reshape(first_ball["positions"], (nvert, 3)), rest,
                                   atol=1e-5)

        # It falls: the page's vertices come down (20 cm: most of the way to the floor) while a
        # thread steps it.
        lowest = ("(() => { const p = %s.geometry.getAttribute('position').array; "
                  "let low = Infinity; for (let i = 2; i < p.length; i += 3) "
                  "low = Math.min(low, p[i]); return low; })()" % mesh)
        with viewer_harness.Stepper(self.stub, created.group_id, 1, 0, rate=30) as stepper:
            self.wait_for("%s < %r" % (lowest, float(rest[:, 2].min()) - 0.2))
            second_png, second, second_points, _, second_ball = self.paused_capture()
        self.assertIsNone(stepper.error)
        for name, png in (("viewer-soft-1.png", first_png), ("viewer-soft-2.png", second_png)):
            with open(os.path.join(self.artefacts, name), "wb") as f:
                f.write(png)
        # Updated in place: the same attribute and Float32Array all along, rewritten.
        self.assertTrue(d.evaluate(
            "%s.geometry.getAttribute('position') === window.ballPosition && "
            "window.ballPosition.array === window.ballArray" % mesh))
        self.assertGreater(second_ball[0]["updates"], first_ball["updates"])

        # Seen: the ball's magenta where the page projects its centre, in both pictures, lower on
        # the screen the second time; neither the floor nor the background is magenta.
        def magenta(p):
            return p[0] - p[1] > 60 and p[2] - p[1] > 20

        (up,), (down,) = first_points["deformables"], second_points["deformables"]
        self.assertTrue(up["visible"] and down["visible"], (up, down))
        self.assertTrue(near(first, up["x"], up["y"], magenta), "the ball not drawn at rest")
        self.assertTrue(near(second, down["x"], down["y"], magenta), "the ball not drawn falling")
        self.assertGreater(down["y"] - up["y"], 10, "the ball did not come down on the screen")

        # Where the server has it: once stepping stopped, the page's vertices are the server's
        # (float32 of 7 significant digits), above the floor.
        stream = self.stub.StreamStates(alsim_pb2.StreamStatesRequest(
            instances=alsim_pb2.InstanceSelection(instance_ids=[ball]), rate_hz=10,
            observations=[alsim_pb2.OBSERVATION_DEFORMABLE_VERTICES]), timeout=30)
        tensor = next(stream).observations["deformable_vertices"]
        stream.cancel()
        server = np.frombuffer(tensor.data, "<f8").reshape(nvert, 3)
        updates = d.evaluate("window.alsimViewer.deformables()[0].updates")
        self.wait_for("window.alsimViewer.deformables()[0].updates > %d" % (updates + 2))
        drawn = np.reshape(d.evaluate("window.alsimViewer.deformables()[0].positions"),
                           (nvert, 3))
        np.testing.assert_allclose(drawn, server, atol=1e-5)
        self.assertGreater(drawn[:, 2].min(), -0.02)
        self.assertLess(drawn[:, 2].max(), rest[:, 2].max() - 0.1)

        self.assertEqual(d.errors(), [])


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
