"""``unilab play``: an exported policy in plain MuJoCo, through the deploy spec's reference path.

The policy is ``policy.onnx`` run by onnxruntime; its observation is rebuilt from a plain
``mujoco.MjData`` by :class:`unilab_robot.deploy.PolicyIO` and its action mapped to
``ctrl`` the same way; physics is ``mujoco.mj_step`` at the spec's physics step, the
policy at its control rate. No ``mujoco.batch``, no Numba kernels, no torch: what runs
here is what a robot-side program runs, so a policy that survives ``play`` has had its
observation order, scaling, action mapping and control rate checked outside training.

* :func:`run_headless`: episodes as training draws them, with tracking, speed per
  command, falls and success, the play loop's cost per control step, and a video.
* :func:`run_window`: ``mujoco.viewer.launch_passive`` in real time; the robot starts
  still (:func:`idle_command`) and the keyboard sets the command (keys shown in the
  window, :func:`keys_overlay`, and in :data:`KEYS_HELP`).

One idea per module, all re-exported here (``from trainers.play import Player``):

* :mod:`.policy`: the run folder's ``policy.onnx`` and deploy spec (:func:`find_policy`: the robot side's,
  :mod:`unilab_robot.policy`, with the hooks that ask a task's code); :class:`OnnxPolicy`, :class:`PlayError`
  and :func:`load_play_model` (the ``MjModel`` to step, with the spec's terrain) are the robot side's
  (:mod:`unilab_robot.policy`, :mod:`unilab_robot.model`), named here too;
* :mod:`.safety_section`: which safety section the guard runs (:func:`play_safety`);
* :mod:`.gains`: a model whose servo gains differ from the spec's is driven with the spec's (``--model-gains``: its own);
* :mod:`.player`: one robot under the policy (:class:`Player`: ``act`` then ``simulate``);
* :mod:`.metrics`: :class:`PlayResult` and its summary, velocity tracking, the guard's counts;
* :mod:`.headless`: :func:`run_headless`; :mod:`.camera`: the camera of the window and video;
* :mod:`.ghost`: a motion-tracking policy's reference drawn beside the robot (window and video);
* :mod:`.keys` and :mod:`.overlays`: the window's keyboard and texts per command kind;
* :mod:`.window`: :func:`run_window`.
"""

from __future__ import annotations

import unilab_envs  # noqa: F401  (first: picks MuJoCo's GL backend before mujoco loads)
from unilab_robot.model import load_play_model
from unilab_robot.policy import POLICY_FILENAME, OnnxPolicy, PlayError, PolicyBundle

from .headless import Filmer, run_headless
from .keys import GLFW_KEYS, KEYS_HELP, TARGET_STEP, VELOCITY_STEP, apply_key, idle_command, start_idle
from .metrics import PlayResult, VelocityTracking, safety_summary, speed_table
from .overlays import keys_overlay, status_overlay
from .player import Player
from .policy import find_policy
from .safety_section import SAFETY_OFF, play_safety
from .window import MAX_LAG_S, MAX_STEPS_PER_FRAME, run_window

__all__ = ["GLFW_KEYS", "KEYS_HELP", "MAX_LAG_S", "MAX_STEPS_PER_FRAME", "POLICY_FILENAME", "SAFETY_OFF",
           "TARGET_STEP", "VELOCITY_STEP", "Filmer", "OnnxPolicy", "PlayError", "PlayResult", "Player",
           "PolicyBundle", "VelocityTracking", "apply_key", "find_policy", "idle_command", "keys_overlay",
           "load_play_model", "play_safety", "run_headless", "run_window", "safety_summary", "speed_table",
           "start_idle", "status_overlay"]
