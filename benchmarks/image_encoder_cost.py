"""The image encoder's cost: PPO update and policy inference with the CNN vs a plain MLP, same observation width.

Both learners read the same flat observation (the Go1 depth task's: 50 proprioceptive floats and a
depth image; the critic also the 212 privileged floats), have the same MLP sizes (256-128-64) and
PPO settings (``num_envs`` x 24 steps, 5 epochs, 4 minibatches) and get the same random rollout.
``cnn``: the default ``policy.image_encoder`` (16 and 32 channels, kernels 5 and 3, stride 2, 64
features) on the image, in the actor and in the critic; ``mlp``: ``policy.image_encoder: null``, the
image's columns straight into the MLP. Times are the best of ``--repeats`` in one process, side by side:

* update: one whole PPO update (GAE, all epochs and minibatches), seconds;
* act N: the deterministic policy (normalizer folded in) on a batch of ``num_envs`` observations
  (one collection step), milliseconds;
* act 1: on one observation (the robot's control loop), milliseconds.

    python benchmarks/image_encoder_cost.py                      # 12x16 and 48x64 images, 256 envs
    python benchmarks/image_encoder_cost.py --num-envs 1024 --repeats 5 --device cuda
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import time

import torch

PROPRIO, PRIVILEGED, ACT = 50, 212, 12
IMAGES = {"12x16": (12, 16), "48x64": (48, 64)}


def learner(height: int, width: int, cnn: bool, num_envs: int, device: torch.device):
    from trainers.ppo.config import AlgoConfig, ImageGroupConfig, TrainConfig
    from trainers.ppo.envs import EnvDims
    from trainers.ppo.runner import build_learner

    obs = PROPRIO + height * width
    cfg = TrainConfig(task="UniLab/Go1JoystickDepth-v0", num_envs=num_envs,
                      algo=AlgoConfig(schedule="fixed", cuda_graph=False))
    group = ImageGroupConfig("depth", (1, height, width), (PROPRIO,), 2.0)
    policy = (dataclasses.replace(cfg.policy, image_groups=(group,)) if cnn
              else dataclasses.replace(cfg.policy, image_encoder=None))
    cfg = dataclasses.replace(cfg, policy=policy)
    return build_learner(EnvDims(obs, ACT, obs + PRIVILEGED), cfg, device), cfg


def filled_storage(algo, cfg, obs_dim: int, device: torch.device):
    from trainers.ppo.storage import RolloutStorage

    T, N = cfg.algo.num_steps, cfg.num_envs
    g = torch.Generator().manual_seed(0)
    st = RolloutStorage(T, N, obs_dim, obs_dim + PRIVILEGED, ACT, device)
    raw = torch.cat([torch.randn(T, N, PROPRIO, generator=g), 0.1 + 1.9 * torch.rand(T, N, obs_dim - PROPRIO, generator=g)], -1)
    crit = torch.cat([raw, torch.randn(T, N, PRIVILEGED, generator=g)], -1)
    st.obs.copy_(algo.obs_normalizer(raw.to(device)))
    st.critic_obs.copy_(algo.critic_normalizer(crit.to(device)))
    for name in ("actions", "rewards", "values"):
        getattr(st, name).copy_(torch.randn(getattr(st, name).shape, generator=g))
    st.action_means.copy_(st.actions * 0.5)
    st.log_probs.copy_(torch.randn(T, N, generator=g) - 5.0)
    return st, raw[0].to(device)


def best(fn, repeats: int, device: torch.device) -> float:
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(image: str, cnn: bool, num_envs: int, repeats: int, device: torch.device) -> dict[str, float]:
    from trainers.ppo.models import InferencePolicy

    h, w = IMAGES[image]
    algo, cfg = learner(h, w, cnn, num_envs, device)
    st, batch = filled_storage(algo, cfg, PROPRIO + h * w, device)
    gen = torch.Generator(device=device).manual_seed(0)
    algo.update(st, gen)  # warm-up
    policy = InferencePolicy(algo.obs_normalizer, algo.policy.actor).eval()
    one = batch[:1]
    with torch.no_grad():
        policy(batch), policy(one)
        act_n = best(lambda: policy(batch), repeats * 20, device)
        act_1 = best(lambda: policy(one), repeats * 50, device)
    update = best(lambda: algo.update(st, gen), repeats, device)
    params = sum(p.numel() for p in algo.policy.actor.parameters())
    return {"update_s": update, "act_n_ms": 1e3 * act_n, "act_1_ms": 1e3 * act_1, "actor_params": params}


def main(argv=None) -> list[tuple]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--device", default="cpu")
    p.add_argument("--image", action="append", choices=list(IMAGES), help="image sizes (default: all)")
    p.add_argument("--torch-threads", type=int, help="torch threads (default: torch's choice)")
    args = p.parse_args(argv)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    device = torch.device(args.device)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {device}, {platform.processor() or platform.machine()}; "
          f"{args.num_envs} envs x 24 steps, 5 epochs, 4 minibatches; best of {args.repeats}")
    head = f"{'image':<7} {'net':<4} {'actor params':>12} {'update s':>9} {'act N ms':>9} {'act 1 ms':>9}"
    print(head)
    rows = []
    for image in args.image or IMAGES:
        got = {net: measure(image, net == "cnn", args.num_envs, args.repeats, device) for net in ("mlp", "cnn")}
        for net, m in got.items():
            print(f"{image:<7} {net:<4} {m['actor_params']:>12} {m['update_s']:9.3f} {m['act_n_ms']:9.3f} "
                  f"{m['act_1_ms']:9.3f}", flush=True)
        r = {k: got["cnn"][k] / got["mlp"][k] for k in ("update_s", "act_n_ms", "act_1_ms")}
        print(f"{image:<7} {'cnn/mlp':<17} {r['update_s']:8.2f}x {r['act_n_ms']:8.2f}x {r['act_1_ms']:8.2f}x", flush=True)
        rows.append((image, got, r))
    return rows


if __name__ == "__main__":
    main()
