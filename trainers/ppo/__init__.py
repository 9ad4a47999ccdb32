"""Bundled PPO: device-resident rollout storage, GAE, clipped PPO, runner, eval, ONNX export.

Storage (:mod:`.storage`), algorithm (:mod:`.algorithm`) and runner (:mod:`.runner`) are
separate and joined by constructor injection; the math lives in :mod:`.gae` and
:mod:`.losses` as free functions.

    from trainers.ppo import train, load_config
    result = train(load_config("UniLab/Go1Joystick-v0", total_steps=2_000_000))
"""

from .config import AlgoConfig, ConfigError, LogConfig, PolicyConfig, TrainConfig, load_config
from .runner import Runner, TrainResult, train

__all__ = ["AlgoConfig", "ConfigError", "LogConfig", "PolicyConfig", "TrainConfig", "Runner", "TrainResult",
           "load_config", "train"]
