"""Fine-tuning in rounds with a safety fuse: adapt a policy to shifted dynamics between rounds of training
(not while it acts: each round trains, then the policy is scored).

``unilab adapt RUN --sim2real PROFILE`` (:mod:`trainers.adapt_cli`) calls :func:`adapt`:

1. the source policy (a run folder, a shipped policy folder or a checkpoint, as
   ``--init-from`` takes) is scored on a fixed set of held-out episodes under the shifted
   profile: round 0;
2. each round trains ``steps_per_round`` more env steps with the bundled PPO runner
   (round 1 starts a new run with ``init_from`` = the source; later rounds ``resume`` the
   previous round's checkpoint, so the rounds are one training run cut in pieces: a linear
   learning-rate schedule anneals once over all rounds), then
   scores the new weights on the same episodes;
3. :class:`~trainers.ppo.fuse.Fuse` decides: a better score is kept as the best; after
   ``patience`` consecutive rounds more than ``tolerance`` (relative) below the best it
   rolls back to the best and stops.

The evaluation is :func:`trainers.ppo.evaluate.evaluate` (deterministic policy, whole
episodes) on two disjoint sets of held-out episodes, neither overlapping the training rows' seeds
(env row i of a set starts from its seed + i; :func:`check_seeds`):

* the **selection set** (``eval_seed``, default 12345 as ``unilab eval``'s): scored before the first
  round and after each; the fuse picks the best round on it, so its best score is biased upward
  (the maximum of several noisy scores of the same episodes);
* the **report set** (``report_seed``): scored twice, on the source (round 0) and on the kept
  ``best/`` at the end, never used to choose: the before/after numbers to quote. Both sets' numbers
  are printed and logged (the ``report_*`` columns, on the round-0 row and the best round's row).

The score (``metric``):

* ``success``: the success rate (tasks that report ``is_success``: reach, grasp);
* ``tracking``: ``(1 - fall rate) * planar velocity tracking share`` (the joystick tasks): in
  [0, 1], 1 = never falls and tracks perfectly;
* ``return``: the mean episode return (other tasks; a fall lowers it by the reward it cuts off);
* ``auto`` (default): the first of these the task reports, chosen at round 0.

Output folder (new; never the source run, which is only read)::

    adapt_log.csv      one row per round: round, steps, metric, best, decision, ..., the selection set's
                       seed, and the report set's numbers where it was scored (rewritten atomically)
    adapt_curve.png    score per round vs adaptation steps, the best and the fuse's floor
    best/              the kept policy as a run folder (checkpoint.pt, config.yaml; written atomically):
                       what `unilab eval`, `unilab ship`, `unilab export` and `--init-from` take
    train/             the training run of the rounds (progress.csv, the last round's checkpoint)

``best/checkpoint.pt`` is byte for byte the checkpoint that scored best (round 0: the source's
weights with the adaptation config, without the source's env state), so
``unilab eval OUT/best --episodes E --seed EVAL_SEED`` prints the logged best again.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from unilab_envs.config import ConfigError, load_yaml, require, yaml_problem

from ..common.atomic import atomic_write
from ..common.checkpoint import load_checkpoint, save_checkpoint
from ..common.evaluation import EvalResult
from .config import TrainConfig, from_dict, parse_overrides, to_dict
from .fuse import Decision, Fuse, Verdict

METRICS = ("auto", "success", "tracking", "return")
LABELS = {"success": "success rate", "tracking": "(1 - fall rate) x tracking share", "return": "mean return"}
LOG_NAME, CURVE_NAME, BEST_NAME, TRAIN_NAME = "adapt_log.csv", "adapt_curve.png", "best", "train"
COLUMNS = ("round", "steps", "metric", "best", "decision", "metric_name", "best_round", "bad_streak",
           "return", "fall_rate", "success_rate", "tracking_share", "walk_rate", "wall_s", "note",
           "eval_seed", "eval_episodes", "report_seed", "report_episodes", "report_metric", "report_return",
           "report_fall_rate", "report_success_rate", "report_tracking_share", "report_walk_rate")


@dataclasses.dataclass(frozen=True)
class AdaptConfig:
    """The rounds, the held-out evaluation and the fuse of ``unilab adapt``."""

    rounds: int = 6
    steps_per_round: int = 500_000  # rounded up to whole PPO iterations (num_envs * algo.num_steps)
    eval_episodes: int = 64
    patience: int = 3               # consecutive bad rounds that trip the fuse
    tolerance: float = 0.05         # a bad round scores below best - tolerance * |best|
    metric: str = "auto"            # one of METRICS (module docstring)
    eval_seed: int = 12345          # seed of the selection set's envs (row i: eval_seed + i)
    report_seed: int = 23456        # seed of the report set's envs, disjoint from the selection set's
    report_episodes: int | None = None  # episodes of the report set (None: eval_episodes)

    def __post_init__(self) -> None:
        for name in ("rounds", "steps_per_round", "eval_episodes", "patience"):
            require(getattr(self, name) >= 1, f"{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        require(0 <= self.tolerance < 1, f"tolerance must be in [0, 1) (a fraction of the best score, e.g. "
                                         f"0.05), got {self.tolerance}")
        require(self.metric in METRICS, f"metric must be one of {list(METRICS)}, got {self.metric!r}")
        require(self.report_episodes is None or self.report_episodes >= 1,
                f"report-episodes must be >= 1, got {self.report_episodes}")

    @property
    def report_count(self) -> int:
        """Episodes of the report set."""
        return self.eval_episodes if self.report_episodes is None else self.report_episodes


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the adaptation log."""

    verdict: Verdict
    steps: int
    metric_name: str
    result: EvalResult | None
    wall_s: float
    note: str = ""
    eval_seed: int | None = None      # the selection set's seed (the rows scored on it)
    report: EvalResult | None = None  # the report set's evaluation (round 0 and the kept round only)
    report_seed: int | None = None

    def values(self) -> dict[str, Any]:
        v, r, p = self.verdict, self.result, self.report
        return {"round": v.round, "steps": self.steps, "metric": v.metric, "best": v.best,
                "decision": str(v.decision), "metric_name": self.metric_name, "best_round": v.best_round,
                "bad_streak": v.bad_streak, "return": r and r.mean_return, "fall_rate": r and r.fall_rate,
                "success_rate": r and r.success_rate, "tracking_share": r and r.tracking_share,
                "walk_rate": r and r.walk_rate(), "wall_s": self.wall_s, "note": self.note,
                "eval_seed": r and self.eval_seed, "eval_episodes": r and r.episodes,
                "report_seed": p and self.report_seed, "report_episodes": p and p.episodes,
                "report_metric": p and score(p, self.metric_name), "report_return": p and p.mean_return,
                "report_fall_rate": p and p.fall_rate, "report_success_rate": p and p.success_rate,
                "report_tracking_share": p and p.tracking_share, "report_walk_rate": p and p.walk_rate()}


