"""The libstdc++ std::sort permutation (pyx/_introsort.pyx) against the slow transcription
and, where g++ is installed, against std::sort itself."""

from __future__ import annotations

import random
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _introsort
from tests.reference.introsort_reference import sort_descending as reference

STD_SORT_PROGRAM = r"""
#include <algorithm>
#include <cstdio>
#include <vector>
struct H { double s; int i; };
static bool cmp(H a, H b) { return a.s > b.s; }   // dtrain's cmp_hyp_by_score_d
int main() {
  int n;
  while (std::scanf("%d", &n) == 1) {
    std::vector<H> v(n);
    for (int i = 0; i < n; i++) { std::scanf("%lf", &v[i].s); v[i].i = i; }
    std::sort(v.begin(), v.end(), cmp);
    for (int i = 0; i < n; i++) std::printf("%d ", v[i].i);
    std::printf("\n");
  }
}
"""


def kernel(keys) -> list[int]:
    order = np.empty(len(keys), dtype=np.int64)
    _introsort.sort_descending(np.asarray(keys, dtype=np.float64), order)
    return order.tolist()


def shapes(rng: random.Random) -> list[list[float]]:
    """Inputs that take introsort down its different paths: random with many or few ties,
    sorted, reversed, organ pipe, sawtooth, all equal."""
    out = []
    for n in (0, 1, 2, 3, 15, 16, 17, 18, 31, 33, 64, 100, 257, 1000):
        for levels in (1, 2, 5, 100, 10**9):
            x = [rng.randint(0, levels) / levels for _ in range(n)]
            out += [x, sorted(x), sorted(x, reverse=True)]
        out.append([min(i, n - i) for i in range(n)])
        out.append([i % 7 for i in range(n)])
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=300))
def test_kernel_equals_the_transcription(levels):
    keys = [x / 6 for x in levels]
    assert kernel(keys) == reference(keys)


def test_kernel_equals_the_transcription_on_structured_inputs():
    for keys in shapes(random.Random(3)):
        assert kernel(keys) == reference(keys)


def test_a_permutation_sorted_descending():
    keys = np.random.default_rng(0).integers(0, 4, size=500) / 4
    order = kernel(keys)
    assert sorted(order) == list(range(500))
    assert (np.diff(keys[order]) <= 0).all()


def test_kernel_refuses_an_order_array_of_another_length():
    with pytest.raises(ValueError, match="order must have 3 entries"):
        _introsort.sort_descending(np.zeros(3), np.empty(2, dtype=np.int64))


def test_equals_std_sort(tmp_path):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found: cannot build a std::sort program to compare with")
    src = tmp_path / "sort.cc"
    src.write_text(STD_SORT_PROGRAM)
    subprocess.run([gxx, "-O2", "-o", str(tmp_path / "sort"), str(src)], check=True)
    cases = shapes(random.Random(11))
    text = "".join(f"{len(c)} " + " ".join(repr(float(x)) for x in c) + "\n" for c in cases)
    lines = subprocess.run([str(tmp_path / "sort")], input=text, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert len(lines) == len(cases)
    for keys, line in zip(cases, lines):
        assert kernel(keys) == [int(x) for x in line.split()]
