"""Typed configs: unknown keys and bad values are rejected with clear messages."""

import dataclasses

import pytest

from trainers.ppo.config import (CONFIG_DIR, ConfigError, TrainConfig, from_dict, is_offpolicy_recipe, load_config,
                                 parse_overrides, read_yaml, task_defaults_file, to_dict)


def test_defaults_roundtrip_and_frozen():
    cfg = TrainConfig()
    assert from_dict(TrainConfig, to_dict(cfg)) == cfg
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_envs = 3


def test_unknown_key_is_rejected_with_suggestion():
    with pytest.raises(ConfigError, match=r"unknown config key 'num_env'.*Did you mean 'num_envs'"):
        from_dict(TrainConfig, {"num_env": 4})
    with pytest.raises(ConfigError, match=r"unknown config key 'algo.learning_rat'.*'algo.learning_rate'"):
        from_dict(TrainConfig, {"algo": {"learning_rat": 1e-3}})


@pytest.mark.parametrize("data, msg", [
    ({"num_envs": 0}, "num_envs must be >= 1"),
    ({"num_envs": "many"}, "num_envs must be a number"),
    ({"num_envs": 2.5}, "num_envs must be an integer"),
    ({"algo": {"gamma": 1.5}}, r"algo.gamma must be in \(0, 1\]"),
    ({"algo": {"schedule": "cosine"}}, "algo.schedule must be one of"),
    ({"algo": {"amp": "yes"}}, "algo.amp must be true or false"),
    ({"algo": {"clip": float("nan")}}, "algo.clip must be finite"),
    ({"policy": {"actor_hidden": []}}, "policy.actor_hidden must be a non-empty list"),
    ({"policy": {"actor_hidden": 64}}, "policy.actor_hidden must be a list"),
    ({"policy": {"activation": "gelu"}}, "policy.activation must be one of"),
    ({"device": "tpu"}, "device must be"),
    ({"num_envs": 2, "algo": {"num_steps": 2, "num_minibatches": 8}}, "exceeds the rollout batch"),
    ({"algo": 3}, "algo must be a mapping"),
])
def test_bad_values_are_rejected(data, msg):
    with pytest.raises(ConfigError, match=msg):
        from_dict(TrainConfig, data)


def test_overrides_parse_yaml_values():
    over = parse_overrides(["algo.learning_rate=3e-4", "policy.actor_hidden=[64, 64]", "seed=3", "out=runs/x"])
    assert over == {"algo": {"learning_rate": 3e-4}, "policy": {"actor_hidden": [64, 64]}, "seed": 3,
                    "out": "runs/x"}
    cfg = load_config("Pendulum-v1", overrides=["algo.learning_rate=3e-4", "policy.actor_hidden=[64,64]"],
                      num_envs=4)
    assert cfg.algo.learning_rate == pytest.approx(3e-4)
    assert cfg.policy.actor_hidden == (64, 64)
    assert cfg.num_envs == 4
    with pytest.raises(ConfigError, match="key=value"):
        parse_overrides(["algo.learning_rate"])


def test_layering_file_then_flags_then_overrides(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("task: Pendulum-v1\nnum_envs: 6\ntotal_steps: 1e6\nalgo:\n  gamma: 0.9\n  lam: 0.9\n")
    cfg = load_config(config_file=f, overrides=["algo.lam=0.8"], num_envs=None, seed=5)
    assert (cfg.task, cfg.num_envs, cfg.total_steps, cfg.seed) == ("Pendulum-v1", 6, 1_000_000, 5)
    assert (cfg.algo.gamma, cfg.algo.lam) == (0.9, 0.8)
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo:\n  gama: 0.9\n")
    with pytest.raises(ConfigError, match="unknown config key 'algo.gama'"):
        load_config(config_file=bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("algo: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_yaml(broken)


def test_bundled_task_yamls_are_valid():
    files = sorted(p for p in CONFIG_DIR.glob("*.yaml") if not is_offpolicy_recipe(p))
    assert files, "no bundled task configs"
    for path in files:
        data = read_yaml(path)
        cfg = from_dict(TrainConfig, data)
        if task_defaults_file(cfg.task) == path:  # the task's defaults
            assert load_config(cfg.task) == cfg
        else:  # a variant (halfcheetah_tuned.yaml): complete on its own over the task's defaults
            assert load_config(cfg.task, config_file=path) == cfg


def test_offpolicy_recipes_are_valid_and_never_a_ppo_tasks_defaults():
    from trainers.offpolicy.config import OffPolicyConfig, recipe_file

    recipes = sorted(p for p in CONFIG_DIR.glob("*.yaml") if is_offpolicy_recipe(p))
    assert recipes
    for path in recipes:
        cfg = from_dict(OffPolicyConfig, read_yaml(path))
        # `unilab train --algo sac --task T` reads T's bare recipe; a profile's recipe is read with --config
        assert recipe_file(cfg.task) == path if cfg.sim2real is None else recipe_file(cfg.task) != path
        assert task_defaults_file(cfg.task) != path  # `unilab train --task ...` (PPO) never reads a SAC recipe
