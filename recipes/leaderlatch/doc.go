// Package leaderlatch elects one leader among the candidates that share a
// ZooKeeper path: Curator's LeaderLatch.
//
// A candidate joins with Start and stays in the election until Close.
// Candidates lead in the order they joined; a leader keeps the leadership
// until it closes its latch, releases the Leadership (and so goes to the
// back of the line), or loses its connection or session.
//
//	l, err := leaderlatch.New(client, "/services/scheduler/leader", leaderlatch.WithID("host-a"))
//	if err != nil { ... }
//	if err := l.Start(ctx); err != nil { ... }
//	defer l.Close(context.WithoutCancel(ctx))
//	lead, err := l.Await(ctx)
//	if err != nil { ... }
//	token, _ := lead.FencingToken()
//	runScheduler(ctx, token, lead.Lost()) // stop when Lost() closes
//
// # Layout
//
// Exactly Curator's, so Java and Go candidates share one election:
//
//	<path>/_c_<uuid>-latch-<seq10>
//
// EPHEMERAL_SEQUENTIAL, created with protection under CONTAINER parents,
// with the participant ID (WithID, empty by default) as UTF-8 data. The
// candidate whose node has the lowest sequence leads; every other one
// watches only the node just ahead of it (a data watch, so a vanished node
// leaves no watch behind) and reads the children again when that node
// goes, so a change wakes one candidate. The leader also watches its own
// node: if it is deleted, the leadership ends and the candidate joins
// again with a new node.
//
// # A leadership is a value
//
// Await returns a *Leadership. Its Lost channel closes when the leadership
// can no longer be trusted, and its FencingToken (the path's pzxid as read
// by the read that made this candidate the leader) is lower than that of
// any later leader of the path, so the resource the leader writes to can
// reject a deposed leader's writes. Hand it to the goroutines that do the
// leader's work.
//
// # Suspended and Lost
//
// Under the client's standard error policy, Lost() closes and the latch
// reports not-leader as soon as the connection is Suspended; under the
// session policy, when the session is Lost. This holds from the instant a
// leadership is visible (Await returns it, HasLeadership reports true, a
// listener is told), whatever I/O the latch still does for it: the leader
// sets the watch on its own node on a goroutine of its own, and a
// leadership whose loss signal has already closed is never published. Stop acting as the leader
// when Lost() closes: another candidate may be elected once the server
// expires the session, and the client reports Lost before the server can
// have done so.
//
// After a Suspended on the same session the candidate keeps its node, and
// so its place: once Reconnected it reads the children again and, if it is
// still first, leads again with a new Leadership (Curator 5.4 does the
// same). After its session is lost it never trusts its old node, even if
// the server still lists it (the server keeps an abandoned session alive
// until its own timeout): it deletes that node and joins again with a new
// one, at the back of the line. Await again for the new leadership.
//
// # Listeners
//
// AddListener registers a Listener told of every change of this
// candidate's leadership, in order. Each listener runs on its own
// goroutine from an unbounded queue: a slow listener delays only itself,
// never the latch, the client or other listeners, and never loses an
// event. Close delivers what is queued (including the final NotLeader of
// the NotifyLeader close mode) and waits for the listeners to return; a
// listener may call Close.
package leaderlatch
