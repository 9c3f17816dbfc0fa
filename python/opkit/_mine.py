"""opkit.mine: the proof-of-work search of `opkit mine`, from Python.

Bitcoin mode:  mine(header=HEX_OR_80_BYTES, start=0, count=None, target=None)
Data mode:     mine(data=STRING_OR_BYTES, difficulty=BITS, start=0, count=None)
The answer is the lowest qualifying nonce of [start, start + count), the same on every device.
Ctrl-C stops the search within about a second and raises KeyboardInterrupt, whose .result
(a MineResult) says how far the search got: resume at result.searched_through + 1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, NamedTuple, Optional

from . import _opkit
from ._opkit import Device


class MineProgress(NamedTuple):
    hashes: int  # nonces tested so far
    total: int  # nonces in the range
    seconds: float
    rate: float  # hashes per second


@dataclass
class MineResult:
    found: bool
    nonce: Optional[int]  # the lowest qualifying nonce, when found
    hash: Optional[str]  # explorer order (Bitcoin) or plain hex (data mode), when found
    digest: Optional[bytes]  # the raw 32-byte SHA-256 output, when found
    hashes: int  # nonces searched, each once
    rehashes: int  # nonces hashed again after a launch's candidate buffer overflowed (practically never)
    seconds: float
    interrupted: bool  # stopped before the answer was certain
    searched_through: Optional[int]  # every nonce of [start, searched_through] was tested
    engines: list = field(default_factory=list)  # what ran: device names, CPU threads

    @property
    def hashrate(self) -> float:
        return self.hashes / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        """The fields of `opkit mine --json` (digest as hex)."""
        d = asdict(self)
        d["digest"] = self.digest.hex() if self.digest is not None else None
        d["hashrate"] = self.hashrate
        return d


def _header_bytes(header) -> bytes:
    if isinstance(header, str):
        text = header.strip()
        if len(text) != 160:
            raise ValueError(f"header: expected 160 hex digits (80 bytes), got {len(text)} characters")
        try:
            return bytes.fromhex(text)
        except ValueError:
            raise ValueError("header: not a hex string") from None
    data = bytes(header)
    if len(data) != 80:
        raise ValueError(f"header: expected 80 bytes, got {len(data)}")
    return data


def _engines(device):
    """(mode, devices) from device=: 'auto', 'host' (the native CPU miner), 'all' (every GPU and
    the host), 'cuda' (every GPU), any other device name ('cuda:N', 'cpu' = the kernel on the CPU
    backend), a Device or a list of them."""
    if isinstance(device, str):
        text = device.strip().lower()
        if text in ("auto", "host", "all"):
            return text, []
        if ":" not in text and text in [b["name"] for b in _opkit.backends()]:
            devices = _opkit.Device.all(text)
            return "auto", devices if devices else [_opkit.Device.parse(text)]
        from ._devices import get_device

        return "auto", [get_device(text)]
    if isinstance(device, Device):
        return "auto", [device]
    devices = list(device)
    if not all(isinstance(d, Device) for d in devices):
        raise TypeError("device must be 'auto', 'host', 'all', a device name, a Device or a list of Devices")
    return "auto", devices


def mine(
    header=None,
    *,
    data=None,
    difficulty: Optional[int] = None,
    start: int = 0,
    count: Optional[int] = None,
    target: Optional[str] = None,
    device="auto",
    cpu_threads: int = 0,
    progress: Optional[Callable[[MineProgress], None]] = None,
) -> MineResult:
    """Searches for the lowest nonce of [start, start + count) that meets the target.

    header: a Bitcoin block header, 160 hex digits or 80 bytes (its nonce field is ignored);
        target: 64 hex digits, default the header's nBits; count default: up to nonce 2^32 - 1.
    data, difficulty: data mode, sha256(data || decimal(nonce)) < 2^(256 - difficulty);
        count default: up to 2^64 - 1.
    device: "auto" (every GPU, else the host), "host" (the native CPU miner), "cuda" (every GPU),
        "cpu" (the kernel on the CPU backend), "all" (GPUs + host), any device name, a Device or a list.
    progress: called with a MineProgress about four times a second.
    """
    if (header is None) == (data is None):
        raise TypeError("mine: give either header= (Bitcoin mode) or data= (data mode)")
    if start < 0 or (count is not None and count < 0):
        raise ValueError("mine: start and count must not be negative")
    mode, devices = _engines(device)
    report = None if progress is None else (lambda d: progress(MineProgress(**d)))
    try:
        if header is not None:
            if difficulty is not None:
                raise TypeError("mine: difficulty= is for data mode; Bitcoin mode takes target=")
            raw = _opkit.mine_bitcoin(_header_bytes(header), target, start, count, mode, devices, cpu_threads, report)
        else:
            if target is not None:
                raise TypeError("mine: target= is for Bitcoin mode; data mode takes difficulty=")
            if difficulty is None:
                raise TypeError("mine: data mode needs difficulty= (leading zero bits, 1..255)")
            payload = data.encode() if isinstance(data, str) else bytes(data)
            raw = _opkit.mine_data(payload, int(difficulty), start, count, mode, devices, cpu_threads, report)
    except KeyboardInterrupt as interrupt:
        partial = getattr(interrupt, "result", None)
        if isinstance(partial, dict):
            interrupt.result = MineResult(**partial)
        raise
    return MineResult(**raw)
