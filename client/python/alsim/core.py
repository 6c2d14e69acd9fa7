"""The core that ``VectorEnv`` and ``GymVectorEnv`` share: errors, tensors, servers and ``Batch``.

``Batch`` is ``num_envs`` instances of one scene created with one Create call per server (one
*group* each), spread over one or several servers in contiguous blocks. It routes a call for any
set of environments to the servers that hold them, all at once, and puts the replies back in env
order. ``BatchEnv`` is the public surface both environment classes build on it: the scene's
sizes and names, ``scene()``, ``stream()``, ``close()``.

Everything here is public (no other module of alsim imports a private name from this one).
"""

import collections
import ipaddress
import numbers
import operator
import os
import socket

import grpc
import numpy as np

from alsim import connection, scenes
from alsim.v1 import alsim_pb2, alsim_pb2_grpc

__all__ = ["AlsimError", "rpc_error", "NUMPY_DTYPES", "PROTO_DTYPES", "TensorSpec",
           "tensor_spec", "tensor_to_numpy", "numpy_to_tensor", "OBSERVATIONS",
           "observation_names", "observation_kinds", "solver_config", "uint64", "positive",
           "reset_seeds", "keyframe_fields", "gradient_request", "JACOBIANS", "new_gradients",
           "fill_gradients", "DIAGNOSTICS", "new_diagnostics", "fill_diagnostics",
           "resolve_servers", "split_host_port", "call_all", "Shard", "Batch", "BatchEnv"]


# ---- errors --------------------------------------------------------------------------------------


class AlsimError(RuntimeError):
    """A call to the alsim server failed.

    Attributes:
        code: the gRPC status code's name, e.g. ``"INVALID_ARGUMENT"`` or ``"NOT_FOUND"``.
        message: the server's message (it names the offending field, instance or scene line).
        status_code: the ``grpc.StatusCode`` itself (None when the error did not come from gRPC).
        address: the server that failed, when a client of several servers names it (it then
            leads the text: ``"UNAVAILABLE: server 10.0.0.7:50051: ..."``); None otherwise.
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


def rpc_error(error, address=None):
    """The AlsimError for a grpc.RpcError (``address``: the server to name in its text)."""
    code = error.code() if callable(getattr(error, "code", None)) else None
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return AlsimError("UNKNOWN" if code is None else code, details, address=address)


# ---- tensors -------------------------------------------------------------------------------------

NUMPY_DTYPES = {
    alsim_pb2.DTYPE_FLOAT32: np.dtype("<f4"),
    alsim_pb2.DTYPE_FLOAT64: np.dtype("<f8"),
    alsim_pb2.DTYPE_INT32: np.dtype("<i4"),
}
PROTO_DTYPES = {dtype: enum for enum, dtype in NUMPY_DTYPES.items()}


def tensor_to_numpy(tensor):
    """An ``alsim.v1.Tensor`` as a numpy array of its dtype and shape.

    The array is a read-only view of the message's bytes (``np.frombuffer``), not a copy.
    """
    if tensor.dtype not in NUMPY_DTYPES:
        raise ValueError("tensor has unsupported dtype %d (see alsim.v1.DType)" % tensor.dtype)
    shape = tuple(int(n) for n in tensor.shape)
    return np.frombuffer(tensor.data, dtype=NUMPY_DTYPES[tensor.dtype]).reshape(shape)


def numpy_to_tensor(array):
    """A float32, float64 or int32 numpy array as an ``alsim.v1.Tensor`` (little-endian bytes)."""
    array = np.asarray(array)
    little = array.dtype.newbyteorder("<")
    if little not in PROTO_DTYPES:
        raise TypeError("tensors hold float32, float64 or int32, not %s" % array.dtype)
    data = np.ascontiguousarray(array, dtype=little).tobytes()
    return alsim_pb2.Tensor(dtype=PROTO_DTYPES[little], shape=array.shape, data=data)


TensorSpec = collections.namedtuple("TensorSpec", ["shape", "dtype", "lower", "upper"])
TensorSpec.__doc__ = """Per-environment layout of a tensor: shape (tuple), numpy dtype, and the
per-element bounds as float64 arrays of that shape (+-inf where unbounded), or None when the
quantity has no bounds."""


def tensor_spec(proto):
    """The ``TensorSpec`` of an ``alsim.v1.TensorSpec``."""
    shape = tuple(int(n) for n in proto.shape)
    dtype = NUMPY_DTYPES.get(proto.dtype)
    lower = np.array(proto.lower, dtype=np.float64).reshape(shape) if proto.lower else None
    upper = np.array(proto.upper, dtype=np.float64).reshape(shape) if proto.upper else None
    return TensorSpec(shape, dtype, lower, upper)


# Observation tensor names -> the alsim.v1.Observation that returns them.
OBSERVATIONS = {
    "qpos": alsim_pb2.OBSERVATION_QPOS,
    "qvel": alsim_pb2.OBSERVATION_QVEL,
    "body_pos": alsim_pb2.OBSERVATION_BODY_POSES,
    "body_quat": alsim_pb2.OBSERVATION_BODY_POSES,
    "ctrl": alsim_pb2.OBSERVATION_ACTUATOR_STATE,
    "actuator_force": alsim_pb2.OBSERVATION_ACTUATOR_STATE,
    "contact_count": alsim_pb2.OBSERVATION_CONTACT_SUMMARY,
    "max_penetration": alsim_pb2.OBSERVATION_CONTACT_SUMMARY,
    "time": alsim_pb2.OBSERVATION_TIME,
    "deformable_vertices": alsim_pb2.OBSERVATION_DEFORMABLE_VERTICES,
}


def observation_names(observations, what="observations"):
    """``observations`` (a name or a sequence of names) as a tuple of known, distinct names."""
    if isinstance(observations, str):
        observations = (observations,)
    names = tuple(observations)
    for name in names:
        if name not in OBSERVATIONS:
            raise ValueError("%s: unknown observation %r (one of %s)"
                             % (what, name, ", ".join(sorted(OBSERVATIONS))))
    if len(set(names)) != len(names):
        raise ValueError("%s: %r names a tensor twice" % (what, names))
    return names


def observation_kinds(names):
    """The sorted ``alsim.v1.Observation`` values that return the tensors ``names``."""
    return sorted({OBSERVATIONS[name] for name in names})


# ---- arguments -----------------------------------------------------------------------------------


def solver_config(solver):
    """``solver`` (None, a name, a dict or an ``alsim.v1.SolverConfig``) as a SolverConfig."""
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


def uint64(value, what):
    """``value`` as an int in [0, 2**64); TypeError or ValueError naming ``what`` otherwise."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %r" % (what, type(value).__name__)) from None
    if not 0 <= value < 1 << 64:
        raise ValueError("%s must be in [0, 2**64), got %d" % (what, value))
    return value


