"""The one config error and the one "did you mean" message.

Every config mistake (a task keyword, a wrapper or sim-to-real profile key, a bundled-PPO
or SB3 setting, a YAML file, a ``key=value`` override) raises :class:`ConfigError` with one
line that says what is wrong and what to write instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ConfigError(ValueError, TypeError):
    """A config key, type or value is invalid; the message is one line that says how to fix it.

    It is both a ``ValueError`` (a bad value) and a ``TypeError`` (an unknown keyword, as
    Python reports one), so code that catches either keeps working.
    """


def closest(key: str, known: Iterable[str]) -> str | None:
    """The known key nearest to ``key`` (``difflib``'s default cutoff 0.6), or ``None``."""
    hits = difflib.get_close_matches(str(key), list(known), n=1)
    return hits[0] if hits else None


def did_you_mean(suggestion: str | None) -> str:
    """``" Did you mean 'x'?"`` or ``""``: the one form every config error uses."""
    return f" Did you mean {suggestion!r}?" if suggestion else ""


def unknown_key_error(kind: str, key: str, known: Iterable[str], *, prefix: str = "",
                      suggestion: str | None = None) -> ConfigError:
    """``unknown <kind> '<prefix><key>'. Did you mean '<prefix><closest>'? Known keys: ...``.

    Args:
        kind: what the key names, e.g. ``"UR5Reach config key"``, ``"profile section"``.
        key: the unknown key.
        known: the keys that exist here (listed sorted).
        prefix: the dotted path of the mapping the key sits in (``"algo."``), shown on the
            key, the suggestion and the known keys' heading.
        suggestion: a full suggestion that replaces the closest known key (e.g. the key
            moved into a sub-mapping: ``"algo_kwargs.learning_rate"``).
    """
    known = sorted(str(k) for k in known)
    if suggestion is None:
        near = closest(key, known)
        suggestion = prefix + near if near else None
    where = f" in {prefix.rstrip('.')}" if prefix else ""
    return ConfigError(f"unknown {kind} {prefix + str(key)!r}.{did_you_mean(suggestion)} "
                       f"Known keys{where}: {', '.join(known)}")


def check_keys(data: Iterable[str], known: Iterable[str], kind: str, prefix: str = "") -> None:
    """Every key of ``data`` is in ``known``; else the :func:`unknown_key_error` of the first that is not."""
    known = list(known)
    for key in data:
        if key not in known:
            raise unknown_key_error(kind, key, known, prefix=prefix)


def require(condition: bool, message: str) -> None:
    """Raise ``ConfigError(message)`` unless ``condition``."""
    if not condition:
        raise ConfigError(message)


def require_range(name: str, value: tuple[float, float]) -> None:
    """Check a ``(low, high)`` range is a pair with ``low <= high``."""
    require(len(value) == 2, f"{name} must be a (low, high) pair, got {value!r}")
    low, high = float(value[0]), float(value[1])
    require(low <= high, f"{name} must have low <= high, got {value!r}")


def require_timing(sim_dt: float, control_dt: float) -> None:
    """Check positive timesteps and a control period that is a whole number of physics steps."""
    require(sim_dt > 0, f"sim_dt must be > 0, got {sim_dt}")
    require(control_dt > 0, f"control_dt must be > 0, got {control_dt}")
    ratio = control_dt / sim_dt
    require(abs(ratio - round(ratio)) < 1e-6 and round(ratio) >= 1,
            f"control_dt ({control_dt}) must be a whole multiple of sim_dt ({sim_dt})")
