"""From an identification to the sim-to-real profile a policy is fine-tuned under.

``unilab robot identify`` writes what explains a robot's log (``--summary FIT.json``: ``friction``,
``payload_kg``, ...). ``unilab adapt --identified FIT.json`` fine-tunes under a profile built on the
``--sim2real`` one with its floor made the identified floor: :func:`identified_profile` sets
``domain_randomization.friction`` to the fit widened by its stated error (``spread``: the range
``[fit (1 - spread), fit (1 + spread)]``) and, when a payload was fitted, ``added_mass`` to the
payload +- ``payload_spread_kg``. Everything else of the base profile (noise, latency, pushes, its
other randomized ranges) is kept, so the policy keeps what made it robust.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping


class IdentifiedError(ValueError):
    """The fit or the base profile cannot make a profile; the message says why and what to do."""


def load_fit(path: str | Path) -> dict[str, Any]:
    """The JSON ``unilab robot identify --summary`` wrote; :class:`IdentifiedError` in one line otherwise."""
    path = Path(path)
    try:
        fit = json.loads(path.read_text())
    except FileNotFoundError:
        raise IdentifiedError(f"{path} does not exist: pass the JSON `unilab robot identify LOG --policy P --summary "
                              f"FIT.json` wrote") from None
    except (OSError, json.JSONDecodeError) as e:
        raise IdentifiedError(f"{path} is not an identification summary ({e.__class__.__name__}): pass the JSON "
                              f"`unilab robot identify --summary` wrote") from None
    if not isinstance(fit, dict) or not isinstance(fit.get("friction"), (int, float)) or not fit["friction"] > 0:
        raise IdentifiedError(f"{path} has no positive 'friction': pass the JSON `unilab robot identify --summary` wrote")
    return fit


def identified_profile(base: str | Mapping[str, Any] | None, fit: Mapping[str, Any], spread: float = 0.2,
                       payload_spread_kg: float = 1.0) -> dict[str, Any]:
    """``base`` (a profile name, YAML path or mapping, as ``--sim2real`` takes) with the identified floor friction
    drawn from ``[friction (1 - spread), friction (1 + spread)]`` and, when ``fit['payload_kg']`` is not 0, the added
    mass from ``payload +- payload_spread_kg``; the fit's other parameters are left to the base profile."""
    if base is None:
        raise IdentifiedError("--identified builds on a profile: give --sim2real PROFILE too (the one the policy was "
                              "trained under, e.g. go1_real)")
    if not 0 <= spread < 1:
        raise IdentifiedError(f"the friction spread must be in [0, 1), got {spread}")
    if not payload_spread_kg >= 0:
        raise IdentifiedError(f"the payload spread must be >= 0 kg, got {payload_spread_kg}")
    mu = float(fit["friction"])
    ranges: dict[str, list[float]] = {"friction": [round(mu * (1 - spread), 4), round(mu * (1 + spread), 4)]}
    payload = float(fit.get("payload_kg") or 0.0)
    if payload:
        ranges["added_mass"] = [round(payload - payload_spread_kg, 3), round(payload + payload_spread_kg, 3)]
    profile = {"extends": str(base)} if isinstance(base, (str, Path)) else {k: v for k, v in base.items()}
    section = dict(profile.get("domain_randomization") or {})
    profile["domain_randomization"] = {**section, **ranges}
    return profile
