"""Moses's duplicate removal (mert/Data.cpp removeDuplicates), written out plainly: the
reference for the compiled ``_rows.moses_duplicates``."""

from __future__ import annotations

import numpy as np


def moses_remove_duplicates(rows: list) -> list[int]:
    """``rows``: one sentence's rows in load order, each a hashable key (its features as
    32-bit floats and its statistics). Returns the positions (into ``rows``) that stay,
    in their final order: walking k from the front, a row equal to an earlier kept one
    trades places with the last row not yet dropped, is dropped, and position k is looked
    at again."""
    order = list(range(len(rows)))
    kept: set = set()
    k, end = 0, len(rows) - 1
    while k <= end:
        key = rows[order[k]]
        if key in kept:
            order[k], order[end] = order[end], order[k]
            end -= 1
        else:
            kept.add(key)
            k += 1
    return order[:end + 1]


def row_key(dense_row, sparse_ids, sparse_values, stats_row) -> tuple:
    """What Moses compares: features as 32-bit floats (dense, then sparse id/value pairs) and
    the statistics."""
    return (tuple(np.asarray(dense_row, np.float32).tolist()), tuple(int(i) for i in sparse_ids),
            tuple(np.asarray(sparse_values, np.float32).tolist()), tuple(int(x) for x in stats_row))
