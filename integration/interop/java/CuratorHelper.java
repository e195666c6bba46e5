// CuratorHelper drives Apache Curator's recipes for go-curator's interop
// tests. It reads one command per line on stdin and writes one reply line
// per command on stdout: "OK ..." or "ERR ...". Lines that start with
// "EVENT " are asynchronous notices (listeners), not replies.
//
// One process is one CuratorFramework, so one ZooKeeper session. Recipe
// objects are cached per path, so a lock acquired by one command is released
// by a later one. Commands run one at a time on the main thread, which keeps
// Curator's per-thread reentrancy simple: the process is one Java "thread"
// contending with everybody else.
//
// Commands (times in milliseconds):
//
//	ping | session
//	version                                   -> OK <curator-recipes version>
//	connect <connectString> <sessionTimeoutMs>
//	mutex.acquire <path> <timeoutMs>          -> OK true|false
//	mutex.release <path>
//	mutex.participants <path>                 -> OK <node paths in queue order>
//	read.acquire|write.acquire <path> [timeoutMs] -> OK true|false
//	read.release|write.release <path>
//	rw.participants <path>                    -> OK <read and write nodes in queue order>
//	rw.revocable <path> <read|write>          -> OK; then "EVENT revoked <side> <path>" on a revoke
//	revoke <nodePath>                         -> OK (Revoker.attemptRevoke)
//	sem.acquire <path> <maxLeases> <qty> <timeoutMs> -> OK true|false
//	sem.returnall <path>                      -> OK <leases returned>
//	sem.participants <path> <maxLeases>       -> OK <lease node names>
//	semmutex.acquire <path> [timeoutMs]       -> OK true|false
//	semmutex.release <path>
//	barrier.set|barrier.remove <path>
//	barrier.wait <path> [timeoutMs]           -> OK true|false
//	dbarrier.enter|dbarrier.leave <path> <memberQty> [timeoutMs] -> OK true|false
//	count.get <path>                          -> OK <value> <version>
//	count.set <path> <n>
//	count.tryset <path> <n>                   -> OK true|false (with the cached version)
//	count.trysetstale <path> <n>              -> OK <value> <version>; the next
//	                                             line must be "go", whose reply is
//	                                             OK true|false from trySetCount
//	                                             with the version read before
//	count.listen <path>                       -> OK; then "EVENT count <n>" lines
//	along.increment <path> [promotedLockPath] -> OK <succeeded> <pre> <post>
//	along.get <path>                          -> OK <succeeded> <value>
//	isprotected <nodeName>                    -> OK true <id> <normalized> | OK false
//	create <path> <persistent|ephemeral|persistent_sequential|ephemeral_sequential> [protected]
//	                                          -> OK <created path>
//	children <path>                           -> OK <names, as the server lists them>
//	close                                     -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only (System.out is redirected to stderr).

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;

