"""The deploy spec's names -> ids in one ``mujoco.MjModel`` (NumPy and MuJoCo only)."""

from __future__ import annotations

import mujoco
import numpy as np

from unilab_robot.deploy.sections import SpecError


def name_ids(model: mujoco.MjModel, kind: mujoco.mjtObj, names, what: str, needs: str = "the policy") -> np.ndarray:
    """The ids (int64) of the ``what`` objects (``kind``) named ``names`` in ``model``.

    Raises :class:`SpecError` naming the missing ones; ``needs`` says who needs them (``the
    policy``, ``the grasp policy``).
    """
    ids = [mujoco.mj_name2id(model, kind, n) for n in names]
    missing = [n for n, i in zip(names, ids) if i < 0]
    if missing:
        raise SpecError(f"the model has no {what} named {missing}; {needs} needs a model with the deploy spec's "
                        f"names ({what}s {list(names)})")
    return np.asarray(ids, dtype=np.int64)
