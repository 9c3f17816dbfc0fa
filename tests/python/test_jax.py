"""JAX arrays through DLPack: opkit.sha256 of a JAX array is a JAX array equal to hashlib's
digests, and JAX's 32-bit offsets (its default without jax_enable_x64) are accepted on the host.
Skips without JAX; JAX arrays on a GPU follow the same path as CuPy's and PyTorch's."""

import numpy as np
import pytest

import opkit
from conftest import hashlib_digests

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def test_jax_rows_give_a_jax_array_equal_to_hashlib(rng):
    host = rng.integers(0, 256, size=(500, 77), dtype=np.uint8)
    out = opkit.sha256(jnp.asarray(host), device="cpu")
    assert isinstance(out, jax.Array) and out.shape == (500, 32) and out.dtype == jnp.uint8
    np.testing.assert_array_equal(np.asarray(out), hashlib_digests(host))


def test_jax_data_with_32_bit_offsets(rng):
    data = rng.integers(0, 256, size=3000, dtype=np.uint8)
    cuts = np.sort(rng.integers(0, 3000, size=41))
    offsets = jnp.asarray(cuts.astype(np.int32))
    assert offsets.dtype == jnp.int32
    out = opkit.sha256d(jnp.asarray(data), offsets=offsets, device="cpu")
    expected = hashlib_digests([data[cuts[i] : cuts[i + 1]] for i in range(40)], True)
    np.testing.assert_array_equal(np.asarray(out), expected)
