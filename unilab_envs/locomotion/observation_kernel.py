"""Where a legged task's observation groups go, and the generated source that writes them.

:func:`plan_observation` lays a task's policy and privileged groups end to end (checking
each has a writer and a size the robot gives) into an :class:`ObservationPlan`;
:func:`observation_source` is the source of the generated kernel's
``write_observations(i, obs, privileged_obs, <records>, base, sin_phase, cos_phase)``: one
writer call per group at its columns, written into the step kernel
(:mod:`~unilab_envs.locomotion.reward_kernel`) after the reward, and into its ``observe``
after a reset. A group in both observations is written once, into the policy's, and copied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from unilab_envs.core.obs_groups import ObsGroup, group_slices, writer_call

BASE = ("vx", "vy", "vz", "wx", "wy", "wz", "gx", "gy", "gz", "height")
RECORDS = ("i", "physics", "robot", "legs", "ground", "params", "commands", "f32")
QUANTITIES = (*RECORDS, *BASE, "sin_phase", "cos_phase")
"""What a locomotion observation writer may read, by argument name (after ``out``):

- ``i`` the env's row; ``physics``, ``robot``, ``legs``, ``ground``, ``params``, ``commands``
  the kernel's records (:mod:`~unilab_envs.locomotion.records`); ``f32`` whether the task
  computes in float32 (``params.float32_math``);
- ``vx vy vz`` base linear velocity (body frame), ``wx wy wz`` angular velocity, ``gx gy gz``
  gravity direction (body frame), ``height`` of the base above the ground under it;
- ``sin_phase`` / ``cos_phase`` of the gait clock.

Writers run after the step's command redraw and the feet's update, so ``legs`` holds this
step's contacts, air times and foot heights and the command the policy is asked to follow next.
"""


@dataclass(frozen=True)
class ObservationPlan:
    """A task's groups and their ``(start, stop)`` columns in the policy and privileged observations."""

    policy: tuple[ObsGroup, ...]
    privileged: tuple[ObsGroup, ...]
    policy_spans: tuple[tuple[int, int], ...]
    privileged_spans: tuple[tuple[int, int], ...]

    @property
    def policy_slices(self) -> dict[str, slice]:
        return {g.name: slice(*s) for g, s in zip(self.policy, self.policy_spans)}

    @property
    def privileged_slices(self) -> dict[str, slice]:
        return {g.name: slice(*s) for g, s in zip(self.privileged, self.privileged_spans)}

    @property
    def widths(self) -> tuple[int, int]:
        """Floats in the policy and the privileged observation."""
        return tuple(max((stop for _, stop in spans), default=0) for spans in (self.policy_spans, self.privileged_spans))

    @property
    def groups(self) -> dict[str, ObsGroup]:
        """Every group of either observation, by name."""
        return {g.name: g for g in (*self.policy, *self.privileged)}


def plan_observation(policy: Sequence[ObsGroup], privileged: Sequence[ObsGroup], counts: Mapping[str, int]) -> ObservationPlan:
    """The :class:`ObservationPlan` of a task's resolved groups; ``ValueError`` for a group without a writer,
    a group named twice with two declarations, a writer reading a quantity the layer lacks."""
    seen: dict[str, ObsGroup] = {}
    for group in (*policy, *privileged):
        if group.writer is None:
            raise ValueError(f"observation group {group.name!r} has no writer: a locomotion task's groups are written by "
                             f"their ObsGroup.writer (a Numba function of out and {', '.join(QUANTITIES)})")
        if seen.setdefault(group.name, group) != group:
            raise ValueError(f"two observation groups are named {group.name!r}")
        writer_call(group, "out", QUANTITIES, "writer")  # a TypeError naming the quantities now, not at compile time
    spans = [tuple((s.start, s.stop) for s in group_slices(groups, counts).values()) for groups in (policy, privileged)]
    return ObservationPlan(tuple(policy), tuple(privileged), *spans)


def observation_source(plan: ObservationPlan) -> tuple[str, dict[str, object]]:
    """The source of ``write_observations`` for ``plan`` and the writers it names (the module's bindings)."""
    lines, bindings = [], {}
    policy_at = dict(zip((g.name for g in plan.policy), plan.policy_spans))
    for where, groups, spans in (("obs", plan.policy, plan.policy_spans), ("privileged_obs", plan.privileged, plan.privileged_spans)):
        for group, (start, stop) in zip(groups, spans):
            if where == "privileged_obs" and group.name in policy_at:
                copy_from = policy_at[group.name][0]
                lines.append(f"    for k in range({stop - start}):  # {group.name}: written into the policy's, copied")
                lines.append(f"        privileged_obs[i, {start} + k] = obs[i, {copy_from} + k]")
                continue
            function = f"write_group_{group.name}"
            bindings[function] = group.writer
            lines.append(f"    {writer_call(group, f'{where}[i, {start}:{stop}]', QUANTITIES, function)}")
    source = _WRITE.format(base=", ".join(BASE), writes="\n".join(lines) or "    pass",
                           names=", ".join(g.name for g in plan.policy), privileged=", ".join(g.name for g in plan.privileged),
                           obs_width=plan.widths[0], privileged_width=plan.widths[1])
    return source, bindings


_WRITE = '''
@nb.njit(inline="always", cache=True)
def write_observations(i, obs, privileged_obs, physics, robot, legs, ground, params, commands, f32, base, sin_phase, cos_phase):
    """Policy groups: {names}. Privileged groups: {privileged}."""
    if obs.shape[1] != {obs_width} or privileged_obs.shape[1] != {privileged_width}:
        return  # never (the task checks its arrays' widths): the widths become constants, and the groups' views too
    {base} = base
{writes}
'''
