"""BLEU from sufficient statistics: def wrappers over the nogil kernels of ``_bleu.pxd``.

Compiled as ``mtplug._ext._bleu``; the Python API is ``mtplug.metrics.bleu``. The
formulas of every sentence-level variant, with their sources, are documented in
``pyx/_bleu.pxd`` and in ``mtplug.metrics.bleu.sentence_bleu``. The wrappers check array
shapes once per call (not per element) so that a wrong shape cannot read out of bounds;
values and variant codes are validated in Python.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t

from _bleu cimport (
    BLEU_N_STATS, BLEU_ORDER, VARIANT_BLEU, VARIANT_BLEU_PLUS_ONE, VARIANT_FIXED_STUPID,
    VARIANT_MOSES_SENTENCE_BLEU, VARIANT_NAKOV, VARIANT_STUPID, add_row, log_bleu,
    log_brevity, sentence_bleu, sentence_log_bleu,
)

#: variant name -> code, taken from the C enum; mtplug.metrics.bleu mirrors it
VARIANT_CODES = {
    "bleu": VARIANT_BLEU,
    "bleu+1": VARIANT_BLEU_PLUS_ONE,
    "moses-sentence-bleu": VARIANT_MOSES_SENTENCE_BLEU,
    "nakov": VARIANT_NAKOV,
    "stupid": VARIANT_STUPID,
    "fixed-stupid": VARIANT_FIXED_STUPID,
}
N_STATS = BLEU_N_STATS
ORDER = BLEU_ORDER


def sentence_bleu_rows(const int32_t[:, ::1] stats, double ref_divisor, int variant,
                       double[::1] out, int n_threads=1):
    """out[i] = sentence BLEU (0..1) of stats row i under the variant code.

    stats: int32 [n_rows, 9], C-contiguous; ref_divisor: > 0; out: float64 [n_rows],
    C-contiguous, filled in place. Rows are split over n_threads OpenMP threads (static
    schedule); each writes only out[i], so the result does not depend on it. Returns None.
    """
    cdef Py_ssize_t i, n_rows = stats.shape[0]
    cdef int T = n_threads if n_threads > 1 else 1
    if stats.shape[1] != BLEU_N_STATS:
        raise ValueError(f"stats must have {BLEU_N_STATS} columns, got {stats.shape[1]}")
    if out.shape[0] != n_rows:
        raise ValueError(f"out has {out.shape[0]} entries for {n_rows} stats rows")
    if T > n_rows:
        T = n_rows if n_rows > 0 else 1
    with nogil:
        for i in prange(n_rows, num_threads=T, schedule="static"):
            out[i] = sentence_bleu(&stats[i, 0], ref_divisor, variant)


def corpus_log_bleu(const int64_t[::1] totals, double ref_divisor):
    """Log corpus BLEU (float; -inf for BLEU 0) of summed stats: int64 [9], C-contiguous."""
    cdef double result
    if totals.shape[0] != BLEU_N_STATS:
        raise ValueError(f"totals must have {BLEU_N_STATS} entries, got {totals.shape[0]}")
    with nogil:
        result = log_bleu(&totals[0], ref_divisor)
    return result


def add_rows(const int32_t[:, ::1] stats, int64_t sign, int64_t[::1] out):
    """out += sign * (column sums of stats), through the cdef add_row.

    stats: int32 [n_rows, 9]; sign: +1 or -1; out: int64 [9], updated in place.
    """
    cdef Py_ssize_t i, n_rows = stats.shape[0]
    if stats.shape[1] != BLEU_N_STATS or out.shape[0] != BLEU_N_STATS:
        raise ValueError(f"stats rows and out must have {BLEU_N_STATS} entries")
    with nogil:
        for i in range(n_rows):
            add_row(&out[0], &stats[i, 0], sign)


def py_sentence_log_bleu(const int32_t[::1] row, double ref_divisor, int variant):
    """Test hook: sentence_log_bleu of one int32 [9] row (float; -inf for BLEU 0)."""
    if row.shape[0] != BLEU_N_STATS:
        raise ValueError(f"row must have {BLEU_N_STATS} entries, got {row.shape[0]}")
    return sentence_log_bleu(&row[0], ref_divisor, variant)


def py_log_brevity(double hyp_len, double ref_len):
    """Test hook: log brevity penalty min(0, 1 - ref_len / hyp_len) with its edge cases."""
    return log_brevity(hyp_len, ref_len)
