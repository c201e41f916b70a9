"""Moses's TER (``extractor --sctype TER``) the slow, obvious way, on strings.

Written from reading Moses 34452895's mert/TerScorer.cpp and its TERCpp library
(mert/TER/), in our own structure, not from the kernel (pyx/_moses_ter.pyx); whole
matrices of Python lists, shifts made by slicing, one reference at a time. The rules:

* TerScorer hands TERCpp the reference as the sentence to shift and the hypothesis as the
  fixed one, as text: each word is its Moses vocabulary id in decimal (ids count up from
  0 in the order words are first seen: every line of reference file 0, then file 1, ...,
  then the n-best lines). An empty sentence becomes one empty word.
* TERCpp finds runs of the hypothesis (1 to 11 words, every word one the reference has)
  by a 64-bit hash of their text, the ids joined with tabs (libstdc++'s
  ``collate<char>::hash``: rotate left by 7, add the next byte). Texts that collide share
  one list of start positions, and a run is "found" when its hash is there, so the ids
  change the result. A position whose run would end past the hypothesis's end + 1 makes
  TERCpp read outside its tables: Moses's extractor aborts there (we raise).
* Edit distance: columns are the (shifted) reference's positions j, rows the hypothesis's
  positions i; a column is scanned from the first row the previous column kept to the
  row after its last kept one, extended as cells are reached from above. A cell is
  skipped (before the last column) when its cost exceeds by more than 10 the cheapest
  diagonal step made into its column; ties keep the diagonal step, then the one from the
  left, then the one from above.
* Shift candidates of one round, in this order: reference start, end (runs of 1 to 10
  words that occur in the hypothesis), the run's occurrences in the hypothesis from the
  left, then the offsets -1 .. length-1; only the first 10 of the round are tried,
  longest runs first. Distances are limited to 25 words (with Moses's off-by-one on the
  first word). A shift costs 1 and is taken when it gains, or when it is the first to
  break even; rounds go on while one is taken.
* With several references the first one's result is kept unless a later one has a
  strictly smaller edits / average reference length (or the kept result is all zero).
"""

from __future__ import annotations

from mtplug.metrics.moses_scores_format import stored_values, ter_row

from .moses_error_rates_reference import tokens

BEAM = 10            # how far above the column's best diagonal step a cell may cost
MAX_RUN = 10         # words moved at once
MAX_DIST = 25        # how far a run may move
MAX_TRIES = 10       # candidate shifts tried per round
PHRASE_MAX = 11      # the longest runs the phrase index holds
UNSET = None

MATCH, SUB, REF_STEP, HYP_STEP = "A", "S", "I", "D"   # REF_STEP: a reference word alone


class TercppAbort(Exception):
    """Where Moses's TERCpp reads outside a table and its extractor stops."""


def moses_vocabulary(refsets: list[list[str]], hyps: list[str], lowercase: bool = False) -> dict[bytes, int]:
    """Moses's ids of every token: in order of first sight over reference k of every
    sentence for k = 0, 1, ... (file by file), then over the hypotheses in order."""
    vocab: dict[bytes, int] = {}
    for k in range(max((len(r) for r in refsets), default=0)):
        for refs in refsets:
            if k < len(refs):
                for t in tokens(refs[k], lowercase):
                    vocab.setdefault(t, len(vocab))
    for h in hyps:
        for t in tokens(h, lowercase):
            vocab.setdefault(t, len(vocab))
    return vocab


def ter_words(line: str, vocab: dict[bytes, int], lowercase: bool = False) -> list[str]:
    """TERCpp's words of a sentence: Moses's ids as decimal text, or one empty word for none."""
    return [str(vocab[t]) for t in tokens(line, lowercase)] or [""]


