"""Observation groups that the robot's controller knows itself, not through its sensors.

On a robot the policy's input has two sources. Sensor readings (IMU, encoders, a camera)
are noisy, biased, late and sometimes lost on the link. The controller's own state, what it
sent last (``last_action``), the command it was given (``command``, ``target``, ...), its gait
clock (``phase``), never crosses a wire: it is exact and current. So a sim-to-real stack
perturbs the sensor groups only, and the ``last_action`` a policy sees is the action *it*
sent, whatever the link and the motors then did to it (a delayed, lost or noisy action
reaches the robot, not the policy's memory). The training wrappers
(:class:`wrappers.Sim2Real`) and the deploy-side profile (:mod:`unilab_robot.deploy.sim2real`)
both read this one list by group name.
"""

from __future__ import annotations

#: group names that are controller state wherever a task has them
CONTROLLER_GROUPS = frozenset({"last_action", "command", "phase", "target", "joint_target", "target_height"})

#: of those, the group that holds the policy's previous action (clipped to the action space)
LAST_ACTION = "last_action"
