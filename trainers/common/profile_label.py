"""Short words for a ``sim2real`` setting: what training's header and the first line of ``unilab eval`` say.

A run's ``sim2real`` is ``None`` (the bare env), a profile name or YAML path, or an inline
mapping that usually ``extends`` a packaged profile and widens some of its sections. The
last is easy to mistake for its base profile (``policies/g1_joystick_real`` trained under
``g1_real`` with wider randomization): :func:`profile_label` names the base and the
sections the run changed, and :func:`evaluation_profile` says which profile an evaluation
runs under and how to pick another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def profile_label(sim2real: Any) -> str:
    """``none``, the profile's name or path, or ``g1_real with its own a, b`` for an inline mapping (a resolved
    ``Profile`` is named by what it was resolved from, its ``source``)."""
    from unilab_robot.profiles import Profile

    if isinstance(sim2real, Profile):
        sim2real = sim2real.source
    if sim2real is None:
        return "none"
    if isinstance(sim2real, Mapping):
        base = sim2real.get("extends")
        changed = [str(k) for k in sim2real if k != "extends"]
        if base is None:
            return f"an inline profile ({', '.join(changed) or 'empty'})"
        return f"{base} with its own {', '.join(changed)}" if changed else str(base)
    return str(sim2real)


def evaluation_profile(requested: str | None, trained: Any) -> str:
    """Which profile ``unilab eval`` runs under: ``requested`` is ``--sim2real`` (``None``: not given,
    the run's own profile), ``trained`` the run's ``sim2real``. One phrase, e.g.
    ``sim2real: g1_real``, ``run's own profile: g1_real with its own ...``, ``sim2real: none``."""
    if requested is not None:
        if requested.strip().lower() in ("none", "null", ""):
            return "sim2real: none (the bare env)"
        return f"sim2real: {requested}"
    if trained is None:
        return "sim2real: none (the run trained on the bare env; --sim2real PROFILE to add one)"
    text = f"run's own profile: {profile_label(trained)}"
    if isinstance(trained, Mapping) and "curriculum" in trained:
        text += " at full strength (curriculum left out)"
    base = trained.get("extends") if isinstance(trained, Mapping) else None
    others = f"--sim2real {base} for the packaged profile, none" if base else "--sim2real none"
    return f"{text} ({others} for the bare env)"
