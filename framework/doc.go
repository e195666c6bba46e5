// Package framework is go-curator's ZooKeeper client: Curator's
// CuratorFramework, written the way Go users expect.
//
// A Client is built fluently, started, and closed:
//
//	c, err := framework.NewBuilder().
//		ConnectString("127.0.0.1:2181").
//		SessionTimeout(15 * time.Second).
//		RetryPolicy(policy).
//		Namespace("shop").
//		Build()
//	if err != nil { ... }
//	if err := c.Start(ctx); err != nil { ... }
//	defer c.Close()
//
// Every operation is a cheap builder value that ends in a ctx-first call.
// Each one validates its path before any I/O, applies the namespace, and
// runs inside the retry loop: connection loss, session expiry and a moved
// session are retried while the client's retry policy allows; any other
// error (zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, ...) returns at
// once, wrapped so that errors.Is still matches go-zookeeper's sentinels.
// While disconnected, an operation waits for a connection up to the
// connection timeout, and never past its ctx. A request already sent to the
// server is not abandoned when ctx ends: go-zookeeper takes no context, so
// the call returns when the server answers or the connection drops.
//
// # Connection states
//
// The client reports Connected (the first connection only), Suspended (the
// connection dropped; the session may still be alive), Reconnected, and Lost
// (the session expired, or the client's lease on it ran out: its simulated
// expiry). When go-zookeeper silently opens a new session after an expiry
// the client reports Lost, then Reconnected. Every transition is reported
// once. go-zookeeper has no read-only mode, so ReadOnly is never reported.
// After Close, State reports Closed (listeners are not told).
//
// # When Lost comes
//
// Lost comes before the server can have expired the session, so that under
// either error policy a holder's Lost() closes before any other client can
// be granted its lock. The client keeps a lease on its session, as Chubby's
// client does: the server cannot expire a session less than one negotiated
// session timeout after it last heard from the client, and it heard from
// the client no earlier than the moment the client sent the latest request
// (ping included) that was answered. The lease ends at that send time plus
// nine tenths of the negotiated timeout (NegotiatedSessionTimeout: the
// server clamps the requested timeout to [minSessionTimeout,
// maxSessionTimeout], by default [2, 20] × tickTime, and each handshake
// reply says what it granted). If no newer answer has come by then, the
// client reports Suspended (if it had not yet) and Lost, abandons the
// session and opens a new one, whether or not go-zookeeper has noticed the
// silence. Curator times its simulated expiry from the moment it noticed
// the disconnect, with the timeout it asked for, and can report Lost after
// the server has expired the session; we do better.
//
// A session the client abandoned may live on in the server until the
// server's own timeout, with its ephemeral nodes. Recipes therefore take a
// Session (Client.CurrentSession) before they create a node and never trust
// a node once that Session is no longer Valid.
//
// # Outcomes that cannot be known
//
// A request may be applied by the server while its reply is lost with the
// connection; the retry then meets the effect of its own first attempt. An
// operation that was retried after a connection loss never reports a
// definite outcome it cannot know:
//   - a protected create finds its node by its prefix, and an unversioned
//     delete that finds no node has done its job: both resolve themselves;
//   - a versioned SetData that finds zk.ErrBadVersion, an unprotected create
//     that finds zk.ErrNodeExists, a versioned delete that finds
//     zk.ErrNoNode, a failed transaction, and a write whose retries ran out
//     on connection errors return an error that matches ErrIndeterminate
//     (and still wraps the last error): it may or may not have been applied;
//   - an unprotected sequential create is not retried after such a loss (a
//     retry could make a second node): it returns ErrIndeterminate. Use
//     WithProtection.
//
// Check ErrIndeterminate before a definite sentinel such as zk.ErrBadVersion:
// both can match. The counters (sharedcount, atomiclong) pass such outcomes
// on to their callers and never repeat a change that may have happened.
//
// A holder of a lock must stop trusting it on Suspended or Lost: see
// ErrorPolicy and Client.LossSignal, which every go-curator lock uses for
// its Lost() channel.
//
// # Watches
//
// The W variants of the reads return a one-shot event channel, closed after
// its one event. A watch is never silently lost: if the session that set it
// ends, the channel receives an event of type zk.EventNotWatching whose Err
// matches zk.ErrSessionExpired, so the watcher re-reads and watches again;
// if the client closes, the event's Err matches ErrClosed, so it stops.
// Event paths are relative to the namespace, as the caller gave them.
//
// [Client.Watch] sets lasting watches: on a node, on a node's children, or on
// a subtree. They re-arm after every event with a read that sets the watch
// in the same request, survive reconnects and session changes (after which
// every node is read again and a WatchResynced event follows the
// differences), and never block the client: see [WatchBuilder.ForPath].
//
// # ZooKeeper layout
//
// The client writes only the nodes it is asked to, with these conventions,
// which are Curator's, so Java and Go processes find each other's nodes:
//
//	/<namespace>                  CONTAINER, empty data, made on first use
//	<parent>                      CONTAINER (CreatingParentContainersIfNeeded) or
//	                              PERSISTENT (CreatingParentsIfNeeded), empty data
//	<parent>/_c_<uuid>-<name>     created WithProtection; a sequential mode
//	                              appends the server's 10-digit counter
//
// The protection prefix is ProtectedPrefix, a new 36-character UUID per
// create, and "-". Recipes write the client's DefaultData (the local IP
// address as text, as in Curator) where they have no data of their own.
//
// # What the caller must do on connection loss
//
// On Suspended, operations wait for the connection inside the retry loop;
// nothing is needed unless the caller holds a lock, which it must stop
// trusting (its Lost() channel closes). When the retry policy gives up, the
// operation returns the last error, for which IsRetryable is true; a write
// that returns it matches ErrIndeterminate if any attempt may have reached
// the server (see above): read before repeating anything that is not
// idempotent. On Lost the session's
// ephemeral nodes are gone, or will be once the server expires it: re-create
// the ones the caller owns after Reconnected. Watches set on the old session
// report zk.EventNotWatching, so re-read and watch again. The client itself
// never gives up: it reconnects until Close.
package framework
