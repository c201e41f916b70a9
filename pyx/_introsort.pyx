# The permutation that GCC's libstdc++ std::sort gives for a descending sort of keys with
# the comparator `a > b` — what cdec's dtrain uses to rank a k-best list by per-sentence
# score (pairsampling.h cmp_hyp_by_score_d) and PRO pairs by score difference. std::sort is
# not stable: hypotheses with equal scores end up in an order that depends on the
# algorithm, and dtrain's XYX pairs depend on that order, so mtplug follows the algorithm
# step for step (bits/stl_algo.h, bits/stl_heap.h; unchanged from GCC 4.x to 14):
#
#   sort: introsort_loop(first, last, 2·floor(log2 n)), then final_insertion_sort;
#   introsort_loop: while more than 16 items: at depth 0 heap-sort the range (partial_sort
#     with middle = last) and return; else move the median of (first + 1, mid, last - 1)
#     to first, unguarded-partition (first + 1, last) around it, recurse on the right
#     part and loop on the left;
#   final_insertion_sort: insertion sort of the first 16, unguarded linear insertion of
#     the rest (or insertion sort of all when n <= 16).
#
# Keys are compared as doubles, as dtrain's score_t. NaN keys are the caller's to exclude
# (the comparator would not be a strict weak order). tests/reference/introsort_reference.py
# is the slow transcription; a test compares both with the real std::sort when g++ is there.

from libc.stdint cimport int64_t


cdef inline bint before(const double[::1] key, int64_t a, int64_t b) noexcept nogil:
    return key[a] > key[b]


cdef void adjust_heap(const double[::1] key, int64_t* a, Py_ssize_t hole, Py_ssize_t length,
                      int64_t value) noexcept nogil:
    cdef Py_ssize_t top = hole, child = hole, parent
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if before(key, a[child], a[child - 1]):
            child -= 1
        a[hole] = a[child]
        hole = child
    if (length & 1) == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[hole] = a[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and before(key, a[parent], value):
        a[hole] = a[parent]
        hole = parent
        parent = (hole - 1) // 2
    a[hole] = value


cdef void heap_sort(const double[::1] key, int64_t* a, Py_ssize_t n) noexcept nogil:
    """std::partial_sort(first, last, last): make_heap, then sort_heap."""
    cdef Py_ssize_t parent, last
    cdef int64_t value
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        adjust_heap(key, a, parent, n, a[parent])
        if parent == 0:
            break
        parent -= 1
    last = n
    while last > 1:
        last -= 1
        value = a[last]
        a[last] = a[0]
        adjust_heap(key, a, 0, last, value)


cdef inline void swap(int64_t* a, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef int64_t t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void move_median_to_first(const double[::1] key, int64_t* a, Py_ssize_t result, Py_ssize_t x,
                               Py_ssize_t y, Py_ssize_t z) noexcept nogil:
    if before(key, a[x], a[y]):
        if before(key, a[y], a[z]):
            swap(a, result, y)
        elif before(key, a[x], a[z]):
            swap(a, result, z)
        else:
            swap(a, result, x)
    elif before(key, a[x], a[z]):
        swap(a, result, x)
    elif before(key, a[y], a[z]):
        swap(a, result, z)
    else:
        swap(a, result, y)


cdef Py_ssize_t unguarded_partition(const double[::1] key, int64_t* a, Py_ssize_t first, Py_ssize_t last,
                                    Py_ssize_t pivot) noexcept nogil:
    while True:
        while before(key, a[first], a[pivot]):
            first += 1
        last -= 1
        while before(key, a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        swap(a, first, last)
        first += 1


cdef void introsort_loop(const double[::1] key, int64_t* a, Py_ssize_t first, Py_ssize_t last,
                         int depth) noexcept nogil:
    cdef Py_ssize_t cut
    while last - first > 16:
        if depth == 0:
            heap_sort(key, a + first, last - first)
            return
        depth -= 1
        move_median_to_first(key, a, first, first + 1, first + (last - first) // 2, last - 1)
        cut = unguarded_partition(key, a, first + 1, last, first)
        introsort_loop(key, a, cut, last, depth)
        last = cut


cdef inline void unguarded_linear_insert(const double[::1] key, int64_t* a, Py_ssize_t last) noexcept nogil:
    cdef int64_t val = a[last]
    cdef Py_ssize_t nxt = last - 1
    while before(key, val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


cdef void insertion_sort(const double[::1] key, int64_t* a, Py_ssize_t first, Py_ssize_t last) noexcept nogil:
    cdef Py_ssize_t i, m
    cdef int64_t val
    for i in range(first + 1, last):
        if before(key, a[i], a[first]):
            val = a[i]
            m = i
            while m > first:
                a[m] = a[m - 1]
                m -= 1
            a[first] = val
        else:
            unguarded_linear_insert(key, a, i)


def sort_descending(const double[::1] keys, int64_t[::1] order):
    """Write to ``order`` (int64 [n]) the positions 0..n-1 of ``keys`` (float64 [n], no NaN)
    in the order libstdc++'s std::sort with ``keys[a] > keys[b]`` leaves them."""
    cdef Py_ssize_t n = keys.shape[0], i
    cdef int depth = 0
    cdef int64_t* a
    if order.shape[0] != n:
        raise ValueError(f"order must have {n} entries, got {order.shape[0]}")
    a = &order[0] if n > 0 else NULL
    with nogil:
        for i in range(n):
            a[i] = i
        if n > 1:
            i = n
            while i > 1:               # floor(log2 n)
                i >>= 1
                depth += 1
            introsort_loop(keys, a, 0, n, 2 * depth)
            if n > 16:
                insertion_sort(keys, a, 0, 16)
                for i in range(16, n):
                    unguarded_linear_insert(keys, a, i)
            else:
                insertion_sort(keys, a, 0, n)
