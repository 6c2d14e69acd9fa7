"""End to end: the clients (the alsim CLI and the Python package) against real alsim-server
processes with TLS (--tls-cert/--tls-key), mutual TLS (--tls-client-ca) and bearer tokens
(--auth-tokens).

A throwaway CA, a server certificate (SAN IP:127.0.0.1 and DNS:localhost) and client
certificates are made with the openssl CLI in a temporary directory. Run by CTest with Debian's
/usr/bin/python3 (python3-grpcio, python3-numpy) and the generated stubs on PYTHONPATH.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client",
                                "python"))

import grpc  # noqa: E402
import numpy as np  # noqa: E402

import alsim  # noqa: E402
from alsim.v1 import alsim_pb2, alsim_pb2_grpc  # noqa: E402

BIN_DIR = None
PKI = None  # the certificates' directory (setUpModule)
CERTS = {}  # name -> path
SCENE = "box_stack"  # a small built-in scene
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-9876543210xx"}

OPENSSL_CONFIG = """
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
[client]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
"""


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=PKI.name)


def make_ca(name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", name + ".key", "-out", name + ".pem", "-days", "2", "-subj",
            "/CN=alsim test " + name, "-config", "openssl.cnf", "-extensions", "ca")
    CERTS[name] = os.path.join(PKI.name, name + ".pem")


def make_leaf(name, ca, extensions, common_name):
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + common_name,
            "-config", "openssl.cnf")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-days", "2", "-out", name + ".pem", "-extfile", "openssl.cnf",
            "-extensions", extensions)
    CERTS[name] = os.path.join(PKI.name, name + ".pem")
    CERTS[name + "_key"] = os.path.join(PKI.name, name + ".key")


def setUpModule():
    global PKI
    if shutil.which("openssl") is None:
        raise unittest.SkipTest("the openssl CLI is missing (scripts/install-deps.sh installs it)")
    # The clients and servers here must see only the settings each test gives them.
    for name in list(os.environ):
        if name.startswith("ALSIM_"):
            del os.environ[name]
    PKI = tempfile.TemporaryDirectory(prefix="alsim-pki-")
    with open(os.path.join(PKI.name, "openssl.cnf"), "w") as f:
        f.write(OPENSSL_CONFIG)
    make_ca("ca")
    make_leaf("server", "ca", "server", "localhost")
    make_leaf("client", "ca", "client", "alsim test client")
    make_ca("other_ca")  # signs neither the server's nor the client's certificate
    make_leaf("stranger", "other_ca", "client", "alsim test stranger")
    tokens = os.path.join(PKI.name, "tokens")
    with open(tokens, "w") as f:
        f.write("# token tenant\n")
        for tenant, token in TOKENS.items():
            f.write("%s %s\n" % (token, tenant))
    CERTS["tokens"] = tokens
    for tenant, token in TOKENS.items():
        path = os.path.join(PKI.name, tenant + ".token")
        with open(path, "w") as f:
            f.write(token + "\n")
        CERTS[tenant + "_token_file"] = path


def tearDownModule():
    if PKI is not None:
        PKI.cleanup()


class ServerCase(unittest.TestCase):
    """One alsim-server for the class, started with SERVER_ARGS(); CLI and Python helpers."""

    @staticmethod
    def server_args():
        return ()

    @classmethod
    def setUpClass(cls):
        cls.process, cls.address, _ = server_harness.start_server(
            BIN_DIR, *cls.server_args(), metrics="none")
        cls.port = cls.address.rsplit(":", 1)[1]

    @classmethod
    def tearDownClass(cls):
        if cls.process.poll() is None:
            cls.process.terminate()
            try:
                cls.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cls.process.kill()
                cls.process.wait()
        cls.process.stdout.close()
        cls.process.stderr.close()

    def alsim(self, *args, env=None, address=None, timeout=60):
        """Runs the CLI with a clean environment plus `env`."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("ALSIM_")}
        environment.update(env or {})
        return subprocess.run(
            [os.path.join(BIN_DIR, "alsim"), "--address", address or self.address, "--timeout",
             "30", *args], capture_output=True, text=True, timeout=timeout, env=environment)

    def alsim_ok(self, *args, **kwargs):
        out = self.alsim(*args, **kwargs)
        self.assertEqual(out.returncode, 0, "alsim %s: %s" % (" ".join(args), out.stderr))
        return out

    def alsim_fails(self, code, *args, **kwargs):
        """The CLI exits 1 printing 'alsim: COMMAND: CODE: ...'."""
        out = self.alsim(*args, **kwargs)
        self.assertEqual(out.returncode, 1, "alsim %s: %s" % (" ".join(args), out.stderr))
        self.assertRegex(out.stderr, r"(?m)^alsim: [a-z-]+: %s: \S" % code, args)
        return out

    def cli_round_trip(self, *flags, env=None):
        """create, step, watch, list and destroy through the CLI with the given flags."""
        created = json.loads(self.alsim_ok(*flags, "create", SCENE, "--count", "2", "--json",
                                           env=env).stdout)
        group = str(created["group_id"])
        stepped = json.loads(self.alsim_ok(*flags, "step", "--group", group, "--steps", "3",
                                           "--json", env=env).stdout)
        self.assertEqual([row["status"] for row in stepped["instances"]], ["OK", "OK"])
        watched = self.alsim_ok(*flags, "watch", "--group", group, "--frames", "2", "--rate",
                                "100", env=env).stdout
        self.assertEqual(len(watched.strip().splitlines()), 2, watched)
        listed = json.loads(self.alsim_ok(*flags, "list", "--json", env=env).stdout)["instances"]
        self.assertTrue(set(created["instance_ids"]) <= {row["id"] for row in listed})
        self.assertIn("destroyed 2 instances",
                      self.alsim_ok(*flags, "destroy", "--group", group, env=env).stdout)
        return created

    def python_round_trip(self, **settings):
        """A VectorEnv through its life: create, reset, step, state round trip, close."""
        with alsim.VectorEnv(self.address, SCENE, num_envs=2, seed=1, timeout=30,
                             **settings) as env:
            env.reset(seed=2)
            obs, info = env.step(np.zeros((env.num_envs, env.nu)))
            self.assertEqual(obs["qpos"].shape, (2, env.nq))
            self.assertFalse(info["diverged"].any())
            env.set_state(1, env.state(0))
            return env.group_id

    def python_streams(self, channel):
        """StreamStates and StepStream through a raw stub on `channel`."""
        stub = alsim_pb2_grpc.SimulatorStub(channel)
        created = stub.Create(alsim_pb2.CreateRequest(
            scene=alsim_pb2.SceneSource(builtin=SCENE), count=2), timeout=30)
        selection = alsim_pb2.InstanceSelection(group_id=created.group_id)
        try:
            frames = stub.StreamStates(alsim_pb2.StreamStatesRequest(instances=selection,
                                                                     rate_hz=100), timeout=30)
            sequences = []
            for frame in frames:
                sequences.append(frame.sequence)
                self.assertEqual(list(frame.instance_ids), list(created.instance_ids))
                if len(sequences) == 3:
                    frames.cancel()
                    break
            self.assertEqual(sequences, [1, 2, 3])

            requests = [alsim_pb2.StepRequest(instances=selection, substeps=2,
                                              observations=[alsim_pb2.OBSERVATION_TIME])
                        for _ in range(4)]
            responses = list(stub.StepStream(iter(requests), timeout=30))
            self.assertEqual(len(responses), 4)
            times = alsim.tensor_to_numpy(responses[-1].observations["time"])
            np.testing.assert_allclose(times, 8 * created.specs.timestep, rtol=1e-9)
        finally:
            stub.Destroy(alsim_pb2.DestroyRequest(instances=selection), timeout=30)

    def assert_python_fails(self, code, **settings):
        with self.assertRaises(alsim.AlsimError) as caught:
            alsim.VectorEnv(self.address, SCENE, num_envs=1, timeout=30, **settings)
        self.assertEqual(caught.exception.code, code, caught.exception)
        return caught.exception


