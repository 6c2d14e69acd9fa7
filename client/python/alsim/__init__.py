"""Python client for the alsim simulation service (docs/python.md).

Install it with ``pip install ./client/python`` (``[gymnasium]`` for Gymnasium); the build
generates the gRPC stubs of the service contract (proto/alsim/v1/alsim.proto) into ``alsim.v1``
(``alsim.v1.alsim_pb2``, ``alsim.v1.alsim_pb2_grpc``) and ``alsim.version``.

- ``alsim.VectorEnv`` (``alsim/vector_env.py``): a batch of simulations of one scene with numpy
  observations and actions; gRPC failures surface as ``alsim.AlsimError``.
- ``alsim.GymVectorEnv`` (``alsim/gym_env.py``): Gymnasium's vector API (``reset(seed,
  options)``, ``step(actions) -> (obs, reward, terminated, truncated, info)``, spaces, autoreset
  modes), a ``gymnasium.vector.VectorEnv`` when gymnasium imports, over one or several servers,
  with EnvPool-style async stepping (``step_async``/``step_wait``).
- Both: ``env.scene()`` (``alsim.Scene``: GetScene as numpy arrays) and ``env.stream(...)``
  (``alsim.Frame``s of StreamStates, with the solver's diagnostics and contact points).
- ``alsim.channel`` (``alsim/connection.py``) opens a channel for the raw stubs with TLS, mutual
  TLS and a bearer token (from its arguments or ``ALSIM_TLS_CA``, ``ALSIM_TOKEN``, ...).

``import alsim`` registers ``alsim/Humanoid-v0`` and ``alsim/Scene-v0`` for
``gymnasium.make_vec`` when gymnasium imports (``alsim/registration.py``). The other names are
imported on first use, so ``import alsim.v1`` alone does not need numpy.

In a checkout, without installing: the generated half of the package lives in the build folder
(CMake writes ``BUILD/python/alsim``); put it on ``PYTHONPATH`` after ``client/python``
(``PYTHONPATH=client/python:build/python``). With ``client/python`` alone, the default build
folder's (``build/python``) is used when it exists.
"""

import os
import pkgutil

# The package is split in two folders until it is installed: the sources (client/python/alsim)
# and what the build generates (BUILD/python/alsim: v1/, version.py), each a folder "alsim" on
# sys.path. extend_path joins every such folder into this package, as pkgutil documents.
__path__ = pkgutil.extend_path(__path__, __name__)


def _default_build_folder():
    """The generated folder of a checkout's default build (build/python/alsim), if this package
    is a checkout's client/python/alsim without its generated half on sys.path."""
    if any(os.path.isdir(os.path.join(folder, "v1")) for folder in __path__):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    generated = os.path.join(root, "build", "python", "alsim")
    if (os.path.isfile(os.path.join(root, "proto", "alsim", "v1", "alsim.proto"))
            and os.path.isdir(os.path.join(generated, "v1"))):
        return generated
    return None


_GENERATED = _default_build_folder()
if _GENERATED is not None:
    __path__.append(_GENERATED)

_MISSING = ("alsim's generated files (alsim/v1, the gRPC stubs, and alsim/version.py) are not "
            "on sys.path: install the package (pip install ./client/python), or build with "
            "CMake and put BUILD/python on PYTHONPATH after client/python")

try:
    from alsim.version import VERSION as __version__
except ImportError:
    pass

_CORE_NAMES = ("AlsimError", "TensorSpec", "numpy_to_tensor", "tensor_to_numpy",
               "resolve_servers")
_SCENE_NAMES = ("scene_source", "Scene", "Mesh", "Deformable")
_STREAM_NAMES = ("StateStream", "Frame", "Contacts")
_VECTOR_ENV_NAMES = ("VectorEnv",)
_CONNECTION_NAMES = ("channel", "connection_settings")
_GYM_ENV_NAMES = ("GymVectorEnv",)
_GYMNASIUM_NAMES = ("AutoresetMode", "Box")
_REGISTRATION_NAMES = ("make_vector_env", "register_environments")
_MODULES = (("core", _CORE_NAMES), ("scenes", _SCENE_NAMES), ("streams", _STREAM_NAMES),
            ("vector_env", _VECTOR_ENV_NAMES), ("connection", _CONNECTION_NAMES),
            ("gym_env", _GYM_ENV_NAMES), ("gymnasium_api", _GYMNASIUM_NAMES),
            ("registration", _REGISTRATION_NAMES))

__all__ = [name for _, names in _MODULES for name in names]


def __getattr__(name):
    import importlib

    if name == "__version__":
        raise AttributeError("alsim.__version__: " + _MISSING)
    for module, names in _MODULES:
        if name in names:
            try:
                return getattr(importlib.import_module("alsim." + module), name)
            except ModuleNotFoundError as error:
                if error.name and error.name.startswith("alsim.v1"):
                    raise ImportError("alsim.%s: %s" % (name, _MISSING)) from error
                raise
    raise AttributeError("module 'alsim' has no attribute %r" % name)


def __dir__():
    return sorted(list(globals()) + __all__)


def _register_with_gymnasium():
    """Registers alsim's environments when gymnasium imports; nothing otherwise."""
    try:
        import gymnasium  # noqa: F401  (only whether it imports)
    except ImportError:
        return
    from alsim import registration

    registration.register_environments()


_register_with_gymnasium()
