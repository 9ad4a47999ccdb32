"""Sim-to-real profile files: find, read and resolve ``extends`` chains.

A profile is a YAML mapping of sections (one per wrapper) and meta keys; the packaged
ones live beside this module (``unilab_robot/profiles/*.yaml``), so that a robot-side program
(``unilab_robot.deploy.sim2real``) reads them on a robot's computer without torch or Numba, and
the training wrappers (:class:`wrappers.Sim2Real`) read the same files through these functions.
Reading and merging are the one config system's (:mod:`unilab_robot.config`): the same
YAML loader and merge as the trainers' configs. Errors are
:class:`~unilab_robot.config.ConfigError` (a ``ValueError``) or ``FileNotFoundError``, with
one line that says what to use.

:mod:`unilab_robot.profiles.profile` holds the rules over these files: the one table of sections and
their keys (``SECTION_KEYS``), ``resolve`` and the frozen ``Profile`` every consumer takes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from unilab_robot.config import ConfigError, deep_merge, read_yaml


def profile_folder() -> Path:
    """The packaged profiles' folder, ``unilab_robot/profiles``."""
    return Path(__file__).resolve().parent


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


# the typed profile and the one table of the rules (below the readers above, which it uses)
from unilab_robot.profiles.profile import (  # noqa: E402
    CHANNEL_KEYS, CURRICULUM_KEYS, META_KEYS, OPTION_KEYS, SECTION_KEYS, Profile, profiles_for, resolve,
)
