"""Stratum V1 header construction and share checks with hashlib alone: the independent reference
that opkit's shares (`opkit mine --job`, `--pool`) are checked against in the tests. Written from
the protocol, not from opkit's C++ (src/ops/stratum/)."""
import hashlib
import struct
from fractions import Fraction

DIFF1_TARGET = 0xFFFF << 208  # 0x00000000ffff0000...0000


def sha256d(data: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def header_prevhash(stratum_prevhash: str) -> bytes:
    """Stratum sends the header's prevhash bytes with each 4-byte word byte-reversed."""
    raw = bytes.fromhex(stratum_prevhash)
    assert len(raw) == 32
    return b"".join(raw[i:i + 4][::-1] for i in range(0, 32, 4))


def stratum_prevhash_of(explorer_hash: str) -> str:
    """What a pool sends for a previous block hash as explorers print it: its eight 4-byte words in
    reverse order (the header bytes, each word byte-reversed)."""
    header_bytes = bytes.fromhex(explorer_hash)[::-1]
    return b"".join(header_bytes[i:i + 4][::-1] for i in range(0, 32, 4)).hex()


def merkle_root(coinbase: bytes, branch) -> bytes:
    root = sha256d(coinbase)
    for sibling in branch:
        root = sha256d(root + bytes.fromhex(sibling))
    return root


def header(job: dict, extranonce1: str, extranonce2: str, ntime: str, nonce: str) -> bytes:
    """The 80-byte header; ntime and nonce as mining.submit sends them (8 hex digits, big-endian)."""
    coinbase = bytes.fromhex(job["coinb1"] + extranonce1 + extranonce2 + job["coinb2"])
    return (struct.pack("<I", int(job["version"], 16)) + header_prevhash(job["prevhash"]) +
            merkle_root(coinbase, job["merkle_branch"]) + struct.pack("<I", int(ntime, 16)) +
            struct.pack("<I", int(job["nbits"], 16)) + struct.pack("<I", int(nonce, 16)))


def share_target(difficulty) -> int:
    """floor(diff1 / difficulty), exactly (a JSON number reads as the same double in Python and C++)."""
    target = DIFF1_TARGET * Fraction(difficulty).denominator // Fraction(difficulty).numerator
    return min(target, 2**256 - 1)


def hash_value(hdr: bytes) -> int:
    return int.from_bytes(sha256d(hdr), "little")


def explorer_hash(hdr: bytes) -> str:
    return sha256d(hdr)[::-1].hex()


def nbits_target(nbits: str) -> int:
    value = int(nbits, 16)
    return (value & 0x007FFFFF) << (8 * ((value >> 24) - 3))
