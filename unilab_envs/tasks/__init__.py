"""Robot tasks, one file each (config dataclass, Numba kernels, entry points).

``TASKS`` is the registry: Gymnasium id -> (module, episode length in control steps).
"""

TASKS: dict[str, tuple[str, int]] = {
    "UniLab/Go1Joystick-v0": ("unilab_envs.tasks.go1_joystick", 1000),
    "UniLab/G1Joystick-v0": ("unilab_envs.tasks.g1_joystick", 1000),
    "UniLab/Go1JoystickRough-v0": ("unilab_envs.tasks.go1_rough", 1000),
    "UniLab/Go1JoystickDepth-v0": ("unilab_envs.tasks.go1_depth", 1000),
    "UniLab/Go2Joystick-v0": ("unilab_envs.tasks.go2_joystick", 1000),
    "UniLab/UR5Reach-v0": ("unilab_envs.tasks.ur5_reach", 75),
    "UniLab/UR5Grasp-v0": ("unilab_envs.tasks.ur5_grasp", 125),
    "UniLab/G1Track-v0": ("unilab_envs.tasks.g1_track", 1000),
}
