// AtomicHelper drives Apache Curator's DistributedAtomicInteger,
// DistributedAtomicValue and CachedAtomicLong for go-curator's atomicvalue
// interop tests. It speaks the protocol of CuratorHelper: one command per
// line on stdin, one reply line per command on stdout, "OK ..." or
// "ERR ...". Data travels as hex ("-" for none, "null" for Java's null).
// An optional last word names a PromotedToLock path (RetryNTimes(10, 10),
// 10 s timeout); without it the recipe is optimistic only
// (RetryNTimes(3, 5)).
//
// Commands:
//
//	ping
//	connect <connectString> <sessionTimeoutMs> -> OK
//	aint.get <path>                         -> OK <succeeded> <pre> <post>
//	aint.increment <path> [lock]            -> OK <succeeded> <pre> <post>
//	aint.cas <path> <expected> <new>        -> OK <succeeded> <pre> <post>
//	aint.force <path> <n>                   -> OK
//	aval.get <path>                         -> OK <succeeded> <preHex> <postHex>
//	aval.tryset <path> <hex> [lock]         -> OK <succeeded> <preHex> <postHex>
//	aval.cas <path> <expectedHex> <newHex>  -> OK <succeeded> <preHex> <postHex>
//	aval.init <path> <hex>                  -> OK <created>
//	cached.next <path> <factor>             -> OK <succeeded> <pre> <post>
//	close                                   -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only.

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.CachedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicValue;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.RetryNTimes;

public final class AtomicHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private final Map<String, CachedAtomicLong> cached = new HashMap<>();

    public static void main(String[] args) throws Exception {
        AtomicHelper h = new AtomicHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private static RetryPolicy optimistic() {
        return new RetryNTimes(3, 5);
    }

    private static PromotedToLock promoted(String[] a, int i) {
        if (a.length <= i) {
            return null;
        }
        return PromotedToLock.builder().lockPath(a[i]).retryPolicy(new RetryNTimes(10, 10))
            .timeout(10, TimeUnit.SECONDS).build();
    }

    private DistributedAtomicInteger integer(String path, PromotedToLock p) {
        return p == null ? new DistributedAtomicInteger(client(), path, optimistic())
            : new DistributedAtomicInteger(client(), path, optimistic(), p);
    }

    private DistributedAtomicValue value(String path, PromotedToLock p) {
        return p == null ? new DistributedAtomicValue(client(), path, optimistic())
            : new DistributedAtomicValue(client(), path, optimistic(), p);
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "OK pong";
            case "connect":
                LineProtocol.need(a, 3);
                client = LineProtocol.newClient(a[1], Integer.parseInt(a[2]));
                return "OK";
            case "aint.get":
                LineProtocol.need(a, 2);
                return ints(integer(a[1], null).get());
            case "aint.increment":
                LineProtocol.need(a, 2);
                return ints(integer(a[1], promoted(a, 2)).increment());
            case "aint.cas":
                LineProtocol.need(a, 4);
                return ints(integer(a[1], null).compareAndSet(Integer.parseInt(a[2]), Integer.parseInt(a[3])));
            case "aint.force":
                LineProtocol.need(a, 3);
                integer(a[1], null).forceSet(Integer.parseInt(a[2]));
                return "OK";
            case "aval.get":
                LineProtocol.need(a, 2);
                return bytes(value(a[1], null).get());
            case "aval.tryset":
                LineProtocol.need(a, 3);
                return bytes(value(a[1], promoted(a, 3)).trySet(unhex(a[2])));
            case "aval.cas":
                LineProtocol.need(a, 4);
                return bytes(value(a[1], null).compareAndSet(unhex(a[2]), unhex(a[3])));
            case "aval.init":
                LineProtocol.need(a, 3);
                return "OK " + value(a[1], null).initialize(unhex(a[2]));
            case "cached.next": {
                LineProtocol.need(a, 3);
                CachedAtomicLong c = cached.computeIfAbsent(a[1] + "\u0000" + a[2], k ->
                    new CachedAtomicLong(new DistributedAtomicLong(client(), a[1], optimistic()), Integer.parseInt(a[2])));
                AtomicValue<Long> v = c.next();
                return "OK " + v.succeeded() + " " + v.preValue() + " " + v.postValue();
            }
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private static String ints(AtomicValue<Integer> v) {
        return "OK " + v.succeeded() + " " + v.preValue() + " " + v.postValue();
    }

    private static String bytes(AtomicValue<byte[]> v) {
        return "OK " + v.succeeded() + " " + hex(v.preValue()) + " " + hex(v.postValue());
    }

    private static String hex(byte[] b) {
        if (b == null) {
            return "null";
        }
        if (b.length == 0) {
            return "-";
        }
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    private static byte[] unhex(String s) {
        if (s.equals("null")) {
            return null;
        }
        if (s.equals("-")) {
            return new byte[0];
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    private void closeAll() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        c.close();
    }
}
