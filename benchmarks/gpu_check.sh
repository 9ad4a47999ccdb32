#!/usr/bin/env bash
# GPU checks in one go, for a machine with an NVIDIA GPU (sized for 16 CPU cores, < 8 min):
#   1. install the carried wheels (mujoco, gymnasium, stable-baselines3) and this checkout,
#   2. the GPU tests (pytest -m gpu tests/gpu),
#   3. `unilab bench` on CUDA (python -m trainers.bench --device cuda),
#   4. two short Go1 training runs with the bundled PPO on CUDA (overlap=false, then true),
# then prints one table (stage limits 90+110+190+80 s: under 8 minutes even when each runs out)
# and exits 1 naming every stage that failed or timed out (0 only when all four passed; a bench
# row below its budget is reported in the table, not a failed stage).
# Files (bench.json, bench.png, pytest.xml, train.json, logs, summary.txt) go to $OUT (or
# runs/gpu_check). The machine has no network: fetch the wheels first, here, with
#   bash benchmarks/fetch_gpu_wheels.sh          # -> .whl/ (git-excluded)
# and carry that folder along (device tool: carry=[".whl"]). WHEELS_DIR overrides its path.
#
#   bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WHEELS_DIR="${WHEELS_DIR:-.whl}"
OUT="${OUT:-runs/gpu_check}"
PY="${PYTHON:-python3}"
DEVICE="${DEVICE:-cuda}"            # DEVICE=cpu BENCH_ARGS=--quick TRAIN_ENVS=64 TRAIN_ITERS=2: a dry run anywhere
BENCH_ARGS="${BENCH_ARGS:-}"
TRAIN_ENVS="${TRAIN_ENVS:-4096}"
TRAIN_ITERS="${TRAIN_ITERS:-20}"             # per run: overlap=false, then overlap=true
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
LOG="$OUT/gpu_check.log"
: >"$LOG"
START=$(date +%s)
declare -A STATUS SECS

stage() {  # stage NAME TIMEOUT_S CMD...: run (a shell function runs in this shell, unbounded), log, time
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s) rc
  echo "=== $name (limit ${limit}s): $*" | tee -a "$LOG"
  if declare -F "$1" >/dev/null; then
    "$@" > >(tee -a "$LOG") 2>&1
    rc=$?
  else
    timeout --signal=INT --kill-after=15 "$limit" "$@" 2>&1 | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
  fi
  SECS[$name]=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then STATUS[$name]=ok; elif [ "$rc" -eq 124 ]; then STATUS[$name]="TIMEOUT"; else STATUS[$name]="FAILED rc=$rc"; fi
  echo "=== $name: ${STATUS[$name]} in ${SECS[$name]}s" | tee -a "$LOG"
}

