"""Every reader on mutated valid inputs: it reads them or raises InputError naming the file.

Bounded here (hypothesis, 60 inputs per reader); benchmarks/fuzz_readers.py runs 100,000+.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzz_readers import SAMPLES, Fuzzer, mutate


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory):
    return Fuzzer(str(tmp_path_factory.mktemp("fuzz")))


@pytest.mark.parametrize("reader", sorted(SAMPLES))
def test_valid_sample_reads(fuzzer, reader):
    assert fuzzer.check(reader, SAMPLES[reader]) == "read"


@pytest.mark.parametrize("reader", sorted(SAMPLES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_inputs(fuzzer, reader, seed):
    fuzzer.check(reader, mutate(SAMPLES[reader], random.Random(seed)))
