"""What an asymmetric critic may know about the sim-to-real gap: the clean observation and the perturbations.

The policy of a robot sees what its sensors report: noisy, biased, delayed, sometimes
lost. Its critic only exists in training, so it may see the truth, and a value function
that knows the truth is a better baseline (RMA-style privileged information; MuJoCo
Playground's and legged_gym's critics read clean state, pushes and randomized physics).
A profile asks for it with one key::

    privileged_critic: true                     # both parts below
    privileged_critic: [clean_obs]              # or name the parts

* ``clean_obs``: the env's own observation before any wrapper touched it (the same
  layout as the policy's);
* ``perturbations``: each wrapper's :meth:`~wrappers._base.Sim2RealWrapper.critic_groups`,
  its current per-env draws and states (delays, frictions, masses, gains, motor strengths,
  IMU biases, the last push and its age, lost packets), in the stack's order.

They are appended to the task's own privileged observation (``info["privileged_obs"]``,
``privileged_observation_space``), so the bundled PPO's critic reads
``[policy obs, task privileged obs, clean obs, perturbations]`` and the policy and the
deploy path are unchanged. :attr:`PrivilegedCritic.groups` names the columns.

For rows that ended in a SAME_STEP step, ``info["final_privileged_obs"]`` carries the
clean final observation and the perturbation values of the episode that ended as they
stood before the step (the per-episode draws exactly; a push or IMU drift of that last
step is not in it).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

from unilab_envs.config import ConfigError
from unilab_envs.core.vector_env import observation_box

PARTS = ("clean_obs", "perturbations")


def privileged_parts(value: Any) -> tuple[str, ...]:
    """The parts a profile's ``privileged_critic`` value asks for (``true``: all, ``false``/``null``: none)."""
    if value is None or value is False:
        return ()
    if value is True:
        return PARTS
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"privileged_critic must be true, false or a list of {list(PARTS)}, got {value!r}")
    unknown = [v for v in value if v not in PARTS]
    if unknown:
        raise ConfigError(f"privileged_critic: unknown part(s) {unknown}; the parts are {list(PARTS)}")
    return tuple(p for p in PARTS if p in value)


class CleanObservationTap(VectorWrapper):
    """Innermost layer of a stack: remembers the env's observation (and SAME_STEP final one) untouched.

    It changes nothing that passes through; the wrappers above write into buffers of their
    own, so the arrays it keeps stay clean until the env's next step.
    """

    def __init__(self, env: VectorEnv) -> None:
        super().__init__(env)
        self.obs: np.ndarray | None = None
        self.final_obs: np.ndarray | None = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.obs, self.final_obs = obs, None
        return obs, info

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self.obs, self.final_obs = obs, info.get("final_obs")
        return obs, reward, terminated, truncated, info

    def get_state(self) -> dict[str, Any]:
        return self.env.get_state()

    def set_state(self, state: dict[str, Any]) -> None:
        self.env.set_state(state)


class PrivilegedCritic:
    """Builds the critic's extended privileged observation for a :class:`~wrappers.sim2real.Sim2Real` stack.

    ``tap`` is the stack's :class:`CleanObservationTap` (``None`` without ``clean_obs``);
    ``layers`` its wrappers, innermost first (read only with ``perturbations``).
    """

    def __init__(self, env: VectorEnv, parts: Sequence[str], tap: CleanObservationTap | None, layers: Sequence[Any]) -> None:
        base = env.unwrapped
        space = getattr(base, "privileged_observation_space", None)
        self.task_size = int(space.shape[-1]) if space is not None else 0
        self.tap = tap if "clean_obs" in parts else None
        self.layers = list(layers) if "perturbations" in parts else []
        n = env.num_envs
        self.groups: dict[str, slice] = {}
        at = self.task_size
        if self.tap is not None:
            width = int(np.prod(env.single_observation_space.shape))
            self.groups["clean_obs"] = slice(at, at + width)
            at += width
        for layer in self.layers:
            for name, values in layer.critic_groups().items():
                width = int(np.asarray(values).reshape(n, -1).shape[1])
                self.groups[name] = slice(at, at + width)
                at += width
        self.size = at
        self.observation_space = observation_box(self.size)  # finite, as the env's own spaces
        self._out = np.zeros((n, self.size), np.float32)
        self._final = np.zeros((n, self.size), np.float32)
        self._before = np.zeros((n, self.size), np.float32)

    def _perturbations(self, out: np.ndarray) -> None:
        for layer in self.layers:
            for name, values in layer.critic_groups().items():
                out[:, self.groups[name]] = np.asarray(values).reshape(out.shape[0], -1)

    def before_step(self) -> None:
        """Remember the perturbations as they stand, for rows whose episode ends in this step."""
        self._perturbations(self._before)

    def fill(self, info: dict[str, Any]) -> None:
        """Write the extended ``privileged_obs`` (and ``final_privileged_obs``) into ``info``."""
        out = self._out
        if self.task_size:
            out[:, :self.task_size] = info["privileged_obs"]
        if self.tap is not None:
            out[:, self.groups["clean_obs"]] = self.tap.obs
        self._perturbations(out)
        info["privileged_obs"] = out.copy()
        if "final_obs" not in info:
            return
        final = self._final
        final[:] = self._before
        if self.task_size:
            final[:, :self.task_size] = info["final_privileged_obs"]
        if self.tap is not None and self.tap.final_obs is not None:
            final[:, self.groups["clean_obs"]] = self.tap.final_obs
        info["final_privileged_obs"] = final.copy()
