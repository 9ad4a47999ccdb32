"""Deploying an exported policy outside the training stack: the deploy spec and the reference I/O path.

``load_spec(path)`` reads and validates a ``deploy_spec.json`` (or the copy in an exported
``policy.onnx``); ``PolicyIO(spec, model)`` builds the policy's observation from a plain
``mujoco.MjData`` and maps its action to ``ctrl``, through the spec's safety guard
(``unilab_robot.deploy.safety``) when the spec carries one (``safety=False`` opts out); ``HistoryStack.from_spec(spec)`` stacks the
past frames a policy with an observation history reads; ``unilab_robot.deploy.sim2real`` adds a
sim-to-real profile's noise, latency and packet loss around that loop. None of these
import torch or Numba, so a robot-side program can use them as they are. Building a
spec from a task (``unilab_envs.deploy_spec``) needs the task, so it is not imported here.
"""

from unilab_robot.deploy.history import HistoryStack
from unilab_robot.deploy.reference import ControllerState, PolicyIO
from unilab_robot.deploy.spec import (ONNX_METADATA_KEY, SCHEMA, SCHEMA_VERSION, SPEC_FILENAME, DeploySpec, SpecError,
                                     load_spec, spec_from_dict, spec_from_json)

__all__ = ["ControllerState", "DeploySpec", "HistoryStack", "ONNX_METADATA_KEY", "PolicyIO", "SCHEMA", "SCHEMA_VERSION",
           "SPEC_FILENAME", "SpecError", "load_spec", "spec_from_dict", "spec_from_json"]
