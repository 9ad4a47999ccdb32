"""Named reward terms: a small Numba function, its name, its default weight and its own parameters.

A term function is ``@nb.njit(inline="always")`` and returns its *weighted* contribution
for one env. Its argument names say what it reads: ``weight`` (its weight, already
``scale * control_dt``), any name of its own parameters, and any quantity the task's layer
offers at the reward step (the layer lists them: e.g. the locomotion layer's
:data:`~unilab_envs.locomotion.reward_kernel.QUANTITIES`). Example, a foot-clearance term
of a legged task::

    @nb.njit(inline="always")
    def foot_clearance(weight, i, legs, moving, target_height):
        if not moving:
            return 0.0
        short = 0.0
        for f in range(legs.foot_height.shape[1]):
            short += max(0.0, target_height - legs.foot_height[i, f])
        return weight * short

    FOOT_CLEARANCE = RewardTerm("foot_clearance", foot_clearance, "feet below the target height in swing",
                                scale=-0.5, params={"target_height": 0.08})

A task declares its list (``reward_terms = LocomotionTask.reward_terms + (FOOT_CLEARANCE,)``);
:func:`register_reward_term` also makes a term addable by name from a config
(``reward_terms: {foot_clearance: {weight: -0.5}}``). The task's kernel is generated from
the list and which weights are not 0 (:mod:`unilab_envs.core.generated`): one fused ``prange``
pass, each term inlined; a term whose weight is 0 is left out of the kernel, never evaluated.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unilab_robot.config.errors import ConfigError, unknown_key_error

WEIGHT_ARGUMENT = "weight"


@dataclass(frozen=True)
class RewardTerm:
    """One named reward term (see the module docstring)."""

    name: str
    func: Any  # numba dispatcher, inline="always": (weight, <its params>, <layer quantities>) -> weighted value
    doc: str = ""
    scale: float = 0.0  # default weight before control_dt (a config may set another)
    params: Mapping[str, float] = field(default_factory=dict)  # its own parameters and their defaults

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a reward term's name must be an identifier, got {self.name!r}")
        if not hasattr(self.func, "py_func"):
            raise TypeError(f"reward term {self.name!r}: func must be a Numba @njit(inline='always') function, got {self.func!r}")
        object.__setattr__(self, "params", dict(self.params))

    @property
    def arguments(self) -> tuple[str, ...]:
        """The names of the term function's arguments, in order."""
        return tuple(inspect.signature(self.func.py_func).parameters)

    def __hash__(self) -> int:
        return hash((self.name, self.func, self.scale, tuple(self.params.items())))


_REGISTRY: dict[tuple[str, str], RewardTerm] = {}


def register_reward_term(layer: str, term: RewardTerm) -> RewardTerm:
    """Make ``term`` addable by name from the config of any task on ``layer`` (``"locomotion"``, ...); returns it."""
    existing = _REGISTRY.get((layer, term.name))
    if existing is not None and existing.func is not term.func:
        raise ValueError(f"a {layer} reward term named {term.name!r} is already registered ({existing.func.py_func.__module__})")
    _REGISTRY[(layer, term.name)] = term
    return term


def registered_reward_terms(layer: str) -> dict[str, RewardTerm]:
    """The terms registered for ``layer``, by name."""
    return {name: term for (where, name), term in _REGISTRY.items() if where == layer}


@dataclass(frozen=True)
class ResolvedTerms:
    """A task's terms with their weights (``scale * control_dt``) and parameter values, in kernel order."""

    terms: tuple[RewardTerm, ...]
    scales: tuple[float, ...]
    param_values: tuple[tuple[float, ...], ...]  # per term, in its params' declaration order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.terms)

    @property
    def active(self) -> tuple[bool, ...]:
        """Per term, whether its weight is not 0: the kernel is generated for this, and a term that is
        not active is never evaluated (its column is 0)."""
        return tuple(scale != 0.0 for scale in self.scales)

    def param_table(self) -> np.ndarray:
        """``(K, max(1, P))`` float64, the kernels' ``term_params``: row ``k`` holds term ``k``'s values, zero-padded."""
        table = np.zeros((len(self.terms), max([1, *map(len, self.param_values)])))
        for k, row in enumerate(self.param_values):
            table[k, : len(row)] = row
        return table


def resolve_terms(layer: str, declared: Sequence[RewardTerm], declared_scales: Mapping[str, float],
                  config_terms: Mapping[str, Mapping[str, float]]) -> ResolvedTerms:  # fmt: skip
    """The declared terms (their scales from ``declared_scales``, else the term's default) plus
    ``config_terms`` (``{name: {"weight": scale, param: value}}``): a declared name there sets its
    weight and parameters, another name must be registered for ``layer`` and is appended."""
    registered = registered_reward_terms(layer)
    terms = list(declared)
    names = [t.name for t in terms]
    if len(set(names)) != len(names):
        raise ValueError(f"reward terms declared twice: {sorted({n for n in names if names.count(n) > 1})}")
    for name in config_terms:
        if name not in names:
            if name not in registered:
                raise unknown_key_error(f"reward term ({layer} terms declared by the task or registered)", name,
                                        names + sorted(registered))  # fmt: skip
            terms.append(registered[name])
            names.append(name)
    scales, values = [], []
    for term in terms:
        given = dict(config_terms.get(term.name, {}))
        scale = given.pop(WEIGHT_ARGUMENT, declared_scales.get(term.name, term.scale))
        for key in given:
            if key not in term.params:
                raise unknown_key_error(f"reward_terms.{term.name} key", key, [WEIGHT_ARGUMENT, *term.params])
        params = {**term.params, **given}
        for key, value in [(WEIGHT_ARGUMENT, scale), *params.items()]:
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"reward_terms.{term.name}.{key} must be a finite number, got {value!r}")
        scales.append(float(scale))
        values.append(tuple(float(params[k]) for k in term.params))
    return ResolvedTerms(tuple(terms), tuple(scales), tuple(values))


def term_assignments(terms: Sequence[RewardTerm], active: Sequence[bool], quantities: Sequence[str]) -> list[str]:
    """Source lines ``t<k> = term_<k>(...)`` for each active term, ``t<k> = 0.0`` for one whose weight is 0
    (never evaluated: the kernel is generated per set of active terms, so a zero weight costs nothing)."""
    return [f"t{k} = {term_call(term, k, quantities)}  # {term.name}" if on else f"t{k} = 0.0  # {term.name}: weight 0, not evaluated"
            for k, (term, on) in enumerate(zip(terms, active, strict=True))]  # fmt: skip


def term_call(term: RewardTerm, index: int, quantities: Sequence[str], *, weights: str = "weights",
              term_params: str = "term_params", function: str | None = None) -> str:  # fmt: skip
    """Source of the call of term ``index``: ``term_<index>(weights[index], term_params[index, j], <quantity>...)``.

    Each argument is named ``weight``, one of the term's params, or one of ``quantities``; any other
    name is an error that lists them.
    """
    params = list(term.params)
    args = []
    for name in term.arguments:
        if name == WEIGHT_ARGUMENT:
            args.append(f"{weights}[{index}]")
        elif name in params:
            args.append(f"{term_params}[{index}, {params.index(name)}]")
        elif name in quantities:
            args.append(name)
        else:
            raise TypeError(f"reward term {term.name!r}: argument {name!r} is none of 'weight', its params {params} or "
                            f"the quantities this task offers: {', '.join(quantities)}")  # fmt: skip
    return f"{function or f'term_{index}'}({', '.join(args)})"