public final class CuratorHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;

    private final Map<String, InterProcessMutex> mutexes = new HashMap<>();
    private final Map<String, InterProcessReadWriteLock> rwlocks = new HashMap<>();
    private final Map<String, InterProcessSemaphoreV2> semaphores = new HashMap<>();
    private final Map<String, List<Lease>> leases = new HashMap<>();
    private final Map<String, InterProcessSemaphoreMutex> semMutexes = new HashMap<>();
    private final Map<String, DistributedBarrier> barriers = new HashMap<>();
    private final Map<String, DistributedDoubleBarrier> doubleBarriers = new HashMap<>();
    private final Map<String, SharedCount> counts = new HashMap<>();
    private final Map<String, DistributedAtomicLong> longs = new HashMap<>();

    public static void main(String[] args) throws Exception {
        CuratorHelper h = new CuratorHelper();
        h.proto.serve(h::handle, h::closeClient);
    }

    private static long optMs(String[] a, int i) {
        return a.length > i ? Long.parseLong(a[i]) : -1;
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private static String joined(Collection<String> items) {
        return String.join(" ", items);
    }

    private static String ok(Object... parts) {
        StringBuilder b = new StringBuilder("OK");
        for (Object p : parts) {
            b.append(' ').append(p);
        }
        return b.toString();
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return ok("pong");
            case "version":
                return ok(curatorVersion());
            case "session":
                return ok(Long.toHexString(client().getZookeeperClient().getZooKeeper().getSessionId()));
            case "connect":
                LineProtocol.need(a, 3);
                return connect(a[1], Integer.parseInt(a[2]));
            case "mutex.acquire":
                LineProtocol.need(a, 3);
                return ok(mutex(a[1]).acquire(Long.parseLong(a[2]), TimeUnit.MILLISECONDS));
            case "mutex.release":
                LineProtocol.need(a, 2);
                mutex(a[1]).release();
                return ok();
            case "mutex.participants":
                LineProtocol.need(a, 2);
                return ok(joined(mutex(a[1]).getParticipantNodes()));
            case "read.acquire":
            case "write.acquire": {
                LineProtocol.need(a, 2);
                InterProcessMutex m = a[0].startsWith("read") ? rwlock(a[1]).readLock() : rwlock(a[1]).writeLock();
                long ms = optMs(a, 2);
                if (ms < 0) {
                    m.acquire();
                    return ok(true);
                }
                return ok(m.acquire(ms, TimeUnit.MILLISECONDS));
            }
            case "read.release":
                LineProtocol.need(a, 2);
                rwlock(a[1]).readLock().release();
                return ok();
            case "write.release":
                LineProtocol.need(a, 2);
                rwlock(a[1]).writeLock().release();
                return ok();
            case "rw.participants": {
                LineProtocol.need(a, 2);
                // Both sides' nodes, in the order the lock queues them.
                List<String> all = new ArrayList<>(rwlock(a[1]).writeLock().getParticipantNodes());
                all.addAll(rwlock(a[1]).readLock().getParticipantNodes());
                all.sort((x, y) -> seq(x).compareTo(seq(y)));
                return ok(joined(all));
            }
            case "rw.revocable": {
                LineProtocol.need(a, 3);
                String side = a[2];
                InterProcessMutex m = side.equals("read") ? rwlock(a[1]).readLock() : rwlock(a[1]).writeLock();
                m.makeRevocable(l -> proto.emit("EVENT revoked " + side + " " + a[1]));
                return ok();
            }
            case "revoke":
                LineProtocol.need(a, 2);
                Revoker.attemptRevoke(client(), a[1]);
                return ok();
            case "sem.acquire": {
                LineProtocol.need(a, 5);
                InterProcessSemaphoreV2 s = semaphore(a[1], Integer.parseInt(a[2]));
                Collection<Lease> got = s.acquire(Integer.parseInt(a[3]), Long.parseLong(a[4]), TimeUnit.MILLISECONDS);
                if (got == null) {
                    return ok(false);
                }
                leases.computeIfAbsent(a[1], k -> new ArrayList<>()).addAll(got);
                return ok(true);
            }
            case "sem.returnall": {
                LineProtocol.need(a, 2);
                List<Lease> held = leases.remove(a[1]);
                InterProcessSemaphoreV2 s = semaphores.get(a[1]);
                if (held == null || s == null) {
                    return ok(0);
                }
                s.returnAll(held);
                return ok(held.size());
            }
            case "sem.participants":
                LineProtocol.need(a, 3);
                return ok(joined(semaphore(a[1], Integer.parseInt(a[2])).getParticipantNodes()));
            case "semmutex.acquire": {
                LineProtocol.need(a, 2);
                long ms = optMs(a, 2);
                if (ms < 0) {
                    semMutex(a[1]).acquire();
                    return ok(true);
                }
                return ok(semMutex(a[1]).acquire(ms, TimeUnit.MILLISECONDS));
            }
            case "semmutex.release":
                LineProtocol.need(a, 2);
                semMutex(a[1]).release();
                return ok();
            case "barrier.set":
                LineProtocol.need(a, 2);
                barrier(a[1]).setBarrier();
                return ok();
            case "barrier.remove":
                LineProtocol.need(a, 2);
                barrier(a[1]).removeBarrier();
                return ok();
            case "barrier.wait": {
                LineProtocol.need(a, 2);
                long ms = optMs(a, 2);
                if (ms < 0) {
                    barrier(a[1]).waitOnBarrier();
                    return ok(true);
                }
                return ok(barrier(a[1]).waitOnBarrier(ms, TimeUnit.MILLISECONDS));
            }
            case "dbarrier.enter":
            case "dbarrier.leave": {
                LineProtocol.need(a, 3);
                DistributedDoubleBarrier b = doubleBarrier(a[1], Integer.parseInt(a[2]));
                long ms = optMs(a, 3);
                boolean enter = a[0].endsWith("enter");
                if (ms < 0) {
                    if (enter) {
                        b.enter();
                    } else {
                        b.leave();
                    }
                    return ok(true);
                }
                return ok(enter ? b.enter(ms, TimeUnit.MILLISECONDS) : b.leave(ms, TimeUnit.MILLISECONDS));
            }
            case "count.get": {
                LineProtocol.need(a, 2);
                VersionedValue<Integer> v = count(a[1]).getVersionedValue();
                return ok(v.getValue(), v.getVersion());
            }
            case "count.set":
                LineProtocol.need(a, 3);
                count(a[1]).setCount(Integer.parseInt(a[2]));
                return ok();
            case "count.tryset":
                LineProtocol.need(a, 3);
                return ok(count(a[1]).trySetCount(count(a[1]).getVersionedValue(), Integer.parseInt(a[2])));
            case "count.trysetstale":
                LineProtocol.need(a, 3);
                return trySetStale(count(a[1]), Integer.parseInt(a[2]));
            case "count.listen":
                LineProtocol.need(a, 2);
                count(a[1]).addListener(new SharedCountListener() {
                    @Override
                    public void countHasChanged(SharedCountReader r, int n) {
                        proto.emit("EVENT count " + n);
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState s) {
                        proto.emit("EVENT state " + s);
                    }
                });
                return ok();
            case "along.increment": {
                LineProtocol.need(a, 2);
                AtomicValue<Long> v = atomicLong(a[1], a.length > 2 ? a[2] : null).increment();
                return ok(v.succeeded(), v.preValue(), v.postValue());
            }
            case "along.get": {
                LineProtocol.need(a, 2);
                AtomicValue<Long> v = atomicLong(a[1], null).get();
                return ok(v.succeeded(), v.postValue());
            }
            case "isprotected": {
                LineProtocol.need(a, 2);
                if (!ProtectedUtils.isProtectedZNode(a[1])) {
                    return ok(false);
                }
                Optional<String> id = ProtectedUtils.extractProtectedId(a[1]);
                return ok(true, id.orElse("?"), ProtectedUtils.normalize(a[1]));
            }
            case "create":
                LineProtocol.need(a, 3);
                return create(a[1], a[2], a.length > 3 && a[3].equals("protected"));
            case "children":
                LineProtocol.need(a, 2);
                return ok(joined(client().getChildren().forPath(a[1])));
            case "close":
                closeClient();
                return ok();
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    // curatorVersion reads curator-recipes' version from its Maven metadata.
    private static String curatorVersion() throws Exception {
        try (java.io.InputStream in = InterProcessMutex.class.getResourceAsStream(
                "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
            if (in == null) {
                return "unknown";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        }
    }

    // seq returns the sequence suffix that Curator sorts lock nodes by.
    private static String seq(String node) {
        return node.length() >= 10 ? node.substring(node.length() - 10) : node;
    }

    private String connect(String connectString, int sessionTimeoutMs) throws Exception {
        if (client != null) {
            throw new IllegalStateException("already connected");
        }
        CuratorFramework c = LineProtocol.newClient(connectString, sessionTimeoutMs);
        client = c;
        return ok(Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId()));
    }

    private String trySetStale(SharedCount count, int n) throws Exception {
        VersionedValue<Integer> read = count.getVersionedValue();
        proto.emit(ok(read.getValue(), read.getVersion()));
        String next = proto.nextLine();
        if (next == null) {
            throw new IllegalStateException("end of input while waiting for go");
        }
        if (!next.trim().equals("go")) {
            return "ERR IllegalArgumentException: count.trysetstale: want go, got " + next.trim();
        }
        return ok(count.trySetCount(read, n));
    }

    private String create(String path, String mode, boolean protect) throws Exception {
        CreateMode m;
        switch (mode) {
            case "persistent": m = CreateMode.PERSISTENT; break;
            case "ephemeral": m = CreateMode.EPHEMERAL; break;
            case "persistent_sequential": m = CreateMode.PERSISTENT_SEQUENTIAL; break;
            case "ephemeral_sequential": m = CreateMode.EPHEMERAL_SEQUENTIAL; break;
            default: throw new IllegalArgumentException("unknown create mode " + mode);
        }
        String created = protect
            ? client().create().creatingParentContainersIfNeeded().withProtection().withMode(m).forPath(path)
            : client().create().creatingParentContainersIfNeeded().withMode(m).forPath(path);
        return ok(created);
    }

    private InterProcessMutex mutex(String path) {
        return mutexes.computeIfAbsent(path, p -> new InterProcessMutex(client(), p));
    }

    private InterProcessReadWriteLock rwlock(String path) {
        return rwlocks.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client(), p));
    }

    private InterProcessSemaphoreV2 semaphore(String path, int maxLeases) {
        return semaphores.computeIfAbsent(path, p -> new InterProcessSemaphoreV2(client(), p, maxLeases));
    }

    private InterProcessSemaphoreMutex semMutex(String path) {
        return semMutexes.computeIfAbsent(path, p -> new InterProcessSemaphoreMutex(client(), p));
    }

    private DistributedBarrier barrier(String path) {
        return barriers.computeIfAbsent(path, p -> new DistributedBarrier(client(), p));
    }

    private DistributedDoubleBarrier doubleBarrier(String path, int memberQty) {
        return doubleBarriers.computeIfAbsent(path, p -> new DistributedDoubleBarrier(client(), p, memberQty));
    }

    private SharedCount count(String path) throws Exception {
        SharedCount c = counts.get(path);
        if (c == null) {
            c = new SharedCount(client(), path, 0);
            c.start();
            counts.put(path, c);
        }
        return c;
    }

    private DistributedAtomicLong atomicLong(String path, String lockPath) {
        String key = path + "\u0000" + (lockPath == null ? "" : lockPath);
        return longs.computeIfAbsent(key, k -> {
            RetryPolicy optimistic = new RetryNTimes(3, 5);
            if (lockPath == null) {
                return new DistributedAtomicLong(client(), path, optimistic);
            }
            PromotedToLock promoted = PromotedToLock.builder()
                .lockPath(lockPath)
                .retryPolicy(new RetryNTimes(10, 10))
                .timeout(10, TimeUnit.SECONDS)
                .build();
            return new DistributedAtomicLong(client(), path, optimistic, promoted);
        });
    }

    private void closeClient() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        try {
            for (SharedCount s : new ArrayList<>(counts.values())) {
                s.close();
            }
        } catch (Exception e) {
            // closing the session anyway
        }
        c.close();
    }
}
