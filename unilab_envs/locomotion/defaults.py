"""A robot's defaults for a shared config class, as one checked table.

:func:`with_defaults` makes a frozen subclass of a config dataclass whose fields are the
base's (same names, types, order and checks) with the given defaults. An unknown name
fails at import with a suggestion, so a typo cannot add a field that nothing reads.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from typing import Any

from unilab_envs.core.config import unknown_key_error


def with_defaults(base: type, name: str, doc: str, **defaults: Any) -> type:
    """A frozen, keyword-only dataclass ``name`` subclassing ``base`` with ``defaults`` for its fields.

    Nested config values (e.g. a reward-scales instance) must be frozen dataclasses. The
    class belongs to the caller's module, so it pickles and prints as if written there.
    """
    fields = {f.name: f for f in dataclasses.fields(base)}
    spec = []
    for key, value in defaults.items():
        if key not in fields:
            raise unknown_key_error(f"{base.__name__} field", key, list(fields))
        default = dataclasses.field(default_factory=lambda v=value: copy.deepcopy(v)) if isinstance(value, (dict, list)) \
            else dataclasses.field(default=value)  # a mutable default: each config gets its own copy
        spec.append((key, fields[key].type, default))
    cls = dataclasses.make_dataclass(name, spec, bases=(base,), frozen=True, kw_only=True)
    cls.__doc__ = doc
    cls.__module__ = sys._getframe(1).f_globals.get("__name__", cls.__module__)
    return cls
