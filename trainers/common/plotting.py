"""Learning-curve PNG from a run's progress CSV."""

from __future__ import annotations

import math
from pathlib import Path

from .logging import read_csv

#: curriculum columns of progress.csv drawn beside the return: (column, label, colour)
CURRICULA = (("env/terrain_level", "mean terrain level", "tab:brown"),
             ("env/push_level", "mean push level (0-1)", "tab:red"),
             ("env/profile_level", "sim-to-real profile level (0-1)", "tab:purple"))


def logged_points(steps: list[float], values: list[float]) -> list[tuple[float, float]]:
    """``(step, value)`` where a column was logged: a column written only now and then (an evaluation every
    N steps) is blank, read as NaN, in the other rows."""
    return [(s, v) for s, v in zip(steps, values) if not math.isnan(v)]


def _legend(ax, **kwargs) -> None:
    """A legend of ``ax``'s labelled lines; none when it has none (a run that logged no
    episode or no reward term yet), which matplotlib would otherwise warn about."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def plot_learning_curve(csv_path: str | Path, png_path: str | Path, title: str = "",
                        max_terms: int = 8) -> Path | None:
    """Episode return (top; with the success rate, and the deterministic evaluations' where logged, or the
    curricula's mean levels) and the largest reward terms per step (bottom) vs env steps."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    cols = read_csv(csv_path)
    if not cols.get("step"):
        return None
    steps = cols["step"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for key, label in (("episode/return", "mean episode return"),):
        if key in cols:
            ax1.plot(steps, cols[key], label=label, color="tab:blue")
    if "episode/success" in cols:
        ax1b = ax1.twinx()
        ax1b.plot(steps, cols["episode/success"], color="tab:green", alpha=0.7, label="success rate")
        evaluated = logged_points(steps, cols.get("eval/success", []))
        if evaluated:  # the off-policy learner's stop.eval: the deterministic actor's own episodes
            ax1b.plot(*zip(*evaluated), "o", color="darkgreen", label="success rate, deterministic evaluation")
            _legend(ax1b, loc="lower right")
        ax1b.set_ylabel("success rate")
        ax1b.set_ylim(-0.05, 1.05)
    else:  # curricula (a terrain task's levels, a push curriculum's 0-1 level): where they stand
        curricula = [(k, label, color) for k, label, color in CURRICULA if k in cols]
        if curricula:
            ax1b = ax1.twinx()
            for k, label, color in curricula:
                ax1b.plot(steps, cols[k], color=color, alpha=0.8, label=label)
            ax1b.set_ylabel(" / ".join(label for _, label, _ in curricula))
            _legend(ax1b, loc="lower right")
    ax1.set_ylabel("return")
    ax1.set_title(title or Path(csv_path).parent.name)
    ax1.grid(alpha=0.3)
    _legend(ax1, loc="upper left")

    def magnitude(k: str) -> float:
        vals = [abs(v) for v in cols[k] if not math.isnan(v)]
        return sum(vals) / len(vals) if vals else 0.0

    terms = [k for k in cols if k.startswith("reward/") and k != "reward/total"]
    terms = sorted(terms, key=magnitude, reverse=True)[:max_terms]
    if "reward/total" in cols:
        ax2.plot(steps, cols["reward/total"], color="black", lw=2, label="total")
    for k in terms:
        ax2.plot(steps, cols[k], label=k.split("/", 1)[1])
    ax2.set_xlabel("env steps")
    ax2.set_ylabel("reward per step")
    ax2.grid(alpha=0.3)
    _legend(ax2, fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    png_path = Path(png_path)
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return png_path


def plot_adaptation(steps, metrics, bests, decisions, png_path: str | Path, metric: str, tolerance: float,
                    title: str = "") -> Path:
    """``unilab adapt``'s curve: each round's score vs adaptation steps (marked kept / not-kept /
    rolled back), the best so far and the fuse's floor (``best - tolerance * |best|``); written atomically."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .atomic import atomic_write

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(steps, metrics, color="tab:blue", lw=1, alpha=0.6)
    ax.step(steps, bests, where="post", color="tab:green", lw=1.5, label="best")
    ax.step(steps, [b - tolerance * abs(b) for b in bests], where="post", color="tab:green", ls="--", lw=1,
            alpha=0.6, label=f"fuse floor (best - {tolerance:.0%})")
    styles = {"kept": ("o", "tab:green"), "not-kept": ("x", "tab:orange"), "rolled back": ("X", "tab:red")}
    for decision, (marker, color) in styles.items():
        xs = [s for s, d, m in zip(steps, decisions, metrics) if d == decision and not math.isnan(m)]
        ys = [m for d, m in zip(decisions, metrics) if d == decision and not math.isnan(m)]
        if xs:
            ax.scatter(xs, ys, marker=marker, color=color, s=60, zorder=3, label=decision)
    for s, d in zip(steps, decisions):
        if d == "rolled back":
            ax.axvline(s, color="tab:red", ls=":", lw=1)
    ax.set_xlabel("adaptation env steps")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend(ax, fontsize=8, loc="best")
    fig.tight_layout()
    path = atomic_write(png_path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)
    return path
