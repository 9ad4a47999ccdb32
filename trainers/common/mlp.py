"""The MLP builders every learner's networks are made of, in one place.

:func:`mlp` (the bundled PPO's actor-critic and the distilled student: a chosen activation, orthogonal
init with a head gain, as rsl_rl and SB3) and :func:`layer_norm_mlp` (SAC / TD3: ELU, optional layer
norm, PyTorch's default init). They stay two functions because each draws its initial weights in its
own order: folding them into one would change every run's first weights (and the goldens).
"""

from __future__ import annotations

from torch import nn

#: the activations a PPO policy config may name
ACTIVATIONS = {"elu": nn.ELU, "tanh": nn.Tanh, "relu": nn.ReLU, "silu": nn.SiLU}


def mlp(inp: int, hidden: tuple[int, ...], out: int, activation: str, out_gain: float,
        ortho_init: bool = True) -> nn.Sequential:
    """``inp -> hidden... -> out`` with ``activation`` between layers.

    ``ortho_init``: orthogonal weights (gain sqrt 2; ``out_gain`` on the head) and zero
    biases, as rsl_rl and SB3's default; otherwise PyTorch's default ``nn.Linear`` init
    (SB3's ``ortho_init=False``).
    """
    layers: list[nn.Module] = []
    dims = (inp, *hidden, out)
    for k, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        lin = nn.Linear(a, b)
        head = k == len(dims) - 2
        if ortho_init:
            nn.init.orthogonal_(lin.weight, gain=out_gain if head else 2 ** 0.5)
            nn.init.zeros_(lin.bias)
        layers += [lin] if head else [lin, ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


def layer_norm_mlp(in_dim: int, hidden: tuple[int, ...], out_dim: int, layer_norm: bool) -> nn.Sequential:
    """Linear layers with ELU between them (and layer norm before each ELU when asked); PyTorch's default init
    (the off-policy learner's networks)."""
    layers: list[nn.Module] = []
    last = in_dim
    for width in hidden:
        layers.append(nn.Linear(last, width))
        if layer_norm:
            layers.append(nn.LayerNorm(width))
        layers.append(nn.ELU())
        last = width
    layers.append(nn.Linear(last, out_dim))
    return nn.Sequential(*layers)
