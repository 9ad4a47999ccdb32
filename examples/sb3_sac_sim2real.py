"""Train SB3's SAC on a UniLab task behind the sim-to-real wrapper stack.

The batched env (N robots on MuJoCo's thread pool) goes through
``wrappers.Sim2Real(profile="go1_real")`` (domain randomization, pushes, motor
strength, action noise and latency, IMU drift, observation noise and latency,
packet loss), then ``trainers.sb3.SB3VecEnv`` (SB3's VecEnv API, vectorized,
time-outs bootstrapped through ``TimeLimit.truncated``), then ``VecNormalize``.

    python examples/sb3_sac_sim2real.py [--task UniLab/Go1Joystick-v0] [--num-envs 64]
        [--total-steps 200000] [--profile go1_real] [--out runs/sb3_sac_sim2real]

Then ``tensorboard --logdir runs/sb3_sac_sim2real/tb`` shows rollout/ep_rew_mean,
train/* and one reward/<term> curve per reward term.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from stable_baselines3 import SAC
from stable_baselines3.common.callbacks import CallbackList
from stable_baselines3.common.vec_env import VecNormalize

import unilab_envs  # noqa: F401  (registers the UniLab/* tasks)
from trainers.common.plotting import plot_learning_curve
from trainers.sb3.callbacks import CheckpointCallback, DumpLogsCallback, RewardTermsCallback, save_model, sb3_logger
from trainers.sb3.env import make_sb3_env

try:
    from wrappers import Sim2Real
except ImportError as exc:  # pragma: no cover - wrappers ships with unilab
    raise SystemExit(
        f"this example needs wrappers.Sim2Real (the sim-to-real wrapper stack), which is not importable: {exc}"
    ) from exc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="UniLab/Go1Joystick-v0")
    parser.add_argument("--profile", default="go1_real")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--total-steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", default="runs/sb3_sac_sim2real")
    args = parser.parse_args()
    out = Path(args.out)

    env = make_sb3_env(
        args.task,
        args.num_envs,
        wrappers=[lambda venv: Sim2Real(venv, profile=args.profile)],
        seed=args.seed,
        normalize={"norm_obs": True, "norm_reward": True, "gamma": 0.99},
    )
    model = SAC(
        "MlpPolicy",
        env,
        learning_rate=3e-4,
        buffer_size=1_000_000,
        batch_size=512,
        learning_starts=10 * args.num_envs,
        train_freq=1,
        gradient_steps=max(1, args.num_envs // 16),  # ~16 transitions per gradient step
        gamma=0.99,
        policy_kwargs={"net_arch": [256, 256]},
        seed=args.seed,
        device=args.device,
    )
    model.set_logger(sb3_logger(out, "sb3-sac"))  # progress.csv + tb/, like `unilab train`
    callbacks = CallbackList([
        RewardTermsCallback(),  # reward/<term> means
        DumpLogsCallback(max(1000, 10 * args.num_envs)),  # log every k env steps, not every k episodes
        CheckpointCallback(out, max(args.total_steps // 5, 1)),
    ])
    model.learn(total_timesteps=args.total_steps, callback=callbacks, log_interval=None)
    path = save_model(model, out, "model")
    model.logger.close()
    plot_learning_curve(out / "progress.csv", out / "learning_curve.png",
                        title=f"SAC on {args.task} + Sim2Real({args.profile})")
    env.close()

    # Evaluate with frozen normalization statistics, on the same randomized stack.
    eval_env = make_sb3_env(args.task, 16, wrappers=[lambda venv: Sim2Real(venv, profile=args.profile)],
                            seed=args.seed + 1000, spread_episode_starts=False)
    eval_env = VecNormalize.load(str(out / "model_vecnormalize.pkl"), eval_env)
    eval_env.training, eval_env.norm_reward = False, False
    policy = SAC.load(path, env=eval_env, device=args.device)
    obs, returns, finished = eval_env.reset(), np.zeros(16), []
    while len(finished) < 16:
        obs, reward, dones, infos = eval_env.step(policy.predict(obs, deterministic=True)[0])
        returns += reward
        for i in np.flatnonzero(dones):
            finished.append(returns[i])
            returns[i] = 0.0
    print(f"saved {path}; mean return over 16 evaluation episodes: {np.mean(finished):.3f}")
    eval_env.close()


if __name__ == "__main__":
    main()
