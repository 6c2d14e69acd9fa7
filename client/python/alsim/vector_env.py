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

The scene (``scene()``, GetScene as numpy arrays) and a stream of states with the solver's
diagnostics and contact points (``stream()``, StreamStates) come from ``alsim.core.BatchEnv``,
which ``GymVectorEnv`` shares.
"""

import math
import operator

import numpy as np

from alsim import core
from alsim.v1 import alsim_pb2

__all__ = ["VectorEnv"]


class VectorEnv(core.BatchEnv):
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
            own soft contact model, ``"sap"``, SAP's compliant contact, ``"icf-lagged"``,
            ``"icf-similar"``, Irrotational Contact Fields, ``"drumwright"``, every
            constraint a stiff spring-damper, and ``"nsn"``, non-smooth Newton with rows at
            position level), a dict of options or
            an ``alsim.v1.SolverConfig``. A dict's keys are SolverConfig fields or any option
            name of the engine's table (``alsim run --help``), e.g. ``{"solver": "canal",
            "canal_beta0": 1e3}``; values out of range make the server refuse the Create.
        substeps: simulation steps per ``step()`` call (the action is held for all of them).
        keyframe: the scene's keyframe (MJCF ``<key>``) the environments start from and return
            to at every reset that names none (``reset()`` without ``keyframe``, autoresets):
            its time, qpos, qvel and ctrl, as MuJoCo's ``mj_resetDataKeyframe`` sets them. A str
            names it (``"home"``), an int is its index from 0 in the scene's order (an unnamed
            keyframe is reached only so); None (default): the scene's initial state. A bool or
            another type is a TypeError, a negative index a ValueError, before any call; a name
            or index the scene lacks makes the server refuse the Create (``AlsimError``
            INVALID_ARGUMENT whose message lists the scene's keyframes; nothing is created).
        max_message_bytes: the channel's send and receive message size limit.
        observations: names of the observation tensors ``reset`` and ``step`` return: any of
            ``qpos``, ``qvel``, ``body_pos``, ``body_quat``, ``ctrl``, ``actuator_force``,
            ``contact_count``, ``max_penetration``, ``time``, ``deformable_vertices`` (float64
            ``[nvert, 3]``: the tetrahedral deformables' vertices, m, world frame, in the order of
            ``scene().deformables``; ``[0, 3]`` without deformables) (``observation_spec``
            describes them). ``qpos`` and ``qvel`` are always returned.
        autoreset: ``"next_step"`` (default) or ``False``; see ``step``.
        timeout: deadline in seconds of every call, or None for none.
        tls, tls_ca, tls_cert, tls_key, tls_server_name, token, token_file: how to reach a server
            with TLS, mutual TLS or bearer tokens, as for ``alsim.channel``; None reads each from
            its environment variable (``ALSIM_TLS``, ``ALSIM_TLS_CA``, ``ALSIM_TLS_CLIENT_CERT``,
            ``ALSIM_TLS_CLIENT_KEY``, ``ALSIM_TLS_SERVER_NAME``, ``ALSIM_TOKEN``,
            ``ALSIM_TOKEN_FILE``). Unusable settings raise ValueError (or OSError for unreadable
            files) before any call; a failed TLS handshake is ``AlsimError`` UNAVAILABLE, a
            missing or unknown token UNAUTHENTICATED.

    Attributes: those of every batch (``alsim.core.BatchEnv``: ``num_envs``, ``nq``, ``nv``,
    ``nu``, ``nbody``, ``body_names`` (MuJoCo's body order: the rows of ``step``'s
    ``external_forces``), ``action_names``, ``timestep``, ``dt``, ``instance_ids`` (batch order),
    ``group_ids``, ``servers``, ``env_servers``, ``warnings``, ``specs``, ``closed``), and
    ``group_id`` (None with several servers), ``scene_name`` (the ``scene`` argument, a str),
    ``keyframe`` (the ``keyframe`` argument: a name, an index or None),
    ``action_spec`` (``{"action": TensorSpec}``, float64 ``[nu]`` bounded by the actuators'
    ctrlrange, +-inf where unlimited), ``observation_spec`` (``{name: TensorSpec}`` of the
    returned observations, per environment).

    Errors name the server that failed (``AlsimError.address``); a step that failed on one server
    may have stepped the others' environments. Use it as a context manager, or call ``close()``,
    to destroy the instances on the servers.
    """

    STATUS_OK = alsim_pb2.INSTANCE_STATUS_OK
    STATUS_DIVERGED = alsim_pb2.INSTANCE_STATUS_DIVERGED

    def __init__(self, address, scene, num_envs, seed=0, solver=None, substeps=1,
                 max_message_bytes=64 << 20, observations=("qpos", "qvel"), autoreset="next_step",
                 timeout=None, tls=None, tls_ca=None, tls_cert=None, tls_key=None,
                 tls_server_name=None, token=None, token_file=None, keyframe=None):
        if autoreset not in ("next_step", False, None):
            raise ValueError("autoreset must be 'next_step' or False, got %r" % (autoreset,))
        if isinstance(observations, str):
            observations = (observations,)
        names = ["qpos", "qvel"]
        for name in core.observation_names(tuple(dict.fromkeys(observations))):
            if name not in names:
                names.append(name)
        self._observation_names = tuple(names)
        self._observation_kinds = core.observation_kinds(names)
        self._autoreset = autoreset == "next_step"
        super().__init__(core.Batch(
            address, scene, num_envs, seed=seed, solver=solver, substeps=substeps,
            keyframe=keyframe, timeout=timeout, max_message_bytes=max_message_bytes,
            settings=dict(tls=tls, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                          tls_server_name=tls_server_name, token=token, token_file=token_file)))
        self.group_id = self.group_ids[0] if len(self.group_ids) == 1 else None
        self.action_spec = {"action": core.tensor_spec(self.specs.action)}
        every = {spec.name: core.tensor_spec(spec) for spec in self.specs.observations}
        self.observation_spec = {name: every[name] for name in names if name in every}
        # Environments whose last step came back DIVERGED: reset by the next step (autoreset).
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)

    def _observations(self, tensors):
        return {name: core.tensor_to_numpy(tensors[name])
                for name in self._observation_names if name in tensors}

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

    def reset(self, seed=None, noise=0.0, keyframe=None):
        """Resets every environment to its start state (the creation ``keyframe``, else the
        scene's initial state), or to ``keyframe``, plus uniform noise.

        Args:
            seed: None (each environment keeps drawing from its own generator), an int (env k's
                generator restarts from ``seed + k``) or a sequence of ``num_envs`` ints.
            noise: noise in ``[-noise, noise]`` added to hinge and slide positions and to every
                velocity (rad, m, rad/s, m/s); 0 gives the exact start state.
            keyframe: None (default): the keyframe the environments were created with (the
                ``keyframe`` attribute), else the scene's initial state. A str or an int: that
                keyframe of the scene (by name, or by index from 0), for this call only: later
                resets that name none, autoresets included, return to the creation keyframe.
                Checked as the constructor's ``keyframe`` (TypeError, ValueError before any
                call); one the scene lacks raises ``AlsimError`` INVALID_ARGUMENT naming the
                scene's keyframes, and no environment is reset.

        Returns the observations: ``{name: array [num_envs, ...]}`` (at least qpos, qvel).
        Clears any pending autoreset.
        """
        self.check_open("reset")
        seeds = core.reset_seeds(seed, self.num_envs)
        noise = float(noise)
        if not (math.isfinite(noise) and noise >= 0):
            raise ValueError("noise must be finite and >= 0, got %r" % noise)
        key = core.keyframe_fields(keyframe)
        replies = self.batch.reset(np.arange(self.num_envs), seeds, noise,
                                   self._observation_kinds, key)
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

    def step(self, actions, external_forces=None, gradients=None):
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
            gradients: None (default): a plain step. Else the Jacobians of this step, which needs
                ``substeps`` 1 and a solver among ``"icf-lagged"``, ``"icf-similar"`` and
                ``"sap"`` (theta 0, Euler, no time budget) for every environment that asks:
                ``True`` asks for the state and controls blocks of every environment; a dict
                chooses: ``{"state": bool, "positions": bool, "controls": bool, "parameters":
                [names], "envs": mask or indices}`` (``positions`` False leaves the state's
                costly d/dq blocks out; parameter names: ``body_mass:BODY``, ``geom_friction:GEOM``,
                ``geom_stiffness:GEOM``, ``geom_dissipation:GEOM``, ``icf_stiffness``,
                ``icf_dissipation``); an ``alsim.v1.GradientRequest`` is sent as it is. They come
                back in ``info["gradients"]`` (below). A solver without gradients, an unknown
                parameter or more substeps makes the server refuse the whole call (AlsimError
                INVALID_ARGUMENT; no environment moves), as does a reply whose Jacobians would
                pass the server's ``--max-gradient-doubles`` (default 4 Mi float64 values,
                counting every environment's rows on one server): ask for fewer environments
                (``envs``) or blocks then.

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

        With ``gradients``, ``info["gradients"]`` is a dict of float64 arrays, entry ``[k, i,
        j]`` = d output i / d input j of environment k, for the blocks asked: ``dv_dv``,
        ``dv_dq``, ``dq_dv``, ``dq_dq`` ``[num_envs, nv, nv]`` (state), ``dv_du``, ``dq_du``
        ``[num_envs, nv, nu]`` (controls), ``dv_dp``, ``dq_dp`` ``[num_envs, nv, np]``
        (parameters, columns in ``info["gradients"]["parameters"]``' order); ``v`` is qvel,
        ``q`` the positions on the tangent space (nv coordinates: a free or ball joint's rotation
        as the body-frame rotation vector, not qpos's quaternion), ``u`` the controls; units are
        those of the quantities. Also ``computed`` (bool ``[num_envs]``: False, with NaN rows,
        for an environment that did not ask, was autoreset instead of stepped, diverged or whose
        Hessian could not be factored), ``residual`` (how far the solve was from converged) and
        ``constraint_changes`` (columns where contacts appeared or vanished between the
        perturbed inputs: the step is not differentiable there, and the Jacobian is the mean of
        the one-sided derivatives, as a central difference gives; stiction's transition and
        clamped controls are such places too). See docs/python.md.

        Autoreset (``autoreset="next_step"``, the default; Gymnasium's NEXT_STEP mode): a step
        whose ``status`` reports an environment DIVERGED returns that environment's diverged
        observations (possibly non-finite) as they are. The *next* ``step`` call first resets
        that environment (its own generator, noise 0: exactly its start state, the creation
        ``keyframe`` or else the scene's initial state), ignores its rows of ``actions`` and
        ``external_forces``, does not step it, and returns its reset observations with
        ``info["reset"]`` True, ``status`` OK, ``diverged`` False and zero diagnostics; the other
        environments step normally. ``reset()`` and ``set_state()`` cancel a pending autoreset.

        With ``autoreset=False`` nothing is reset for you: stepping while any environment is
        diverged raises the server's ``AlsimError("FAILED_PRECONDITION", ...)`` and steps no
        environment; call ``reset()`` or ``set_state()`` first.
        """
        self.check_open("step")
        n = self.num_envs
        actions = self._float_array(actions, "actions", (n, self.nu), "(num_envs, nu)")
        external_forces = self._float_array(external_forces, "external_forces",
                                            (n, self.nbody, 6), "(num_envs, nbody, 6)")
        gradient_request, gradient_envs = core.gradient_request(gradients, n)
        pending = self._needs_reset.copy() if self._autoreset else np.zeros(n, bool)
        info = {
            "status": np.full(n, self.STATUS_OK, dtype=np.int32),
            "diverged": np.zeros(n, dtype=bool),
            "reset": pending,
        }
        info.update(core.new_diagnostics(n))
        info["step_seconds"] = 0.0
        if gradient_request is not None:
            info["gradients"] = core.new_gradients(gradient_request, n, self.nv, self.nu)
        stepped = np.flatnonzero(~pending)
        reset_observations = None
        if pending.any():
            reset_rows = np.flatnonzero(pending)
            reset_observations = self._gather(
                self.batch.reset(reset_rows, None, 0.0, self._observation_kinds),
                reset_rows.size)
            self._needs_reset[pending] = False
            if stepped.size == 0:
                return reset_observations, info

        def step_request(shard, rows, selection):
            request = alsim_pb2.StepRequest(instances=selection, substeps=self.batch.substeps,
                                            observations=self._observation_kinds)
            if actions is not None:
                request.actions.CopyFrom(core.numpy_to_tensor(actions[stepped[rows]]))
            if external_forces is not None:
                request.external_forces.CopyFrom(
                    core.numpy_to_tensor(external_forces[stepped[rows]]))
            mask = gradient_envs[stepped[rows]] if gradient_request is not None else None
            # A server none of whose stepped environments asks takes a plain step (an empty
            # mask would be refused): its rows stay NaN, not computed.
            if mask is not None and mask.any():
                request.gradients.CopyFrom(gradient_request)
                if not mask.all():
                    request.gradients.instance_mask.extend(bool(flag) for flag in mask)
            return request

        replies = self.batch.call("Step", stepped, step_request)
        for rows, response in replies:
            status = np.array(response.status, dtype=np.int32)
            info["status"][stepped[rows]] = status
            info["diverged"][stepped[rows]] = status == self.STATUS_DIVERGED
            core.fill_diagnostics(info, stepped[rows], response.diagnostics)
            if gradient_request is not None and response.HasField("gradients"):
                core.fill_gradients(info["gradients"], stepped[rows], response.gradients)
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

    def state(self, index):
        """The complete state of environment ``index`` as opaque bytes (GetState)."""
        self.check_open("state")
        return self.batch.get_state(index)

    def set_state(self, index, state):
        """Restores environment ``index`` from ``state()`` bytes (SetState); bit-exact resume.

        Also clears the environment's diverged flag and any pending autoreset.
        """
        self.check_open("set_state")
        self.batch.set_state(index, state)
        self._needs_reset[operator.index(index)] = False
