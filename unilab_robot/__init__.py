"""The wire to the robot: Unitree's low-level messages, a DDS runtime for exported policies, a simulated robot.

Torch-free, and importable without Cyclone DDS: only :mod:`unilab_robot.dds` needs the
``robot`` extra (``pip install -e ".[robot]"``).

* :mod:`~unilab_robot.messages` - ``unitree_hg`` / ``unitree_go`` ``LowCmd_`` / ``LowState_``
  as NumPy records in the robots' C layout; :mod:`~unilab_robot.crc` - the CRC they check;
  :mod:`~unilab_robot.motors` - joint name -> motor slot, checked against a deploy spec;
  :mod:`~unilab_robot.remote` - the wireless remote bytes.
* :mod:`~unilab_robot.driver` - the motor driver's PD law; :mod:`~unilab_robot.sim` -
  ``unilab robot sim``; :mod:`~unilab_robot.runtime` - ``unilab robot run``;
  :mod:`~unilab_robot.steplog` - its per-step log; :mod:`~unilab_robot.swap` - new weights
  between two control steps, :mod:`~unilab_robot.control` - its 127.0.0.1 control channel;
  :mod:`~unilab_robot.identify` - floor friction, loop latency, payload and motor strength fitted to a step log.
* :mod:`~unilab_robot.wire` - transports (in-process bus, lossy link);
  :mod:`~unilab_robot.dds_config` - the loopback-only Cyclone DDS configuration;
  :mod:`~unilab_robot.dds` - the messages over DDS.

docs/robot_bridge.md describes the commands, the wire and the log.
"""
