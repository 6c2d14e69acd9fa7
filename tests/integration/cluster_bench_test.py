"""The box-table benchmark (bench/cluster_table.py and bench/cluster_bench) against real servers.

What it checks is behaviour, not speed: the remote modes (one server and two, lockstep and with
sub-batches in flight over StepStream) hand back the observations that stepping the same
instances with the same actions in process gives, bit for bit; bad arguments are refused by name;
and the script runs end to end at a tiny size and stops every server it started.

Python standard library only; run by CTest with Debian's /usr/bin/python3 (ALSIM_PYTHON).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

BIN_DIR = None
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "bench", "cluster_table.py")


def cluster_bench(*args):
    """Runs bin/cluster_bench; returns the CompletedProcess."""
    return subprocess.run([os.path.join(BIN_DIR, "cluster_bench"), *args], capture_output=True,
                          text=True, timeout=120)


class RemoteModeTest(unittest.TestCase):
    def setUp(self):
        self.servers = []
        for _ in range(2):
            process, address, _ = server_harness.start_server(BIN_DIR, "--threads", "1",
                                                              metrics="none")
            self.servers.append((process, address))

    def tearDown(self):
        for process, _ in self.servers:
            process.terminate()
            process.wait(timeout=30)
            process.stdout.close()
            process.stderr.close()

    def remote(self, servers, pipeline):
        addresses = ",".join(address for _, address in self.servers[:servers])
        pids = ",".join(str(process.pid) for process, _ in self.servers[:servers])
        # 7 instances: shares of 3 and 4 on two servers, sub-batches of unequal sizes.
        done = cluster_bench("remote", "--address", addresses, "--server-pids", pids,
                             "--instances", "7", "--steps", "12", "--warmup", "3",
                             "--pipeline", str(pipeline), "--replay-threads", "2", "--seed", "5")
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_served_observations_equal_the_in_process_replay(self):
        for servers in (1, 2):
            for pipeline in (1, 2, 3):
                with self.subTest(servers=servers, pipeline=pipeline):
                    result = self.remote(servers, pipeline)
                    self.assertIs(result["identical_to_replay"], True)
                    self.assertEqual((result["servers"], result["pipeline"], result["instances"],
                                      result["steps"]), (servers, pipeline, 7, 12))
                    self.assertGreater(result["physics_cpu_us_per_instance_step"], 0)

    def test_bad_arguments_are_refused_by_name(self):
        address = self.servers[0][1]
        done = cluster_bench("remote", "--address", address, "--bogus", "1")
        self.assertEqual(done.returncode, 1)
        self.assertIn("'--bogus'", done.stderr)
        done = cluster_bench("remote", "--address", address, "--instances", "3", "--pipeline",
                             "4")
        self.assertEqual(done.returncode, 1)
        self.assertIn("--instances 3", done.stderr)
        done = cluster_bench("engine", "--steps", "zero")
        self.assertEqual(done.returncode, 1)
        self.assertIn("--steps 'zero'", done.stderr)


class ScriptTest(unittest.TestCase):
    def test_help(self):
        done = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("--instances", done.stdout)

    def test_bad_instances_are_refused_by_name(self):
        done = subprocess.run([sys.executable, SCRIPT, "--instances", "4", "--servers", "2",
                               "--pipeline", "4", "--threads", "1"], capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--instances 4", done.stderr)

    def test_a_tiny_run_reports_every_row_and_stops_its_servers(self):
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "table.json")
            done = subprocess.run(
                [sys.executable, SCRIPT, "--build-dir", os.path.dirname(BIN_DIR), "--instances",
                 "4,6", "--steps", "3", "--warmup", "1", "--threads", "2", "--servers", "2",
                 "--pipeline", "2", "--run-steps", "5", "--latency-calls", "100", "--json", out],
                capture_output=True, text=True, timeout=240)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as file:
                report = json.load(file)
        for name, row in report["rows"].items():
            self.assertEqual(sorted(row), ["4", "6"], name)
            for k, cell in row.items():
                self.assertGreater(cell["instance_steps_per_second"], 0, (name, k))
        self.assertEqual(len(report["rows"]), 9)
        for name in ("remote_sync", "remote_async"):
            self.assertIs(report["rows"][name]["6"]["runs"][0]["detail"]["identical_to_replay"],
                          True)
        self.assertIn("| remote async, 1 server, 2 sub-batches in flight |", done.stdout)
        self.assertIn("Step / ping-pong", done.stdout)
        self.assertEqual(len(report["server_pids"]), 4)  # 1 + 2 alsim-servers, 1 ping server
        for pid in report["server_pids"]:
            with self.assertRaises(ProcessLookupError, msg=f"server {pid} still runs"):
                os.kill(pid, 0)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
