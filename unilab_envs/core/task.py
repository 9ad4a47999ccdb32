"""The task contract: what the batched core asks of one robot task.

A task owns its MuJoCo model, its typed config and its Numba kernels. The core
(:class:`~unilab_envs.core.vector_env.UniLabVectorEnv`) owns the batch, the
output arrays, episode counters, RNG streams and autoreset. Shapes, with ``N``
envs, ``O`` observation floats, ``P`` privileged floats, ``A`` actions and ``K``
reward terms:

================  =================  ============================================
array             shape / dtype      meaning
================  =================  ============================================
actions           (N, A) float32     policy output in [-1, 1]
obs               (N, O) float32     policy observation, SI units
privileged_obs    (N, P) float32     critic-only observation (P may be 0)
reward_terms      (N, K) float32     weighted contribution of each named term
reward            (N,) float32       sum of ``reward_terms`` along K
terminated        (N,) bool          failure (a fall); no bootstrap
episode_step      (N,) int64         control steps since the episode started
rng               (N,) uint64        per-env stream (see ``core.rng``)
================  =================  ============================================

The weights of the terms are ``scale * control_dt`` (as legged_gym), so the
return is in "reward per second of good behaviour" units whatever the rate.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from unilab_envs.core.state import copy_attributes, restore_attributes


#: what a task's policy is commanded (:attr:`DeployFacts.command`)
COMMAND_KINDS = ("velocity", "reach_target", "grasp", "motion")


@dataclass(frozen=True)
class DeployFacts:
    """What a task's deploy spec needs that its model and config do not say (:meth:`Task.deploy_facts`).

    ``command`` sets the spec's action mode and its command, episode and gait sections:

    * ``"velocity"``: a legged joystick (a ``LocomotionTask``): actions are joint targets around
      the home pose, the command is (vx, vy, yaw_rate), a gait clock with ``phase_offsets``;
    * ``"reach_target"``: an arm brings ``ee_site`` to a target point (UR5Reach's config keys):
      actions move the joint targets, the command is (radius, azimuth, height) about the base,
      the azimuth measured from ``front_azimuth``;
    * ``"grasp"``: pick and lift (UR5Grasp's config and scene): actions move the ``ee_site``
      target through the spec's ``grasp`` section;
    * ``"motion"``: motion tracking (G1Track's config): actions are joint targets around the home
      pose, the command is a clip of the spec's ``motion`` section (the task's ``motion_section()``).
    """

    command: str
    joint_names: tuple[str, ...]  # the actuated joints, in action order
    mjcf: str | Path  # the task's own MJCF: its config class's default ``model_path``
    phase_offsets: tuple[float, ...] = ()  # "velocity": per foot, the gait phase (rad)
    ee_site: str | None = None  # arms: the end-effector site
    target_body: str | None = None  # "reach_target": the target's mocap body (a model without it shows none)
    front_azimuth: float = 0.0  # "reach_target": azimuth (rad) of the arm's front, the zero of the command's

    def __post_init__(self) -> None:
        if self.command not in COMMAND_KINDS:
            raise ValueError(f"DeployFacts.command must be one of {COMMAND_KINDS}, got {self.command!r}")
        if not self.joint_names:
            raise ValueError("DeployFacts.joint_names must name the actuated joints, in action order")
        if self.command == "velocity" and not self.phase_offsets:
            raise ValueError("DeployFacts of a velocity task need phase_offsets (one gait phase per foot)")


class Task(abc.ABC):
    """One robot task over a ``mujoco.batch.Batch``; subclasses fill the hooks."""

    #: observation groups: name -> slice of the observation (wrappers use them)
    obs_groups: dict[str, slice]
    #: the critic's privileged observation groups: name -> slice of ``privileged_obs``
    privileged_obs_groups: dict[str, slice] = {}
    #: the declarations (:class:`~unilab_envs.core.obs_groups.ObsGroup`: units, meaning, writer, robot-side
    #: builder, noise) of the groups of both observations, by name: the deploy spec's groups and the
    #: default observation noise read them
    declared_groups: dict[str, Any] = {}
    #: names of the reward terms, in kernel order
    reward_names: tuple[str, ...]
    #: name of the body the tracking camera follows
    tracking_body: str = "world"
    #: the task keywords ``unilab eval`` evaluates with, over the run's own (G1Track: every episode from a clip's
    #: first frame, so an episode is one whole clip)
    evaluation_kwargs: Mapping[str, Any] = {}
    #: per-env ``info`` keys whose mean over each evaluated episode ``unilab eval`` reports (G1Track: the body
    #: position and joint errors)
    episode_metrics: tuple[str, ...] = ()
    #: a per-env ``info`` key whose value sorts evaluated episodes into groups, one report line each; the value
    #: indexes :attr:`episode_group_names` (G1Track: ``clip``)
    episode_group: str | None = None
    #: per-env arrays (set in :meth:`bind`) that carry over from one step to the next:
    #: what :meth:`get_state` saves for an exact resume (commands, gait phase, last actions...)
    state_names: tuple[str, ...] = ()

    def __init__(self, model: mujoco.MjModel, config: Any) -> None:
        self.model = model
        self.config = config

    @property
    def episode_group_names(self) -> tuple[str, ...]:
        """The names :attr:`episode_group`'s values index (none without groups)."""
        return ()

    # --- sizes and timing -------------------------------------------------
    @property
    @abc.abstractmethod
    def obs_size(self) -> int: ...

    @property
    def privileged_obs_size(self) -> int:
        return 0

    @property
    @abc.abstractmethod
    def action_size(self) -> int: ...

    @property
    def control_dt(self) -> float:
        return float(self.config.control_dt)

    @property
    def frame_skip(self) -> int:
        return int(round(self.config.control_dt / self.model.opt.timestep))

    @property
    @abc.abstractmethod
    def reward_weights(self) -> np.ndarray:
        """``(K,)`` float64 weights, ``scale * control_dt``, in ``reward_names`` order."""

    @property
    def step_stage(self) -> int:
        """Forward stage computed after each control step (``mujoco.mjtStage``).

        Derived fields (``site_xpos``, ``sensordata``...) are one substep behind
        the state after ``Batch.step``; a task whose observation needs them
        current returns ``mjSTAGE_POS`` (kinematics) or ``mjSTAGE_VEL`` here, at
        the cost of that extra computation. State fields (``qpos``, ``qvel``)
        are always current.
        """
        return int(mujoco.mjtStage.mjSTAGE_NONE)

    @property
    def reset_keyframe(self) -> int:
        """Keyframe id the batch resets to before :meth:`reset_envs` randomizes."""
        return 0

    # --- lifecycle ---------------------------------------------------------
    @abc.abstractmethod
    def bind(self, batch, num_envs: int) -> None:
        """Bind the live batch arrays and preallocate per-env task state."""

    @abc.abstractmethod
    def apply_actions(self, actions: np.ndarray) -> None:
        """Write controls from ``(N, A)`` actions, in place (Numba)."""

    @abc.abstractmethod
    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        """After physics: observations, reward terms, reward, terminations (one fused pass)."""

    @abc.abstractmethod
    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        """Randomize the initial state of rows ``ids`` (already reset to the keyframe)."""

    @abc.abstractmethod
    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        """Write the observations of rows ``ids`` (after a reset)."""

    def get_state(self) -> dict[str, np.ndarray]:
        """Copies of the per-env arrays named in :attr:`state_names`."""
        return copy_attributes(self, self.state_names)

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Write a :meth:`get_state` result back (in place; shapes must match)."""
        restore_attributes(self, self.state_names, state, f"{type(self).__name__} task state")

    def task_info(self) -> dict[str, np.ndarray]:
        """Extra per-env arrays for ``info`` (e.g. ``is_success``); default none."""
        return {}

    def scripted_action(self, obs: np.ndarray) -> np.ndarray:
        """A scripted controller's ``(N, A)`` actions in the action box for ``(N, obs_size)`` policy observations:
        the demonstrations an off-policy run's ``algo.demonstrations`` puts in its replay buffer. Stateless (from
        the observation alone). Default: ``NotImplementedError`` (the task has none; UR5Grasp has one)."""
        raise NotImplementedError(f"{type(self).__name__} has no scripted controller (Task.scripted_action)")

    def deploy_facts(self) -> DeployFacts:
        """What ``unilab export`` / ``play`` need to write this task's deploy spec beyond its model and
        config (:class:`DeployFacts`); ``LocomotionTask`` and the arm tasks give theirs. Default: a
        :class:`~unilab_robot.deploy.SpecError` that says to implement it."""
        from unilab_robot.deploy.sections import SpecError

        name = type(self).__name__
        raise SpecError(f"{name} has no deploy spec: implement {name}.deploy_facts() returning a "
                        f"unilab_envs.core.task.DeployFacts (command kind, joint names in action order, MJCF ...) "
                        f"so unilab export / play can build it")
