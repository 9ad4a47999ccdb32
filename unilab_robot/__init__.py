"""UniLab's robot side: what runs an exported policy on a robot, and nothing above it.

At the bottom of the import graph: it imports nothing of the simulator (``unilab_envs``), the
wrappers or the trainers (they import it), nor torch, Numba, Gymnasium or SB3. It needs NumPy,
onnxruntime, PyYAML and MuJoCo (the runtime keeps the robot's state in an ``MjData``; the
simulated robot and play step one); only :mod:`unilab_robot.dds` needs Cyclone DDS (the ``dds``
extra). A robot's computer installs it alone, ``pip install ./unilab_robot`` (its own
``pyproject.toml``, distribution ``unilab-robot``, command ``unilab robot ...``); the full install
(``unilab-mujoco``) carries it too. docs/robot_bridge.md describes the commands, the wire and the log.

========================  ====================================================================================
module                    what
========================  ====================================================================================
``deploy``                the deploy spec and its reader, ``PolicyIO`` (observation and action mapping), the
                          safety guard, history, height scan, camera, grasp, episodes, play-side profile replay,
                          motion tracking (``motion_file``: the clip format; ``motion_reference``: a clip at the
                          control rate; ``motion``: the reference groups a tracking policy reads)
``config``                the one config system: typed frozen configs, one merge, one YAML loader, ConfigError
``profiles``              the packaged sim-to-real profiles (``*.yaml``), the typed ``Profile`` and ``resolve``
``assets``                the robots' MJCF and their facts, one folder per robot
``terrain``               heightfield terrain (config, generation, scene, scan grid), NumPy and MuJoCo
``policy``                a run folder's ``policy.onnx`` and deploy spec found and loaded; ``OnnxPolicy``
``policy_state``          a recurrent policy's hidden state (``h_in`` / ``h_out``), one per robot, reset per episode
``model``                 the ``MjModel`` a spec runs on (its MJCF, or the packaged one with its names)
``messages``              Unitree's ``LowCmd_`` / ``LowState_`` (``unitree_hg`` / ``unitree_go``) as NumPy records
``crc``                   the CRC the robots check
``motors``                joint name -> motor slot, checked against a deploy spec
``remote``                the wireless remote's bytes
``keyboard``              the terminal's keys as a velocity command
``cmd_check``             what a motor accepts from a ``LowCmd_`` (the simulated robot drops the rest)
``driver``                the motor driver's PD law
``state_io``              state message <-> ``MjData``; whether a spec needs the odometry topic
``state_filter``          which ``rt/lowstate`` messages the runtime acts on, and counts of all that arrived
``runtime``               ``unilab robot run``: the policy loop between ``rt/lowstate`` and ``rt/lowcmd``
``sim``                   ``unilab robot sim``: a simulated robot on the same wire
``lockstep``              runtime and simulated robot on one virtual clock
``steplog``               the runtime's per-step log
``quiet_gc``              the garbage collector kept out of the control loop
``swap``                  new weights between two control steps (hot swap, rollback)
``control``               the hot swap's 127.0.0.1 control channel
``identify``              floor friction, loop latency, payload and motor strength fitted to a step log
``identified``            from an identification to the sim-to-real profile a policy is fine-tuned under
``gate``                  a candidate policy scored against the running one in lock step before a swap
``api``                   Unitree's request / response records (the motion switcher's RPC)
``motion_switcher``       releasing the robot's built-in controller before low-level commands
``motion_service``        the simulated robot's motion switcher
``wire``                  transports: in-process bus, lossy link
``dds_config``            the Cyclone DDS configuration (loopback unless told otherwise)
``dds``                   the messages over DDS (needs the ``dds`` extra)
``robot_cli``             the ``unilab robot`` subcommands (sim, run, lockstep, identify, swap, rollback, status)
``cli``                   the ``unilab`` command of the robot-side distribution
========================  ====================================================================================
"""
