"""The UR5 tasks' fused step and observe kernels, generated from their reward terms and observation groups.

:func:`reach_kernel` and :func:`grasp_kernel` each write one module
(:mod:`unilab_envs.core.generated`) whose ``compute`` is the task's fused ``prange`` pass: per
env, the task's quantities (``reach_quantities`` of :mod:`~unilab_envs.tasks.ur5_reach`,
``grasp_quantities`` of :mod:`~unilab_envs.tasks.ur5_grasp_kernels`), then each term inlined
whose weight is not 0 (one whose weight is 0 is left out of the kernel: never evaluated) into
``reward_terms[i, k]``, the reward their sum in declaration order, then the termination and
success, then one writer call per observation group at the group's columns
(:func:`observation_source`). Its ``observe`` writes the groups of rows ``ids`` after a reset:
the same quantities, from the reset state, and the same writer calls. The arguments of
``compute`` are the task's kernel arguments plus ``weights`` (``(K,)`` float64, ``scale *
control_dt``) and ``term_params`` (``(K, P)`` float64,
:meth:`~unilab_envs.core.reward_terms.ResolvedTerms.param_table`); those of ``observe`` are
``ids, obs, privileged_obs`` and the task's state arguments of ``compute``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from unilab_envs.core.generated import generated_module
from unilab_envs.core.obs_groups import ObsGroup, writer_call
from unilab_envs.core.reward_terms import RewardTerm, term_assignments
from unilab_envs.tasks.arm_groups import slices

REACH_QUANTITIES = ("i", "qpos", "qvel", "site_xpos", "site", "joint_q", "joint_d", "home", "soft_low", "soft_high",
                    "joint_target", "target", "last_action", "previous_action", "threshold", "fine_std",
                    "dist", "succeeded", "action_rate_sq", "joint_vel_sq", "limits")  # fmt: skip
"""What a UR5Reach reward term may read, by argument name (besides ``weight`` and its params):

