// PayloadHelper drives Curator's service discovery with a typed payload
// class, as a Java service written against the curator-x-discovery docs
// does (JsonInstanceSerializer<Details>, whose reader needs the payload's
// "@class"), and reports Curator's idea of the local addresses. It speaks
// CuratorHelper's protocol (LineProtocol.java).
//
// Commands:
//
//	ping | close
//	connect <connectString> <sessionTimeoutMs>   -> OK <session id>
//	localips                         -> OK <ServiceInstanceBuilder.getAllLocalIPs, getHostAddress each>
//	builder.address                  -> OK <ServiceInstance.builder()'s address>|-
//	query <base> <name>              -> OK <id>=<payload class>:<zone> ... (sorted by id)
//	register <base> <name> <id> <zone>   a DYNAMIC instance with a Details payload,
//	                                 and the builder's defaults (its local address)

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceInstanceBuilder;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

public final class PayloadHelper {
    /** Details is the payload class: what "@class" names. */
    public static final class Details {
        public String zone;

        public Details() {
        }

        Details(String zone) {
            this.zone = zone;
        }
    }

    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private final Map<String, ServiceDiscovery<Details>> discoveries = new HashMap<>();

    public static void main(String[] args) throws Exception {
        PayloadHelper h = new PayloadHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private ServiceDiscovery<Details> discovery(String base) throws Exception {
        ServiceDiscovery<Details> d = discoveries.get(base);
        if (d == null) {
            d = ServiceDiscoveryBuilder.builder(Details.class).client(client).basePath(base)
                .serializer(new JsonInstanceSerializer<>(Details.class)).build();
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
                client = LineProtocol.newClient(a[1], Integer.parseInt(a[2]));
                return "OK " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
            case "localips": {
                List<String> out = new ArrayList<>();
                for (InetAddress ip : ServiceInstanceBuilder.getAllLocalIPs()) {
                    out.add(ip.getHostAddress());
                }
                return ("OK " + String.join(" ", out)).trim();
            }
            case "builder.address": {
                String adr = ServiceInstance.<Details>builder().name("x").build().getAddress();
                return "OK " + (adr == null ? "-" : adr);
            }
            case "query": {
                LineProtocol.need(a, 3);
                Collection<ServiceInstance<Details>> all = discovery(a[1]).queryForInstances(a[2]);
                List<String> out = new ArrayList<>();
                for (ServiceInstance<Details> in : all) {
                    Object p = in.getPayload();
                    String zone = p instanceof Details ? ((Details) p).zone : "?";
                    out.add(in.getId() + "=" + (p == null ? "null" : p.getClass().getName()) + ":" + zone);
                }
                out.sort(null);
                return ("OK " + String.join(" ", out)).trim();
            }
            case "register": {
                LineProtocol.need(a, 5);
                ServiceInstance<Details> in = ServiceInstance.<Details>builder()
                    .name(a[2]).id(a[3]).payload(new Details(a[4])).build();
                discovery(a[1]).registerService(in);
                return "OK";
            }
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private void closeAll() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        for (ServiceDiscovery<Details> d : discoveries.values()) {
            try {
                d.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        c.close();
    }
}
