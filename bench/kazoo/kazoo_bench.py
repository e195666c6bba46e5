"""kazoo_bench runs go-curator's benchmark cases with Kazoo (Python), so that
bench/ can print Kazoo's figures beside go-curator's from the same run on the
same ZooKeeper server.

Usage: /usr/bin/python3 kazoo_bench.py <connectString>

It reads one command per line on stdin and answers each with one line of JSON
on stdout (and {"started": true} first, when its clients are connected and
its clock starts):

    run <case> <clients> <warmupMs> <durationMs> <path>
    quit

Cases: mutex-uncontended, mutex-contended, semaphore, atomiclong (Kazoo's
Counter; Kazoo has no SharedCount). Every client is its own KazooClient, so
its own ZooKeeper session; all clients of a case run in this one process, one
thread each, and share the witness that counts overlapping holders. The
answer has the same fields as bench/java/CuratorBench.java's (with
"per_client" and "slowest_us" for atomiclong).
"""

import json
import logging
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

SESSION_S = 15.0
MAX_LEASES = 2


class Run:
    def __init__(self, case, clients, warm_ms, dur_ms, path, connect):
        self.case = case
        self.clients = clients
        self.path = path
        self.connect = connect
        self.warm_ns = warm_ms * 1_000_000
        self.dur_ns = dur_ms * 1_000_000
        self.mu = threading.Lock()
        self.holders = 0
        self.max_holders = 0
        self.overlaps = 0
        self.errors = 0
        self.first_error = ""
        self.attempts = 0
        self.total_ok = 0
        self.lats = [[] for _ in range(clients)]
        self.slowest_ns = 0  # the longest call ending at or after t0
        self.t0 = self.t1 = 0

    def error(self, e):
        with self.mu:
            if self.errors == 0:
                self.first_error = repr(e)
            self.errors += 1

    def enter(self, limit):
        with self.mu:
            self.holders += 1
            self.max_holders = max(self.max_holders, self.holders)
            if self.holders > limit:
                self.overlaps += 1

    def leave(self):
        with self.mu:
            self.holders -= 1

    def in_window(self, end):
        return self.t0 <= end <= self.t1

    def record(self, wid, start, end):
        if self.in_window(end):
            self.lats[wid].append((end - start) // 1000)

    def remaining(self):
        return max(0.001, (self.t1 - time.perf_counter_ns()) / 1e9)

    def worker(self, client):
        case, path = self.case, self.path
        if case == "mutex-uncontended":
            lock = client.Lock(path)

            def step(wid):
                s = time.perf_counter_ns()
                lock.acquire()
                self.enter(1)
                self.leave()
                lock.release()
                self.record(wid, s, time.perf_counter_ns())
            return step
        if case == "mutex-contended":
            lock = client.Lock(path)

            def step(wid):
                s = time.perf_counter_ns()
                if not lock.acquire(timeout=self.remaining()):
                    return
                e = time.perf_counter_ns()
                self.enter(1)
                self.leave()
                lock.release()
                self.record(wid, s, e)
            return step
        if case == "semaphore":
            sem = client.Semaphore(path, max_leases=MAX_LEASES)

            def step(wid):
                s = time.perf_counter_ns()
                if not sem.acquire(timeout=self.remaining()):
                    return
                e = time.perf_counter_ns()
                self.enter(MAX_LEASES)
                self.leave()
                sem.release()
                self.record(wid, s, e)
            return step
        if case == "atomiclong":
            counter = client.Counter(path, default=0, support_curator=True)

            def step(wid):
                nonlocal counter
                s = time.perf_counter_ns()
                counter += 1  # Counter's += writes to ZooKeeper
                e = time.perf_counter_ns()
                with self.mu:
                    self.total_ok += 1
                    if self.in_window(e):
                        self.attempts += 1
                    if e >= self.t0:
                        self.slowest_ns = max(self.slowest_ns, e - s)
                self.record(wid, s, e)
            return step
        raise ValueError("unknown case " + case)

    def execute(self):
        clients = []
        try:
            for _ in range(self.clients):
                c = KazooClient(hosts=self.connect, timeout=SESSION_S)
                c.start(timeout=30)
                clients.append(c)
            steps = [self.worker(c) for c in clients]
            sys.stdout.write(json.dumps({"started": True}) + "\n")
            sys.stdout.flush()
            start = time.perf_counter_ns()
            self.t0 = start + self.warm_ns
            self.t1 = self.t0 + self.dur_ns

            def loop(wid):
                while time.perf_counter_ns() < self.t1:
                    try:
                        steps[wid](wid)
                    except LockTimeout:
                        pass  # the window closed while it waited
                    except Exception as e:  # counted, reported once
                        self.error(e)

            ts = [threading.Thread(target=loop, args=(i,)) for i in range(self.clients)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            answer = {
                "lat_us": [x for ls in self.lats for x in ls],
                "overlaps": self.overlaps,
                "max_holders": self.max_holders,
                "errors": self.errors,
                "first_error": self.first_error,
                "attempts": self.attempts,
                "total_ok": self.total_ok,
            }
            answer["ops"] = len(answer["lat_us"])
            if self.case == "atomiclong":
                answer["per_client"] = [len(ls) for ls in self.lats]
                answer["slowest_us"] = self.slowest_ns // 1000
                answer["final"] = clients[0].Counter(self.path, default=0, support_curator=True).value
            return answer
        finally:
            for c in clients:
                try:
                    c.stop()
                    c.close()
                except Exception:
                    pass


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: kazoo_bench.py <connectString>\n")
        sys.exit(2)
    connect = sys.argv[1]
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        f = line.split()
        if f == ["quit"]:
            return
        if len(f) != 6 or f[0] != "run":
            answer = {"fatal": "bad command: " + line.strip()}
        else:
            try:
                answer = Run(f[1], int(f[2]), int(f[3]), int(f[4]), f[5], connect).execute()
            except Exception as e:
                answer = {"fatal": repr(e)}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