def positive(value, what):
    """``value`` as an int >= 1; ValueError naming ``what`` otherwise."""
    value = operator.index(value)
    if value < 1:
        raise ValueError("%s must be >= 1, got %d" % (what, value))
    return value


def reset_seeds(seed, num_envs):
    """A reset's ``seed`` argument as one seed per environment, or None.

    None: each environment goes on drawing from its own generator. An int: environment k's
    generator restarts from ``seed + k``. A sequence: one seed per environment.
    """
    if seed is None:
        return None
    if isinstance(seed, numbers.Integral):
        base = uint64(seed, "seed")
        return [uint64(base + k, "seed + %d" % k) for k in range(num_envs)]
    if isinstance(seed, (str, bytes)):
        raise TypeError("seed must be None, an int or a sequence of ints, not %r"
                        % type(seed).__name__)
    seeds = [uint64(s, "seed[%d]" % k) for k, s in enumerate(seed)]
    if len(seeds) != num_envs:
        raise ValueError("seed: one per environment: got %d for %d" % (len(seeds), num_envs))
    return seeds


def keyframe_fields(keyframe, what="keyframe"):
    """A ``keyframe`` argument as the fields of a CreateRequest's or ResetRequest's ``oneof
    keyframe``: ``{}`` for None (no keyframe named), ``{"keyframe_name": name}`` for a str,
    ``{"keyframe_index": index}`` for an int (a numpy integer too).

    A bool (or anything else) is a TypeError, a negative index or one of 2**32 or more a
    ValueError, both naming ``what``. Whether the scene has that keyframe is the server's to say
    (AlsimError INVALID_ARGUMENT, naming the scene's keyframes); an empty name finds none there
    (reach an unnamed keyframe by its index).
    """
    if keyframe is None:
        return {}
    if isinstance(keyframe, (bool, np.bool_)):
        raise TypeError("%s must be None, a keyframe's name (str) or its index (int), not a bool"
                        % what)
    if isinstance(keyframe, str):
        return {"keyframe_name": keyframe}
    if isinstance(keyframe, numbers.Integral):
        index = operator.index(keyframe)
        if not 0 <= index < 1 << 32:
            raise ValueError("%s: a keyframe index counts from 0 in the scene's order and is "
                             "below 2**32, got %d" % (what, index))
        return {"keyframe_index": index}
    raise TypeError("%s must be None, a keyframe's name (str) or its index (int), not %r"
                    % (what, type(keyframe).__name__))


