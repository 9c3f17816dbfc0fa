"""opkit.sha256 / sha256d on host data (NumPy, sequences of bytes), against hashlib on fresh random
inputs; runs everywhere (the GPU when there is one, else OpenSSL), and with device='host' (OpenSSL)."""

import hashlib

import numpy as np
import pytest

import opkit
from conftest import hashlib_digests


# Lengths around SHA-256's block and padding boundaries (55/56: one or two tail blocks).
BOUNDARY_LENGTHS = [0, 1, 3, 4, 31, 32, 33, 55, 56, 63, 64, 65, 80, 119, 120, 128, 129]


def _check_lengths(rng, lengths, device, double):
    fn = opkit.sha256d if double else opkit.sha256
    for length in lengths:
        rows = rng.integers(0, 256, size=(int(rng.integers(1, 9)), length), dtype=np.uint8)
        got = fn(rows, device=device)
        assert isinstance(got, np.ndarray) and got.dtype == np.uint8 and got.shape == (len(rows), 32)
        np.testing.assert_array_equal(got, hashlib_digests(rows, double), err_msg=f"length {length}")


@pytest.mark.parametrize("double", [False, True])
def test_host_cpu_rows_of_every_length_0_to_300_match_hashlib(rng, double):
    _check_lengths(rng, range(0, 301), "host", double)


@pytest.mark.parametrize("double", [False, True])
def test_default_device_rows_at_block_boundaries_match_hashlib(rng, double):
    # The default device is the GPU where there is one: each length compiles its own kernel.
    _check_lengths(rng, BOUNDARY_LENGTHS, None, double)


def test_many_rows_of_32_bytes_match_hashlib(rng):
    rows = rng.integers(0, 256, size=(20000, 32), dtype=np.uint8)
    np.testing.assert_array_equal(opkit.sha256(rows), hashlib_digests(rows))


def test_long_messages_match_hashlib(rng):
    rows = rng.integers(0, 256, size=(3, 70000), dtype=np.uint8)
    np.testing.assert_array_equal(opkit.sha256(rows), hashlib_digests(rows))


def test_sequence_of_bytes_of_mixed_lengths_matches_hashlib(rng):
    messages = [rng.bytes(int(n)) for n in rng.integers(0, 300, size=200)] + [b"", b"abc"]
    got = opkit.sha256(messages)
    assert got.shape == (len(messages), 32)
    for i, message in enumerate(messages):
        assert got[i].tobytes() == hashlib.sha256(message).digest()


def test_sequence_accepts_bytearray_and_memoryview():
    got = opkit.sha256d([bytearray(b"hello"), memoryview(b"world")])
    assert got[0].tobytes() == hashlib.sha256(hashlib.sha256(b"hello").digest()).digest()
    assert got[1].tobytes() == hashlib.sha256(hashlib.sha256(b"world").digest()).digest()


def test_flat_data_with_unaligned_offsets_matches_hashlib(rng):
    data = rng.integers(0, 256, size=5000, dtype=np.uint8)
    cuts = np.sort(rng.integers(0, 5000, size=41)).astype(np.uint64)
    got = opkit.sha256(data, offsets=cuts)
    assert got.shape == (40, 32)
    for i in range(40):
        assert got[i].tobytes() == hashlib.sha256(data[cuts[i] : cuts[i + 1]].tobytes()).digest()


def test_empty_batch_gives_0_by_32():
    assert opkit.sha256([]).shape == (0, 32)
    assert opkit.sha256(np.zeros((0, 16), dtype=np.uint8)).shape == (0, 32)


def test_batch_of_one_and_empty_message():
    assert opkit.sha256([b""])[0].tobytes() == hashlib.sha256(b"").digest()
    assert opkit.sha256(np.zeros((1, 0), dtype=np.uint8))[0].tobytes() == hashlib.sha256(b"").digest()


def test_read_only_and_int8_inputs_are_accepted(rng):
    rows = rng.integers(0, 256, size=(4, 40), dtype=np.uint8)
    frozen = rows.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(opkit.sha256(frozen), hashlib_digests(rows))
    np.testing.assert_array_equal(opkit.sha256(rows.view(np.int8)), hashlib_digests(rows))


def test_one_bytes_object_is_rejected_with_a_hint():
    with pytest.raises(TypeError, match=r"sha256\(\[data\]\)"):
        opkit.sha256(b"abc")


def test_str_message_is_rejected_with_a_hint():
    with pytest.raises(TypeError, match="encode"):
        opkit.sha256(["abc"])


def test_one_dimensional_array_is_rejected():
    with pytest.raises(opkit.Error, match=r"2-D \[N, L\]"):
        opkit.sha256(np.zeros(10, dtype=np.uint8))


def test_wrong_dtype_is_rejected():
    with pytest.raises(opkit.Error, match="expected int8 or uint8 elements, got float32"):
        opkit.sha256(np.zeros((2, 4), dtype=np.float32))


def test_non_contiguous_rows_are_rejected():
    rows = np.zeros((4, 64), dtype=np.uint8)[:, ::2]
    with pytest.raises(opkit.Error, match="C-contiguous"):
        opkit.sha256(rows)


def test_offsets_past_the_data_are_an_error():
    with pytest.raises(opkit.Error):
        opkit.sha256(np.zeros(10, dtype=np.uint8), offsets=[0, 5, 11])
