"""Hot swap: new policy weights into the running runtime, between two control steps, without a restart.

A candidate is a folder holding ``policy.onnx`` and ``deploy_spec.json`` (what ``unilab export``
writes). :meth:`HotSwap.request` loads it on a background thread, off the control path:

1. the spec is read and checked against the running one (:func:`check_compatible`): the same
   observation layout (size, groups and their index ranges, history columns), the same action
   layout (size, mode, joint and actuator names), and the same everything else the runtime's
   NumPy path uses (timing, home pose, scale, clip, gains, limits, command, gait, episode,
   safety). Only the weights (and the normalizer folded into them, and the precision record)
   may differ. A mismatch is refused in one line; the running policy keeps running.
2. an onnxruntime session (CPU, one thread) is opened, its input and output widths checked,
   and it is warmed up (``warmup`` inferences on the running spec's home observation), so the
   first step it acts on costs what any step costs.
3. it waits, ready, until the runtime's next step boundary (:meth:`HotSwap.boundary`, called by
   :meth:`~unilab_robot.runtime.RobotRuntime.tick` before it reads the state), where it
   becomes the acting policy by one reference assignment. The policy it replaced is kept:
   :meth:`HotSwap.rollback` swaps it back at the next boundary.

A recurrent policy's hidden state is **reset** by a swap: the policy that acts after a swap or a
rollback starts from a zero state, as at an episode's start (:mod:`unilab_robot.policy_state`).

Each loaded policy gets an id (0: the one the runtime started with, then 1, 2, ... in load
order). The step log gets two columns when a swap is attached: ``policy`` (the id of the policy
that acted at that step) and ``swap`` (:data:`EVENTS`: 1 at the step a candidate was swapped
in, 2 at a rollback). Every request, refusal, swap and rollback is also a JSON line in the
events file (``<log>.swaps.jsonl``) with the step, the policy's folder and its ONNX's sha256.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from unilab_robot.deploy import SpecError, load_spec
from unilab_robot.deploy.spec import DeploySpec
from unilab_robot.policy_state import check_state, reset_policy_state

EVENTS = ("none", "swap", "rollback")
POLICY_FILE, SPEC_FILE = "policy.onnx", "deploy_spec.json"


class SwapRefused(ValueError):
    """A candidate that cannot replace the running policy; the message says why, in one line."""


def check_compatible(running: DeploySpec, candidate: DeploySpec) -> None:
    """:class:`SwapRefused` naming the first difference that matters between two specs, else nothing.

    The weights may change; the runtime's NumPy path (observation builders, action mapping, gains,
    guard) is built from the running spec, so all of the spec it reads must be the same.
    """
    r, c = running, candidate
    ro, co = r.observation, c.observation
    if ro.size != co.size:
        raise SwapRefused(f"observation size {co.size}, the running policy's is {ro.size}")
    rg = [(g.name, g.start, g.stop) for g in ro.groups]
    cg = [(g.name, g.start, g.stop) for g in co.groups]
    if rg != cg:
        first = next((i for i, (x, y) in enumerate(zip(rg, cg)) if x != y), min(len(rg), len(cg)))
        got = cg[first] if first < len(cg) else "nothing"
        want = rg[first] if first < len(rg) else "nothing"
        raise SwapRefused(f"observation group {first} is {got}, the running policy's is {want}")
    ra, ca = r.action, c.action
    if ra.size != ca.size or ra.mode != ca.mode:
        raise SwapRefused(f"action size {ca.size} ({ca.mode}), the running policy's is {ra.size} ({ra.mode})")
    for field in ("joint_names", "actuator_names"):
        x, y = getattr(ra, field), getattr(ca, field)
        if x != y:
            i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            raise SwapRefused(f"action {field[:-6]} {i} is {y[i] if i < len(y) else 'missing'!r}, the running "
                              f"policy's is {x[i] if i < len(x) else 'missing'!r}")
    for name in ("history", "timing", "action", "command", "gait", "episode", "safety", "model", "task"):
        if getattr(r, name, None) != getattr(c, name, None):
            field = _first_field(getattr(r, name, None), getattr(c, name, None))
            raise SwapRefused(f"its deploy spec's {name}{'.' + field if field else ''} differs from the running "
                              f"policy's; a hot swap changes weights only (restart the runtime for another spec)")


def _first_field(a, b) -> str:
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b) and type(a) is type(b):
        for f in dataclasses.fields(a):
            if getattr(a, f.name) != getattr(b, f.name):
                return f.name
    return ""


class OnnxSession:
    """``policy.onnx`` on onnxruntime (CPU, one thread): ``policy(obs) -> action`` (float32 in, float32 out)."""

    def __init__(self, path: Path, obs_size: int, act_size: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's own exception types
            raise SwapRefused(f"{path} does not load in onnxruntime ({' '.join(str(e).split())[:160]})") from None
        inp, out = self.session.get_inputs()[0], self.session.get_outputs()[0]
        self.input_name, self.output_name = inp.name, out.name
        if inp.shape[-1] != obs_size or out.shape[-1] != act_size:
            raise SwapRefused(f"{path} takes {inp.shape[-1]} inputs and gives {out.shape[-1]} actions; the running "
                              f"spec has {obs_size} and {act_size}")
        from unilab_robot.policy_state import recurrent_state

        try:  # a recurrent policy's hidden state, its own (unilab_robot.policy_state)
            self.state = recurrent_state(self.session, self.input_name, self.output_name)
        except ValueError as e:
            raise SwapRefused(f"{path}: {e}") from None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32).reshape(1, -1)
        if self.state is not None:
            return self.state.run(x)[0]
        return self.session.run([self.output_name], {self.input_name: x})[0][0]

    def reset(self) -> None:
        """Zero a recurrent policy's hidden state; nothing for a feed-forward one."""
        if self.state is not None:
            self.state.reset()


