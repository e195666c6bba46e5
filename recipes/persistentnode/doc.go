// Package persistentnode keeps a ZooKeeper node present for as long as the
// caller wants it: Curator's PersistentNode (and PersistentEphemeralNode),
// and, with NewTTL, Curator's PersistentTtlNode.
//
// # Use
//
//	n, err := persistentnode.New(client, "/services/billing/worker-7", payload)
//	if err != nil { ... }
//	if err := n.Start(ctx); err != nil { ... }
//	defer n.Close(context.WithoutCancel(ctx)) // deletes the node
//	if err := n.WaitForInitialCreate(ctx); err != nil { ... }
//	p, _ := n.Path()
//	err = n.SetData(ctx, newPayload) // kept across every re-creation
//
// Start returns at once; one goroutine, started by Start and joined by
// Close, creates the node and then keeps it: it watches the node, and
// creates it again when it is deleted (by anyone) or when the session that
// owned an ephemeral node ends (an expiry, or the client's own Lost after a
// whole session timeout without a server). Data given to SetData is
// written to the node at once if it exists, and is the data of every later
// re-creation. Close stops the goroutine and deletes the node, retrying in
// the background on connection problems until the delete is done or the
// client closes (Curator's guaranteed delete). Close a Node before its
// client: a client closed first takes an ephemeral node with its session,
// but leaves a persistent one.
//
// # Modes
//
// The default mode is framework.Ephemeral; WithMode chooses another of
// Ephemeral, EphemeralSequential, Persistent, PersistentSequential and
// Container (the TTL modes are NewTTL's). WithProtection prefixes the
// node's name with Curator's "_c_<uuid>-" (a new UUID at each creation), so
// that a create whose reply was lost finds its node again. Sequential modes
// are always protected: an unprotected sequential create whose reply is
// lost cannot be found again, and would leave a second node.
//
// # Never two copies
//
// A lost reply or a session change must never leave the node twice:
//   - a protected create resolves its lost replies by its prefix, and the
//     framework deletes a twin a late request of an earlier attempt made;
//   - every ephemeral node is checked against the session that created it
//     (its EphemeralOwner). A node of ours left on a session the client
//     has given up on (the server keeps such a session, and its nodes,
//     until its own timeout) is deleted before the node is made again;
//   - an unprotected node at a fixed path that already exists is adopted
//     if it is ours (our current session's, or a persistent node, whose
//     data is then set), deleted and made again if an earlier session of
//     this Node made it, and otherwise left alone: the Node waits for it to
//     go (another live client made it; both would otherwise delete each
//     other's node forever) and then creates its own. With WithTakeOver
//     the first creation replaces such a node instead (Curator's
//     ServiceDiscovery does, for an instance restarting with its crashed
//     self's ID); later ones wait.
//
// An EphemeralSequential Node made WithoutProtection has no prefix to find
// its node by after a lost reply: it finds it by owner (a node of its name
// pattern owned by the current session), and deletes a twin a late request
// made.
//
// A sequential node made again gets a new sequence number, so a new path:
// Path reports the current one. (Curator re-creates it at its old path
// without a sequence; a name made outside the server's sequence could
// collide with a later sequential create once a reaped parent restarted
// its counter.)
//
// # ZooKeeper layout
//
// The node is at its path, or, protected, at the path's parent with the
// name "_c_<uuid>-<name>", and with a sequential mode the server's 10-digit
// suffix after it, exactly as Curator writes it. Missing parents are
// created as CONTAINER nodes with empty data. A TTL node (NewTTL) is a
// CONTAINER node at its path with a PERSISTENT_WITH_TTL child named
// "touch", Curator's layout: the server deletes the child once nobody has
// touched it for the TTL, then the empty container.
//
// # Connection states
//
// Nothing needs doing. While the client is Suspended the node may or may
// not exist (an ephemeral node lives as long as the session does); Path
// keeps reporting it as present until the session is declared Lost. After
// Lost the node is treated as gone and made again on the new session, as
// soon as a connection allows; listeners are told Gone, then Created. The
// Node never gives up on its own: each operation runs under the client's
// retry policy, and after a failed round the Node tries again after a
// pause that doubles from 50 ms up to 5 s, until Close. The exception is a
// refusal no retry changes (the parent is an ephemeral node, an ACL
// forbids the create, an invalid ACL, a path the server rejects): the Node
// stops trying, WaitForInitialCreate returns the error (matching
// ErrCannotCreate and the server's sentinel), listeners get Failed, and
// the client's logger a warning.
//
// # Listeners
//
// AddListener registers a function called with each Created, Gone and
// Failed event. Each listener runs on its own goroutine and receives its events
// in order from an unbounded queue: a slow listener delays only itself,
// never the Node, and never loses an event. Close waits for calls in
// progress, except the caller's own.
package persistentnode
