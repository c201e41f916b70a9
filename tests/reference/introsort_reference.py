"""libstdc++'s std::sort in plain Python: the oracle for pyx/_introsort.pyx.

A line-by-line transcription of bits/stl_algo.h and bits/stl_heap.h (GCC) for sorting the
positions 0..n-1 with the comparator ``keys[a] > keys[b]``; list slices stand for the
iterator ranges.
"""

from __future__ import annotations


def sort_descending(keys) -> list[int]:
    """The permutation std::sort(begin, end, [](a, b) { return a > b; }) gives."""
    a = list(range(len(keys)))
    n = len(a)

    def comp(x, y):
        return keys[x] > keys[y]

    def adjust_heap(first, hole, length, value):
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if comp(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2                     # __push_heap
        while hole > top and comp(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first, last):                      # partial_sort(first, last, last)
        length = last - first
        if length >= 2:
            for parent in range((length - 2) // 2, -1, -1):
                adjust_heap(first, parent, length, a[first + parent])
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def swap(i, j):
        a[i], a[j] = a[j], a[i]

    def move_median_to_first(result, x, y, z):
        if comp(a[x], a[y]):
            if comp(a[y], a[z]):
                swap(result, y)
            elif comp(a[x], a[z]):
                swap(result, z)
            else:
                swap(result, x)
        elif comp(a[x], a[z]):
            swap(result, x)
        elif comp(a[y], a[z]):
            swap(result, z)
        else:
            swap(result, y)

    def unguarded_partition(first, last, pivot):
        while True:
            while comp(a[first], a[pivot]):
                first += 1
            last -= 1
            while comp(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def introsort_loop(first, last, depth):
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            move_median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = unguarded_partition(first + 1, last, first)
            introsort_loop(cut, last, depth)
            last = cut

    def unguarded_linear_insert(last):
        val = a[last]
        while comp(val, a[last - 1]):
            a[last] = a[last - 1]
            last -= 1
        a[last] = val

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            if comp(a[i], a[first]):
                a[first:i + 1] = [a[i]] + a[first:i]
            else:
                unguarded_linear_insert(i)

    if n > 1:
        introsort_loop(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                unguarded_linear_insert(i)
        else:
            insertion_sort(0, n)
    return a
