"""Typed, validated, immutable PPO configuration.

A run is described by one :class:`TrainConfig` (frozen dataclasses all the way down).
It is built by layering plain dicts, later layers winning::

    dataclass defaults
      <- trainers/configs/<task>.yaml   (the task's defaults, matched by its ``task:`` key)
      <- --config file.yaml              (the user's file)
      <- CLI flags (--num-envs, --total-steps, --device, --seed, --out)
      <- key=value overrides              (``algo.learning_rate=3e-4 policy.actor_hidden=[128,128]``)

and validated once by :func:`from_dict`: unknown keys, wrong types and out-of-range
values raise :class:`ConfigError` naming the offending key. Reading, layering and
overriding are the one config system's (:mod:`unilab_envs.config`: its YAML loader reads
``1e-3`` as a float, its merge and ``key=value`` parser are the SB3 trainer's too).
Configs are never mutated; use :func:`dataclasses.replace`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainers.common.lifecycle import STOP_MIN_EPISODES
from unilab_envs.config import ConfigError, deep_merge, from_dict, load_yaml, parse_overrides, require, to_dict
from unilab_envs.config import read_yaml as _read_yaml
from unilab_robot.deploy.history import HistoryConfig

__all__ = ["CONFIG_DIR", "DEFAULT_TASK", "AlgoConfig", "ConfigError", "EstimatorConfig", "ImageEncoderConfig",
           "ImageGroupConfig",
           "LogConfig", "PolicyConfig", "StopConfig",
           "TrainConfig", "deep_merge", "from_dict", "load_config", "parse_overrides", "read_yaml",
           "task_defaults_file", "to_dict"]

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


@dataclass(frozen=True)
class ImageEncoderConfig:
    """The convolutional encoder the actor (and the critic) runs on each image group of its observation.

    Layer ``k`` is a ``Conv2d(channels[k-1], channels[k], kernel[k], stride[k], padding=kernel[k] // 2)``
    followed by ``policy.activation``; the last map is flattened into a ``Linear(..., features)`` and the
    activation. The defaults take a 12x16 depth image to 3x4x32 and a 48x64 one to 12x16x32.
    ``scale``: the fixed divisor of the image's values (its pixels enter the network as ``value / scale``,
    never through the running observation normalizer); ``null``: the task camera's ``far`` (depth in
    ``[near/far, 1]``).
    """

    channels: tuple[int, ...] = (16, 32)
    kernel: tuple[int, ...] = (5, 3)
    stride: tuple[int, ...] = (2, 2)
    features: int = 64
    scale: float | None = None

    def __post_init__(self) -> None:
        n = len(self.channels)
        require(n > 0 and all(c > 0 for c in self.channels),
               f"policy.image_encoder.channels must be a non-empty list of positive ints, got {list(self.channels)}")
        require(len(self.kernel) == n and all(k > 0 for k in self.kernel),
               f"policy.image_encoder.kernel must be {n} positive ints (one per layer of channels), got {list(self.kernel)}")
        require(len(self.stride) == n and all(s > 0 for s in self.stride),
               f"policy.image_encoder.stride must be {n} positive ints (one per layer of channels), got {list(self.stride)}")
        require(self.features > 0, f"policy.image_encoder.features must be > 0, got {self.features}")
        require(self.scale is None or self.scale > 0, f"policy.image_encoder.scale must be > 0 or null, got {self.scale}")


@dataclass(frozen=True)
class ImageGroupConfig:
    """Where one image group sits in the critic's input (the policy observation, then the privileged extras).

    Resolved from the env when a run starts (:func:`trainers.ppo.image_encoder.with_image_groups`) and
    recorded in the run's config, so evaluation and export rebuild the network without an env.
    ``shape``: ``(channels, height, width)`` of one frame; ``starts``: the first column of each frame
    (the current one, then each ``obs_history`` frame: stacked as channels); ``scale``: the fixed divisor.
    """

    name: str
    shape: tuple[int, ...]
    starts: tuple[int, ...]
    scale: float

    def __post_init__(self) -> None:
        require(len(self.shape) == 3 and all(d > 0 for d in self.shape),
               f"policy.image_groups {self.name!r}: shape must be (channels, height, width), got {list(self.shape)}")
        require(len(self.starts) > 0 and all(s >= 0 for s in self.starts),
               f"policy.image_groups {self.name!r}: starts must be non-empty column indices, got {list(self.starts)}")
        require(self.scale > 0, f"policy.image_groups {self.name!r}: scale must be > 0, got {self.scale}")

    @property
    def size(self) -> int:
        """Columns of one frame."""
        c, h, w = self.shape
        return c * h * w


@dataclass(frozen=True)
class EstimatorConfig:
    """A learned state estimator in the actor (:mod:`trainers.ppo.estimator`): ``policy.estimator``.

    An MLP of ``hidden`` units reads the actor's (normalized) observation and regresses the true
    values of the privileged observation groups ``targets`` (``linvel`` of a legged task trained with
    ``env_kwargs.critic_only_groups: [linvel]``); the actor reads its observation followed by the
    estimate. It is trained in the PPO update by a mean squared error weighted by ``coef``.
    ``warmup_iterations``: for the first so many iterations the actor is held (no policy step, its std
    too) and acts on the targets' true values instead of the estimate, while the critic and the
    estimator learn (a policy transplanted by ``--init-from`` walks as before meanwhile).
    ``columns`` / ``sizes``: where the targets sit in the critic's input and each one's width,
    filled in from the env when the run starts (leave them empty).
    """

    targets: tuple[str, ...] = ("linvel",)
    hidden: tuple[int, ...] = (128, 64)
    coef: float = 1.0
    warmup_iterations: int = 0
    columns: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        require(len(self.targets) > 0 and len(set(self.targets)) == len(self.targets),
               f"policy.estimator.targets must be distinct group names (at least one), got {list(self.targets)}")
        require(len(self.hidden) > 0 and all(h > 0 for h in self.hidden),
               f"policy.estimator.hidden must be a non-empty list of positive ints, got {list(self.hidden)}")
        require(self.coef > 0, f"policy.estimator.coef must be > 0 (the estimator learns from nothing else), got {self.coef}")
        require(self.warmup_iterations >= 0,
               f"policy.estimator.warmup_iterations must be >= 0 (0: no warm-up), got {self.warmup_iterations}")
        require(len(self.sizes) in (0, len(self.targets)) and all(s > 0 for s in self.sizes)
               and sum(self.sizes) == len(self.columns) and all(c >= 0 for c in self.columns),
               "policy.estimator.columns / sizes are filled in from the env when the run starts: leave them empty")

    @property
    def size(self) -> int:
        """The estimate's width (0 until the columns are filled in)."""
        return len(self.columns)


