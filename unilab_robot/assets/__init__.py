"""Robot models (MJCF) and their facts, one folder per robot: what the simulator's tasks load and
what the robot side compiles to run a deploy spec (a spec without ``model.mjcf`` names one of these
by its joint and actuator names: :func:`unilab_robot.model.packaged_model_path`)."""

from pathlib import Path

#: the folder holding one sub-folder per robot (``go1/go1.xml``, ...)
ASSETS_DIR = Path(__file__).resolve().parent


def mjcf_file(path: str | Path) -> Path:
    """``path`` as a ``Path``; raises ``FileNotFoundError`` (saying what to pass) when no file is there."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model_path {str(path)!r} does not exist; pass the path of an MJCF (.xml) file")
    return path
