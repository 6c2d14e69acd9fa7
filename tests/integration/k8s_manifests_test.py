"""deploy/k8s: the Kubernetes manifests render, are well-formed, and match the real server.

Offline, without a cluster: `kubectl kustomize` renders the base and the example overlay (kubectl
from PATH, or $KUBECTL). `kubectl apply --dry-run=client` cannot stand in for validation here: in
kubectl 1.20 (Debian 12) as in 1.32 it asks an API server for discovery before anything else and
fails without one. Instead every Kubernetes object is checked against the typed API models of
Debian's python3-kubernetes (field names, value types, required fields, enums); those models are
Kubernetes 1.22's, older than the gRPC probe (1.24), which is checked against its own small schema
here. Then the manifests are cross-checked with `alsim-server --help`, the protos and a server
started with the manifests' environment: every env var and flag exists, every value parses, the
ports and probes reach what the server serves, and SIGTERM drains within the pods' grace.

Run by CTest: k8s_manifests_test.py --bin-dir DIR (the directory of alsim-server).
"""
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import grpc
import yaml

import kubernetes.client as k8s_models

import entry  # tests/integration, next to this file
import server_harness  # tests/integration, next to this file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
K8S_DIR = os.path.join(ROOT, "deploy", "k8s")
BIN_DIR = None
KUBECTL = os.environ.get("KUBECTL", "kubectl")

# kind -> (apiVersion, python3-kubernetes model) of the core objects the manifests may hold.
CORE_KINDS = {
    "Service": ("v1", "V1Service"),
    "StatefulSet": ("apps/v1", "V1StatefulSet"),
    "PodDisruptionBudget": ("policy/v1", "V1PodDisruptionBudget"),
}
# Kubernetes 1.24+ GRPCAction (probe.grpc); absent from the 1.22 models.
GRPC_ACTION = {"port": ("int", True), "service": ("str", False)}


def render(directory):
    """`kubectl kustomize directory`, as a list of objects (dicts)."""
    result = subprocess.run([KUBECTL, "kustomize", directory], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError("kubectl kustomize %s failed: %s" % (directory, result.stderr))
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]


def check_model(value, type_name, path, errors):
    """Checks `value` against a python3-kubernetes type name; appends messages to `errors`.

    Returns the model instance (or plain value) so that the model constructors can check required
    fields and enums as they do when the client deserializes a server's answer.
    """
    if type_name == "object":
        return value
    simple = {"str": str, "int": int, "bool": bool, "float": (int, float), "datetime": str}
    if type_name in simple:
        if not isinstance(value, simple[type_name]) or (type_name != "bool" and
                                                        isinstance(value, bool)):
            errors.append("%s: %r is not %s" % (path, value, type_name))
        return value
    match = re.fullmatch(r"list\[(.+)\]", type_name)
    if match:
        if not isinstance(value, list):
            errors.append("%s: not a list" % path)
            return value
        return [check_model(v, match.group(1), "%s[%d]" % (path, i), errors)
                for i, v in enumerate(value)]
    match = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if match:
        if not isinstance(value, dict):
            errors.append("%s: not a mapping" % path)
            return value
        return {k: check_model(v, match.group(1), "%s.%s" % (path, k), errors)
                for k, v in value.items()}
    model = getattr(k8s_models, type_name)
    if not isinstance(value, dict):
        errors.append("%s: not a mapping (%s)" % (path, type_name))
        return None
    by_json = {json: attr for attr, json in model.attribute_map.items()}
    kwargs = {}
    for key, item in value.items():
        where = "%s.%s" % (path, key)
        if type_name == "V1Probe" and key == "grpc":
            check_grpc_action(item, where, errors)
            continue
        if key not in by_json:
            errors.append("%s: unknown field of %s" % (where, type_name))
            continue
        attr = by_json[key]
        kwargs[attr] = check_model(item, model.openapi_types[attr], where, errors)
    try:
        return model(**kwargs)
    except ValueError as error:
        errors.append("%s (%s): %s" % (path, type_name, error))
        return None


def check_grpc_action(value, path, errors):
    """probe.grpc: {port: int (required), service: str}, as Kubernetes 1.24+ defines it."""
    if not isinstance(value, dict):
        errors.append("%s: not a mapping" % path)
        return
    for key in value:
        if key not in GRPC_ACTION:
            errors.append("%s.%s: unknown field of GRPCAction" % (path, key))
    for key, (kind, required) in GRPC_ACTION.items():
        if key not in value:
            if required:
                errors.append("%s.%s: required" % (path, key))
        elif not isinstance(value[key], {"int": int, "str": str}[kind]):
            errors.append("%s.%s: %r is not %s" % (path, key, value[key], kind))


