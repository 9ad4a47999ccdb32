"""The weighted sum of a step's named reward terms, written per term (Numba, inlined)."""

from __future__ import annotations

import numba as nb


@nb.njit(inline="always", cache=True)
def write_weighted_terms(i, terms, weights, reward_terms):
    """Write ``weights[k] * terms[k]`` into ``reward_terms[i, k]`` for each term ``k`` (in
    order) and return their sum: the step's reward, which equals the sum of what is logged."""
    total = 0.0
    for k in range(len(terms)):
        value = weights[k] * terms[k]
        reward_terms[i, k] = value
        total += value
    return total
