"""Typed, frozen task configs built from user keywords, with clear errors.

A task config is a frozen dataclass. :func:`build_config` makes one from
defaults plus user keywords, rejects unknown keys (with a suggestion), merges
nested dataclasses given as dicts (``reward_scales={"orientation": -2.0}``) and
runs the config's ``validate()``.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, TypeVar

T = TypeVar("T")


def unknown_key_error(kind: str, key: str, known: list[str]) -> TypeError:
    """A ``TypeError`` naming the unknown key, the closest known one and all known keys."""
    hint = difflib.get_close_matches(key, known, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    return TypeError(f"unknown {kind} {key!r}.{suggestion} Known keys: {', '.join(sorted(known))}")


def build_config(cls: type[T], overrides: dict[str, Any] | None = None, *, kind: str | None = None) -> T:
    """Return ``cls()`` with ``overrides`` applied, validated; never mutates a default."""
    kind = kind or f"{cls.__name__} key"
    overrides = dict(overrides or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    base = cls()
    values: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in fields:
            raise unknown_key_error(kind, key, list(fields))
        current = getattr(base, key)
        if dataclasses.is_dataclass(current) and isinstance(value, dict):
            value = dataclasses.replace(build_config(type(current), value, kind=f"{key} key"))
        elif isinstance(current, tuple) and isinstance(value, list):
            value = tuple(value)
        values[key] = value
    config = dataclasses.replace(base, **values)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    return config


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition``."""
    if not condition:
        raise ValueError(message)


def require_range(name: str, value: tuple[float, float]) -> None:
    """Check a ``(low, high)`` range is ordered and finite."""
    require(len(value) == 2, f"{name} must be a (low, high) pair, got {value!r}")
    low, high = float(value[0]), float(value[1])
    require(low <= high, f"{name} must have low <= high, got {value!r}")


def require_timing(sim_dt: float, control_dt: float) -> None:
    """Check positive timesteps and a control period that is a whole number of physics steps."""
    require(sim_dt > 0, f"sim_dt must be > 0, got {sim_dt}")
    require(control_dt > 0, f"control_dt must be > 0, got {control_dt}")
    ratio = control_dt / sim_dt
    require(abs(ratio - round(ratio)) < 1e-6 and round(ratio) >= 1, f"control_dt ({control_dt}) must be a whole multiple of sim_dt ({sim_dt})")
