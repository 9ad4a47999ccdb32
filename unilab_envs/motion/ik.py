"""Damped least-squares inverse kinematics on a floating-base model, with joint limits.

One frame: minimise ``sum_k w_k |p_k(q) - t_k|^2 + w_o |log(R_t R_root(q)^T)|^2 + w_r |q_j - q_ref|^2``
``+ sum_f w_f |z_f(q) x e_z|^2`` (the last: feet kept flat, their z axes up, with per-frame weights)
over the root pose and the joints by Gauss-Newton steps damped by ``damping`` (Levenberg-Marquardt):
``(J^T W J + damping I) dq = J^T W e``; after every step each limited hinge / slide joint is clamped
into its range. Called per frame, warm-started from the previous frame's solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unilab_envs.motion.kinematics import quat_conj, quat_mul, quat_to_rotvec


@dataclass(frozen=True)
class IKConfig:
    iterations: int = 12          # Gauss-Newton steps per frame (at most)
    first_iterations: int = 60    # on the first frame (no warm start)
    damping: float = 1e-3         # Levenberg-Marquardt damping
    orientation_weight: float = 0.3
    posture_weight: float = 1e-3  # pull of the joints toward the reference pose
    tolerance: float = 1e-5       # stop when the step's norm (rad, m) is under this


class PointIK:
    """IK of body points on ``model`` (a floating base: a free joint first)."""

    def __init__(self, model, bodies: list[str], offsets: np.ndarray, weights: np.ndarray, root_body: str,
                 q_ref: np.ndarray, flat_bodies: tuple[str, ...] = (), config: IKConfig = IKConfig()):
        import mujoco

        self.mj, self.model, self.cfg = mujoco, model, config
        self.data = mujoco.MjData(model)
        self.body_ids = np.array([model.body(b).id for b in bodies])
        self.offsets = np.asarray(offsets, dtype=np.float64)
        self.sqrt_w = np.sqrt(np.repeat(np.asarray(weights, dtype=np.float64), 3))
        self.root_id = model.body(root_body).id
        self.flat_ids = [model.body(b).id for b in flat_bodies]
        self.q_ref = np.asarray(q_ref, dtype=np.float64)
        limited = [j for j in range(model.njnt) if model.jnt_limited[j] and model.jnt_type[j] in (2, 3)]
        self.lim_qadr = np.array([model.jnt_qposadr[j] for j in limited], dtype=int)
        self.lim_lo = np.array([model.jnt_range[j, 0] for j in limited])
        self.lim_hi = np.array([model.jnt_range[j, 1] for j in limited])
        self.joint_dofs = np.arange(6, model.nv)
        self.joint_qadr = np.arange(7, model.nq)
        self._jacp = np.zeros((3, model.nv))
        self._jacr = np.zeros((3, model.nv))

    def points(self) -> np.ndarray:
        """World positions ``(K, 3)`` of the points at the current ``data.qpos`` (after :meth:`forward`)."""
        d = self.data
        return d.xpos[self.body_ids] + np.einsum("kij,kj->ki", d.xmat[self.body_ids].reshape(-1, 3, 3), self.offsets)

    def forward(self) -> None:
        self.mj.mj_kinematics(self.model, self.data)
        self.mj.mj_comPos(self.model, self.data)

    def solve(self, qpos: np.ndarray, targets: np.ndarray, root_quat: np.ndarray, iterations: int,
              flat_weights: np.ndarray | None = None) -> np.ndarray:
        """From ``qpos`` ``(nq,)``, the pose whose points best reach ``targets`` ``(K, 3)`` with the root
        turned toward ``root_quat`` ``(4,)`` and the flat bodies' z axes up with ``flat_weights``
        ``(F,)``; returns the new ``qpos`` (joints within their limits)."""
        m, d, cfg, mj = self.model, self.data, self.cfg, self.mj
        d.qpos[:] = qpos
        nk, nf = len(self.body_ids), len(self.flat_ids)
        fw = np.sqrt(np.zeros(nf) if flat_weights is None else np.asarray(flat_weights, dtype=np.float64))
        nrow = 3 * nk + 3 + len(self.joint_dofs) + 3 * nf
        J = np.zeros((nrow, m.nv))
        e = np.zeros(nrow)
        sw_o, sw_r = np.sqrt(cfg.orientation_weight), np.sqrt(cfg.posture_weight)
        nj = len(self.joint_dofs)
        J[3 * nk + 3:3 * nk + 3 + nj, self.joint_dofs] = sw_r * np.eye(nj)
        f0 = 3 * nk + 3 + nj
        for _ in range(iterations):
            self.forward()
            pts = self.points()
            for k in range(nk):
                mj.mj_jac(m, d, self._jacp, None, pts[k], int(self.body_ids[k]))
                J[3 * k:3 * k + 3] = self._jacp
            e[:3 * nk] = (targets - pts).reshape(-1)
            J[:3 * nk] *= self.sqrt_w[:, None]
            e[:3 * nk] *= self.sqrt_w
            mj.mj_jacBody(m, d, None, self._jacr, self.root_id)
            J[3 * nk:3 * nk + 3] = sw_o * self._jacr
            e[3 * nk:3 * nk + 3] = sw_o * quat_to_rotvec(quat_mul(root_quat, quat_conj(d.xquat[self.root_id])))
            e[3 * nk + 3:f0] = sw_r * (self.q_ref[self.joint_qadr] - d.qpos[self.joint_qadr])
            for i, b in enumerate(self.flat_ids):
                z = d.xmat[b].reshape(3, 3)[:, 2]
                mj.mj_jacBody(m, d, None, self._jacr, b)
                J[f0 + 3 * i:f0 + 3 * i + 3] = fw[i] * (np.eye(3) - np.outer(z, z)) @ self._jacr  # no spin about z
                e[f0 + 3 * i:f0 + 3 * i + 3] = fw[i] * np.cross(z, (0.0, 0.0, 1.0))
            H = J.T @ J
            H[np.diag_indices_from(H)] += cfg.damping
            dq = np.linalg.solve(H, J.T @ e)
            mj.mj_integratePos(m, d.qpos, dq, 1.0)
            d.qpos[self.lim_qadr] = np.clip(d.qpos[self.lim_qadr], self.lim_lo, self.lim_hi)
            if np.linalg.norm(dq) < cfg.tolerance:
                break
        return d.qpos.copy()

    def at_limit(self, qpos: np.ndarray, margin: float = 1e-6) -> bool:
        """Whether any limited joint of ``qpos`` sits on its range's edge (the IK clamped it)."""
        q = qpos[self.lim_qadr]
        return bool(np.any((q <= self.lim_lo + margin) | (q >= self.lim_hi - margin)))
