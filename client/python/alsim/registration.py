"""alsim's environments in Gymnasium's registry, for ``gymnasium.make_vec``.

``import alsim`` registers them when gymnasium (1.1 or later) imports; without gymnasium it does
nothing. Both ids are *vector* environments (``vector_entry_point``): ``gymnasium.make_vec``
builds a ``GymVectorEnv`` with ``num_envs`` instances on the server; ``gymnasium.make`` (a single
environment) is not offered.

    import gymnasium
    import alsim  # registers alsim/Humanoid-v0 and alsim/Scene-v0

    envs = gymnasium.make_vec("alsim/Humanoid-v0", num_envs=64,
                              vectorization_mode="vector_entry_point",
                              address="127.0.0.1:50051", reset_noise=0.01)
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)

- ``alsim/Humanoid-v0``: the server's built-in ``humanoid`` (MuJoCo's humanoid.xml, 21 motors),
  observations ``[qpos | qvel]``, reward the torso's height (m; ``humanoid_height``), terminated
  when the torso falls below 1 m (``humanoid_fallen``), truncated after 1000 steps.
- ``alsim/Scene-v0``: any scene, ``scene=`` a built-in name or a local MJCF/URDF file; no reward
  (0) and no termination unless ``reward_fn=`` and ``termination_fn=`` are given.

Every keyword argument of ``make_vec`` goes to ``GymVectorEnv`` (``reward_fn``,
``termination_fn``, ``observations``, ``max_episode_steps``, ``autoreset_mode``, ``seed``,
``reset_noise``, ``keyframe``, ``substeps``, ``solver``, ``timeout``, the TLS and token settings,
...), and ``address`` says where the server is: the argument, else ``$ALSIM_ADDRESS``, else
``127.0.0.1:50051`` (as the ``alsim`` CLI). Another scene under its own id::

    gymnasium.register("my/Robot-v0", vector_entry_point="alsim.registration:make_vector_env",
                       max_episode_steps=500, kwargs={"scene": "robot.xml",
                                                      "reward_fn": my_reward})
"""

import os

__all__ = ["HUMANOID_ID", "SCENE_ID", "DEFAULT_ADDRESS", "server_address", "make_vector_env",
           "make_humanoid", "humanoid_height", "humanoid_fallen", "register_environments"]

HUMANOID_ID = "alsim/Humanoid-v0"
SCENE_ID = "alsim/Scene-v0"
DEFAULT_ADDRESS = "127.0.0.1:50051"
ADDRESS_VARIABLE = "ALSIM_ADDRESS"

# In obs = [qpos | qvel], the humanoid's free joint is qpos[0:7]: its z (qpos[2]) is the
# torso's height.
TORSO_Z = 2
FALLEN = 1.0  # m


def server_address(address=None):
    """``address``, else ``$ALSIM_ADDRESS`` (when set and not empty), else 127.0.0.1:50051."""
    if address is not None:
        return address
    return os.environ.get(ADDRESS_VARIABLE) or DEFAULT_ADDRESS


def make_vector_env(num_envs=1, scene=None, address=None, **kwargs):
    """``GymVectorEnv(server_address(address), scene, num_envs, **kwargs)``: the vector entry
    point of ``alsim/Scene-v0`` and of any id registered with it."""
    from alsim import gym_env  # imported when an environment is made, not when registered

    if scene is None:
        raise ValueError("make_vector_env: name the scene (scene='humanoid', a built-in name, "
                         "or scene='path/to/model.xml')")
    return gym_env.GymVectorEnv(server_address(address), scene, num_envs, **kwargs)


def humanoid_height(obs, actions, next_obs):
    """alsim/Humanoid-v0's reward: the torso's height (m) after the step."""
    return next_obs[:, TORSO_Z]


def humanoid_fallen(next_obs):
    """alsim/Humanoid-v0's termination: the torso below 1 m."""
    return next_obs[:, TORSO_Z] < FALLEN


def make_humanoid(num_envs=1, address=None, reward_fn=humanoid_height,
                  termination_fn=humanoid_fallen, observations=("qpos", "qvel"), **kwargs):
    """The vector entry point of ``alsim/Humanoid-v0`` (arguments: ``make_vector_env``'s)."""
    if "scene" in kwargs:
        raise ValueError("alsim/Humanoid-v0 is the built-in humanoid: for another scene use "
                         "alsim/Scene-v0 with scene=...")
    names = (observations,) if isinstance(observations, str) else tuple(observations)
    defaults = reward_fn is humanoid_height or termination_fn is humanoid_fallen
    if defaults and (not names or names[0] != "qpos"):
        raise ValueError("alsim/Humanoid-v0's reward and termination read the torso's height "
                         "from qpos[2]: observations must start with 'qpos' (or pass your own "
                         "reward_fn and termination_fn), got %r" % (names,))
    return make_vector_env(num_envs, scene="humanoid", address=address, reward_fn=reward_fn,
                           termination_fn=termination_fn, observations=names, **kwargs)


def register_environments():
    """Registers ``alsim/Humanoid-v0`` and ``alsim/Scene-v0`` with gymnasium (ids already in
    its registry are left as they are). Returns the ids registered, () without a usable
    gymnasium (1.1 or later)."""
    from alsim import gymnasium_api

    gymnasium = gymnasium_api.GYMNASIUM
    if gymnasium is None:
        return ()
    entries = (
        (HUMANOID_ID, "alsim.registration:make_humanoid", 1000),
        (SCENE_ID, "alsim.registration:make_vector_env", None),
    )
    registered = []
    for env_id, entry_point, max_episode_steps in entries:
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, vector_entry_point=entry_point,
                           max_episode_steps=max_episode_steps)
        registered.append(env_id)
    return tuple(registered)
