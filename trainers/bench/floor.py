"""The memory floor of row 1: move the G1 kernel's bytes with no math.

:func:`stream_floor` reads every array element the G1 task's ``_compute`` reads (the
batch's qpos / qvel rows, the foot sites, the actuator forces, the task state) and
writes every element it writes (observation, privileged observation, reward terms,
reward, terminated and the state a step updates), with the kernel's prefetch of the
batch rows and nothing else: no kernel over these arrays can be faster, so the bench
shows how close the real kernel gets to it.
"""

from __future__ import annotations

import numba as nb

from unilab_envs.core.prefetch import PREFETCH_DISTANCE, prefetch_row


@nb.njit(parallel=True, cache=True)
def _stream(obs, privileged_obs, reward_terms, reward, terminated, episode_step, qpos, qvel, site_xpos, actuator_force,
            actuator_ids, foot_sites, last_action, previous_action, command, phase, contact, air_time, foot_height,
            previous_foot_pos):  # fmt: skip
    for i in nb.prange(obs.shape[0]):
        prefetch_row(qpos, i + PREFETCH_DISTANCE)
        prefetch_row(qvel, i + PREFETCH_DISTANCE)
        s = phase[i] + command[i, 0] + command[i, 1] + command[i, 2] + episode_step[i]
        for k in range(qpos.shape[1]):
            s += qpos[i, k]
        for k in range(qvel.shape[1]):
            s += qvel[i, k]
        for j in range(actuator_ids.shape[0]):
            s += actuator_force[i, actuator_ids[j]] + last_action[i, j] + previous_action[i, j]
        for f in range(foot_sites.shape[0]):
            for d in range(3):
                s += site_xpos[i, foot_sites[f], d] + previous_foot_pos[i, f, d]
            s += air_time[i, f] + contact[i, f]
        for k in range(obs.shape[1]):
            obs[i, k] = s
        for k in range(privileged_obs.shape[1]):
            privileged_obs[i, k] = s
        for k in range(reward_terms.shape[1]):
            reward_terms[i, k] = s
        reward[i] = s
        terminated[i] = s > 0.0
        phase[i] = s
        for f in range(foot_sites.shape[0]):
            contact[i, f] = s > 0.0
            air_time[i, f] = s
            foot_height[i, f] = s
            for d in range(3):
                previous_foot_pos[i, f, d] = s
        for k in range(3):
            command[i, k] = s


def stream_floor(a: dict) -> None:
    """Read all of the G1 kernel's inputs and write all of its outputs (``a``: its arguments by name)."""
    _stream(a["obs"], a["privileged_obs"], a["reward_terms"], a["reward"], a["terminated"], a["episode_step"],
            a["qpos"], a["qvel"], a["site_xpos"], a["actuator_force"], a["actuator_ids"], a["foot_sites"],
            a["last_action"], a["previous_action"], a["command"], a["phase"], a["contact"], a["air_time"],
            a["foot_height"], a["previous_foot_pos"])
