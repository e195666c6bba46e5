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
// A policy that implements retry.Classifier decides which errors are
// retried instead (retry.SessionFailed stops at a session expiry, which an
// operation whose session was lost under it reports as zk.ErrSessionExpired).
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
// [Builder.CircuitBreaking], or a [CircuitBreaker] around one listener,
// keeps a flapping connection from flooding listeners.
//
// # When Lost comes
//
// Lost comes before the server can have expired the session, so that under
// either error policy a holder's Lost() closes before any other client can
// be granted its lock. The client keeps a lease on its session, as Chubby's
// client does, and times it on the monotonic clock only (a wall clock
// stepped back by an NTP step or a resumed VM must not delay Lost, nor a
// step forward hasten it).
//
// Let T be the negotiated session timeout (NegotiatedSessionTimeout: the
// server clamps the requested timeout to [minSessionTimeout,
// maxSessionTimeout], by default [2, 20] × tickTime, and each handshake
// reply says what it granted), and c the moment from which the lease is
// timed: the leader, the one server that expires sessions, recorded a
// touch of the session no earlier than c. The lease ends at c + T - T/10:
// the leader cannot expire a session less than T after it recorded a
// touch, and T/10 covers the client's timer firing late and clock-rate
// differences. The client pings when a connection has carried nothing else
// for a tenth of T (go-zookeeper pings every third), so while a server
// answers, its requests keep reaching it at least that often.
//
// What c is depends on the server that answered. A reply to a reconnect's
// handshake counts fully: a server answers one only after the leader
// revalidated, and touched, the session; c is then the handshake's send
// time. Any other reply may come from a follower, and a follower records a
// touch locally and tells the leader of it only in its reply to the
// leader's next ping; it keeps answering clients for up to S = syncLimit ×
// tickTime without hearing from the leader at all. A leader that stalls
// (a long GC pause, a stopped process) or is cut off from the follower
// for longer than T then expires sessions that follower kept answering.
// The client cannot read tickTime or syncLimit, and nothing it can observe
// proves that a touch reached the leader: ZooKeeper sends touches to the
// leader only in ping replies, a sync or a write that the follower forwards
// does not touch the session at the leader, and notifications carry no
// zxid to order them by. So the rule rests on a bound the user states,
// Builder.EnsembleTiming(tickTime, syncLimit):
//
//   - With the ensemble's timing stated, a reply to a request sent at c'
//     counts as c = c' - (S + tickTime + T/10). The follower that answered
//     it at t >= c' drops its clients once it has not heard from the
//     leader for S, so it heard from the leader at some h >= c' - S; a live
//     leader pings every tickTime/2, and had the follower's reply to the
//     ping before the one received at h, which carried every touch the
//     follower recorded until then, up to tickTime before h; and the client
//     touches its server at least every T/10. So the leader's last touch is
//     no earlier than c. This covers a leader stalled, or a follower cut off
//     from the leader, for up to S, and leader pings delayed by up to S (the
//     follower drops its clients after that). It does not cover a leader
//     whose ping thread is stuck while it still sends proposals (the
//     follower keeps hearing from it), a leader that holds a follower's
//     reports in a queue for longer than S, or a pause of the client's own
//     process (GC, a stopped VM) between reading the lease and acting on
//     it. When S + tickTime + T/10 >= 0.9 T, a follower's reply gives no
//     lease at all: the lease then ends 0.9 T after each handshake, and the
//     client logs a Warn once. Ask for a timeout well above S: at T =
//     30 s, tickTime 2 s and syncLimit 5, a reply extends the lease to
//     12 s past its send time. If the negotiated T is below 2 × tickTime (a
//     minSessionTimeout set below ZooKeeper's default), the client logs a
//     Warn once; the rule already counts whole tickTimes, so it holds.
//   - Without the timing, the client assumes what a live, linked leader
//     gives: a follower reports a touch within tickTime/2 (the leader's
//     ping interval), and tickTime/2 <= T/4, which holds when no timeout
//     below 2 × tickTime is granted (ZooKeeper's default minSessionTimeout;
//     setting it lower is the user's responsibility). A reply then counts
//     (c is its request's send time) only if it arrives by c + 0.65 T, c
//     being the contact in force: the follower reports that touch by
//     c + 0.9 T, before the leader can expire the session on the touch at
//     c. After a reply arrives too late, no later one counts on that
//     session but a reconnect's handshake, which counts until the lease
//     ends. This covers no leader stall and no follower lag beyond
//     tickTime/2: a client of an ensemble must state its timing, and one
//     that does not is told so at Start (an Info log when the connect
//     string names more than one server). A standalone server is its own
//     leader and needs no timing.
//
// Whatever the lease covers, only a fencing token (the recipes' holds give
// one, such as mutex's Hold.FencingToken) protects a resource against a
// holder that acts after its lease, for a cause the lease cannot see: the
// store must refuse a write whose token is older than one it has seen.
//
// If no counted answer has come by the end, the client reports Suspended
// (if it had not yet) and Lost, abandons the session and opens a new one,
// whether or not go-zookeeper has noticed the silence. Curator times its
// simulated expiry from the moment it noticed the disconnect, with the
// timeout it asked for, and can report Lost after the server has expired
// the session; we do better.
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
// # ACLs, create-or-set, namespaces and containers
//
// GetACL and SetACL read and replace a node's ACL (SetACL().WithVersion
// takes the ACL version, Stat.Aversion), through the chroot, the namespace
// and the retry loop; a versioned SetACL retried after a lost reply that
// finds zk.ErrBadVersion is indeterminate, as SetData is. Create's
// OrSetData writes the data of a node that already exists (Curator's
// orSetData), and ForPathStat returns the node's stat (Curator's
// storingStatIn): go-zookeeper v1.0.4 has no create2, so the stat is read
// right after the create. CheckExists().CreatingParentContainersIfNeeded
// makes the path's parents first. Builder.DontUseContainerParents makes
// those parents, and the namespace node, persistent instead of containers.
//
// Client.UsingNamespace gives a NamespaceView: the same client, session and
// state under another namespace (Curator's usingNamespace). It offers the
// one-shot operations, not watches, and recipes take a Client.
//
// Transactions cannot create container or TTL nodes: ZooKeeper's multi
// takes them as createContainer and createTTL operations, which
// go-zookeeper v1.0.4's Multi cannot send. Commit refuses them with an
// error matching ErrInvalidArgument and errors.ErrUnsupported.
//
// # Compression
//
// Create().Compressed() and SetData().Compressed() compress data before
// writing it, and GetData().Decompressed() decompresses it after reading,
// with the client's CompressionProvider: GzipCompression, Curator's
// default, unless Builder.CompressionProvider sets another. Nodes written
// compressed by Java Curator read back as the same bytes, and the reverse.
// Builder.EnableCompression compresses every create and write (in
// transactions too) and decompresses every read, for the recipes as well;
// Curator 5.4 has no such option, so a Java peer must ask for compressed()
// and decompressed() itself. Data that does not decompress gives an error
// matching ErrBadCompressedData; a node with no data reads as empty. The
// caches of recipes/cache read raw data: they have no option for it yet.
//
// # Error policy
//
// The error policy (Builder.ConnectionStateErrorPolicy) says which states
// end a holder's trust in its locks: Client.LossSignal, which every
// go-curator hold, lease and leadership uses for its Lost() channel,
// follows it. The default is SessionErrorPolicy: only Lost ends a hold.
// Lost comes before the server can have expired the session (see "When
// Lost comes"), so a hold outlives a connection blip shorter than its
// lease, and still ends before another client can be granted its lock.
// Curator's default is StandardErrorPolicy, under which Suspended ends
// every hold too, since Curator's Lost can come after the server's expiry;
// choose it to stop trusting at the first sign of trouble, at the price of
// ending every hold and leadership at every blip.
//
// Under either policy Lost() closes on the client's timer goroutine, which
// a paused process (a GC pause, a stopped VM) runs late. Client.CheckLease,
// and every hold's Check, which calls it, read the session's lease on the
// monotonic clock at the call instead, so a holder resumed past its lease
// learns of the loss at once. They read it at the call and no later: only
// the fencing token, which the resource itself checks, covers a pause
// between the check and the write (the seeds' Kleppmann vs antirez
// debate). Check, then write with the token.
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
// # Persistent watches
//
// On ZooKeeper 3.6 and later, [Client.AddWatch] sets a persistent watch
// (addWatch): one server watch that reports every change of a node (and,
// with Recursive, of every node below it) until it is closed, instead of
// one watch per node re-set after each event:
//
//	w, err := c.AddWatch().Recursive().ForPath(ctx, "/services")
//	if errors.Is(err, framework.ErrUnimplemented) { /* ZooKeeper before 3.6: use c.Watch() */ }
//	defer w.Close(ctx)
//	for ev := range w.Events() {
//		switch ev.Type {
//		case framework.PersistentResync: // re-read what you follow
//		default: // ev.Path was created, changed or deleted
//		}
//	}
//
// What a watcher sees across the connection's states:
//   - Suspended: nothing; the server's events stop with the connection.
//   - Reconnected, same session (to the same or another server): the client
//     sets the watch again, then sends PersistentResync. Changes made while
//     disconnected are not replayed (ZOOKEEPER-4698): read again on
//     PersistentResync; every change after that read is reported.
//   - Lost, then a new session (an expiry, or the client's own Lost after a
//     session timeout without a server): the watch is set anew on the new
//     session, then PersistentResync, as above.
//   - Close, or the client's Close: Events is closed; Close removes the
//     server watch (or, while disconnected, leaves none to set again).
//
// The server limits the client works around, so that no watch is ever
// silently lost:
//   - before ZooKeeper 3.9 a connection keeps one watch mode per path
//     (ZOOKEEPER-4466: a one-shot watch set on a path with a persistent watch
//     turns it one-shot). While a persistent watch is set on a path, the
//     client's one-shot watches there (the W reads, [Client.Watch]) are sent
//     without the watch and fired by the persistent watch's events; a
//     persistent watch asked for on a path where the client already holds a
//     one-shot watch is set once that one fires ([AddWatchBuilder.ForPath]
//     returns at once, and PersistentResync follows the setting). A W read
//     served so is woken, at worst spuriously, at each reconnect, and ends
//     with zk.EventNotWatching when the session changes, as any other.
//     Watches set through [Client.ZooKeeper] bypass these rules;
//   - before ZooKeeper 3.9 a persistent watch can only be removed with every
//     other watch on its path (ZOOKEEPER-4472): Close removes it only when
//     no other watch of the client needs the path, and otherwise once none
//     does.
//
// Several persistent watches of one client on one path share one server
// watch.
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
// # Production connectivity
//
// Authentication, ACLs, TLS, a chroot and TTL nodes, as a production
// ensemble wants them:
//
//	c, err := framework.NewBuilder().
//		ConnectString("zk1:2281,zk2:2281,zk3:2281/services"). // chroot /services
//		Namespace("billing").                                 // then /services/billing
//		Authorization("digest", []byte("billing:"+password)).
//		ACL(zk.AuthACL(zk.PermAll)...). // or ACLProvider(p): per path
//		TLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}).
//		RetryPolicy(policy).
//		Build()
//
// Authorization's credentials are sent on every connection the client
// opens, below go-zookeeper and before it reads the server's handshake, so
// they are in place before the client reports Connected or Reconnected and
// before any request, on every session: the first, the ones go-zookeeper
// opens after an expiry, and the ones the client opens after its own
// simulated expiry (a new go-zookeeper connection). A scheme the server
// rejects (AuthFailed) makes Start fail at once with ErrAuthFailed. Digest
// credentials are never rejected there: a wrong password only names another
// identity, and the nodes it may not touch answer zk.ErrNoAuth.
//
// The ACLProvider (Builder.ACL is its simple form, one ACL for every node)
// gives the ACL of every create the client and the recipes make: the node,
// the parents of CreatingParentsIfNeeded and CreatingParentContainersIfNeeded,
// the namespace node, a transaction's creates. It is asked with the path below
// the chroot, namespace included, as Curator's is; CreateBuilder.WithACL wins
// over it. With zk.AuthACL (ZooKeeper's "auth" scheme, the creator's
// identities), a lock node made by an authenticated service can be deleted
// or overwritten only by that service, and by the server's super user
// (zookeeper.DigestAuthenticationProvider.superDigest). Note that ZooKeeper
// checks a delete against the parent's ACL, which the provider also sets,
// and that over TLS with a client certificate the session is also
// authenticated as x509 (the certificate's subject), which "auth" then names
// too.
//
// TLSConfig speaks TLS to the servers' secureClientPort. The layers, from the
// socket up: the Dialer's connection (net.DialTimeout by default), TLS, the
// credentials, then the client's own watch on ZooKeeper's frames. The
// certificate is checked against each server's host as the connect string
// names it (host names are resolved at each dial, not once), unless
// tls.Config.ServerName says otherwise. A handshake that fails (a CA the
// client does not trust, a missing or untrusted client certificate when the
// server sets ssl.clientAuth=need, a plain port) makes Start fail, after the
// connection timeout, with an error matching ErrTLSHandshake that wraps
// crypto/tls's. TLSConfig(nil) means plain TCP.
//
// A chroot suffix in the connect string ("host:port,host:port/services") works
// as in ZooKeeper and Curator: every path is relative to it, and so are the
// paths the client returns and those of watch events. The namespace goes
// below it: chroot "/services" and namespace "billing" put "/locks/a" at
// "/services/billing/locks/a" on the server. The client never creates the
// chroot; when it does not exist, operations fail with an error that matches
// zk.ErrNoNode and ErrNoChroot and names it. go-zookeeper v1.0.4 has no
// chroot of its own: Client.ZooKeeper's connection sees the whole tree.
//
// PersistentWithTTL and PersistentSequentialWithTTL create nodes the server
// removes once they have had no children and no change for their TTL
// (CreateBuilder.WithTTL, 1 ms to MaxTTL). The server needs
// extendedTypesEnabled=true; without it the create fails with
// ErrTTLNotEnabled. ZooKeeper reports a TTL node's ephemeralOwner as 0, so the
// TTL cannot be read back from its Stat. A transaction cannot create a TTL or
// container node (go-zookeeper v1.0.4's multi has no such operation).
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
//
// # Metrics and logging
//
// Builder.Metrics sets a hook, Metrics: optional funcs told of each
// operation (by name, with its time in the retry loop and its error), each
// retry, each state change, each watch event delivered, and, from the
// recipes, each lock or lease wait (with its outcome) and hold. They are
// called synchronously and must be fast and never block; StateChanged
// alone runs on a goroutine of the client's, in order. Without a hook the
// client pays a nil check per operation. The library has no metrics
// dependency: contrib/prometheus, a module of its own, fills the hook for
// Prometheus.
//
// Builder.Logger takes a slog.Logger (silent by default). At Info (Warn
// for a lost session) the client says what an operator needs and nothing
// per operation: session established (ID in hex, granted timeout,
// server), connection lost: suspended, reconnected, session lost (expired
// by the server, or the client's simulated expiry), closed. Retries and
// go-zookeeper's own messages are at Debug.
//
// # API rules of the recipes
//
// The recipes share one shape, so that what a caller learns from one
// holds for the others (integration/contract_*_test.go checks each rule
// on every package).
//
// Every blocking call takes a context.Context first; a done ctx does
// nothing. Constructors check their arguments and do no I/O. A bad
// argument is an error matching the package's ErrInvalidArgument and the
// framework's specific sentinel (ErrNilClient, ErrInvalidPath or
// ErrInvalidArgument). Errors are matched with errors.Is, never with ==:
// a recipe's loss error (its ErrSessionLost) matches ErrSessionLost, and
// the errors of a ZooKeeper node match ErrNoNode, ErrNodeExists,
// ErrBadVersion, ErrNotEmpty and ErrNoAuth (and go-zookeeper's own).
//
// Options. Every option type of a recipe (Option, and cache.TreeOption,
// persistentnode.TTLOption, discovery.ProviderOption) is func(*o) error
// on an unexported struct o of its package, taken variadically by the
// constructor and applied in order. An option checks its own value: a nil
// func, a negative duration, a bad path, oversized data or ID, an unknown
// mode is an error from the option, and the constructor returns it, as it
// does for a nil option; the error is a bad argument as above, with the
// package's prefix only. Options read their arguments when called; the
// last of two options that set the same thing wins.
//
// Holds. Every value a lock, semaphore or election hands out (mutex.Hold,
// rwlock.Hold, semaphoremutex.Hold, multilock.Hold, semaphorev2.Lease,
// leaderlatch.Leadership, leaderselector.Leadership) is safe for
// concurrent use and has the same methods:
//
//	Lost() <-chan struct{}             // closed when it can no longer be trusted
//	Check() error                      // reads the session's lease now (CheckLease)
//	FencingToken() (int64, error)      // grows with every grant of the path
//	Release(ctx context.Context) error // gives it up and deletes its node
//	Session() Session                  // the session that made its node
//	Node() string                      // the path of its node
//
// A nil or zero one holds nothing: Lost is closed, Node is "", Session is
// the zero Session (never valid), and Check, FencingToken and Release
// return an error. Some have more (multilock's FencingTokens, a lease's Close,
// Curator's name for Release).
//
// Close. A Close that writes to ZooKeeper takes a ctx; a Close that only
// stops local work does not. PersistentWatch.Close takes one: it removes
// the watch from the server. A Close that deletes the node its value made
// (leaderlatch.Latch, leaderselector's Selector and Election,
// persistentnode's nodes, groupmember.Member, semaphorev2.Lease) waits
// for the server, and for a connection if there is none, so the caller
// must be able to bound it as it bounds every other wait; and its outcome
// matters (the next leader is elected only once the node is gone), so it
// returns the delete's error. A Close that only stops watches, listeners
// and goroutines (the caches, sharedcount) has no wait to bound: it is
// Close() error, an io.Closer, for a plain defer. Client.Close is one too:
// it ends the connection, whose close-session request go-zookeeper bounds
// itself, and then joins the client's background work.
package framework
