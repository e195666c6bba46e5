package framework

// ConnectionState is a state of the client's connection, as Curator names
// them.
type ConnectionState int

// The connection states.
const (
	// Latent is the state before Start.
	Latent ConnectionState = iota
	// Connected is sent once, on the first connection.
	Connected
	// Suspended means the connection dropped. The session may still be alive,
	// but a lock holder can no longer be sure of its lock.
	Suspended
	// Reconnected means the connection came back, on the same session or, after
	// Lost, on a new one.
	Reconnected
	// Lost means the session expired, or the client stayed Suspended for a
	// whole session timeout. Ephemeral nodes of the old session are gone, or
	// soon will be.
	Lost
	// ReadOnly is Curator's read-only state. go-zookeeper has no read-only
	// mode, so the client never reports it.
	ReadOnly
	// Closed is the state after Client.Close. It is not sent to listeners,
	// which stop at Close.
	Closed
)

var stateNames = [...]string{"LATENT", "CONNECTED", "SUSPENDED", "RECONNECTED", "LOST", "READ_ONLY", "CLOSED"}

// String returns the state's name as Curator spells it ("CONNECTED",
// "SUSPENDED", ...), or "UNKNOWN".
func (s ConnectionState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// IsConnected reports whether the state is one in which operations can run.
func (s ConnectionState) IsConnected() bool {
	return s == Connected || s == Reconnected || s == ReadOnly
}

// ErrorPolicy says which connection states end the trust in a lock, as
// Curator's ConnectionStateErrorPolicy does.
type ErrorPolicy int

const (
	// StandardErrorPolicy treats Suspended and Lost as a loss of locks. It is
	// Curator's default; ours is SessionErrorPolicy (NewBuilder).
	StandardErrorPolicy ErrorPolicy = iota
	// SessionErrorPolicy treats only Lost as a loss of locks. It is the
	// default: Lost comes from the session's lease, before the server can
	// expire the session (see "When Lost comes"), so a hold outlives a
	// connection blip shorter than its lease and still ends before another
	// client can be granted its lock.
	SessionErrorPolicy
)

// IsError reports whether state s ends the trust in a lock under p.
func (p ErrorPolicy) IsError(s ConnectionState) bool {
	if p == SessionErrorPolicy {
		return s == Lost
	}
	return s == Suspended || s == Lost
}

// Listener receives connection state changes.
type Listener func(ConnectionState)
