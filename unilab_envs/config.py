"""The one config system (:mod:`unilab_robot.config`), under the name tasks, wrappers and trainers import it by.

It lives at the bottom of the import graph, in the robot-side package, because the deploy spec, the safety
guard and the profile files read their settings with it on a robot's computer too; see that module for
:func:`build_config`, :func:`from_dict`, :func:`deep_merge`, :func:`read_yaml` and :class:`ConfigError`.
"""

from unilab_robot.config import (ConfigError, ConfigLoader, build_config, check_keys, closest, coerce, deep_merge,
                                 did_you_mean, field_names, from_dict, load_yaml, parse_overrides, read_yaml, require,
                                 require_range, require_timing, to_dict, unknown_key_error, yaml_problem)

__all__ = ["ConfigError", "ConfigLoader", "build_config", "check_keys", "closest", "coerce", "deep_merge",
           "did_you_mean", "field_names", "from_dict", "load_yaml", "parse_overrides", "read_yaml", "require",
           "require_range", "require_timing", "to_dict", "unknown_key_error", "yaml_problem"]
