#!/usr/bin/env python3
"""What the GPU decoder (src/ops/lz4/kernels/lz4_decompress.cu) faces on a corpus, counted on the
host: its windows, groups and epochs, so that a change to how a group is copied can be weighed
before it is timed (METHOD.md: count before you tune).

The kernel parses each LZ4 block a window of 512 input bytes at a time and copies the window's
sequences in groups of 32, one sequence per thread; a group is cut into epochs, each behind a
barrier, where a match reads output of an earlier sequence of the same epoch. This model repeats
that batching (a window holds the sequences whose token starts in it; an extension running past
the window ends it early in the kernel, which the model ignores) and reports per corpus:

  sequences a block (mean, most), output bytes a sequence;
  epochs a group: the rule above (LZ4K_EPOCH_LANES 0 and 1);
  short groups: the share of groups whose literal runs and matches are all at most SHORT bytes
    (LZ4K_SHORT: the lane forms take only those), and of those, whose output fits STAGE bytes
    (LZ4K_GROUP_STAGE);
  following sources back (LZ4K_EPOCH_LANES 2): 32-byte steps a short group, and the mean over
    steps of the most steps back any byte of the step takes (a warp runs its slowest lane).

usage: lz4_decode_model.py FRAME.lz4... [--short 32,128] [--stage 768]
  FRAME.lz4  one LZ4 frame of independent blocks, e.g. `lz4 -1 -B4 -BI --no-frame-crc FILE`
"""
import argparse
import statistics
import struct
import sys

WINDOW, GROUP = 512, 32


def frame_blocks(path):
    """The compressed blocks of the frame at path (raw blocks left out: the kernel copies them)."""
    data = open(path, "rb").read()
    if len(data) < 7 or struct.unpack_from("<I", data)[0] != 0x184D2204:
        sys.exit(f"{path}: not an LZ4 frame")
    flg = data[4]
    if not flg & 0x20:
        sys.exit(f"{path}: linked blocks (the GPU decodes independent blocks; write it with lz4 -BI)")
    at = 7 + (8 if flg & 0x08 else 0)
    while at + 4 <= len(data):
        word = struct.unpack_from("<I", data, at)[0]
        at += 4
        if word == 0:
            return
        size = word & 0x7FFFFFFF
        if not word >> 31:
            yield data[at:at + size]
        at += size + (4 if flg & 0x10 else 0)


def extended(block, at, length):
    """A length of 15 extended by the 255-run at block[at:] (LZ4's format); (length, next position)."""
    if length == 15:
        while True:
            length += block[at]
            at += 1
            if block[at - 1] != 255:
                break
    return length, at


def sequences(block):
    """(token position, output position, literals, match, offset) of each sequence; match 0: the last."""
    out, at, result = 0, 0, []
    while at < len(block):
        token = block[at]
        start = at
        literals, at = extended(block, at + 1, token >> 4)
        at += literals
        if at >= len(block):
            result.append((start, out, literals, 0, 0))
            break
        offset = block[at] | block[at + 1] << 8
        match, at = extended(block, at + 2, token & 15)
        match += 4
        result.append((start, out, literals, match, offset))
        out += literals + match
    return result


def groups(seqs):
    """The kernel's groups: up to 32 consecutive sequences of one window."""
    i = 0
    while i < len(seqs):
        window_end = seqs[i][0] + WINDOW
        j = i
        while j < len(seqs) and seqs[j][0] < window_end:
            j += 1
        for g in range(i, j, GROUP):
            yield seqs[g:min(g + GROUP, j)]
        i = j


def epochs(group):
    """Epochs of a group: a new one at a sequence whose match reads output of one of the epoch's."""
    lo, starts = group[0][1], [s[1] for s in group]
    count, first = 1, 0
    for i, (_, out, literals, match, offset) in enumerate(group):
        if match == 0:
            continue
        source = out + literals - offset
        limit = min(source + min(match, offset), out)
        if source < out and limit > lo:
            j = max(k for k in range(i) if starts[k] < limit)
            if j >= first:
                count, first = count + 1, i
    return count


def chase(group):
    """(32-byte steps, sum over steps of the most steps back a byte of the step takes)."""
    lo = group[0][1]
    hi = group[-1][1] + group[-1][2] + group[-1][3]
    starts = [s[1] for s in group]

    def back(p):
        s = max(k for k in range(len(group)) if starts[k] <= p)
        depth = 0
        while True:
            _, out, literals, _, offset = group[s]
            if p - out < literals:
                return depth
            m = p - out - literals
            p = out + literals - offset + m % offset
            if p < lo or p >= out:
                return depth
            depth += 1
            s = max(k for k in range(s) if starts[k] <= p)

    steps = list(range(lo, hi, 32))
    return len(steps), sum(max(back(p) for p in range(base, min(base + 32, hi))) for base in steps)


def report(path, shorts, stage):
    per_block, per_group = [], []
    for block in frame_blocks(path):
        seqs = sequences(block)
        per_block.append(len(seqs))
        per_group.extend(groups(seqs))
    if not per_group:
        print(f"{path}: no compressed blocks")
        return
    out_bytes = sum(s[2] + s[3] for g in per_group for s in g)
    n = len(per_group)
    print(f"{path}: {len(per_block)} blocks, sequences a block {statistics.mean(per_block):.0f} "
          f"(most {max(per_block)}), {out_bytes / sum(per_block):.1f} output bytes a sequence, "
          f"{sum(map(len, per_group)) / n:.1f} sequences a group, "
          f"epochs a group {sum(map(epochs, per_group)) / n:.2f}")
    for short in shorts:
        short_groups = [g for g in per_group if all(s[2] <= short and s[3] <= short for s in g)]
        staged = sum(1 for g in short_groups if sum(s[2] + s[3] for s in g) <= stage)
        steps = depth = 0
        for g in short_groups:
            a, b = chase(g)
            steps, depth = steps + a, depth + b
        k = max(1, len(short_groups))
        print(f"  SHORT {short}: {100 * len(short_groups) / n:.1f}% of groups short "
              f"({100 * staged / n:.1f}% within a {stage}-byte stage), their epochs "
              f"{sum(map(epochs, short_groups)) / k:.2f} a group; following sources back: "
              f"{steps / k:.2f} steps a group, {depth / max(1, steps):.2f} steps back a step")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("frames", nargs="+")
    parser.add_argument("--short", default="32,128", help="LZ4K_SHORT values (comma-separated)")
    parser.add_argument("--stage", type=int, default=768, help="LZ4K_GROUP_STAGE bytes")
    args = parser.parse_args()
    for path in args.frames:
        report(path, [int(x) for x in args.short.split(",")], args.stage)


if __name__ == "__main__":
    main()
