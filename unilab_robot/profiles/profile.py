"""The typed sim-to-real profile: resolved once, handed to training, eval, export, play and the robot side.

:func:`resolve` is the one implementation of the profile rules: which sections exist and
which keys each accepts (:data:`SECTION_KEYS`, the one table), ``extends`` chains, ``null``
removing a section, ``overrides`` merged on top, and whether a profile fits a task
(:meth:`Profile.check_fits`). It returns a frozen :class:`Profile`, which every consumer takes
as it is (``resolve(profile)`` of a ``Profile`` is that ``Profile``)::

    profile = resolve("go1_real")                                 # a name, a YAML path or a mapping
    Sim2Real(env, profile=profile)                                # the wrappers (wrappers.sim2real)
    PlaySim2Real(profile, spec)                                   # the play-side replay (deploy.sim2real)

A ``Profile`` reads as the resolved mapping (``profile["observation_noise"]``,
``profile.get("env_id")``, ``"packet_loss" in profile``), each value a fresh copy, so no
consumer can change it for the next. What a run stores (its config's ``sim2real``: a name, a
path or a mapping) is :attr:`Profile.source`, unchanged: old runs and shipped policies load as
before. Wrappers check their values (ranges, signs, group names); the keys are checked here,
and a test ties :data:`SECTION_KEYS` to each wrapper's config fields and to the play side.
No torch, no Numba: the robot's computer resolves profiles with this module.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unilab_robot.config import ConfigError, check_keys, deep_merge
from unilab_robot.profiles import profile_names, resolve_profile

#: the one table: profile section -> the keys it accepts, sections in the wrappers' nesting order
#: (innermost first: wrappers.sim2real.SECTIONS follows it). Each tuple is the section's wrapper
#: config's fields (tests/wrappers/test_profile_keys.py checks), except action_latency's: its
#: LatencyConfig also has ``groups``, which only ObservationLatency takes.
SECTION_KEYS: dict[str, tuple[str, ...]] = {
    "domain_randomization": ("friction", "mass_scale", "added_mass", "com_offset", "kp_scale", "kd_scale",
                             "damping_scale", "armature_scale", "frictionloss_scale", "base_body"),
    "random_push": ("mode", "interval_s", "magnitude", "duration_s", "body", "levels"),
    "motor_strength": ("strength", "target", "per_actuator"),
    "action_noise": ("std", "distribution", "mode", "clip"),
    "action_latency": ("delay",),
    "camera_pose": ("position", "rotation", "group"),
    "motion_blur": ("exposure",),
    "depth_noise": ("std_floor", "std_quadratic", "hole_rate", "blob_rate", "blob_size", "edge_threshold",
                    "edge_drop", "invalid_value", "group"),
    "frame_drop": ("drop_rate", "group"),
    "camera_latency": ("delay", "group"),
    "imu_bias_drift": ("bias_std", "drift_std"),
    "observation_noise": ("scales", "distribution", "mode", "level"),
    "observation_latency": ("delay", "groups"),
    "packet_loss": ("observations", "actions"),
    "safety": ("position_fraction", "position_low", "position_high", "max_target_step", "torque_fraction",
               "torque_limit", "max_tilt", "max_joint_velocity", "joint_velocity_steps", "stale_observation_s", "safe_mode",
               "safe_damping", "source"),
}
#: a packet_loss direction's keys (wrappers.packet_loss.ChannelConfig)
CHANNEL_KEYS: tuple[str, ...] = ("model", "loss_rate", "p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad")
#: what a profile says about itself; ``extends`` is followed and gone once resolved
META_KEYS: tuple[str, ...] = ("description", "robot", "env_id", "extends", "sources")
#: training devices over the whole stack: what the critic sees (wrappers.privileged) and the
#: whole-profile curriculum (wrappers.curriculum, its keys CURRICULUM_KEYS when a mapping)
OPTION_KEYS: tuple[str, ...] = ("privileged_critic", "curriculum")
CURRICULUM_KEYS: tuple[str, ...] = ("start", "step", "window", "raise_above", "lower_below")


def _check(data: Mapping[str, Any]) -> None:
    """Section names and each section's keys against the table; one-line ``ConfigError``s."""
    check_keys(data, [*SECTION_KEYS, *META_KEYS, *OPTION_KEYS], "profile section")
    for name, value in data.items():
        keys = SECTION_KEYS.get(name) or (CURRICULUM_KEYS if name == "curriculum" else None)
        if keys is None or not isinstance(value, Mapping):
            continue  # a section that is not a mapping is refused by its consumer, in its own words
        try:
            check_keys(value, keys, f"{name} key")
            if name == "packet_loss":
                for direction, channel in value.items():
                    if isinstance(channel, Mapping):
                        check_keys(channel, CHANNEL_KEYS, "packet_loss channel key", prefix=f"{direction}.")
        except ConfigError as e:
            raise ConfigError(f"profile section {name!r}: {e}") from None


