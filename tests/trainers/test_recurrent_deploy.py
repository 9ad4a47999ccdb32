"""A recurrent policy's hidden state outside training: the ONNX with explicit state (``obs, h_in -> actions, h_out``)
equals the torch policy over a 200-step stretch with episode resets, and the robot side (the runtime in lock step,
a hot swap) keeps one state per policy and zeroes it where an episode starts and at a swap."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from tests.trainers.memory_env import CUE_RECALL_ID, CueRecall

from trainers.common.normalizers import EmpiricalNormalizer
from trainers.common.onnx_export import ClipToBoxRecurrent, describe_onnx, export_policy
from trainers.ppo import train
from trainers.ppo.config import PolicyConfig, TrainConfig, from_dict
from trainers.ppo.evaluate import export_onnx, load_policy
from trainers.ppo.recurrent import RecurrentActor, RecurrentInferencePolicy, StatefulActions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robot"))
from robot_support import G1_POLICY, Lines, g1_model, lockstep  # noqa: E402


def test_the_onnx_with_explicit_state_equals_the_torch_policy_over_200_steps_with_resets(tmp_path):
    cfg = from_dict(TrainConfig, {
        "task": CUE_RECALL_ID, "num_envs": 16, "total_steps": 16 * 16 * 3, "seed": 1, "out": str(tmp_path),
        "algo": {"num_steps": 16, "num_minibatches": 2},
        "policy": {"recurrent": "gru", "recurrent_hidden": 12, "actor_hidden": [16], "critic_hidden": [16]},
        "log": {"tensorboard": False, "csv": False, "progress": False, "plot": False}})
    run = train(cfg)
    path = export_onnx(run.checkpoint)
    info = describe_onnx(path)
    assert [(t.name, t.shape) for t in info.inputs] == [("obs", ("batch", 2)), ("h_in", ("batch", 12))]
    assert [(t.name, t.shape) for t in info.outputs] == [("actions", ("batch", 1)), ("h_out", ("batch", 12))]
    assert "hidden state" in info.summary()

    import onnxruntime as ort

    from unilab_robot.policy_state import recurrent_state

    policy, _, _ = load_policy(run.checkpoint)
    n = 4
    torch_actions = StatefulActions(policy, n)
    sessions = [ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]) for _ in range(n)]
    states = [recurrent_state(s, "obs", "actions") for s in sessions]  # one state per "robot"
    env = CueRecall(n, seed=3)
    obs, _ = env.reset(seed=3)
    resets = 0
    for step in range(200):
        want = np.clip(torch_actions(obs), -1.0, 1.0)
        got = np.concatenate([st.run(obs[i:i + 1]) for i, st in enumerate(states)])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
        np.testing.assert_allclose(np.concatenate([st.h for st in states]), torch_actions.h.numpy(), atol=1e-5)
        obs, _, term, trunc, _ = env.step(want)
        ended = term | trunc
        torch_actions.reset_rows(ended)
        for i in np.flatnonzero(ended):
            states[i].reset()
        resets += int(ended.sum())
    assert resets >= 4 * 200 // 8 - 4  # every env went through ~25 episodes


def gru_policy_folder(out: Path, hidden: int = 16, seed: int = 0) -> Path:
    """The shipped G1 policy's folder with a GRU policy of random weights in place of its ONNX (same sizes, same spec)."""
    spec = json.loads((Path(G1_POLICY) / "deploy_spec.json").read_text())
    size = spec["history"]["size"] if spec.get("history") else spec["observation"]["size"]
    act = spec["action"]["size"]
    torch.manual_seed(seed)
    actor = RecurrentActor(size, act, PolicyConfig(recurrent="gru", recurrent_hidden=hidden, actor_hidden=(32,)))
    policy = RecurrentInferencePolicy(EmpiricalNormalizer(size, enabled=False), actor)
    out.mkdir(parents=True)
    export_policy(ClipToBoxRecurrent(policy, -np.full(act, 100.0), np.full(act, 100.0)), size, out / "policy.onnx",
                  "test", action_low=-np.full(act, 100.0), action_high=np.full(act, 100.0), state_size=hidden)
    spec["recurrent"] = {"kind": "gru", "size": hidden}
    (out / "deploy_spec.json").write_text(json.dumps(spec))
    return out


class _Watched:
    """Wraps a policy's :class:`~unilab_robot.policy_state.RecurrentState`: notes the ``h_in`` of each step."""

    def __init__(self, policy):
        self.h_in: list[np.ndarray] = []
        run = policy.state.run

        def noted(obs):
            self.h_in.append(policy.state.h.copy())
            return run(obs)

        policy.state.run = noted