@dataclasses.dataclass
class AdaptResult:
    out_dir: Path
    best_dir: Path
    rows: list[Row]
    metric_name: str
    log: Path
    curve: Path | None
    interrupted: bool = False

    @property
    def best(self) -> Row:
        last = self.rows[-1].verdict
        return next(row for row in self.rows if row.verdict.round == last.best_round)

    @property
    def reported(self) -> tuple[Row, Row] | None:
        """The report set's before (round 0) and after (the kept round) rows; ``None`` when the kept
        round was not scored on it (interrupted)."""
        return (self.rows[0], self.best) if self.best.report is not None else None

    @property
    def rolled_back(self) -> bool:
        return self.rows[-1].verdict.decision is Decision.ROLLED_BACK


# --------------------------------------------------------------------------- setup (no files, no envs)


def parse_sim2real(text: str) -> str | dict | None:
    """``--sim2real``: ``none`` (the bare env: shift the dynamics through env_kwargs), a profile name,
    a YAML path, or an inline mapping ``"{extends: go1_real, domain_randomization: {friction: [0.2, 0.4]}}"``."""
    text = text.strip()
    if text.lower() in ("none", "null"):
        return None
    if not text.startswith("{"):
        if not text:
            raise ConfigError("--sim2real is empty: give a profile name, a YAML path, an inline {...} mapping or none")
        return text
    try:
        value = load_yaml(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"--sim2real {text!r} is not a valid inline mapping ({yaml_problem(e)}); e.g. "
                          "\"{extends: go1_real, domain_randomization: {friction: [0.2, 0.4]}}\"") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--sim2real {text!r} must be a mapping of profile sections")
    return value


