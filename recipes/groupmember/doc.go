// Package groupmember is membership of a group: Curator's GroupMember. A
// Member joins the group with an ID and a payload, keeps its membership
// across session losses, lists the current members from a cache, and
// leaves at Close.
//
// # Use
//
//	m, err := groupmember.New(client, "/shop/workers", "worker-7", []byte("10.0.0.7:8080"))
//	if err != nil { ... }
//	if err := m.Start(ctx); err != nil { ... }
//	defer m.Close(context.WithoutCancel(ctx)) // leaves the group
//	for id, payload := range m.Members() { ... }
//
// A Member is a persistentnode.Node (an ephemeral node, made again after
// every session loss or delete) and a cache.Children of the membership
// path, as Curator's GroupMember is a PersistentEphemeralNode and a
// PathChildrenCache. This is the one recipe that uses two others, as in
// Curator.
//
// # ZooKeeper layout
//
// Each member is an EPHEMERAL node "<membershipPath>/<id>" whose data is
// the member's payload, exactly as Curator writes it, so Java and Go
// processes can be members of one group and see each other. The
// membership path and its missing parents are created as CONTAINER nodes.
// IDs are node names: they must be unique in the group, and must not
// contain '/'. A node at "<membershipPath>/<id>" that another client made
// is never deleted: the Member waits for it to go, then joins (see
// persistentnode).
//
// # Connection states
//
// Nothing needs doing. While the client is Suspended the list may be
// stale. After Lost the member node is made again on the new session, and
// the cache reads the group again; until then Members still lists this
// Member (as Curator's does: this instance is always a member).
package groupmember
