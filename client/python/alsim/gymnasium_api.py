"""Gymnasium's names when Gymnasium (1.1 or later) imports, alsim's stand-ins when it does not.

``GymVectorEnv`` is built on what this module finds once, at its import:

- ``GYMNASIUM``: the ``gymnasium`` module, or None (not installed, or older than 1.1, which has
  no ``gymnasium.vector.AutoresetMode``).
- ``VectorEnv``: ``gymnasium.vector.VectorEnv``, or ``object``: ``GymVectorEnv``'s base class.
- ``AutoresetMode``: ``gymnasium.vector.AutoresetMode``, or an enum with Gymnasium's members and
  values.
- ``box(low, high, dtype)``: a ``gymnasium.spaces.Box``, or alsim's ``Box``.

``Box`` is alsim's stand-in for ``gymnasium.spaces.Box`` either way.
"""

import enum

import numpy as np

__all__ = ["GYMNASIUM", "VectorEnv", "AutoresetMode", "Box", "box", "autoreset_mode"]

try:
    import gymnasium as GYMNASIUM
    from gymnasium.spaces import Box as _GymnasiumBox
    from gymnasium.vector import AutoresetMode, VectorEnv
except ImportError:  # gymnasium is optional (the [gymnasium] extra)
    GYMNASIUM = None
    _GymnasiumBox = None
    VectorEnv = object

    class AutoresetMode(enum.Enum):
        """Gymnasium 1.x's autoreset modes, with Gymnasium's values (``gymnasium.vector.
        AutoresetMode`` itself when gymnasium is importable)."""
        NEXT_STEP = "NextStep"
        SAME_STEP = "SameStep"
        DISABLED = "Disabled"


class Box:
    """A box in R^shape: alsim's stand-in for ``gymnasium.spaces.Box`` when gymnasium is absent.

    Args:
        low, high: the bounds, scalars or arrays broadcastable to ``shape`` (-inf/+inf: unbounded).
        shape: the shape (default: the bounds' broadcast shape).
        dtype: the elements' numpy dtype.
        seed: the seed of ``sample``'s generator (``np.random.default_rng``).

    ``sample()`` follows Gymnasium's documented distributions: uniform in ``[low, high)`` where
    both bounds are finite, standard normal where neither is, ``low`` + Exp(1) or ``high`` -
    Exp(1) where one is. ``contains(x)`` (also ``x in box``): x has the shape, a dtype that casts
    safely to ``dtype``, and lies within the bounds.
    """

    def __init__(self, low, high, shape=None, dtype=np.float64, seed=None):
        self.dtype = np.dtype(dtype)
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        self.shape = tuple(int(n) for n in shape)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()
        if np.any(self.low > self.high):
            raise ValueError("Box: low must be <= high everywhere")
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Restarts ``sample``'s generator from ``seed``; returns ``[seed]``."""
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def is_bounded(self, manner="both"):
        """Whether every element is bounded ``"below"``, ``"above"`` or on ``"both"`` sides."""
        below = bool(np.all(np.isfinite(self.low)))
        above = bool(np.all(np.isfinite(self.high)))
        if manner == "both":
            return below and above
        if manner == "below":
            return below
        if manner == "above":
            return above
        raise ValueError("manner must be 'both', 'below' or 'above', not %r" % (manner,))

    def sample(self):
        """A random element of the box (see the class documentation for the distributions)."""
        low_finite, high_finite = np.isfinite(self.low), np.isfinite(self.high)
        out = np.empty(self.shape, dtype=np.float64)
        both, neither = low_finite & high_finite, ~low_finite & ~high_finite
        below, above = low_finite & ~high_finite, ~low_finite & high_finite
        rng = self.np_random
        out[both] = rng.uniform(self.low[both], self.high[both])
        out[neither] = rng.normal(size=int(neither.sum()))
        out[below] = self.low[below] + rng.exponential(size=int(below.sum()))
        out[above] = self.high[above] - rng.exponential(size=int(above.sum()))
        return out.astype(self.dtype)

    def contains(self, x):
        """Whether ``x`` is an element of the box (shape, safe dtype cast, bounds)."""
        x = np.asarray(x)
        return (x.shape == self.shape and np.can_cast(x.dtype, self.dtype)
                and bool(np.all((x >= self.low) & (x <= self.high))))

    def __contains__(self, x):
        return self.contains(x)

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))

    def __repr__(self):
        return "Box(low=%s, high=%s, shape=%s, dtype=%s)" % (
            np.array2string(self.low, threshold=6), np.array2string(self.high, threshold=6),
            self.shape, self.dtype)


def box(low, high, dtype):
    """A ``gymnasium.spaces.Box`` when gymnasium is importable, else alsim's ``Box``."""
    kind = _GymnasiumBox if _GymnasiumBox is not None else Box
    return kind(low=low, high=high, shape=np.shape(low), dtype=dtype)


def autoreset_mode(mode):
    """``mode`` (an AutoresetMode, its value "NextStep" or name "next_step") as AutoresetMode."""
    text = getattr(mode, "value", mode)
    for member in AutoresetMode:
        if text in (member.value, member.name, member.name.lower()):
            return member
    raise ValueError("autoreset_mode must be one of %s, not %r"
                     % (", ".join(m.name.lower() for m in AutoresetMode), mode))