def check_out(out: Path, source_folder: Path) -> None:
    """``ConfigError`` unless ``out`` can be a new adaptation folder: not the source run, not inside
    it, and absent or empty (an earlier adaptation is never overwritten)."""
    target, source = out.resolve(), source_folder.resolve()
    if target == source:
        raise ConfigError(f"--out {out} is the run being adapted: adapt never writes into the original run; "
                          f"give a new folder, e.g. --out runs/adapt_{source.name}")
    if source in target.parents:
        raise ConfigError(f"--out {out} is inside the run being adapted ({source_folder}): adapt never writes into "
                          f"the original run; give a folder outside it, e.g. --out runs/adapt_{source.name}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} already exists{' and is not empty' if out.is_dir() else ' (a file)'}: "
                          "adapt writes a new folder; remove it or give another --out")


def train_config(source: Path, sim2real: str | dict | None, out: Path, settings: AdaptConfig,
                 overrides: Sequence[str] = (), **flags: Any) -> TrainConfig:
    """The rounds' training config: the source's, under ``sim2real`` (with the source's
    ``privileged_critic`` unless it sets one: :func:`keep_privileged_critic`), starting from the source
    (``init_from``, its observation normalizer kept), writing ``out/train``, without a ``stop:``
    rule (the rounds and the fuse decide when to stop); then ``flags`` (``num_envs``, ``device``,
    ``seed``, ``torch_threads``; ``None`` ignored) and ``key=value`` ``overrides``, validated once.
    ``total_steps`` covers every round. :class:`ConfigError` / ``CheckpointError`` on a mistake."""
    from .config import deep_merge
    from .runner import CKPT_FORMAT, CKPT_VERSION

    data = dict(load_checkpoint(source, CKPT_FORMAT, CKPT_VERSION, required=("config",))["config"])
    # replaces the source's profile (a merge would keep its sections), but keeps its critic's inputs
    data["sim2real"] = keep_privileged_critic(sim2real, data.get("sim2real"))
    data.update(out=str(out / TRAIN_NAME), init_from=str(source), init_fresh_normalizer=False,
                stop={"success_rate": None})
    data = deep_merge(data, {k: v for k, v in flags.items() if v is not None})
    data = deep_merge(data, parse_overrides(list(overrides)))
    if str(data.get("task", "")).startswith("UniLab/"):
        import unilab_envs  # noqa: F401  registers the tasks the profile check looks up
    cfg = from_dict(TrainConfig, data)
    return dataclasses.replace(cfg, total_steps=settings.rounds * round_steps(cfg, settings))


def keep_privileged_critic(shifted: str | dict | None, trained: str | dict | None) -> str | dict | None:
    """``shifted`` (as the rounds' config stores it), with the trained profile's ``privileged_critic`` when
    it sets none itself.

    What the critic sees is a training device, not dynamics: keeping it keeps the critic's
    input, so the source's critic (not a fresh one, whose first advantages are noise) goes on
    learning. Each profile is read resolved (its :class:`~unilab_robot.profiles.Profile`'s
    ``options``): one that sets ``privileged_critic`` (``false`` included; ``null`` is unset,
    as everywhere a profile is resolved) is used as given; ``none`` stays the bare env. A
    profile that does not resolve is returned as it is (the config check says what is wrong
    with it)."""
    from unilab_robot.profiles import resolve

    if shifted is None or trained is None:
        return shifted
    try:
        critic = resolve(trained).options.get("privileged_critic")
        if not critic or "privileged_critic" in resolve(shifted).options:
            return shifted
    except (ValueError, TypeError, OSError):
        return shifted
    return {**shifted, "privileged_critic": critic} if isinstance(shifted, dict) else {
        "extends": shifted, "privileged_critic": critic}