# ---- gradients through a step --------------------------------------------------------------------

# The Jacobian blocks of a gradient step (alsim.v1.Jacobians.tensors) by what asks for them
# ("positions": the state's d/dq half, left out with GradientRequest.skip_positions).
JACOBIANS = {
    "state": ("dv_dv", "dq_dv"),
    "positions": ("dv_dq", "dq_dq"),
    "controls": ("dv_du", "dq_du"),
    "parameters": ("dv_dp", "dq_dp"),
}


def gradient_request(gradients, num_envs):
    """``step``'s ``gradients`` argument as ``(alsim.v1.GradientRequest, envs)``, or ``(None,
    None)`` for none; ``envs`` is a bool array ``[num_envs]`` of the environments that ask.

    ``True``: the state and controls blocks for every environment. A dict with any of the keys
    ``state`` (bool), ``positions`` (bool, default True: with ``state``, the d/dq blocks too;
    False leaves out that costly half), ``controls`` (bool), ``parameters`` (a sequence of
    names, e.g. ``["body_mass:torso", "geom_friction:floor"]``) and ``envs`` (a bool mask
    ``[num_envs]`` or a sequence of env indices; default every one). An
    ``alsim.v1.GradientRequest`` as it is (its ``instance_mask`` is replaced by ``envs``: every
    environment). Anything else is a TypeError, an unknown key, an index out of range or a mask
    of another length a ValueError, before any call.
    """
    if gradients is None or gradients is False:
        return None, None
    envs = np.ones(num_envs, dtype=bool)
    if gradients is True:
        return alsim_pb2.GradientRequest(state=True, controls=True), envs
    if isinstance(gradients, alsim_pb2.GradientRequest):
        request = alsim_pb2.GradientRequest()
        request.CopyFrom(gradients)
        del request.instance_mask[:]
        return request, envs
    if not isinstance(gradients, dict):
        raise TypeError("gradients must be None, True, a dict (state, controls, parameters, envs) "
                        "or an alsim.v1.GradientRequest, not %r" % type(gradients).__name__)
    unknown = sorted(set(gradients) - {"state", "positions", "controls", "parameters", "envs"})
    if unknown:
        raise ValueError("gradients: unknown keys %s; the keys are state, positions, controls, "
                         "parameters and envs" % unknown)
    parameters = gradients.get("parameters", ())
    if isinstance(parameters, str):
        parameters = (parameters,)
    request = alsim_pb2.GradientRequest(state=bool(gradients.get("state", False)),
                                        skip_positions=not gradients.get("positions", True),
                                        controls=bool(gradients.get("controls", False)),
                                        parameters=[str(name) for name in parameters])
    chosen = gradients.get("envs")
    if chosen is not None:
        chosen = np.asarray(chosen)
        if chosen.dtype == np.bool_:
            if chosen.shape != (num_envs,):
                raise ValueError("gradients['envs']: a mask needs one flag per environment "
                                 "(%d), got shape %s" % (num_envs, chosen.shape))
            envs = chosen.copy()
        else:
            indices = chosen.astype(np.int64).reshape(-1)
            if indices.size and (indices.min() < 0 or indices.max() >= num_envs):
                raise ValueError("gradients['envs']: env indices must be in [0, %d)" % num_envs)
            envs = np.zeros(num_envs, dtype=bool)
            envs[indices] = True
    return request, envs


