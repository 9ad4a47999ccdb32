"""``unilab train --init-from RUN``: a new run that starts from another run's weights."""

import dataclasses

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.common.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from trainers.ppo.config import load_config
from trainers.ppo.envs import EnvDims
from trainers.ppo.init_from import initialize_from
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION, build_learner

TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false", "log.plot=false"]
OVERRIDES = TINY[5:]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("init") / "a"
    assert cli.main(["train", *TINY, "--total-steps", "640", "--out", str(out), "--seed", "3"]) == 0
    return out


def _learner(dims, seed=9, **policy):
    cfg = load_config(POINT_REACH_ID, overrides=OVERRIDES + [f"seed={seed}"] + [f"policy.{k}={v}" for k, v in policy.items()])
    return build_learner(dims, cfg, torch.device("cpu"))


def _saved(run):
    return load_checkpoint(run / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)


def test_actor_critic_and_normalizer_come_from_the_run(trained):
    ckpt = _saved(trained)
    dims = EnvDims(**ckpt["dims"])
    algo = _learner(dims)
    text = initialize_from(algo, dims, POINT_REACH_ID, trained)
    for k, v in ckpt["algo"]["policy"].items():
        torch.testing.assert_close(algo.policy.state_dict()[k], v, rtol=0, atol=0)
    torch.testing.assert_close(algo.obs_normalizer.mean, ckpt["algo"]["obs_normalizer"]["mean"])
    assert "actor, critic, observation normalizer" in text and "fresh" not in text


def test_a_critic_of_another_input_size_and_a_fresh_normalizer_start_fresh(trained):
    ckpt = _saved(trained)
    dims = dataclasses.replace(EnvDims(**ckpt["dims"]), privileged=ckpt["dims"]["privileged"] + 7)
    algo = _learner(dims)
    critic_before = {k: v.clone() for k, v in algo.policy.critic.state_dict().items()}
    text = initialize_from(algo, dims, POINT_REACH_ID, trained / "checkpoint.pt", fresh_normalizer=True)
    saved = ckpt["algo"]["policy"]
    for k, v in algo.policy.actor.state_dict().items():
        torch.testing.assert_close(v, saved[f"actor.{k}"], rtol=0, atol=0)
    for k, v in algo.policy.critic.state_dict().items():
        torch.testing.assert_close(v, critic_before[k], rtol=0, atol=0)
    assert float(algo.obs_normalizer.count) == 0.0
    assert "fresh: critic (its input size changed), observation normalizer" in text
    assert "set algo.critic_warmup_iterations (e.g. 40) to hold the actor while the critic learns" in text
    held = initialize_from(_learner(dims), dims, POINT_REACH_ID, trained, held=40)
    assert "fresh: critic" in held and "critic_warmup" not in held  # a warm-up is already set: no advice


def test_a_distilled_students_critic_is_named_untrained_and_a_warm_up_advised(trained, tmp_path):
    """A DAgger student's checkpoint (its ``distill`` entry) carries a critic that never learned."""
    ckpt = _saved(trained)
    student = save_checkpoint({**{k: v for k, v in ckpt.items() if k not in ("format", "version")},
                               "distill": {"teacher_task": POINT_REACH_ID}}, tmp_path / "student.pt", CKPT_FORMAT,
                              CKPT_VERSION)
    dims = EnvDims(**ckpt["dims"])
    text = initialize_from(_learner(dims), dims, POINT_REACH_ID, student)
    assert "actor, critic (untrained: a distilled student's), observation normalizer" in text, text
    assert "set algo.critic_warmup_iterations" in text
    assert "set algo.critic_warmup_iterations" not in initialize_from(_learner(dims), dims, POINT_REACH_ID, student, held=3)
    plain = initialize_from(_learner(dims), dims, POINT_REACH_ID, trained)
    assert "untrained" not in plain and "critic_warmup" not in plain


def test_the_std_ceiling_of_the_new_run_applies(trained):
    ckpt = _saved(trained)
    dims = EnvDims(**ckpt["dims"])
    algo = _learner(dims, init_std=0.2, max_std=0.2)
    initialize_from(algo, dims, POINT_REACH_ID, trained)
    assert float(torch.exp(algo.policy.log_std.detach()).max()) <= 0.2 + 1e-6 < float(torch.exp(ckpt["algo"]["policy"]["log_std"]).max())


def test_another_task_or_shape_is_refused(trained):
    ckpt = _saved(trained)
    dims = EnvDims(**ckpt["dims"])
    with pytest.raises(CheckpointError, match="trained on"):
        initialize_from(_learner(dims), dims, "UniLab/Go1Joystick-v0", trained)
    with pytest.raises(CheckpointError, match="does not match this env"):
        initialize_from(_learner(dims), dataclasses.replace(dims, obs=dims.obs + 1), POINT_REACH_ID, trained)
    with pytest.raises(CheckpointError, match="do not fit"):
        initialize_from(_learner(dims, **{"actor_hidden": "[8]"}), dims, POINT_REACH_ID, trained)


def test_cli_starts_a_new_run_and_records_where_from(trained, tmp_path, capsys):
    out = tmp_path / "b"
    assert cli.main(["train", *TINY, "--total-steps", "256", "--out", str(out), "--init-from", str(trained)]) == 0
    err = capsys.readouterr().err
    assert f"initialized from {trained / 'checkpoint.pt'}" in err
    ckpt = _saved(out)
    assert ckpt["iteration"] == 2 and ckpt["config"]["init_from"] == str(trained)
    assert cli.main(["train", *TINY, "--resume", str(trained), "--init-from", str(trained)]) == 2
    assert "give one" in capsys.readouterr().err