def _stop_after(env_steps: int) -> Callable[[Any, dict], bool]:
    """A training callback that stops the run once it has taken ``env_steps`` env steps."""
    return lambda runner, stats: runner.env_steps >= env_steps


def round_steps(cfg: TrainConfig, settings: AdaptConfig) -> int:
    """Env steps of one round: ``steps_per_round`` rounded up to whole iterations."""
    return math.ceil(settings.steps_per_round / cfg.steps_per_iteration) * cfg.steps_per_iteration


def check_seeds(cfg: TrainConfig, settings: AdaptConfig) -> None:
    """``ConfigError`` when any two of the training envs' seeds (``seed + i``), the selection set's
    (``eval_seed + i``) and the report set's (``report_seed + i``) overlap: the held-out episodes
    must be ones training never started, and the report set ones the selection never saw."""
    train = ("training envs'", "--seed", cfg.seed, cfg.num_envs)
    select = ("selection set's", "--eval-seed", settings.eval_seed, min(cfg.num_envs, settings.eval_episodes))
    report = ("report set's", "--report-seed", settings.report_seed, min(cfg.num_envs, settings.report_count))
    for (name, flag, seed, n), (other, _, other_seed, other_n) in ((select, train), (report, train), (report, select)):
        if seed < other_seed + other_n and other_seed < seed + n:  # evaluate() builds min(num_envs, episodes) rows
            raise ConfigError(f"{flag} {seed}: the {name} seeds {seed}..{seed + n - 1} overlap the {other} "
                              f"{other_seed}..{other_seed + other_n - 1}; pick a {flag} of at least "
                              f"{other_seed + other_n} (or below {other_seed - n + 1})")


# --------------------------------------------------------------------------- the score


def resolve_metric(requested: str, result: EvalResult) -> str:
    """The metric ``auto`` stands for on this task (success, else tracking, else return);
    ``ConfigError`` when the task does not report the one requested."""
    available = ["success"] * (result.success_rate is not None) + ["tracking"] * (result.tracking_share is not None)
    if requested == "auto":
        return (available + ["return"])[0]
    if requested != "return" and requested not in available:
        raise ConfigError(f"--metric {requested}: this task reports no {requested} (it has: "
                          f"{', '.join(available + ['return'])}); use --metric auto")
    return requested


def score(result: EvalResult, metric: str) -> float:
    """The evaluation's score under ``metric`` (higher is better); see the module docstring."""
    if metric == "success":
        return float(result.success_rate)
    if metric == "tracking":
        return (1.0 - result.fall_rate) * float(result.tracking_share)
    if metric == "return":
        return result.mean_return
    raise ValueError(f"metric must be one of {METRICS[1:]}, got {metric!r}")


# --------------------------------------------------------------------------- the rounds


