"""opkit.mine on the CPU (and on every GPU where there is one): the lowest qualifying nonce, checked
with hashlib; real Bitcoin headers; bad input."""

import hashlib
import time

import pytest

import opkit
from conftest import requires_gpu

# Genesis block and block 1: header as serialized (nonce in the last 4 bytes), explorer hash.
GENESIS = (
    "0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3"
    "888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c",
    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
)
BLOCK_1 = (
    "010000006fe28c0ab6f1b372c1a6a246ae63f74f931e8365e15a089c68d6190000000000982051fd1e4ba744bbbe680e1fee14677ba1a3c3"
    "540bf7b1cdb606e857233e0e61bc6649ffff001d01e36299",
    "00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048",
)


def _leading_zero_bits(digest: bytes) -> int:
    value = int.from_bytes(digest, "big")
    return 256 - value.bit_length()


def _lowest_data_nonce(data: bytes, bits: int, start: int) -> int:
    nonce = start
    while _leading_zero_bits(hashlib.sha256(data + str(nonce).encode()).digest()) < bits:
        nonce += 1
    return nonce


@pytest.mark.parametrize("device", ["host", pytest.param("cuda", marks=requires_gpu)])
def test_data_mode_finds_the_lowest_nonce_hashlib_finds(device):
    for data, bits, start in [(b"hello", 12, 0), (b"x" * 70, 10, 5000), ("opkit tutorial", 11, 123)]:
        raw = data.encode() if isinstance(data, str) else data
        result = opkit.mine(data=data, difficulty=bits, start=start, device=device)
        expected = _lowest_data_nonce(raw, bits, start)
        assert result.found and result.nonce == expected
        digest = hashlib.sha256(raw + str(expected).encode()).digest()
        assert result.digest == digest and result.hash == digest.hex()
        assert result.hashes >= expected - start + 1 and not result.interrupted
        assert result.hashrate > 0 and result.engines


@pytest.mark.parametrize("device", ["host", pytest.param("cuda", marks=requires_gpu)])
@pytest.mark.parametrize("block", [GENESIS, BLOCK_1])
def test_bitcoin_mode_finds_the_real_nonce_of_real_headers(device, block):
    header, block_hash = block
    nonce = int.from_bytes(bytes.fromhex(header)[76:], "little")
    zeroed = header[:152] + "00000000"  # the nonce field is ignored
    result = opkit.mine(zeroed, start=nonce - (1 << 19), count=1 << 20, device=device)
    assert result.found and result.nonce == nonce and result.hash == block_hash
    assert result.searched_through is not None and result.searched_through >= nonce


def test_bitcoin_mode_accepts_80_raw_bytes():
    header, block_hash = GENESIS
    nonce = int.from_bytes(bytes.fromhex(header)[76:], "little")
    result = opkit.mine(bytes.fromhex(header), start=nonce, count=1, device="host")
    assert result.found and result.hash == block_hash


def test_not_found_in_a_short_range():
    header, _ = GENESIS
    nonce = int.from_bytes(bytes.fromhex(header)[76:], "little")
    result = opkit.mine(header, start=nonce + 1, count=1000, device="host")
    assert not result.found and result.nonce is None and result.hash is None
    assert result.searched_through == nonce + 1000
    assert result.to_dict()["found"] is False


def test_progress_callback_sees_the_search():
    # About a second of search on this machine (progress comes about four times a second): the
    # count is scaled by a timed probe, since CPU mining speed varies tenfold between machines.
    started = time.perf_counter()
    opkit.mine(data=b"probe", difficulty=200, count=2_000_000, device="host")
    count = max(4_000_000, int(2_000_000 / (time.perf_counter() - started)))
    seen = []
    result = opkit.mine(data=b"progress", difficulty=200, count=count, device="host", progress=seen.append)
    assert not result.found and result.hashes >= count
    assert seen, "a search of about a second reports progress"
    for p in seen:
        assert isinstance(p, opkit.MineProgress) and p.hashes <= p.total == count


def test_exception_in_progress_callback_stops_the_search_and_carries_the_result():
    class Stop(Exception):
        pass

    def stop(_):
        raise Stop()

    with pytest.raises(Stop) as caught:
        opkit.mine(data=b"never", difficulty=200, device="host", progress=stop)
    assert caught.value.result["interrupted"] is True


def test_bad_input_gives_clear_errors():
    with pytest.raises(TypeError, match="either header"):
        opkit.mine()
    with pytest.raises(ValueError, match="160 hex digits"):
        opkit.mine("00ff")
    with pytest.raises(TypeError, match="difficulty"):
        opkit.mine(data=b"abc")
    with pytest.raises(opkit.Error, match="1..255|difficulty|bits"):
        opkit.mine(data=b"abc", difficulty=0, device="host")
    with pytest.raises(opkit.Error):
        opkit.mine(GENESIS[0], target="zz", device="host")


def test_ctrl_c_stops_the_search_and_tells_where_to_resume():
    import os
    import signal
    import threading

    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            opkit.mine(data=b"never", difficulty=200, device="host")
    finally:
        timer.cancel()
    result = caught.value.result
    assert isinstance(result, opkit.MineResult) and result.interrupted and not result.found
    assert result.searched_through is None or result.searched_through >= 0
