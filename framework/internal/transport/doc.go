// Package transport is what runs under go-zookeeper on each TCP connection
// of a client: it sees every byte go-zookeeper sends and receives, and
// keeps what go-zookeeper keeps to itself.
//
// A Wire follows one chain of connections of one go-zookeeper Conn (every
// connection it dials for one session, and the next session it opens by
// itself after an expiry). Wire.Wrap layers a Conn over each connection
// the dialer opens; framework does the dialing, the TLS handshake (DialTLS)
// and the credentials (Credentials) below it. From the frames it learns:
//
//   - the session timeout each handshake reply grants (Wire.Negotiated);
//   - the session's lease: the send time of the latest request whose reply
//     came back (Wire.Contact), on the monotonic clock, and when the lease
//     ends (Wire.LeaseEnd). The Conn keeps the lease fresh with pings of
//     its own (go-zookeeper pings only every third of a timeout). How a
//     reply counts depends on whether the user stated the ensemble's
//     tickTime and syncLimit (Wire.SetTiming): with them, a reply a
//     follower may have given while cut off from the leader counts only as
//     far as syncLimit × tickTime allows (Wire.Contact); without them, the
//     rule assumes a follower reports touches within tickTime/2
//     (Wire.countedBy);
//   - when replies may be read after a reconnect (the gate against
//     go-zookeeper's lastZxid data race, see Conn.Read).
//
// Wire.Call injects the requests of ZooKeeper 3.6+ that go-zookeeper
// cannot send (addWatch, removeWatches, checkWatches, setWatches2; their
// encoders are here too) on the current connection, under xids of its own
// that go-zookeeper never sees: their replies are swallowed before it
// reads, and they count in the lease as its requests do.
//
// InFlight bounds the client's requests in flight, so that a ping never
// waits behind thousands of them.
//
// Hosts is the server list go-zookeeper dials from (its HostProvider), which
// the framework's ensemble tracker replaces while the client runs: the
// current connection stays, and the next one is dialled from the new list.
//
// The contract with framework:
//   - framework counts the watches it has outstanding with Wire.AddWatches,
//     so that the gate knows whether go-zookeeper will send setWatches;
//   - every time the package reads is its Clock's, so tests can drive it;
//   - the package imports nothing of framework: its errors are its own, and
//     framework wraps them.
//
// Frames of any size go-zookeeper reads pass through: the package bounds
// nothing go-zookeeper does not.
package transport
