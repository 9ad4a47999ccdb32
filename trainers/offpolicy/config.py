"""The off-policy learner's typed config (``unilab train --algo sac|td3``; recipes: ``trainers/configs/*_sac.yaml``).

Layered as PPO's: the defaults here, the task's ``*_sac.yaml`` recipe when there is one (its
``task:`` key names the task; ``algo.kind`` says sac or td3), a ``--config`` file, the CLI flags,
then ``key=value`` overrides. Unknown keys are refused with the closest name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainers.common.lifecycle import STOP_MIN_EPISODES
from unilab_envs.config import ConfigError, deep_merge, from_dict, parse_overrides, require
from unilab_robot.config.yaml_io import load_yaml, read_yaml

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
KINDS = ("sac", "td3")
SYMMETRY_MODES = ("none", "augment")  # algo.symmetry (trainers.offpolicy.symmetry)


@dataclass(frozen=True)
class DistributionalCritic:
    """C51 (as FastTD3 uses it): each critic head gives logits over ``num_atoms`` evenly spaced returns on
    ``[v_min, v_max]``; Q is their expectation (:mod:`trainers.offpolicy.critic_values`). Returns outside the
    range are clipped onto its ends, so it must hold the task's discounted returns."""

    num_atoms: int = 101
    v_min: float = -10.0
    v_max: float = 10.0

    def __post_init__(self) -> None:
        require(self.num_atoms >= 2, f"algo.distributional.num_atoms must be >= 2, got {self.num_atoms}")
        require(self.v_min < self.v_max,
                f"algo.distributional needs v_min < v_max, got v_min {self.v_min} and v_max {self.v_max}")


@dataclass(frozen=True)
class UpdatesRaise:
    """``algo.raise_updates``: more gradient updates per batch step once the exploring episodes start to succeed.

    The run takes ``algo.updates_per_step`` until the rolling training success (the last 200 exploring
    episodes, as ``stop.success_rate`` reads it) first reaches ``at_success`` over at least ``min_episodes``
    finished episodes; from that batch step on it takes ``updates_per_step`` (for good: the switch is kept
    in the checkpoint and a resumed run goes on with it). For tasks where the critic, updated often before
    anything succeeds, settles on a local optimum the exploring actor never leaves (UR5Grasp under
    ``ur5_grasp_real``: the press), while more updates pay once the skill has been found."""

    updates_per_step: float
    at_success: float = 0.3
    min_episodes: int = 100

    def __post_init__(self) -> None:
        require(self.updates_per_step > 0, f"algo.raise_updates.updates_per_step must be > 0, got {self.updates_per_step}")
        require(0.0 < self.at_success <= 1.0, f"algo.raise_updates.at_success must be in (0, 1], got {self.at_success}")
        require(self.min_episodes >= 1, f"algo.raise_updates.min_episodes must be >= 1, got {self.min_episodes}")


@dataclass(frozen=True)
class Demonstrations:
    """``algo.demonstrations``: the task's scripted controller (``Task.scripted_action``; UR5Grasp has one) drives
    the batch's first ``envs`` envs for the run's first ``steps`` env steps (all envs counted, as ``total_steps``),
    its actions plus Gaussian ``noise`` (std in the learner's [-1, 1] units, then clipped; drawn from torch's RNG,
    so resume stays exact). Their transitions go to the replay buffer as the others do, so the critic sees the
    skill the exploring actor has not found yet (UR5Grasp: the lift). Their episodes are not the actor's: the
    training statistics (success, return, reward terms, the stop rule, the stall line, ``raise_updates``) read the
    other envs; an episode the script started counts nowhere, even when the actor finishes it."""

    envs: int = 8
    steps: int = 100_000
    noise: float = 0.3

    def __post_init__(self) -> None:
        require(self.envs >= 1 and self.steps >= 1,
                f"algo.demonstrations.envs and .steps must be >= 1, got envs {self.envs} and steps {self.steps}")
        require(self.noise >= 0.0, f"algo.demonstrations.noise must be >= 0 (a std in [-1, 1] action units), got {self.noise}")


