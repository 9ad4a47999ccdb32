"""The retargeted CMU clips shipped with UniLab (``unilab_envs/assets/motions``; see its README)."""

from __future__ import annotations

from pathlib import Path

CLIPS_DIR = Path(__file__).resolve().parents[1] / "assets" / "motions" / "g1"


def clip_paths() -> list[Path]:
    """The shipped G1 clips (``.npz``), sorted by name."""
    return sorted(CLIPS_DIR.glob("*.npz"))


def clip_path(name: str) -> Path:
    """The shipped clip ``name`` (``CMU_016_22``); ``FileNotFoundError`` (one line) if there is none."""
    path = CLIPS_DIR / f"{name}.npz"
    if not path.is_file():
        have = ", ".join(p.stem for p in clip_paths()[:5])
        raise FileNotFoundError(f"no shipped clip {name!r} in {CLIPS_DIR} (e.g. {have} ...)")
    return path