install() {
  nvidia-smi -L || true
  "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
  if ! "$PY" -c "import mujoco, gymnasium, stable_baselines3" 2>/dev/null; then
    [ -d "$WHEELS_DIR" ] || { echo "no wheels folder $WHEELS_DIR: run benchmarks/fetch_gpu_wheels.sh here and carry it"; return 1; }
    # into the interpreter's environment, deps resolved against what is installed (torch, numpy, ...)
    "$PY" -m pip install -q --no-index --find-links "$WHEELS_DIR" mujoco gymnasium stable-baselines3 tbb \
      || "$PY" -m pip install -q --no-index --find-links "$WHEELS_DIR" --break-system-packages mujoco gymnasium stable-baselines3 tbb \
      || { echo "pip install into the environment failed; installing into /tmp/site instead"
           "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS_DIR"/*.whl || return 1
           export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"; }
  fi
  (cd / && "$PY" -c "import trainers.bench" 2>/dev/null) \
    || "$PY" -m pip install -q --no-deps --no-index --no-build-isolation -e . \
    || echo "editable install failed; using PYTHONPATH=$ROOT (python -m trainers.bench works without it)"
  export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
  "$PY" -c "import mujoco, gymnasium, stable_baselines3, unilab_envs, trainers; print('mujoco', mujoco.__version__, 'gymnasium', gymnasium.__version__, 'sb3', stable_baselines3.__version__)"
}

TRAIN_PY=/tmp/unilab_gpu_check_train.py
cat >"$TRAIN_PY" <<'PYEOF'
import json, sys, time
import unilab_envs  # noqa: F401  (thread policies first)
from trainers.ppo import AlgoConfig, LogConfig, TrainConfig, train
out, device, n, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = {}
for overlap in (False, True):  # the same short run, collecting from one env, then from two overlapped halves
    cfg = TrainConfig(task="UniLab/Go1Joystick-v0", num_envs=n, total_steps=n * 24 * iters, device=device,
                      out=f"/tmp/gpu_check_go1_{'overlap' if overlap else 'plain'}", overlap=overlap,
                      algo=AlgoConfig(num_steps=24, amp=True),
                      log=LogConfig(tensorboard=False, progress=False, plot=False, save_interval=1000))
    t0 = time.perf_counter()
    res = train(cfg)
    s = res.stats
    runs["overlap" if overlap else "plain"] = {
        "iterations": res.iterations, "env_steps": res.env_steps, "wall_s": round(time.perf_counter() - t0, 1),
        "avg_steps_per_s": round(res.env_steps / res.wall_time, 1),
        "last_steps_per_s": round(s.get("perf/steps_per_s", float("nan")), 1),
        "last_collect_steps_per_s": round(s.get("perf/collect_steps_per_s", float("nan")), 1),
        "update_s": round(s.get("perf/update_s", float("nan")), 3),
        "episode_return": s.get("episode/return"), "episode_length": s.get("episode/length")}
    print(json.dumps(runs))
    open(f"{out}/train.json", "w").write(json.dumps(runs, indent=2))
PYEOF

stage install 90 install
stage gpu_tests 110 "$PY" -m pytest -m gpu tests/gpu -q -rs -p no:cacheprovider --junitxml="$OUT/pytest.xml"
stage bench 190 "$PY" -m trainers.bench --device "$DEVICE" --rows "${BENCH_ROWS:-1,2,3,4,5,6,7}" --out "$OUT" $BENCH_ARGS
stage train_go1 80 "$PY" "$TRAIN_PY" "$OUT" "$DEVICE" "$TRAIN_ENVS" "$TRAIN_ITERS"

"$PY" - "$OUT" "${STATUS[install]}" "${SECS[install]}" "${STATUS[gpu_tests]}" "${SECS[gpu_tests]}" \
  "${STATUS[bench]}" "${SECS[bench]}" "${STATUS[train_go1]}" "${SECS[train_go1]}" "$(( $(date +%s) - START ))" <<'PYEOF' | tee "$OUT/summary.txt"
import json, sys, xml.etree.ElementTree as ET
from pathlib import Path
out, a = Path(sys.argv[1]), sys.argv[2:]
rows = []
def add(stage, result, secs, detail=""):
    rows.append((stage, result, secs, detail))
add("install", a[0], a[1])
detail = ""
try:
    ts = ET.parse(out / "pytest.xml").getroot()
    ts = ts if ts.tag == "testsuite" else ts.find("testsuite")
    n, f, e, s = (int(ts.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    detail = f"{n - f - e - s} passed, {f} failed, {e} errors, {s} skipped"
except Exception as exc:  # noqa: BLE001
    detail = f"no junit report ({exc.__class__.__name__})"
add("gpu tests (pytest -m gpu)", a[2], a[3], detail)
add(f"unilab bench", a[4], a[5])
try:
    for r in json.loads((out / "bench.json").read_text())["rows"]:
        ok = r.get("status") or ("ERROR" if r.get("error") else ("-" if r.get("budget") is None else ("ok" if r["ratio"] >= r["budget"] else "BELOW")))
        ratio = "n/a" if r.get("ratio") is None else f"{r['ratio']:.3g}"
        if r.get("ratio_iqr") and None not in r["ratio_iqr"]:
            ratio += f" (median of {r.get('repetitions')}, IQR {r['ratio_iqr'][0]:.3g}-{r['ratio_iqr'][1]:.3g})"
        budget = f" (budget >={r['budget']:g})" if r.get("budget") is not None else ""
        add(f"  bench {r['row']}: {r['name']}", ok, "", f"ratio {ratio}{budget}" + (f" {r['error']}" if r.get("error") else ""))
except Exception as exc:  # noqa: BLE001
    add("  bench rows", "missing", "", exc.__class__.__name__)
try:
    runs = json.loads((out / "train.json").read_text())
    tdetail = "; ".join(
        f"{k}: {t['iterations']} it, {t['avg_steps_per_s']:.0f} steps/s avg ({t['last_steps_per_s']:.0f} last, "
        f"collect {t['last_collect_steps_per_s']:.0f}), return {t['episode_return']:.3g}" for k, t in runs.items())
except Exception as exc:  # noqa: BLE001
    tdetail = f"no summary ({exc.__class__.__name__})"
add("Go1 training (bundled PPO, bf16 on CUDA; overlap=false, then true)", a[6], a[7], tdetail)
add("total", "", a[8])
w = max(len(r[0]) for r in rows)
print(f"\n{'stage':<{w}}  {'result':<12} {'s':>5}  detail")
print("-" * (w + 60))
for stage, result, secs, detail in rows:
    print(f"{stage:<{w}}  {result:<12} {secs:>5}  {detail}")
PYEOF
SUMMARY_RC=${PIPESTATUS[0]}

failed=()
for name in install gpu_tests bench train_go1; do
  [ "${STATUS[$name]:-not run}" = ok ] || failed+=("$name (${STATUS[$name]:-not run})")
done
[ "$SUMMARY_RC" -eq 0 ] || failed+=("summary table (rc=$SUMMARY_RC)")
if [ "${#failed[@]}" -gt 0 ]; then
  list=$(printf '%s; ' "${failed[@]}")
  echo "gpu_check: FAILED stages: ${list%; }" | tee -a "$OUT/summary.txt" "$LOG" >&2
  exit 1
fi
echo "gpu_check: all stages passed" | tee -a "$OUT/summary.txt" "$LOG"
