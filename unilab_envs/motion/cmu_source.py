"""The source of the retargeter: the CMU humanoid (dm_control's) and its clips in the
``envpool-assets`` wheel (the ``motion`` extra: ``pip install -e ".[motion]"``).

The wheel holds ``CMU_077_02`` (fitted to the 2019 model) and 36 walking / turning clips of the
2020 set (fitted to the rescaled 2020 model); each clip is played through its own model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from unilab_envs.motion.epmocap import MocapClip, read_epmocap

WHEEL = "envpool-assets==0.4.1"
_SUBDIR = Path("mujoco/locomotion/assets_dm_control")
#: data file -> the CMU humanoid model its clips were fitted to
DATASETS = {"mocap_2019.bin": "humanoid_CMU_V2019.xml", "mocap_2020.bin": "humanoid_CMU_V2020.xml"}


class SourceMissing(RuntimeError):
    """The ``envpool-assets`` wheel is not installed (one line)."""


@dataclass(frozen=True)
class SourceClip:
    """A CMU clip with the path of the model it was fitted to."""

    clip: MocapClip
    model_path: Path

    @property
    def name(self) -> str:
        return self.clip.name

    def qpos(self) -> np.ndarray:
        """``(T, 7 + 56)``: root position, root quaternion and joints, the ``qpos`` of
        :func:`cmu_model` (the CMU humanoid with a free joint on its root)."""
        a = self.clip.arrays
        return np.concatenate([a["position"], a["quaternion"], a["joints"]], axis=1).astype(np.float64)


def assets_dir() -> Path:
    """The wheel's ``assets_dm_control`` folder; :class:`SourceMissing` without the wheel."""
    try:
        import envpool_assets
    except ImportError:
        raise SourceMissing(f"the CMU source clips need the `motion` extra: pip install -e \".[motion]\" "
                            f"(the {WHEEL} wheel)") from None
    root = Path(envpool_assets.__file__).parent / _SUBDIR
    if not (root / "mocap.json").is_file():
        raise SourceMissing(f"{root} has no mocap.json: install {WHEEL} (another version is installed)")
    return root


def load_source_clips(names: list[str] | None = None) -> list[SourceClip]:
    """The wheel's clips (all 37, or those named, in the order given); ``KeyError`` names an unknown id."""
    root = assets_dir()
    found: dict[str, SourceClip] = {}
    for data, model in DATASETS.items():
        model_path = root / "locomotion/walkers/assets" / model
        for name, clip in read_epmocap(root / data).items():
            found[name] = SourceClip(clip, model_path)
    if names is None:
        return list(found.values())
    unknown = [n for n in names if n not in found]
    if unknown:
        raise KeyError(f"no clip {unknown[0]!r} in {WHEEL} (it has {len(found)}: {', '.join(sorted(found))})")
    return [found[n] for n in names]


def cmu_model(model_path: Path):
    """The CMU humanoid of ``model_path`` with a free joint on its root (``qpos`` as
    :meth:`SourceClip.qpos`), for forward kinematics."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(model_path))
    spec.body("root").add_freejoint()
    return spec.compile()


def forward_kinematics(model, qpos: np.ndarray, bodies: list[str]) -> np.ndarray:
    """World positions ``(T, len(bodies), 3)`` of the named bodies' origins over ``qpos`` ``(T, nq)``
    (``mj_kinematics`` per frame)."""
    import mujoco

    data = mujoco.MjData(model)
    ids = [model.body(b).id for b in bodies]
    out = np.empty((len(qpos), len(ids), 3))
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        out[t] = data.xpos[ids]
    return out
