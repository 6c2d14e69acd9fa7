"""A batch of alsim simulations behind one object: ``VectorEnv``.

``VectorEnv`` creates ``num_envs`` instances of one scene on an alsim server with a single Create
call (one *group*) and steps, resets and snapshots them through the ``alsim.v1.Simulator`` service
(proto/alsim/v1/alsim.proto). Given several servers (a list of addresses, or a DNS name with
several), it spreads the instances over them, one group each, and calls them all at once.
Observations come back as numpy arrays with a leading dimension ``num_envs``, in the order of
``instance_ids``.

    import numpy as np
    import alsim

    with alsim.VectorEnv("127.0.0.1:50051", "quadruped_drop_8", num_envs=4, seed=0) as env:
        obs = env.reset(seed=3)                           # {"qpos": [4, nq], "qvel": [4, nv]}
        for _ in range(100):
            actions = np.zeros((env.num_envs, env.nu))
            obs, info = env.step(actions)                 # info["status"], info["diverged"], ...

Arrays decoded from the server's tensors are ``np.frombuffer`` views of the response bytes: they
are **read-only** (no copy is made). Copy them (``arr.copy()``) before modifying them in place.
The arrays of a step that autoreset some environment, or that came from several servers, are
assembled by the client and are writable, but code should not rely on either.

gRPC failures are raised as ``AlsimError`` (a ``RuntimeError``) with the status code's name
(``"INVALID_ARGUMENT"``, ``"NOT_FOUND"``, ``"FAILED_PRECONDITION"``, ...) and the server's message.

Servers with TLS (mutual TLS) or bearer tokens take the ``tls``, ``tls_ca``, ``tls_cert``,
``tls_key``, ``tls_server_name``, ``token`` and ``token_file`` arguments of ``alsim.channel``
(``alsim/connection.py``), which default to the environment (``ALSIM_TLS_CA``, ``ALSIM_TOKEN``,
...).
"""

import collections
import ipaddress
import math
import numbers
import operator
import os
import posixpath
import socket
import xml.etree.ElementTree as ElementTree

import grpc
import numpy as np

from alsim import connection
from alsim.v1 import alsim_pb2, alsim_pb2_grpc

__all__ = ["AlsimError", "TensorSpec", "VectorEnv", "numpy_to_tensor", "tensor_to_numpy",
           "scene_source", "resolve_servers"]


# ---- errors --------------------------------------------------------------------------------------


class AlsimError(RuntimeError):
    """A call to the alsim server failed.

    Attributes:
        code: the gRPC status code's name, e.g. ``"INVALID_ARGUMENT"`` or ``"NOT_FOUND"``.
        message: the server's message (it names the offending field, instance or scene line).
        status_code: the ``grpc.StatusCode`` itself (None when the error did not come from gRPC).
        address: the server that failed, when a client of several servers (``GymVectorEnv``)
            names it (it then leads the text: ``"UNAVAILABLE: server 10.0.0.7:50051: ..."``);
            None otherwise.
    """

    def __init__(self, code, message, status_code=None, address=None):
        if isinstance(code, grpc.StatusCode):
            status_code, code = code, code.name
        if address is None:
            super().__init__("%s: %s" % (code, message))
        else:
            super().__init__("%s: server %s: %s" % (code, address, message))
        self.code = code
        self.message = message
        self.status_code = status_code
        self.address = address


def _rpc_error(error, address=None):
    """The AlsimError for a grpc.RpcError (``address``: the server to name in its text)."""
    code = error.code() if callable(getattr(error, "code", None)) else None
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return AlsimError("UNKNOWN" if code is None else code, details, address=address)


# ---- tensors -------------------------------------------------------------------------------------

_NUMPY_DTYPES = {
    alsim_pb2.DTYPE_FLOAT32: np.dtype("<f4"),
    alsim_pb2.DTYPE_FLOAT64: np.dtype("<f8"),
    alsim_pb2.DTYPE_INT32: np.dtype("<i4"),
}
_PROTO_DTYPES = {dtype: enum for enum, dtype in _NUMPY_DTYPES.items()}


def tensor_to_numpy(tensor):
    """An ``alsim.v1.Tensor`` as a numpy array of its dtype and shape.

    The array is a read-only view of the message's bytes (``np.frombuffer``), not a copy.
    """
    if tensor.dtype not in _NUMPY_DTYPES:
        raise ValueError("tensor has unsupported dtype %d (see alsim.v1.DType)" % tensor.dtype)
    shape = tuple(int(n) for n in tensor.shape)
    return np.frombuffer(tensor.data, dtype=_NUMPY_DTYPES[tensor.dtype]).reshape(shape)


