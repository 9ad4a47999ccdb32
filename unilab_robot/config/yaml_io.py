"""YAML for configs: one loader for files and ``key=value`` overrides.

The loader is PyYAML's ``SafeLoader`` that also reads ``1e-3`` and ``2e6`` as floats
(YAML 1.1, PyYAML's dialect, wants ``1.0e-3`` and reads ``1e-3`` as a string), so a
learning rate written the way people write it is a number wherever it appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from unilab_robot.config.errors import ConfigError


class ConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that also resolves ``1e-3`` / ``2E6`` / ``1.5e3`` to floats."""


ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def yaml_problem(error: yaml.YAMLError) -> str:
    """One line for a YAML error: where, then the problem (PyYAML's own text spans lines)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or " ".join(str(error).split())
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + problem


def load_yaml(text: str) -> Any:
    """``text`` parsed with :class:`ConfigLoader` (``yaml.YAMLError`` on bad YAML)."""
    return yaml.load(text, Loader=ConfigLoader)  # a SafeLoader subclass: no arbitrary objects


def read_yaml(path: str | Path, what: str = "config file", hint: str = "") -> dict:
    """The mapping in the YAML file ``path`` (``{}`` when empty); :class:`ConfigError` otherwise.

    ``what`` names the file in messages (``"config file"``, ``"profile file"``); ``hint``
    ends the unreadable-file message (``"check the --config path"``).
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read {what} {path}: {e.strerror}{'; ' + hint if hint else ''}") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{what} {path} is not valid YAML ({yaml_problem(e)}); fix it and retry") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {path} must hold a mapping at top level, got {type(data).__name__}")
    return data


def parse_overrides(items: Iterable[str], example: str = "algo.learning_rate=3e-4") -> dict:
    """``["algo.gamma=0.9", "policy.actor_hidden=[64,64]"]`` -> ``{"algo": {"gamma": 0.9}, ...}``.

    Dotted keys nest; values are YAML (:func:`load_yaml`; an empty value is ``None``); a
    later override of the same key wins. ``example`` shows a valid override in messages.
    """
    out: dict = {}
    for item in items:
        key, sep, raw = item.partition("=")
        parts = [p.strip() for p in key.split(".")]
        if not sep or not all(parts):
            raise ConfigError(f"override {item!r} is not key=value (e.g. {example})")
        try:
            value = load_yaml(raw) if raw.strip() else None
        except yaml.YAMLError as e:
            raise ConfigError(f"override {item!r}: the value is not valid YAML ({yaml_problem(e)}); "
                              f"write lists as [64,64] and quote odd strings: {key.strip()}='\"...\"'") from None
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override of {part!r}")
        node[parts[-1]] = value
    return out