class TlsTest(ServerCase):
    @staticmethod
    def server_args():
        return ("--tls-cert", CERTS["server"], "--tls-key", CERTS["server_key"])

    def test_cli_over_tls(self):
        self.assertEqual(self.alsim_ok("--tls-ca", CERTS["ca"], "health").stdout, "SERVING\n")
        info = json.loads(self.alsim_ok("--tls-ca", CERTS["ca"], "server-info", "--json").stdout)
        self.assertEqual(info["health"], "SERVING")
        self.cli_round_trip("--tls-ca", CERTS["ca"])

    def test_cli_tls_settings_from_the_environment(self):
        env = {"ALSIM_TLS_CA": CERTS["ca"]}
        self.assertEqual(self.alsim_ok("health", env=env).stdout, "SERVING\n")
        self.alsim_ok("--wait", "5", "list", env=env)
        # The certificate names localhost too; another name is refused.
        self.alsim_ok("list", env=env, address="localhost:" + self.port)
        self.alsim_ok("--tls-server-name", "localhost", "list", env=env)
        self.alsim_fails("UNAVAILABLE", "list",
                         env=dict(env, ALSIM_TLS_SERVER_NAME="elsewhere.example"))

    def test_cli_without_tls_or_with_another_ca_fails_cleanly(self):
        for flags in ((), ("--tls-ca", CERTS["other_ca"]), ("--tls",)):
            self.alsim_fails("UNAVAILABLE", *flags, "health")
            self.alsim_fails("UNAVAILABLE", *flags, "list")
            self.alsim_fails("UNAVAILABLE", *flags, "create", SCENE)
        out = self.alsim("--wait", "1", "health")
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn("no server answered at %s within 1 s: UNAVAILABLE" % self.address,
                      out.stderr)
        out = self.alsim("--wait", "1", "--tls-ca", CERTS["other_ca"], "list")
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn("within 1 s: UNAVAILABLE", out.stderr)
        self.assertIn("certificate verify failed", out.stderr)

    def test_the_cli_leaves_cleanly_after_a_failed_handshake_every_time(self):
        # A failed TLS handshake leaves a subchannel backing off on gRPC's threads; the CLI used to
        # run OpenSSL's exit cleanup under its next handshake and crash now and then (exit -11).
        for _ in range(30):
            out = self.alsim("--wait", "0.2", "--tls-ca", CERTS["other_ca"], "list")
            self.assertEqual(out.returncode, 1, out.stderr)

    def test_python_over_tls(self):
        self.python_round_trip(tls_ca=CERTS["ca"])
        with open(CERTS["ca"], "rb") as f:
            self.python_round_trip(tls_ca=f.read())  # PEM contents rather than a path
        with mock.patch.dict(os.environ, {"ALSIM_TLS_CA": CERTS["ca"]}):
            self.python_round_trip()
        with alsim.channel(self.address, tls_ca=CERTS["ca"]) as channel:
            self.python_streams(channel)

    def test_python_without_tls_or_with_another_ca_fails_cleanly(self):
        self.assert_python_fails("UNAVAILABLE")
        error = self.assert_python_fails("UNAVAILABLE", tls_ca=CERTS["other_ca"])
        self.assertIn("certificate verify failed", error.message)
        with mock.patch.dict(os.environ, {"ALSIM_TLS_CA": CERTS["ca"]}):
            self.assert_python_fails("UNAVAILABLE", tls=False)  # overrides the environment
            self.assert_python_fails("UNAVAILABLE", tls_server_name="elsewhere.example")


