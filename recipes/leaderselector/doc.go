// Package leaderselector elects one leader among the candidates that share
// a ZooKeeper path, and runs the leader's work: Curator's LeaderSelector,
// plus the Campaign / Resign / Leader / Observe API of etcd's
// concurrency.Election.
//
// # Selector
//
// A Selector runs a function while its candidate leads, as Curator's
// LeaderSelector runs takeLeadership. The function's ctx is cancelled when
// the leadership is lost (the connection is Suspended or the session Lost,
// per the client's error policy), on InterruptLeadership and on Close;
// when the function returns, the candidate gives up the leadership, and
// with WithAutoRequeue it queues again.
//
//	s, err := leaderselector.New(client, "/services/billing/leader",
//		func(ctx context.Context, l *leaderselector.Leadership) error {
//			token, err := l.FencingToken()
//			if err != nil {
//				return err
//			}
//			return runBilling(ctx, token) // return when ctx is cancelled
//		},
//		leaderselector.WithID("host-a"), leaderselector.WithAutoRequeue())
//	if err != nil { ... }
//	if err := s.Start(ctx); err != nil { ... }
//	defer s.Close(context.WithoutCancel(ctx))
//
// # Election
//
// An Election is the same election driven by the caller, shaped like
// etcd's: Campaign blocks until this candidate leads and returns its
// Leadership; Resign (or Leadership.Release) gives it up; Leader reads
// the current leader; Observe follows it.
//
//	e, err := leaderselector.NewElection(client, "/services/billing/leader", leaderselector.WithID("host-a"))
//	if err != nil { ... }
//	defer e.Close(context.WithoutCancel(ctx))
//	lead, err := e.Campaign(ctx) // a cancelled Campaign leaves no node
//	if err != nil { ... }
//	work(lead.Lost())
//	err = e.Resign(ctx)
//
// # Layout
//
// Exactly Curator's: the election is an InterProcessMutex at the path, so
// Java and Go candidates share one election and one line:
//
//	<path>/_c_<uuid>-lock-<seq10>
//
// EPHEMERAL_SEQUENTIAL, created with protection under CONTAINER parents,
// with the participant ID (WithID) as UTF-8 data or, without an ID, the
// client's default data (the local IP address as text, as in Curator).
// The candidate with the lowest sequence leads; every other one watches
// only the node just ahead of it. Leadership passes in the order the
// candidates queued. A go-curator leader hands over as the mutex package
// does, with one write: its resignation creates the EPHEMERAL grant
// /go-curator-grants/_c_<uuid>-lock-<seq10> (under the client's
// namespace) as it deletes its node, and the next go-curator candidate
// leads on that grant without reading the line again.
//
// # A leadership is a value
//
// A Leadership has Lost, FencingToken and Release, like a lock's hold. Its
// Lost channel closes when it can no longer be trusted: on Suspended or
// Lost under the client's standard error policy (Lost only under the
// session policy), when the session that made its node is lost, when its
// node is deleted, on Release or Resign, and on Close. Its fencing token is
// the election path's pzxid read after the grant, which grows with every
// grant, so a resource can refuse a deposed leader's writes.
//
// # Suspended and Lost
//
// Stop acting as the leader when Lost() closes (a Selector's function sees
// its ctx cancelled): another candidate may be elected once the server
// expires the session, and the client reports Lost before the server can
// have done so. Lost() follows the client's state and session from the
// instant Campaign returns (or the function starts), whatever I/O the
// leadership still does: the leader watches its own node on a goroutine
// of its own. Campaign never returns a leadership already lost: it
// deletes the node and returns an error matching ErrSessionLost. A Selector then deletes the node (with a guaranteed
// delete, which completes once the connection is back) and, with
// WithAutoRequeue, queues again with a new node, as Curator's
// LeaderSelectorListenerAdapter does. A waiting candidate whose session is
// lost never trusts its old node: it deletes it and queues again, as the
// client's retry policy allows; when the policy gives up, Campaign returns
// an error matching ErrSessionLost or ErrNodeVanished.
package leaderselector
