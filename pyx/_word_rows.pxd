# Per-word rows (characters, tokens) of word-id text: what the text-metric kernels
# (pyx/_chrf.pyx, pyx/_ter.pyx) share. Inline, as pyx/_bleu.pxd explains.

from libc.stdint cimport int32_t, int64_t


cdef inline Py_ssize_t gather(const int64_t* w_ptr, const int32_t* w_data, const int32_t* words,
                              Py_ssize_t n_words, int32_t* out) noexcept nogil:
    """Concatenate the rows w_data[w_ptr[w]:w_ptr[w + 1]] of the words ``words[:n_words]``
    into ``out`` (large enough); returns how many were written."""
    cdef Py_ssize_t k, i, n = 0
    cdef int32_t w
    for k in range(n_words):
        w = words[k]
        for i in range(w_ptr[w], w_ptr[w + 1]):
            out[n] = w_data[i]
            n += 1
    return n