def new_gradients(request, count, nv, nu):
    """The Jacobians of ``count`` environments before any reply: NaN arrays of every asked block
    (``[count, nv, nv]``, ``[count, nv, nu]``, ``[count, nv, np]``), ``computed`` (False),
    ``residual`` (0), ``constraint_changes`` (0) and ``parameters`` (the request's names)."""
    parameters = tuple(request.parameters)
    widths = {"state": nv, "positions": nv, "controls": nu, "parameters": len(parameters)}
    asked = {"state": request.state, "positions": request.state and not request.skip_positions,
             "controls": request.controls, "parameters": bool(parameters)}
    out = {}
    for what, names in JACOBIANS.items():
        if asked[what]:
            for name in names:
                out[name] = np.full((count, nv, widths[what]), np.nan)
    out["computed"] = np.zeros(count, dtype=bool)
    out["residual"] = np.zeros(count)
    out["constraint_changes"] = np.zeros(count, dtype=np.int64)
    out["parameters"] = parameters
    return out


def fill_gradients(out, rows, jacobians):
    """Writes an ``alsim.v1.Jacobians`` (one reply's, its instances in ``rows`` order) into rows
    ``rows`` of ``out`` (made by ``new_gradients``)."""
    for name, tensor in jacobians.tensors.items():
        if name in out:
            out[name][rows] = tensor_to_numpy(tensor)
    out["computed"][rows] = np.array(jacobians.computed, dtype=bool)
    out["residual"][rows] = np.array(jacobians.residual, dtype=np.float64)
    out["constraint_changes"][rows] = np.array(jacobians.constraint_changes, dtype=np.int64)
    return out


# ---- solver diagnostics --------------------------------------------------------------------------

# The per-environment arrays of an ``alsim.v1.SolverDiagnostics``: name -> (field, dtype).
DIAGNOSTICS = {
    "contacts": ("contacts", np.int64),
    "islands": ("islands", np.int64),
    "iterations": ("max_iterations", np.int64),
    "mean_iterations": ("mean_iterations", np.float64),
    "primal_residual": ("primal_residual", np.float64),
    "dual_residual": ("dual_residual", np.float64),
    "contact_residual": ("contact_residual", np.float64),
    "solve_seconds": ("solve_seconds", np.float64),
    "split": ("split", np.bool_),
}


def new_diagnostics(count):
    """Zeroed diagnostics of ``count`` environments: ``{name: array [count]}`` for every name of
    ``DIAGNOSTICS``, plus ``solver_figures``, a dict of the solver's own figures by name."""
    out = {name: np.zeros(count, dtype=dtype) for name, (_, dtype) in DIAGNOSTICS.items()}
    out["solver_figures"] = {}
    return out


def fill_diagnostics(out, rows, messages):
    """Writes the ``alsim.v1.SolverDiagnostics`` ``messages`` into rows ``rows`` of ``out``
    (made by ``new_diagnostics``); a figure first seen here gets zeros in the other rows."""
    count = len(out["contacts"])
    for row, message in zip(rows, messages):
        for name, (field, _) in DIAGNOSTICS.items():
            out[name][row] = getattr(message, field)
        for name, value in message.figures.items():
            out["solver_figures"].setdefault(name, np.zeros(count))[row] = value
    return out


# ---- servers -------------------------------------------------------------------------------------


def split_host_port(address):
    """``(host, port)`` of ``host:port`` or ``[v6]:port`` (strings; the port may be empty)."""
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
    host, port = split_host_port(address)
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


def call_all(calls, timeout):
    """Makes the unary calls ``[(address, method, request)]`` at once; their replies, in order.

    Every call is waited for; the first failure is raised as an AlsimError naming its server.
    One call is made directly (a future costs a thread start per call).
    """
    if len(calls) == 1:
        address, method, request = calls[0]
        try:
            return [method(request, timeout=timeout)]
        except grpc.RpcError as error:
            raise rpc_error(error, address) from error
    futures = [(address, method.future(request, timeout=timeout))
               for address, method, request in calls]
    results, failure = [], None
    for address, future in futures:
        try:
            results.append(future.result())
        except grpc.RpcError as error:
            failure = failure or rpc_error(error, address)
    if failure is not None:
        raise failure
    return results