@dataclass
class Loaded:
    """A policy the runtime can act with: its id, folder, ONNX sha256, callable, and the warm-up it took."""

    id: int
    folder: str
    sha256: str
    policy: Callable[[np.ndarray], np.ndarray]
    load_s: float = 0.0


def sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class HotSwap:
    """The policies of one running runtime: the acting one, the one before it, a candidate on its way.

    ``spec``: the running spec; ``first``: the running policy (id 0) and ``first_folder`` where it
    came from; ``events``: a ``.jsonl`` path for the event lines (``None``: kept in :attr:`events`
    only); ``say``: one-line reports; ``warmup``: inferences run on a candidate before it is ready.
    """

    def __init__(self, spec: DeploySpec, first: Callable[[np.ndarray], np.ndarray], first_folder: str | Path = "",
                 events: str | Path | None = None, say: Callable[[str], None] = print, warmup: int = 20,
                 warm_obs: np.ndarray | None = None) -> None:
        onnx = Path(first_folder) / POLICY_FILE if first_folder else None
        self.spec, self.say, self.warmup = spec, say, warmup
        self.warm_obs = np.zeros(self.input_size, np.float32) if warm_obs is None else np.asarray(warm_obs, np.float32)
        self.current = Loaded(0, str(first_folder), sha256(onnx) if onnx and onnx.is_file() else "", first)
        self.previous: Loaded | None = None
        self.events: list[dict] = []
        self._events_path = Path(events) if events else None
        self._lock = threading.Lock()
        self._ready: Loaded | None = None
        self._rollback = False
        self._thread: threading.Thread | None = None
        self._next_id = 1
        self.step = 0
        self._event("start", self.current)

    @property
    def input_size(self) -> int:
        """The ONNX input width of the running spec (the observation, plus the history columns if any)."""
        return self.spec.history.size if self.spec.history is not None else self.spec.observation.size

    # --- off the control path ------------------------------------------------------------------
    def load(self, folder: str | Path) -> Loaded:
        """Read, check, open and warm up a candidate (blocking; :meth:`request` runs it on a thread).
        :class:`SwapRefused` in one line when it cannot replace the running policy."""
        folder = Path(folder)
        onnx, spec_path = folder / POLICY_FILE, folder / SPEC_FILE
        if not onnx.is_file() or not spec_path.is_file():
            raise SwapRefused(f"{folder} holds no {POLICY_FILE} and {SPEC_FILE}: pass a folder `unilab export` wrote")
        start = time.perf_counter()
        try:
            candidate = load_spec(spec_path)
        except SpecError as e:
            raise SwapRefused(str(e)) from None
        check_compatible(self.spec, candidate)
        session = OnnxSession(onnx, self.input_size, self.spec.action.size)
        try:  # a recurrent graph's state as its spec says (the state itself starts at zero when it acts)
            check_state(session.state, candidate, str(onnx))
        except SpecError as e:
            raise SwapRefused(str(e)) from None
        for _ in range(self.warmup):
            out = session(self.warm_obs)
        if self.warmup and not np.all(np.isfinite(out)):
            raise SwapRefused(f"{onnx} gives non-finite actions on the home observation")
        with self._lock:
            lid, self._next_id = self._next_id, self._next_id + 1
        return Loaded(lid, str(folder), sha256(onnx), session, time.perf_counter() - start)

    def request(self, folder: str | Path, wait: bool = False, timeout: float = 30.0) -> str:
        """Start loading ``folder`` on a background thread; with ``wait``, block (not the control loop) until it
        is ready or refused. Returns the one-line answer: ``ready ...``, ``loading ...`` or ``refused: ...``."""
        if self._thread is not None and self._thread.is_alive():
            return "refused: a candidate is still loading; ask again when it is ready or refused"
        result: list[str] = []

        def work():
            try:
                loaded = self.load(folder)
            except SwapRefused as e:
                line = f"refused: {folder}: {e}; policy {self.current.id} keeps running"
                self.say(f"hot swap {line}")
                self._event("refused", None, folder=str(folder), reason=str(e))
                result.append(line)
                return
            with self._lock:
                self._ready = loaded
            self._event("ready", loaded, load_s=round(loaded.load_s, 4))
            result.append(f"ready: policy {loaded.id} from {folder} (loaded and warmed up in {loaded.load_s * 1e3:.0f} ms); "
                          f"it acts from the next control step")

        self._thread = threading.Thread(target=work, name="unilab-hot-swap", daemon=True)
        self._thread.start()
        if not wait:
            return f"loading {folder}"
        self._thread.join(timeout)
        return result[0] if result else f"loading {folder} (not ready after {timeout:g} s)"

    def request_rollback(self) -> str:
        """Ask for the previous policy back at the next step boundary; the one-line answer."""
        with self._lock:
            if self.previous is None:
                return f"refused: no previous policy to roll back to; policy {self.current.id} keeps running"
            self._rollback = True
            return f"rolling back to policy {self.previous.id} at the next control step"

    def status(self) -> str:
        """One line: the acting policy, the previous one, a candidate waiting."""
        p = self.previous
        return (f"policy {self.current.id} ({self.current.folder or 'started with'}) acting at step {self.step}; "
                f"previous: {p.id if p else 'none'}; candidate ready: {self._ready.id if self._ready else 'none'}")

    # --- on the control path -------------------------------------------------------------------
    def boundary(self) -> tuple[Callable[[np.ndarray], np.ndarray], int, int]:
        """At a step boundary: swap in a ready candidate or roll back if asked. Returns ``(policy, id, event)``
        for this step (``event`` indexes :data:`EVENTS`). Holds the lock only to exchange references."""
        event = 0
        if self._ready is not None or self._rollback:
            with self._lock:
                if self._rollback and self.previous is not None:
                    self.current, self.previous, self._rollback, event = self.previous, self.current, False, 2
                elif self._ready is not None:
                    self.current, self.previous, self._ready, event = self._ready, self.current, None, 1
            if event:  # a recurrent policy starts from a zero state after a swap or a rollback (policy_state)
                reset_policy_state(self.current.policy)
                self._event(EVENTS[event], self.current, replaced=self.previous.id)
        self.step += 1
        return self.current.policy, self.current.id, event

    def _event(self, kind: str, loaded: Loaded | None, **extra) -> None:
        row = {"event": kind, "step": self.step, "time": time.time(), **extra}
        if loaded is not None:
            row.update(policy=loaded.id, folder=loaded.folder, sha256=loaded.sha256)
        self.events.append(row)
        if self._events_path is not None:
            with open(self._events_path, "a") as f:
                f.write(json.dumps(row) + "\n")
