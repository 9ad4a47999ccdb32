"""The wire to the robot: Unitree's low-level messages, a DDS runtime for exported policies, a simulated robot.

Torch-free, and importable without Cyclone DDS: only :mod:`unilab_envs.robot.dds` needs the
``robot`` extra (``pip install -e ".[robot]"``).

* :mod:`~unilab_envs.robot.messages` - ``unitree_hg`` / ``unitree_go`` ``LowCmd_`` / ``LowState_``
  as NumPy records in the robots' C layout; :mod:`~unilab_envs.robot.crc` - the CRC they check;
  :mod:`~unilab_envs.robot.motors` - joint name -> motor slot, checked against a deploy spec;
  :mod:`~unilab_envs.robot.remote` - the wireless remote bytes.
* :mod:`~unilab_envs.robot.driver` - the motor driver's PD law; :mod:`~unilab_envs.robot.sim` -
  ``unilab robot sim``; :mod:`~unilab_envs.robot.runtime` - ``unilab robot run``;
  :mod:`~unilab_envs.robot.steplog` - its per-step log; :mod:`~unilab_envs.robot.swap` - new weights
  between two control steps, :mod:`~unilab_envs.robot.control` - its 127.0.0.1 control channel;
  :mod:`~unilab_envs.robot.identify` - floor friction, loop latency, payload and motor strength fitted to a step log.
* :mod:`~unilab_envs.robot.wire` - transports (in-process bus, lossy link);
  :mod:`~unilab_envs.robot.dds_config` - the loopback-only Cyclone DDS configuration;
  :mod:`~unilab_envs.robot.dds` - the messages over DDS.

docs/robot_bridge.md describes the commands, the wire and the log.
"""