@dataclass(frozen=True)
class OffPolicyAlgo:
    """The learner: SAC, or TD3 (``kind: td3``) from the same code."""

    kind: str = "sac"
    buffer_size: int = 1_000_000  # transitions kept (stated in bytes when training starts)
    batch_size: int = 1024
    n_step: int = 3
    gamma: float = 0.97
    tau: float = 0.005  # target networks' Polyak step
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    learning_starts: int = 5000  # env steps of uniform random actions before the first update
    updates_per_step: float = 1.0  # gradient updates per batch env step (fractions: every 1/x steps)
    # e.g. {updates_per_step: 4, at_success: 0.3}: that many from the first time the training success reaches it
    raise_updates: UpdatesRaise | None = None
    # SAC: the entropy temperature, learned towards target_entropy (-action_dim * entropy_scale) when autotune
    alpha: float = 0.2
    autotune_alpha: bool = True
    entropy_scale: float = 1.0
    # TD3: the actor updates every policy_delay critic updates; target policy smoothing and exploration noise
    policy_delay: int = 2
    target_noise: float = 0.2
    target_noise_clip: float = 0.5
    exploration_noise: float = 0.1
    # the exploring noise's memory per batch env step (trainers.offpolicy.exploration): 0 white (each step a fresh
    # draw, as SAC and TD3 are written); 0.9 at 25 Hz ~0.4 s, so a move that takes several steps the same way is tried
    exploration_correlation: float = 0.0
    # e.g. {envs: 8, steps: 100_000, noise: 0.3}: the task's scripted controller drives that many envs that long
    # (Demonstrations); null: none
    demonstrations: Demonstrations | None = None
    max_grad_norm: float = 10.0
    # a distributional (C51) critic, e.g. {num_atoms: 101, v_min: -10, v_max: 10}; null: the scalar critic
    distributional: DistributionalCritic | None = None
    bf16: bool = True  # autocast the update's forward passes to bfloat16 on CUDA (where the GPU has bf16)
    # the same on a CPU with native bf16 arithmetic (AVX512-BF16 / AMX, Arm BF16; trainers.common.mixed_precision);
    # opt-in: the recipes were measured in float32; a CPU without it warns and stays float32
    bf16_cpu: bool = False
    # left/right symmetry (legged tasks with a mirror map: task.mirror): none, or augment (each minibatch is
    # followed by its mirror image, trainers.offpolicy.symmetry); PPO's counterpart is the loss algo.symmetry_coef
    symmetry: str = "none"

    def __post_init__(self) -> None:
        require(self.kind in KINDS, f"algo.kind must be one of {KINDS}, got {self.kind!r}")
        require(self.buffer_size >= 1 and self.batch_size >= 1 and self.n_step >= 1,
                "algo.buffer_size, algo.batch_size and algo.n_step must be >= 1")
        require(0.0 < self.gamma <= 1.0 and 0.0 < self.tau <= 1.0, "algo.gamma and algo.tau must be in (0, 1]")
        require(self.updates_per_step > 0, f"algo.updates_per_step must be > 0, got {self.updates_per_step}")
        require(0.0 <= self.exploration_correlation < 1.0,
                f"algo.exploration_correlation must be in [0, 1) (0: white noise), got {self.exploration_correlation}")
        require(self.policy_delay >= 1, f"algo.policy_delay must be >= 1, got {self.policy_delay}")
        require(self.symmetry in SYMMETRY_MODES, f"algo.symmetry must be one of {SYMMETRY_MODES} (augment: "
                f"each minibatch plus its mirror image), got {self.symmetry!r}")


@dataclass(frozen=True)
class OffPolicyNets:
    actor_hidden: tuple[int, ...] = (256, 256, 128)
    critic_hidden: tuple[int, ...] = (512, 256, 128)
    layer_norm: bool = True
    obs_norm: bool = True
    asymmetric_critic: bool = True  # the critic also reads the privileged observation where the task has one


@dataclass(frozen=True)
class OffPolicyLog:
    every_steps: int = 20_000  # env steps between log rows
    checkpoint_every_steps: int = 200_000
    tensorboard: bool = True
    csv: bool = True
    plot: bool = True
    progress: bool = True
    save_replay: bool = False  # the buffer goes into the checkpoint (exact resume); else resume refills it
    stall_steps: int = 100_000  # say so (one line) when success stays 0 and the return flat this long (0: off)

    def __post_init__(self) -> None:
        require(self.stall_steps >= 0, f"log.stall_steps must be >= 0 (0: off), got {self.stall_steps}")


@dataclass(frozen=True)
class OffPolicyEvalStop:
    """``stop.eval``: stop on the deterministic actor rather than the exploring training episodes.

    Every ``every_steps`` env steps, once the rolling training success has reached ``from_training_success``
    (so an actor that cannot pass is not evaluated), the deterministic actor (what ``unilab eval`` scores) plays
    ``episodes`` episodes on ``num_envs`` envs of its own, reset with ``seed`` each time (the same episodes at
    every evaluation; keep it apart from the seed sets a result is reported at), counted as ``unilab eval``
    counts them; the run stops once their success rate reaches ``success_rate``. The evaluation draws nothing
    from the training RNGs: a run takes the same steps with it as without it, up to its stop. Its env steps are
    not training steps (logged apart: ``eval/env_steps``)."""

    success_rate: float = 0.98
    episodes: int = 256
    num_envs: int = 64
    seed: int = 777
    every_steps: int = 10_000
    from_training_success: float = 0.0

    def __post_init__(self) -> None:
        require(0.0 < self.success_rate <= 1.0, f"stop.eval.success_rate must be in (0, 1], got {self.success_rate}")
        require(self.episodes >= 1 and self.num_envs >= 1 and self.every_steps >= 1,
                "stop.eval.episodes, stop.eval.num_envs and stop.eval.every_steps must be >= 1")
        require(0.0 <= self.from_training_success <= 1.0,
                f"stop.eval.from_training_success must be in [0, 1], got {self.from_training_success}")


