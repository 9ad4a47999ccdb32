"""Typed, frozen task configs built from user keywords, with clear errors.

The names tasks and wrappers import, from the one config system
(:mod:`unilab_envs.config`): :func:`build_config` makes a config from defaults plus
user keywords, rejects unknown keys (with a suggestion), merges nested dataclasses
given as dicts (``reward_scales={"orientation": -2.0}``) and runs the config's
``validate()``; :func:`require` and friends raise :class:`ConfigError` (a ``ValueError``
and a ``TypeError``).
"""

from unilab_envs.config import (ConfigError, build_config, require, require_range, require_timing,
                                unknown_key_error)

__all__ = ["ConfigError", "build_config", "require", "require_range", "require_timing", "unknown_key_error"]
