"""Moses's mert (mert/mert.cpp, Moses 34452895), step for step: the weights.txt bytes and
the ``Best point:`` line its ``mert -r SEED`` writes (with one thread).

What Moses's mert does, and so this module:

* features/scores files are read in order; blocks of one sentence number are merged (a
  later file's rows after an earlier file's), sentences in order of first appearance;
  features and statistics are float32; sparse features count only through ``-p``
  (their float32 dot product with the sparse weights becomes one more dense value);
* per sentence, rows equal in dense features and statistics are dropped by Moses's
  swap-with-last rule (Data::removeDuplicates), which also reorders the rows;
* the start points are the init files' first lines, then ``-n`` random points drawn
  within the first file's min/max lines; each is optimised in turn
  (pyx/_moses_mert.pyx); the first task with the highest score (> 0) wins, its point is
  L1-normalised when every feature is optimised, and printed with C++'s six digits.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError

#: Moses's -t names and the kernel's optimizer numbers
MOSES_OPTIMIZERS = {"powell": 0, "random-direction": 1, "random": 2}
#: --sctype names Moses's StatisticsBasedScorer subclasses take, and the kernel's numbers
MOSES_SCORERS = {"BLEU": 0, "TER": 1, "PER": 2, "CDER": 3, "WER": 3}
_REG = {"none": 0, "average": 1, "min": 2}


class NotMoses(Exception):
    """Input that the Moses-exact path does not handle (an interpolated scorer, say):
    mert.py runs mtplug's MERT instead."""


def parse_scconfig(text: str | None) -> dict:
    """Moses's --scconfig ``key:value,key:value`` (Scorer::InitConfig)."""
    out = {}
    for item in (text or "").split(","):
        if not item:
            continue
        key, _, value = item.partition(":")
        out[key] = value
    return out


def _interpolation(name: str, config: dict):
    """InterpolatedScorer's parts of ``name`` (``BLEU,TER``): (kinds int32, first statistic
    int32, weights float32); weights from ``weights:W1+W2`` (atof each, float32, divided by
    their float32 sum unless it is 1) or 1/m each."""
    from ...metrics.moses_scores_format import N_STATS

    names = name.split(",")
    kinds = np.array([MOSES_SCORERS[n] for n in names], dtype=np.int32)
    col0 = np.concatenate([[0], np.cumsum([N_STATS[n] for n in names[:-1]])]).astype(np.int32)
    text = config.get("weights", "")
    if not text:
        weights = np.full(len(names), np.float32(1.0 / len(names)), dtype=np.float32)
    else:
        weights = np.array([_atof(w) for w in text.split("+")], dtype=np.float32)
        total = np.float32(0)
        for w in weights:
            total = np.float32(total + w)
        if total != np.float32(1):
            weights = (weights / total).astype(np.float32)
        if len(weights) != len(names):
            raise InputError("The number of weights does not equal the number of scorers!")
    zero = np.flatnonzero(weights == 0)
    if len(zero):
        raise InputError(f"No weights for scorer{int(zero[0])}")
    return kinds, col0, weights


def _atof(text: str) -> float:
    """C's atof: the longest leading number, 0 if none."""
    import re

    m = re.match(r"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)", text)
    return float(m.group(0)) if m else 0.0


def read_moses_data(ffiles, scfiles, sparse_weights: str | None):
    """The hypotheses as Moses's mert holds them before de-duplication: (feats float32
    [n, pdim], stats float32 [n, k], offsets int64 [S + 1], dense names, sctype)."""
    from ...corpus import FeatureSpace
    from ...formats.mert_data import read_blocks

    weights = _read_sparse_weights(sparse_weights) if sparse_weights else None
    feats, stats, sids, names, sctype = [], [], [], None, None
    for ff, sf in zip(ffiles, scfiles):
        space = FeatureSpace()
        f = read_blocks(ff, False, space)
        s = read_blocks(sf, True)
        if len(f["sent_ids"]) != len(s["sent_ids"]) or not np.array_equal(f["sent_ids"], s["sent_ids"]):
            raise InputError(f"sentence blocks do not match those of {ff}", sf)
        if names is None:
            names, sctype = space.feature_names[: space.n_dense], s["sctype"]
        elif space.feature_names[: space.n_dense] != names:
            raise InputError("dense features differ from those of the first features file", ff)
        dense = f["dense"].astype(np.float32)
        if weights is not None:
            merged = _merge_sparse(f, space, weights)
            dense = np.column_stack([dense, merged]).astype(np.float32)
        feats.append(dense)
        stats.append(s["stats"].astype(np.float32))
        sids.append(f["sent_ids"].astype(np.int64))
    feats_a, stats_a, sid = np.concatenate(feats), np.concatenate(stats), np.concatenate(sids)
    # sentences in order of first appearance; a sentence's rows file by file, in file order
    uniq, first = np.unique(sid, return_index=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    pos = rank[np.searchsorted(uniq, sid)]
    order = np.argsort(pos, kind="stable")
    offsets = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pos, minlength=len(uniq)), out=offsets[1:])
    return (np.ascontiguousarray(feats_a[order]), np.ascontiguousarray(stats_a[order]), offsets, names, sctype)


