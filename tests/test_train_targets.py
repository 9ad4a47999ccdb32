"""benchmarks/train_targets.py stops a joystick run by the deterministic evaluation itself.

The rule it replaced stopped on the training statistics alone (falls < 1% of the rolling
window), which a G1 run never cleared (its stochastic training episodes kept falling 6-8%
while the deterministic policy fell in 0 of 64), so the stop and the evaluation disagreed.
"""

from pathlib import Path
from types import SimpleNamespace

from benchmarks.train_targets import TARGETS, Stopper

TRACK_MAX = 0.04


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def stats(tracking_share=0.9, falls=0.0, finished=100):
    return {"reward/tracking_lin_vel": tracking_share * TRACK_MAX, "episode/terminated_frac": falls,
            "episode/finished": finished}


def runner(iteration, num_envs=8):
    return SimpleNamespace(iteration=iteration, cfg=SimpleNamespace(num_envs=num_envs))


def stopper(probe, clock=None, probe_every=3):
    return Stopper(budget_s=100.0, t0=0.0, track_max=TRACK_MAX, gate_tracking=0.7, gate_falls=0.1,
                   probe_every=probe_every, probe=probe, clock=clock or Clock())


def test_no_probe_before_the_training_statistics_pass_the_gate():
    calls = []
    stop = stopper(lambda r: calls.append(r.iteration) or True)
    assert not stop(runner(1), stats(tracking_share=0.69))           # tracking below the gate
    assert not stop(runner(2), stats(falls=0.1))                     # falls not below the gate
    assert not stop(runner(3), stats(finished=15))                   # window under two episodes per env
    assert calls == [] and stop.probes == 0 and stop.stopped_by is None


def test_probes_every_probe_every_iterations_and_stops_when_one_meets_the_target():
    verdicts = iter([False, False, True])
    calls = []

    def probe(r):
        calls.append(r.iteration)
        return next(verdicts)

    stop = stopper(probe, probe_every=3)
    stopped_at = next(i for i in range(10, 30) if stop(runner(i), stats()))  # training ends at the first True
    assert calls == [10, 13, 16]                                     # then at most once every 3 iterations
    assert stopped_at == 16 and stop.stopped_by == "target" and stop.probes == 3


def test_the_budget_stops_without_a_probe():
    clock, calls = Clock(), []
    stop = stopper(lambda r: calls.append(r) or False, clock=clock)
    clock.now = 100.5
    assert stop(runner(1), stats())
    assert stop.stopped_by == "budget" and calls == []


def test_a_task_without_a_probe_never_stops_by_the_gate():
    stop = Stopper(budget_s=100.0, t0=0.0, clock=Clock())           # reach: its config's stop: rule decides
    assert not stop(runner(5), stats())


def test_every_joystick_target_has_a_gate_and_a_probe_interval():
    for name, spec in TARGETS.items():
        if "tracking" in spec:
            assert {"gate_tracking", "gate_falls", "probe_every"} <= spec.keys(), name
            assert spec["gate_tracking"] >= spec["tracking"], name   # the gate is no looser than the target


def test_a_run_leaves_its_checkpoint_but_not_the_probe_copy(tmp_path, monkeypatch):
    """The probe saves the learner mid-run to judge it; only the run's own checkpoint stays."""
    import benchmarks.train_targets as tt

    probed = []

    def fake_train(cfg, callback):
        run_dir = tmp_path / "g1"
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "checkpoint.pt").write_bytes(b"final")
        learner = SimpleNamespace(save=lambda path, at_boundary: Path(path).write_bytes(b"probe"))
        callback.probe(learner)
        return SimpleNamespace(env_steps=1, iterations=1, stop_reason="total_steps", checkpoint=run_dir / "checkpoint.pt")

    def fake_judge(path, spec, episodes):
        probed.append(Path(path).name)
        assert Path(path).exists()
        return {"eval_met": False}

    monkeypatch.setattr(tt, "train", fake_train)
    monkeypatch.setattr(tt, "judge", fake_judge)
    monkeypatch.setattr(tt, "tracking_max", lambda task, kwargs: TRACK_MAX)
    row = tt.run("g1", tmp_path, budget_scale=1.0, seed=0, eval_episodes=1)
    assert probed == ["probe.pt", "checkpoint.pt"] and row["met"] is False
    assert sorted(p.name for p in (tmp_path / "g1").iterdir()) == ["checkpoint.pt"]
