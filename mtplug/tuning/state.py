"""What ``--resume`` trusts in a working directory, checked before it continues a run.

* ``state.json`` has the shape the loop writes (:func:`check_shape`): one line naming it and
  what was expected otherwise.
* Its ``completed`` iterations have their ``iterNNN`` folders (:func:`check_folders`).
* The newest iteration's store (``iterNNN/store.npz``, every n-best so far) is the one this
  run wrote: the state records its sha256 and size (:func:`store_record`, hashing runs at
  1.4 GB/s here: 0.6 s for an 809 MB store of 2,000 sentences x 1,000-best, against
  the seconds its load takes). A store that does not match or cannot be read is rebuilt
  from the iterations' kept n-best lists (``iterNNN/nbest.out``) as the loop built it
  (:func:`rebuild_store`), and the rebuilt store must hold the hypotheses the history
  counted; when a list is missing, the run ends with one line.
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Callable

from ..errors import InputError

STORE = "store.npz"
NBEST = "nbest.out"


def _iteration_dir(workdir: str, n: int) -> str:
    return os.path.join(workdir, f"iter{n:03d}")


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    """An int or float (a score may be NaN or infinite: JSON's NaN and Infinity)."""
    return _is_int(value) or isinstance(value, float)


def _is_pairs(value) -> bool:
    """[[name, finite number], ...]: weights."""
    return isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                           and _is_number(p[1]) and math.isfinite(p[1]) for p in value)


def _expect(ok: bool, what: str, expected: str, found, path: str) -> None:
    if not ok:
        raise InputError(f"not the state of a tuning run: expected {what} to be {expected}, found "
                         f"{_kind(found)} (was it edited?)", path)


def check_shape(state, path: str) -> None:
    """InputError (one line naming ``path`` and what was expected) unless ``state`` has the
    keys and types of the state the loop writes (version checked before)."""
    _expect(isinstance(state, dict), "the file", "a JSON object", state, path)
    get = state.get
    _expect(isinstance(get("fingerprint"), dict), "'fingerprint'", "an object", get("fingerprint"), path)
    completed = get("completed")
    _expect(_is_int(completed) and completed >= 0, "'completed'", "an integer >= 0", completed, path)
    _expect(get("stop") is None or isinstance(get("stop"), str), "'stop'", "null or a string", get("stop"), path)
    _expect(_is_pairs(get("weights")), "'weights'", "a list of [name, number] pairs", get("weights"), path)
    history = get("history")
    _expect(isinstance(history, list) and len(history) == completed, "'history'",
            f"a list of {completed} entries (one per completed iteration)", history, path)
    for i, entry in enumerate(history, 1):
        ok = (isinstance(entry, dict) and entry.get("iteration") == i and _is_number(entry.get("score"))
              and (entry.get("tuned_score") is None or _is_number(entry.get("tuned_score")))
              and _is_number(entry.get("bleu")) and _is_int(entry.get("hypotheses")) and _is_int(entry.get("new")))
        _expect(ok, f"history entry {i}", f"an object with iteration {i} and numbers score, tuned_score (or null), "
                "bleu, hypotheses, new", entry, path)
    best = get("best")
    if completed or best is not None:
        ok = (isinstance(best, dict) and _is_int(best.get("iteration")) and 1 <= best["iteration"] <= completed
              and _is_number(best.get("score")) and _is_number(best.get("bleu")) and _is_pairs(best.get("weights"))
              and ("objective" not in best or _is_number(best["objective"])))
        _expect(ok, "'best'", f"an object with an iteration in 1..{completed}, a score, a bleu and weights", best,
                path)
    final_test = get("final_test")
    _expect(final_test is None or (isinstance(final_test, dict) and _is_pairs(final_test.get("weights"))),
            "'final_test'", "an object with weights", final_test, path)
    store = get("store")
    _expect(store is None or (isinstance(store, dict) and isinstance(store.get("sha256"), str)
                              and _is_int(store.get("bytes"))),
            "'store'", "an object with sha256 and bytes", store, path)


def check_folders(state: dict, workdir: str, path: str) -> None:
    """InputError unless every completed iteration has its ``iterNNN`` folder."""
    completed = state["completed"]
    missing = [n for n in range(1, completed + 1) if not os.path.isdir(_iteration_dir(workdir, n))]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(f"names {completed} completed iteration(s), but {_iteration_dir(workdir, missing[0])} "
                         f"is missing{more} (was the state edited, or folders removed?)", path)


