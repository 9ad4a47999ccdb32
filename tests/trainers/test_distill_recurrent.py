"""DAgger into a recurrent student (``unilab distill ... policy.recurrent=gru``): the fit replays the states the
student acted from (batched sequences equal the step-by-step acting, resets included), and a tiny
distillation learns the teacher's actions on held-out states, judged through the deployed recurrent policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tests.trainers.test_distill import FLAT, QUIET, _held_out_states, _rms

from trainers import cli
from trainers.common.logging import read_csv
from trainers.distill import DistillConfig, distill
from trainers.distill.memory import StudentMemory
from trainers.distill.teacher import Teacher
from trainers.ppo.config import PolicyConfig, load_config
from trainers.ppo.evaluate import evaluate, load_policy
from trainers.ppo.recurrent import RecurrentActorCritic

GRU = ["policy.recurrent=gru", "policy.recurrent_hidden=32", "policy.actor_hidden=[64]"]


@pytest.mark.parametrize("same_step", [True, False], ids=["SameStep", "NextStep"])
def test_the_fit_recomputes_the_means_the_student_acted_on(same_step):
    """Two rollouts of 6 steps over 5 envs, episodes ending inside them: the sequences the fit replays from the
    rollout's first states and its resets give every mean the student acted with, for any subset of envs."""
    torch.manual_seed(0)
    policy = RecurrentActorCritic(4, 4, 2, PolicyConfig(recurrent="gru", recurrent_hidden=8, actor_hidden=(16,)))
    T, N = 6, 5
    memory = StudentMemory(policy, N, T, "cpu", same_step)
    rng = np.random.default_rng(1)
    for _ in range(2):  # the second rollout starts from carried, non-zero states
        obs, acted = torch.randn(T, N, 4), []
        for t in range(T):
            acted.append(memory.step(t, obs[t]))
            memory.episodes_ended(rng.random(N) < 0.2, rng.random(N) < 0.1)
    assert memory.starts.sum() > 0 and memory.hidden0.abs().sum() > 0
    with torch.no_grad():
        torch.testing.assert_close(memory.means(obs, torch.arange(N)), torch.stack(acted), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(memory.means(obs, slice(None)), torch.stack(acted), rtol=1e-5, atol=1e-6)
        envs = torch.tensor([3, 0])
        torch.testing.assert_close(memory.means(obs, envs), torch.stack(acted)[:, envs], rtol=1e-5, atol=1e-6)


def test_next_step_autoreset_zeroes_the_state_after_the_reset_step_too():
    policy = RecurrentActorCritic(2, 2, 1, PolicyConfig(recurrent="gru", recurrent_hidden=4, actor_hidden=(8,)))
    memory = StudentMemory(policy, 2, 4, "cpu", same_step=False)
    done, never = np.array([True, False]), np.zeros(2, bool)
    for t, ended in enumerate([done, never, never]):
        memory.step(t, torch.randn(2, 2))
        memory.episodes_ended(ended, never)
    memory.step(3, torch.randn(2, 2))
    # step 0: every env starts; env 0 ends at step 0, so steps 1 (its reset step) and 2 (its first) start afresh
    np.testing.assert_array_equal(memory.starts.numpy(), [[1, 1], [1, 0], [1, 0], [0, 0]])


def test_a_tiny_recurrent_distillation_learns_the_teachers_actions(tmp_path):
    """The flat Go1's student with a GRU, teacher the shipped go1_joystick: on held-out teacher-driven episodes
    the deployed student (its state carried step to step) is at least twice as close to the teacher as before."""
    out = tmp_path / "gru"
    cfg = load_config(FLAT, overrides=[*QUIET, *GRU, "num_envs=32", "total_steps=7680", f"out={out}"],
                      torch_threads=1)
    # the teacher drives every rollout (beta 1): the states the held-out episodes below visit
    result = distill(cfg, DistillConfig(teacher="policies/go1_joystick", beta_decay=1.0, learning_rate=3e-3))
    assert result.iterations == 10
    curve = read_csv(out / "progress.csv")["distill/action_error"]
    assert curve[-1] < 0.6 * curve[0], curve  # measured on each rollout before its fit: states not yet fitted

    teacher = Teacher("policies/go1_joystick")
    states = _held_out_states(teacher).reshape(30, 32, -1)  # [steps, envs, obs], one episode each from its start
    student, student_cfg, _ = load_policy(out)
    assert student_cfg.policy.recurrent == "gru" and student.hidden_size == 32
    with torch.no_grad():
        h, actions = student.initial_state(32), []
        for x in states:
            a, h = student(x, h)
            actions.append(a)
        error = _rms(torch.stack(actions), teacher(states))
    print(f"held-out RMS action error of the GRU student: {error:.3f} (first rollout before any fit: {curve[0]:.3f})")
    assert error < 0.5 * curve[0], (error, curve[0])
    assert evaluate(out, episodes=2, num_envs=2, env_kwargs={"max_episode_steps": 40}).episodes == 2


def test_a_recurrent_student_with_a_mirror_average_is_refused_in_one_line(tmp_path, capsys):
    assert cli.main(["distill", "--teacher", "policies/go1_joystick", "--task", FLAT, "--out", str(tmp_path / "s"),
                     "policy.recurrent=gru", "policy.mirror_average=true"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "policy.mirror_average with policy.recurrent" in err[0], err
