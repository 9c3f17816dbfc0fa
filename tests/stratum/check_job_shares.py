"""Checks `opkit mine --job FILE --json` output against stratum_reference.py (hashlib): every
header opkit announced is the one the reference builds for its extranonce2 and ntime, every share
meets the share target, and for each header searched to the end (all but the last) the shares are
exactly the qualifying nonces of the range, found by brute force.
Usage: check_job_shares.py JOB.json OUTPUT.jsonl FIRST_NONCE COUNT"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stratum_reference as ref  # noqa: E402


def main():
    job = json.load(open(sys.argv[1]))
    events = [json.loads(line) for line in open(sys.argv[2])]
    first, count = int(sys.argv[3]), int(sys.argv[4])
    target = ref.share_target(job["difficulty"]) if "difficulty" in job else int(job["share_target"], 16)
    e1 = job["extranonce1"]
    headers = [e for e in events if e["event"] == "header"]
    shares = [e for e in events if e["event"] == "share"]
    errors = []
    for h in headers:
        expected = ref.header(job, e1, h["extranonce2"], h["ntime"], "00000000").hex()
        if h["header"] != expected:
            errors.append("header for extranonce2 %s: opkit %s, reference %s" % (h["extranonce2"], h["header"], expected))
    for s in shares:
        worker, job_id, e2, ntime, nonce = s["submit"]
        hdr = ref.header(job, e1, e2, ntime, nonce)
        if job_id != job["job_id"] or ref.hash_value(hdr) > target or ref.explorer_hash(hdr) != s["hash"]:
            errors.append("share does not check out: %r" % s["submit"])
    for h in headers[:-1]:  # searched to the end
        found = sorted(int(s["nonce"], 16) for s in shares
                       if s["extranonce2"] == h["extranonce2"] and s["ntime"] == h["ntime"])
        base = bytes.fromhex(ref.header(job, e1, h["extranonce2"], h["ntime"], "00000000").hex())[:76]
        qualifying = [n for n in range(first, first + count)
                      if ref.hash_value(base + n.to_bytes(4, "little")) <= target]
        if found != qualifying:
            errors.append("extranonce2 %s: opkit found %s, brute force %s" % (h["extranonce2"], found, qualifying))
    print("%d headers, %d shares checked" % (len(headers), len(shares)))
    for e in errors:
        print("FAIL:", e)
    sys.exit(1 if errors or not shares else 0)


if __name__ == "__main__":
    main()