def store_record(store_path: str) -> dict:
    """What the state records of a store it ties to the run: sha256 and size of the file."""
    digest = hashlib.sha256()
    with open(store_path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"sha256": digest.hexdigest(), "bytes": os.path.getsize(store_path)}


def store_mismatch(state: dict, workdir: str) -> str | None:
    """Why the newest completed iteration's store is not the one the state recorded (None when
    it is, or when the state records none: written by an mtplug before the record)."""
    recorded = state.get("store")
    if not state["completed"] or recorded is None:
        return None
    store_path = os.path.join(_iteration_dir(workdir, state["completed"]), STORE)
    if not os.path.exists(store_path):
        return "it is missing"
    if os.path.getsize(store_path) != recorded["bytes"] or store_record(store_path) != recorded:
        return "it is not the store this run wrote (its sha256 differs from the one in the state)"
    return None


def pool_start(n: int, pool_reset: int) -> int:
    """The first iteration whose n-best lists iteration ``n``'s store holds: 1, or with
    ``pool_reset`` R > 0 (the store starts afresh every R iterations) 1, R + 1, 2R + 1, ..."""
    return 1 + ((n - 1) // pool_reset) * pool_reset if pool_reset > 0 else 1


def same_run_so_far(old: dict, new: dict, completed: int) -> list[str]:
    """The settings in which two fingerprints differ such that a resume would not continue
    the same run. ``pool_reset`` may change while no store reset of either value has
    happened yet (``completed`` <= both, 0 meaning never): the iterations done are the ones
    the new value would have made, so a 10-iteration run can go on with ``--pool-reset 10``."""
    changed = sorted(k for k in {**old, **new} if old.get(k) != new.get(k))
    if changed == ["pool_reset"]:
        horizon = min(r if r > 0 else completed for r in (old.get("pool_reset", 0), new.get("pool_reset", 0)))
        if completed <= horizon:
            return []
    return changed


def rebuild_store(state: dict, workdir: str, empty: Callable, why: str, log: Callable[[str], None],
                  pool_reset: int = 0, references=None) -> dict:
    """Rebuild the newest completed iteration's store from the kept n-best lists of the
    iterations it pools (:func:`pool_start` .. completed), merged one iteration at a time
    (each step saved and read back, as the loop does, so the arrays are identical);
    ``empty()`` is an empty NbestCorpus of the run, ``references`` its References (for
    stores that do not keep theirs: :meth:`mtplug.corpus.NbestCorpus.load`). Returns the state with the new store's
    record (the caller writes it).
    InputError when a list is missing or the rebuilt store does not hold the hypotheses
    the history counted."""
    from ..corpus import NbestCorpus

    completed = state["completed"]
    store_path = os.path.join(_iteration_dir(workdir, completed), STORE)
    first = pool_start(completed, pool_reset)
    lists = [os.path.join(_iteration_dir(workdir, n), NBEST) for n in range(first, completed + 1)]
    missing = [p for p in lists if not os.path.isfile(p)]
    if missing:
        raise InputError(f"{why}, and it cannot be rebuilt: {missing[0]} is missing", store_path)
    log(f"{store_path}: {why}; rebuilding it from the n-best lists of iterations {first}-{completed}")
    corpus = empty()
    scratch = store_path + ".rebuild.npz"
    try:
        for n, nbest in enumerate(lists, first):
            added = corpus.add_nbest([nbest])
            corpus.save(scratch)
            corpus = NbestCorpus.load(scratch, references)
            entry = state["history"][n - 1]
            if (added, corpus.n_hypotheses) != (entry["new"], entry["hypotheses"]):
                raise InputError(f"{why}, and the n-best lists kept do not rebuild it: iteration {n} adds {added} "
                                 f"hypotheses ({corpus.n_hypotheses} in all) where the state counted "
                                 f"{entry['new']} ({entry['hypotheses']})", nbest)
        os.replace(scratch, store_path)
    finally:
        if os.path.exists(scratch):
            os.remove(scratch)
    return {**state, "store": store_record(store_path)}
