"""A small Stratum V1 pool for the tests: loopback only, an ephemeral port, bounded in time. It
checks every mining.submit independently with hashlib (stratum_reference.py), answers as a real
pool would (accepted, or rejected with the usual error codes), and plays one scenario:

  accept    a job, valid shares accepted
  reject    after 2 accepted shares its difficulty rises at once (set_difficulty applies to the
            next job, so the client's next share is a 'Low difficulty share'); then an easy clean job
  clean     after 2 shares of job A, job B with clean_jobs: the client must move to B
  drop      after 2 shares it drops the connection; the client must reconnect and mine again
            (with the new connection's extranonce1)
  garbage   after the handshake, a line that is not JSON
  hugenumber after the handshake, JSON with a number no double holds (1e999): not JSON either
  badnotify a mining.notify whose coinb1 is not hex
  refuse    mining.authorize answered false
  silent    accepts the connection and never answers

Usage: test_pool.py SCENARIO PORT_FILE REPORT_FILE [--difficulty D] [--seconds S]
Writes the port to PORT_FILE once listening; at the end a JSON report to REPORT_FILE, and exits 1
if a share it accepted does not check out or the scenario's expectations were not met."""
import argparse
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stratum_reference as ref  # noqa: E402

# A Bitcoin-shaped coinbase: version, one input (null prevout), scriptSig with the extranonces in
# it, one output. Only its bytes matter to the header.
COINB1 = ("01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff"
          "20" "0350c40b" "062f6f706b69742f")
COINB2 = ("ffffffff0100f2052a010000001976a914" + "11" * 20 + "88ac00000000")
BRANCH = [ref.sha256d(b"tx one").hex(), ref.sha256d(b"tx two").hex()]


def job(job_id, clean, prev_seed):
    return {"job_id": job_id, "prevhash": ref.stratum_prevhash_of(ref.sha256d(prev_seed)[::-1].hex()),
            "coinb1": COINB1, "coinb2": COINB2, "merkle_branch": BRANCH, "version": "20000000",
            "nbits": "1d00ffff", "ntime": "%08x" % 1733200000, "clean_jobs": clean}


def notify_params(j):
    return [j["job_id"], j["prevhash"], j["coinb1"], j["coinb2"], j["merkle_branch"], j["version"], j["nbits"],
            j["ntime"], j["clean_jobs"]]


class Connection:
    def __init__(self, sock, extranonce1):
        self.sock = sock
        self.sock.settimeout(0.1)
        self.buffer = b""
        self.extranonce1 = extranonce1
        self.extranonce2_size = 4
        self.accepted = 0
        self.open = True

    def send(self, message):
        self.send_raw(json.dumps(message))

    def send_raw(self, text):
        try:
            self.sock.sendall(text.encode() + b"\n")
        except OSError:
            self.open = False

    def read(self):
        """One message, None on a timeout; sets open = False when the client went away."""
        while b"\n" not in self.buffer:
            try:
                piece = self.sock.recv(4096)
            except socket.timeout:
                return None
            except OSError:
                piece = b""
            if not piece:
                self.open = False
                return None
            self.buffer += piece
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


