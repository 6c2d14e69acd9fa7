"""`make run`'s driver, scripts/run-server.sh, end to end: it serves, runs the demos, prints the
viewer's URL, and the viewer there lists the demo's 16 humanoids, which keep moving; SIGTERM stops
the server, the viewer and the stepping demo.

Ports: the script takes fixed addresses, so the test picks free ones first (a port another
process takes in between fails the start, loudly).
"""
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

import entry  # tests/integration, next to this file
import viewer_harness  # tests/integration, next to this file

BIN_DIR = None
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "run-server.sh")


def free_port():
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    """Whether something accepts connections on the loopback port."""
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


class RunServerScriptTest(unittest.TestCase):
    def test_make_run_shows_the_demo_humanoids_in_the_viewer(self):
        grpc_port, metrics_port, viewer_port = free_port(), free_port(), free_port()
        process = subprocess.Popen(
            [SCRIPT, BIN_DIR, "127.0.0.1:%d" % grpc_port, "127.0.0.1:%d" % metrics_port,
             "127.0.0.1:%d" % viewer_port],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        lines = []
        ready = threading.Event()

        def read():
            for line in process.stdout:
                lines.append(line)
                if "Press Ctrl-C to stop" in line:
                    ready.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            self.assertTrue(ready.wait(180), "".join(lines))
            text = "".join(lines)
            self.assertIn("alsim viewer: http://127.0.0.1:%d/" % viewer_port, text)
            self.assertRegex(text, r"demo: 16 humanoids \(group \d+\) stepping in real time")
            address = "127.0.0.1:%d" % viewer_port
            status, listed = viewer_harness.http_json(address, "/api/instances")
            self.assertEqual(status, 200)
            humanoids = [i for i in listed["instances"] if i["scene"] == "humanoid"]
            self.assertEqual(len(humanoids), 16, listed)
            status, _, page = viewer_harness.http(address, "/")
            self.assertEqual(status, 200)
            self.assertIn(b"alsim viewer", page)
            # They keep moving: their step counts grow (the demo steps in real time).
            time.sleep(1)
            _, later = viewer_harness.http_json(address, "/api/instances")
            steps = {i["instance_id"]: int(i["steps"]) for i in humanoids}
            self.assertTrue(all(int(i["steps"]) > steps[i["instance_id"]]
                                for i in later["instances"] if i["instance_id"] in steps))
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise
            reader.join(10)
        self.assertEqual(code, 0, "".join(lines))
        # The server, the viewer and the stepping demo are gone with it.
        for port in (grpc_port, viewer_port):
            self.assertFalse(port_open(port), "port %d still served" % port)
        leftovers = subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True,
                                   text=True).stdout.split()
        self.assertEqual(leftovers, [], "processes of the script's session outlived it")


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