class Shard:
    """One server's part of the environments: the contiguous block [offset, offset + count)."""

    def __init__(self, address, channel, offset, count):
        self.address = address
        self.channel = channel
        self.stub = alsim_pb2_grpc.SimulatorStub(channel)
        self.offset = offset
        self.count = count
        self.group_id = 0
        self.instance_ids = ()

    def selection(self, local):
        """The InstanceSelection of local indices ``local`` (the group when it is all, in order)."""
        if local.size == self.count and np.array_equal(local, np.arange(self.count)):
            return alsim_pb2.InstanceSelection(group_id=self.group_id)
        return alsim_pb2.InstanceSelection(instance_ids=[self.instance_ids[i] for i in local])


# ---- the batch -----------------------------------------------------------------------------------


class Batch:
    """``num_envs`` instances of one scene on one or several servers (see the module's text).

    Args:
        address, scene, num_envs, seed, solver, substeps, max_episode_steps, keyframe, timeout,
            max_message_bytes: as ``VectorEnv`` and ``GymVectorEnv`` take them.
        settings: ``alsim.channel``'s connection keyword arguments (tls, tls_ca, ..., token_file).

    The Creates run at once; if any fails, the groups that were created are destroyed, the
    channels closed and the first failure raised naming its server.
    """

    def __init__(self, address, scene, num_envs, seed=0, solver=None, substeps=1,
                 max_episode_steps=0, keyframe=None, timeout=None, max_message_bytes=64 << 20,
                 settings=None):
        self.shards = []
        self.closed = True
        num_envs = positive(num_envs, "num_envs")
        self.substeps = positive(substeps, "substeps")
        max_episode_steps = operator.index(max_episode_steps or 0)
        if not 0 <= max_episode_steps < 1 << 32:
            raise ValueError("max_episode_steps must be in [0, 2**32), got %d" % max_episode_steps)
        self.seed = uint64(seed, "seed")
        uint64(self.seed + num_envs - 1, "seed + num_envs - 1")
        keyframe_request = keyframe_fields(keyframe)
        self.timeout = timeout
        source = scenes.scene_source(scene)  # reads the files before any connection is made
        config = solver_config(solver)

        def create_request(offset, count):
            request = alsim_pb2.CreateRequest(scene=source, count=count, seed=self.seed + offset,
                                              max_episode_steps=max_episode_steps,
                                              **keyframe_request)
            if config is not None:
                request.solver.CopyFrom(config)
            return request

        servers = resolve_servers(address)
        if len(servers) > num_envs:
            raise ValueError("num_envs (%d) is fewer than the servers (%d: %s)"
                             % (num_envs, len(servers), ", ".join(servers)))
        settings = dict(settings or {})
        if (len(servers) > 1 and not isinstance(address, (list, tuple))
                and settings.get("tls_server_name") is None
                and connection.connection_settings(**settings)["tls"]):
            # The servers are reached by IP: their certificates are checked against the name.
            settings["tls_server_name"] = split_host_port(os.fspath(address))[0]
        base, extra = divmod(num_envs, len(servers))
        replies = []
        try:
            for index, server in enumerate(servers):
                offset = self.shards[-1].offset + self.shards[-1].count if self.shards else 0
                self.shards.append(Shard(server, connection.channel(
                    server, max_message_bytes=max_message_bytes, **settings), offset,
                    base + (index < extra)))
            futures = [(shard.address, shard.stub.Create.future(
                create_request(shard.offset, shard.count), timeout=timeout))
                for shard in self.shards]
            failure = None
            for (server, future), shard in zip(futures, self.shards):  # wait for all
                try:
                    reply = future.result()
                except grpc.RpcError as error:
                    failure = failure or rpc_error(error, server)
                    continue
                shard.group_id = reply.group_id
                shard.instance_ids = tuple(reply.instance_ids)
                replies.append(reply)
            if failure is not None:
                raise failure
        except BaseException:
            self.close()
            raise
        self.closed = False

        self.address = address
        self.scene = scene if isinstance(scene, str) else os.fspath(scene)
        self.keyframe = next(iter(keyframe_request.values()), None)  # a str, an int or None
        self.num_envs = num_envs
        self.servers = tuple(shard.address for shard in self.shards)
        self.env_servers = tuple(shard.address for shard in self.shards
                                 for _ in range(shard.count))
        self.instance_ids = tuple(i for shard in self.shards for i in shard.instance_ids)
        self.group_ids = tuple(shard.group_id for shard in self.shards)
        # The shard (server) of each environment.
        self.shard_of = np.repeat(np.arange(len(self.shards)),
                                  [shard.count for shard in self.shards])
        self.warnings = [w for r in replies for w in r.warnings]
        self.specs = replies[0].specs

    def close(self):
        """Destroys every group (all at once; unreachable servers are no error) and closes the
        channels. Idempotent."""
        self.closed = True
        shards, self.shards = self.shards, []
        futures = []
        for shard in shards:
            if not shard.group_id:
                continue
            try:
                futures.append(shard.stub.Destroy.future(alsim_pb2.DestroyRequest(
                    instances=alsim_pb2.InstanceSelection(group_id=shard.group_id)),
                    timeout=self.timeout if self.timeout is not None else 10))
            except ValueError:  # the channel is closed already (interpreter shutdown)
                pass
        for future in futures:
            try:
                future.result()
            except grpc.RpcError:
                pass
        for shard in shards:
            shard.channel.close()

    def requests(self, envs, make_request):
        """One request per server that holds some of the environments ``envs`` (ascending or in
        any order): ``[(shard, rows, request)]``, ``rows`` the positions in ``envs`` of that
        server's environments, ``make_request(shard, rows, selection)`` the request."""
        parts = []
        for index, shard in enumerate(self.shards):
            if len(self.shards) == 1:
                rows = np.arange(envs.size)
            else:
                rows = np.flatnonzero(self.shard_of[envs] == index)
            if rows.size:
                parts.append((shard, rows, make_request(
                    shard, rows, shard.selection(envs[rows] - shard.offset))))
        return parts

    def call(self, method, envs, make_request):
        """Calls ``method`` (a Simulator method name) for environments ``envs`` on every server
        that holds some of them, all at once (see ``requests``). Returns ``[(rows, reply)]``."""
        parts = self.requests(envs, make_request)
        replies = call_all([(shard.address, getattr(shard.stub, method), request)
                            for shard, _, request in parts], self.timeout)
        return [(rows, reply) for (_, rows, _), reply in zip(parts, replies)]

    def reset(self, envs, seeds, noise, kinds, keyframe=None):
        """Reset calls for environments ``envs``: ``seeds`` None or one per environment of the
        batch (indexed by env), ``noise`` the reset noise, ``kinds`` the observations to return,
        ``keyframe`` the fields of ``keyframe_fields`` (None or ``{}``: the group's own, Create's
        keyframe). Returns ``[(rows, ResetResponse)]``."""
        keyframe = keyframe or {}
        return self.call("Reset", envs, lambda shard, rows, selection: alsim_pb2.ResetRequest(
            instances=selection, noise=noise, observations=kinds,
            seeds=[] if seeds is None else [seeds[k] for k in envs[rows]], **keyframe))

    def instance(self, index):
        """Environment ``index``'s (shard, instance id)."""
        try:
            index = operator.index(index)
            return self.shards[self.shard_of[index]], self.instance_ids[index]
        except IndexError:
            raise IndexError("environment index %r out of range for %d environments"
                             % (index, self.num_envs)) from None

    def get_state(self, index):
        shard, instance = self.instance(index)
        return call_all([(shard.address, shard.stub.GetState, alsim_pb2.GetStateRequest(
            instance_id=instance))], self.timeout)[0].state

    def set_state(self, index, state):
        shard, instance = self.instance(index)
        call_all([(shard.address, shard.stub.SetState, alsim_pb2.SetStateRequest(
            instance_id=instance, state=bytes(state)))], self.timeout)

    def get_scene(self, index):
        shard, instance = self.instance(index)
        return call_all([(shard.address, shard.stub.GetScene, alsim_pb2.GetSceneRequest(
            instance_id=instance))], self.timeout)[0]

    def env_indices(self, envs, what):
        """``envs`` (None for all, an int, or a sequence of distinct env indices) as an int64
        array, in the order given."""
        if envs is None:
            return np.arange(self.num_envs)
        ids = np.atleast_1d(np.asarray(envs))
        if ids.ndim != 1 or ids.size == 0 or ids.dtype.kind not in "iu":
            raise ValueError("%s must be an env index or a non-empty 1-D sequence of them, not "
                             "%s %s" % (what, ids.dtype, ids.shape))
        if ids.min() < 0 or ids.max() >= self.num_envs:
            raise ValueError("%s must be in [0, %d), got %s" % (what, self.num_envs, ids))
        if np.unique(ids).size != ids.size:
            raise ValueError("%s names an environment twice: %s" % (what, ids))
        return ids.astype(np.int64)


