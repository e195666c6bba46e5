// QueueHelper drives Apache Curator's queues (QueueBuilder's
// DistributedQueue, DistributedIdQueue, DistributedPriorityQueue and
// DistributedDelayQueue, with or without a lockPath, and
// SimpleDistributedQueue) for go-curator's queue interop tests. It speaks
// the protocol of CuratorHelper: one command per line on stdin, one reply
// line per command on stdout, "OK ..." or "ERR ...". Item data travels as
// hex ("-" for an empty item); the queue serializer is the identity on
// bytes, so the node's bytes are Curator's ItemSerializer encoding of
// exactly those bytes.
//
// Commands:
//
//	ping
//	connect <connectString> <sessionTimeoutMs> -> OK <session id>
//	q.start <name> <kind> <path> <lockPath|-> <consume 0|1>
//	        kind: plain, id, priority or delay; builds it with
//	        putInBackground(false) and starts it; with consume 1 its
//	        consumer records every item it is handed, in order; with 0 it
//	        is a producer only (no consumer)
//	q.put <name> <hex> [arg]    put; arg is the id (id), the priority
//	                            (priority) or the epoch in ms (delay)
//	q.putmulti <name> <arg|-> <hex>...   putMulti of the items, in order
//	q.taken <name>              -> OK <n> <hex>...: the items consumed so far
//	q.remove <name> <id>        -> OK <count>: DistributedIdQueue.remove
//	q.close <name>              closes the queue
//	sq.offer <path> <hex>       SimpleDistributedQueue.offer
//	sq.poll <path> <timeoutMs>  -> OK <hex>, or OK none when nothing came
//	sq.peek <path>              -> OK <hex>, or OK none when empty
//	close                       -> OK, then the process exits
//
// Curator and ZooKeeper log through slf4j-simple to stderr; stdout carries
// the protocol only.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBase;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;

public final class QueueHelper {
    private final LineProtocol proto = new LineProtocol();
    private volatile CuratorFramework client;
    private final Map<String, Running> queues = new HashMap<>();

    /** One started queue and what its consumer was handed. */
    private static final class Running {
        final String kind;
        final QueueBase<byte[]> queue;
        final List<String> taken;

        Running(String kind, QueueBase<byte[]> queue, List<String> taken) {
            this.kind = kind;
            this.queue = queue;
            this.taken = taken;
        }
    }

