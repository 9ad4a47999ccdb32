"""Teacher-student distillation (DAgger) into a bundled-PPO student: ``unilab distill`` (:mod:`.cli`).

``distill(cfg, DistillConfig(teacher=...))`` from Python (:mod:`.dagger`); importing this package
imports no torch (the CLI's parser reads :mod:`.cli`).
"""

__all__ = ["DistillConfig", "DistillResult", "Distiller", "distill"]


def __getattr__(name: str):
    if name == "DistillConfig":
        from .config import DistillConfig
        return DistillConfig
    if name in ("DistillResult", "Distiller", "distill"):
        from . import dagger
        return getattr(dagger, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
