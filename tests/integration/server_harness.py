"""Shared by the Python integration tests: alsim-server on ephemeral ports.

Python standard library only.
"""
import os
import re
import subprocess

READY = re.compile(r"serving gRPC on (\S+), metrics on (\S+)")

# A motor with gear 1e300: a (finite) control of 1e300 overflows its force to inf, so the instance
# driven with it diverges on its first step while zero-control instances are fine.
DIVERGING_SCENE = """<mujoco model="overflow">
  <option timestep="0.01"/>
  <worldbody>
    <body>
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hinge" gear="1e300"/>
  </actuator>
</mujoco>
"""


def start_server(bin_dir, *extra_args, metrics="127.0.0.1:0"):
    """Starts alsim-server on an ephemeral port and waits for its ready line.

    Returns (process, grpc_address, metrics_url); metrics_url is "(disabled)" with metrics="none".
    """
    process = subprocess.Popen(
        [os.path.join(bin_dir, "alsim-server"), "--listen", "127.0.0.1:0",
         "--metrics", metrics, *extra_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = READY.search(line)
    if not match:
        process.kill()
        raise AssertionError("server did not start: %r %r" % (line, process.stderr.read()))
    return process, match.group(1), match.group(2)


def stop_server(process):
    """Kills a server start_server started, if it still runs, and closes its pipes."""
    if process.poll() is None:
        process.kill()
    process.wait()
    process.stdout.close()
    process.stderr.close()