    private static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
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
        QueueHelper h = new QueueHelper();
        h.proto.serve(h::handle, h::closeAll);
    }

    private CuratorFramework client() {
        if (client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        return client;
    }

    private Running queue(String name) {
        Running r = queues.get(name);
        if (r == null) {
            throw new IllegalArgumentException("no queue named " + name);
        }
        return r;
    }

    private String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                return "OK pong";
            case "connect":
                LineProtocol.need(a, 3);
                client = LineProtocol.newClient(a[1], Integer.parseInt(a[2]));
                return "OK " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
            case "q.start":
                LineProtocol.need(a, 6);
                return start(a[1], a[2], a[3], a[4], a[5].equals("1"));
            case "q.put": {
                LineProtocol.need(a, 3);
                put(queue(a[1]), LineProtocol.unhex(a[2]), a.length > 3 ? a[3] : "-");
                return "OK";
            }
            case "q.putmulti": {
                LineProtocol.need(a, 4);
                List<byte[]> items = new ArrayList<>();
                for (int i = 3; i < a.length; i++) {
                    items.add(LineProtocol.unhex(a[i]));
                }
                putMulti(queue(a[1]), items, a[2]);
                return "OK";
            }
            case "q.taken": {
                LineProtocol.need(a, 2);
                Running r = queue(a[1]);
                StringBuilder b = new StringBuilder("OK ");
                synchronized (r.taken) {
                    b.append(r.taken.size());
                    for (String s : r.taken) {
                        b.append(' ').append(s);
                    }
                }
                return b.toString();
            }
            case "q.remove": {
                LineProtocol.need(a, 3);
                Running r = queue(a[1]);
                if (!(r.queue instanceof DistributedIdQueue)) {
                    throw new IllegalArgumentException(a[1] + " is not an id queue");
                }
                return "OK " + ((DistributedIdQueue<byte[]>) r.queue).remove(a[2]);
            }
            case "q.close": {
                LineProtocol.need(a, 2);
                Running r = queue(a[1]);
                queues.remove(a[1]);
                r.queue.close();
                return "OK";
            }
            case "sq.offer":
                LineProtocol.need(a, 3);
                new SimpleDistributedQueue(client(), a[1]).offer(LineProtocol.unhex(a[2]));
                return "OK";
            case "sq.poll": {
                LineProtocol.need(a, 3);
                byte[] b = new SimpleDistributedQueue(client(), a[1]).poll(Long.parseLong(a[2]), TimeUnit.MILLISECONDS);
                return b == null ? "OK none" : "OK " + LineProtocol.hex(b);
            }
            case "sq.peek": {
                LineProtocol.need(a, 2);
                byte[] b = new SimpleDistributedQueue(client(), a[1]).peek();
                return b == null ? "OK none" : "OK " + LineProtocol.hex(b);
            }
            case "close":
                closeAll();
                return "OK";
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    private String start(String name, String kind, String path, String lockPath, boolean consume) throws Exception {
        if (queues.containsKey(name)) {
            throw new IllegalStateException("a queue named " + name + " already runs");
        }
        List<String> taken = new ArrayList<>();
        QueueConsumer<byte[]> consumer = null;
        if (consume) {
            consumer = new QueueConsumer<byte[]>() {
                @Override
                public void consumeMessage(byte[] message) {
                    synchronized (taken) {
                        taken.add(LineProtocol.hex(message));
                    }
                }

                @Override
                public void stateChanged(CuratorFramework c, ConnectionState s) {
                }
            };
        }
        QueueBuilder<byte[]> b = QueueBuilder.builder(client(), consumer, BYTES, path).putInBackground(false);
        if (!lockPath.equals("-")) {
            b = b.lockPath(lockPath);
        }
        QueueBase<byte[]> q;
        switch (kind) {
            case "plain":
                q = b.buildQueue();
                break;
            case "id":
                q = b.buildIdQueue();
                break;
            case "priority":
                q = b.buildPriorityQueue(0);
                break;
            case "delay":
                q = b.buildDelayQueue();
                break;
            default:
                throw new IllegalArgumentException("unknown queue kind " + kind);
        }
        q.start();
        queues.put(name, new Running(kind, q, taken));
        return "OK";
    }

    @SuppressWarnings("unchecked")
    private static void put(Running r, byte[] item, String arg) throws Exception {
        switch (r.kind) {
            case "plain":
                ((DistributedQueue<byte[]>) r.queue).put(item);
                break;
            case "id":
                ((DistributedIdQueue<byte[]>) r.queue).put(item, arg);
                break;
            case "priority":
                ((DistributedPriorityQueue<byte[]>) r.queue).put(item, Integer.parseInt(arg));
                break;
            case "delay":
                ((DistributedDelayQueue<byte[]>) r.queue).put(item, Long.parseLong(arg));
                break;
            default:
                throw new IllegalStateException(r.kind);
        }
    }

    @SuppressWarnings("unchecked")
    private static void putMulti(Running r, List<byte[]> items, String arg) throws Exception {
        MultiItem<byte[]> multi = new MultiItem<byte[]>() {
            private int next;

            @Override
            public byte[] nextItem() {
                return next < items.size() ? items.get(next++) : null;
            }
        };
        switch (r.kind) {
            case "plain":
                ((DistributedQueue<byte[]>) r.queue).putMulti(multi);
                break;
            case "priority":
                ((DistributedPriorityQueue<byte[]>) r.queue).putMulti(multi, Integer.parseInt(arg));
                break;
            case "delay":
                ((DistributedDelayQueue<byte[]>) r.queue).putMulti(multi, Long.parseLong(arg));
                break;
            default:
                throw new IllegalArgumentException("Curator has no putMulti for a " + r.kind + " queue");
        }
    }

    private void closeAll() {
        CuratorFramework c = client;
        if (c == null) {
            return;
        }
        client = null;
        for (Running r : queues.values()) {
            try {
                r.queue.close();
            } catch (Exception e) {
                // closing the session anyway
            }
        }
        queues.clear();
        c.close();
    }
}
