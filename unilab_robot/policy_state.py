"""A recurrent policy's hidden state on the robot side: one per robot, zeroed at each episode's start.

A recurrent ``policy.onnx`` (``unilab export`` of a ``policy.recurrent: gru`` run) has its state as an
explicit second input and output: ``obs, h_in [1, H] -> actions, h_out [1, H]``. The program that
runs it keeps ``h`` between control steps: :class:`RecurrentState` feeds ``h_in`` and keeps ``h_out``,
and :meth:`RecurrentState.reset` zeroes it. Who resets it:

- the runtime (``unilab robot run`` / ``lockstep``) when the policy takes over (``_start_policy``: after
  the move to the home pose, and at each new simulated episode with ``follow_episodes``);
- ``unilab play`` at each episode's reset;
- a hot swap (:mod:`unilab_robot.swap`) **resets**: the policy that acts after a swap or a rollback starts
  from a zero state (a state is only meaningful to the weights that wrote it; zero is what training
  started every episode from, so it is the safe choice).

Each :class:`~unilab_robot.policy.OnnxPolicy` / :class:`~unilab_robot.swap.OnnxSession` owns its state, so
two robots never share one. A feed-forward policy has none (:func:`recurrent_state` gives ``None``).
"""

from __future__ import annotations

import numpy as np

STATE_INPUT, STATE_OUTPUT = "h_in", "h_out"


class RecurrentState:
    """The ``h_in`` / ``h_out`` of one onnxruntime session: ``run(obs)`` steps it, :meth:`reset` zeroes it."""

    def __init__(self, session, obs_name: str, action_name: str) -> None:
        shape = next(i.shape for i in session.get_inputs() if i.name == STATE_INPUT)
        self.size = int(shape[-1])
        self.session, self.obs_name = session, obs_name
        self.outputs = [action_name, STATE_OUTPUT]
        self.h = np.zeros((1, self.size), np.float32)

    def run(self, obs: np.ndarray) -> np.ndarray:
        """The action ``[1, A]`` for ``obs`` ``[1, O]``; the state moves one step."""
        action, self.h = self.session.run(self.outputs, {self.obs_name: obs, STATE_INPUT: self.h})
        return action

    def reset(self) -> None:
        """Zero the state (the next step is an episode's first)."""
        self.h = np.zeros((1, self.size), np.float32)


def recurrent_state(session, obs_name: str, action_name: str) -> RecurrentState | None:
    """A :class:`RecurrentState` for a session whose graph has ``h_in`` / ``h_out``; ``None`` for a feed-forward one."""
    inputs = {i.name for i in session.get_inputs()}
    outputs = {o.name for o in session.get_outputs()}
    if STATE_INPUT not in inputs:
        return None
    if STATE_OUTPUT not in outputs:
        raise ValueError(f"the policy has a {STATE_INPUT} input but no {STATE_OUTPUT} output; re-export it")
    return RecurrentState(session, obs_name, action_name)


def check_state(state: RecurrentState | None, spec, what: str = "the policy") -> None:
    """:class:`~unilab_robot.deploy.SpecError` unless the graph's state agrees with the spec's ``recurrent``
    section (both absent, or the same width)."""
    from unilab_robot.deploy import SpecError

    section = getattr(spec, "recurrent", None)
    if section is None and state is None:
        return
    if section is None or state is None or section.size != state.size:
        graph = f"a {state.size}-wide hidden state (h_in / h_out)" if state is not None else "no hidden state"
        said = f"a {section.kind} state of {section.size}" if section is not None else "none"
        raise SpecError(f"{what} has {graph}, its deploy spec's recurrent section says {said}; use the "
                        "deploy_spec.json exported with that policy")


def reset_policy_state(policy) -> None:
    """Zero ``policy``'s recurrent state when it has one (any callable with a ``reset()``); else nothing."""
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