- ``i`` the env's row; the batch arrays ``qpos qvel site_xpos`` and ``site`` (the end-effector
  site), ``joint_q joint_d`` (the arm joints' qpos / dof addresses), ``home soft_low soft_high``
  (``(6,)`` rad), the task's ``joint_target target last_action previous_action`` rows;
  ``threshold`` (``success_threshold``) and ``fine_std`` from the config;
- ``dist`` end effector to target (m), ``succeeded`` (``dist < threshold``), ``action_rate_sq``
  (sum of squared action changes), ``joint_vel_sq`` (sum of squared joint velocities), ``limits``
  (radians beyond the soft limits).
"""

REACH_OBS_QUANTITIES = REACH_QUANTITIES
"""What a UR5Reach observation writer may read, by argument name (after ``out``): the names of
:data:`REACH_QUANTITIES`. In the step the writers run after the terms (``dist`` and the rest are
the terms'); after a reset (``observe``) the same quantities are computed from the reset state
(``last_action`` and ``previous_action`` 0).
"""

GRASP_QUANTITIES = ("i", "qpos", "qvel", "site_xpos", "site_xquat", "xpos", "sensordata", "body_mass", "geom_friction",
                    "arm_q", "arm_d", "home", "ee_target", "last_action", "previous_action", "hold_steps", "ix", "fp",
                    "reach_std", "lift_target", "hold_target", "dist", "touching", "grasped", "height", "holding",
                    "held_before", "succeeded", "action_rate_sq", "off_table")  # fmt: skip
"""What a UR5Grasp reward term may read, by argument name (besides ``weight`` and its params):

- ``i`` the env's row; the batch arrays ``qpos qvel site_xpos site_xquat xpos sensordata body_mass
  geom_friction``, ``arm_q arm_d home``, the task's ``ee_target last_action previous_action
  hold_steps`` (this step's, already counted), ``ix`` / ``fp`` the packed indices and parameters
  (:mod:`~unilab_envs.tasks.ur5_grasp_kernels`); ``reach_std lift_target`` (m) from the config and
  ``hold_target`` (steps a hold needs to succeed, a float);
- ``dist`` pinch point to cube centre (m), ``touching`` (both pads touch the cube), ``grasped``
  (touching and ``dist`` within half an edge), ``height`` of the cube's bottom above the table (m),
  ``holding`` (grasped at >= ``success_height``), ``held_before`` (steps held before this one, an
  int), ``succeeded`` (the hold reached ``hold_target``), ``action_rate_sq``, ``off_table``.
"""

GRASP_OBS_QUANTITIES = (*GRASP_QUANTITIES, "xanchor", "xaxis", "joint_ids", "site", "joint_q", "joint_d")
"""What a UR5Grasp observation writer may read, by argument name (after ``out``): the names of
:data:`GRASP_QUANTITIES`, and the batch arrays ``xanchor xaxis``, ``joint_ids`` (the arm joints'
ids), ``site`` (the pinch site, ``ix[IX_PINCH]``), ``joint_q joint_d`` (``arm_q arm_d`` under
UR5Reach's names: the groups both tasks have read them). In the step the writers run after the
terms (``hold_steps`` is this step's, counted); after a reset (``observe``) the quantities are
computed from the reset state, the hold not counted (``hold_steps`` 0).
"""

_PACKAGE = Path(__file__).parent
_DEPENDS = (_PACKAGE / "arm_groups.py", _PACKAGE.parent / "core" / "prefetch.py")  # inlined into every arm kernel

_REACH_TEMPLATE = '''"""Generated by unilab_envs.tasks.arm_reward_kernel for UR5Reach's reward terms: {names}.

Do not edit: the file is rewritten under another name whenever the terms or the observation groups change.
"""

import numba as nb

from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.tasks.ur5_reach import reach_quantities


@nb.njit(parallel=True, cache=True)
def compute(obs, privileged_obs, reward_terms, reward, terminated, success, qpos, qvel, site_xpos, joint_q, joint_d, site,
            home, soft_low, soft_high, joint_target, target, last_action, previous_action, weights, term_params, threshold,
            fine_std):
    if obs.shape[1] != {obs_width} or privileged_obs.shape[1] != {privileged_width}:
        raise ValueError("obs / privileged_obs are not as wide as the task's observation groups")
    for i in nb.prange(obs.shape[0]):
        prefetch_row(qpos, i + PREFETCH_DISTANCE)  # qpos / qvel are rows of the batch state, far apart
        prefetch_row(qvel, i + PREFETCH_DISTANCE)
        dist, succeeded, action_rate_sq, joint_vel_sq, limits = reach_quantities(
            i, qpos, qvel, site_xpos, joint_q, joint_d, site, soft_low, soft_high, target, last_action, previous_action,
            threshold)
{terms}
        reward[i] = total
        terminated[i] = False
        success[i] = succeeded
{writes}


@nb.njit(parallel=True, cache=True)
def observe(ids, obs, privileged_obs, qpos, qvel, site_xpos, joint_q, joint_d, site, home, soft_low, soft_high,
            joint_target, target, last_action, previous_action, threshold, fine_std):
    """The observations of rows ``ids`` after a reset: the quantities from the reset state, every group written."""
    if obs.shape[1] != {obs_width} or privileged_obs.shape[1] != {privileged_width}:
        raise ValueError("obs / privileged_obs are not as wide as the task's observation groups")
    for k in nb.prange(ids.shape[0]):
        i = ids[k]
        dist, succeeded, action_rate_sq, joint_vel_sq, limits = reach_quantities(
            i, qpos, qvel, site_xpos, joint_q, joint_d, site, soft_low, soft_high, target, last_action, previous_action,
            threshold)
{writes}
'''

_GRASP_TEMPLATE = '''"""Generated by unilab_envs.tasks.arm_reward_kernel for UR5Grasp's reward terms: {names}.

Do not edit: the file is rewritten under another name whenever the terms or the observation groups change.
"""

import numba as nb

from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row
from unilab_envs.tasks.ur5_grasp_kernels import FP_HOLD_STEPS, FP_LIFT_TARGET, FP_REACH_STD, IX_PINCH, grasp_quantities


@nb.njit(parallel=True, cache=True)
def compute(obs, privileged_obs, reward_terms, reward, terminated, success, hold_steps, qpos, qvel, site_xpos,
            site_xquat, xpos, xanchor, xaxis, sensordata, body_mass, geom_friction, arm_q, arm_d, joint_ids, home,
            ee_target, last_action, previous_action, weights, term_params, ix, fp):
    reach_std, lift_target, hold_target = fp[FP_REACH_STD], fp[FP_LIFT_TARGET], fp[FP_HOLD_STEPS]
    site, joint_q, joint_d = ix[IX_PINCH], arm_q, arm_d  # the names the writers of both arm tasks' groups read
    if obs.shape[1] != {obs_width} or privileged_obs.shape[1] != {privileged_width}:
        raise ValueError("obs / privileged_obs are not as wide as the task's observation groups")
    for i in nb.prange(obs.shape[0]):
        prefetch_row(qpos, i + PREFETCH_DISTANCE)
        prefetch_row(qvel, i + PREFETCH_DISTANCE)
        dist, touching, grasped, height, holding, held_before, held, succeeded, action_rate_sq, off_table = grasp_quantities(
            i, qpos, site_xpos, sensordata, hold_steps, last_action, previous_action, ix, fp)
        hold_steps[i] = held
{terms}
        reward[i] = total
        terminated[i] = succeeded or off_table
        success[i] = succeeded
{writes}


@nb.njit(parallel=True, cache=True)
def observe(ids, obs, privileged_obs, hold_steps, qpos, qvel, site_xpos, site_xquat, xpos, xanchor, xaxis, sensordata,
            body_mass, geom_friction, arm_q, arm_d, joint_ids, home, ee_target, last_action, previous_action, ix, fp):
    """The observations of rows ``ids`` after a reset: the quantities from the reset state (the hold not
    counted), every group written."""
    reach_std, lift_target, hold_target = fp[FP_REACH_STD], fp[FP_LIFT_TARGET], fp[FP_HOLD_STEPS]
    site, joint_q, joint_d = ix[IX_PINCH], arm_q, arm_d
    if obs.shape[1] != {obs_width} or privileged_obs.shape[1] != {privileged_width}:
        raise ValueError("obs / privileged_obs are not as wide as the task's observation groups")
    for k in nb.prange(ids.shape[0]):
        i = ids[k]
        dist, touching, grasped, height, holding, held_before, held, succeeded, action_rate_sq, off_table = grasp_quantities(
            i, qpos, site_xpos, sensordata, hold_steps, last_action, previous_action, ix, fp)
{writes}
'''


def terms_source(terms: tuple[RewardTerm, ...], active: tuple[bool, ...], quantities: tuple[str, ...], indent: int = 8) -> str:
    """Source of the term block: term ``k`` into ``t<k>`` (0.0, not evaluated, unless ``active[k]``) and
    ``reward_terms[i, k]``, then ``total``, their sum in declaration order."""
    lines = term_assignments(terms, active, quantities)
    lines += [f"reward_terms[i, {k}] = t{k}" for k in range(len(terms))]
    lines += ["total = 0.0", *(f"total += t{k}" for k in range(len(terms)) if active[k])]
    return "\n".join(" " * indent + line for line in lines)


class ObservationWrites(NamedTuple):
    """The generated observation writes of a task's groups (:func:`observation_source`)."""

    source: str  #: env ``i``'s writes, for the row loops of ``compute`` and ``observe``
    bindings: dict[str, object]  #: the writers the source names
    widths: tuple[int, int]  #: of the policy's and the critic's observation


def observation_source(policy: tuple[ObsGroup, ...], critic: tuple[ObsGroup, ...], quantities: tuple[str, ...],
                       indent: int = 8) -> ObservationWrites:  # fmt: skip
    """Env ``i``'s observation writes: each group's writer called on its columns, each observation's groups laid
    end to end in order (the columns baked in as constants); a critic group the policy has too is copied from the
    policy's columns. ``TypeError`` naming ``quantities`` for a writer argument none of them.

    The writes open with a test of the buffers' widths that never fails (the kernel checked them before its loop):
    inside the loop it makes them constants to the compiler, and the views' lengths with them (through views of
    unknown length the writes made UR5Reach's step kernel ~20% slower than the hand-positioned writes before them)."""
    in_policy, in_critic = slices(policy), slices(critic)
    widths = (max((c.stop for c in in_policy.values()), default=0), max((c.stop for c in in_critic.values()), default=0))
    guard = f"if obs.shape[1] != {widths[0]} or privileged_obs.shape[1] != {widths[1]}:"
    lines, bindings = [guard, "    continue  # never (checked before the loop): the widths as constants"], {}
    for where, groups, columns in (("obs", policy, in_policy), ("privileged_obs", critic, in_critic)):
        for group in groups:
            cols = columns[group.name]
            if where == "privileged_obs" and group.name in in_policy:
                lines.append(f"for c in range({cols.stop - cols.start}):  # {group.name}: written into the policy's, copied")
                lines.append(f"    privileged_obs[i, {cols.start} + c] = obs[i, {in_policy[group.name].start} + c]")
                continue
            function = f"write_group_{group.name}"
            bindings[function] = group.writer
            lines.append(writer_call(group, f"{where}[i, {cols.start}:{cols.stop}]", quantities, function))
    return ObservationWrites("\n".join(" " * indent + line for line in lines), bindings, widths)


def kernel_source(template: str, terms: tuple[RewardTerm, ...], active: tuple[bool, ...], quantities: tuple[str, ...],
                  writes: ObservationWrites | None = None) -> str:  # fmt: skip
    """The generated module's source: ``template`` with the term block of ``terms`` (``active``: evaluated) and the
    observation ``writes`` (:func:`observation_source`; none: no group)."""
    writes = writes or observation_source((), (), quantities)
    return template.format(names=", ".join(t.name for t in terms), terms=terms_source(terms, active, quantities),
                           writes=writes.source, obs_width=writes.widths[0], privileged_width=writes.widths[1])


def _module(stem: str, template: str, terms: tuple[RewardTerm, ...], active: tuple[bool, ...], quantities: tuple[str, ...],
            writes: ObservationWrites, kernels: str) -> ModuleType:  # fmt: skip
    bindings = {**writes.bindings, **{f"term_{k}": term.func for k, (term, on) in enumerate(zip(terms, active)) if on}}
    return generated_module(stem, kernel_source(template, terms, active, quantities, writes), bindings,
                            depends=(_PACKAGE / kernels, *_DEPENDS))  # fmt: skip


@lru_cache(maxsize=None)
def reach_kernel(terms: tuple[RewardTerm, ...], active: tuple[bool, ...], policy: tuple[ObsGroup, ...],
                 critic: tuple[ObsGroup, ...] = ()) -> ModuleType:  # fmt: skip
    """The generated module for UR5Reach's ``terms`` (``active``: whose weight is not 0) and observation groups
    ``policy`` / ``critic``; its ``compute`` is the step kernel, its ``observe`` writes the observations after a reset."""
    return _module("ur5_reach_step", _REACH_TEMPLATE, terms, active, REACH_QUANTITIES,
                   observation_source(policy, critic, REACH_OBS_QUANTITIES), "ur5_reach.py")  # fmt: skip


@lru_cache(maxsize=None)
def grasp_kernel(terms: tuple[RewardTerm, ...], active: tuple[bool, ...], policy: tuple[ObsGroup, ...],
                 critic: tuple[ObsGroup, ...] = ()) -> ModuleType:  # fmt: skip
    """The generated module for UR5Grasp's ``terms`` (``active``: whose weight is not 0) and observation groups
    ``policy`` / ``critic``; its ``compute`` is the step kernel, its ``observe`` writes the observations after a reset."""
    return _module("ur5_grasp_step", _GRASP_TEMPLATE, terms, active, GRASP_QUANTITIES,
                   observation_source(policy, critic, GRASP_OBS_QUANTITIES), "ur5_grasp_kernels.py")  # fmt: skip