def by_kind(objects, kind):
    """The objects of one kind."""
    return [o for o in objects if o["kind"] == kind]


def one(objects, kind):
    """The single object of `kind`."""
    found = by_kind(objects, kind)
    assert len(found) == 1, "expected one %s, found %d" % (kind, len(found))
    return found[0]


def server_container(objects):
    """The StatefulSet, its pod spec and its alsim-server container."""
    statefulset = one(objects, "StatefulSet")
    pod = statefulset["spec"]["template"]["spec"]
    containers = [c for c in pod["containers"] if c["name"] == "alsim-server"]
    assert len(containers) == 1, "no container named alsim-server"
    return statefulset, pod, containers[0]


def cpu_cores(quantity):
    """A CPU quantity ('2', '500m', '1.5') in cores."""
    quantity = str(quantity)
    if quantity.endswith("m"):
        return int(quantity[:-1]) / 1000
    return float(quantity)


def port_of(address):
    """The port of host:port."""
    return int(address.rsplit(":", 1)[1])


def container_env(container, state_dir):
    """The container's environment as the kubelet would set it, ALSIM_STATE_DIR moved to a
    local directory. Values from the downward API are resolved: limits.cpu with divisor 1 is the
    CPU limit rounded up to whole cores."""
    env = {}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
            continue
        ref = item["valueFrom"]["resourceFieldRef"]
        assert ref["resource"] == "limits.cpu", ref
        limit = cpu_cores(container["resources"]["limits"]["cpu"])
        env[item["name"]] = str(math.ceil(limit / cpu_cores(ref.get("divisor", "1"))))
    if "ALSIM_STATE_DIR" in env:
        env["ALSIM_STATE_DIR"] = state_dir
    return env


def health(address, service):
    """grpc.health.v1.Health/Check (HealthCheckRequest{service=1}); the status name."""
    encoded = service.encode()
    request = (b"\x0a" + bytes([len(encoded)]) + encoded) if encoded else b""
    with grpc.insecure_channel(address) as channel:
        reply = channel.unary_unary("/grpc.health.v1.Health/Check")(request, timeout=5)
    return {b"": "UNKNOWN", b"\x08\x01": "SERVING", b"\x08\x02": "NOT_SERVING"}.get(reply, reply)


class ManifestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rendered = {
            "base": render(os.path.join(K8S_DIR, "base")),
            "overlay": render(os.path.join(K8S_DIR, "overlays", "example")),
        }
        cls.help = subprocess.run([os.path.join(BIN_DIR, "alsim-server"), "--help"],
                                  stdout=subprocess.PIPE, text=True, check=True).stdout
        cls.services = set()
        for directory, _, files in os.walk(os.path.join(ROOT, "proto")):
            for name in files:
                if name.endswith(".proto"):
                    with open(os.path.join(directory, name)) as proto:
                        text = proto.read()
                    package = re.search(r"^package\s+([\w.]+);", text, re.M).group(1)
                    for service in re.findall(r"^service\s+(\w+)", text, re.M):
                        cls.services.add(package + "." + service)

    def assertInHelp(self, text, what):
        """Fails, naming `what` (not dumping the whole help), unless `text` is in --help."""
        self.assertTrue(text in self.help, "%s: %r is not in alsim-server --help" % (what, text))

    def each(self):
        """(name, objects) of the base and the overlay."""
        return self.rendered.items()

    def test_renders_the_expected_objects(self):
        base_kinds = sorted(o["kind"] for o in self.rendered["base"])
        self.assertEqual(base_kinds, ["PodDisruptionBudget", "Service", "StatefulSet"])
        overlay_kinds = sorted(o["kind"] for o in self.rendered["overlay"])
        self.assertEqual(overlay_kinds, sorted(base_kinds + ["ServiceMonitor"]))
        statefulset, _, container = server_container(self.rendered["overlay"])
        self.assertEqual(statefulset["spec"]["replicas"], 4)
        self.assertEqual(container["image"], "registry.example.com/alsim:0.1.0")
        for obj in self.rendered["overlay"]:
            self.assertEqual(obj["metadata"].get("namespace"), "alsim", obj["kind"])

    def test_objects_match_the_kubernetes_api_models(self):
        for name, objects in self.each():
            for obj in objects:
                if obj["kind"] == "ServiceMonitor":
                    continue  # a CRD: checked in test_service_monitor_scrapes_the_metrics_port
                with self.subTest(manifests=name, kind=obj["kind"]):
                    self.assertIn(obj["kind"], CORE_KINDS)
                    api_version, model = CORE_KINDS[obj["kind"]]
                    self.assertEqual(obj["apiVersion"], api_version)
                    errors = []
                    check_model(obj, model, obj["kind"], errors)
                    self.assertEqual(errors, [])

    def test_the_model_check_rejects_broken_objects(self):
        # The checker itself: a misspelt field, a wrong type, a missing required field.
        _, _, container = server_container(self.rendered["base"])
        broken = dict(container, readinesProbe=container["readinessProbe"])
        errors = []
        check_model(broken, "V1Container", "c", errors)
        self.assertEqual(errors, ["c.readinesProbe: unknown field of V1Container"])
        errors = []
        check_model({"containerPort": "50051"}, "V1ContainerPort", "p", errors)
        self.assertEqual(errors, ["p.containerPort: '50051' is not int"])
        errors = []
        check_model({"ports": [{"port": 1}]}, "V1ServiceSpec", "s", errors)
        self.assertEqual(errors, [])
        check_model({"ports": [{"name": "x"}]}, "V1ServiceSpec", "s", errors)
        self.assertEqual(len(errors), 1)
        self.assertIn("port", errors[0])
        errors = []
        check_model({"grpc": {"service": "x", "prot": 1}}, "V1Probe", "probe", errors)
        self.assertEqual(errors, ["probe.grpc.prot: unknown field of GRPCAction",
                                  "probe.grpc.port: required"])

    def test_headless_service_selects_the_statefulset_pods(self):
        for name, objects in self.each():
            with self.subTest(manifests=name):
                statefulset, pod, container = server_container(objects)
                service = one(objects, "Service")
                self.assertEqual(service["spec"]["clusterIP"], "None")
                self.assertEqual(statefulset["spec"]["serviceName"], service["metadata"]["name"])
                labels = statefulset["spec"]["template"]["metadata"]["labels"]
                for selector in (service["spec"]["selector"],
                                 statefulset["spec"]["selector"]["matchLabels"],
                                 one(objects, "PodDisruptionBudget")["spec"]["selector"]
                                 ["matchLabels"]):
                    self.assertTrue(selector)
                    self.assertLessEqual(selector.items(), labels.items())
                port_names = {p["name"] for p in container["ports"]}
                for port in service["spec"]["ports"]:
                    self.assertIn(port["targetPort"], port_names)
                mounts = {m["name"] for m in container.get("volumeMounts", [])}
                templates = statefulset["spec"]["volumeClaimTemplates"]
                claims = {c["metadata"]["name"] for c in templates}
                volumes = {v["name"] for v in pod.get("volumes", [])}
                self.assertLessEqual(mounts, claims | volumes)

    def test_env_flags_ports_and_probes_exist_in_the_server(self):
        for name, objects in self.each():
            with self.subTest(manifests=name):
                statefulset, pod, container = server_container(objects)
                env = {e["name"]: e for e in container["env"]}
                for variable in env:
                    self.assertInHelp("[$%s," % variable, "env")
                for arg in container.get("command", [])[1:] + container.get("args", []):
                    if arg.startswith("--"):
                        self.assertInHelp("  %s " % arg.split("=")[0], "args")
                ports = {p["name"]: p["containerPort"] for p in container["ports"]}
                self.assertEqual(port_of(env["ALSIM_LISTEN"]["value"]), ports["grpc"])
                self.assertEqual(port_of(env["ALSIM_METRICS"]["value"]), ports["metrics"])
                self.assertIn("grpc.health.v1.Health", self.services)
                for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                    grpc_probe = container[probe]["grpc"]
                    self.assertEqual(grpc_probe["port"], ports["grpc"], probe)
                    service = grpc_probe.get("service", "")
                    if service:
                        self.assertIn(service, self.services, probe)
                        self.assertInHelp(service, probe)
                annotations = statefulset["spec"]["template"]["metadata"]["annotations"]
                self.assertEqual(annotations["prometheus.io/scrape"], "true")
                self.assertEqual(int(annotations["prometheus.io/port"]), ports["metrics"])
                self.assertInHelp("serves %s" % annotations["prometheus.io/path"], "annotation")

    def test_threads_follow_the_cpu_limit(self):
        for name, objects in self.each():
            with self.subTest(manifests=name):
                _, _, container = server_container(objects)
                threads = [e for e in container["env"] if e["name"] == "ALSIM_THREADS"]
                self.assertEqual(len(threads), 1)
                ref = threads[0]["valueFrom"]["resourceFieldRef"]
                self.assertEqual(ref["resource"], "limits.cpu")
                self.assertEqual(ref["containerName"], container["name"])
                self.assertEqual(cpu_cores(ref["divisor"]), 1)
                self.assertGreaterEqual(cpu_cores(container["resources"]["limits"]["cpu"]), 1)

    def test_service_monitor_scrapes_the_metrics_port(self):
        objects = self.rendered["overlay"]
        monitor = one(objects, "ServiceMonitor")
        self.assertEqual(monitor["apiVersion"], "monitoring.coreos.com/v1")
        service = one(objects, "Service")
        self.assertLessEqual(monitor["spec"]["selector"]["matchLabels"].items(),
                             service["metadata"]["labels"].items())
        service_ports = {p["name"]: p for p in service["spec"]["ports"]}
        _, _, container = server_container(objects)
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        self.assertEqual(len(monitor["spec"]["endpoints"]), 1)
        endpoint = monitor["spec"]["endpoints"][0]
        self.assertEqual(ports[service_ports[endpoint["port"]]["targetPort"]], ports["metrics"])
        self.assertInHelp("serves %s" % endpoint["path"], "ServiceMonitor")

    def test_server_runs_with_the_manifest_environment(self):
        # The server itself reads every value, probes what the probes probe, serves the scrape
        # path, and on SIGTERM saves its instances and exits within the pod's grace.
        for name, objects in self.each():
            with self.subTest(manifests=name):
                statefulset, pod, container = server_container(objects)
                state_dir = tempfile.mkdtemp(prefix="alsim-k8s-")
                try:
                    env = container_env(container, state_dir)
                    parse = subprocess.run(
                        [os.path.join(BIN_DIR, "alsim-server"), "--version"],
                        env=dict(os.environ, **env), stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
                    self.assertEqual(parse.returncode, 0, parse.stderr)
                    # Loopback ephemeral ports here (flags win over the environment); the
                    # manifest's ports are checked against its own addresses above.
                    process = subprocess.Popen(
                        [os.path.join(BIN_DIR, "alsim-server"), "--listen", "127.0.0.1:0",
                         "--metrics", "127.0.0.1:0"],
                        env=dict(os.environ, **env), stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
                    try:
                        match = server_harness.READY.search(process.stdout.readline())
                        self.assertTrue(match, process.stderr.read() if not match else "")
                        address, metrics_url = match.group(1), match.group(2)
                        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                            service = container[probe]["grpc"].get("service", "")
                            self.assertEqual(health(address, service), "SERVING", probe)
                        path = statefulset["spec"]["template"]["metadata"]["annotations"][
                            "prometheus.io/path"]
                        url = metrics_url.rsplit("/", 1)[0] + path
                        with urllib.request.urlopen(url, timeout=5) as reply:
                            self.assertIn("alsim_", reply.read().decode())
                        subprocess.run([os.path.join(BIN_DIR, "alsim"), "--address", address,
                                        "create", "box_stack"], check=True,
                                       stdout=subprocess.DEVNULL)
                        started = time.monotonic()
                        process.send_signal(signal.SIGTERM)
                        grace = pod["terminationGracePeriodSeconds"]
                        self.assertEqual(process.wait(timeout=grace), 0)
                        self.assertLess(time.monotonic() - started, grace)
                        # After ALSIM_SHUTDOWN_GRACE, calls are interrupted and every instance is
                        # written out: the pod's grace leaves at least half a minute for that.
                        self.assertLessEqual(float(env["ALSIM_SHUTDOWN_GRACE"]) + 30, grace)
                        self.assertIn("saved 1 instance(s)", process.stdout.read())
                        self.assertTrue(os.path.exists(os.path.join(state_dir, "instances.pb")))
                    finally:
                        if process.poll() is None:
                            process.kill()
                            process.wait()
                        process.stdout.close()
                        process.stderr.close()
                finally:
                    shutil.rmtree(state_dir)


if __name__ == "__main__":
    entry.run(sys.modules[__name__])