@dataclass(frozen=True)
class PolicyConfig:
    """Actor-critic networks (Gaussian policy with a learned, state-independent log-std)."""

    actor_hidden: tuple[int, ...] = (256, 128, 64)
    critic_hidden: tuple[int, ...] = (256, 128, 64)
    activation: str = "elu"
    init_std: float = 1.0          # initial action std: exp(log_std_init) (SB3's log_std_init=-2 is 0.1353)
    # ceiling on the action std (null: none): the log-std is projected below log(max_std) after every
    # optimizer step, so late training explores without toppling the robot (entropy bonus or not)
    max_std: float | None = None
    obs_normalization: bool = True
    obs_clip: float = 10.0
    ortho_init: bool = True        # orthogonal weights (gain sqrt 2, heads 0.01 / 1); False: PyTorch's default init
    # the deterministic (evaluated, exported, deployed) action is the average of the actor's mean and the
    # mirror image of its mean on the mirrored observation: exactly left/right symmetric, so a straight
    # command gets no yaw drift. Tasks with a mirror map only; training's stochastic policy is unchanged
    mirror_average: bool = False
    # training's Gaussian mean is that same average (trainers.ppo.symmetry.MirrorAveragedMean), so PPO
    # optimizes the action that is deployed rather than one whose average is deployed; needs mirror_average
    symmetric_actor: bool = False
    # a CNN per image group of the observation (trainers.ppo.image_encoder); null: images are plain columns
    image_encoder: ImageEncoderConfig | None = field(default_factory=ImageEncoderConfig)
    # the observation's image groups: filled in from the env when the run starts (leave empty)
    image_groups: tuple[ImageGroupConfig, ...] = ()
    # a memory in the actor (trainers.ppo.recurrent): "gru" runs a GRU of recurrent_hidden units on the
    # observation before the actor_hidden MLP, its state reset at every episode's start and trained by
    # truncated BPTT over each env's rollout; null: the feed-forward actor. The critic stays an MLP
    recurrent: str | None = None
    recurrent_hidden: int = 64
    # a learned state estimator (trainers.ppo.estimator): the actor reads its observation and an MLP's
    # estimate of privileged groups it does not observe ({targets: [linvel]}); null: none
    estimator: EstimatorConfig | None = None

    def __post_init__(self) -> None:
        require(len(self.actor_hidden) > 0 and all(h > 0 for h in self.actor_hidden),
               f"policy.actor_hidden must be a non-empty list of positive ints, got {list(self.actor_hidden)}")
        require(len(self.critic_hidden) > 0 and all(h > 0 for h in self.critic_hidden),
               f"policy.critic_hidden must be a non-empty list of positive ints, got {list(self.critic_hidden)}")
        require(self.activation in ACTIVATIONS,
               f"policy.activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        require(self.init_std > 0, f"policy.init_std must be > 0, got {self.init_std}")
        require(self.max_std is None or self.max_std >= self.init_std,
               f"policy.max_std must be >= policy.init_std ({self.init_std}) or null, got {self.max_std}")
        require(self.obs_clip > 0, f"policy.obs_clip must be > 0, got {self.obs_clip}")
        names = [g.name for g in self.image_groups]
        require(len(set(names)) == len(names), f"policy.image_groups names a group twice: {names}")
        require(self.recurrent in RECURRENT_KINDS,
               f"policy.recurrent must be one of {list(RECURRENT_KINDS)}, got {self.recurrent!r}")
        require(self.recurrent_hidden > 0, f"policy.recurrent_hidden must be > 0, got {self.recurrent_hidden}")
        require(self.recurrent is None or not self.mirror_average,
               "policy.mirror_average with policy.recurrent: the mirrored observation stream would need a hidden "
               "state of its own, which is not kept; set policy.mirror_average: false for a recurrent actor")
        require(self.estimator is None or self.recurrent is None,
               "policy.estimator with policy.recurrent is not supported: the estimator reads one observation, the "
               "GRU a sequence; set policy.recurrent: null (an obs_history gives the estimator past frames)")
        require(self.estimator is None or not (self.image_groups and self.image_encoder is not None),
               "policy.estimator with image groups in the observation is not supported: the estimator reads plain "
               "columns (set policy.estimator: null, or policy.image_encoder: null)")
        require(self.mirror_average or not self.symmetric_actor,
               "policy.symmetric_actor trains the mirror-averaged mean, which only policy.mirror_average deploys: "
               "set policy.mirror_average: true as well")


ACTIVATIONS = ("elu", "tanh", "relu", "silu")
RECURRENT_KINDS = (None, "gru")
SCHEDULES = ("adaptive", "fixed", "linear")
ADVANTAGE_SCOPES = ("rollout", "minibatch")


@dataclass(frozen=True)
class AlgoConfig:
    """PPO hyper-parameters. ``num_steps`` is the rollout length per env (T)."""

    num_steps: int = 24
    num_epochs: int = 5
    num_minibatches: int = 4
    learning_rate: float = 1e-3
    schedule: str = "adaptive"
    desired_kl: float = 0.01
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    clip_value_loss: bool = True
    value_coef: float = 1.0
    entropy_coef: float = 0.0
    max_grad_norm: float = 1.0
    normalize_advantages: bool = True
    advantage_scope: str = "rollout"  # normalize advantages over the whole "rollout" or per "minibatch" (SB3)
    reward_normalization: bool = False  # divide rewards by the running std of the discounted return (SB3 VecNormalize)
    reward_clip: float = 10.0      # |normalized reward| bound (with reward_normalization)
    adam_eps: float = 1e-8         # Adam's epsilon (SB3 uses 1e-5)
    # bf16 autocast for the networks (collection and update) on CUDA and on CPUs with native bf16
    # (AVX512-BF16 / AMX); float32 elsewhere. What stays float32: trainers.common.mixed_precision
    amp: bool = False
    # weight of the mirror loss (trainers.ppo.symmetry; 0: off): tasks with a left/right mirror map
    # (the legged joystick tasks' task.mirror) only
    symmetry_coef: float = 0.0
    cuda_graph: bool = True  # on CUDA: replay each minibatch step as one captured CUDA graph
    # hold the actor and its std for the first so many iterations (no policy, entropy or mirror term; an adaptive
    # rate held) while the critic learns the returns of the policy as it is: for a fine-tune (--init-from) whose
    # critic starts untrained (a distilled student's) or fresh (a profile that adds privileged groups)
    critic_warmup_iterations: int = 0

    def __post_init__(self) -> None:
        for name in ("num_steps", "num_epochs", "num_minibatches"):
            require(getattr(self, name) >= 1, f"algo.{name} must be >= 1, got {getattr(self, name)}")
        require(0 < self.learning_rate < 1, f"algo.learning_rate must be in (0, 1), got {self.learning_rate}")
        require(self.schedule in SCHEDULES,
               f"algo.schedule must be one of {list(SCHEDULES)}, got {self.schedule!r}")
        require(self.desired_kl > 0, f"algo.desired_kl must be > 0, got {self.desired_kl}")
        require(0 < self.gamma <= 1, f"algo.gamma must be in (0, 1], got {self.gamma}")
        require(0 <= self.lam <= 1, f"algo.lam must be in [0, 1], got {self.lam}")
        require(self.clip > 0, f"algo.clip must be > 0, got {self.clip}")
        require(self.value_coef >= 0, f"algo.value_coef must be >= 0, got {self.value_coef}")
        require(self.entropy_coef >= 0, f"algo.entropy_coef must be >= 0, got {self.entropy_coef}")
        require(self.max_grad_norm > 0, f"algo.max_grad_norm must be > 0, got {self.max_grad_norm}")
        require(self.advantage_scope in ADVANTAGE_SCOPES,
               f"algo.advantage_scope must be one of {list(ADVANTAGE_SCOPES)}, got {self.advantage_scope!r}")
        require(self.reward_clip > 0, f"algo.reward_clip must be > 0, got {self.reward_clip}")
        require(0 < self.adam_eps < 1, f"algo.adam_eps must be in (0, 1), got {self.adam_eps}")
        require(self.symmetry_coef >= 0, f"algo.symmetry_coef must be >= 0, got {self.symmetry_coef}")
        require(self.critic_warmup_iterations >= 0,
                f"algo.critic_warmup_iterations must be >= 0 (0: no warm-up), got {self.critic_warmup_iterations}")


@dataclass(frozen=True)
class LogConfig:
    """Logging, progress bar and checkpoint cadence."""

    tensorboard: bool = True
    csv: bool = True
    progress: bool = True
    plot: bool = True
    save_interval: int = 50        # iterations between checkpoints
    save_minutes: float = 10.0     # and at least this often in wall-clock time (0: off)
    keep_every: int = 0            # also save and keep checkpoint_<iter>.pt every k iterations (0: off)
    stall_steps: int = 100_000     # say so (one line) when success stays 0 and the return flat this long (0: off)

    def __post_init__(self) -> None:
        require(self.stall_steps >= 0, f"log.stall_steps must be >= 0 (0: off), got {self.stall_steps}")
        require(self.save_interval >= 1, f"log.save_interval must be >= 1, got {self.save_interval}")
        require(self.save_minutes >= 0, f"log.save_minutes must be >= 0, got {self.save_minutes}")
        require(self.keep_every >= 0, f"log.keep_every must be >= 0, got {self.keep_every}")


@dataclass(frozen=True)
class StopConfig:
    """Stop training early once the task is learned (:mod:`trainers.ppo.early_stop`).

    Training stops when the rolling success rate of the finished training episodes
    (``episode/success``, the last ``max(200, num_envs)`` episodes) is at least
    ``success_rate`` for ``patience`` consecutive iterations, counted once ``min_episodes``
    episodes have finished. ``success_rate: null`` (the default) trains to ``total_steps``,
    which always bounds the run.
    """

    success_rate: float | None = None
    min_episodes: int = STOP_MIN_EPISODES  # every learner's default (trainers.common.lifecycle)
    patience: int = 1

    def __post_init__(self) -> None:
        require(self.success_rate is None or 0 < self.success_rate <= 1,
               f"stop.success_rate must be in (0, 1] or null (off), got {self.success_rate}")
        require(self.min_episodes >= 1, f"stop.min_episodes must be >= 1, got {self.min_episodes}")
        require(self.patience >= 1, f"stop.patience must be >= 1, got {self.patience}")


DEFAULT_TASK = "UniLab/Go1Joystick-v0"  # what `unilab train` trains without --task (README "Install", docs/getting_started.md)


@dataclass(frozen=True)
class TrainConfig:
    """One training run: the task, its env, the learner and the logs."""

    task: str = DEFAULT_TASK
    num_envs: int = 16
    total_steps: int = 1_000_000
    seed: int = 0
    device: str = "auto"
    out: str | None = None
    torch_threads: int | None = None
    vectorization_mode: str | None = None
    # collect from two half-size envs, stepping one half's physics in a worker thread while
    # the policy runs on the other (trainers.ppo.collector); measured by `unilab bench --rows 6`
    overlap: bool = False
    env_kwargs: dict = field(default_factory=dict)
    # sim-to-real wrappers on the env (trainers.common.envs): a profile name (go1_real), a YAML
    # path, or an inline mapping of sections (may `extends: go1_real`); null: the bare env
    sim2real: str | dict | None = None
    # start from another run's weights (trainers.ppo.init_from): its checkpoint or run directory;
    # a new run, unlike --resume. init_fresh_normalizer: re-learn the observation statistics
    init_from: str | None = None
    init_fresh_normalizer: bool = False
    # the policy sees the last `length` frames (the current one included) of these observation groups
    # (wrappers.history, outside the sim2real stack; exported into the deploy spec): {groups: [...], length: K}
    obs_history: HistoryConfig | None = None
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    log: LogConfig = field(default_factory=LogConfig)
    stop: StopConfig = field(default_factory=StopConfig)

    def __post_init__(self) -> None:
        require(bool(self.task), "task must be a non-empty environment id")
        require(self.num_envs >= 1, f"num_envs must be >= 1, got {self.num_envs}")
        require(self.total_steps >= 1, f"total_steps must be >= 1, got {self.total_steps}")
        require(self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"),
               f"device must be 'auto', 'cpu' or 'cuda[:i]', got {self.device!r}")
        require(self.torch_threads is None or self.torch_threads >= 1,
               f"torch_threads must be >= 1, got {self.torch_threads}")
        require(self.vectorization_mode in (None, "sync", "async", "vector_entry_point"),
               f"vectorization_mode must be sync, async or vector_entry_point, got {self.vectorization_mode!r}")
        if isinstance(self.sim2real, str) and self.sim2real.strip().lower() in ("none", ""):
            object.__setattr__(self, "sim2real", None)  # `sim2real=none` on the command line: the bare env
        # the typed profile, resolved once here (not a field: config.yaml keeps sim2real as given); the runner
        # hands it to make_vec_env and Sim2Real, which take it as it is
        object.__setattr__(self, "profile", _check_sim2real(self.sim2real, self.task))
        if self.policy.recurrent is not None:
            require(self.algo.symmetry_coef == 0,
                   "algo.symmetry_coef with policy.recurrent: the mirror loss needs the actor's answer to the "
                   "mirrored history, whose hidden state is not kept; set algo.symmetry_coef: 0 for a recurrent actor")
            require(self.algo.num_minibatches <= self.num_envs,
                   f"policy.recurrent: a minibatch is whole env sequences, so algo.num_minibatches "
                   f"({self.algo.num_minibatches}) must be <= num_envs ({self.num_envs})")
        batch = self.num_envs * self.algo.num_steps
        require(self.algo.num_minibatches <= batch,
               f"algo.num_minibatches ({self.algo.num_minibatches}) exceeds the rollout batch "
               f"num_envs * algo.num_steps = {batch}")

    @property
    def out_dir(self) -> Path:
        """``out``, else ``runs/<task id with / as _>`` (a ``module:Id`` task: its id, no colon in the folder name)."""
        return Path(self.out) if self.out else Path("runs") / self.task.rpartition(":")[2].replace("/", "_")

    @property
    def steps_per_iteration(self) -> int:
        return self.num_envs * self.algo.num_steps

    @property
    def num_iterations(self) -> int:
        return max(1, math.ceil(self.total_steps / self.steps_per_iteration))


def _check_sim2real(sim2real: str | dict | None, task: str):
    """The ``Profile`` ``sim2real`` resolves to for ``task`` (trainers.common.envs.check_sim2real; ``None``
    for the bare env), else ConfigError."""
    if sim2real is None:
        return None
    from ..common.envs import Sim2RealError, check_sim2real

    try:
        return check_sim2real(sim2real, task)
    except Sim2RealError as e:
        raise ConfigError(f"sim2real: {e}") from None


# --------------------------------------------------------------------------- files


def read_yaml(path: str | Path) -> dict:
    """The mapping in a config YAML file; :class:`ConfigError` (one line) when it cannot be read."""
    return _read_yaml(path, "config file", "check the --config path")


def is_offpolicy_recipe(path: Path) -> bool:
    """``*_sac.yaml``: a recipe of the off-policy learner (``--algo sac|td3``), not a PPO config."""
    return path.name.endswith("_sac.yaml")


def task_defaults_file(task: str) -> Path | None:
    """The bundled PPO YAML whose ``task:`` key equals ``task``, if any (off-policy recipes left out)."""
    for path in sorted(p for p in CONFIG_DIR.glob("*.yaml") if not is_offpolicy_recipe(p)):
        data = load_yaml(path.read_text()) or {}
        if data.get("task") == task:
            return path
    return None


def load_config(task: str | None = None, config_file: str | Path | None = None,
                overrides: list[str] | tuple[str, ...] = (), **flags: Any) -> TrainConfig:
    """Layer defaults, the task's YAML, a user file, CLI flags and overrides; validate once.

    ``flags`` are top-level keys given as CLI flags (``num_envs``, ``total_steps``, ``device``,
    ``seed``, ``out``, ``torch_threads``, ``init_from``); ``None`` values are ignored.
    """
    user = read_yaml(config_file) if config_file else {}
    over = parse_overrides(list(overrides))
    task = task or over.get("task") or user.get("task") or TrainConfig.task
    layers: dict = {}
    defaults = task_defaults_file(task)
    if defaults is not None:
        layers = deep_merge(layers, read_yaml(defaults))
    layers = deep_merge(layers, user)
    layers = deep_merge(layers, {k: v for k, v in flags.items() if v is not None})
    layers = deep_merge(layers, over)
    layers["task"] = task
    return from_dict(TrainConfig, layers)
