"""Sim-to-real profile files: find, read and resolve ``extends`` chains.

A profile is a YAML mapping of sections (one per wrapper) and meta keys; the packaged
ones live in ``wrappers/profiles/``. This module reads them without importing the
``wrappers`` package (which compiles Numba kernels), so that a robot-side program
(``unilab_envs.deploy``) shares the wrappers' reading of a profile without torch or Numba.
Reading and merging are the one config system's (:mod:`unilab_envs.config`): the same
YAML loader and merge as the trainers' configs. Errors are
:class:`~unilab_envs.config.ConfigError` (a ``ValueError``) or ``FileNotFoundError``, with
one line that says what to use.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Mapping

from unilab_envs.config import ConfigError, deep_merge, read_yaml


def profile_folder() -> Path:
    """The packaged profiles' folder, ``wrappers/profiles`` (found without importing ``wrappers``)."""
    found = importlib.util.find_spec("wrappers")
    if found is None or not found.submodule_search_locations:
        raise ConfigError("the wrappers package (and its profiles) is not installed; pass the path of a profile YAML")
    return Path(list(found.submodule_search_locations)[0]) / "profiles"


def profile_names() -> list[str]:
    """Names of the packaged profiles."""
    return sorted(p.stem for p in profile_folder().glob("*.yaml"))


def read_profile(profile: str | Path) -> dict[str, Any]:
    """One profile file's mapping (``extends`` not followed): a packaged name or a YAML path."""
    path = Path(profile)
    if isinstance(profile, str) and profile in profile_names():
        return read_yaml(profile_folder() / f"{profile}.yaml", "profile file")
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"profile file {str(path)!r} does not exist")
        return read_yaml(path, "profile file")
    raise ConfigError(f"unknown sim-to-real profile {str(profile)!r}; use one of {profile_names()} "
                      f"or the path of a YAML file")


def resolve_profile(profile: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The profile with its ``extends`` chain followed (parents first, the child on top)."""
    data = dict(profile) if isinstance(profile, Mapping) else read_profile(profile)
    seen: list[str] = []
    while data.get("extends"):
        parent = data.pop("extends")
        if parent in seen:
            raise ConfigError(f"profile 'extends' loops through {seen + [parent]}")
        seen.append(parent)
        data = deep_merge(read_profile(parent), data)
    data.pop("extends", None)
    return data