def test_the_runtime_zeroes_the_state_where_each_episode_starts(tmp_path):
    from unilab_robot.motors import robot_def
    from unilab_robot.policy import OnnxPolicy, find_policy
    from unilab_robot.runtime import RobotRuntime, RuntimeConfig
    from unilab_robot.sim import SimConfig, SimRobot
    from unilab_robot.wire import LocalBus

    bundle = find_policy(gru_policy_folder(tmp_path / "gru"))
    spec = bundle.spec
    policy = OnnxPolicy(bundle.onnx, spec)
    assert policy.state is not None and policy.state.size == 16
    watched = _Watched(policy)
    bus, lines = LocalBus(), Lines()
    sim = SimRobot(spec, g1_model(spec), robot_def("g1"), bus.endpoint(), SimConfig(episode_s=0.5), say=lines)
    rt = RobotRuntime(spec, g1_model(spec), policy, robot_def("g1"), bus.endpoint(),
                      RuntimeConfig(damping_s=0.1, move_s=0.2, command="fixed", follow_episodes=True), say=lines)
    starts = []
    rt_start = rt._start_policy

    def noting_start(now):
        starts.append(len(watched.h_in))  # the index of the episode's first policy step
        rt_start(now)

    rt._start_policy = noting_start
    lockstep(rt, sim, 4.0)
    assert sim.episode >= 3 and len(starts) >= 3, (sim.episode, starts)
    h_in = np.array(watched.h_in)[:, 0]
    first = [i for i in starts if i < len(h_in)]
    assert all(not h_in[i].any() for i in first)  # a zero state at each episode's first step
    later = np.setdiff1d(np.arange(len(h_in)), first)
    assert len(later) > 50 and all(h_in[i].any() for i in later)  # the carried state at every other step


def test_a_hot_swap_resets_the_state_of_the_policy_that_acts_after_it(tmp_path):
    from unilab_robot.deploy import load_spec
    from unilab_robot.swap import HotSwap, OnnxSession

    folder = gru_policy_folder(tmp_path / "a")
    spec = load_spec(folder / "deploy_spec.json")
    first = OnnxSession(folder / "policy.onnx", spec.input_size, spec.action.size)
    swap = HotSwap(spec, first, folder, say=Lines(), warmup=3)
    obs = np.full(spec.input_size, 0.1, np.float32)
    for _ in range(3):
        swap.boundary()[0](obs)
    assert first.state.h.any()
    answer = swap.request(gru_policy_folder(tmp_path / "b", seed=1), wait=True)
    assert answer.startswith("ready"), answer
    policy, pid, event = swap.boundary()
    assert (pid, event) == (1, 1) and policy is not first and not policy.state.h.any()  # warmed up, then reset
    policy(obs)
    assert swap.request_rollback().startswith("rolling back")
    policy, pid, event = swap.boundary()
    assert (pid, event) == (0, 2) and policy is first and not first.state.h.any()  # the old state is not resumed


def test_a_feed_forward_policy_has_no_state():
    from unilab_robot.policy import OnnxPolicy, find_policy

    bundle = find_policy(G1_POLICY)
    policy = OnnxPolicy(bundle.onnx, bundle.spec)
    assert policy.state is None
    policy.reset()  # nothing to reset: a no-op



def test_a_policy_whose_graph_and_spec_disagree_on_the_state_is_refused(tmp_path):
    from unilab_robot.deploy import load_spec
    from unilab_robot.policy import OnnxPolicy, PlayError, find_policy
    from unilab_robot.swap import HotSwap, OnnxSession

    folder = gru_policy_folder(tmp_path / "gru")
    spec = json.loads((folder / "deploy_spec.json").read_text())
    del spec["recurrent"]
    (folder / "deploy_spec.json").write_text(json.dumps(spec))
    bundle = find_policy(folder)
    with pytest.raises(PlayError, match=r"has a 16-wide hidden state \(h_in / h_out\), its deploy spec's recurrent "
                                        r"section says none"):
        OnnxPolicy(bundle.onnx, bundle.spec)
    feed_forward = find_policy(G1_POLICY)
    first = OnnxSession(f"{G1_POLICY}/policy.onnx", feed_forward.spec.input_size, feed_forward.spec.action.size)
    swap = HotSwap(feed_forward.spec, first, G1_POLICY, say=Lines())
    assert "its deploy spec's recurrent section says none" in swap.request(folder, wait=True)
    assert load_spec(gru_policy_folder(tmp_path / "ok")).recurrent.size == 16


def test_a_reduced_precision_of_a_recurrent_policy_is_refused_in_one_line(tmp_path):
    from trainers.common.precision import PrecisionError, reduce_precision

    folder = gru_policy_folder(tmp_path / "gru")
    with pytest.raises(PrecisionError, match=r"--precision fp16 of a recurrent policy \(h_in / h_out\) is not supported"):
        reduce_precision(folder / "policy.onnx", tmp_path / "fp16.onnx", "fp16", None)
    assert not (tmp_path / "fp16.onnx").exists()
