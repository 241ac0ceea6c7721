"""CRC-32 and Adler-32 in Python answer as zlib does (the sandbox's job folders keep their names)."""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from store.base import checksums


@given(data=st.binary(max_size=300), value=st.integers(0, 2**32 - 1))
def test_crc32_is_zlibs(data: bytes, value: int) -> None:
    assert checksums.crc32(data) == zlib.crc32(data)
    assert checksums.crc32(data, value) == zlib.crc32(data, value)


@given(data=st.binary(max_size=300), value=st.integers(0, 2**32 - 1))
def test_adler32_is_zlibs(data: bytes, value: int) -> None:
    assert checksums.adler32(data) == zlib.adler32(data)
    assert checksums.adler32(data, value) == zlib.adler32(data, value)


def test_start_values_out_of_range_are_reduced_as_zlib_reduces_them() -> None:
    for value in (65521, 65535, 65521 << 16, 0xFFFFFFFF):
        for data in (b"", b"x", b"xy" * 20):
            assert checksums.adler32(data, value) == zlib.adler32(data, value), (data, value)


def test_a_long_input_wraps_the_sums_as_zlib_does() -> None:
    data = b"\xff" * 70_000  # past Adler-32's modulus many times over
    assert (checksums.crc32(data), checksums.adler32(data)) == (zlib.crc32(data), zlib.adler32(data))
