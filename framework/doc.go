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
// (the session expired, or the client stayed Suspended for a whole session
// timeout: Curator's simulated expiry). When go-zookeeper silently opens a
// new session after an expiry the client reports Lost, then Reconnected.
// go-zookeeper has no read-only mode, so ReadOnly is never reported.
//
// A holder of a lock must stop trusting it on Suspended or Lost: see
// ErrorPolicy and Client.LossSignal, which every go-curator lock uses for
// its Lost() channel.
//
// # Watches
//
// The W variants of the reads return go-zookeeper's one-shot event channel.
// A watch is never silently lost: if the session that set it ends, or the
// client closes, the channel receives an event of type zk.EventNotWatching
// with Err set, so the watcher re-reads and watches again. Event paths are
// the server's paths, namespace included.
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
// operation returns the last error, for which IsRetryable is true: a create,
// set or delete that returns it may or may not have been applied, so read
// before repeating anything that is not idempotent. On Lost the session's
// ephemeral nodes are gone, or will be once the server expires it: re-create
// the ones the caller owns after Reconnected. Watches set on the old session
// report zk.EventNotWatching, so re-read and watch again. The client itself
// never gives up: it reconnects until Close.
package framework
