// CompressHelper drives Apache Curator's compressed creates and writes and
// its decompressed reads (GzipCompressionProvider, Curator's default) for
// go-curator's compression interop tests. It speaks the protocol of
// CuratorHelper: one command per line on stdin, one reply line per command
// on stdout, "OK ..." or "ERR ...". Data travels as hex ("-" for none).
//
// Commands:
//
//	ping
//	connect <connectString> <sessionTimeoutMs> -> OK
//	create.compressed <path> <hex>   create().compressed().creatingParentsIfNeeded().forPath
//	set.compressed <path> <hex>      setData().compressed().forPath
//	get.decompressed <path>          -> OK <hex>: getData().decompressed().forPath
//	get.raw <path>                   -> OK <hex>: getData().forPath
//	close                            -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only.

import org.apache.curator.framework.CuratorFramework;

public final class CompressHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;

    public static void main(String[] args) throws Exception {
        CompressHelper h = new CompressHelper();
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
                client = LineProtocol.newClient(a[1], Integer.parseInt(a[2]));
                return "OK";
            case "create.compressed":
                LineProtocol.need(a, 3);
                client().create().compressed().creatingParentsIfNeeded().forPath(a[1], LineProtocol.unhex(a[2]));
                return "OK";
            case "set.compressed":
                LineProtocol.need(a, 3);
                client().setData().compressed().forPath(a[1], LineProtocol.unhex(a[2]));
                return "OK";
            case "get.decompressed":
                LineProtocol.need(a, 2);
                return "OK " + LineProtocol.hex(client().getData().decompressed().forPath(a[1]));
            case "get.raw":
                LineProtocol.need(a, 2);
                return "OK " + LineProtocol.hex(client().getData().forPath(a[1]));
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
        c.close();
    }
}