def _read_sparse_weights(path: str) -> list[tuple[str, np.float32]]:
    """SparseVector::load: ``name value`` lines (``#`` lines skipped), the last value of a
    name kept at its first place; float32."""
    from ...fileio import read_text_lines

    order: dict[str, np.float32] = {}
    for line in read_text_lines(path):
        if line.startswith("#"):
            continue
        parts = line.split()
        if not parts:
            continue
        try:
            value = np.float32(float(parts[1])) if len(parts) > 1 else np.float32(0)
        except ValueError:
            value = np.float32(0)
        order[parts[0]] = value
    return list(order.items())


def _merge_sparse(f: dict, space, weights) -> np.ndarray:
    """Per row, the float32 sum over the sparse weights (in their file order) of weight x
    value (FeatureStats::set with sparse weights; every name of the weights file has a
    smaller Moses id than the names first met in the features)."""
    from ..._ext import _moses_mert

    names = space.feature_names
    index = {n: i for i, n in enumerate(names)}
    w_ids = np.array([index.get(n, -1) for n, _ in weights], dtype=np.int64)
    w_val = np.array([v for _, v in weights], dtype=np.float32)
    # per feature id: its place in the weights file (-1: no weight)
    place = np.full(len(names), -1, dtype=np.int64)
    for k, i in enumerate(w_ids.tolist()):
        if i >= 0:
            place[i] = k
    return _moses_mert.merge_sparse(f["sparse_indptr"], f["sparse_ids"], f["sparse_values"].astype(np.float32),
                                    place, w_val)


def read_init(files: list[str], pdim: int):
    """Moses's init files: the first ``pdim`` numbers of each (whitespace anywhere), and of
    the first also the next ``pdim`` (min) and ``pdim`` after (max); float32. Returns
    (starts [m, pdim], mins [pdim], maxs [pdim])."""
    starts, mins, maxs = [], None, None
    for i, path in enumerate(files):
        try:
            with open(path, "rb") as fh:
                tokens = fh.read().split()
        except OSError as err:
            raise InputError(f"could not open initfile: {err.strerror}", path) from None
        values = []
        for t in tokens:
            try:
                values.append(np.float32(float(t)))
            except ValueError:
                break               # istream >> float stops at the first non-number
        want = 3 * pdim if i == 0 else pdim
        if len(values) < pdim:
            raise InputError(f"Too few starting weights ({len(values)}; -d gives {pdim})", path, 1)
        if len(values) < want:
            minimum = len(values) < 2 * pdim
            raise InputError(f"Too few {'minimum' if minimum else 'maximum'} weights", path, 2 if minimum else 3)
        starts.append(values[:pdim])
        if i == 0:
            mins, maxs = values[pdim: 2 * pdim], values[2 * pdim: 3 * pdim]
    return (np.array(starts, dtype=np.float32).reshape(len(files), pdim), np.array(mins, dtype=np.float32),
            np.array(maxs, dtype=np.float32))


