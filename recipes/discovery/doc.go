// Package discovery registers and finds service instances in ZooKeeper
// with Apache Curator's curator-x-discovery layout and JSON format, so Go
// and Java services find each other: Curator's ServiceDiscovery
// (Discovery), ServiceInstance (Instance), ServiceProvider with its
// strategies and down-instance policy (Provider), ServiceCache (Cache)
// and UriSpec (URISpec).
//
// # Use
//
//	d, err := discovery.New(client, "/services")
//	if err != nil { ... }
//	defer d.Close(context.WithoutCancel(ctx)) // unregisters what d registered
//	spec, _ := discovery.ParseURISpec("{scheme}://{address}:{port}/api")
//	// Java's JsonInstanceSerializer<InstanceDetails> reads a payload
//	// whose "@class" names its class; JavaPayload writes it first.
//	payload, err := discovery.JavaPayload("com.example.InstanceDetails",
//		map[string]string{"zone": "eu-1"})
//	if err != nil { ... }
//	reg, err := d.Register(ctx, discovery.Instance{ // Address: the local IP, as in Curator
//		Name: "billing", Port: 8080, URISpec: spec, Payload: payload,
//	})
//	// ... reg.Update(ctx, in), reg.Unregister(ctx)
//
//	p, err := d.NewProvider("billing", discovery.WithStrategy(discovery.RoundRobin()))
//	if err != nil { ... }
//	if err := p.Start(ctx); err != nil { ... }
//	defer p.Close()
//	in, err := p.Instance() // no I/O: from the provider's cache
//	if err != nil { ... }   // ErrNoInstance: none available (ErrDeclined: the strategy declined)
//	resp, err := http.Get(in.URI(nil))
//	if err != nil { p.NoteError(in) } // skipped for a while after 2 errors
//
// d.Close closes the providers and caches made from d that are still
// open, then unregisters what d registered, as Curator's close does.
//
// # ZooKeeper layout
//
// An instance is the node <base>/<name>/<id>, whose data is the instance
// in Curator's JSON: the fields name, id, address, port, sslPort,
// payload, registrationTimeUTC, serviceType, uriSpec and enabled, with
// null for a missing address, port, sslPort, payload or uriSpec, and the
// uriSpec as {"parts":[{"value":...,"variable":...},...]}, written as
// Jackson writes it ("&", "<" and ">" unescaped, no trailing newline). A
// Dynamic instance (the default) is an EPHEMERAL node; a
// DynamicSequential one an EPHEMERAL_SEQUENTIAL node named
// <id><10-digit sequence>; Static and Permanent ones are PERSISTENT. A
// node whose serviceType is none of these four is not an instance: it is
// left out and reported as ErrCorrupt, like a node that is not JSON. <base>/<name> and missing parents are created as
// CONTAINER nodes. Java's JsonInstanceSerializer (in its default,
// compatible mode) does not write "enabled"; both read a missing one as
// true. A Java payload that is an object carries an "@class" member
// naming its Java class (see JavaPayload); Go keeps the payload as raw
// JSON and ignores "@class" when decoding it.
//
// Like Curator's discovery, which is built on its PersistentNode and
// CuratorCache, this package uses two recipes: recipes/persistentnode for
// registrations and recipes/cache for Cache and Provider.
//
// Registration goes through recipes/persistentnode: the node is made again
// after someone deletes it or its session ends, and a node of an earlier
// session is never left beside the new one, so a registration is at most
// one node, owned by the client's current session.
//
// # Connection states
//
// Nothing needs doing. While the client is Suspended, the instance's node
// may still be there (its session may live); after Lost, the server has
// deleted (or is about to delete) it, and it is made again on the new
// session as soon as the client reconnects, with the latest data. A Cache
// or Provider keeps the last view while Suspended and reads everything
// again after a session change (see recipes/cache); a Provider may then
// pick an instance that has just left: call NoteError when a call fails.
//
// # Differences from Curator
//
// A second Register of the same name and ID through one Discovery is an
// error (ErrAlreadyRegistered), where Curator replaces the first. As in
// Curator, Register replaces a node at the instance's path that another
// session owns (a crashed instance's, restarting with its ID; see
// Discovery.Register for who holds an ID); unlike Curator, after that
// first creation another session's node there is waited for, not
// deleted, so two live processes registering one ID do not delete each
// other's node forever. A refusal no retry changes fails Register at
// once (ErrCannotRegister), as it does Curator's. A DynamicSequential
// instance is made again, after its session ends, as a new node with a new
// sequence and deleted by Unregister (Curator 5.4 makes a second node at
// each reconnect and cannot delete it: its unregister deletes
// <base>/<name>/<id>). Strategies pick among candidates sorted by ID.
// An instance registered with no address gets the host's first address
// that Curator's default LocalIpFilter accepts, as Curator's builder does,
// but IPv4 first: Curator takes the first in Java's order, which on Linux
// lists an interface's IPv6 addresses first, with their zone
// ("fd00:0:0:0:0:0:0:2%eth0" on a dual-stack host), an address a URI
// cannot hold as it is.
package discovery
