// LeaderHelper drives Apache Curator's LeaderLatch and LeaderSelector for
// go-curator's interop tests and fail-over benchmark. It speaks the same
// line protocol as CuratorHelper: one command per line on stdin, one reply
// line per command on stdout ("OK ..." or "ERR ..."); lines that start
// with "EVENT " are asynchronous notices, not replies.
//
// One process is one CuratorFramework, so one ZooKeeper session. Latches
// and selectors are kept by a name the test chooses, so that one process
// can run several candidates.
//
// Commands (times in milliseconds, instants in microseconds since the Unix
// epoch):
//
//	ping | version | session | close
//	connect <connectString> <sessionTimeoutMs>
//	latch.start <name> <path> <id> [silent|notify]
//	latch.await <name> <timeoutMs>            -> OK true|false
//	latch.has <name>                          -> OK true|false
//	latch.ourpath <name>                      -> OK <node path>|-
//	latch.participants <name>                 -> OK <id>=<isLeader> ... (line order)
//	latch.leader <name>                       -> OK <id>=<isLeader>
//	latch.close <name> [silent|notify]
//	selector.start <name> <path> <id> [requeue]
//	selector.release <name>                   -> OK true|false: ends the running takeLeadership
//	selector.interrupt <name>
//	selector.has <name>                       -> OK true|false
//	selector.participants|selector.leader <name>
//	selector.close <name>
//	failover.close <path> <rounds>            -> OK <µs per round>: a latch on this client
//	                                             leads, a latch on a second client waits; the
//	                                             time from the leader's close() to the
//	                                             waiter's isLeader
//
// Events:
//
//	EVENT latch <name> leader|notleader <epochµs>
//	EVENT selector <name> leader|done|interrupted <epochµs>
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only (System.out is redirected to stderr).

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

