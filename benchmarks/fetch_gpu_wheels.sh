#!/usr/bin/env bash
# Download, here (with network), the wheels the GPU machine lacks, for benchmarks/gpu_check.sh.
#
# The GPU machine has Python 3.12, torch, numpy, numba, pytest, matplotlib, pyyaml, tqdm,
# cloudpickle, typing-extensions, tensorboard, onnx(runtime) but no mujoco, gymnasium or
# stable-baselines3 and no network. This fetches those three and their missing pure
# dependencies (NOT torch / numpy / numba) as cp312 manylinux x86_64 wheels into
# $WHEELS_DIR (default: .whl/ at the repo root, kept out of git through .git/info/exclude).
# The device tool then carries it: run(..., carry=[".whl"]).
#
#   bash benchmarks/fetch_gpu_wheels.sh            # or: WHEELS_DIR=shared-wheels bash ...
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS_DIR="${WHEELS_DIR:-.whl}"
PY="${PYTHON:-python3}"
mkdir -p "$WHEELS_DIR"

# keep the folder out of git (it travels to the device only when `carry` names it)
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
  exclude="$(git rev-parse --git-path info/exclude)"
  mkdir -p "$(dirname "$exclude")"
  grep -qxF "/${WHEELS_DIR%/}/" "$exclude" 2>/dev/null || echo "/${WHEELS_DIR%/}/" >>"$exclude"
fi

# versions pinned to what this checkout is developed and tested with
PKGS=(
  mujoco==4.0.0 mujoco-core==4.0.0 mujoco-studio==4.0.0 glfw==2.11.0 PyOpenGL==3.1.10
  gymnasium==1.4.0 farama-notifications==0.0.6
  stable-baselines3==2.9.2 websockets==17.4  # mujoco-studio needs it
  tbb==2023.2.0 tcmlib==1.6.0  # Numba's TBB threading layer (unilab_envs/threads.py)
)
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any)
# --no-deps: torch/numpy/cloudpickle/typing-extensions are on the device already; every
# missing dependency is named above.
"$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${PLATFORMS[@]}" -d "$WHEELS_DIR" "${PKGS[@]}"

echo "wheels in $WHEELS_DIR:"
ls -la "$WHEELS_DIR"
du -sh "$WHEELS_DIR"
echo "check the dependencies they declare (skip 'extra' lines):"
for w in "$WHEELS_DIR"/*.whl; do
  echo "  $(basename "$w"): $(unzip -p "$w" '*.dist-info/METADATA' | grep '^Requires-Dist' | grep -v 'extra ==' \
    | sed 's/Requires-Dist: //' | tr '\n' ' ')"
done
