"""Motion clips (``motions/``, read by :mod:`unilab_envs.motion.clips`). The robots' MJCF and their facts live on
the robot side, :mod:`unilab_robot.assets`, which the simulator's tasks and the robot's computer both load."""