class Pool:
    def __init__(self, scenario, difficulty):
        self.scenario = scenario
        self.difficulty = difficulty  # what shares are judged by now
        self.jobs = {}
        self.current = None
        self.stale_ids = set()
        self.seen = set()
        self.report = {"scenario": scenario, "accepted": [], "rejected": [], "connections": 0, "errors": []}

    def new_job(self, conn, job_id, clean, seed):
        j = job(job_id, clean, seed)
        if clean:
            self.stale_ids.update(self.jobs)
        self.jobs[job_id] = j
        self.current = job_id
        conn.send({"id": None, "method": "mining.notify", "params": notify_params(j)})

    def check(self, conn, params):
        """None for a valid share, else the error a pool answers with."""
        worker, job_id, e2, ntime, nonce = params
        if job_id not in self.jobs or job_id in self.stale_ids:
            return [21, "Job not found", None]
        j = self.jobs[job_id]
        if len(e2) != 2 * conn.extranonce2_size:
            return [20, "Incorrect size of extranonce2", None]
        if ntime != j["ntime"]:
            return [20, "ntime out of range", None]
        key = (conn.extranonce1, job_id, e2, ntime, nonce)
        if key in self.seen:
            return [22, "Duplicate share", None]
        hdr = ref.header(j, conn.extranonce1, e2, ntime, nonce)
        if ref.hash_value(hdr) > ref.share_target(self.difficulty):
            return [23, "Low difficulty share", None]
        self.seen.add(key)
        return None

    def serve(self, conn, deadline):
        self.report["connections"] += 1
        while conn.open and time.monotonic() < deadline:
            message = conn.read()
            if message is None:
                continue
            method, mid, params = message.get("method"), message.get("id"), message.get("params")
            if method == "mining.subscribe":
                conn.send({"id": mid, "result": [[["mining.notify", "s1"]], conn.extranonce1, conn.extranonce2_size],
                           "error": None})
            elif method == "mining.authorize":
                if self.scenario == "refuse":
                    conn.send({"id": mid, "result": False, "error": [24, "Unauthorized worker", None]})
                    continue
                conn.send({"id": mid, "result": True, "error": None})
                conn.send({"id": None, "method": "mining.set_difficulty", "params": [self.difficulty]})
                if self.scenario == "garbage":
                    conn.send_raw("this is not json {")
                elif self.scenario == "hugenumber":
                    conn.send_raw('{"id": null, "method": "mining.set_difficulty", "params": [1e999]}')
                elif self.scenario == "badnotify":
                    bad = notify_params(job("x", True, b"bad"))
                    bad[2] = "zz" + bad[2][2:]
                    conn.send({"id": None, "method": "mining.notify", "params": bad})
                else:
                    self.new_job(conn, "a%d" % self.report["connections"], True, b"first")
            elif method == "mining.submit":
                error = self.check(conn, params)
                entry = {"params": params, "extranonce1": conn.extranonce1, "connection": self.report["connections"]}
                if error:
                    entry["error"] = error
                    self.report["rejected"].append(entry)
                    conn.send({"id": mid, "result": None, "error": error})
                    self.after_reject(conn, error)
                    continue
                entry["difficulty"] = self.difficulty
                self.report["accepted"].append(entry)
                conn.accepted += 1
                conn.send({"id": mid, "result": True, "error": None})
                self.after_accept(conn)
            else:
                conn.send({"id": mid, "result": None, "error": [20, "unknown method", None]})

    def after_accept(self, conn):
        if conn.accepted != 2:
            return
        if self.scenario == "reject" and self.report["connections"] == 1 and not self.report.get("raised"):
            self.report["raised"] = True
            easy = self.difficulty
            self.difficulty = 1e6  # judged at once; the client keeps the old target until a new job
            conn.send({"id": None, "method": "mining.set_difficulty", "params": [self.difficulty]})
            self.pending_easy = easy
        elif self.scenario == "clean" and self.current.startswith("a"):
            self.new_job(conn, "b1", True, b"second")
        elif self.scenario == "drop" and self.report["connections"] == 1:
            conn.sock.close()
            conn.open = False

    def after_reject(self, conn, error):
        # reject: the low-difficulty share came; make mining easy again with a new clean job.
        if self.scenario == "reject" and error[0] == 23 and not self.report.get("eased"):
            self.report["eased"] = True
            self.difficulty = self.pending_easy
            conn.send({"id": None, "method": "mining.set_difficulty", "params": [self.difficulty]})
            self.new_job(conn, "r2", True, b"eased")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario")
    parser.add_argument("port_file")
    parser.add_argument("report_file")
    parser.add_argument("--difficulty", type=float, default=0.0002)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    pool = Pool(args.scenario, args.difficulty)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    deadline = time.monotonic() + args.seconds
    extranonces = iter(["f000000%d" % i for i in range(1, 10)])
    silent = []
    while time.monotonic() < deadline:
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            if pool.report["connections"] and args.scenario not in ("drop", "silent"):
                break  # served its one connection
            if args.scenario == "drop" and pool.report["connections"] >= 2:
                break
            continue
        if args.scenario == "silent":
            silent.append(sock)  # never answered
            pool.report["connections"] += 1
            continue
        conn = Connection(sock, next(extranonces))
        pool.serve(conn, deadline)
        sock.close()
    ok = verify(pool)
    with open(args.report_file, "w") as f:
        json.dump(pool.report, f, indent=1)
    sys.exit(0 if ok else 1)


def verify(pool):
    """Every accepted share checks out again, independently of the order it came in."""
    report = pool.report
    for entry in report["accepted"]:
        worker, job_id, e2, ntime, nonce = entry["params"]
        hdr = ref.header(pool.jobs[job_id], entry["extranonce1"], e2, ntime, nonce)
        if ref.hash_value(hdr) > ref.share_target(entry["difficulty"]):
            report["errors"].append("accepted share fails the target: %r" % entry)
    return not report["errors"]


if __name__ == "__main__":
    main()
