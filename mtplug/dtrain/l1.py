"""ℓ1 regularisation for SGD (Tsuruoka, Tsujii & Ananiadou 2009), applied as dtrain applies it.

dtrain penalises after every sentence (not after every pair), and only the weights
that sentence's updates changed (``changed`` = new value != value before the
updates). With λ = ``l1_reg_strength``:

``naive``
    ``w -= λ·sign(w)`` (may jump over 0 and oscillate: the method's known flaw).
    cdec's code also multiplies the weight by ``max(1e-7, η/(η + c_f))`` (c_f a
    per-feature counter; cdec's source flags that factor as unfinished); mtplug does not.
``clip`` (Carpenter 2008)
    ``w = max(0, w - λ)`` if w > 0, ``min(0, w + λ)`` if w < 0.
``cumul`` (Tsuruoka et al. 2009, Fig. 2)
    ``u`` = total penalty every weight could have received (λ per sentence, counted
    over the whole run, from the first sentence on), ``q_f`` = penalty weight f
    actually received; ``w = max(0, w - (u + q_f))`` if w > 0, ``min(0, w + (u - q_f))``
    if w < 0, then ``q_f += w_new - w_old``. cdec's code adds ``w_new`` instead of the
    difference to ``q_f`` and restarts ``u`` every epoch; both depart from the paper.
"""

from __future__ import annotations

import numpy as np

L1_KINDS = ("none", "naive", "clip", "cumul")


class L1Regularizer:
    """State and rule of one ``l1_reg`` kind (``none``, ``naive``, ``clip``, ``cumul``;
    ValueError for another) with λ = ``strength`` (``l1_reg_strength``); ``apply`` works
    in place."""

    def __init__(self, kind: str = "none", strength: float = 0.0):
        if kind not in L1_KINDS:
            raise ValueError(f"unknown l1_reg {kind!r}; choose from {', '.join(L1_KINDS)}")
        self.kind = kind
        self.strength = float(strength or 0.0)
        self.u = 0.0                      # cumul: accumulated penalty per weight
        self.q = np.zeros(0)              # cumul: penalty received, per feature

    @property
    def active(self) -> bool:
        """Whether this regulariser changes weights at all (a kind other than ``none``)."""
        return self.kind != "none"

    def start_sentence(self) -> None:
        """Call once per input sentence, before its updates (cumul: u += λ)."""
        self.u += self.strength

    def apply(self, w: np.ndarray, w_before: np.ndarray) -> None:
        """Penalise the entries of ``w`` that differ from ``w_before`` (same length)."""
        if self.kind == "none":
            return
        lam = self.strength
        idx = np.flatnonzero((w != w_before) & (w != 0))
        if len(idx) == 0:
            return
        v = w[idx]
        if self.kind == "naive":
            w[idx] = v - lam * np.sign(v)
        elif self.kind == "clip":
            w[idx] = np.where(v > 0, np.maximum(0.0, v - lam), np.minimum(0.0, v + lam))
        else:
            if len(self.q) < len(w):
                self.q = np.concatenate([self.q, np.zeros(len(w) - len(self.q))])
            q = self.q[idx]
            new = np.where(v > 0, np.maximum(0.0, v - (self.u + q)), np.minimum(0.0, v + (self.u - q)))
            self.q[idx] = q + (new - v)
            w[idx] = new