public final class LeaderHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private String connectString;
    private int sessionTimeoutMs;

    private final Map<String, LeaderLatch> latches = new HashMap<>();
    private final Map<String, Candidate> selectors = new HashMap<>();

    /** A LeaderSelector whose takeLeadership waits for selector.release. */
    private final class Candidate extends LeaderSelectorListenerAdapter {
        final String name;
        final Semaphore release = new Semaphore(0);
        volatile boolean leading;
        LeaderSelector selector;

        Candidate(String name) {
            this.name = name;
        }

        @Override
        public void takeLeadership(CuratorFramework c) throws Exception {
            release.drainPermits();
            leading = true;
            proto.emit("EVENT selector " + name + " leader " + nowMicros());
            try {
                release.acquire();
                proto.emit("EVENT selector " + name + " done " + nowMicros());
            } catch (InterruptedException e) {
                proto.emit("EVENT selector " + name + " interrupted " + nowMicros());
                Thread.currentThread().interrupt();
                throw e;
            } finally {
                leading = false;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        LeaderHelper h = new LeaderHelper();
        h.proto.serve(h::handle, h::closeClient);
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static String ok(Object... parts) {
        StringBuilder b = new StringBuilder("OK");
        for (Object p : parts) {
            b.append(' ').append(p);
        }
        return b.toString();
    }

    private static String participants(Collection<Participant> ps) {
        List<String> words = new ArrayList<>();
        for (Participant p : ps) {
            words.add(p.getId() + "=" + p.isLeader());
        }
        return String.join(" ", words);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private LeaderLatch latch(String name) {
        LeaderLatch l = latches.get(name);
        if (l == null) {
            throw new IllegalArgumentException("no latch " + name);
        }
        return l;
    }

    private Candidate candidate(String name) {
        Candidate c = selectors.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no selector " + name);
        }
        return c;
    }

    private static LeaderLatch.CloseMode closeMode(String[] a, int i) {
        if (a.length <= i || a[i].equals("silent")) {
            return LeaderLatch.CloseMode.SILENT;
        }
        if (a[i].equals("notify")) {
            return LeaderLatch.CloseMode.NOTIFY_LEADER;
        }
        throw new IllegalArgumentException("close mode: want silent or notify, got " + a[i]);
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
                if (client != null) {
                    throw new IllegalStateException("already connected");
                }
                connectString = a[1];
                sessionTimeoutMs = Integer.parseInt(a[2]);
                client = newClient();
                return ok(Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
            case "latch.start": {
                LineProtocol.need(a, 4);
                if (latches.containsKey(a[1])) {
                    throw new IllegalArgumentException("latch " + a[1] + " exists");
                }
                String name = a[1];
                LeaderLatch l = new LeaderLatch(client(), a[2], a[3], closeMode(a, 4));
                l.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        proto.emit("EVENT latch " + name + " leader " + nowMicros());
                    }

                    @Override
                    public void notLeader() {
                        proto.emit("EVENT latch " + name + " notleader " + nowMicros());
                    }
                });
                l.start();
                latches.put(name, l);
                return ok();
            }
            case "latch.await":
                LineProtocol.need(a, 3);
                return ok(latch(a[1]).await(Long.parseLong(a[2]), TimeUnit.MILLISECONDS));
            case "latch.has":
                LineProtocol.need(a, 2);
                return ok(latch(a[1]).hasLeadership());
            case "latch.ourpath": {
                LineProtocol.need(a, 2);
                String p = latch(a[1]).getOurPath();
                return ok(p == null ? "-" : p);
            }
            case "latch.participants":
                LineProtocol.need(a, 2);
                return ok(participants(latch(a[1]).getParticipants()));
            case "latch.leader": {
                LineProtocol.need(a, 2);
                Participant p = latch(a[1]).getLeader();
                return ok(p.getId() + "=" + p.isLeader());
            }
            case "latch.close":
                LineProtocol.need(a, 2);
                latch(a[1]).close(closeMode(a, 2));
                latches.remove(a[1]);
                return ok();
            case "selector.start": {
                LineProtocol.need(a, 4);
                if (selectors.containsKey(a[1])) {
                    throw new IllegalArgumentException("selector " + a[1] + " exists");
                }
                Candidate c = new Candidate(a[1]);
                c.selector = new LeaderSelector(client(), a[2], c);
                c.selector.setId(a[3]);
                if (a.length > 4 && a[4].equals("requeue")) {
                    c.selector.autoRequeue();
                }
                c.selector.start();
                selectors.put(a[1], c);
                return ok();
            }
            case "selector.release": {
                LineProtocol.need(a, 2);
                Candidate c = candidate(a[1]);
                if (!c.leading) {
                    return ok(false);
                }
                c.release.release();
                return ok(true);
            }
            case "selector.interrupt":
                LineProtocol.need(a, 2);
                candidate(a[1]).selector.interruptLeadership();
                return ok();
            case "selector.has":
                LineProtocol.need(a, 2);
                return ok(candidate(a[1]).selector.hasLeadership());
            case "selector.participants":
                LineProtocol.need(a, 2);
                return ok(participants(candidate(a[1]).selector.getParticipants()));
            case "selector.leader": {
                LineProtocol.need(a, 2);
                Participant p = candidate(a[1]).selector.getLeader();
                return ok(p.getId() + "=" + p.isLeader());
            }
            case "selector.close":
                LineProtocol.need(a, 2);
                candidate(a[1]).selector.close();
                selectors.remove(a[1]);
                return ok();
            case "failover.close":
                LineProtocol.need(a, 3);
                return failoverClose(a[1], Integer.parseInt(a[2]));
            case "close":
                closeClient();
                return ok();
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private CuratorFramework newClient() throws InterruptedException {
        return LineProtocol.newClient(connectString, sessionTimeoutMs);
    }

    // failoverClose measures, rounds times on fresh paths under path, the time
    // from the leader's close() to the next candidate's isLeader.
    private String failoverClose(String path, int rounds) throws Exception {
        CuratorFramework second = newClient();
        try {
            List<Long> micros = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                String p = path + "/r" + r;
                LeaderLatch leader = new LeaderLatch(client(), p, "a");
                leader.start();
                if (!leader.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("round " + r + ": no leadership");
                }
                LeaderLatch next = new LeaderLatch(second, p, "b");
                AtomicLong elected = new AtomicLong();
                CountDownLatch led = new CountDownLatch(1);
                next.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        elected.set(System.nanoTime());
                        led.countDown();
                    }

                    @Override
                    public void notLeader() {
                    }
                });
                next.start();
                while (client().getChildren().forPath(p).size() < 2) {
                    Thread.sleep(5);
                }
                Thread.sleep(100); // let it set its watch
                long t0 = System.nanoTime();
                leader.close();
                if (!led.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("round " + r + ": the next candidate was not elected");
                }
                micros.add((elected.get() - t0) / 1000);
                next.close();
            }
            return ok(micros.stream().map(String::valueOf).toArray());
        } finally {
            second.close();
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

    private void closeClient() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        for (Candidate s : new ArrayList<>(selectors.values())) {
            try {
                s.selector.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        for (LeaderLatch l : new ArrayList<>(latches.values())) {
            try {
                l.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        c.close();
    }
}
