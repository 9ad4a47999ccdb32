"""The keywords a task asks ``unilab eval`` to evaluate it with (:attr:`unilab_envs.core.task.Task.evaluation_kwargs`).

G1Track evaluates every episode from a clip's first frame (``start="clip_start"``), so an episode is one whole
clip and "success" means the clip was tracked to its end; a task that asks nothing is evaluated as it trained.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def entry_module(task_id: str) -> ModuleType | None:
    """The module of a registered id's ``module:function`` entry point, imported (``None``: not registered, or an
    entry point that is not such a string)."""
    import gymnasium as gym

    try:
        entry = gym.spec(task_id).entry_point
    except gym.error.Error:
        return None
    if not isinstance(entry, str) or ":" not in entry:
        return None
    return importlib.import_module(entry.split(":")[0])


def task_class(task_id: str) -> type | None:
    """The :class:`~unilab_envs.core.task.Task` subclass behind a registered id: the one Task subclass its entry
    point's module defines (``None`` for a Gymnasium task, or a module defining none or several)."""
    from unilab_envs.core.task import Task

    module = entry_module(task_id)
    if module is None:
        return None
    found = [v for v in vars(module).values()
             if isinstance(v, type) and issubclass(v, Task) and v.__module__ == module.__name__]
    return found[0] if len(found) == 1 else None


def evaluation_kwargs(task_id: str) -> dict[str, Any]:
    """The task keywords ``unilab eval`` sets for ``task_id`` (empty for a task that asks none)."""
    cls = task_class(task_id)
    return dict(getattr(cls, "evaluation_kwargs", {}) or {})
