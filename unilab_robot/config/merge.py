"""The one merge of config layers (defaults <- files <- flags <- overrides, profile ``extends``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``top`` over ``base``; where both hold a mapping, those merge the same way.

    Any other value of ``top`` (a list, a scalar, ``None``) replaces ``base``'s. Neither
    input is changed, nor shares nested containers with the result; mappings come out
    as plain dicts.
    """
    out = _copy(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = _copy(value)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return copy.deepcopy(value)