def numpy_to_tensor(array):
    """A float32, float64 or int32 numpy array as an ``alsim.v1.Tensor`` (little-endian bytes)."""
    array = np.asarray(array)
    little = array.dtype.newbyteorder("<")
    if little not in _PROTO_DTYPES:
        raise TypeError("tensors hold float32, float64 or int32, not %s" % array.dtype)
    data = np.ascontiguousarray(array, dtype=little).tobytes()
    return alsim_pb2.Tensor(dtype=_PROTO_DTYPES[little], shape=array.shape, data=data)


TensorSpec = collections.namedtuple("TensorSpec", ["shape", "dtype", "lower", "upper"])
TensorSpec.__doc__ = """Per-environment layout of a tensor: shape (tuple), numpy dtype, and the
per-element bounds as float64 arrays of that shape (+-inf where unbounded), or None when the
quantity has no bounds."""


def _spec(proto):
    shape = tuple(int(n) for n in proto.shape)
    dtype = _NUMPY_DTYPES.get(proto.dtype)
    lower = np.array(proto.lower, dtype=np.float64).reshape(shape) if proto.lower else None
    upper = np.array(proto.upper, dtype=np.float64).reshape(shape) if proto.upper else None
    return TensorSpec(shape, dtype, lower, upper)


# Observation tensor names -> the alsim.v1.Observation that returns them.
_OBSERVATIONS = {
    "qpos": alsim_pb2.OBSERVATION_QPOS,
    "qvel": alsim_pb2.OBSERVATION_QVEL,
    "body_pos": alsim_pb2.OBSERVATION_BODY_POSES,
    "body_quat": alsim_pb2.OBSERVATION_BODY_POSES,
    "ctrl": alsim_pb2.OBSERVATION_ACTUATOR_STATE,
    "actuator_force": alsim_pb2.OBSERVATION_ACTUATOR_STATE,
    "contact_count": alsim_pb2.OBSERVATION_CONTACT_SUMMARY,
    "max_penetration": alsim_pb2.OBSERVATION_CONTACT_SUMMARY,
    "time": alsim_pb2.OBSERVATION_TIME,
}


# ---- scenes --------------------------------------------------------------------------------------

_MODEL_SUFFIXES = (".xml", ".mjcf", ".urdf")
# MJCF elements whose file attributes name files, and the compiler directory they are relative to.
_MESH_DIR_ELEMENTS = ("mesh", "hfield", "skin")
_TEXTURE_FILE_ATTRIBUTES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront",
                            "fileback")


def _is_path(scene):
    if isinstance(scene, os.PathLike):
        return True
    return (os.path.exists(scene) or "/" in scene or os.sep in scene
            or scene.lower().endswith(_MODEL_SUFFIXES))


def _parse(text):
    try:
        return ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None  # the server reports the malformed XML with MuJoCo's file:line message


