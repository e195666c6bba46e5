// CacheBench runs go-curator's cache case with Apache Curator 5.4's
// CuratorCache, so that bench/ can print Curator's figures beside
// go-curator's cache.Tree from the same run on the same ZooKeeper server.
//
// Usage: java -cp <classes>:<jars> CacheBench <connectString>
//
// It writes {"ready":true}, then reads one command per line on stdin and
// answers each with one line of JSON on stdout:
//
//	connect                    connect a new CuratorFramework (its own
//	                           session), closing the last; {"connected":true}
//	load <path> <data|nodata>  cache the tree at path with a CuratorCache
//	                           (nodata:
//	                           CuratorCacheStorage.dataNotCached()); answers
//	                           {"load_ns":N,"heap_bytes":N,"nodes":N}: from
//	                           start() to initialized(), and the JVM's used
//	                           heap after System.gc() before and after
//	count                      zero the NODE_CHANGED count; {"counting":true}
//	events                     {"events":N}: NODE_CHANGED since count
//	close                      close the cache, not its client; {"closed":true}
//	cycles <path> <n>          n times: build, start, wait for initialized,
//	                           close a CuratorCache at path; {"cycles":n}
//	drop                       close the client; {"dropped":true}
//	quit
//
// The Go side reads the server's watches between the commands.
//
// A failure answers {"fatal":"..."}. Curator and ZooKeeper log through
// slf4j to stderr; stdout carries the protocol only.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.CuratorCacheStorage;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CacheBench {
    /** Session and connection timeouts, as the Go side uses. */
    static final int SESSION_MS = 15000, CONNECT_MS = 15000;

    static PrintStream out;
    static String connect;
    static CuratorFramework client;
    static CuratorCache cache;
    static final AtomicLong changes = new AtomicLong();

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CacheBench <connectString>");
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
                break;
            }
            try {
                out.println(execute(f));
            } catch (Throwable t) {
                out.println("{\"fatal\":" + quote(t.toString()) + "}");
            }
        }
        if (cache != null) {
            cache.close();
        }
        if (client != null) {
            client.close();
        }
        System.exit(0);
    }

    static String execute(String[] f) throws Exception {
        switch (f[0]) {
            case "connect":
                connect();
                return "{\"connected\":true}";
            case "load": {
                long before = used();
                CountDownLatch initialized = new CountDownLatch(1);
                cache = build(f[1], f[2].equals("nodata"), initialized, true);
                long t0 = System.nanoTime();
                cache.start();
                if (!initialized.await(5, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("not initialized within 5 minutes");
                }
                long loadNs = System.nanoTime() - t0;
                long after = used();
                return "{\"load_ns\":" + loadNs + ",\"heap_bytes\":" + (after - before) + ",\"nodes\":" + cache.size() + "}";
            }
            case "count":
                changes.set(0);
                return "{\"counting\":true}";
            case "events":
                return "{\"events\":" + changes.get() + "}";
            case "close":
                cache.close();
                cache = null;
                return "{\"closed\":true}";
            case "drop":
                client.close();
                client = null;
                return "{\"dropped\":true}";
            case "cycles": {
                int n = Integer.parseInt(f[2]);
                for (int i = 0; i < n; i++) {
                    CountDownLatch initialized = new CountDownLatch(1);
                    CuratorCache c = build(f[1], false, initialized, false);
                    c.start();
                    if (!initialized.await(1, TimeUnit.MINUTES)) {
                        throw new IllegalStateException("cycle " + i + ": not initialized within a minute");
                    }
                    c.close();
                }
                return "{\"cycles\":" + n + "}";
            }
            default:
                throw new IllegalArgumentException("bad command: " + String.join(" ", f));
        }
    }

    /** Connects a new client, closing the last one. */
    static void connect() throws InterruptedException {
        if (client != null) {
            client.close();
        }
        // No EnsembleTracker: its watch on /zookeeper/config, set in the
        // background, would fall into the cache's watch count (go-curator
        // has no tracker).
        client = CuratorFrameworkFactory.builder().connectString(connect).ensembleTracker(false)
            .sessionTimeoutMs(SESSION_MS).connectionTimeoutMs(CONNECT_MS)
            .retryPolicy(new ExponentialBackoffRetry(100, 10)).build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected within 30 s");
        }
    }

    static CuratorCache build(String path, boolean noData, CountDownLatch initialized, boolean count) {
        CuratorCache c = noData
            ? CuratorCache.builder(client, path).withStorage(CuratorCacheStorage.dataNotCached()).build()
            : CuratorCache.build(client, path);
        c.listenable().addListener(new CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                if (count && type == Type.NODE_CHANGED) {
                    changes.incrementAndGet();
                }
            }

            @Override
            public void initialized() {
                initialized.countDown();
            }
        });
        return c;
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
