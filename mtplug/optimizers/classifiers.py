"""Linear binary classifiers without a bias term, for PRO's pair differences.

Data: m rows x_r with labels y_r in {-1, +1}, held as a :class:`PairMatrix` (a dense block
float64 [m, D] plus an optional scipy.sparse CSR block [m, n_sparse]; the weight vector is
float64 [D + n_sparse], dense block first).

Objectives (``loss_weight`` ω multiplies every row's loss; PRO passes ω = 2, because each
sampled pair stands for both of its orientations, (x, +1) and (-x, -1), which without a
bias have identical losses; ``center`` c is the mean of the Gaussian prior, 0 unless given):

* logistic: ω Σ_r log(1 + exp(-y_r w·x_r)) + ‖w - c‖² / (2C), minimised by scipy's L-BFGS-B
  with the analytic gradient (C is the inverse ℓ2 strength, as in scikit-learn and
  liblinear; C = 1 is megam's default Gaussian prior of precision 1, which Moses's
  mert-moses.pl runs as ``megam -nobias``).
* svm: ω Σ_r max(0, 1 - y_r w·x_r) + ‖w - c‖² / (2C), i.e. ½‖w - c‖² + ωC Σ hinge, by dual
  coordinate descent (Hsieh et al. 2008; liblinear's L1-loss SVC without bias) in
  v = w - c, whose hinge margins become 1 - y_r c·x_r.
* perceptron: the averaged perceptron (Collins 2002) from w = 0; no objective, C and c unused.

The perceptron and the SVM visit the rows in a fresh permutation per epoch drawn from
``numpy.random.default_rng(seed)``, so a run is deterministic given the seed. No bias:
PRO's data are symmetric (every pair appears in both orientations), so the optimal bias is 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._ext import _pro

if TYPE_CHECKING:
    import scipy.sparse

CLASSIFIERS = ("logistic", "perceptron", "svm")


@dataclass
class PairMatrix:
    """Rows of a design matrix: ``dense`` float64 [m, D] (C-contiguous) and ``sparse``
    (scipy.sparse.csr_matrix [m, n_sparse], float64, or None when there are no sparse columns)."""

    dense: np.ndarray
    sparse: scipy.sparse.csr_matrix | None = None

    def __post_init__(self):
        self.dense = np.ascontiguousarray(self.dense, dtype=np.float64)
        if self.dense.ndim != 2:
            raise ValueError(f"dense must be 2-D, got shape {self.dense.shape}")
        if self.sparse is not None:
            import scipy.sparse  # here, not at import: SciPy takes ~0.5 s to load

            self.sparse = scipy.sparse.csr_matrix(self.sparse, dtype=np.float64)
            if self.sparse.shape[0] != self.dense.shape[0]:
                raise ValueError(f"dense has {self.dense.shape[0]} rows, sparse {self.sparse.shape[0]}")
            self.sparse.sort_indices()

    @property
    def n_rows(self) -> int:
        """Rows m (training examples: pair differences)."""
        return self.dense.shape[0]

    @property
    def n_dense(self) -> int:
        """Dense columns D (the first D weights)."""
        return self.dense.shape[1]

    @property
    def n_columns(self) -> int:
        """All columns, dense then sparse: the length of a weight vector."""
        return self.n_dense + (self.sparse.shape[1] if self.sparse is not None else 0)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """X·w: float64 [m] for w float64 [n_columns]."""
        out = self.dense @ w[: self.n_dense]
        if self.sparse is not None:
            out += self.sparse @ w[self.n_dense:]
        return out

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Xᵀ·r: float64 [n_columns] for r float64 [m]."""
        out = np.empty(self.n_columns)
        out[: self.n_dense] = self.dense.T @ r
        if self.sparse is not None:
            out[self.n_dense:] = self.sparse.T @ r
        return out

    def row_squared_norms(self) -> np.ndarray:
        """‖x_r‖²: float64 [m]."""
        sq = np.einsum("ij,ij->i", self.dense, self.dense)
        if self.sparse is not None:
            sq += np.asarray(self.sparse.multiply(self.sparse).sum(axis=1)).ravel()
        return sq

    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(dense, indptr int64, cols int32, values float64) for the epoch kernels."""
        if self.sparse is None:
            return (self.dense, np.zeros(self.n_rows + 1, np.int64), np.zeros(0, np.int32),
                    np.zeros(0, np.float64))
        s = self.sparse
        return (self.dense, np.ascontiguousarray(s.indptr, dtype=np.int64),
                np.ascontiguousarray(s.indices, dtype=np.int32), np.ascontiguousarray(s.data, dtype=np.float64))


@dataclass
class Fit:
    """A trained classifier: weights float64 [n_columns]; iterations (L-BFGS iterations or
    epochs run); converged (the solver's own criterion was met); objective at the weights
    (NaN for the perceptron, which has none)."""

    weights: np.ndarray
    iterations: int
    converged: bool
    objective: float


def _labels(X: PairMatrix, y) -> np.ndarray:
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.shape != (X.n_rows,):
        raise ValueError(f"y must have shape ({X.n_rows},), got {y.shape}")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels must be -1 or +1")
    return y


def _center(X: PairMatrix, center) -> np.ndarray:
    if center is None:
        return np.zeros(X.n_columns)
    c = np.ascontiguousarray(center, dtype=np.float64)
    if c.shape != (X.n_columns,) or not np.all(np.isfinite(c)):
        raise ValueError(f"center must be finite with shape ({X.n_columns},), got shape {c.shape}")
    return c


def logistic_objective(w: np.ndarray, X: PairMatrix, y: np.ndarray, C: float,
                       loss_weight: float = 1.0, center: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """(value, gradient float64 [n_columns]) of ω Σ log(1 + exp(-y_r w·x_r)) + ‖w - c‖²/(2C),
    c = ``center`` (float64 [n_columns]) or 0.

    log(1 + exp(-z)) is evaluated as ``logaddexp(0, -z)``, finite for any finite z.
    """
    from scipy.special import expit

    z = y * X.matvec(w)
    d = w if center is None else w - center
    value = loss_weight * float(np.sum(np.logaddexp(0.0, -z))) + float(d @ d) / (2.0 * C)
    # d/dz of -log σ(z) is -σ(-z)
    grad = X.rmatvec(-loss_weight * y * expit(-z)) + d / C
    return value, grad


def fit_logistic(X: PairMatrix, y, C: float = 1.0, *, loss_weight: float = 1.0, center=None,
                 max_iterations: int = 500, tolerance: float = 1e-6) -> Fit:
    """ℓ2-regularised logistic regression by L-BFGS-B, started at the prior's mean
    ``center`` (float64 [n_columns]; default 0).

    tolerance: scipy's ``gtol`` (largest gradient component); ``ftol`` is its relative
    objective decrease, set to tolerance / 1000.
    """
    import scipy.optimize

    y = _labels(X, y)
    c = _center(X, center)
    res = scipy.optimize.minimize(
        logistic_objective, c.copy(), args=(X, y, float(C), float(loss_weight), None if center is None else c),
        jac=True, method="L-BFGS-B",
        options={"maxiter": int(max_iterations), "gtol": tolerance, "ftol": tolerance * 1e-3})
    return Fit(np.asarray(res.x, dtype=np.float64), int(res.nit), bool(res.success), float(res.fun))


def fit_perceptron(X: PairMatrix, y, *, epochs: int = 20, seed: int = 0) -> Fit:
    """Averaged perceptron: exactly ``epochs`` passes in seeded random order; returns the
    average of the weights after every row seen. ``converged``: the last epoch made no
    mistake (the rows were separated)."""
    y = _labels(X, y)
    xd, ip, cols, vals = X.kernel_arrays()
    w = np.zeros(X.n_columns)
    u = np.zeros(X.n_columns)
    counter = 1.0
    rng = np.random.default_rng(seed)
    mistakes = -1
    for _ in range(int(epochs)):
        order = rng.permutation(X.n_rows).astype(np.int64)
        mistakes, counter = _pro.perceptron_epoch(xd, ip, cols, vals, y, order, w, u, counter)
    return Fit(w - u / counter, int(epochs), mistakes == 0, float("nan"))


def svm_objective(w: np.ndarray, X: PairMatrix, y: np.ndarray, C: float, loss_weight: float = 1.0,
                  center: np.ndarray | None = None) -> float:
    """ω Σ max(0, 1 - y_r w·x_r) + ‖w - c‖²/(2C), c = ``center`` or 0."""
    d = w if center is None else w - center
    return loss_weight * float(np.maximum(0.0, 1.0 - y * X.matvec(w)).sum()) + float(d @ d) / (2.0 * C)


def fit_svm(X: PairMatrix, y, C: float = 1.0, *, loss_weight: float = 1.0, center=None, epochs: int = 20,
            seed: int = 0, tolerance: float = 1e-3) -> Fit:
    """Linear SVM (hinge loss, ℓ2 toward ``center``, float64 [n_columns], default 0) by dual
    coordinate descent, at most ``epochs`` passes; stops early when the projected-gradient
    spread of a pass falls below ``tolerance``."""
    y = _labels(X, y)
    c = _center(X, center)
    xd, ip, cols, vals = X.kernel_arrays()
    sq = X.row_squared_norms()
    margins = 1.0 - y * X.matvec(c)
    upper = float(C) * float(loss_weight)    # ½‖v‖² + ωC Σ hinge  ⇔  the objective above × C
    alpha = np.zeros(X.n_rows)
    v = np.zeros(X.n_columns)                # w - c
    rng = np.random.default_rng(seed)
    spread = np.inf
    epoch = 0
    for epoch in range(1, int(epochs) + 1):  # noqa: B007 - the epochs run, returned below
        order = rng.permutation(X.n_rows).astype(np.int64)
        spread = _pro.svm_dcd_epoch(xd, ip, cols, vals, y, order, sq, margins, upper, alpha, v)
        if spread < tolerance:
            break
    w = v + c
    return Fit(w, epoch, bool(spread < tolerance), svm_objective(w, X, y, C, loss_weight, c))


def fit(kind: str, X: PairMatrix, y, *, C: float = 1.0, loss_weight: float = 1.0, center=None, epochs: int = 20,
        max_iterations: int = 500, seed: int = 0) -> Fit:
    """Train the classifier ``kind`` (one of :data:`CLASSIFIERS`); ``center``: the prior's
    mean (float64 [n_columns]), which the perceptron cannot take."""
    if kind == "logistic":
        return fit_logistic(X, y, C, loss_weight=loss_weight, center=center, max_iterations=max_iterations)
    if kind == "perceptron":
        if center is not None:
            raise ValueError("the perceptron has no prior: center cannot be given")
        return fit_perceptron(X, y, epochs=epochs, seed=seed)
    if kind == "svm":
        return fit_svm(X, y, C, loss_weight=loss_weight, center=center, epochs=epochs, seed=seed)
    raise ValueError(f"unknown classifier {kind!r}; known: {', '.join(CLASSIFIERS)}")