def moses_mert(ffiles, scfiles, init_files, pdim: int, *, seed: int, ntry: int, nrandom: int, opt_type: str,
               sctype: str | None, scconfig: str | None, optimize: list[str], positive: list[str],
               sparse_weights: str | None, fix_slopes: bool = False, shard_count: int = 0,
               shard_size: float = 0.0):
    """Moses's mert on these files and flags (module docstring); ``fix_slopes``: line
    slopes without the fixed weights' part (Moses adds it; docs/mert-moses.md);
    ``shard_count``/``shard_size``: --shard-count/--shard-size (the best point of each
    shard, averaged). Returns
    (weights float32 [pdim] as Moses prints them, final score float32)."""
    from ..._ext import _moses_mert

    if opt_type not in MOSES_OPTIMIZERS:
        raise InputError(f"unknown Optimizer type {opt_type} (Moses knows powell, random-direction, random)")
    feats, stats, offsets, names, file_sctype = read_moses_data(ffiles, scfiles, sparse_weights)
    # Moses's default is BLEU whatever the files hold (another scorer's statistics then stop
    # it); mtplug takes the files' scorer
    name = sctype or file_sctype
    if any(part not in MOSES_SCORERS for part in name.split(",")):
        raise NotMoses(name)
    if name != file_sctype:
        raise NotMoses(f"{name} on {file_sctype} statistics")
    config = parse_scconfig(scconfig)
    parts = _interpolation(name, config) if "," in name else None
    reg = config.get("regtype", "none")
    if reg not in _REG:
        raise InputError(f"Unknown scorer regularisation strategy: {reg}")
    window = int(config.get("regwin", "0") or 0)
    full_dim = pdim + (1 if sparse_weights else 0)
    if feats.shape[1] < full_dim:
        raise InputError(f"-d {pdim} but the features files hold {feats.shape[1] - (full_dim - pdim)} dense "
                         f"features ({' '.join(names)})", ffiles[0])
    # a smaller -d: Moses optimises the first full_dim values of each row (the merged sparse
    # value stays last, so -p then weighs a dense feature instead), de-duplicating on all
    starts, mins, maxs = read_init(init_files, full_dim)
    if shard_size and not shard_count:
        raise InputError("shard-size provided without shard-count")
    if shard_size > 1 or shard_size < 0:
        raise InputError("shard-size should be between 0 and 1")
    if shard_count and parts is not None:
        # Moses's shards hand an interpolation's parts empty statistics (and then stop)
        raise InputError("--shard-count with an interpolated --sctype: Moses's shards cannot score it")

    if optimize:
        index = {n: i for i, n in enumerate(names)}
        bad = [n for n in optimize if n not in index]
        if bad:
            raise InputError(f"invalid feature index for -o {bad[0]} (features: {' '.join(names)})")
        opt_idx = np.array([index[n] for n in optimize], dtype=np.int32)
        if len(opt_idx) > full_dim:
            raise InputError(f"-o names {len(opt_idx)} features; there are {full_dim}")
        if opt_idx.max() >= full_dim:
            raise InputError(f"-o names feature {names[int(opt_idx.max())]}, beyond the -d {pdim} optimised")
    else:
        opt_idx = np.arange(full_dim, dtype=np.int32)
    dim = len(opt_idx)
    # dim == full_dim: Moses takes the init values and the features in file order (Point,
    # OptimizeAll), whatever the order -o names them in
    proj: np.ndarray = np.arange(full_dim) if dim == full_dim else opt_idx
    fixed_idx = np.setdiff1d(np.arange(full_dim, dtype=np.int32), opt_idx).astype(np.int32)
    fixed_w = starts[0, fixed_idx].astype(np.float32)
    pos = None
    if positive:
        index = {n: i for i, n in enumerate(names)}
        flags = np.zeros(full_dim, dtype=np.uint8)
        for n in positive:
            i = index.get(n, -1)
            if 0 <= i < full_dim:
                flags[i] = 1
        pos = np.ascontiguousarray(flags[:dim])       # Moses indexes m_positive by optimised position

    rows, dd_offsets = _moses_mert.moses_dedup(feats, stats, offsets)
    if parts is not None:
        # Moses hands an interpolation's parts their statistics before it removes duplicates:
        # they keep reading the rows by their places before (docs/mert-moses.md)
        kept = np.diff(dd_offsets)
        stats = np.concatenate([stats[offsets[s]: offsets[s] + kept[s]] for s in range(len(kept))])
    else:
        stats = stats[rows]
    feats, stats = np.ascontiguousarray(feats[rows][:, :full_dim]), np.ascontiguousarray(stats)
    p_starts = np.ascontiguousarray(starts[:, proj])
    scores, points = _moses_mert.moses_mert(
        feats, stats, dd_offsets, p_starts, max(0, ntry), np.ascontiguousarray(mins[proj]),
        np.ascontiguousarray(maxs[proj]), opt_idx, fixed_idx, fixed_w, pos, MOSES_OPTIMIZERS[opt_type],
        max(0, nrandom), seed, MOSES_SCORERS.get(name, 0), _REG[reg], window, not fix_slopes, parts,
        shard_count, np.float32(shard_size))

    # mert.cpp: per shard the first task with the highest score above 0 (else an all-zero
    # point), summed over the shards from +0 in float32, then scaled by 1/shards
    f32 = np.float32
    total_p, total = np.zeros(dim, dtype=np.float32), f32(0)
    for h in range(scores.shape[0]):
        best, best_p = f32(0), np.zeros(dim, dtype=np.float32)
        for t in range(scores.shape[1]):
            if scores[h, t] > best:
                best, best_p = scores[h, t], points[h, t]
        total_p = (total_p + best_p).astype(np.float32)
        total = f32(total + best)
    final_p = (total_p * f32(1.0 / scores.shape[0])).astype(np.float32)
    final = f32(total / f32(scores.shape[0]))
    if dim == full_dim:
        norm = f32(0)
        for v in final_p:
            norm = f32(norm + abs(v))
        if norm != 0:
            final_p = (final_p / norm).astype(np.float32)
        weights = final_p
    else:
        weights = np.zeros(full_dim, dtype=np.float32)
        weights[opt_idx] = final_p
        weights[fixed_idx] = fixed_w
    return weights, final


def format_point(values) -> str:
    """Moses's ``ostream << Point``: each value with C++'s default six digits, then a blank."""
    return "".join(_g(float(v)) + " " for v in values)


def _g(v: float) -> str:
    """C++ ostream's default float output (printf %g, glibc's -nan)."""
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    return "%g" % v
