"""JAX arrays through DLPack: opkit.sha256 of a JAX array is a JAX array equal to hashlib's
digests, on the host and on a GPU, and JAX's 32-bit offsets (its default without
jax_enable_x64, where asking for int64 silently gives int32) are accepted on both. Skips without
JAX; the GPU tests skip where JAX has no GPU."""

import numpy as np
import pytest

import opkit
from conftest import hashlib_digests

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _jax_gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:  # JAX without a GPU backend
        return []


requires_jax_gpu = pytest.mark.skipif(not _jax_gpus(), reason="JAX has no GPU here (jax.devices('gpu') is empty)")


def on_host(x):
    # jnp.asarray places arrays on JAX's default device, which is the GPU where JAX has one.
    return jax.device_put(x, jax.devices("cpu")[0])


def on_gpu(x):
    return jax.device_put(x, _jax_gpus()[0])


def random_cuts(rng, size, count):
    return np.sort(rng.integers(0, size, size=count + 1))


def test_jax_rows_give_a_jax_array_equal_to_hashlib(rng):
    host = rng.integers(0, 256, size=(500, 77), dtype=np.uint8)
    out = opkit.sha256(on_host(host), device="host")
    assert isinstance(out, jax.Array) and out.shape == (500, 32) and out.dtype == jnp.uint8
    np.testing.assert_array_equal(np.asarray(out), hashlib_digests(host))


def test_jax_data_with_32_bit_offsets(rng):
    data = rng.integers(0, 256, size=3000, dtype=np.uint8)
    cuts = random_cuts(rng, 3000, 40)
    offsets = on_host(cuts.astype(np.int32))
    assert offsets.dtype == jnp.int32
    out = opkit.sha256d(on_host(data), offsets=offsets, device="host")
    expected = hashlib_digests([data[cuts[i] : cuts[i + 1]] for i in range(40)], True)
    np.testing.assert_array_equal(np.asarray(out), expected)


@requires_jax_gpu
def test_jax_gpu_rows_stay_on_the_gpu(rng):
    host = rng.integers(0, 256, size=(3000, 32), dtype=np.uint8)
    out = opkit.sha256(on_gpu(host))
    assert isinstance(out, jax.Array) and out.shape == (3000, 32)
    assert out.devices() == {_jax_gpus()[0]}
    np.testing.assert_array_equal(np.asarray(out), hashlib_digests(host))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@requires_jax_gpu
def test_jax_gpu_data_with_32_bit_offsets_is_widened_on_the_gpu(rng, dtype):
    data = rng.integers(0, 256, size=20000, dtype=np.uint8)
    cuts = random_cuts(rng, 20000, 300)
    out = opkit.sha256(on_gpu(data), offsets=on_gpu(cuts.astype(dtype)))
    assert out.devices() == {_jax_gpus()[0]}
    expected = hashlib_digests([data[cuts[i] : cuts[i + 1]] for i in range(300)])
    np.testing.assert_array_equal(np.asarray(out), expected)


@requires_jax_gpu
def test_jax_gpu_negative_32_bit_offset_is_reported_by_message_index(rng):
    data = rng.integers(0, 256, size=100, dtype=np.uint8)
    offsets = np.array([0, 10, -5, 40], dtype=np.int32)
    with pytest.raises(opkit.Error, match="message 1 "):
        opkit.sha256(on_gpu(data), offsets=on_gpu(offsets))
