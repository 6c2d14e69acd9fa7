"""Gymnasium's vector API over one or several alsim servers: ``GymVectorEnv``.

``GymVectorEnv`` speaks the API that RL code is written against, Gymnasium 1.x's
``gymnasium.vector.VectorEnv``: ``reset(seed, options) -> (obs, info)``, ``step(actions) -> (obs,
reward, terminated, truncated, info)``, ``single_observation_space``, ``single_action_space``,
``observation_space``, ``action_space``, ``num_envs``, ``render_mode``, ``close()`` and
``metadata["autoreset_mode"]``. When gymnasium (1.1 or later) imports, it *is* a
``gymnasium.vector.VectorEnv`` (so Gymnasium's vector wrappers take it), its spaces are
``gymnasium.spaces.Box`` and its autoreset mode a ``gymnasium.vector.AutoresetMode``; without
gymnasium, the same API stands on its own with alsim's ``Box`` and ``AutoresetMode``
(``alsim/gymnasium_api.py``). ``gymnasium.make_vec("alsim/Humanoid-v0", num_envs=N)`` builds one
too (``alsim/registration.py``).

A worked example: a humanoid (MuJoCo's humanoid.xml, built into the server as ``"humanoid"``)
earns its torso height as reward and its episode ends when the torso falls below 1 m::

    import numpy as np
    import alsim

    TORSO_Z = 2                                    # obs = [qpos | qvel]; qpos[0:3] is the torso

    def reward_fn(obs, actions, next_obs):       # [B, D], [B, nu], [B, D] -> [B]
        return next_obs[:, TORSO_Z]                # the free joint's z: the torso's height (m)

    def termination_fn(next_obs):                  # [B, D] -> bool [B]
        return next_obs[:, TORSO_Z] < 1.0

    env = alsim.GymVectorEnv("127.0.0.1:50051", "humanoid", num_envs=64, seed=0,
                             reward_fn=reward_fn, termination_fn=termination_fn,
                             max_episode_steps=1000, reset_noise=0.01)
    obs, info = env.reset(seed=42)                 # float64 [64, nq + nv]
    for _ in range(10000):
        actions = env.action_space.sample()        # [64, nu]
        obs, reward, terminated, truncated, info = env.step(actions)
    env.close()

Observations are one float64 array ``[num_envs, D]``: the chosen observation tensors (default
``qpos`` then ``qvel``), each flattened per environment, concatenated in the order given.
``env.obs_slices[name]`` is the slice of the columns of each (``obs[:, env.obs_slices["qvel"]]``);
``body_pos`` is ``nbody x 3`` row-major (body b's position at columns ``3 b .. 3 b + 2`` of its
slice), ``body_quat`` ``nbody x 4`` (w, x, y, z).

Several servers (``address`` a list, or one DNS name with several addresses as a Kubernetes
headless Service gives): ``num_envs`` is spread over them in contiguous blocks, every call goes
to all of them at once, and the batch comes back in env order. Environment k is seeded ``seed +
k`` whichever server holds it, so the results do not depend on the number of servers.

Async stepping, as EnvPool does: ``step_async(actions, env_ids)`` sends a batch over the
``StepStream`` RPC and returns at once; ``step_wait()`` returns the oldest batch in flight. A
learner keeps several batches (disjoint sets of environments) in flight to overlap its policy
with the simulation.
"""

import collections
import queue

import grpc
import numpy as np

from alsim import core, gymnasium_api
from alsim.gymnasium_api import AutoresetMode, Box
from alsim.v1 import alsim_pb2

__all__ = ["AutoresetMode", "Box", "GymVectorEnv"]


class _StepStream:
    """One server's StepStream: requests go in through a queue, replies come back in order."""

    def __init__(self, stub):
        self._requests = queue.SimpleQueue()
        self._replies = stub.StepStream(iter(self._requests.get, None))

    def send(self, request):
        self._requests.put(request)

    def receive(self):
        return next(self._replies)

    def close(self):
        self._requests.put(None)
        self._replies.cancel()


