"""A profile's off-policy recipe (read with ``--config``) sits on the task's own recipe, which ``--algo sac`` layers
first: it holds only what differs, and a change to the task's recipe reaches it."""

from __future__ import annotations

from dataclasses import replace

from trainers.offpolicy.config import CONFIG_DIR, Demonstrations, UpdatesRaise, load_offpolicy_config
from unilab_robot.config.yaml_io import read_yaml


def test_the_grasp_profile_recipe_is_the_bare_recipe_plus_its_own_keys():
    bare = load_offpolicy_config("sac", "UniLab/UR5Grasp-v0")
    real = load_offpolicy_config("sac", config_file=CONFIG_DIR / "ur5_grasp_real_sac.yaml")
    own = read_yaml(CONFIG_DIR / "ur5_grasp_real_sac.yaml")
    # it repeats nothing of ur5_grasp_sac.yaml's, and turns off its scripted demonstrations (measured without them)
    assert own["algo"].keys() == {"raise_updates", "demonstrations"} and "nets" not in own
    assert bare.algo.demonstrations == Demonstrations(envs=8, steps=100_000, noise=0.3)
    assert real.algo == replace(bare.algo, raise_updates=UpdatesRaise(updates_per_step=4, at_success=0.3), demonstrations=None)
    assert real.nets == bare.nets and real.log == bare.log and real.num_envs == bare.num_envs
    assert bare.algo.exploration_correlation == 0.9  # the bare recipe's correlated exploration, inherited
    assert real.total_steps == 1_500_000 and real.stop.success_rate is None and real.stop.eval is None
    assert bare.stop.success_rate is None and bare.stop.eval.success_rate == 0.98  # the bare recipe stops on its actor
    assert real.sim2real["extends"] == "ur5_grasp_real" and bare.sim2real is None
    assert real.env_kwargs["reward_scales"] == {"hold_break": -100.0, "overlift": -2.0}