def _read_text(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def _key(*parts):
    """The asset's name as the model spells it: a normalized, '/'-separated relative path."""
    joined = posixpath.normpath(posixpath.join(*[p.replace(os.sep, "/") for p in parts if p]))
    return joined


def scene_source(scene):
    """An ``alsim.v1.SceneSource`` for a local MJCF/URDF file or a built-in scene name.

    ``scene`` is a path (``str`` or ``os.PathLike``) when it is an existing file, contains a path
    separator or ends in .xml/.mjcf/.urdf; otherwise it is a built-in name
    (``ServerInfoResponse.builtin_scenes``). For a file, the text is sent with its base name as the
    filename, and every file the model references is sent with it as an asset keyed by the path
    the model uses (relative to the model file's directory): ``<include file>``, the ``file``
    attributes of ``mesh``, ``hfield`` and ``skin`` (under ``compiler/@meshdir``, else
    ``@assetdir``) and of ``texture`` (incl. the cube faces ``fileright``..., under
    ``@texturedir``, else ``@assetdir``), and URDF ``<mesh filename>`` (MuJoCo looks those up by
    base name in ``meshdir``). Raises FileNotFoundError naming the element for a missing file.
    """
    if not _is_path(scene):
        return alsim_pb2.SceneSource(builtin=scene)
    path = os.fspath(scene)
    text = _read_text(path)
    model_dir = os.path.dirname(os.path.abspath(path))
    assets = {}

    # The model and the files it includes (MuJoCo resolves includes against the model's directory).
    trees = []
    root = _parse(text)
    pending = [(root, path)] if root is not None else []
    while pending:
        tree, source = pending.pop(0)
        trees.append(tree)
        # MuJoCo matches <include> in any case (<INCLUDE>), unlike the schema's other elements.
        for include in (e for e in tree.iter() if isinstance(e.tag, str)
                        and e.tag.lower() == "include"):
            name = include.get("file")
            if not name:
                continue
            key = _key(name)
            if key in assets:
                continue
            included_path = os.path.join(model_dir, name)
            try:
                with open(included_path, "rb") as f:
                    assets[key] = f.read()
            except FileNotFoundError:
                raise FileNotFoundError("%s: <include file=%r>: no such file %s"
                                        % (source, name, included_path)) from None
            included = _parse(assets[key].decode("utf-8", errors="replace"))
            if included is not None:
                pending.append((included, included_path))

    directories = {}
    for tree in trees:
        for compiler in tree.iter("compiler"):
            for attribute in ("meshdir", "texturedir", "assetdir"):
                if compiler.get(attribute) is not None:
                    directories[attribute] = compiler.get(attribute)
    assetdir = directories.get("assetdir", "")
    meshdir = directories.get("meshdir", assetdir)
    texturedir = directories.get("texturedir", assetdir)
    urdf = root is not None and root.tag.lower() == "robot"  # MuJoCo: any case

    def add(element, attribute, directory, name, key=None):
        key = key or _key(directory, name)
        if key in assets:
            return
        file_path = os.path.join(model_dir, directory, name)
        try:
            with open(file_path, "rb") as f:
                assets[key] = f.read()
        except FileNotFoundError:
            raise FileNotFoundError("%s: <%s %s=%r>: no such file %s"
                                    % (path, element.tag, attribute, name, file_path)) from None

    for tree in trees:
        for element in tree.iter():
            if urdf and element.tag == "mesh" and element.get("filename"):
                name = element.get("filename")
                base = posixpath.basename(name.replace(os.sep, "/"))
                if os.path.exists(os.path.join(model_dir, meshdir, base)):
                    add(element, "filename", meshdir, base)
                else:
                    add(element, "filename", "", name)
            elif element.tag in _MESH_DIR_ELEMENTS and element.get("file"):
                add(element, "file", meshdir, element.get("file"))
            elif element.tag == "texture":
                for attribute in _TEXTURE_FILE_ATTRIBUTES:
                    if element.get(attribute):
                        add(element, attribute, texturedir, element.get(attribute))
    return alsim_pb2.SceneSource(text=alsim_pb2.SceneText(
        text=text, filename=os.path.basename(path), assets=assets))


def _solver_config(solver):
    if solver is None:
        return None
    if isinstance(solver, alsim_pb2.SolverConfig):
        return solver
    if isinstance(solver, str):
        return alsim_pb2.SolverConfig(solver=solver)
    if isinstance(solver, dict):
        # SolverConfig's own fields as they are; any other key is an option of the engine's table
        # (alsim run --help lists them), sent by name in `parameters` as text.
        fields = alsim_pb2.SolverConfig.DESCRIPTOR.fields_by_name
        typed = {k: v for k, v in solver.items() if k in fields}
        config = alsim_pb2.SolverConfig(**typed)
        for key, value in solver.items():
            if key not in fields:
                config.parameters[key] = ("on" if value else "off") if isinstance(value, bool) \
                    else repr(value) if isinstance(value, float) else str(value)
        return config
    raise TypeError("solver must be None, a name ('subadmm', 'pgs', ...), a dict of SolverConfig "
                    "fields or an alsim.v1.SolverConfig, not %r" % type(solver).__name__)


def _uint64(value, what):
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %r" % (what, type(value).__name__)) from None
    if not 0 <= value < 1 << 64:
        raise ValueError("%s must be in [0, 2**64), got %d" % (what, value))
    return value


# ---- servers -------------------------------------------------------------------------------------


def _split_host_port(address):
    if address.startswith("["):  # [v6]:port
        host, _, port = address[1:].partition("]:")
        return host, port
    host, _, port = address.rpartition(":")
    return host, port


def resolve_servers(address):
    """The server addresses behind ``address``, as ``VectorEnv`` and ``GymVectorEnv`` use them.

    A list or tuple is taken as it is (``[name]`` keeps a load balancer's name with several
    addresses one server). A ``host:port`` whose host is a DNS name is resolved
    (``socket.getaddrinfo``): its IPv4 addresses, or its IPv6 ones when it has none (a dual-stack
    name lists each server once per family), each ``ip:port``, are the servers; a name with one
    address is one server and is kept as written (TLS then checks the name). IP literals,
    ``unix:`` paths and ``dns:///`` targets are one server. Raises AlsimError UNAVAILABLE naming
    the address when the name does not resolve.
    """
    if isinstance(address, (list, tuple)):
        servers = [os.fspath(a) for a in address]
        if not servers:
            raise ValueError("address: an empty list of servers")
        return servers
    address = os.fspath(address)
    host, port = _split_host_port(address)
    if ":" not in address or address.startswith(("unix:", "dns:", "ipv4:", "ipv6:")) or not host:
        return [address]
    try:
        ipaddress.ip_address(host)
        return [address]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise AlsimError("UNAVAILABLE", "cannot resolve %s: %s" % (host, error),
                         address=address) from None
    v4 = list(dict.fromkeys(info[4][0] for info in found if info[0] == socket.AF_INET))
    v6 = list(dict.fromkeys(info[4][0] for info in found if info[0] == socket.AF_INET6))
    if v4:
        servers = ["%s:%s" % (ip, port) for ip in v4]
    else:
        servers = ["[%s]:%s" % (ip, port) for ip in v6]
    return servers if len(servers) > 1 else [address]


def _call_all(calls, timeout):
    """Makes the unary calls ``[(address, method, request)]`` at once; their replies, in order.

    Every call is waited for; the first failure is raised as an AlsimError naming its server.
    One call is made directly (a future costs a thread start per call).
    """
    if len(calls) == 1:
        address, method, request = calls[0]
        try:
            return [method(request, timeout=timeout)]
        except grpc.RpcError as error:
            raise _rpc_error(error, address) from error
    futures = [(address, method.future(request, timeout=timeout))
               for address, method, request in calls]
    results, failure = [], None
    for address, future in futures:
        try:
            results.append(future.result())
        except grpc.RpcError as error:
            failure = failure or _rpc_error(error, address)
    if failure is not None:
        raise failure
    return results


class _Shard:
    """One server's part of the environments: the contiguous block [offset, offset + count)."""

    def __init__(self, address, channel, offset, count):
        self.address = address
        self.channel = channel
        self.stub = alsim_pb2_grpc.SimulatorStub(channel)
        self.offset = offset
        self.count = count
        self.group_id = 0
        self.instance_ids = ()
        self.stream = None

    def selection(self, local):
        """The InstanceSelection of local indices ``local`` (the group when it is all, in order)."""
        if local.size == self.count and np.array_equal(local, np.arange(self.count)):
            return alsim_pb2.InstanceSelection(group_id=self.group_id)
        return alsim_pb2.InstanceSelection(instance_ids=[self.instance_ids[i] for i in local])


def _open_shards(address, num_envs, create_request, timeout, max_message_bytes, settings):
    """Creates ``num_envs`` instances over the servers of ``address`` (see ``resolve_servers``).

    ``create_request(offset, count)`` is the CreateRequest of the block of environments
    ``[offset, offset + count)``; the blocks are contiguous, the first ``num_envs % S`` servers
    get one more. ``settings`` are ``alsim.channel``'s keyword arguments (one channel per
    server). The Creates run at once; if any fails, the groups that were created are destroyed,
    the channels closed and the first failure raised naming its server. Returns ``(shards,
    replies)``.
    """
    servers = resolve_servers(address)
    if len(servers) > num_envs:
        raise ValueError("num_envs (%d) is fewer than the servers (%d: %s)"
                         % (num_envs, len(servers), ", ".join(servers)))
    settings = dict(settings)
    if (len(servers) > 1 and not isinstance(address, (list, tuple))
            and settings.get("tls_server_name") is None
            and connection.connection_settings(**settings)["tls"]):
        # The servers are reached by IP: their certificates are checked against the name.
        settings["tls_server_name"] = _split_host_port(os.fspath(address))[0]
    base, extra = divmod(num_envs, len(servers))
    shards = []
    try:
        for index, server in enumerate(servers):
            offset = shards[-1].offset + shards[-1].count if shards else 0
            shards.append(_Shard(server, connection.channel(
                server, max_message_bytes=max_message_bytes, **settings), offset,
                base + (index < extra)))
        futures = [(shard.address, shard.stub.Create.future(
            create_request(shard.offset, shard.count), timeout=timeout)) for shard in shards]
        replies, failure = [], None
        for (server, future), shard in zip(futures, shards):  # wait for all: every group known
            try:
                reply = future.result()
            except grpc.RpcError as error:
                failure = failure or _rpc_error(error, server)
                continue
            shard.group_id = reply.group_id
            shard.instance_ids = tuple(reply.instance_ids)
            replies.append(reply)
        if failure is not None:
            raise failure
    except BaseException:
        _close_shards(shards, timeout)
        raise
    return shards, replies


def _close_shards(shards, timeout):
    """Destroys the shards' groups (all at once; unreachable servers are no error), closes the
    channels."""
    futures = [shard.stub.Destroy.future(alsim_pb2.DestroyRequest(
        instances=alsim_pb2.InstanceSelection(group_id=shard.group_id)),
        timeout=timeout if timeout is not None else 10) for shard in shards if shard.group_id]
    for future in futures:
        try:
            future.result()
        except grpc.RpcError:
            pass
    for shard in shards:
        shard.channel.close()


# ---- the vector environment ----------------------------------------------------------------------


class VectorEnv:
    """``num_envs`` simulations of one scene on one or several alsim servers, stepped as a batch.

    Args:
        address: the server's ``host:port`` (or ``unix:PATH``); a list of servers; or one DNS
            name that resolves to several (a Kubernetes headless Service; see
            ``resolve_servers``). Several servers share ``num_envs`` in contiguous blocks
            (``env_servers``), one channel and one group each; every call goes to all of them at
            once and the batch comes back in env order, with the bits one server would give.
        scene: a local MJCF/URDF file (its text and referenced assets are sent; see
            ``scene_source``) or the name of a scene built into the server, e.g.
            ``"quadruped_drop_8"``.
        num_envs: instances to create (one Create call per server; one group per server).
        seed: environment k's generator is seeded with ``seed + k`` (reset noise is drawn from
            it), whatever server holds it.
        solver: None (the server's default), a solver name (``"subadmm"``, ``"pgs"``,
            ``"admm-nosub"``, ``"admm-nobody"``, ``"canal"``, and Table II's ablations
            ``"canal-trdogleg"``, ``"canal-dampedsn"``, ``"auto"``, ``"mujoco"``, MuJoCo's
            own soft contact model, and ``"sap"``, SAP's compliant contact), a dict of options or
            an
            ``alsim.v1.SolverConfig``. A dict's keys are SolverConfig fields or any option name
            of the engine's table (``alsim run --help``), e.g. ``{"solver": "canal",
            "canal_beta0": 1e3}``; values out of range make the server refuse the Create.
        substeps: simulation steps per ``step()`` call (the action is held for all of them).
        max_message_bytes: the channel's send and receive message size limit.
        observations: names of the observation tensors ``reset`` and ``step`` return: any of
            ``qpos``, ``qvel``, ``body_pos``, ``body_quat``, ``ctrl``, ``actuator_force``,
            ``contact_count``, ``max_penetration``, ``time`` (``observation_spec`` describes them).
            ``qpos`` and ``qvel`` are always returned.
        autoreset: ``"next_step"`` (default) or ``False``; see ``step``.
        timeout: deadline in seconds of every call, or None for none.
        tls, tls_ca, tls_cert, tls_key, tls_server_name, token, token_file: how to reach a server
            with TLS, mutual TLS or bearer tokens, as for ``alsim.channel``; None reads each from
            its environment variable (``ALSIM_TLS``, ``ALSIM_TLS_CA``, ``ALSIM_TLS_CLIENT_CERT``,
            ``ALSIM_TLS_CLIENT_KEY``, ``ALSIM_TLS_SERVER_NAME``, ``ALSIM_TOKEN``,
            ``ALSIM_TOKEN_FILE``). Unusable settings raise ValueError (or OSError for unreadable
            files) before any call; a failed TLS handshake is ``AlsimError`` UNAVAILABLE, a
            missing or unknown token UNAUTHENTICATED.

    Attributes: ``num_envs``, ``nq``, ``nv``, ``nu``, ``nbody`` (bodies, the world body 0
    included), ``timestep`` (one simulation step, s), ``dt`` (``timestep * substeps``),
    ``instance_ids`` (tuple, batch order), ``group_id`` (None with several servers),
    ``group_ids`` (one per server), ``servers`` (their addresses), ``env_servers`` (each
    environment's server), ``warnings`` (the importer's, one line each, of every server),
    ``action_spec`` (``{"action": TensorSpec}``, float64 ``[nu]`` bounded by the actuators'
    ctrlrange, +-inf where unlimited), ``action_names`` (actuator names), ``body_names``
    (MuJoCo's body order: the rows of ``step``'s ``external_forces``), ``observation_spec``
    (``{name: TensorSpec}`` of the returned observations, per environment), ``specs`` (the raw
    ``alsim.v1.Specs``).

    Errors name the server that failed (``AlsimError.address``); a step that failed on one server
    may have stepped the others' environments. Use it as a context manager, or call ``close()``,
    to destroy the instances on the servers.
    """

    STATUS_OK = alsim_pb2.INSTANCE_STATUS_OK
    STATUS_DIVERGED = alsim_pb2.INSTANCE_STATUS_DIVERGED

    def __init__(self, address, scene, num_envs, seed=0, solver=None, substeps=1,
                 max_message_bytes=64 << 20, observations=("qpos", "qvel"), autoreset="next_step",
                 timeout=None, tls=None, tls_ca=None, tls_cert=None, tls_key=None,
                 tls_server_name=None, token=None, token_file=None):
        self._closed = True
        self._shards = []
        num_envs = operator.index(num_envs)
        if num_envs < 1:
            raise ValueError("num_envs must be >= 1, got %d" % num_envs)
        substeps = operator.index(substeps)
        if substeps < 1:
            raise ValueError("substeps must be >= 1, got %d" % substeps)
        if autoreset not in ("next_step", False, None):
            raise ValueError("autoreset must be 'next_step' or False, got %r" % (autoreset,))
        if isinstance(observations, str):
            observations = (observations,)
        names = ["qpos", "qvel"]
        for name in observations:
            if name not in _OBSERVATIONS:
                raise ValueError("unknown observation %r (one of %s)"
                                 % (name, ", ".join(sorted(_OBSERVATIONS))))
            if name not in names:
                names.append(name)
        self._observation_names = tuple(names)
        self._observation_kinds = sorted({_OBSERVATIONS[name] for name in names})
        self._seed = _uint64(seed, "seed")
        _uint64(self._seed + num_envs - 1, "seed + num_envs - 1")
        self._substeps = substeps
        self._autoreset = autoreset == "next_step"
        self._timeout = timeout
        source = scene_source(scene)  # reads the files before any connection is made
        config = _solver_config(solver)

        def create_request(offset, count):
            request = alsim_pb2.CreateRequest(scene=source, count=count, seed=self._seed + offset)
            if config is not None:
                request.solver.CopyFrom(config)
            return request

        self._shards, responses = _open_shards(
            address, num_envs, create_request, timeout, max_message_bytes,
            dict(tls=tls, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                 tls_server_name=tls_server_name, token=token, token_file=token_file))
        self._closed = False
        self.address = address
        self.scene = scene if isinstance(scene, str) else os.fspath(scene)
        self.num_envs = num_envs
        self.servers = tuple(shard.address for shard in self._shards)
        self.env_servers = tuple(shard.address for shard in self._shards
                                 for _ in range(shard.count))
        self.instance_ids = tuple(i for shard in self._shards for i in shard.instance_ids)
        self.group_ids = tuple(shard.group_id for shard in self._shards)
        self.group_id = self.group_ids[0] if len(self._shards) == 1 else None
        self._shard_of = np.repeat(np.arange(len(self._shards)),
                                   [shard.count for shard in self._shards])
        self.warnings = [w for r in responses for w in r.warnings]
        response = responses[0]
        self.specs = response.specs
        self.nq, self.nv, self.nu = response.specs.nq, response.specs.nv, response.specs.nu
        self.nbody = response.specs.nbody
        self.body_names = list(response.specs.body_names)
        self.timestep = response.specs.timestep
        self.dt = self.timestep * substeps
        self.action_spec = {"action": _spec(response.specs.action)}
        self.action_names = list(response.specs.action.element_names)
        every = {spec.name: _spec(spec) for spec in response.specs.observations}
        self.observation_spec = {name: every[name] for name in names if name in every}
        # Environments whose last step came back DIVERGED: reset by the next step (autoreset).
        self._needs_reset = np.zeros(num_envs, dtype=bool)

    # ---- lifecycle ----

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Destroys the group on each server and closes the channels. Idempotent.

        A server that cannot be reached (or has already lost the instances) is not an error here.
        """
        if self._closed:
            return
        self._closed = True
        _close_shards(self._shards, self._timeout)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    def __repr__(self):
        return "VectorEnv(%r, %r, num_envs=%d, group_ids=%s%s)" % (
            self.address if hasattr(self, "address") else None, getattr(self, "scene", None),
            getattr(self, "num_envs", 0), getattr(self, "group_ids", ()),
            ", closed" if self._closed else "")

    def _check_open(self):
        if self._closed:
            raise ValueError("the VectorEnv is closed")

    def _observations(self, tensors):
        return {name: tensor_to_numpy(tensors[name])
                for name in self._observation_names if name in tensors}

    @property
    def _stub(self):
        """The stub of the first (with one server, the only) server."""
        return self._shards[0].stub

    @_stub.setter
    def _stub(self, stub):
        self._shards[0].stub = stub

    def _call(self, method, envs, make_request):
        """Calls ``method`` (a Simulator method name) for environments ``envs`` (ascending) on
        every server that holds some of them, all at once.

        ``make_request(shard, rows, selection)`` builds one server's request: ``rows`` are the
        positions in ``envs`` of that server's environments. Returns ``[(rows, reply)]``.
        """
        parts = []
        for index, shard in enumerate(self._shards):
            if len(self._shards) == 1:
                rows = np.arange(envs.size)
            else:
                rows = np.flatnonzero(self._shard_of[envs] == index)
            if rows.size:
                parts.append((shard, rows, make_request(
                    shard, rows, shard.selection(envs[rows] - shard.offset))))
        replies = _call_all([(shard.address, getattr(shard.stub, method), request)
                             for shard, _, request in parts], self._timeout)
        return [(rows, reply) for (_, rows, _), reply in zip(parts, replies)]

    def _gather(self, replies, count):
        """The observations of ``[(rows, reply)]`` as one batch of ``count`` rows: the reply's own
        read-only arrays when one reply holds the whole batch, else assembled arrays."""
        if len(replies) == 1 and replies[0][0].size == count:
            return self._observations(replies[0][1].observations)
        merged = {}
        for rows, reply in replies:
            for name, values in self._observations(reply.observations).items():
                if name not in merged:
                    merged[name] = np.empty((count,) + values.shape[1:], dtype=values.dtype)
                merged[name][rows] = values
        return merged

    # ---- reset and step ----

    def reset(self, seed=None, noise=0.0):
        """Resets every environment to the scene's initial state plus uniform noise.

        Args:
            seed: None (each environment keeps drawing from its own generator), an int (env k's
                generator restarts from ``seed + k``) or a sequence of ``num_envs`` ints.
            noise: noise in ``[-noise, noise]`` added to hinge and slide positions and to every
                velocity (rad, m, rad/s, m/s); 0 gives the exact initial state.

        Returns the observations: ``{name: array [num_envs, ...]}`` (at least qpos, qvel).
        Clears any pending autoreset.
        """
        self._check_open()
        if seed is None:
            seeds = []
        elif isinstance(seed, numbers.Integral):
            base = _uint64(seed, "seed")
            seeds = [_uint64(base + k, "seed + %d" % k) for k in range(self.num_envs)]
        else:
            seeds = [_uint64(s, "seed[%d]" % k) for k, s in enumerate(seed)]
            if len(seeds) != self.num_envs:
                raise ValueError("reset needs one seed per environment: got %d for %d"
                                 % (len(seeds), self.num_envs))
        noise = float(noise)
        if not (math.isfinite(noise) and noise >= 0):
            raise ValueError("noise must be finite and >= 0, got %r" % noise)
        envs = np.arange(self.num_envs)
        replies = self._call("Reset", envs, lambda shard, rows, selection: alsim_pb2.ResetRequest(
            instances=selection, seeds=[seeds[k] for k in rows] if seeds else [], noise=noise,
            observations=self._observation_kinds))
        self._needs_reset[:] = False
        return self._gather(replies, self.num_envs)

    @staticmethod
    def _float_array(values, what, shape, dims):
        """``values`` as a float32 or float64 array of ``shape`` (other numbers as float64)."""
        if values is None:
            return None
        array = np.asarray(values)
        if array.dtype.kind not in "fiub":
            raise TypeError("%s must be a float32 or float64 array, not %s" % (what, array.dtype))
        if array.dtype.kind != "f" or array.dtype.itemsize not in (4, 8):
            array = array.astype(np.float64)
        if array.shape != shape:
            raise ValueError("%s have shape %s; this VectorEnv needs %s = %s"
                             % (what, tuple(array.shape), dims, shape))
        return array

    def _actions(self, actions):
        return self._float_array(actions, "actions", (self.num_envs, self.nu), "(num_envs, nu)")

    def _external_forces(self, forces):
        return self._float_array(forces, "external_forces", (self.num_envs, self.nbody, 6),
                                 "(num_envs, nbody, 6)")

    def step(self, actions, external_forces=None):
        """Applies ``actions`` for ``substeps`` simulation steps in every environment.

        Args:
            actions: a float32 or float64 array ``[num_envs, nu]`` (integer arrays are converted
                to float64), or None to keep every environment's current controls. The shape is
                checked here (ValueError, before any call); NaN or Inf makes the server refuse the
                whole batch (AlsimError INVALID_ARGUMENT; no environment moves).
            external_forces: None (no external forces), or a float32 or float64 array
                ``[num_envs, nbody, 6]``: a force and torque on each body, as MuJoCo's
                ``xfrc_applied`` (the same layout, so MuJoCo code carries over): ``[..., 0:3]``
                the force (N), ``[..., 3:6]`` the torque (N m), both in the world frame, the force
                acting at the body's center of mass. Rows follow ``body_names`` (row 0 is the
                world body, which nothing moves). The forces act during every substep of this
                call only: the next ``step`` without them has none (unlike MuJoCo, where
                ``xfrc_applied`` stays until changed). Shape checked here (ValueError); NaN or
                Inf refused by the server as for actions.

        Returns ``(observations, info)``: observations is ``{name: array [num_envs, ...]}`` after
        the step; info holds arrays of length num_envs: ``status`` (int32, ``STATUS_OK`` = 1 or
        ``STATUS_DIVERGED`` = 2), ``diverged`` (bool), ``reset`` (bool, see below), the last
        substep's solver diagnostics ``contacts``, ``islands``, ``iterations`` (the most any island
        took), ``mean_iterations``, ``primal_residual``, ``dual_residual``, ``contact_residual``,
        ``solve_seconds``, ``split`` (bool: the substep solved twice to remove a deep penetration or
        limit violation without throwing bodies); ``solver_figures``, a dict of the solver's own
        figures by name (CANAL's ``newton_steps``, ...), each an array of length num_envs; and the
        scalar ``step_seconds`` (the server's wall time of the batch; the longest one's with
        several servers).

        Autoreset (``autoreset="next_step"``, the default; Gymnasium's NEXT_STEP mode): a step
        whose ``status`` reports an environment DIVERGED returns that environment's diverged
        observations (possibly non-finite) as they are. The *next* ``step`` call first resets
        that environment (its own generator, noise 0: the scene's exact initial state), ignores
        its rows of ``actions`` and ``external_forces``, does not step it, and returns its reset
        observations with ``info["reset"]`` True, ``status`` OK, ``diverged`` False and zero
        diagnostics; the other environments step normally. ``reset()`` and ``set_state()``
        cancel a pending autoreset.

        With ``autoreset=False`` nothing is reset for you: stepping while any environment is
        diverged raises the server's ``AlsimError("FAILED_PRECONDITION", ...)`` and steps no
        environment; call ``reset()`` or ``set_state()`` first.
        """
        self._check_open()
        actions = self._actions(actions)
        external_forces = self._external_forces(external_forces)
        pending = self._needs_reset.copy() if self._autoreset else np.zeros(self.num_envs, bool)
        n = self.num_envs
        info = {
            "status": np.full(n, self.STATUS_OK, dtype=np.int32),
            "diverged": np.zeros(n, dtype=bool),
            "reset": pending,
            "contacts": np.zeros(n, dtype=np.int64),
            "islands": np.zeros(n, dtype=np.int64),
            "iterations": np.zeros(n, dtype=np.int64),
            "mean_iterations": np.zeros(n),
            "primal_residual": np.zeros(n),
            "dual_residual": np.zeros(n),
            "contact_residual": np.zeros(n),
            "solve_seconds": np.zeros(n),
            "split": np.zeros(n, dtype=bool),
            "solver_figures": {},
            "step_seconds": 0.0,
        }
        stepped = np.flatnonzero(~pending)
        reset_observations = None
        if pending.any():
            reset_rows = np.flatnonzero(pending)
            reset_observations = self._gather(self._call(
                "Reset", reset_rows, lambda shard, rows, selection: alsim_pb2.ResetRequest(
                    instances=selection, observations=self._observation_kinds)), reset_rows.size)
            self._needs_reset[pending] = False
            if stepped.size == 0:
                return reset_observations, info

        def step_request(shard, rows, selection):
            request = alsim_pb2.StepRequest(instances=selection, substeps=self._substeps,
                                            observations=self._observation_kinds)
            if actions is not None:
                request.actions.CopyFrom(numpy_to_tensor(actions[stepped[rows]]))
            if external_forces is not None:
                request.external_forces.CopyFrom(numpy_to_tensor(external_forces[stepped[rows]]))
            return request

        replies = self._call("Step", stepped, step_request)
        for rows, response in replies:
            status = np.array(response.status, dtype=np.int32)
            info["status"][stepped[rows]] = status
            info["diverged"][stepped[rows]] = status == self.STATUS_DIVERGED
            for index, d in zip(stepped[rows], response.diagnostics):
                info["contacts"][index] = d.contacts
                info["islands"][index] = d.islands
                info["iterations"][index] = d.max_iterations
                info["mean_iterations"][index] = d.mean_iterations
                info["primal_residual"][index] = d.primal_residual
                info["dual_residual"][index] = d.dual_residual
                info["contact_residual"][index] = d.contact_residual
                info["solve_seconds"][index] = d.solve_seconds
                info["split"][index] = d.split
                for name, value in d.figures.items():
                    info["solver_figures"].setdefault(name, np.zeros(n))[index] = value
            info["step_seconds"] = max(info["step_seconds"], response.step_seconds)
        if self._autoreset:
            self._needs_reset[stepped] = info["diverged"][stepped]
        step_observations = self._gather(replies, stepped.size)
        if reset_observations is None:
            return step_observations, info

        # Some environments were reset rather than stepped: interleave the two batches.
        merged = {}
        reset_rows = np.flatnonzero(pending)
        for name, stepped_values in step_observations.items():
            values = np.empty((n,) + stepped_values.shape[1:], dtype=stepped_values.dtype)
            values[stepped] = stepped_values
            values[reset_rows] = reset_observations[name]
            merged[name] = values
        return merged, info

    # ---- state ----

    def _instance(self, index):
        """Environment ``index``'s (shard, instance id)."""
        try:
            index = operator.index(index)
            return self._shards[self._shard_of[index]], self.instance_ids[index]
        except IndexError:
            raise IndexError("environment index %r out of range for %d environments"
                             % (index, self.num_envs)) from None

    def state(self, index):
        """The complete state of environment ``index`` as opaque bytes (GetState)."""
        self._check_open()
        shard, instance = self._instance(index)
        return _call_all([(shard.address, shard.stub.GetState, alsim_pb2.GetStateRequest(
            instance_id=instance))], self._timeout)[0].state

    def set_state(self, index, state):
        """Restores environment ``index`` from ``state()`` bytes (SetState); bit-exact resume.

        Also clears the environment's diverged flag and any pending autoreset.
        """
        self._check_open()
        shard, instance = self._instance(index)
        _call_all([(shard.address, shard.stub.SetState, alsim_pb2.SetStateRequest(
            instance_id=instance, state=bytes(state)))], self._timeout)
        self._needs_reset[operator.index(index)] = False
