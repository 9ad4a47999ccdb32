"""``unilab tasks`` lists every registered UniLab task with the sizes the env itself reports."""

from __future__ import annotations

import re

import gymnasium as gym

import unilab_envs
from trainers import cli
from unilab_envs.catalog import task_catalog


def test_tasks_table_rows_match_the_envs(capsys):
    assert cli.main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("id") and "reward terms" in lines[0]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(unilab_envs.TASKS)
    for task_id in unilab_envs.TASKS:
        env = gym.make_vec(task_id, num_envs=1)
        try:
            priv = env.privileged_observation_space
            obs, act, names = env.single_observation_space.shape[0], env.single_action_space.shape[0], env.reward_names
            cells = rows[task_id].split()
            assert cells[1:4] == [str(obs), "-" if priv is None else str(priv.shape[0]), str(act)], rows[task_id]
            steps = gym.spec(task_id).max_episode_steps
            assert f"{1 / env.dt:g} Hz" in rows[task_id]
            assert f"{steps} steps ({steps * env.dt:g} s)" in rows[task_id]
            assert rows[task_id].endswith(f"{len(names)}: {', '.join(names)}")
        finally:
            env.close()


def test_catalog_rows_and_markdown(capsys):
    rows = {r.id: r for r in task_catalog()}
    ur5 = rows["UniLab/UR5Reach-v0"]
    assert (ur5.privileged_obs, ur5.episode_steps) == (None, unilab_envs.TASKS["UniLab/UR5Reach-v0"][1])
    assert ur5.episode_seconds == ur5.episode_steps / ur5.control_hz
    assert cli.main(["tasks", "--markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0].startswith("| id |") and md[1].startswith("|---|")
    assert sum(line.startswith("| `UniLab/") for line in md) == len(unilab_envs.TASKS)


def test_tasks_groups_prints_each_groups_columns_units_and_noise_from_its_declaration(capsys):
    assert cli.main(["tasks", "--groups", "UniLab/Go1Joystick-v0", "UniLab/UR5Grasp-v0"]) == 0
    out = capsys.readouterr().out
    go1, grasp = out.split("UniLab/UR5Grasp-v0\n")
    assert go1.splitlines()[1].split() == ["observation", "group", "columns", "units", "noise", "meaning"]
    rows = {tuple(line.split()[:2]): line.split() for line in go1.splitlines()[2:] if line.strip()}
    assert rows[("policy", "joint_vel")][2:5] == ["21:33", "rad/s", "1.5"]
    assert rows[("privileged", "actuator_force")][2:6] == ["13:25", "N", "m", "-"]
    assert re.search(r"privileged +object_mass +4:5 +kg +- +the object.s mass", grasp)