def adapt(cfg: TrainConfig, settings: AdaptConfig, out: str | Path, title: str = "",
          echo: Callable[[str], None] = print) -> AdaptResult:
    """Run the rounds (module docstring) with the training config ``cfg`` (:func:`train_config`:
    ``cfg.init_from`` is the source, ``cfg.out`` the training folder) into the new folder ``out``.

    Returns when the rounds are done, the fuse trips, a round's learner diverges (which trips
    the fuse) or Ctrl-C stops a round (``interrupted``; the log and ``best/`` hold the rounds
    finished). ``echo`` gets one line per round.
    """
    from .faults import TrainingFault
    from .runner import train

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    best_dir, train_dir = out / BEST_NAME, cfg.out_dir
    log = _Log(out / LOG_NAME, out / CURVE_NAME, title or f"adapting {Path(cfg.init_from).name}", settings.tolerance)
    fuse = Fuse(settings.patience, settings.tolerance)
    per_round = round_steps(cfg, settings)

    t0 = time.perf_counter()
    _write_start(Path(cfg.init_from), cfg, best_dir)
    result = _evaluate(best_dir, settings.eval_episodes, settings.eval_seed)
    try:
        metric = resolve_metric(settings.metric, result)
    except ConfigError:  # known only once the task has run: leave the folder as it was (absent or empty)
        shutil.rmtree(best_dir)
        if not any(out.iterdir()):
            out.rmdir()
        raise
    report = _evaluate(best_dir, settings.report_count, settings.report_seed)
    row = log.add(Row(fuse.observe(score(result, metric)), 0, metric, result, time.perf_counter() - t0,
                      eval_seed=settings.eval_seed, report=report, report_seed=settings.report_seed))
    echo(_line(row, settings.rounds, "the source policy"))
    echo(_report_line(row, "before", "the source"))
    interrupted = False
    for r in range(1, settings.rounds + 1):
        t0 = time.perf_counter()
        try:
            # every round runs the whole plan's config (total_steps = all rounds) and stops at its own
            # end, so a linear learning-rate schedule anneals once over the rounds, not once per round
            trained = train(cfg, resume=None if r == 1 else train_dir / "checkpoint.pt",
                            callback=_stop_after(r * per_round))
        except TrainingFault as e:
            if e.__cause__ is not None:  # a checkpoint or log row that could not be written: not the policy's fault
                raise
            row = log.add(Row(fuse.fail(), (r - 1) * per_round, metric, None, time.perf_counter() - t0,
                              note=f"learner diverged: {' '.join(str(e).split())}"))
            echo(_line(row, settings.rounds))
            break
        if trained.interrupted:
            interrupted = True
            echo(f"round {r}/{settings.rounds}: interrupted; the kept policy is round {fuse.best_round} ({best_dir})")
            break
        result = _evaluate(trained.checkpoint, settings.eval_episodes, settings.eval_seed)
        verdict = fuse.observe(score(result, metric))
        if verdict.decision is Decision.KEPT:
            _keep(train_dir, best_dir)
        row = log.add(Row(verdict, trained.env_steps, metric, result, time.perf_counter() - t0,
                          eval_seed=settings.eval_seed))
        echo(_line(row, settings.rounds))
        if verdict.stop:
            break
    best = fuse.best_round
    if not interrupted and best > 0:  # the kept policy on the report set, which chose nothing
        t0 = time.perf_counter()
        report = _evaluate(best_dir, settings.report_count, settings.report_seed)
        kept = log.rows[best]
        log.replace(best, dataclasses.replace(kept, report=report, report_seed=settings.report_seed,
                                               wall_s=kept.wall_s + time.perf_counter() - t0))
    if not interrupted:
        echo(_report_line(log.rows[best], "after", f"best/, round {best}"))
    return AdaptResult(out, best_dir, log.rows, metric, log.csv, log.curve, interrupted)


def _evaluate(checkpoint: Path, episodes: int, seed: int) -> EvalResult:
    """A held-out evaluation: deterministic, ``episodes`` episodes from ``seed`` (the selection or the
    report set), on the checkpoint's own env (the shifted profile: every checkpoint scored carries the
    adaptation config)."""
    from .evaluate import evaluate

    return evaluate(checkpoint, episodes=episodes, seed=seed, progress=False)


