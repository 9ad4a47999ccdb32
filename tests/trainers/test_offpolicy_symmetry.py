"""Mirror augmentation of the off-policy learner's minibatches (``algo.symmetry: augment``): the mirrored batch
by hand, its own inverse, a learner that learns the mirror image of what it saw, and augmented Go1 updates."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers.offpolicy.config import OffPolicyAlgo, OffPolicyNets, load_offpolicy_config
from trainers.offpolicy.learner import OffPolicyLearner
from trainers.offpolicy.replay import Batch, DeviceReplay
from trainers.offpolicy.runner import OffPolicyRunner
from trainers.offpolicy.symmetry import BatchMirror

# obs (a, b, c) -> (b, a, -c); actions (u, v) -> (-v, -u); critic extras (p, q) -> (q, p)
HAND = BatchMirror(([1, 0, 2], [1.0, 1.0, -1.0]), ([1, 0], [-1.0, -1.0]), ([1, 0], [1.0, 1.0]))


def _batch() -> Batch:
    return Batch(obs=torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), action=torch.tensor([[0.1, 0.2], [0.3, -0.4]]),
                 reward=torch.tensor([1.5, -2.0]), next_obs=torch.tensor([[7.0, 8.0, 9.0], [-1.0, -2.0, -3.0]]),
                 discount=torch.tensor([0.9, 0.0]), critic_obs=torch.tensor([[10.0, 20.0], [30.0, 40.0]]),
                 next_critic_obs=torch.tensor([[50.0, 60.0], [70.0, 80.0]]))


def _fields(batch: Batch) -> dict[str, torch.Tensor]:
    return {name: getattr(batch, name) for name in Batch.__dataclass_fields__}


def test_the_mirrored_batch_is_the_mirror_applied_by_hand():
    batch = _batch()
    got = HAND.mirror(batch)
    torch.testing.assert_close(got.obs, torch.tensor([[2.0, 1.0, -3.0], [5.0, 4.0, -6.0]]))
    torch.testing.assert_close(got.action, torch.tensor([[-0.2, -0.1], [0.4, -0.3]]))
    torch.testing.assert_close(got.next_obs, torch.tensor([[8.0, 7.0, -9.0], [-2.0, -1.0, 3.0]]))
    torch.testing.assert_close(got.critic_obs, torch.tensor([[20.0, 10.0], [40.0, 30.0]]))
    torch.testing.assert_close(got.next_critic_obs, torch.tensor([[60.0, 50.0], [80.0, 70.0]]))
    assert got.reward is batch.reward and got.discount is batch.discount  # returns and ends unchanged
    both = HAND.augment(batch)
    for name, value in _fields(both).items():  # the originals first, then their mirror images
        torch.testing.assert_close(value, torch.cat([getattr(batch, name), getattr(got, name)]))
    plain = Batch(batch.obs, batch.action, batch.reward, batch.next_obs, batch.discount)  # no privileged extras
    assert HAND.augment(plain).critic_obs is None and HAND.augment(plain).obs.shape == (4, 3)


@pytest.fixture(scope="module")
def go1_mirror():
    """The BatchMirror of a 2-env Go1Joystick (50 obs, 12 actions, 25 privileged extras)."""
    from trainers.common.envs import make_vec_env
    from trainers.offpolicy.symmetry import env_batch_mirror

    env = make_vec_env("UniLab/Go1Joystick-v0", 2, {"num_threads": 1})
    mirror = env_batch_mirror(env, "UniLab/Go1Joystick-v0", "augment", 25, torch.device("cpu"))
    task = env.unwrapped.task
    env.close()
    return mirror, task


def test_mirroring_twice_gives_the_original(go1_mirror):
    mirror, task = go1_mirror
    g = torch.Generator().manual_seed(0)
    batch = Batch(*(torch.randn(*shape, generator=g) for shape in ((16, 50), (16, 12), (16,), (16, 50), (16,), (16, 25), (16, 25))))
    for m in (HAND, mirror):
        b = _batch() if m is HAND else batch
        for name, value in _fields(m.mirror(m.mirror(b))).items():
            torch.testing.assert_close(value, getattr(b, name), rtol=0, atol=0)
    # Go1's maps are the task's: the policy observation's and the privileged observation's
    np.testing.assert_array_equal(mirror.mirror(batch).obs.numpy(), task.mirror.observation(batch.obs.numpy()))
    np.testing.assert_array_equal(mirror.mirror(batch).critic_obs.numpy(),
                                  task.privileged_mirror.observation(batch.critic_obs.numpy()))
    np.testing.assert_array_equal(mirror.mirror(batch).action.numpy(), task.mirror.action(batch.action.numpy()))


def test_the_learner_learns_the_mirror_image_of_what_it_saw():
    """A one-step bandit: obs x, reward -(a - 0.5 x)^2, mirror x -> -x, a -> -a. Only x = +1 is ever collected;
    with the augmentation the deterministic actor answers x = -1 with -0.5 as well (without it, ~+0.4: the answer
    it saw, carried over)."""
    torch.manual_seed(0)
    algo = OffPolicyAlgo(batch_size=64, n_step=1, alpha=0.01, learning_starts=0, actor_lr=1e-3, critic_lr=1e-3)
    learner = OffPolicyLearner(1, 0, 1, algo, OffPolicyNets(actor_hidden=(32,), critic_hidden=(64, 64), obs_norm=False),
                               torch.device("cpu"))
    flip = BatchMirror(([0], [-1.0]), ([0], [-1.0]))
    replay = DeviceReplay(4096, 32, 1, 1, torch.device("cpu"), n_step=1, gamma=algo.gamma)
    x = torch.ones(32, 1)
    for _ in range(100):
        a = learner.act(x, explore=True)
        replay.add(x, a, -(a[:, 0] - 0.5) ** 2, x, torch.ones(32, dtype=torch.bool), torch.zeros(32, dtype=torch.bool))
        for _ in range(8):
            learner.update(flip.augment(replay.sample(algo.batch_size)))
    answers = learner.act(torch.tensor([[-1.0], [1.0]]), explore=False)[:, 0]
    assert answers.tolist() == pytest.approx([-0.5, 0.5], abs=0.1)


# laid over the bundled Go1 recipe (go1_joystick_sac.yaml): one update per batch step, whatever the recipe says
GO1_TINY = ["num_envs=4", "total_steps=48", "algo.learning_starts=32", "algo.batch_size=16", "algo.buffer_size=400",
            "algo.updates_per_step=1", "nets.actor_hidden=[16]", "nets.critic_hidden=[16]", "log.progress=false",
            "log.tensorboard=false", "log.plot=false", "log.csv=false", "log.checkpoint_every_steps=100000",
            "torch_threads=1", "env_kwargs={num_threads: 1}"]


@pytest.mark.parametrize("kind", ["sac", "td3"])
def test_an_augmented_update_on_go1(kind, tmp_path):
    """With algo.symmetry: augment each update gets the sampled minibatch followed by its mirror image (the
    privileged extras included), the losses are finite and the actor moves; the default builds no mirror."""
    runner = OffPolicyRunner(load_offpolicy_config(kind, "UniLab/Go1Joystick-v0",
                                                   overrides=[*GO1_TINY, "algo.symmetry=augment", f"out={tmp_path}"]))
    actor_before = [p.detach().clone() for p in runner.learner.actor.parameters()]
    seen: list[Batch] = []
    update = runner.learner.update
    runner.learner.update = lambda batch: (seen.append(batch), update(batch))[1]
    result = runner.train()
    assert result.updates == len(seen) == 5 and runner.critic_extra == 25
    for batch in seen:
        assert batch.obs.shape == (32, 50) and batch.critic_obs.shape == (32, 25)
        first = Batch(**{name: value[:16] for name, value in _fields(batch).items()})
        for name, value in _fields(runner.mirror.mirror(first)).items():
            torch.testing.assert_close(value, getattr(batch, name)[16:], rtol=0, atol=0)
    assert all(np.isfinite(v) for v in result.stats.values())
    assert any(not torch.equal(a, b) for a, b in zip(actor_before, runner.learner.actor.parameters()))  # the actor learned
    # the normalizers saw each collected row and its mirror image: their statistics are their own mirror images
    (obs_perm, obs_sign), (critic_perm, critic_sign) = runner.mirror.obs, runner.mirror.critic
    for norm, perm, sign in ((runner.learner.obs_norm, obs_perm, obs_sign),
                             (runner.learner.critic_norm, torch.cat([obs_perm, 50 + critic_perm]), torch.cat([obs_sign, critic_sign]))):
        torch.testing.assert_close(norm.mean[perm] * sign, norm.mean, rtol=0, atol=1e-5)
        torch.testing.assert_close(norm.var[perm], norm.var, rtol=1e-4, atol=1e-6)
    plain = OffPolicyRunner(load_offpolicy_config(kind, "UniLab/Go1Joystick-v0", overrides=[*GO1_TINY, f"out={tmp_path / 'p'}"]))
    assert plain.mirror is None and plain.cfg.algo.symmetry == "none"
    plain.env.close()