class _ReadOnly(Mapping):
    """A mapping handing out copies of its values, so no consumer can change it for the next: a
    :class:`Profile` (the resolved mapping) and its ``sections`` / ``options``."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = copy.deepcopy(dict(data))

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return repr(self._data)


@dataclass(frozen=True, eq=False)
class Profile(_ReadOnly):
    """A resolved sim-to-real profile (see the module docstring); build it with :func:`resolve`.

    Attributes:
        name: the packaged name or the YAML path it was read from; ``None`` for a mapping.
        source: what was given (a name, a path or a mapping, before ``extends``): what a run stores.
        description, robot, env_id: its meta keys (``None`` when absent).
        sections: section -> its config, in :data:`SECTION_KEYS` order, ``null`` ones gone.
        options: ``privileged_critic`` / ``curriculum`` when set.
    """

    name: str | None
    source: Any
    description: str | None
    robot: str | None
    env_id: str | None
    sections: Mapping[str, Any]
    options: Mapping[str, Any]
    _data: dict[str, Any] = field(repr=False)  # the resolved mapping, read through _ReadOnly's copies

    def __repr__(self) -> str:
        return f"Profile({self.label!r}, sections={list(self.sections)})"

    def as_dict(self) -> dict[str, Any]:
        """The resolved mapping as a plain dict (a deep copy): meta, sections and options."""
        return copy.deepcopy(self._data)

    @property
    def label(self) -> str:
        """The name or path, else ``(inline)``: how messages name it."""
        return self.name if self.name is not None else "(inline)"

    # --- rules -----------------------------------------------------------------------------
    def fits(self, env_id: str | None) -> bool:
        """Whether this profile is for ``env_id`` (a profile or an env without an id fits anything)."""
        return not self.env_id or not env_id or self.env_id == env_id

    def check_fits(self, env_id: str | None, subject: str = "this env is") -> None:
        """``ConfigError`` (one line) when this profile declares an ``env_id`` other than ``env_id``.

        A profile's sections name the bodies and observation groups of one robot, so on another
        robot it would fail deep inside; this says which task it is for and which profiles fit
        ``env_id``. ``subject`` words the other side (``"the policy is for"`` in play).
        """
        if self.fits(env_id):
            return
        label = repr(self.name) if self.name is not None else "(inline)"
        robot = f" (robot {self.robot})" if self.robot else ""
        fits = profiles_for(env_id)
        advice = f"profiles for {env_id}: {', '.join(fits)}" if fits else f"no packaged profile is for {env_id}"
        raise ConfigError(f"sim-to-real profile {label} is for {self.env_id}{robot}, but {subject} {env_id}; "
                          f"{advice} (a profile of your own can 'extends:' one and set env_id: {env_id})")

    def replace(self, overrides: Mapping[str, Any]) -> Profile:
        """This profile with ``overrides`` merged on top (a ``None`` section removed), checked again."""
        return _build(deep_merge(self._data, overrides), self.name, self.source)

    def at_full_strength(self) -> Profile:
        """The profile an evaluation runs: without its ``curriculum``, with ``random_push`` ``levels: 0``
        (pushes from the whole ``magnitude`` range); itself when it has neither."""
        push = self._data.get("random_push") or {}
        if not (isinstance(push, Mapping) and push.get("levels")) and "curriculum" not in self._data:
            return self
        data = {key: value for key, value in self._data.items() if key != "curriculum"}
        if isinstance(push, Mapping) and push.get("levels"):
            data["random_push"] = {**push, "levels": 0}
        return _build(data, self.name, self.source)


def _build(data: Mapping[str, Any], name: str | None, source: Any) -> Profile:
    data = dict(data)
    data.pop("extends", None)
    _check(data)
    data = {key: value for key, value in data.items() if value is not None}
    sections = {key: data[key] for key in SECTION_KEYS if key in data}
    options = {key: data[key] for key in OPTION_KEYS if key in data}
    return Profile(name=name, source=copy.deepcopy(source), description=data.get("description"),
                   robot=data.get("robot"), env_id=data.get("env_id"), sections=_ReadOnly(sections),
                   options=_ReadOnly(options), _data=copy.deepcopy(data))


def resolve(profile: str | Path | Mapping[str, Any] | Profile, overrides: Mapping[str, Any] | None = None) -> Profile:
    """The one way to a :class:`Profile`: a packaged name, a YAML path, a mapping, or a ``Profile`` (itself).

    ``extends`` chains are followed (parents first), ``overrides`` merged on top, section names
    and each section's keys checked against :data:`SECTION_KEYS`, ``null`` sections removed.
    Errors are one line: :class:`~unilab_robot.config.ConfigError` (a ``ValueError`` and a
    ``TypeError``; an unknown profile name, section or key) or ``FileNotFoundError``.
    """
    if isinstance(profile, Profile):
        return profile.replace(overrides) if overrides else profile
    if not isinstance(profile, (str, Path, Mapping)) or (isinstance(profile, str) and not profile.strip()):
        raise ConfigError(f"a sim-to-real profile is a packaged name, a YAML path or a mapping, got {profile!r}")
    name = None if isinstance(profile, Mapping) else str(profile)
    return _build(deep_merge(resolve_profile(profile), overrides or {}), name, profile)


def profiles_for(env_id: str) -> list[str]:
    """The packaged profiles whose ``env_id`` is ``env_id``."""
    return [name for name in profile_names() if resolve(name).env_id == env_id]
