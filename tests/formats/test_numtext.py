"""pyx/_numtext.pxd's number text against the C library's and Python's: ``%g`` of float32
and float64 values and ``%d`` of int32 (through _textio.format_rows), and strtod's reading
of a feature value (through _textio.parse_number), which the fast paths must give byte for
byte and bit for bit."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mtplug._ext import _textio

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.strtod.restype = ctypes.c_double
_libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]


def strtod_all(text: bytes):
    """The C library's strtod of ``text`` when it reads all of it, else None (the reference)."""
    buf = ctypes.create_string_buffer(text, len(text) + 1)
    end = ctypes.c_char_p()
    value = _libc.strtod(buf, ctypes.byref(end))
    used = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)
    return value if text and used == len(text) else None


def bits(x):
    return None if x is None else struct.pack("<d", x)


def g32(x: float) -> bytes:
    return _textio.format_rows(np.array([[x]], dtype=np.float64), True)[0]


def g64(x: float) -> bytes:
    return _textio.format_rows(np.array([[x]], dtype=np.float64), False)[0]


# values where six significant digits round exactly half-way, at the decade edges, tiny and huge
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 1.5e-5, 0.0001, 0.00001234565, 999999.5, 9999995.0, 1234565.0,
         123456.5, 100000.0, 999999.0, 1e6, 1e22, 1e23, 1e-22, 1e-23, 5e-324, 2.2250738585072014e-308,
         1.7976931348623157e308, 1.401298464324817e-45, 3.4028234663852886e38, float("inf"), float("-inf")]


@pytest.mark.parametrize("x", EDGES)
def test_edges_print_as_printf_does(x):
    assert g64(x) == (f"{x:g} ").encode()
    with np.errstate(over="ignore"):
        assert g32(x) == (f"{float(np.float32(x)):g} ").encode()


@settings(max_examples=500, deadline=None)
@given(st.floats(width=32, allow_nan=False))
def test_float32_values_print_as_printf_does(x):
    """Every float32, subnormals and infinities included (what features.dat holds)."""
    assert g32(x) == (f"{x:g} ").encode()


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.floats(allow_nan=False), st.integers(-10**20, 10**20).map(float),
                 st.tuples(st.integers(100000, 999999), st.integers(-30, 30)).map(lambda t: (t[0] + 0.5) * 10.0 ** t[1])))
def test_float64_values_print_as_printf_does(x):
    """Doubles: large exponents, integers and values near a rounding tie of the sixth digit."""
    assert g64(x) == (f"{x:g} ").encode()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=9))
def test_int32_values_print_as_printf_does(row):
    assert _textio.format_rows(np.array([row], dtype=np.int32))[0] == "".join(f"{v} " for v in row).encode()


NUMBER = r"\A[+-]?[0-9]{0,24}(\.[0-9]{0,24})?([eE][+-]?[0-9]{0,6})?\Z"


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    st.from_regex(NUMBER),
    st.floats(allow_nan=False).flatmap(lambda x: st.sampled_from([repr(x), f"{x:g}", f"{x:.17g}", f"{x:e}"])),
    st.text("0123456789+-.eExXpinfaINFA\v", max_size=14),
).map(lambda s: s.encode()))
@example(b"1e")
@example(b"1e+")
@example(b".")
@example(b"-")
@example(b"0x1p3")
@example(b"12345678901234567890")
@example(b"9007199254740993")
@example(b"1e22")
@example(b"1e23")
@example(b"00000000000000000000001.5")
@example(b"\x0b5")
@example(b"1\x002")
def test_parse_number_is_strtod(text):
    """The n-best reader's feature values: strtod's value whenever strtod reads all the text,
    None otherwise (and nothing longer than 62 bytes, as the reader has always had it)."""
    want = strtod_all(text) if len(text) <= 62 else None
    assert bits(_textio.parse_number(text)) == bits(want)