class MutualTlsTest(ServerCase):
    @staticmethod
    def server_args():
        return ("--tls-cert", CERTS["server"], "--tls-key", CERTS["server_key"],
                "--tls-client-ca", CERTS["ca"])

    def test_cli_needs_a_client_certificate(self):
        self.alsim_fails("UNAVAILABLE", "--tls-ca", CERTS["ca"], "health")
        self.alsim_fails("UNAVAILABLE", "--tls-ca", CERTS["ca"], "list")
        self.alsim_fails("UNAVAILABLE", "--tls-ca", CERTS["ca"], "--tls-cert", CERTS["stranger"],
                         "--tls-key", CERTS["stranger_key"], "list")
        client = ("--tls-ca", CERTS["ca"], "--tls-cert", CERTS["client"], "--tls-key",
                  CERTS["client_key"])
        self.assertEqual(self.alsim_ok(*client, "health").stdout, "SERVING\n")
        self.cli_round_trip(*client)
        env = {"ALSIM_TLS_CA": CERTS["ca"], "ALSIM_TLS_CLIENT_CERT": CERTS["client"],
               "ALSIM_TLS_CLIENT_KEY": CERTS["client_key"]}
        self.alsim_ok("list", env=env)
        self.assertEqual(self.alsim_ok("health", env=env).stdout, "SERVING\n")

    def test_cli_certificate_and_key_go_together(self):
        for args in (("--tls-cert", CERTS["client"]), ("--tls-key", CERTS["client_key"])):
            out = self.alsim("--tls-ca", CERTS["ca"], *args, "list")
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertRegex(out.stderr, r"^alsim: --tls-(cert|key) needs ")
        out = self.alsim("--tls-ca", CERTS["ca"], "list",
                         env={"ALSIM_TLS_CLIENT_CERT": CERTS["client"]})
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn("$ALSIM_TLS_CLIENT_CERT needs a private key", out.stderr)

    def test_python_needs_a_client_certificate(self):
        self.assert_python_fails("UNAVAILABLE", tls_ca=CERTS["ca"])
        self.assert_python_fails("UNAVAILABLE", tls_ca=CERTS["ca"], tls_cert=CERTS["stranger"],
                                 tls_key=CERTS["stranger_key"])
        self.python_round_trip(tls_ca=CERTS["ca"], tls_cert=CERTS["client"],
                               tls_key=CERTS["client_key"])
        with mock.patch.dict(os.environ, {"ALSIM_TLS_CA": CERTS["ca"],
                                          "ALSIM_TLS_CLIENT_CERT": CERTS["client"],
                                          "ALSIM_TLS_CLIENT_KEY": CERTS["client_key"]}):
            self.python_round_trip()
            with alsim.channel(self.address) as channel:
                self.python_streams(channel)
        with self.assertRaises(ValueError):
            alsim.VectorEnv(self.address, SCENE, num_envs=1, tls_ca=CERTS["ca"],
                            tls_cert=CERTS["client"])


