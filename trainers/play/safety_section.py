"""Which safety section ``unilab play --safety`` runs, and where it came from."""

from __future__ import annotations

from unilab_robot.deploy import DeploySpec, SpecError
from unilab_robot.deploy.sim2real import load_play_profile

SAFETY_OFF = ("off", "none", "no")


def play_safety(flag: str | None, spec: DeploySpec, profile: dict | None, profile_name=None) -> tuple:
    """``(safety section or None, where it came from)`` for ``unilab play --safety FLAG``.

    ``None`` (no ``--safety``): the ``--sim2real`` profile's section, else the deploy spec's,
    else no guard. ``"on"`` (a bare ``--safety``): the same, else the defaults. ``"default"``:
    the defaults. ``"off"``: no guard. Anything else: a profile name or YAML whose ``safety``
    section to run.
    """
    if flag is not None and flag.strip().lower() in SAFETY_OFF:
        return None, None
    if flag is None or flag == "on":
        if profile is not None and profile.get("safety") is not None:
            return profile["safety"], f"the --sim2real profile {profile_name}"
        if getattr(spec, "safety", None) is not None:
            return spec.safety, "the deploy spec"
        return (None, None) if flag is None else ({}, "defaults")
    if flag == "default":
        return {}, "defaults"
    section = load_play_profile(flag).get("safety")
    if section is None:
        raise SpecError(f"--safety {flag}: that profile has no safety section; give a profile with one, "
                        f"'default', or a bare --safety")
    return section, f"profile {flag}"


def guard_line(flag: str | None, source: str | None, action_mode: str) -> str:
    """The line ``unilab play`` prints first: whether the safety guard runs, whose section, and how to change it."""
    if source is not None:
        return f"safety guard: on ({source}'s section; --safety off runs without it)"
    if flag is not None and flag.strip().lower() in SAFETY_OFF:
        return "safety guard: OFF (--safety off)"
    if action_mode != "home_offset":
        return f"safety guard: off (it maps home_offset joint targets; these actions are {action_mode})"
    return ("safety guard: OFF (the deploy spec carries no safety section: re-export with `unilab export RUN`, "
            "or --safety runs the defaults)")
