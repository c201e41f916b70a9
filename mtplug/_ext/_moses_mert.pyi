# Stub for the compiled module built from pyx/_moses_mert.pyx.
import numpy as np

SCORER_BLEU: int
SCORER_TER: int
SCORER_PER: int
SCORER_CDER: int
REG_NONE: int
REG_AVERAGE: int
REG_MINIMUM: int
OPT_POWELL: int
OPT_RANDOM_DIRECTION: int
OPT_RANDOM: int

def moses_mert(
    feats: np.ndarray,  # const float[:, ::1] [n, pdim], de-duplicated rows in Moses's order
    stats: np.ndarray,  # const float[:, ::1] [n, k]
    offsets: np.ndarray,  # const int64_t[::1] [S + 1], no sentence empty
    starts: np.ndarray,  # const float[:, ::1] [m, dim] given start points (projected)
    ntry: int,  # random start points drawn after them
    mins: np.ndarray,  # const float[::1] [dim]
    maxs: np.ndarray,  # const float[::1] [dim]
    opt_idx: np.ndarray,  # const int32_t[::1] [dim] optimised features
    fixed_idx: np.ndarray,  # const int32_t[::1] the other features, ascending
    fixed_w: np.ndarray,  # const float[::1] their weights
    positive: np.ndarray | None,  # uint8 [dim]: 1 where the weight must stay > 0
    opt_type: int,  # OPT_*
    nrandom: int,  # -m
    seed: int,  # srand's seed (mod 2**32)
    scorer: int = 0,  # SCORER_*
    reg_type: int = 0,  # REG_*
    reg_window: int = 0,
    slopes_with_fixed: bool = True,  # Moses's line slopes include the fixed weights (False: fixed)
    parts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,  # interpolation: kinds, first stats, weights
    shard_count: int = 0,  # --shard-count (0: no shards)
    shard_size: float = 0,  # --shard-size
) -> tuple[np.ndarray, np.ndarray]: ...  # (scores float32 [shards, m + ntry], points float32 [shards, m + ntry, dim])

def moses_dedup(
    feats: np.ndarray,  # const float[:, ::1] [n, D]
    stats: np.ndarray,  # const float[:, ::1] [n, k]
    offsets: np.ndarray,  # const int64_t[::1] [S + 1]
) -> tuple[np.ndarray, np.ndarray]: ...  # (rows int64 [n_kept] in Moses's order, offsets int64 [S + 1])

def merge_sparse(
    indptr: np.ndarray,  # const int64_t[::1] [n + 1]
    ids: np.ndarray,  # const int32_t[::1]
    values: np.ndarray,  # const float[::1]
    place: np.ndarray,  # const int64_t[::1] per feature id its place in the weights file, -1: none
    weights: np.ndarray,  # const float[::1] the weights in file order
) -> np.ndarray: ...  # float32 [n]