class GymVectorEnv(core.BatchEnv, gymnasium_api.VectorEnv):
    """``num_envs`` simulations of one scene behind Gymnasium's vector API.

    Args:
        address: the server's ``host:port`` (or ``unix:PATH``); a list of them; or one DNS name
            that resolves to several servers (see ``resolve_servers``). ``num_envs`` is spread
            over the servers in contiguous blocks (the first ``num_envs % S`` get one more), one
            channel and one Create each.
        scene: a local MJCF/URDF file or a built-in scene name (as ``VectorEnv``).
        num_envs: the number of environments (at least the number of servers).
        reward_fn: ``reward_fn(obs, actions, next_obs) -> [B]`` float rewards, vectorized over a
            batch of B environments: ``obs`` the observations the step started from ``[B, D]``,
            ``actions`` the actions applied ``[B, nu]`` (float64), ``next_obs`` the observations
            the step ended in ``[B, D]`` (before any autoreset). None: every reward is 0. It is
            called only with the environments that stepped (an env reset by NEXT_STEP autoreset is
            not passed and gets reward 0).
        termination_fn: ``termination_fn(next_obs) -> bool [B]``: which episodes ended (fell,
            reached a goal), from the observations the step ended in. None: none terminate. An
            environment whose simulation diverged (non-finite state) is terminated too, with
            ``info["diverged"]`` set.
        observations: the names of the tensors concatenated into ``obs``, in the order given
            (default ``qpos`` then ``qvel``), each at most once, from ``qpos``, ``qvel``,
            ``body_pos``, ``body_quat``, ``ctrl``, ``actuator_force``, ``contact_count``,
            ``max_penetration``, ``time``. See ``obs_slices``.
        max_episode_steps: the per-environment episode limit in ``step`` calls, enforced by the
            server (``CreateRequest.max_episode_steps``): the call that completes that many
            steps of an episode returns ``truncated`` True. None or 0: no limit.
        autoreset_mode: ``"next_step"`` (default), ``"same_step"`` or ``"disabled"`` (or an
            ``AutoresetMode``); see ``step``.
        seed: environment k's generator is seeded ``seed + k`` at creation (reset noise is drawn
            from it), whatever server holds it.
        reset_noise: every reset (``reset`` and autoresets) adds uniform noise in ``[-reset_noise,
            reset_noise]`` to hinge and slide positions and to every velocity; 0 (default): the
            exact start state (``keyframe``'s, else the scene's initial state).
        keyframe: the scene's keyframe (MJCF ``<key>``) every episode starts from: at creation,
            at ``reset`` without ``options["keyframe"]`` and at every autoreset (its time, qpos,
            qvel and ctrl, as MuJoCo's ``mj_resetDataKeyframe`` sets them, ``reset_noise`` on
            top). A str names it, an int is its index from 0 in the scene's order (an unnamed
            keyframe is reached only so); None (default): the scene's initial state. A bool or
            another type is a TypeError, a negative index a ValueError, before any call; one the
            scene lacks makes the server refuse the creation (``AlsimError`` INVALID_ARGUMENT,
            its message listing the scene's keyframes).
        substeps: simulation steps per ``step`` call (the actions are held through them).
        solver: the solver, as ``VectorEnv``'s ``solver``.
        timeout: seconds allowed per call (None: no deadline).
        max_message_bytes, tls, tls_ca, tls_cert, tls_key, tls_server_name, token, token_file:
            the connection, as ``alsim.channel`` (the same settings for every server). When a DNS
            name expands to several servers and TLS is on, ``tls_server_name`` defaults to the
            name so that the certificates are checked against it.
        render_mode: None, the only mode: alsim renders no frames here (``scene()`` and
            ``stream()`` give what a viewer draws; ``alsim view`` draws it in a browser).

    Attributes: ``num_envs``; ``single_observation_space`` (Box ``(D,)`` float64, the tensors'
    bounds where the scene has them, else infinite), ``single_action_space`` (Box ``(nu,)``
    float64 within the actuators' control ranges, infinite where unlimited),
    ``observation_space`` / ``action_space`` (the batched Boxes ``(num_envs, D)`` and
    ``(num_envs, nu)``); ``render_mode`` (None); ``metadata`` (``{"autoreset_mode":
    AutoresetMode, "render_modes": []}``); ``spec`` (None, or the ``EnvSpec`` that
    ``gymnasium.make_vec`` made it from); ``obs_slices`` (``{name: slice}`` of ``obs``'s
    columns); ``observation_names``; ``keyframe`` (the ``keyframe`` argument: a name, an index or
    None); and those of every batch (``alsim.core.BatchEnv``: ``nq``, ``nv``, ``nu``, ``nbody``,
    ``body_names``, ``action_names``, ``dt`` (seconds per ``step``), ``servers`` (the server
    addresses), ``env_servers`` (the address of each environment's server), ``instance_ids``,
    ``closed``, ...).

    One thread at a time may use an environment (the class holds no locks).

    Errors: a failing server's call raises ``AlsimError`` whose ``address`` names that server.
    A batch that failed on one server may have stepped on the others: ``reset()`` before going on.
    Use it as a context manager, or call ``close()``, to destroy the instances.
    """

    STATUS_DIVERGED = alsim_pb2.INSTANCE_STATUS_DIVERGED
    render_mode = None
    spec = None

    def __init__(self, address, scene, num_envs, reward_fn=None, termination_fn=None,
                 observations=("qpos", "qvel"), max_episode_steps=None,
                 autoreset_mode="next_step", seed=0, reset_noise=0.0, substeps=1, solver=None,
                 timeout=None, max_message_bytes=64 << 20, tls=None, tls_ca=None, tls_cert=None,
                 tls_key=None, tls_server_name=None, token=None, token_file=None,
                 render_mode=None, keyframe=None):
        self._streams = {}  # shard index -> _StepStream, opened by the first step_async
        self._pending = collections.deque()  # step_async batches, oldest first
        if render_mode is not None:
            raise ValueError("render_mode must be None: alsim renders no frames here (scene() "
                             "and stream() give what a viewer draws), not %r" % (render_mode,))
        for name, fn in (("reward_fn", reward_fn), ("termination_fn", termination_fn)):
            if fn is not None and not callable(fn):
                raise TypeError("%s must be callable or None" % name)
        observations = core.observation_names(observations)
        if not observations:
            raise ValueError("observations: name at least one observation tensor")
        self._reset_noise = float(reset_noise)
        if not (np.isfinite(self._reset_noise) and self._reset_noise >= 0):
            raise ValueError("reset_noise must be finite and >= 0, got %r" % (reset_noise,))
        mode = gymnasium_api.autoreset_mode(autoreset_mode)
        self._mode = mode
        self._reward_fn = reward_fn
        self._termination_fn = termination_fn
        self._kinds = core.observation_kinds(observations)
        self.observation_names = observations
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        core.BatchEnv.__init__(self, core.Batch(
            address, scene, num_envs, seed=seed, solver=solver, substeps=substeps,
            max_episode_steps=max_episode_steps, keyframe=keyframe, timeout=timeout,
            max_message_bytes=max_message_bytes,
            settings=dict(tls=tls, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                          tls_server_name=tls_server_name, token=token, token_file=token_file)))
        num_envs = self.num_envs
        self._in_flight = np.zeros(num_envs, dtype=bool)

        every = {s.name: core.tensor_spec(s) for s in self.specs.observations}
        self.obs_slices, lows, highs, column = {}, [], [], 0
        for name in observations:
            shape, _, lower, upper = every[name]
            size = int(np.prod(shape))
            self.obs_slices[name] = slice(column, column + size)
            column += size
            lows.append(np.full(size, -np.inf) if lower is None else lower.reshape(-1))
            highs.append(np.full(size, np.inf) if upper is None else upper.reshape(-1))
        self._dim = column
        low, high = np.concatenate(lows), np.concatenate(highs)
        self.single_observation_space = gymnasium_api.box(low, high, np.float64)
        self.observation_space = gymnasium_api.box(
            np.tile(low, (num_envs, 1)), np.tile(high, (num_envs, 1)), np.float64)
        action = core.tensor_spec(self.specs.action)
        a_low = np.full(self.nu, -np.inf) if action.lower is None else action.lower.reshape(-1)
        a_high = np.full(self.nu, np.inf) if action.upper is None else action.upper.reshape(-1)
        self.single_action_space = gymnasium_api.box(a_low, a_high, np.float64)
        self.action_space = gymnasium_api.box(
            np.tile(a_low, (num_envs, 1)), np.tile(a_high, (num_envs, 1)), np.float64)

        self._obs = None  # [num_envs, D], the last observations returned (None before reset)
        self._needs_reset = np.zeros(num_envs, dtype=bool)  # NEXT_STEP: done in the last step

    # ---- lifecycle ----

    def close(self, **kwargs):
        """Destroys the instances on every server and closes the channels. Idempotent.

        Servers that cannot be reached (or have lost the instances) are not an error here.
        """
        if self.closed:
            return
        self._close_streams()
        core.BatchEnv.close(self)

    def render(self):
        """None: ``render_mode`` is None (see ``scene()`` and ``stream()`` for what to draw)."""
        return None

    def _check_ready(self, what):
        self.check_open(what)
        if self._pending and what != "step_async":
            raise ValueError("%s: %d step_async batches are in flight; step_wait() them first"
                             % (what, len(self._pending)))
        if self._obs is None:
            raise ValueError("%s: call reset() first" % what)

    # ---- observations ----

    def _fill(self, out, rows, tensors, count):
        """Writes a reply's observation tensors (``count`` instances) into ``out[rows]``."""
        for name, columns in self.obs_slices.items():
            out[rows, columns] = core.tensor_to_numpy(tensors[name]).reshape(count, -1)

    def _reset_envs(self, ids, seeds, keyframe=None):
        """Resets environments ``ids`` (sorted) with Reset calls (``keyframe``: the fields of
        ``core.keyframe_fields``; None: the creation keyframe); their observations ``[B, D]``."""
        obs = np.empty((ids.size, self._dim))
        for rows, reply in self.batch.reset(ids, seeds, self._reset_noise, self._kinds,
                                            keyframe):
            self._fill(obs, rows, reply.observations, rows.size)
        return obs

    # ---- reset ----

    def reset(self, seed=None, options=None):
        """Resets the environments; returns ``(obs, info)``: obs float64 ``[num_envs, D]``.

        Args:
            seed: None (each environment goes on drawing its reset noise from its own generator),
                an int (environment k's generator restarts from ``seed + k``), or a sequence of
                ``num_envs`` ints.
            options: None or a dict with either or both of these keys (any other is a
                ValueError):

                - ``"reset_mask"``: a bool array ``[num_envs]``; only those environments are
                  reset (the others keep their state and their rows of ``obs`` repeat the last
                  observations returned). With a seed, env k still gets ``seed + k`` (or
                  ``seed[k]``). This is how DISABLED autoreset resets finished environments; it
                  works in every mode (a reset env's pending NEXT_STEP autoreset is dropped).
                - ``"keyframe"``: the scene's keyframe to reset to, for this call only (a str
                  name, an int index from 0, or None for the creation ``keyframe``), with
                  ``reset_noise`` on top; later autoresets and resets without it return to the
                  creation ``keyframe``. Checked as the constructor's ``keyframe`` (TypeError,
                  ValueError before any call); one the scene lacks raises ``AlsimError``
                  INVALID_ARGUMENT naming the scene's keyframes, and no environment is reset.

        ``info`` is an empty dict. Before the first ``reset`` the mask must be absent.
        """
        self.check_open("reset")
        if self._pending:
            raise ValueError("reset: %d step_async batches are in flight; step_wait() them first"
                             % len(self._pending))
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        keyframe = core.keyframe_fields(options.pop("keyframe", None), "options['keyframe']")
        if options:
            raise ValueError("reset: unknown options %s (only 'reset_mask' and 'keyframe')"
                             % sorted(options))
        if mask is None:
            mask = np.ones(self.num_envs, dtype=bool)
        else:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError("reset_mask must be a bool array of shape (%d,), not %s %s"
                                 % (self.num_envs, mask.dtype, mask.shape))
            if self._obs is None and not mask.all():
                raise ValueError("reset_mask: the first reset() resets every environment")
        seeds = core.reset_seeds(seed, self.num_envs)
        ids = np.flatnonzero(mask)
        obs = self._reset_envs(ids, seeds, keyframe)
        if self._obs is None:
            self._obs = obs
        else:
            self._obs[ids] = obs
        self._needs_reset[ids] = False
        return self._obs.copy(), {}

    # ---- step ----

    def _actions(self, actions, count):
        array = np.asarray(actions)
        if array.dtype.kind not in "fiub":
            raise TypeError("actions must be a float array, not %s" % array.dtype)
        if array.shape != (count, self.nu):
            raise ValueError("actions have shape %s; this batch needs (%d, nu=%d)"
                             % (array.shape, count, self.nu))
        return array.astype(np.float64, copy=False)

    def _requests(self, ids, actions, reset_mask):
        """One StepRequest per server that holds some of ``ids``: ``[(shard, rows, request)]``."""

        def make_request(shard, rows, selection):
            request = alsim_pb2.StepRequest(
                instances=selection, substeps=self.batch.substeps, observations=self._kinds,
                reset_noise=self._reset_noise,
                reset_truncated=self._mode == AutoresetMode.SAME_STEP)
            if self.nu:
                request.actions.CopyFrom(core.numpy_to_tensor(actions[rows]))
            if reset_mask[rows].any():
                request.reset_mask.extend(reset_mask[rows].tolist())
            return request

        return self.batch.requests(ids, make_request)

    def _outcome(self, ids, actions, reset_mask, replies):
        """Gymnasium's ``(obs, reward, terminated, truncated, info)`` of a batch's replies
        ``[(rows, StepResponse)]``."""
        count = ids.size
        obs = np.empty((count, self._dim))
        status = np.zeros(count, dtype=np.int32)
        truncated = np.zeros(count, dtype=bool)
        server_reset = np.zeros(count, dtype=bool)
        final = None  # rows of SAME_STEP truncations: the state they were truncated in
        for rows, reply in replies:
            self._fill(obs, rows, reply.observations, rows.size)
            status[rows] = reply.status
            if reply.truncated:
                truncated[rows] = reply.truncated
            if reply.reset:
                server_reset[rows] = reply.reset
            if reply.final_observations:
                final = obs.copy() if final is None else final
                self._fill(final, rows, reply.final_observations, rows.size)
        after = obs if final is None else np.where(server_reset[:, None], final, obs)

        stepped = ~reset_mask
        diverged = (status == self.STATUS_DIVERGED) & stepped
        reward = np.zeros(count)
        terminated = diverged.copy()
        truncated &= stepped
        if stepped.any():
            rows = np.flatnonzero(stepped)
            before, acted, ended = self._obs[ids[rows]], actions[rows], after[rows]
            if self._reward_fn is not None:
                reward[rows] = self._vector(self._reward_fn(before, acted, ended), rows.size,
                                            "reward_fn", np.float64)
            if self._termination_fn is not None:
                terminated[rows] |= self._vector(self._termination_fn(ended), rows.size,
                                                 "termination_fn", np.bool_)
        done = terminated | truncated
        info = {"diverged": diverged}
        if self._mode == AutoresetMode.NEXT_STEP:
            self._needs_reset[ids] = done
        elif self._mode == AutoresetMode.SAME_STEP and done.any():
            # Truncations were reset by the server in this call; terminations are reset here,
            # with one Reset call, so that obs is the new episode's start as Gymnasium requires.
            info["final_obs"] = np.where(done[:, None], after, 0.0)
            info["_final_obs"] = done
            again = np.flatnonzero(terminated & ~server_reset)
            if again.size:
                order = np.argsort(ids[again])
                obs[again[order]] = self._reset_envs(ids[again[order]], None)
        self._obs[ids] = obs
        return obs, reward, terminated, truncated, info

    @staticmethod
    def _vector(values, count, what, dtype):
        array = np.asarray(values)
        if array.shape != (count,):
            raise ValueError("%s returned shape %s for a batch of %d; it must return [%d]"
                             % (what, array.shape, count, count))
        return array.astype(dtype)

    def step(self, actions):
        """Steps every environment; returns ``(obs, reward, terminated, truncated, info)``.

        Args:
            actions: ``[num_envs, nu]`` floats (float64 is sent; the server clamps them to the
                control ranges). NaN or Inf refuses the batch (AlsimError INVALID_ARGUMENT).

        Returns obs float64 ``[num_envs, D]``, reward float64 ``[num_envs]`` (``reward_fn``),
        terminated bool ``[num_envs]`` (``termination_fn``, or a diverged simulation), truncated
        bool ``[num_envs]`` (the server's ``max_episode_steps``), and info: ``diverged`` bool
        ``[num_envs]``, plus ``final_obs`` / ``_final_obs`` in SAME_STEP mode.

        Autoreset, as Gymnasium 1.x defines it:

        - NEXT_STEP (default): the step that ends an episode (terminated or truncated) returns
          its last observation; the next ``step`` resets that environment instead of stepping
          it (``StepRequest.reset_mask``, in the same call as the others' steps): its action is
          ignored, and it returns the reset observation with reward 0 and terminated and
          truncated False.
        - SAME_STEP: the step that ends an episode returns the new episode's first observation
          in ``obs``; ``info["final_obs"]`` ``[num_envs, D]`` holds the last observation of the
          episodes that ended (zeros in the other rows) and ``info["_final_obs"]`` says which
          rows (both keys only in steps where some episode ended, as Gymnasium does).
          ``reward_fn`` and ``termination_fn`` see the last observation. Truncated environments
          are reset by the server within the Step call (``reset_truncated``); terminated ones by
          one more Reset call to their servers, made only in steps where some episode terminated.
        - DISABLED: nothing is reset; ``reset(options={"reset_mask": terminated | truncated})``
          resets the finished environments. Stepping a finished environment is the caller's
          responsibility: it goes on from where it ended (an episode run past
          ``max_episode_steps`` is reported truncated at every step, the server's count going
          on), and stepping a diverged one raises the server's AlsimError FAILED_PRECONDITION.
        """
        self._check_ready("step")
        ids = np.arange(self.num_envs)
        actions = self._actions(actions, self.num_envs)
        reset_mask = self._reset_mask(ids)
        parts = self._requests(ids, actions, reset_mask)
        replies = core.call_all([(shard.address, shard.stub.Step, request)
                                 for shard, _, request in parts], self.batch.timeout)
        return self._outcome(ids, actions, reset_mask,
                             [(rows, reply) for (_, rows, _), reply in zip(parts, replies)])

    def _reset_mask(self, ids):
        if self._mode == AutoresetMode.NEXT_STEP:
            return self._needs_reset[ids].copy()
        return np.zeros(ids.size, dtype=bool)

    # ---- async stepping ----

    def step_async(self, actions, env_ids=None):
        """Sends a step of environments ``env_ids`` over ``StepStream`` and returns at once.

        Args:
            actions: ``[len(env_ids), nu]`` floats, row i for environment ``env_ids[i]``.
            env_ids: the environments to step (distinct indices in ``[0, num_envs)``, any order),
                or None for all. None of them may be in flight already (ValueError): an
                environment's next step depends on the outcome of its last one.

        Several batches (of disjoint environments) may be in flight; ``step_wait`` returns them
        oldest first. Autoreset, rewards and terminations are those of ``step``, so stepping
        through ``step_async``/``step_wait`` gives the bits that ``step`` gives. ``step`` and
        ``reset`` refuse to run while batches are in flight.
        """
        self._check_ready("step_async")
        ids = self.batch.env_indices(env_ids, "env_ids")
        if self._in_flight[ids].any():
            raise ValueError("step_async: environments %s are in flight; step_wait() for them "
                             "first" % ids[self._in_flight[ids]])
        actions = self._actions(actions, ids.size)
        reset_mask = self._reset_mask(ids)
        parts = self._requests(ids, actions, reset_mask)
        for shard, _, request in parts:
            if shard.address not in self._streams:
                self._streams[shard.address] = _StepStream(shard.stub)
            self._streams[shard.address].send(request)
        self._pending.append((ids, actions, reset_mask, parts))
        self._in_flight[ids] = True

    def step_wait(self):
        """The oldest batch in flight: ``(obs, reward, terminated, truncated, info)``.

        Rows follow the batch's ``env_ids``, which ``info["env_id"]`` holds (int64). Waits for
        its replies. If a server fails, AlsimError names it, and every batch in flight is
        dropped (their environments may or may not have stepped): ``reset()`` before going on.
        """
        if not self._pending:
            raise ValueError("step_wait: no batch in flight (step_async first)")
        ids, actions, reset_mask, parts = self._pending.popleft()
        replies = []
        for shard, rows, _ in parts:
            try:
                replies.append((rows, self._streams[shard.address].receive()))
            except (grpc.RpcError, StopIteration) as error:
                self._close_streams()
                if isinstance(error, grpc.RpcError):
                    raise core.rpc_error(error, shard.address) from error
                raise core.AlsimError("UNAVAILABLE", "the StepStream ended early",
                                      address=shard.address) from None
        self._in_flight[ids] = False
        result = self._outcome(ids, actions, reset_mask, replies)
        result[4]["env_id"] = ids
        return result

    def _close_streams(self):
        self._pending.clear()
        self._in_flight[:] = False
        streams, self._streams = self._streams, {}
        for stream in streams.values():
            stream.close()
