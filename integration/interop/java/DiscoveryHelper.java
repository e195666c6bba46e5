// DiscoveryHelper drives Apache Curator's service discovery
// (curator-x-discovery: ServiceDiscovery, ServiceProvider, ServiceCache)
// for go-curator's discovery interop tests. It speaks the protocol of
// CuratorHelper: one command per line on stdin, one reply line per command
// on stdout, "OK ..." or "ERR ...", and "EVENT ..." lines for listener
// notices. JSON travels as hex ("-" for none).
//
// One process is one CuratorFramework, so one ZooKeeper session, with one
// ServiceDiscovery per base path, whose payloads are Maps (Jackson reads an
// object payload without "@class" as a LinkedHashMap).
//
// Commands:
//
//	ping | session | close
//	connect <connectString> <sessionTimeoutMs> -> OK <session id>
//	register <base> <name> <id> <address> <port> <payloadHex|-> [serviceType]
//	                                 (serviceType: DYNAMIC, the default, or another of
//	                                 Curator's ServiceType names)
//	unregister <base> <name> <id>
//	names <base>                     -> OK <name> ...
//	query <base> <name>              -> OK <instance JSON hex> ... (queryForInstances, by id)
//	provider.start <base> <name>     a round-robin ServiceProvider
//	provider.pick <base> <name>      -> OK <instance JSON hex>|- (getInstance)
//	provider.error <base> <name> <id>   noteError on that instance
//	cache.start <base> <name>        a ServiceCache. Events:
//	                                 EVENT cache <name> changed <id>,... (sorted; "-" for none)
//	cache.ids <base> <name>          -> OK <id> ... (getInstances, sorted)
//	expire                           expires this client's session on the server (a second
//	                                 ZooKeeper handle on the same session, closed); Curator
//	                                 then reports LOST, opens a new session, and
//	                                 ServiceDiscovery registers its instances again
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only (System.out is redirected to stderr).

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.ZooKeeper;

