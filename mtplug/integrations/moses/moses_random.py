"""Moses's random numbers, so that ``mert -r SEED -n N`` starts from Moses's own points.

Moses's ``mert`` seeds C's ``srand`` with ``-r`` (util/random.cc) and draws each of its
``-n`` random start points with ``util::rand_incl(min, max)`` per weight, in single
precision (mert/Point.cpp ``Point::Randomize``: ``min + (max - min) * rand() /
RAND_MAX``). :class:`GlibcRand` is glibc's ``rand()`` (the additive feedback generator
of ``random_r``, TYPE_3, RAND_MAX 2**31 - 1), the C library Moses is built with on
Linux; :func:`moses_start_points` draws the points as Moses does, so that mtplug's MERT,
which finds the same optimum as Moses's from the same start, also restarts from Moses's
points and reaches Moses's result (or better) rather than another random one.
"""

from __future__ import annotations

import numpy as np

RAND_MAX = 2**31 - 1


class GlibcRand:
    """glibc's ``srand(seed)`` then ``rand()``: :meth:`next` is the next value in
    [0, RAND_MAX], the sequence glibc gives for ``seed`` (an unsigned int; 0 acts as 1)."""

    def __init__(self, seed: int):
        seed &= 0xFFFFFFFF
        seed = seed - 2**32 if seed >= 2**31 else seed     # glibc keeps the state as int32
        r = [seed or 1]
        for i in range(1, 31):
            word = r[i - 1]
            hi = int(word / 127773)                         # C division truncates toward zero
            lo = word - hi * 127773
            word = 16807 * lo - 2836 * hi
            r.append(word + 2147483647 if word < 0 else word)
        r = [x & 0xFFFFFFFF for x in r]
        r += r[:3]                                          # r[31..33] = r[0..2]
        for i in range(34, 344):                            # glibc discards 310 outputs
            r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        self._r = r[-34:]                                   # enough for r[i - 31] and r[i - 3]

    def next(self) -> int:
        """The next ``rand()`` value, in [0, RAND_MAX]."""
        r = self._r
        value = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(value)
        del r[0]
        return value >> 1


def moses_start_points(seed: int, n: int, start: np.ndarray, mins: np.ndarray, maxs: np.ndarray) -> list[np.ndarray]:
    """Moses's ``n`` random start points after ``srand(seed)`` (module docstring): each
    weight ``min + (max - min) * rand() / RAND_MAX`` in single precision, weights in
    order, points in order. float64 [len(start)] each (the float32 values exactly)."""
    f32 = np.float32
    gen = GlibcRand(seed)
    lo = np.asarray(mins[: len(start)], dtype=np.float32)
    width = (np.asarray(maxs[: len(start)], dtype=np.float32) - lo).astype(np.float32)
    points = []
    for _ in range(n):
        point = np.empty(len(start), dtype=np.float64)
        for i in range(len(start)):
            point[i] = f32(lo[i] + f32(f32(width[i] * f32(gen.next())) / f32(RAND_MAX)))
        points.append(point)
    return points


def rand_mod_many(gen: GlibcRand, count: int, modulus: int) -> np.ndarray:
    """int64 [count]: ``rand() % modulus`` for the next ``count`` numbers of ``gen`` (which
    moves past them), as Moses's ``util::rand_excl(modulus)`` draws them; compiled
    (pyx/_glibc_rand.pyx) for the programs that draw millions."""
    from ..._ext import _glibc_rand

    state = np.array(gen._r, dtype=np.uint32)
    out = _glibc_rand.rand_mod(state, int(count), int(modulus))
    gen._r = [int(x) for x in state]
    return out
