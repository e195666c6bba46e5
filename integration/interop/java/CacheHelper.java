// CacheHelper drives Apache Curator's caches (CuratorCache and
// PathChildrenCache) for go-curator's cache interop tests. It speaks the
// protocol of CuratorHelper: one command per line on stdin, one reply line
// per command on stdout, "OK ..." or "ERR ...", and "EVENT ..." lines for
// listener notices. Data travels as hex ("-" for none).
//
// Commands:
//
//	ping
//	connect <connectString> <sessionTimeoutMs> -> OK <session id>
//	cc.start <path>        a CuratorCache; OK once initialized. Events:
//	                       EVENT cc <path> <NODE_CREATED|NODE_CHANGED|NODE_DELETED> <node> <version> <hex>
//	                       EVENT cc <path> INITIALIZED
//	pcc.start <path>       a PathChildrenCache (with data); OK once initialized. Events:
//	                       EVENT pcc <path> <CHILD_ADDED|CHILD_UPDATED|CHILD_REMOVED> <node> <version> <hex>
//	cc.dump <path>         -> OK <node>:<version>:<hex> ..., sorted by node
//	pcc.dump <path>        -> the same for the children cache
//	set <path> <hex>       creates (with container parents) or sets -> OK <version>
//	delete <path>          deletes, children first
//	close                  -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only (System.out is redirected to stderr).

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.PathChildrenCache;
import org.apache.curator.framework.recipes.cache.PathChildrenCacheEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class CacheHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private final Map<String, CuratorCache> caches = new HashMap<>();
    private final Map<String, PathChildrenCache> childCaches = new HashMap<>();

    public static void main(String[] args) throws Exception {
        CacheHelper h = new CacheHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "OK pong";
            case "connect":
                LineProtocol.need(a, 3);
                return connect(a[1], Integer.parseInt(a[2]));
            case "cc.start":
                LineProtocol.need(a, 2);
                return startCuratorCache(a[1]);
            case "pcc.start":
                LineProtocol.need(a, 2);
                return startChildrenCache(a[1]);
            case "cc.dump": {
                LineProtocol.need(a, 2);
                CuratorCache cc = caches.get(a[1]);
                if (cc == null) {
                    throw new IllegalArgumentException("no CuratorCache at " + a[1]);
                }
                List<ChildData> all = new ArrayList<>();
                cc.stream().forEach(all::add);
                return dump(all);
            }
            case "pcc.dump": {
                LineProtocol.need(a, 2);
                PathChildrenCache pcc = childCaches.get(a[1]);
                if (pcc == null) {
                    throw new IllegalArgumentException("no PathChildrenCache at " + a[1]);
                }
                return dump(pcc.getCurrentData());
            }
            case "set": {
                LineProtocol.need(a, 3);
                byte[] data = LineProtocol.unhex(a[2]);
                try {
                    Stat st = client().setData().forPath(a[1], data);
                    return "OK " + st.getVersion();
                } catch (KeeperException.NoNodeException e) {
                    client().create().creatingParentContainersIfNeeded().forPath(a[1], data);
                    return "OK 0";
                }
            }
            case "delete":
                LineProtocol.need(a, 2);
                client().delete().deletingChildrenIfNeeded().forPath(a[1]);
                return "OK";
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private String connect(String connectString, int sessionTimeoutMs) throws Exception {
        if (client != null) {
            throw new IllegalStateException("already connected");
        }
        CuratorFramework c = LineProtocol.newClient(connectString, sessionTimeoutMs);
        client = c;
        return "OK " + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
    }

    private String startCuratorCache(String path) throws Exception {
        if (caches.containsKey(path)) {
            throw new IllegalStateException("a CuratorCache at " + path + " already runs");
        }
        CuratorCache cc = CuratorCache.build(client(), path);
        CountDownLatch initialized = new CountDownLatch(1);
        cc.listenable().addListener(new CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                ChildData d = data != null ? data : oldData;
                proto.emit("EVENT cc " + path + " " + type + " " + entry(d).replace(':', ' '));
            }

            @Override
            public void initialized() {
                proto.emit("EVENT cc " + path + " INITIALIZED");
                initialized.countDown();
            }
        });
        cc.start();
        caches.put(path, cc);
        if (!initialized.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("CuratorCache at " + path + " not initialized within 20 s");
        }
        return "OK";
    }

    private String startChildrenCache(String path) throws Exception {
        if (childCaches.containsKey(path)) {
            throw new IllegalStateException("a PathChildrenCache at " + path + " already runs");
        }
        PathChildrenCache pcc = new PathChildrenCache(client(), path, true);
        CountDownLatch initialized = new CountDownLatch(1);
        pcc.getListenable().addListener((c, ev) -> {
            switch (ev.getType()) {
                case CHILD_ADDED:
                case CHILD_UPDATED:
                case CHILD_REMOVED:
                    proto.emit("EVENT pcc " + path + " " + ev.getType() + " " + entry(ev.getData()).replace(':', ' '));
                    break;
                case INITIALIZED:
                    proto.emit("EVENT pcc " + path + " INITIALIZED");
                    initialized.countDown();
                    break;
                default:
                    proto.emit("EVENT pcc " + path + " " + ev.getType());
            }
        });
        pcc.start(PathChildrenCache.StartMode.POST_INITIALIZED_EVENT);
        childCaches.put(path, pcc);
        if (!initialized.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("PathChildrenCache at " + path + " not initialized within 20 s");
        }
        return "OK";
    }

    private static String dump(List<ChildData> all) {
        Map<String, String> sorted = new TreeMap<>();
        for (ChildData d : all) {
            sorted.put(d.getPath(), entry(d));
        }
        StringBuilder b = new StringBuilder("OK");
        for (String e : sorted.values()) {
            b.append(' ').append(e);
        }
        return b.toString();
    }

    private static String entry(ChildData d) {
        int version = d.getStat() == null ? -1 : d.getStat().getVersion();
        return d.getPath() + ":" + version + ":" + LineProtocol.hex(d.getData());
    }

    private void closeAll() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        for (CuratorCache cc : caches.values()) {
            try {
                cc.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        for (PathChildrenCache pcc : childCaches.values()) {
            try {
                pcc.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        c.close();
    }
}