def _write_start(source: Path, cfg: TrainConfig, best_dir: Path) -> None:
    """Round 0's best: the source's checkpoint with the adaptation config (so that it is scored, and
    evaluated later, under the shifted profile), without the source's env and episode state."""
    from .ship import RESUME_ONLY
    from .runner import CKPT_FORMAT, CKPT_VERSION

    ckpt = load_checkpoint(source, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"))
    start = {k: v for k, v in ckpt.items() if k not in (*RESUME_ONLY, "format", "version")}
    start["config"] = to_dict(cfg)
    save_checkpoint(start, best_dir / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    _write_text(best_dir / "config.yaml", yaml.safe_dump(start["config"], sort_keys=False))


def _keep(train_dir: Path, best_dir: Path) -> None:
    """Copy the round's checkpoint and config into ``best_dir``, each file atomically."""
    for name in ("config.yaml", "checkpoint.pt"):
        atomic_write(best_dir / name, lambda tmp, name=name: shutil.copyfile(train_dir / name, tmp))


def _write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def _line(row: Row, rounds: int, what: str = "") -> str:
    v = row.verdict
    name = row.metric_name
    head = f"round {v.round}/{rounds}" + (f" ({what})" if what else f" ({row.steps} steps)")
    got = "n/a" if math.isnan(v.metric) else _fmt(v.metric, name)
    tail = f"{v.decision}"
    if v.decision is not Decision.KEPT or v.round > 0:
        tail += f"; best {_fmt(v.best, name)} (round {v.best_round})"
    if v.bad_streak:
        tail += f", {v.bad_streak} bad round(s) in a row"
    if v.decision is Decision.ROLLED_BACK:
        tail += ": the fuse rolled back to the best and stopped"
    return f"{head}: {name} {got} -> {tail}" + (f" [{row.note}]" if row.note else "")


def _report_line(row: Row, when: str, what: str) -> str:
    """The report set's numbers of ``row`` (round 0: before; the kept round: after)."""
    p, name = row.report, row.metric_name
    text = (f"report set ({p.episodes} episodes from seed {row.report_seed}, not used to choose), {when} "
            f"({what}): {name} score {_fmt(score(p, name), name)}")
    if p.success_rate is None:
        text += f", falls {p.fall_rate:.1%}"
    if p.tracking_share is not None:
        text += f", tracking share {p.tracking_share:.1%}, walks {p.walk_rate():.1%}"
    if p.success_rate is not None:
        text += f", success {p.success_rate:.1%}"
    return text + f", return {p.mean_return:.4g}"


def _fmt(value: float, metric: str) -> str:
    return f"{value:.1%}" if metric in ("success", "tracking") else f"{value:.4g}"


class _Log:
    """The adaptation log (CSV) and curve (PNG), both rewritten atomically after every round."""

    def __init__(self, csv: Path, curve: Path, title: str, tolerance: float):
        self.csv, self.curve, self.title, self.tolerance = csv, curve, title, tolerance
        self.rows: list[Row] = []

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return self._write(row)

    def replace(self, index: int, row: Row) -> Row:
        self.rows[index] = row
        return self._write(row)

    def _write(self, row: Row) -> Row:
        _write_text(self.csv, _csv_text([r.values() for r in self.rows]))
        from ..common.plotting import plot_adaptation

        v = [r.verdict for r in self.rows]
        self.curve = plot_adaptation([r.steps for r in self.rows], [x.metric for x in v], [x.best for x in v],
                                     [str(x.decision) for x in v], self.curve, LABELS[row.metric_name], self.tolerance,
                                     self.title)
        return row


def _csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return "nan" if math.isnan(value) else f"{value:.6g}"
        return str(value)

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([cell(row[c]) for c in COLUMNS] for row in rows)
    return text.getvalue()


def _reported(result: AdaptResult) -> list[str]:
    """The summary's before -> after on the report set (no line when it was not scored)."""
    if result.reported is None:
        return []
    (before, after), name = result.reported, result.metric_name
    a, b = before.report, after.report
    text = (f"on the report set ({b.episodes} episodes from seed {after.report_seed}, disjoint from the "
            f"selection set's): {name} score {_fmt(score(a, name), name)} -> {_fmt(score(b, name), name)}")
    if a.success_rate is None:
        text += f", falls {a.fall_rate:.1%} -> {b.fall_rate:.1%}"
    if a.tracking_share is not None:
        text += f", walks {a.walk_rate():.1%} -> {b.walk_rate():.1%}"
    return [text]


def summary(result: AdaptResult) -> str:
    """What the CLI prints at the end: how it ended and where the kept policy is."""
    best = result.best.verdict
    rounds = result.rows[-1].verdict.round
    how = ("the fuse rolled back" if result.rolled_back else "interrupted" if result.interrupted
           else f"{rounds} round(s) done")
    lines = [f"{how}: kept round {best.round} ({result.best.steps} adaptation steps), "
             f"{result.metric_name} {_fmt(best.metric, result.metric_name)} "
             f"(start {_fmt(result.rows[0].verdict.metric, result.metric_name)})",
             f"best policy: {result.best_dir} (unilab eval / ship / export take it)",
             *_reported(result),
             f"adaptation log: {result.log}"]
    if result.curve is not None:
        lines.append(f"adaptation curve: {result.curve}")
    return "\n".join(lines)
