"""The locomotion reward's config keys and its positive clip, derived from :data:`~unilab_envs.locomotion.terms.LEGGED_TERMS`.

Term ``k`` contributes ``weights[k] * value_k`` (``weights = scale * control_dt``) to
``reward_terms[i, k]``; the reward is their sum. ``positive_clip`` is the last column, after
every term: ``positive_clip / control_dt`` times ``max(0, -(the sum of the shaped terms))``,
so a scale of 1 clips the per-step reward at zero (legged_gym's ``only_positive_rewards``)
and ``reward == sum of terms`` still holds. ``Params.clip_termination`` says whether the
``termination`` term is among the clipped terms (Go1) or added after the clip (G1: a fall
costs its full penalty). The kernel that sums them is generated
(:mod:`unilab_envs.locomotion.reward_kernel`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from unilab_envs.locomotion.terms import LEGGED_TERMS

POSITIVE_CLIP = "positive_clip"
REWARD_NAMES = (*(t.name for t in LEGGED_TERMS), POSITIVE_CLIP)
"""The built-in ``reward_terms`` columns, in order (a task's own terms go before ``positive_clip``)."""
TERMINATION = REWARD_NAMES.index("termination")


class _ScaleChecks:
    def validate(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not math.isfinite(value):
                raise ValueError(f"reward_scales.{f.name} must be finite, got {value}")

    def weights(self, control_dt: float) -> np.ndarray:
        """``(17,)`` float64 weights ``scale * control_dt`` in :data:`REWARD_NAMES` order."""
        return np.array([getattr(self, name) for name in REWARD_NAMES]) * control_dt


RewardScales = dataclasses.make_dataclass(
    "RewardScales", [(name, float, dataclasses.field(default=0.0)) for name in REWARD_NAMES],
    bases=(_ScaleChecks,), frozen=True,
)  # fmt: skip
RewardScales.__module__ = __name__
RewardScales.__doc__ = "Signed scales of the built-in terms (weight = scale * control_dt), one field per term of " + \
    "LEGGED_TERMS and positive_clip; each robot sets its own defaults.\n\n" + \
    "\n".join(f"- ``{t.name}``: {t.doc}" for t in LEGGED_TERMS) + f"\n- ``{POSITIVE_CLIP}``: see the module docstring"
