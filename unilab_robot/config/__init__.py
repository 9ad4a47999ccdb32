"""One config system for tasks, wrappers, sim-to-real profiles and both trainers.

A config is a frozen dataclass whose ``__post_init__`` (or ``validate()``) checks its
values with :func:`require`. Settings arrive as mappings and are layered with one merge,
read from YAML with one loader and from the command line with one ``key=value`` parser:

* :func:`build_config` (keywords from code: tasks, wrappers) and :func:`from_dict`
  (settings read from text: trainer configs, checkpoints) build the dataclass;
* :func:`deep_merge` layers mappings (later wins, sub-mappings merge, ``None`` replaces);
* :func:`read_yaml` / :func:`load_yaml` read YAML (``1e-3`` is a float);
* :func:`parse_overrides` turns ``algo.gamma=0.9`` into ``{"algo": {"gamma": 0.9}}``.

Every mistake raises :class:`ConfigError` (a ``ValueError`` and a ``TypeError``) with one
line; an unknown key says ``unknown <kind> '<key>'. Did you mean '<closest>'? Known keys: ...``.
"""

from unilab_robot.config.errors import (ConfigError, check_keys, closest, did_you_mean, require, require_range,
                                       require_timing, unknown_key_error)
from unilab_robot.config.merge import deep_merge
from unilab_robot.config.typed import build_config, coerce, field_names, from_dict, to_dict
from unilab_robot.config.yaml_io import ConfigLoader, load_yaml, parse_overrides, read_yaml, yaml_problem

__all__ = ["ConfigError", "ConfigLoader", "build_config", "check_keys", "closest", "coerce", "deep_merge",
           "did_you_mean", "field_names", "from_dict", "load_yaml", "parse_overrides", "read_yaml", "require",
           "require_range", "require_timing", "to_dict", "unknown_key_error", "yaml_problem"]