class BatchEnv:
    """What ``VectorEnv`` and ``GymVectorEnv`` have in common, over a ``Batch``.

    Attributes (set from the Create): ``num_envs``, ``nq``, ``nv``, ``nu``, ``nbody`` (bodies,
    the world body 0 included), ``body_names``, ``action_names``, ``timestep`` (one simulation
    step, s), ``dt`` (``timestep * substeps``: seconds per ``step``), ``instance_ids``,
    ``group_ids`` (one per server), ``servers``, ``env_servers`` (each environment's server),
    ``keyframe`` (the keyframe the environments were created at and return to: its name, its
    index, or None for the scene's initial state),
    ``warnings`` (the importer's, one line each, of every server), ``specs`` (the raw
    ``alsim.v1.Specs``), ``closed``; ``batch``, the ``Batch`` itself.
    """

    closed = True  # until the instances exist

    def __init__(self, batch):
        self.batch = batch
        self.closed = False
        self.address = batch.address
        self.scene_name = batch.scene
        self.keyframe = batch.keyframe
        self.num_envs = batch.num_envs
        self.servers = batch.servers
        self.env_servers = batch.env_servers
        self.instance_ids = batch.instance_ids
        self.group_ids = batch.group_ids
        self.warnings = batch.warnings
        specs = batch.specs
        self.specs = specs
        self.nq, self.nv, self.nu, self.nbody = specs.nq, specs.nv, specs.nu, specs.nbody
        self.body_names = list(specs.body_names)
        self.action_names = list(specs.action.element_names)
        self.timestep = specs.timestep
        self.dt = specs.timestep * batch.substeps

    # ---- lifecycle ----

    def close(self, **kwargs):
        """Destroys the instances on every server and closes the channels. Idempotent.

        Servers that cannot be reached (or have lost the instances) are not an error here.
        """
        if self.closed:
            return
        self.closed = True
        batch = getattr(self, "batch", None)
        if batch is not None:
            batch.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    @property
    def unwrapped(self):
        """This environment (wrappers reach the base environment through it)."""
        return self

    def __repr__(self):
        return "%s(%s, %r, num_envs=%d%s)" % (
            type(self).__name__, ", ".join(getattr(self, "servers", ())),
            getattr(self, "scene_name", None), getattr(self, "num_envs", 0),
            ", closed" if self.closed else "")

    def check_open(self, what):
        """Raises ValueError naming ``what`` when the environment is closed."""
        if self.closed:
            raise ValueError("%s: the %s is closed" % (what, type(self).__name__))

    # ---- the scene and the stream ----

    def scene(self, env=0):
        """What a viewer draws of the scene (GetScene of environment ``env``'s instance), as numpy
        arrays: an ``alsim.Scene`` with the bodies, the geoms and the meshes. Every
        environment shares the scene; ``env`` picks the server that answers."""
        self.check_open("scene")
        return scenes.Scene(self.batch.get_scene(env))

    def stream(self, observations=("qpos",), rate_hz=30.0, diagnostics=False, contacts=False,
               envs=None):
        """Frames of environments' state pushed by the server (StreamStates) at up to
        ``rate_hz``: an iterator of ``alsim.Frame``, to close (or use as a context manager).

        Args:
            observations: the observation tensors of each frame (names as ``VectorEnv``'s).
            rate_hz: frames per second at most, in [0.001, 1000].
            diagnostics: each frame also carries every environment's step count, status and the
                solver's report of its last step (``Frame.steps``, ``status``, ``diagnostics``).
            contacts: each frame also carries every environment's contact points (``Frame.
                contacts``; at most 1000 per environment); implies ``diagnostics``.
            envs: the environments to show (env indices), all of them on one server; None: all
                (with several servers, name one server's environments).

        See ``alsim.StateStream`` for the frames and the end of a stream.
        """
        from alsim import streams  # here: alsim.streams imports this module

        self.check_open("stream")
        return streams.StateStream(self.batch, observations, rate_hz, diagnostics, contacts,
                                   envs)