def text_hash(text: str) -> int:
    """libstdc++'s collate<char>::hash of ASCII text, as an unsigned 64-bit number."""
    h = 0
    for byte in text.encode("ascii"):
        h = (byte + (((h << 7) | (h >> 57)) & 0xFFFFFFFFFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
    return h


def run_key(words: list[str]) -> int:
    return text_hash("\t".join(words))


def phrase_index(ref: list, hyp: list) -> dict[int, list[int]]:
    """Hash of the text of every run (1..11 words) of the hypothesis made only of words the
    reference has -> the start positions of the runs with that hash, in the order found
    (increasing; a position twice when two of its runs collide)."""
    ref_keys = {run_key([w]) for w in ref}        # a hashed set as well (exact below 10^9 ids)
    in_ref = [run_key([w]) in ref_keys for w in hyp]
    index: dict[int, list[int]] = {}
    for start in range(len(hyp)):
        end = start
        while end < len(hyp) and end - start < PHRASE_MAX and in_ref[end]:
            index.setdefault(run_key(hyp[start:end + 1]), []).append(start)
            end += 1
    return index


def edit_table(ref: list, hyp: list) -> tuple[int, list[str]]:
    """The beam-limited edit distance of ``ref`` (columns) against ``hyp`` (rows) and the
    steps of the path into the last cell, first step first."""
    n_ref, n_hyp = len(ref), len(hyp)
    cost = [[UNSET] * (n_ref + 1) for _ in range(n_hyp + 1)]
    step = [[UNSET] * (n_ref + 1) for _ in range(n_hyp + 1)]
    cost[0][0] = 0
    best_in = 99999               # the cheapest diagonal step into the next column
    first_kept, after_last_kept = 0, 0
    for j in range(n_ref + 1):
        best_here, best_in = best_in, 99999
        lo, hi = first_kept, after_last_kept
        first_kept, after_last_kept = None, None
        i = lo
        while i <= n_hyp and i <= hi:
            c = cost[i][j]
            if c is UNSET or (j < n_ref and c > best_here + BEAM):
                i += 1
                continue
            if first_kept is None:
                first_kept = i
            if i < n_hyp and j < n_ref:
                d = c if hyp[i] == ref[j] else c + 1
                old = cost[i + 1][j + 1]
                if old is UNSET or d < old:
                    cost[i + 1][j + 1] = d
                    step[i + 1][j + 1] = MATCH if hyp[i] == ref[j] else SUB
                # a match counts towards the column's best even when it did not improve the cell
                if hyp[i] == ref[j] or old is UNSET or d < old:
                    best_in = min(best_in, d)
            after_last_kept = i + 1
            if j < n_ref and (cost[i][j + 1] is UNSET or cost[i][j + 1] > c + 1):
                cost[i][j + 1] = c + 1
                step[i][j + 1] = REF_STEP
            if i < n_hyp and (cost[i + 1][j] is UNSET or cost[i + 1][j] > c + 1):
                cost[i + 1][j] = c + 1
                step[i + 1][j] = HYP_STEP
                hi = max(hi, i + 1)
            i += 1
    path = []
    i, j = n_hyp, n_ref
    while i > 0 or j > 0:
        s = step[i][j]
        path.append(s)
        if s in (MATCH, SUB):
            i, j = i - 1, j - 1
        elif s == HYP_STEP:
            i -= 1
        else:
            j -= 1
    return cost[n_hyp][n_ref], path[::-1]


def error_marks(path: list[str], n_ref: int, n_hyp: int):
    """From a path: which reference and hypothesis words are not matched, and for every
    hypothesis word the reference position it faces (the next one for a lone word)."""
    ref_err, hyp_err, faces = [False] * (n_ref + 1), [False] * (n_hyp + 1), [-1] * (n_hyp + 1)
    j = i = -1
    for s in path:
        if s in (MATCH, SUB):
            j, i = j + 1, i + 1
            ref_err[j] = hyp_err[i] = s == SUB
            faces[i] = j
        elif s == REF_STEP:
            j += 1
            ref_err[j] = True
        else:
            i += 1
            hyp_err[i] = True
            faces[i] = j + 1
    return ref_err, hyp_err, faces


def candidate_shifts(cur: list, hyp_len: int, index: dict, ref_err, hyp_err, faces) -> list[tuple[int, int, int]]:
    """(start, end, destination) of the round's shifts, in the order they are generated,
    the first MAX_TRIES only (the rest are generated all the same: one may abort)."""
    out: list[tuple[int, int, int]] = []
    for start in range(len(cur)):
        spots = index.get(run_key(cur[start:start + 1]), [])
        if not any(faces[p] != start and faces[p] - start <= MAX_DIST and start - faces[p] - 1 <= MAX_DIST
                   for p in spots):
            continue
        end = start
        extend = True
        while extend and end < len(cur) and end < start + MAX_RUN:
            extend = False
            run = cur[start:end + 1]
            if run_key(run) in index:
                if not any(ref_err[start:end + 1]):
                    extend = True
                else:
                    for p in index[run_key(run)]:
                        f = faces[p]
                        if f == start or start <= f <= end or f - start > MAX_DIST or start - f > MAX_DIST:
                            continue
                        extend = True
                        # the tables hold one entry past the hypothesis (unmatched, facing -1)
                        if p + len(run) - 1 > hyp_len:
                            raise TercppAbort(f"a run of {len(run)} words found at {p} of {hyp_len}")
                        if not any(hyp_err[p:p + len(run)]):
                            continue
                        for off in range(-1, len(run)):
                            if off == -1 and p == 0:
                                out.append((start, end, -1))
                            elif faces[p + off] != start and (off == 0 or faces[p + off] != faces[p]):
                                out.append((start, end, faces[p + off]))
            end += 1
    return out[:MAX_TRIES]


def shifted(words: list, start: int, end: int, dest: int) -> list:
    """words with words[start..end] moved: to the front (dest -1), before position dest
    (dest < start), after position dest (dest > end, the last position when dest is past
    the end), or, for a dest inside the run, dest - start places to the right."""
    run = words[start:end + 1]
    dest = min(dest, len(words) - 1)
    if dest == -1:
        return run + words[:start] + words[end + 1:]
    if dest < start:
        return words[:dest] + run + words[dest:start] + words[end + 1:]
    if dest > end:
        return words[:start] + words[end + 1:dest + 1] + run + words[dest + 1:]
    k = end + dest - start
    return words[:start] + words[end + 1:k + 1] + run + words[k + 1:]


def ter_pair(ref: list, hyp: list) -> int:
    """TERCpp's edits (shifts + edit distance) turning ``ref`` into ``hyp`` (word lists,
    both non-empty)."""
    index = phrase_index(ref, hyp)
    cur = list(ref)
    edits, path = edit_table(cur, hyp)
    shifts = 0
    while True:
        ref_err, hyp_err, faces = error_marks(path, len(cur), len(hyp))
        tries = candidate_shifts(cur, len(hyp), index, ref_err, hyp_err, faces)
        best = None                      # (words, edits, path) of the shift kept so far
        best_total, best_cost = edits, 0
        for length in range(MAX_RUN + 1, 0, -1):
            # no shorter shift can beat what is kept
            fixed = edits - best_total
            if fixed > 2 * length or (best_cost and fixed == 2 * length):
                break
            for start, end, dest in tries:
                if end - start + 1 != length:
                    continue
                fixed = edits - best_total
                if fixed > 2 * length or (best_cost and fixed == 2 * length):
                    break
                words = shifted(cur, start, end, dest)
                e, p = edit_table(words, hyp)
                gain = best_total - (e + 1)
                if gain > 0 or (best_cost == 0 and gain == 0):
                    best, best_total, best_cost = (words, e, p), e + 1, 1
        if best is None:
            return edits + shifts
        cur, edits, path = best
        shifts += 1


def ter_edits(hyp: str, refs: list[str], vocab: dict[bytes, int], lowercase: bool = False) -> tuple[float, float]:
    """(edits, average reference length) of the result TerScorer keeps."""
    words = ter_words(hyp, vocab, lowercase)
    average = sum(float(len(tokens(r, lowercase))) for r in refs) / float(len(refs))
    kept = (0.0, 0.0)
    for r in refs:
        result = (float(ter_pair(ter_words(r, vocab, lowercase), words)), average)
        if kept == (0.0, 0.0) or score_av(*kept) > score_av(*result):
            kept = result
    return kept


def score_av(edits: float, average: float) -> float:
    if average <= 0.0:
        return 1.0 if edits > 0.0 else 0.0
    return edits / average


def ter_stats(hyp: str, refs: list[str], lowercase: bool = False, vocab: dict[bytes, int] | None = None) -> list[int]:
    """The three numbers Moses stores for a hypothesis: atoi of ``%g`` of edits x 100,
    average reference length x 100 and TER x 100. vocab: Moses's ids (moses_vocabulary);
    by default those of an extractor run on this one sentence."""
    if vocab is None:
        vocab = moses_vocabulary([refs], [hyp], lowercase)
    return [int(v) for v in stored_values(ter_row(*ter_edits(hyp, refs, vocab, lowercase)), "TER")]


def ter_score(row) -> float:
    """TerScorer::calculateScore: 1 - edits / length with float operands, a float
    quotient and a double sum rounded to float; 1 when the length is 0."""
    import numpy as np

    edits, length = np.float32(row[0]), np.float32(row[1])
    if length == 0:
        return 1.0
    return float(np.float32(1.0 + float(np.float32(-edits / length))))
