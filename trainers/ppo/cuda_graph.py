"""The PPO minibatch step as one captured CUDA graph (``algo.cuda_graph``, CUDA only).

An eager minibatch step launches a few hundred small kernels (two MLPs forward and
backward, the loss pieces, gradient clipping, Adam), each costing more in launch and
Python overhead than in arithmetic at PPO's sizes. Captured once, the whole step —
forward, losses, the adaptive-KL learning rate (computed on device), backward,
global-norm clipping and a capturable fused Adam — replays as a single graph launch.
Per minibatch the host does one row gather into the static input buffer and one replay,
with no host-device synchronization; the statistics accumulate on device.

Semantics equal the eager path (:meth:`PPO.minibatch_step`), except that the rollout
table always carries the mask column (all ones when there are no masked rows).
Capturing needs warm-up steps; they run on a snapshot and the parameters and optimizer
state are restored in place afterwards, so warm-up does not change training.
"""

from __future__ import annotations

import torch

from . import losses as L


class GraphedUpdate:
    def __init__(self, algo):
        self.algo = algo
        self.graph: torch.cuda.CUDAGraph | None = None
        self.key = None

    def invalidate(self) -> None:
        """Forget the captured graph (optimizer state tensors were replaced, e.g. by a load)."""
        self.graph, self.key = None, None

    def run(self, storage, generator, advantages) -> tuple[torch.Tensor, int]:
        """All epochs x minibatches of one update; returns (statistic sums [6], minibatch count)."""
        cfg = self.algo.cfg
        table, widths = storage.table(advantages, with_mask=True)
        size = storage.batch_size // cfg.num_minibatches
        key = (id(storage), size, widths, self.algo.actor_held, self.algo.reads_truth)  # a warm-up's step is another graph
        if self.key != key:
            self._capture(storage, table, widths, size)
            self.key = key
        self.acc.zero_()
        n = 0
        for idx in storage.minibatch_indices(cfg.num_minibatches, cfg.num_epochs, generator):
            torch.index_select(table, 0, idx, out=self.rows)
            self.graph.replay()
            n += 1
        return self.acc, n

    # ------------------------------------------------------------------ capture

    def _step(self) -> None:
        algo = self.algo
        mb = self.storage.split(self.rows, self.widths)
        loss, kl, stats = algo.losses(mb, self.storage.old_log_std)
        if algo.cfg.schedule == "adaptive" and not algo.actor_held:  # held in a warm-up
            algo._lr_t.copy_(L.adaptive_learning_rate_tensor(algo._lr_t, kl, algo.cfg.desired_kl))
        norm = algo.gradient_step(loss)
        self.acc += torch.cat([stats, norm.detach().float().reshape(1)])

    def _capture(self, storage, table, widths, size) -> None:
        algo = self.algo
        self.storage, self.widths = storage, widths
        self.rows = table[:size].clone()
        self.acc = torch.zeros(len(L.MINIBATCH_STATS), device=table.device)
        snapshot = self._snapshot()
        side = torch.cuda.Stream(device=table.device)
        side.wait_stream(torch.cuda.current_stream(table.device))
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up: autograd and optimizer state allocated outside capture
                self._step()
        torch.cuda.current_stream(table.device).wait_stream(side)
        self._restore(snapshot)
        algo.optimizer.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()
        self._restore(snapshot)  # capture records kernels without running them; restore anyway

    def _snapshot(self) -> dict:
        algo = self.algo
        state = {id(p): {k: v.detach().clone() for k, v in algo.optimizer.state[p].items()
                         if isinstance(v, torch.Tensor)} for p in algo.params if p in algo.optimizer.state}
        return {"params": [p.detach().clone() for p in algo.params], "opt": state, "lr": algo._lr_t.clone()}

    @torch.no_grad()
    def _restore(self, snap: dict) -> None:
        algo = self.algo
        for p, saved in zip(algo.params, snap["params"]):
            p.copy_(saved)
        for p in algo.params:
            st = algo.optimizer.state.get(p, {})
            saved = snap["opt"].get(id(p))
            for k, v in st.items():
                if isinstance(v, torch.Tensor):
                    v.copy_(saved[k]) if saved is not None and k in saved else v.zero_()
        algo._lr_t.copy_(snap["lr"])