class TokenTest(ServerCase):
    @staticmethod
    def server_args():
        return ("--auth-tokens", CERTS["tokens"])

    def test_cli_without_a_valid_token_is_unauthenticated(self):
        # Health needs no token.
        self.assertEqual(self.alsim_ok("health").stdout, "SERVING\n")
        for flags in ((), ("--token", "wrong-token-0123456789")):
            for args in (("list",), ("create", SCENE), ("server-info",),
                         ("step", "--group", "1"), ("watch", "--ids", "1", "--frames", "1")):
                out = self.alsim_fails("UNAUTHENTICATED", *flags, *args)
                self.assertNotIn("wrong-token", out.stderr)

    def test_cli_with_a_token(self):
        self.cli_round_trip("--token", TOKENS["alice"])
        self.cli_round_trip("--token-file", CERTS["alice_token_file"])
        self.cli_round_trip(env={"ALSIM_TOKEN": TOKENS["alice"]})
        self.cli_round_trip(env={"ALSIM_TOKEN_FILE": CERTS["alice_token_file"]})
        # The command line overrides the environment.
        self.alsim_ok("--token", TOKENS["alice"], "list", env={"ALSIM_TOKEN": "wrong-token-0123"})
        self.alsim_ok("--token-file", CERTS["alice_token_file"], "list",
                      env={"ALSIM_TOKEN": "wrong-token-0123"})
        self.assertIn("alsim server at", self.alsim_ok("--token", TOKENS["bob"],
                                                      "server-info").stdout)

    def test_cli_token_is_the_tenant(self):
        created = json.loads(self.alsim_ok("--token", TOKENS["bob"], "create", SCENE,
                                           "--json").stdout)
        try:
            alice = json.loads(self.alsim_ok("--token", TOKENS["alice"], "list",
                                             "--json").stdout)["instances"]
            self.assertNotIn(created["instance_ids"][0], [row["id"] for row in alice])
            self.alsim_fails("NOT_FOUND", "--token", TOKENS["alice"], "destroy", "--group",
                             str(created["group_id"]))
        finally:
            self.alsim_ok("--token", TOKENS["bob"], "destroy", "--group",
                          str(created["group_id"]))

    def test_cli_token_usage_errors(self):
        with tempfile.NamedTemporaryFile("w", suffix=".token") as empty:
            cases = [
                (("--token", "a", "--token-file", CERTS["alice_token_file"], "list"), {},
                 "give --token or --token-file, not both"),
                (("--token", "has space 0123456789", "list"), {}, "printable ASCII"),
                (("--token-file", empty.name, "list"), {}, "is empty"),
                (("--token-file", "/no/such/token", "list"), {}, "cannot read /no/such/token"),
                (("list",), {"ALSIM_TOKEN": TOKENS["alice"],
                             "ALSIM_TOKEN_FILE": CERTS["alice_token_file"]},
                 "set $ALSIM_TOKEN or $ALSIM_TOKEN_FILE, not both"),
                (("--tls-ca", "/no/such/ca.pem", "list"), {}, "--tls-ca: cannot read"),
                (("--tls-ca", CERTS["tokens"], "list"), {}, "is not a PEM file"),
                (("list",), {"ALSIM_TLS": "maybe"}, "$ALSIM_TLS 'maybe' is not 1 or 0"),
            ]
            for args, env, message in cases:
                out = self.alsim(*args, env=env)
                self.assertEqual(out.returncode, 2, (args, out.stderr))
                self.assertIn(message, out.stderr, args)
        # A command's help (as `run`) reads and checks none of these settings.
        self.alsim_ok("list", "--help", env={"ALSIM_TLS_CA": "/no/such/ca.pem", "ALSIM_TLS": "?",
                                             "ALSIM_TLS_CLIENT_CERT": CERTS["client"]})

    def test_python_without_a_valid_token_is_unauthenticated(self):
        self.assert_python_fails("UNAUTHENTICATED")
        self.assert_python_fails("UNAUTHENTICATED", token="wrong-token-0123456789")
        with mock.patch.dict(os.environ, {"ALSIM_TOKEN": TOKENS["alice"]}):
            self.assert_python_fails("UNAUTHENTICATED", token="")  # overrides the environment
        with alsim.channel(self.address) as channel:
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            with self.assertRaises(grpc.RpcError) as caught:
                list(stub.StepStream(iter([alsim_pb2.StepRequest()]), timeout=30))
            self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            with self.assertRaises(grpc.RpcError) as caught:
                next(stub.StreamStates(alsim_pb2.StreamStatesRequest(), timeout=30))
            self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        for bad in ("has space 0123456789", "line\nbreak-0123456789"):
            with self.assertRaises(ValueError):
                alsim.channel(self.address, token=bad)

    def test_python_with_a_token(self):
        self.python_round_trip(token=TOKENS["alice"])
        self.python_round_trip(token_file=CERTS["alice_token_file"])
        with mock.patch.dict(os.environ, {"ALSIM_TOKEN": TOKENS["alice"]}):
            self.python_round_trip()
        with mock.patch.dict(os.environ, {"ALSIM_TOKEN_FILE": CERTS["bob_token_file"]}):
            self.python_round_trip()
            with alsim.channel(self.address) as channel:
                self.python_streams(channel)
        with alsim.channel(self.address, token=TOKENS["alice"]) as channel:
            self.python_streams(channel)
            # The caller's own metadata goes along with the token.
            stub = alsim_pb2_grpc.SimulatorStub(channel)
            stub.List(alsim_pb2.ListRequest(), metadata=[("x-trace", "1")], timeout=30)


