"""Frozen config dataclasses built from mappings: unknown keys, wrong types and bad values rejected.

Two builders share the key check and the nesting rule:

* :func:`from_dict` for settings read from text (YAML files, ``key=value`` overrides,
  checkpoints): every value is checked against the field's annotation and put in
  canonical form (``"3e-4"`` and ``1e6`` become numbers, lists become tuples).
* :func:`build_config` for keywords given in code (a task's ``gym.make_vec(...,
  **config)``, a wrapper's config): the values are the caller's own (a NumPy float, a
  ``Path``), checked by the config's own ``__post_init__`` / ``validate()``.

Both raise :class:`~unilab_robot.config.errors.ConfigError`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from unilab_robot.config.errors import ConfigError, check_keys, require

T = TypeVar("T")


def field_names(cls: type) -> list[str]:
    """The field names of the dataclass ``cls``, in declaration order."""
    return [f.name for f in dataclasses.fields(cls)]


def build_config(cls: type[T], overrides: Mapping[str, Any] | None = None, *, kind: str | None = None) -> T:
    """``cls()`` with ``overrides`` applied, then its ``validate()`` (if any); never mutates a default.

    A nested config dataclass given as a mapping (``reward_scales={"orientation": -2.0}``)
    is merged into the default instance's values; a list for a tuple field becomes a tuple.
    """
    kind = kind or f"{cls.__name__} key"
    overrides = dict(overrides or {})
    check_keys(overrides, field_names(cls), kind)
    base = cls()
    values: dict[str, Any] = {}
    for key, value in overrides.items():
        current = getattr(base, key)
        if dataclasses.is_dataclass(current) and isinstance(value, Mapping):
            value = _merge_into(current, value, kind=f"{key} key")
        elif isinstance(current, tuple) and isinstance(value, list):
            value = tuple(value)
        values[key] = value
    config = dataclasses.replace(base, **values)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    return config


def _merge_into(current: Any, updates: Mapping[str, Any], kind: str) -> Any:
    """``current`` (a config instance) with ``updates`` applied, validated like :func:`build_config`."""
    cls = type(current)
    check_keys(updates, field_names(cls), kind)
    values = {f.name: getattr(current, f.name) for f in dataclasses.fields(cls) if f.init}
    return build_config(cls, {**values, **updates}, kind=kind)


def from_dict(cls: type[T], data: Mapping[str, Any], prefix: str = "", kind: str = "config key") -> T:
    """The dataclass ``cls`` from ``data`` (absent fields keep their defaults), values type-checked.

    ``prefix`` is the dotted path of ``data`` in the whole config (``"algo."``), used in
    messages: ``unknown config key 'algo.gama'. Did you mean 'algo.gamma'? ...``.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a mapping, got {data!r}")
    check_keys(data, field_names(cls), kind, prefix)
    hints = typing.get_type_hints(cls)
    kwargs = {k: coerce(v, hints[k], f"{prefix}{k}", kind) for k, v in data.items()}
    return cls(**kwargs)


def coerce(value: Any, tp: Any, key: str, kind: str = "config key") -> Any:
    """``value`` checked against the annotation ``tp`` and returned in canonical form."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return coerce(value, arg, key, kind)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{key}: invalid value {value!r}")
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        require(isinstance(value, Mapping), f"{key} must be a mapping of its fields, got {value!r}")
        return from_dict(tp, value, prefix=f"{key}.", kind=kind)
    if origin is tuple:
        require(isinstance(value, (list, tuple)), f"{key} must be a list, got {value!r}")
        elem = typing.get_args(tp)[0]
        return tuple(coerce(v, elem, f"{key}[{i}]", kind) for i, v in enumerate(value))
    if tp is dict or origin is dict:
        require(isinstance(value, Mapping), f"{key} must be a mapping, got {value!r}")
        return dict(value)
    if tp is bool:
        require(isinstance(value, bool), f"{key} must be true or false, got {value!r}")
        return value
    if tp in (int, float) and isinstance(value, str):
        try:  # a number written as a string (JSON, "3e-4" from an older YAML reader)
            value = float(value.replace("_", ""))
        except ValueError:
            raise ConfigError(f"{key} must be a number, got {value!r}") from None
    if tp is int:
        require(isinstance(value, int) and not isinstance(value, bool)
                or isinstance(value, float) and value.is_integer(),
                f"{key} must be an integer, got {value!r}")
        return int(value)
    if tp is float:
        require(isinstance(value, (int, float)) and not isinstance(value, bool), f"{key} must be a number, got {value!r}")
        require(math.isfinite(value), f"{key} must be finite, got {value!r}")
        return float(value)
    if tp is str:
        require(isinstance(value, str), f"{key} must be a string, got {value!r}")
        return value
    raise ConfigError(f"{key}: unsupported type {getattr(tp, '__name__', tp)}")  # pragma: no cover


def to_dict(cfg: Any) -> dict:
    """Plain dict of builtins (lists, not tuples): YAML-, JSON- and checkpoint-safe."""
    def plain(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v
    return plain(dataclasses.asdict(cfg))
