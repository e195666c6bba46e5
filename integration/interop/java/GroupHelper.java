// GroupHelper drives Apache Curator's GroupMember for go-curator's group
// membership interop tests. It speaks the protocol of CuratorHelper: one
// command per line on stdin, one reply line per command on stdout, "OK ..."
// or "ERR ...". Data travels as hex ("-" for none).
//
// Commands:
//
//	ping
//	connect <connectString> <sessionTimeoutMs> -> OK <session id>
//	gm.start <path> <id> <hex>   a GroupMember with that payload; OK once started
//	gm.members <path>            -> OK <id>:<hex> ..., sorted by id (getCurrentMembers)
//	gm.set <path> <hex>          setThisData
//	gm.close <path>              closes the GroupMember (it leaves)
//	session                      -> OK <session id>, in hex
//	expire                       expires this helper's session (a second
//	                             connection with its ID and password closes
//	                             it), then waits until Curator has a new one
//	close                        -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only (System.out is redirected to stderr).

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.zookeeper.ZooKeeper;

public final class GroupHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private String connectString;
    private int sessionTimeoutMs;
    private final Map<String, GroupMember> members = new HashMap<>();

    public static void main(String[] args) throws Exception {
        GroupHelper h = new GroupHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private GroupMember member(String path) {
        GroupMember m = members.get(path);
        if (m == null) {
            throw new IllegalArgumentException("no GroupMember at " + path);
        }
        return m;
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "OK pong";
            case "connect":
                LineProtocol.need(a, 3);
                connectString = a[1];
                sessionTimeoutMs = Integer.parseInt(a[2]);
                client = LineProtocol.newClient(connectString, sessionTimeoutMs);
                return "OK " + sessionID();
            case "gm.start": {
                LineProtocol.need(a, 4);
                if (members.containsKey(a[1])) {
                    throw new IllegalStateException("a GroupMember at " + a[1] + " already runs");
                }
                GroupMember m = new GroupMember(client(), a[1], a[2], LineProtocol.unhex(a[3]));
                m.start();
                members.put(a[1], m);
                return "OK";
            }
            case "gm.members": {
                LineProtocol.need(a, 2);
                Map<String, String> sorted = new TreeMap<>();
                for (Map.Entry<String, byte[]> e : member(a[1]).getCurrentMembers().entrySet()) {
                    sorted.put(e.getKey(), e.getKey() + ":" + LineProtocol.hex(e.getValue()));
                }
                StringBuilder b = new StringBuilder("OK");
                for (String s : sorted.values()) {
                    b.append(' ').append(s);
                }
                return b.toString();
            }
            case "gm.set":
                LineProtocol.need(a, 3);
                member(a[1]).setThisData(LineProtocol.unhex(a[2]));
                return "OK";
            case "gm.close":
                LineProtocol.need(a, 2);
                member(a[1]).close();
                members.remove(a[1]);
                return "OK";
            case "session":
                return "OK " + sessionID();
            case "expire":
                return expire();
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private String sessionID() throws Exception {
        return Long.toHexString(client().getZookeeperClient().getZooKeeper().getSessionId());
    }

    private String expire() throws Exception {
        ZooKeeper zk = client().getZookeeperClient().getZooKeeper();
        long id = zk.getSessionId();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(connectString, sessionTimeoutMs, ev -> {
            if (ev.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, id, zk.getSessionPasswd());
        if (!connected.await(20, TimeUnit.SECONDS)) {
            twin.close();
            throw new IllegalStateException("could not attach to session " + Long.toHexString(id));
        }
        twin.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            ZooKeeper now = client().getZookeeperClient().getZooKeeper();
            if (now.getSessionId() != id && now.getSessionId() != 0 && now.getState().isConnected()) {
                return "OK " + Long.toHexString(now.getSessionId());
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("no new session within 30 s after expiring " + Long.toHexString(id));
    }

    private void closeAll() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        for (GroupMember m : members.values()) {
            try {
                m.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        c.close();
    }
}
