"""``UniLab/G1Track-v0``: the G1 follows a human motion clip, many clips per batch (BeyondMimic-style tracking).

The reference is every clip of ``clips`` (default: the 37 retargeted CMU clips shipped in
``unilab_envs/assets/motions/g1``) resampled to the 50 Hz control rate (positions linearly, quaternions by slerp)
and laid end to end (:mod:`unilab_envs.motion.reference`); each env follows one clip from one frame. A reset
draws a clip segment (``segment_s`` long) and a start frame in it: ``sampling_uniform`` of the probability is
spread over all start frames alike, the rest follows each segment's decaying count of failures (terminations
in it; ``sampling_decay`` per step), so the segments where the policy falls are drawn more (adaptive
sampling; the counts are task state, saved by ``get_state``). The robot starts exactly on the reference frame
(reference-state initialization): root pose from the anchor body (the pelvis), joints from ``joint_pos`` (plus
``reset_joint_noise``), velocities from the reference. ``start="uniform"`` draws start frames uniformly,
``start="clip_start"`` draws a clip uniformly and starts at its first frame (per-clip evaluation).

Actions: PD position targets around the standing pose, ``home + action_scale * a`` (G1Joystick's scale and gains).
Each step moves the env one reference frame on; the step's errors compare the robot with that frame.

Episode end: at the clip's last frame the episode is truncated (not a failure: the task sets the row's
``episode_step`` past any time limit, so the vector env reports ``truncated``) with ``info["is_success"]`` true;
it terminates (a failure) when the anchor's height is off by more than ``anchor_z_threshold`` (0.25 m), its
projected gravity's z by more than ``anchor_ori_threshold`` (0.8), or an end effector's (ankles, wrists) height by
more than ``ee_z_threshold`` (0.25 m), BeyondMimic's thresholds. A single env (``gym.make``, no autoreset) is not
truncated at the clip's end: it holds the last frame as its reference until its time limit.

``info`` per env, of the step's episode (kept through a SAME_STEP autoreset, so a finished row's values are of the
clip it finished): ``clip`` (index into ``task.clip_names``), ``tracking_error_cm`` (mean over the tracked bodies
of the anchor-relative body position error, cm), ``joint_error`` (mean |joint angle error|, rad), ``is_success``
(this step reached the clip's end without a termination). ``reset()`` does not recompute them.

Observation (policy, 158 floats with ``future_frames=1``; critic-only, 133): :data:`POLICY_GROUPS`,
:data:`CRITIC_GROUPS` (sizes, units, meanings in the declarations; docs/tasks.md). Reward terms:
:data:`~unilab_envs.tasks.g1_track_terms.TRACK_TERMS`; kernels: :mod:`unilab_envs.tasks.g1_track_kernels`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from unilab_robot.assets import g1 as robot
from unilab_envs.core.batch_code import batch_kernel
from unilab_envs.core.config import build_config, require, require_timing
from unilab_envs.core.generated import first_call_locked
from unilab_envs.core.model import load_model, require_gains, servo_joint_actuators
from unilab_envs.core.obs_groups import ObsGroup, group_slices
from unilab_envs.core.reward_terms import RewardTerm, resolve_terms
from unilab_envs.core.single_env import UniLabEnv
from unilab_envs.core.task import Task
from unilab_envs.core.vector_env import UniLabVectorEnv
from unilab_robot.deploy.reference import GROUP_BUILDERS
from unilab_envs.locomotion.robot import resolve_robot
from unilab_envs.motion.clips import CLIPS_DIR, clip_paths
from unilab_envs.motion.reference import MotionReference, cached_reference
from unilab_envs.tasks import g1_track_kernels as K
from unilab_envs.tasks.arm_terms import reward_scales_class
from unilab_envs.tasks.g1_joystick import G1
from unilab_envs.tasks.g1_track_terms import LAYER, TRACK_TERMS

__all__ = ["POLICY_GROUPS", "CRITIC_GROUPS", "TRACKED_BODIES", "END_EFFECTORS", "G1Track", "G1TrackConfig",
           "make_env", "make_vector_env"]

#: BeyondMimic's 14 tracked bodies of the G1 (the anchor, the pelvis, first)
TRACKED_BODIES = ("pelvis", "left_hip_roll_link", "left_knee_link", "left_ankle_roll_link", "right_hip_roll_link",
                  "right_knee_link", "right_ankle_roll_link", "torso_link", "left_shoulder_roll_link", "left_elbow_link",
                  "left_wrist_yaw_link", "right_shoulder_roll_link", "right_elbow_link", "right_wrist_yaw_link")
END_EFFECTORS = ("left_ankle_roll_link", "right_ankle_roll_link", "left_wrist_yaw_link", "right_wrist_yaw_link")
STARTS = ("adaptive", "uniform", "clip_start")

G1TrackRewardScales = reward_scales_class("G1TrackRewardScales", __name__, TRACK_TERMS)
REWARD_NAMES = tuple(t.name for t in TRACK_TERMS)


@dataclass(frozen=True)
class G1TrackConfig:
    """Everything the G1 tracking task can be told; unknown keys are rejected."""

    model_path: str = str(robot.MJCF_PATH)
    sim_dt: float = 0.004
    control_dt: float = 0.02
    action_scale: float = 0.5  # PD targets move at most this many rad from the standing pose (G1Joystick's)
    pd_kp: tuple[float, ...] = robot.PD_KP
    pd_kd: tuple[float, ...] = robot.PD_KD
    #: shipped clip names (``CMU_016_22``) or paths to motion files; empty: every shipped G1 clip
    clips: tuple[str, ...] = ()
    future_frames: int = 1  # reference frames ahead in the policy's ref_joint_pos / ref_joint_vel
    tracked_bodies: tuple[str, ...] = TRACKED_BODIES  # the first is the anchor
    end_effectors: tuple[str, ...] = END_EFFECTORS  # among tracked_bodies
    soft_joint_limit: float = 0.9
    anchor_z_threshold: float = 0.25  # m
    anchor_ori_threshold: float = 0.8  # |projected gravity z difference|
    ee_z_threshold: float = 0.25  # m
    start: str = "adaptive"  # adaptive | uniform | clip_start
    segment_s: float = 1.0  # adaptive sampling: length of a segment (s)
    sampling_uniform: float = 0.2  # share of the probability spread over all start frames alike
    sampling_decay: float = 0.999  # per step, of each segment's failure count
    reset_joint_noise: float = 0.05  # rad, uniform, added to the reference joints at a reset
    reward_scales: G1TrackRewardScales = field(default_factory=G1TrackRewardScales)
    reward_terms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def validate(self) -> None:
        require_timing(self.sim_dt, self.control_dt)
        require(self.action_scale > 0, f"action_scale must be > 0, got {self.action_scale}")
        require_gains(self.pd_kp, self.pd_kd)
        require(isinstance(self.future_frames, int) and 1 <= self.future_frames <= 50,
                f"future_frames must be an int in [1, 50], got {self.future_frames!r}")
        require(len(self.tracked_bodies) >= 1 and self.tracked_bodies[0] == robot.ROOT_BODY,
                f"tracked_bodies must start with the anchor {robot.ROOT_BODY!r}, got {self.tracked_bodies!r}")
        missing = [b for b in self.end_effectors if b not in self.tracked_bodies]
        require(not missing, f"end_effectors must be tracked bodies; {missing} are not in tracked_bodies")
        require(0 < self.soft_joint_limit <= 1, f"soft_joint_limit must be in (0, 1], got {self.soft_joint_limit}")
        for name in ("anchor_z_threshold", "anchor_ori_threshold", "ee_z_threshold", "segment_s"):
            require(getattr(self, name) > 0, f"{name} must be > 0, got {getattr(self, name)}")
        require(self.start in STARTS, f"start must be one of {STARTS}, got {self.start!r}")
        require(0.0 <= self.sampling_uniform <= 1.0, f"sampling_uniform must be in [0, 1], got {self.sampling_uniform}")
        require(0.0 < self.sampling_decay <= 1.0, f"sampling_decay must be in (0, 1], got {self.sampling_decay}")
        require(0.0 <= self.reset_joint_noise <= 0.5, f"reset_joint_noise must be in [0, 0.5] rad, got {self.reset_joint_noise}")
        self.reward_scales.validate()
        require(isinstance(self.reward_terms, Mapping) and all(isinstance(v, Mapping) for v in self.reward_terms.values()),
                f"reward_terms must map term names to {{weight: ..., param: ...}} mappings, got {self.reward_terms!r}")


def _group(name, size, units, doc, noise=None) -> ObsGroup:
    """A group written by :func:`~unilab_envs.tasks.g1_track_kernels.write_observations`, with its robot-side builder:
    the legged tasks' for the IMU and joint groups, :mod:`unilab_robot.deploy.motion`'s for the reference groups."""
    return ObsGroup(name, size, units, doc, builder=GROUP_BUILDERS.get(name), noise=noise)


#: the policy's groups, in order ("ref_joints": future_frames x 29; "joints": 29)
POLICY_GROUPS = (
    _group("ref_joint_pos", "ref_joints", "rad", "reference joint angles minus the standing pose, of the next "
           "future_frames frames (frame-major, action.joint_names order)"),
    _group("ref_joint_vel", "ref_joints", "rad/s", "reference joint velocities of the next future_frames frames"),
    _group("ref_phase", 1, "1", "the clip's phase: frame / (frames - 1), 0 at its start, 1 at its end"),
    _group("ref_anchor_ori", 6, "1", "the next frame's reference pelvis orientation in the robot's pelvis frame, "
           "first two columns of the rotation matrix, row-major"),
    _group("gyro", 3, "rad/s", "base angular velocity, base frame", noise=0.2),
    _group("gravity", 3, "1", "unit gravity direction (0, 0, -1) seen in the base frame", noise=0.05),
    _group("joint_pos", "joints", "rad", "joint angles minus action.home, in action.joint_names order", noise=0.03),
    _group("joint_vel", "joints", "rad/s", "joint velocities, in action.joint_names order", noise=1.5),
    _group("last_action", "joints", "1", "the previous action, clipped to [-1, 1]"),
)
#: the critic's extra groups ("bodies": the tracked bodies, 14)
CRITIC_GROUPS = (
    _group("linvel", 3, "m/s", "base linear velocity, base frame"),
    _group("height", 1, "m", "pelvis height (world z)"),
    _group("anchor_pos_error", 3, "m", "this frame's reference pelvis position minus the robot's, pelvis frame"),
    _group("body_pos", "bodies3", "m", "tracked bodies' positions relative to the pelvis, pelvis frame"),
    _group("body_ori", "bodies6", "1", "tracked bodies' orientations relative to the pelvis, 6D (as ref_anchor_ori)"),
)


def _counts(cfg: G1TrackConfig) -> dict[str, int]:
    joints, bodies = len(robot.JOINT_NAMES), len(cfg.tracked_bodies)
    return {"joints": joints, "ref_joints": joints * cfg.future_frames, "bodies3": 3 * bodies, "bodies6": 6 * bodies}


def clip_files(names: tuple[str, ...]) -> tuple[str, ...]:
    """Motion files of ``clips``: shipped names or paths; every shipped clip when empty."""
    if not names:
        return tuple(str(p) for p in clip_paths())
    out = []
    for name in names:
        path = Path(name) if name.endswith(".npz") else CLIPS_DIR / f"{name}.npz"
        if not path.is_file():
            raise FileNotFoundError(f"G1Track clips: no motion file {path} (give shipped clip names, e.g. "
                                    f"{clip_paths()[0].stem}, or paths to .npz files)")
        out.append(str(path))
    return tuple(out)


class G1Track(Task):
    """The G1 motion-tracking task (see module docstring)."""

    reward_terms: ClassVar[tuple[RewardTerm, ...]] = TRACK_TERMS
    reward_names = REWARD_NAMES  # an instance's own: its resolved terms
    tracking_body = robot.ROOT_BODY
    obs_groups = group_slices(POLICY_GROUPS, _counts(G1TrackConfig()))  # with the defaults; an instance has its own
    privileged_obs_groups = group_slices(CRITIC_GROUPS, _counts(G1TrackConfig()))
    declared_groups = {g.name: g for g in (*POLICY_GROUPS, *CRITIC_GROUPS)}
    state_names = ("clip", "frame", "last_action", "_previous_action", "is_success", "_step_clip", "tracking_error_cm",
                   "joint_error", "_failed_segment", "segment_score")

    def __init__(self, **config: Any) -> None:
        cfg = build_config(G1TrackConfig, config, kind="G1Track config key")
        model = load_model(cfg.model_path, cfg.sim_dt)
        super().__init__(model, cfg)
        self.robot, self._keyframe = resolve_robot(model, G1, cfg.soft_joint_limit)
        self.actuator_kinds = servo_joint_actuators(model, self.robot.actuator_ids, cfg.pd_kp, cfg.pd_kd)
        self.reference: MotionReference = cached_reference(clip_files(cfg.clips), cfg.model_path, 1.0 / cfg.control_dt)
        ref = self.reference
        scales = cfg.reward_scales
        terms = resolve_terms(LAYER, self.reward_terms, {n: getattr(scales, n) for n in REWARD_NAMES}, cfg.reward_terms)
        self.reward_names = terms.names
        self._weights = np.array(terms.scales) * cfg.control_dt
        self._term_params = terms.param_table()
        self._compute = first_call_locked(K.track_kernel(terms.terms, terms.active), "compute")
        kernels = (K.apply_actions, K.reset_envs, K.observe)
        self._apply_kernel, self._reset_kernel, self._observe_kernel = map(batch_kernel, kernels)
        counts = _counts(cfg)
        self.obs_groups, self.privileged_obs_groups = group_slices(POLICY_GROUPS, counts), group_slices(CRITIC_GROUPS, counts)
        self._obs_size = max(s.stop for s in self.obs_groups.values())
        self._privileged_obs_size = max(s.stop for s in self.privileged_obs_groups.values())
        ref_joints = {n: k for k, n in enumerate(_model_joints(model))}
        ref_bodies = {n: k for k, n in enumerate(ref.body_names)}
        missing = [b for b in cfg.tracked_bodies if b not in ref_bodies]
        if missing:
            raise ValueError(f"G1Track: tracked bodies {missing} are not in the clips' bodies")
        body_ids = np.array([model.body(b).id for b in cfg.tracked_bodies], dtype=np.int64)
        anchor = int(body_ids[0])
        self.track = K.Track(
            root_q=self.robot.root_q, root_d=self.robot.root_d, joint_q=self.robot.joint_q, joint_d=self.robot.joint_d,
            actuator_ids=self.robot.actuator_ids, home=self.robot.home, soft_low=self.robot.soft_low,
            soft_high=self.robot.soft_high,
            ref_joint=np.array([ref_joints[n] for n in robot.JOINT_NAMES], dtype=np.int64), bodies=body_ids,
            ref_bodies=np.array([ref_bodies[b] for b in cfg.tracked_bodies], dtype=np.int64),
            ee=np.array([cfg.tracked_bodies.index(b) for b in cfg.end_effectors], dtype=np.int64),
            anchor=anchor, ref_anchor=ref_bodies[cfg.tracked_bodies[0]], com_root=int(model.body_rootid[anchor]),
            future=int(cfg.future_frames), anchor_z=float(cfg.anchor_z_threshold),
            anchor_ori=float(cfg.anchor_ori_threshold), ee_z=float(cfg.ee_z_threshold),
        )  # fmt: skip
        self.ref = K.Ref(ref.joint_pos, ref.joint_vel, ref.root_pos, ref.root_quat, ref.body_pos, ref.body_quat,
                         ref.body_lin_vel, ref.body_ang_vel, ref.offsets, ref.lengths)
        self._segments = _segments(ref.lengths, cfg)
        self.force_start: tuple[int, int] | None = None  # (clip, frame) every reset starts at, when set (tests, tools)

    obs_size = property(lambda self: self._obs_size)
    privileged_obs_size = property(lambda self: self._privileged_obs_size)
    action_size = property(lambda self: len(robot.JOINT_NAMES))
    reward_weights = property(lambda self: self._weights)
    reset_keyframe = property(lambda self: self._keyframe)
    step_stage = property(lambda self: 2)  # mjSTAGE_VEL: body poses and velocities current; free on a persistent batch

    @property
    def clip_names(self) -> tuple[str, ...]:
        """The clips, in the order ``info["clip"]`` indexes them."""
        return self.reference.names

    # ``unilab eval``: every episode one whole clip from its first frame, reported per clip with its errors
    evaluation_kwargs = {"start": "clip_start"}
    episode_metrics = ("tracking_error_cm", "joint_error")
    episode_group = "clip"
    episode_group_names = clip_names

    def deploy_facts(self):
        """A clip as the command (the spec's ``motion`` section: :meth:`motion_section`), the G1's joints, its MJCF."""
        from unilab_envs.core.task import DeployFacts

        return DeployFacts(command="motion", joint_names=tuple(robot.JOINT_NAMES), mjcf=str(robot.MJCF_PATH))

    def motion_section(self):
        """The deploy spec's ``motion`` section: the clips (file names; ``paths``: where they are now, for
        ``unilab export`` to copy), the future frames, the anchor, the termination thresholds, the reset noise."""
        from unilab_robot.deploy.motion import MotionSpec
        from unilab_robot.deploy.sections import SpecError

        cfg, paths = self.config, clip_files(self.config.clips)
        names = tuple(Path(p).name for p in paths)
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise SpecError(f"G1Track clips {twice} share a file name; the deploy spec names its clips by file name "
                            f"beside policy.onnx: rename one")
        return MotionSpec(clips=names, future_frames=int(cfg.future_frames), anchor_body=cfg.tracked_bodies[0],
                          end_effectors=tuple(cfg.end_effectors), anchor_z_threshold=float(cfg.anchor_z_threshold),
                          anchor_ori_threshold=float(cfg.anchor_ori_threshold), ee_z_threshold=float(cfg.ee_z_threshold),
                          reset_joint_noise=float(cfg.reset_joint_noise), paths=tuple(str(Path(p).resolve()) for p in paths))

    def bind(self, batch, num_envs: int) -> None:
        n, joints = num_envs, self.action_size
        self.live = K.Live(batch.bind("qpos"), batch.bind("qvel"), batch.bind("xpos"), batch.bind("xquat"),
                           batch.bind("cvel"), batch.bind("subtree_com"))
        self._ctrl = batch.bind("ctrl")
        self.clip = np.zeros(n, np.int64)
        self.frame = np.zeros(n, np.int64)
        self.last_action = np.zeros((n, joints))
        self._previous_action = np.zeros((n, joints))
        self.is_success = np.zeros(n, np.bool_)
        self._step_clip = np.zeros(n, np.int64)
        self.tracking_error_cm = np.zeros(n)
        self.joint_error = np.zeros(n)
        self._failed_segment = np.full(n, -1, np.int64)
        self.segment_score = np.zeros(len(self._segments[1]))
        self.episode = K.Episode(self.clip, self.frame, self.last_action, self._previous_action, self.is_success,
                                 self._step_clip, self.tracking_error_cm, self.joint_error, self._failed_segment)
        cfg = self.config
        share = 1.0 if cfg.start != "adaptive" else float(cfg.sampling_uniform)
        self.sampling = K.Sampling(*self._segments, share, self.segment_score, float(cfg.sampling_decay))

    def apply_actions(self, actions: np.ndarray) -> None:
        self._apply_kernel(actions, self._ctrl, self.episode, self.track, float(self.config.action_scale))

    def compute(self, obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        self._compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, self.live, self.ref, self.track,
                      self.episode, self.sampling, self._weights, self._term_params)
        if self.config.start == "adaptive":
            K.record_failures(self.episode, self.sampling)

    def reset_envs(self, ids: np.ndarray, rng: np.ndarray) -> None:
        clip, frame = self.force_start if self.force_start is not None else (-1, 0)
        if clip >= 0:
            self.reference.frame(clip, frame)  # IndexError outside the clip
        self._reset_kernel(ids, rng, self.live.qpos, self.live.qvel, self.ref, self.track, self.episode, self.sampling,
                           int(clip), int(frame), float(self.config.reset_joint_noise))

    def observe(self, ids: np.ndarray, obs, privileged_obs) -> None:
        self._observe_kernel(ids, obs, privileged_obs, self.live, self.ref, self.track, self.episode)

    def sampling_probabilities(self) -> np.ndarray:
        """``(clips,)``: the probability that a reset now draws each clip (adaptive sampling moves it)."""
        p = K.segment_probabilities(self.sampling)
        return np.bincount(self.sampling.seg_clip, weights=p, minlength=self.reference.num_clips)

    def task_info(self) -> dict[str, np.ndarray]:
        return {"clip": self._step_clip, "tracking_error_cm": self.tracking_error_cm, "joint_error": self.joint_error,
                "is_success": self.is_success}


def _model_joints(model) -> tuple[str, ...]:
    from unilab_envs.motion.format import model_names

    return model_names(model)[0]


def _segments(lengths: np.ndarray, cfg: G1TrackConfig) -> tuple:
    """``(seg_first, seg_clip, seg_start, seg_count, seg_frames)`` of the sampling: each clip's start frames
    ``0 .. length - 2`` cut into segments of ``segment_s``; ``clip_start``: one segment per clip, its frame 0."""
    seg_frames = max(1, int(round(cfg.segment_s / cfg.control_dt)))
    if cfg.start == "clip_start":
        seg_frames = int(lengths.max())
    first, clip, start, count = [], [], [], []
    for c, length in enumerate(lengths):
        first.append(len(clip))
        starts = max(int(length) - 1, 1)
        for s in range(0, starts, seg_frames):
            clip.append(c)
            start.append(s)
            count.append(1 if cfg.start == "clip_start" else min(seg_frames, starts - s))
    as_int = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    return as_int(first), as_int(clip), as_int(start), as_int(count), seg_frames


def make_env(**kwargs: Any) -> UniLabEnv:
    """Entry point of ``gym.make``: one G1 tracking env."""
    return UniLabEnv(G1Track, **kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> UniLabVectorEnv:
    """Entry point of ``gym.make_vec``: ``num_envs`` G1 tracking envs, batched."""
    return UniLabVectorEnv(G1Track, num_envs, **kwargs)