class TlsTokenTest(ServerCase):
    """TLS, mutual TLS and tokens together: the token rides on TLS call credentials in Python."""

    @staticmethod
    def server_args():
        return ("--tls-cert", CERTS["server"], "--tls-key", CERTS["server_key"],
                "--tls-client-ca", CERTS["ca"], "--auth-tokens", CERTS["tokens"])

    def test_cli(self):
        client = ("--tls-ca", CERTS["ca"], "--tls-cert", CERTS["client"], "--tls-key",
                  CERTS["client_key"])
        self.alsim_fails("UNAUTHENTICATED", *client, "list")
        self.assertEqual(self.alsim_ok(*client, "health").stdout, "SERVING\n")
        self.cli_round_trip(*client, "--token", TOKENS["alice"])
        self.cli_round_trip(*client, env={"ALSIM_TOKEN_FILE": CERTS["bob_token_file"]})

    def test_python(self):
        client = {"tls_ca": CERTS["ca"], "tls_cert": CERTS["client"],
                  "tls_key": CERTS["client_key"]}
        self.assert_python_fails("UNAUTHENTICATED", **client)
        self.python_round_trip(token=TOKENS["alice"], **client)
        with alsim.channel(self.address, token=TOKENS["bob"], **client) as channel:
            self.python_streams(channel)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
