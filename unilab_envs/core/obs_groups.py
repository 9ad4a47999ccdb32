"""Named observation groups: what a task's observation is made of, declared once.

A group is a name, a size, its units and meaning, the Numba writer that fills it inside the
task's fused step kernel, the NumPy builder that rebuilds it on the robot side from MuJoCo
state and the controller state (:mod:`unilab_robot.deploy.reference`), and the noise scale the
sim-to-real :class:`~wrappers.noise.ObservationNoise` uses when a profile gives none. A task
lists the groups of its policy observation and of its critic's privileged observation, in
order; the slices (``env.obs_groups``), the deploy spec's groups, the history columns, the
noise columns and the docs tables all come from that list.

A writer is ``@nb.njit(inline="always")`` and writes its group's floats into ``out`` (a 1-D
view of the group's columns of one env's row). Its other argument names say what it reads:
any quantity the task's layer offers at that point (the layers list them:
:data:`~unilab_envs.locomotion.observation_kernel.QUANTITIES`,
:data:`~unilab_envs.tasks.arm_reward_kernel.REACH_OBS_QUANTITIES` and ``GRASP_OBS_QUANTITIES``). Example, the base height
above the ground under it, for a legged policy::

    @nb.njit(inline="always")
    def write_base_height(out, height):
        out[0] = height

    def build_base_height(io, data, state):  # robot side, NumPy (io: the PolicyIO)
        return data.qpos[io.root_q + 2:io.root_q + 3]

    BASE_HEIGHT = ObsGroup("base_height", 1, "m", "base height above the ground",
                           writer=write_base_height, builder=build_base_height, noise=0.02)

and the task lists it: ``policy_groups = (*LocomotionTask.policy_groups, BASE_HEIGHT)``.
:func:`register_obs_group` also makes a group usable by name in those lists.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

OUT_ARGUMENT = "out"
#: the mirror kinds a group may declare besides a tuple of signs (:class:`ObsGroup`)
MIRROR_KINDS = ("joints", "feet", "phase", "invariant")


@dataclass(frozen=True)
class ObsGroup:
    """One named observation group (see the module docstring).

    ``size``: floats, or the name of a count the layer knows (the locomotion layer's
    ``"joints"``, ``"feet"``, ``"scan_points"``). ``writer``: the Numba writer (``None`` only for a
    group a task on the bare ``Task`` base writes in a kernel of its own). ``builder``:
    ``(io, data, state) -> values``, the robot side's NumPy reference, ``None`` for a group only
    the critic sees. ``noise``: the default observation-noise scale in the group's units
    (``None``: no noise unless a profile asks for it). ``shape``: ``(channels, height, width)`` for an image
    group (a camera's), whose ``size`` floats are that array flattened in C order (channel, row, column);
    ``None`` for a vector. Learners put a convolutional encoder on image groups. ``mirror``: how the
    left/right reflection ``y -> -y`` acts on the group (the symmetry of :mod:`unilab_envs.locomotion.mirror`): a
    tuple of signs, one per float (a 3-vector ``(1, -1, 1)``, a pseudovector ``(-1, 1, -1)``), or one of
    :data:`MIRROR_KINDS`: ``"joints"`` (each entry swaps with its partner joint's, with the joint's sign),
    ``"feet"`` (each entry swaps with its partner foot's), ``"phase"`` (the gait clock's sign), ``"invariant"``;
    ``None``: the group has no mirror image (a symmetric recipe refuses it, naming it).
    """

    name: str
    size: int | str
    units: str
    doc: str
    writer: Any = None
    builder: Callable | None = None
    noise: float | None = None
    shape: tuple[int, int, int] | None = None
    mirror: str | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"an observation group's name must be an identifier, got {self.name!r}")
        if isinstance(self.size, int) and self.size <= 0:
            raise ValueError(f"observation group {self.name!r}: size must be positive, got {self.size}")
        if self.writer is not None and not hasattr(self.writer, "py_func"):
            raise TypeError(f"observation group {self.name!r}: writer must be a Numba @njit(inline='always') function, "
                            f"got {self.writer!r}")
        if self.writer is not None and self.arguments[:1] != (OUT_ARGUMENT,):
            raise TypeError(f"observation group {self.name!r}: the writer's first argument must be {OUT_ARGUMENT!r} "
                            f"(the group's columns of one env), got {self.arguments}")
        if self.noise is not None and not self.noise >= 0.0:
            raise ValueError(f"observation group {self.name!r}: noise must be >= 0, got {self.noise}")
        if isinstance(self.mirror, str):
            if self.mirror not in MIRROR_KINDS:
                raise ValueError(f"observation group {self.name!r}: mirror must be one of {MIRROR_KINDS} or a tuple of "
                                 f"signs, got {self.mirror!r}")
        elif self.mirror is not None:
            signs = tuple(float(v) for v in self.mirror)
            if any(v not in (-1.0, 1.0) for v in signs) or (isinstance(self.size, int) and len(signs) != self.size):
                raise ValueError(f"observation group {self.name!r}: mirror signs must be {self.size} values of +-1, "
                                 f"got {self.mirror!r}")
            object.__setattr__(self, "mirror", signs)
        if self.shape is not None:
            shape = tuple(int(d) for d in self.shape)
            if len(shape) != 3 or min(shape) < 1 or (isinstance(self.size, int) and self.size != shape[0] * shape[1] * shape[2]):
                raise ValueError(f"observation group {self.name!r}: shape must be (channels, height, width) of positive "
                                 f"sizes whose product is its size {self.size}, got {self.shape}")
            object.__setattr__(self, "shape", shape)

    @property
    def arguments(self) -> tuple[str, ...]:
        """The names of the writer's arguments, in order (``()`` without a writer)."""
        return tuple(inspect.signature(self.writer.py_func).parameters) if self.writer is not None else ()

    def size_for(self, counts: Mapping[str, int]) -> int:
        """The group's size on a task whose layer counts are ``counts`` (``{"joints": 12, ...}``)."""
        if isinstance(self.size, int):
            return self.size
        if self.size not in counts:
            raise ValueError(f"observation group {self.name!r}: size {self.size!r} is none of this task's counts {dict(counts)}")
        return int(counts[self.size])


_REGISTRY: dict[tuple[str, str], ObsGroup] = {}


def register_obs_group(layer: str, group: ObsGroup) -> ObsGroup:
    """Make ``group`` listable by name in the groups of any task on ``layer``; returns it."""
    existing = _REGISTRY.get((layer, group.name))
    if existing is not None and existing != group:
        raise ValueError(f"a {layer} observation group named {group.name!r} is already registered")
    _REGISTRY[(layer, group.name)] = group
    return group


def registered_obs_groups(layer: str) -> dict[str, ObsGroup]:
    """The groups registered for ``layer``, by name."""
    return {name: group for (where, name), group in _REGISTRY.items() if where == layer}


def resolve_groups(layer: str, groups: Sequence[ObsGroup | str], where: str) -> tuple[ObsGroup, ...]:
    """``groups`` with each name replaced by the group registered under it for ``layer``; ``ValueError`` on an
    unknown name or a name listed twice."""
    registered = registered_obs_groups(layer)
    out = []
    for group in groups:
        if isinstance(group, str):
            if group not in registered:
                raise ValueError(f"unknown {where} observation group {group!r}; the {layer} groups are {sorted(registered)} "
                                 f"(or declare an ObsGroup)")
            group = registered[group]
        out.append(group)
    names = [g.name for g in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{where} observation groups listed twice: {twice}")
    return tuple(out)


def group_slices(groups: Sequence[ObsGroup], counts: Mapping[str, int]) -> dict[str, slice]:
    """Each group's columns, the groups laid end to end in order from column 0."""
    slices, at = {}, 0
    for group in groups:
        size = group.size_for(counts)
        slices[group.name] = slice(at, at + size)
        at += size
    return slices


def writer_call(group: ObsGroup, out: str, quantities: Sequence[str], function: str) -> str:
    """Source of the call of ``group``'s writer bound as ``function``: ``function(out, <quantity>...)``;
    ``TypeError`` naming the quantities for an argument that is none of them."""
    args = [out]
    for name in group.arguments[1:]:
        if name not in quantities:
            raise TypeError(f"observation group {group.name!r}: writer argument {name!r} is none of the quantities "
                            f"this task offers: {', '.join(quantities)}")
        args.append(name)
    return f"{function}({', '.join(args)})"
