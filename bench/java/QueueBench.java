// QueueBench runs go-curator's queue case with Apache Curator 5.4's
// DistributedQueue, so that bench/ can print Curator's figures beside
// go-curator's recipes/queue from the same run on the same ZooKeeper
// server.
//
// Usage: java -cp <classes>:<jars> QueueBench <connectString>
//
// It writes {"ready":true}, then reads one command per line on stdin and
// answers each with one line of JSON on stdout:
//
//	tput <plain|locked> <producers> <consumers> <warmMs> <durMs> <path> <inflight>
//	        producers and consumers, each its own CuratorFramework and
//	        DistributedQueue (locked: with lockPath <path>-locks), put and
//	        take for warmMs+durMs; at most inflight items are put and not
//	        yet taken at any time. Each item is 32 bytes, its first 8 the
//	        epoch in microseconds when its put began. Answers
//	        {"ops":N,"lat_us":[...],"errors":N,"first_error":"..."}: the
//	        items taken in the measured window and their put-to-take times
//	herd.start <path> <consumers>  that many idle consumers, each its own
//	        client, and a producer; {"started":true}
//	herd.put <items>  puts items one at a time, each after the last was
//	        taken; {"ops":items}
//	herd.stop         closes them; {"stopped":true}
//	drain <path> <items> <maxMs>   one consumer client drains a queue of
//	        items (filled by the Go side); answers {"ops":taken,
//	        "first_ns":..,"last_ns":..,"span_ns":..,"heap_bytes":..}: the
//	        time the first tenth of the items took from the first taken,
//	        the time the last tenth took, the time from the first taken to
//	        the last, and the JVM's used heap after System.gc() at
//	        half-drain less before the start (or, with "heap_at_stop":true,
//	        when the drain stopped short of half)
//	quit
//
// A failure answers {"fatal":"..."}. Curator and ZooKeeper log through
// slf4j to stderr; stdout carries the protocol only.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class QueueBench {
    static final int SESSION_MS = 15000, CONNECT_MS = 15000;

    static PrintStream out;
    static String connect;
    static final List<AutoCloseable> herd = new ArrayList<>();
    static DistributedQueue<byte[]> herdProducer;
    static final AtomicLong herdTaken = new AtomicLong();

    static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        @Override
        public byte[] serialize(byte[] item) {
            return item;
        }

        @Override
        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: QueueBench <connectString>");
            System.exit(2);
        }
        connect = args[0];
        // The big queue's directory comes in one getChildren reply, larger
        // than the client's default limit (1 MB); set before any
        // ZooKeeper class reads it.
        System.setProperty("jute.maxbuffer", "268435456");
        out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ready\":true}");
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 1 && f[0].equals("quit")) {
                break;
            }
            try {
                out.println(execute(f));
            } catch (Throwable t) {
                out.println("{\"fatal\":" + quote(t.toString()) + "}");
            }
        }
        closeHerd();
        System.exit(0);
    }

    static String execute(String[] f) throws Exception {
        switch (f[0]) {
            case "tput":
                return tput(f[1].equals("locked"), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                    Long.parseLong(f[4]), Long.parseLong(f[5]), f[6], Integer.parseInt(f[7]));
            case "herd.start":
                return herdStart(f[1], Integer.parseInt(f[2]));
            case "herd.put":
                return herdPut(Integer.parseInt(f[1]));
            case "herd.stop":
                closeHerd();
                return "{\"stopped\":true}";
            case "drain":
                return drain(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]));
            default:
                throw new IllegalArgumentException("bad command: " + String.join(" ", f));
        }
    }

    static CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).ensembleTracker(false)
            .sessionTimeoutMs(SESSION_MS).connectionTimeoutMs(CONNECT_MS)
            .retryPolicy(new ExponentialBackoffRetry(100, 10)).build();
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("not connected within 30 s");
        }
        return c;
    }

    interface Taker {
        void take(byte[] item) throws Exception;
    }

    static QueueConsumer<byte[]> consumer(Taker t) {
        return new QueueConsumer<byte[]>() {
            @Override
            public void consumeMessage(byte[] message) throws Exception {
                t.take(message);
            }

            @Override
            public void stateChanged(CuratorFramework c, ConnectionState s) {
            }
        };
    }

    static DistributedQueue<byte[]> queue(CuratorFramework c, QueueConsumer<byte[]> consumer, String path, boolean locked)
            throws Exception {
        QueueBuilder<byte[]> b = QueueBuilder.builder(c, consumer, BYTES, path);
        if (locked) {
            b = b.lockPath(path + "-locks");
        }
        DistributedQueue<byte[]> q = b.buildQueue();
        q.start();
        return q;
    }

    static long nowMicros() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    static String tput(boolean locked, int producers, int consumers, long warmMs, long durMs, String path, int inflight)
            throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        List<DistributedQueue<byte[]>> queues = new ArrayList<>();
        Semaphore room = new Semaphore(inflight);
        AtomicLong errors = new AtomicLong();
        String[] firstError = {""};
        List<Long> lats = new ArrayList<>();
        long[] window = new long[2]; // measured window, epoch micros
        try {
            for (int i = 0; i < consumers; i++) {
                CuratorFramework c = client();
                clients.add(c);
                queues.add(queue(c, consumer(item -> {
                    long now = nowMicros();
                    long put = ByteBuffer.wrap(item).getLong();
                    room.release();
                    synchronized (lats) {
                        if (window[0] != 0 && now >= window[0] && now <= window[1]) {
                            lats.add(now - put);
                        }
                    }
                }), path, locked));
            }
            List<DistributedQueue<byte[]>> prods = new ArrayList<>();
            for (int i = 0; i < producers; i++) {
                CuratorFramework c = client();
                clients.add(c);
                DistributedQueue<byte[]> q = queue(c, null, path, false);
                queues.add(q);
                prods.add(q);
            }
            long t0 = nowMicros();
            synchronized (lats) {
                window[0] = t0 + warmMs * 1000;
                window[1] = window[0] + durMs * 1000;
            }
            long end = window[1];
            List<Thread> threads = new ArrayList<>();
            for (DistributedQueue<byte[]> q : prods) {
                Thread th = new Thread(() -> {
                    while (nowMicros() < end) {
                        try {
                            if (!room.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                                continue;
                            }
                            byte[] item = new byte[32];
                            ByteBuffer.wrap(item).putLong(nowMicros());
                            q.put(item);
                        } catch (Exception e) {
                            synchronized (firstError) {
                                if (errors.getAndIncrement() == 0) {
                                    firstError[0] = e.toString();
                                }
                            }
                        }
                    }
                });
                th.start();
                threads.add(th);
            }
            for (Thread th : threads) {
                th.join();
            }
        } finally {
            for (DistributedQueue<byte[]> q : queues) {
                try {
                    q.close();
                } catch (Exception e) {
                    // closing the clients anyway
                }
            }
            for (CuratorFramework c : clients) {
                c.close();
            }
        }
        StringBuilder b = new StringBuilder("{\"ops\":").append(lats.size()).append(",\"lat_us\":[");
        for (int i = 0; i < lats.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(lats.get(i));
        }
        return b.append("],\"errors\":").append(errors.get()).append(",\"first_error\":").append(quote(firstError[0]))
            .append('}').toString();
    }

    static String herdStart(String path, int consumers) throws Exception {
        closeHerd();
        herdTaken.set(0);
        for (int i = 0; i < consumers; i++) {
            CuratorFramework c = client();
            herd.add(c);
            DistributedQueue<byte[]> q = queue(c, consumer(item -> herdTaken.incrementAndGet()), path, false);
            herd.add(0, q); // queues close before clients
        }
        CuratorFramework c = client();
        herd.add(c);
        herdProducer = queue(c, null, path, false);
        herd.add(0, herdProducer);
        Thread.sleep(1000); // every consumer has read the empty queue and waits
        return "{\"started\":true}";
    }

    static String herdPut(int items) throws Exception {
        for (int i = 0; i < items; i++) {
            long before = herdTaken.get();
            herdProducer.put(new byte[32]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (herdTaken.get() == before) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("item " + i + " not taken within 30 s");
                }
                Thread.sleep(1);
            }
        }
        Thread.sleep(500); // the last item's notifications and reads settle
        return "{\"ops\":" + items + "}";
    }

    static void closeHerd() {
        for (AutoCloseable x : herd) {
            try {
                x.close();
            } catch (Exception e) {
                // closing the rest anyway
            }
        }
        herd.clear();
        herdProducer = null;
    }

    static String drain(String path, int items, long maxMs) throws Exception {
        long before = used();
        AtomicLong taken = new AtomicLong();
        int tenth = Math.max(1, items / 10);
        long[] marks = new long[4]; // tenth taken, half, items-tenth taken, all taken (nanoTime)
        long[] firstTaken = new long[1];
        AtomicLong latest = new AtomicLong();
        CuratorFramework c = client();
        DistributedQueue<byte[]> q = null;
        long heap = 0;
        boolean heapAtStop = false;
        long t0 = System.nanoTime();
        try {
            q = queue(c, consumer(item -> {
                long n = taken.incrementAndGet();
                long now = System.nanoTime();
                latest.set(now);
                synchronized (marks) {
                    if (n == 1) {
                        firstTaken[0] = now;
                    }
                    if (n == tenth) {
                        marks[0] = now;
                    }
                    if (n == items / 2) {
                        marks[1] = now;
                        marks.notifyAll();
                    }
                    if (n == items - tenth) {
                        marks[2] = now;
                    }
                    if (n == items) {
                        marks[3] = now;
                        marks.notifyAll();
                    }
                }
            }), path, false);
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(maxMs);
            synchronized (marks) {
                while (marks[1] == 0 && System.nanoTime() < deadline) {
                    marks.wait(100);
                }
            }
            if (marks[1] != 0) {
                heap = used() - before;
            }
            synchronized (marks) {
                while (marks[3] == 0 && System.nanoTime() < deadline) {
                    marks.wait(100);
                }
            }
            if (marks[1] == 0) {
                heapAtStop = true; // half-drain not reached: the heap now, still consuming
                heap = used() - before;
            }
        } finally {
            if (q != null) {
                q.close();
            }
            c.close();
        }
        long firstNs = marks[0] == 0 ? 0 : marks[0] - firstTaken[0];
        long lastNs = marks[3] == 0 || marks[2] == 0 ? 0 : marks[3] - marks[2];
        long spanNs = firstTaken[0] == 0 ? 0 : latest.get() - firstTaken[0];
        return "{\"ops\":" + taken.get() + ",\"first_ns\":" + firstNs + ",\"last_ns\":" + lastNs + ",\"span_ns\":" + spanNs
            + ",\"heap_bytes\":" + heap + ",\"heap_at_stop\":" + heapAtStop + "}";
    }

    /** The JVM's used heap after full collections. */
    static long used() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }
}
