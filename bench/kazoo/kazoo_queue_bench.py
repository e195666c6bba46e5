"""kazoo_queue_bench runs go-curator's queue throughput case with Kazoo's
Queue and LockingQueue (Python), so that bench/ can print Kazoo's figures
beside go-curator's and Curator's from the same run on the same ZooKeeper
server.

Usage: /usr/bin/python3 kazoo_queue_bench.py <connectString>

It writes {"ready": true}, then reads one command per line on stdin and
answers each with one line of JSON on stdout:

    tput <plain|locked> <producers> <consumers> <warmMs> <durMs> <path> <inflight>
    quit

plain is Kazoo's Queue (get() deletes the entry), locked its LockingQueue
(get() takes an entry's lock, consume() deletes it). Every producer and
consumer is its own KazooClient, so its own session, one thread each. At
most inflight items are put and not yet taken at any time. Each item is 32
bytes, its first 8 the epoch in microseconds when its put began. The
answer is {"ops": N, "lat_us": [...], "errors": N, "first_error": "..."}:
the items taken in the measured window and their put-to-take times.

Kazoo's Queue.get() does not block: an idle consumer waits for a change of
the queue's children (a watch) and tries again.
"""

import json
import logging
import struct
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.queue import LockingQueue, Queue

SESSION_S = 15.0


def now_us():
    return time.time_ns() // 1000


def client(connect):
    c = KazooClient(hosts=connect, timeout=SESSION_S)
    c.start(timeout=30)
    return c


def tput(connect, locked, producers, consumers, warm_ms, dur_ms, path, inflight):
    room = threading.Semaphore(inflight)
    mu = threading.Lock()
    lats = []
    errors = [0, ""]
    clients = []
    t0 = now_us()
    start = t0 + warm_ms * 1000
    end = start + dur_ms * 1000
    stop = threading.Event()

    def error(e):
        with mu:
            if errors[0] == 0:
                errors[1] = repr(e)
            errors[0] += 1

    def took(item):
        t = now_us()
        put = struct.unpack(">q", item[:8])[0]
        room.release()
        if start <= t <= end:
            with mu:
                lats.append(t - put)

    def consume_plain(c):
        q = Queue(c, path)
        changed = threading.Event()
        while not stop.is_set():
            try:
                item = q.get()
                if item is not None:
                    took(item)
                    continue
                changed.clear()
                if c.get_children(path, watch=lambda e: changed.set()):
                    continue
                changed.wait(0.1)
            except Exception as e:
                error(e)
                time.sleep(0.01)

    def consume_locked(c):
        q = LockingQueue(c, path)
        while not stop.is_set():
            try:
                item = q.get(0.1)
                if item is None:
                    continue
                took(item)
                q.consume()
            except Exception as e:
                error(e)
                time.sleep(0.01)

    def produce(c):
        q = LockingQueue(c, path) if locked else Queue(c, path)
        while now_us() < end:
            if not room.acquire(timeout=0.05):
                continue
            try:
                q.put(struct.pack(">q", now_us()) + bytes(24))
            except Exception as e:
                error(e)

    try:
        for _ in range(consumers + producers):
            clients.append(client(connect))
        clients[0].ensure_path(path)
        threads = []
        for i in range(consumers):
            fn = consume_locked if locked else consume_plain
            threads.append(threading.Thread(target=fn, args=(clients[i],), daemon=True))
        producers_ = [threading.Thread(target=produce, args=(clients[consumers + i],), daemon=True)
                      for i in range(producers)]
        for th in threads + producers_:
            th.start()
        for th in producers_:
            th.join()
        time.sleep(0.2)
        stop.set()
        for th in threads:
            th.join(5)
    finally:
        for c in clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass
    with mu:
        return {"ops": len(lats), "lat_us": lats, "errors": errors[0], "first_error": errors[1]}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: kazoo_queue_bench.py <connectString>\n")
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
        if len(f) != 8 or f[0] != "tput":
            answer = {"fatal": "bad command: " + line.strip()}
        else:
            try:
                answer = tput(connect, f[1] == "locked", int(f[2]), int(f[3]), int(f[4]), int(f[5]), f[6], int(f[7]))
            except Exception as e:
                answer = {"fatal": repr(e)}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