@SuppressWarnings({"rawtypes", "unchecked"})
public final class DiscoveryHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private String connectString;
    private int sessionTimeoutMs;
    private final ObjectMapper mapper = new ObjectMapper();
    private final JsonInstanceSerializer<Map> serializer = new JsonInstanceSerializer<>(Map.class);
    private final Map<String, ServiceDiscovery<Map>> discoveries = new HashMap<>();
    private final Map<String, ServiceInstance<Map>> registered = new HashMap<>();
    private final Map<String, ServiceProvider<Map>> providers = new HashMap<>();
    private final Map<String, ServiceCache<Map>> caches = new HashMap<>();

    public static void main(String[] args) throws Exception {
        DiscoveryHelper h = new DiscoveryHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private ServiceDiscovery<Map> discovery(String base) throws Exception {
        ServiceDiscovery<Map> d = discoveries.get(base);
        if (d == null) {
            d = ServiceDiscoveryBuilder.builder(Map.class).client(client()).basePath(base).serializer(serializer).build();
            d.start();
            discoveries.put(base, d);
        }
        return d;
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "OK pong";
            case "connect":
                LineProtocol.need(a, 3);
                return connect(a[1], Integer.parseInt(a[2]));
            case "session":
                return "OK " + Long.toHexString(client().getZookeeperClient().getZooKeeper().getSessionId());
            case "register": {
                LineProtocol.need(a, 7);
                Map payload = a[6].equals("-") ? null : mapper.readValue(unhex(a[6]), Map.class);
                ServiceType type = a.length > 7 ? ServiceType.valueOf(a[7]) : ServiceType.DYNAMIC;
                ServiceInstance<Map> in = ServiceInstance.<Map>builder().name(a[2]).id(a[3]).address(a[4])
                    .port(Integer.parseInt(a[5])).payload(payload).serviceType(type).build();
                discovery(a[1]).registerService(in);
                registered.put(a[1] + " " + a[2] + " " + a[3], in);
                return "OK";
            }
            case "unregister": {
                LineProtocol.need(a, 4);
                ServiceInstance<Map> in = registered.remove(a[1] + " " + a[2] + " " + a[3]);
                if (in == null) {
                    throw new IllegalArgumentException("not registered here: " + a[2] + "/" + a[3]);
                }
                discovery(a[1]).unregisterService(in);
                return "OK";
            }
            case "names": {
                LineProtocol.need(a, 2);
                List<String> names = new ArrayList<>(discovery(a[1]).queryForNames());
                Collections.sort(names);
                return ("OK " + String.join(" ", names)).trim();
            }
            case "query": {
                LineProtocol.need(a, 3);
                List<ServiceInstance<Map>> all = new ArrayList<>(discovery(a[1]).queryForInstances(a[2]));
                all.sort((x, y) -> x.getId().compareTo(y.getId()));
                StringBuilder s = new StringBuilder("OK");
                for (ServiceInstance<Map> in : all) {
                    s.append(' ').append(hex(serializer.serialize(in)));
                }
                return s.toString();
            }
            case "provider.start": {
                LineProtocol.need(a, 3);
                String key = a[1] + " " + a[2];
                if (providers.containsKey(key)) {
                    throw new IllegalStateException("a provider for " + key + " already runs");
                }
                ServiceProvider<Map> p = discovery(a[1]).serviceProviderBuilder().serviceName(a[2]).build();
                p.start();
                providers.put(key, p);
                return "OK";
            }
            case "provider.pick": {
                LineProtocol.need(a, 3);
                ServiceInstance<Map> in = provider(a[1], a[2]).getInstance();
                return in == null ? "OK -" : "OK " + hex(serializer.serialize(in));
            }
            case "provider.error": {
                LineProtocol.need(a, 4);
                ServiceProvider<Map> p = provider(a[1], a[2]);
                for (ServiceInstance<Map> in : p.getAllInstances()) {
                    if (in.getId().equals(a[3])) {
                        p.noteError(in);
                        return "OK";
                    }
                }
                throw new IllegalArgumentException("no instance " + a[3]);
            }
            case "cache.start": {
                LineProtocol.need(a, 3);
                String key = a[1] + " " + a[2];
                if (caches.containsKey(key)) {
                    throw new IllegalStateException("a cache for " + key + " already runs");
                }
                ServiceCache<Map> c = discovery(a[1]).serviceCacheBuilder().name(a[2]).build();
                String name = a[2];
                c.addListener(new ServiceCacheListener() {
                    @Override
                    public void cacheChanged() {
                        proto.emit("EVENT cache " + name + " changed " + ids(c.getInstances(), ","));
                    }

                    @Override
                    public void stateChanged(CuratorFramework cl, ConnectionState s) {
                    }
                });
                c.start();
                caches.put(key, c);
                return "OK";
            }
            case "cache.ids": {
                LineProtocol.need(a, 3);
                ServiceCache<Map> c = caches.get(a[1] + " " + a[2]);
                if (c == null) {
                    throw new IllegalArgumentException("no cache for " + a[2]);
                }
                return ("OK " + ids(c.getInstances(), " ")).trim();
            }
            case "expire":
                return expire();
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private ServiceProvider<Map> provider(String base, String name) {
        ServiceProvider<Map> p = providers.get(base + " " + name);
        if (p == null) {
            throw new IllegalArgumentException("no provider for " + name);
        }
        return p;
    }

    private static String ids(List<ServiceInstance<Map>> all, String sep) {
        List<String> ids = new ArrayList<>();
        for (ServiceInstance<Map> in : all) {
            ids.add(in.getId());
        }
        Collections.sort(ids);
        return ids.isEmpty() && sep.equals(",") ? "-" : String.join(sep, ids);
    }

    private String connect(String connectString, int sessionTimeoutMs) throws Exception {
        if (client != null) {
            throw new IllegalStateException("already connected");
        }
        CuratorFramework c = LineProtocol.newClient(connectString, sessionTimeoutMs);
        this.connectString = connectString;
        this.sessionTimeoutMs = sessionTimeoutMs;
        client = c;
        return "OK " + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
    }

    // expire closes the session from a second handle, the way ZooKeeper's
    // own tests expire a session.
    private String expire() throws Exception {
        ZooKeeper zk = client().getZookeeperClient().getZooKeeper();
        long id = zk.getSessionId();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper other = new ZooKeeper(connectString, sessionTimeoutMs, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, id, zk.getSessionPasswd());
        if (!connected.await(20, TimeUnit.SECONDS)) {
            other.close();
            throw new IllegalStateException("second handle on session " + Long.toHexString(id) + " did not connect");
        }
        other.close();
        return "OK " + Long.toHexString(id);
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    private static byte[] unhex(String s) {
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
        for (ServiceCache<Map> sc : caches.values()) {
            try {
                sc.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        for (ServiceProvider<Map> p : providers.values()) {
            try {
                p.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        for (ServiceDiscovery<Map> d : discoveries.values()) {
            try {
                d.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        c.close();
    }
}
