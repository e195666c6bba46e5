// CuratorBench runs go-curator's benchmark cases with Apache Curator 5.4, so
// that bench/ can print Curator's figures beside go-curator's from the same
// run on the same ZooKeeper server.
//
// Usage: java -cp <classes>:<jars> CuratorBench <connectString>
//
// It reads one command per line on stdin and answers each with one line of
// JSON on stdout:
//
//	run <case> <clients> <warmupMs> <durationMs> <path>
//	quit
//
// Cases: mutex-uncontended, mutex-contended, semaphore, atomiclong,
// sharedcount (see bench/doc.go for what each one measures). Every client is
// its own CuratorFramework, so its own ZooKeeper session; all clients of a
// case run in this one process, one thread each, and share the witness that
// counts overlapping holders.
//
// When its clients are connected and its clock starts, it writes
// {"started":true}. The answer holds the operations completed inside the
// measured window, their latencies in microseconds, and the case's checks:
//
//	{"ops":N,"lat_us":[...],"overlaps":N,"max_holders":N,"errors":N,
//	 "first_error":"...","attempts":N,"total_ok":N,"final":N}
//
// The atomiclong case adds "per_client" (each client's successful increments
// inside the window) and "slowest_us" (the longest increment call, successful
// or not, that ended inside the window or after it).
//
// Curator and ZooKeeper log through slf4j to stderr; stdout carries the
// protocol only.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBench {
    /** Session and connection timeouts, as the Go side uses. */
    static final int SESSION_MS = 15000, CONNECT_MS = 15000;
    /** The semaphore case's leases. */
    static final int MAX_LEASES = 2;

    static PrintStream out;
    static String connect;

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CuratorBench <connectString>");
            System.exit(2);
        }
        connect = args[0];
        out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ready\":true}");
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 1 && f[0].equals("quit")) {
                return;
            }
            if (f.length != 6 || !f[0].equals("run")) {
                out.println("{\"fatal\":" + quote("bad command: " + line) + "}");
                continue;
            }
            try {
                Run r = new Run(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), f[5]);
                out.println(r.execute());
            } catch (Throwable t) {
                out.println("{\"fatal\":" + quote(t.toString()) + "}");
            }
        }
    }

    static RetryPolicy policy() {
        return new ExponentialBackoffRetry(100, 10);
    }

    static CuratorFramework newClient() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connect, SESSION_MS, CONNECT_MS, policy());
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("no connection to " + connect);
        }
        return c;
    }

    /** One case with one implementation: its clients, window and tallies. */
    static final class Run {
        final String kase, path;
        final int clients;
        final long warmNs, durNs;
        long t0, t1; // the measured window, System.nanoTime

        final AtomicInteger holders = new AtomicInteger();
        final AtomicInteger maxHolders = new AtomicInteger();
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong attempts = new AtomicLong(); // in the window
        final AtomicLong totalOk = new AtomicLong();  // over the whole run
        final AtomicLong slowestNs = new AtomicLong(); // the longest call ending at or after t0
        volatile String firstError = "";
        final List<long[]> lats = new ArrayList<>();  // per worker, filled by index
        final long[] counts;

        Run(String kase, int clients, long warmMs, long durMs, String path) {
            this.kase = kase;
            this.clients = clients;
            this.warmNs = TimeUnit.MILLISECONDS.toNanos(warmMs);
            this.durNs = TimeUnit.MILLISECONDS.toNanos(durMs);
            this.path = path;
            this.counts = new long[clients];
        }

        void error(Throwable t) {
            if (errors.getAndIncrement() == 0) {
                firstError = t.toString();
            }
        }

        /** enter marks a holder in and counts an overlap above limit. */
        void enter(int limit) {
            int n = holders.incrementAndGet();
            maxHolders.accumulateAndGet(n, Math::max);
            if (n > limit) {
                overlaps.incrementAndGet();
            }
        }

        void leave() {
            holders.decrementAndGet();
        }

        /** record keeps an operation that completed inside the window. */
        boolean record(int worker, long start, long end, long[][] buf) {
            if (end < t0 || end > t1) {
                return false;
            }
            long[] b = buf[worker];
            int n = (int) counts[worker];
            if (n == b.length) {
                b = java.util.Arrays.copyOf(b, b.length * 2);
                buf[worker] = b;
            }
            b[n] = (end - start) / 1000;
            counts[worker]++;
            return true;
        }

        String execute() throws Exception {
            List<CuratorFramework> cs = new ArrayList<>();
            try {
                for (int i = 0; i < clients; i++) {
                    cs.add(newClient());
                }
                return measure(cs);
            } finally {
                for (CuratorFramework c : cs) {
                    c.close();
                }
            }
        }

        String measure(List<CuratorFramework> cs) throws Exception {
            long[][] buf = new long[clients][];
            for (int i = 0; i < clients; i++) {
                buf[i] = new long[1024];
            }
            List<AutoCloseable> closers = new ArrayList<>();
            Worker[] ws = new Worker[clients];
            for (int i = 0; i < clients; i++) {
                ws[i] = worker(cs.get(i), closers);
            }
            out.println("{\"started\":true}");
            long start = System.nanoTime();
            t0 = start + warmNs;
            t1 = t0 + durNs;
            Thread[] ts = new Thread[clients];
            for (int i = 0; i < clients; i++) {
                final int id = i;
                ts[i] = new Thread(() -> {
                    while (System.nanoTime() < t1) {
                        try {
                            ws[id].step(id, buf);
                        } catch (Throwable t) {
                            error(t);
                        }
                    }
                });
                ts[i].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            long fin = Long.MIN_VALUE;
            if (kase.equals("atomiclong")) {
                AtomicValue<Long> v = new DistributedAtomicLong(cs.get(0), path, policy()).get();
                fin = v.postValue();
            } else if (kase.equals("sharedcount")) {
                SharedCount sc = new SharedCount(cs.get(0), path, 0);
                sc.start();
                fin = sc.getCount();
                sc.close();
            }
            for (AutoCloseable c : closers) {
                c.close();
            }
            StringBuilder sb = new StringBuilder(64 + 8 * 1024);
            long ops = 0;
            sb.append("{\"lat_us\":[");
            boolean first = true;
            for (int i = 0; i < clients; i++) {
                ops += counts[i];
                for (int j = 0; j < counts[i]; j++) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    sb.append(buf[i][j]);
                }
            }
            sb.append("],\"ops\":").append(ops);
            sb.append(",\"overlaps\":").append(overlaps.get());
            sb.append(",\"max_holders\":").append(maxHolders.get());
            sb.append(",\"errors\":").append(errors.get());
            sb.append(",\"first_error\":").append(quote(firstError));
            sb.append(",\"attempts\":").append(attempts.get());
            sb.append(",\"total_ok\":").append(totalOk.get());
            if (fin != Long.MIN_VALUE) {
                sb.append(",\"final\":").append(fin);
            }
            if (kase.equals("atomiclong")) {
                sb.append(",\"per_client\":[");
                for (int i = 0; i < clients; i++) {
                    sb.append(i == 0 ? "" : ",").append(counts[i]);
                }
                sb.append("],\"slowest_us\":").append(slowestNs.get() / 1000);
            }
            sb.append('}');
            return sb.toString();
        }

        interface Worker {
            void step(int id, long[][] buf) throws Exception;
        }

        long remainingMs() {
            return Math.max(1, TimeUnit.NANOSECONDS.toMillis(t1 - System.nanoTime()));
        }

        Worker worker(CuratorFramework c, List<AutoCloseable> closers) throws Exception {
            switch (kase) {
            case "mutex-uncontended": {
                InterProcessMutex m = new InterProcessMutex(c, path);
                return (id, buf) -> {
                    long s = System.nanoTime();
                    m.acquire();
                    enter(1);
                    leave();
                    m.release();
                    record(id, s, System.nanoTime(), buf);
                };
            }
            case "mutex-contended": {
                InterProcessMutex m = new InterProcessMutex(c, path);
                return (id, buf) -> {
                    long s = System.nanoTime();
                    if (!m.acquire(remainingMs(), TimeUnit.MILLISECONDS)) {
                        return;
                    }
                    long e = System.nanoTime();
                    enter(1);
                    leave();
                    m.release();
                    record(id, s, e, buf);
                };
            }
            case "semaphore": {
                InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(c, path, MAX_LEASES);
                return (id, buf) -> {
                    long s = System.nanoTime();
                    Lease l = sem.acquire(remainingMs(), TimeUnit.MILLISECONDS);
                    if (l == null) {
                        return;
                    }
                    long e = System.nanoTime();
                    enter(MAX_LEASES);
                    leave();
                    sem.returnLease(l);
                    record(id, s, e, buf);
                };
            }
            case "atomiclong": {
                DistributedAtomicLong al = new DistributedAtomicLong(c, path, policy());
                return (id, buf) -> {
                    long s = System.nanoTime();
                    AtomicValue<Long> v = al.increment();
                    long e = System.nanoTime();
                    boolean in = e >= t0 && e <= t1;
                    if (in) {
                        attempts.incrementAndGet();
                    }
                    if (e >= t0) {
                        slowestNs.accumulateAndGet(e - s, Math::max);
                    }
                    if (v.succeeded()) {
                        totalOk.incrementAndGet();
                        record(id, s, e, buf);
                    }
                };
            }
            case "sharedcount": {
                SharedCount sc = new SharedCount(c, path, 0);
                sc.start();
                closers.add(sc);
                return (id, buf) -> {
                    long s = System.nanoTime();
                    VersionedValue<Integer> v = sc.getVersionedValue();
                    boolean ok = sc.trySetCount(v, v.getValue() + 1);
                    long e = System.nanoTime();
                    if (e >= t0 && e <= t1) {
                        attempts.incrementAndGet();
                    }
                    if (ok) {
                        totalOk.incrementAndGet();
                        record(id, s, e, buf);
                    }
                };
            }
            default:
                throw new IllegalArgumentException("unknown case " + kase);
            }
        }
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }
}
