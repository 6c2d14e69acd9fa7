"""Environments' state pushed by the server: ``StateStream`` (``env.stream(...)``) and ``Frame``.

    with env.stream(observations=("qpos", "body_pos"), rate_hz=60, contacts=True) as frames:
        for frame in frames:                        # blocks until the next frame
            draw(frame.observations["body_pos"])    # [n, nbody, 3]
            for env, points in zip(frame.envs, frame.contacts):
                draw_contacts(points.position, points.normal)   # [k, 3] each

A stream runs over the StreamStates RPC of the server that holds the environments: the server
sends a frame every ``1 / rate_hz`` seconds (the first at once) whether or not the environments
moved; a frame due while the previous one is still unread, or while a step holds an instance, is
skipped and counted in the next frame's ``dropped``. Frames never wait for steps, so a frame
shows the state after some whole number of steps (``Frame.steps`` says how many, with
``diagnostics``).
"""

import collections
import math

import grpc
import numpy as np

from alsim import core
from alsim.v1 import alsim_pb2

__all__ = ["StateStream", "Frame", "Contacts"]


Contacts = collections.namedtuple("Contacts", ["position", "normal", "distance"])
Contacts.__doc__ = """One environment's contact points in a ``Frame``, world frame: ``position``
float64 ``[k, 3]`` (m), ``normal`` float64 ``[k, 3]`` (unit, from the first geom toward the
second) and ``distance`` float64 ``[k]`` (m, negative when penetrating). The server sends at most
1000 per environment."""


class Frame:
    """One frame of a ``StateStream``.

    Attributes:
        sequence: frames sent on this stream so far, from 1.
        dropped: frames skipped since the previous one (a slow reader, or a step in progress).
        server_time: seconds since the stream started, on the server's clock.
        envs: int64 ``[n]``, the environments shown, in the stream's order.
        observations: ``{name: array [n, ...]}``, the tensors asked for.
        steps: uint64 ``[n]``, steps taken since Create (``diagnostics`` or ``contacts``
            streams; None otherwise).
        status: int32 ``[n]``, ``alsim.v1.InstanceStatus`` (OK 1, DIVERGED 2), or None.
        diverged: bool ``[n]`` (status DIVERGED), or None.
        diagnostics: the solver's report of each environment's last step (zeros before its
            first): ``{name: array [n]}`` with the keys of ``VectorEnv.step``'s info
            (``contacts``, ``islands``, ``iterations``, ``mean_iterations``,
            ``primal_residual``, ``dual_residual``, ``contact_residual``, ``solve_seconds``,
            ``split``, ``solver_figures``), or None.
        contacts: a list of ``n`` ``Contacts`` (``contacts`` streams), or None.
    """

    def __init__(self, message, envs, names):
        self.sequence = message.sequence
        self.dropped = message.dropped
        self.server_time = message.server_time
        self.envs = envs
        self.observations = {name: core.tensor_to_numpy(message.observations[name])
                             for name in names if name in message.observations}
        self.steps = self.status = self.diverged = self.diagnostics = self.contacts = None
        details = message.details
        if len(details):
            count = len(details)
            self.steps = np.array([d.steps for d in details], dtype=np.uint64)
            self.status = np.array([d.status for d in details], dtype=np.int32)
            self.diverged = self.status == alsim_pb2.INSTANCE_STATUS_DIVERGED
            self.diagnostics = core.fill_diagnostics(core.new_diagnostics(count), range(count),
                                                     [d.diagnostics for d in details])
            if any(d.HasField("contacts") for d in details):
                self.contacts = [Contacts(
                    np.array(d.contacts.position, dtype=np.float64).reshape(-1, 3),
                    np.array(d.contacts.normal, dtype=np.float64).reshape(-1, 3),
                    np.array(d.contacts.distance, dtype=np.float64)) for d in details]

    def __repr__(self):
        return "Frame(sequence=%d, envs=%s, observations=%s%s)" % (
            self.sequence, self.envs.tolist(), sorted(self.observations),
            "" if self.diagnostics is None else ", diagnostics"
            + ("" if self.contacts is None else ", contacts"))


class StateStream:
    """An iterator of ``Frame``: what ``VectorEnv.stream`` and ``GymVectorEnv.stream`` return.

    ``next()`` waits for the server's next frame. The stream ends (StopIteration) when ``close``
    is called (also by leaving its ``with`` block), when the environment is closed, or when the
    server ends it without an error; a failure (the instances destroyed by someone else:
    NOT_FOUND; the server going away: UNAVAILABLE) raises ``AlsimError`` naming the server.
    Stepping the environments meanwhile is fine: the stream has its own call on the channel.
    Arguments: see ``VectorEnv.stream``.
    """

    def __init__(self, batch, observations, rate_hz, diagnostics, contacts, envs):
        self._call = None
        names = core.observation_names(observations, "stream observations")
        if not names:
            raise ValueError("stream observations: name at least one observation tensor")
        rate_hz = float(rate_hz)
        if not (math.isfinite(rate_hz) and 1e-3 <= rate_hz <= 1000):
            raise ValueError("rate_hz must be in [0.001, 1000], got %r" % rate_hz)
        ids = batch.env_indices(envs, "envs")
        shards = np.unique(batch.shard_of[ids])
        if shards.size > 1:
            raise ValueError("stream: the environments are on %d servers (%s); a stream shows "
                             "one server's environments: pass envs= of one server (see "
                             "env_servers)" % (shards.size, ", ".join(
                                 batch.shards[s].address for s in shards)))
        shard = batch.shards[shards[0]]
        self._names = names
        self._batch = batch
        self._address = shard.address
        self._env_of = {batch.instance_ids[k]: k for k in ids.tolist()}
        request = alsim_pb2.StreamStatesRequest(
            instances=shard.selection(ids - shard.offset), rate_hz=rate_hz,
            observations=core.observation_kinds(names),
            include_diagnostics=bool(diagnostics or contacts), include_contacts=bool(contacts))
        self._closed = False
        self._call = shard.stub.StreamStates(request)

    def __iter__(self):
        return self

    def __next__(self):
        if self._closed or self._batch.closed:
            self.close()
            raise StopIteration
        try:
            message = next(self._call)
        except StopIteration:
            self._closed = True
            raise
        except grpc.RpcError as error:
            if self._closed or self._batch.closed:  # close(), or the environment's close()
                self.close()
                raise StopIteration from None
            self.close()
            raise core.rpc_error(error, self._address) from error
        envs = np.array([self._env_of.get(i, -1) for i in message.instance_ids], dtype=np.int64)
        return Frame(message, envs, self._names)

    def close(self):
        """Ends the stream (cancels the call). Idempotent."""
        if self._call is not None and not self._closed:
            self._closed = True
            self._call.cancel()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    def __del__(self):
        call = getattr(self, "_call", None)
        if call is not None and not getattr(self, "_closed", True):
            call.cancel()