@dataclass(frozen=True)
class OffPolicyStop:
    """Stop before ``total_steps`` once the rolling training success rate (the last 200 episodes, exploring)
    reaches ``success_rate`` over at least ``min_episodes`` finished episodes (tasks with ``is_success``),
    or once the deterministic actor's evaluation passes ``eval`` (:class:`OffPolicyEvalStop`): whichever
    comes first of those set."""

    success_rate: float | None = None
    min_episodes: int = STOP_MIN_EPISODES  # every learner's default (trainers.common.lifecycle)
    eval: OffPolicyEvalStop | None = None

    def __post_init__(self) -> None:
        require(self.success_rate is None or 0.0 < self.success_rate <= 1.0,
                f"stop.success_rate must be in (0, 1], got {self.success_rate}")


@dataclass(frozen=True)
class OffPolicyConfig:
    """One off-policy training run."""

    task: str = "UniLab/UR5Reach-v0"
    num_envs: int = 64
    total_steps: int = 300_000
    seed: int = 0
    device: str = "auto"
    out: str | None = None
    torch_threads: int | None = None
    env_kwargs: dict = field(default_factory=dict)
    sim2real: str | dict | None = None
    algo: OffPolicyAlgo = field(default_factory=OffPolicyAlgo)
    nets: OffPolicyNets = field(default_factory=OffPolicyNets)
    log: OffPolicyLog = field(default_factory=OffPolicyLog)
    stop: OffPolicyStop = field(default_factory=OffPolicyStop)

    def __post_init__(self) -> None:
        require(bool(self.task), "task must be a non-empty environment id")
        require(self.num_envs >= 1 and self.total_steps >= 1, "num_envs and total_steps must be >= 1")
        require(self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"),
                f"device must be 'auto', 'cpu' or 'cuda[:i]', got {self.device!r}")
        require(self.algo.buffer_size >= self.num_envs,
                f"algo.buffer_size ({self.algo.buffer_size}) must hold at least one step of num_envs ({self.num_envs})")
        demos = self.algo.demonstrations
        require(demos is None or demos.envs < self.num_envs, f"algo.demonstrations.envs ({demos and demos.envs}) must "
                f"be below num_envs ({self.num_envs}): at least one env is left to the actor; set it lower, or "
                f"algo.demonstrations=null for none")
        if isinstance(self.sim2real, str) and self.sim2real.strip().lower() in ("none", ""):
            object.__setattr__(self, "sim2real", None)

    @property
    def out_dir(self) -> Path:
        """``out``, else ``runs/<task id with / as _>_<kind>``."""
        name = self.task.rpartition(":")[2].replace("/", "_")
        return Path(self.out) if self.out else Path("runs") / f"{name}_{self.algo.kind}"

    @property
    def iterations(self) -> int:
        """Batch env steps the run takes."""
        return max(1, math.ceil(self.total_steps / self.num_envs))


def recipe_file(task: str) -> Path | None:
    """The bundled ``*_sac.yaml`` whose ``task:`` is ``task`` and which trains on the bare task, if any. A recipe
    under a sim-to-real profile (a ``sim2real`` key, e.g. ``ur5_grasp_real_sac.yaml``) is read with ``--config``."""
    for path in sorted(CONFIG_DIR.glob("*_sac.yaml")):
        data = load_yaml(path.read_text()) or {}
        if data.get("task") == task and data.get("sim2real") is None:
            return path
    return None


def load_offpolicy_config(kind: str, task: str | None = None, config_file: str | Path | None = None,
                          overrides: list[str] | tuple[str, ...] = (), **flags: Any) -> OffPolicyConfig:
    """Defaults, the task's recipe, a user file, flags (``None`` ignored), overrides; ``algo.kind`` is ``kind``."""
    user = read_yaml(config_file, "config file", "check the --config path") if config_file else {}
    over = parse_overrides(list(overrides))
    task = task or over.get("task") or user.get("task") or OffPolicyConfig.task
    recipe = recipe_file(task)
    layers = read_yaml(recipe, "config file") if recipe else {}
    for layer in (user, {k: v for k, v in flags.items() if v is not None}, over):
        layers = deep_merge(layers, layer)
    layers["task"] = task
    given = (layers.get("algo") or {}).get("kind")
    if given not in (None, kind):
        raise ConfigError(f"--algo {kind} was asked for, but the config says algo.kind: {given}")
    layers = deep_merge(layers, {"algo": {"kind": kind}})
    return from_dict(OffPolicyConfig, layers)
