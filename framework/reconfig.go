package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// The operation names of GetConfig and Reconfig (see OpInfo).
const (
	OpNameGetConfig = "getConfig" // GetConfig().ForEnsemble(W), and the ensemble tracker's reads
	OpNameReconfig  = "reconfig"  // Reconfig().ForEnsemble
)

// The servers' refusals of a reconfiguration that have no sentinel in
// go-zookeeper. A reconfiguration the caller may not make (only a super
// user, or one the ACL of /zookeeper/config lets write, may) fails with an
// error matching ErrNoAuth; a conditional one whose version is not the
// current configuration's, with ErrBadVersion; a statement the servers
// cannot read, or a change that would leave too few participants, with
// ErrInvalidArgument (and zk.ErrBadArguments).
var (
	// ErrReconfigDisabled: the servers run without reconfigEnabled=true.
	// It matches zk.ErrReconfigDisabled too.
	ErrReconfigDisabled = errors.New("framework: reconfiguration is disabled on the servers")
	// ErrReconfigInProgress: the leader is still committing another
	// reconfiguration; try again.
	ErrReconfigInProgress = errors.New("framework: another reconfiguration is in progress")
)

// codeReconfigInProgress is ZooKeeper's ReconfigInProgress (-14), which
// go-zookeeper v1.0.4 reports as an unknown error.
const codeReconfigInProgress = -14

// GetConfigBuilder reads the ensemble's configuration.
type GetConfigBuilder struct{ c *Client }

// GetConfig starts a read of the ensemble's configuration, as Curator's
// getConfig().forEnsemble() does: the node /zookeeper/config (ZooKeeper
// 3.5+), outside the client's chroot and namespace.
func (c *Client) GetConfig() GetConfigBuilder { return GetConfigBuilder{c} }

// ForEnsemble returns the configuration and the node's stat, as the
// connected server knows them: a server may lag the leader; call
// Sync().ForPath first for the latest. Servers before 3.5 have no such
// node: the error matches ErrNoNode. A standalone server's configuration
// has no members.
func (b GetConfigBuilder) ForEnsemble(ctx context.Context) (*EnsembleConfig, *zk.Stat, error) {
	cfg, stat, _, err := b.get(ctx, false)
	return cfg, stat, err
}

// ForEnsembleW is ForEnsemble, and sets a one-shot watch on the
// configuration: the channel gets one event when it changes
// (zk.EventNodeDataChanged), or when the watch ends with its session
// (zk.EventNotWatching).
func (b GetConfigBuilder) ForEnsembleW(ctx context.Context) (*EnsembleConfig, *zk.Stat, <-chan zk.Event, error) {
	return b.get(ctx, true)
}

func (b GetConfigBuilder) get(ctx context.Context, watch bool) (*EnsembleConfig, *zk.Stat, <-chan zk.Event, error) {
	if b.c == nil {
		return nil, nil, nil, ErrNilClient
	}
	var (
		data []byte
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err := b.c.retryRead(ctx, OpNameGetConfig, func() (err error) {
		if watch {
			data, stat, ch, err = b.c.getW(configNode, nil)
		} else {
			data, stat, err = b.c.zkConn().Get(configNode)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, errtext.Errorf("framework: get config: %w", err)
	}
	cfg, err := ParseEnsembleConfig(data)
	if err != nil {
		return nil, stat, ch, errtext.Errorf("framework: get config: %w", err)
	}
	return cfg, stat, ch, nil
}

// ReconfigBuilder changes the ensemble's members, as Curator's
// reconfig() does: incrementally (Joining, Leaving) or as a whole
// (WithNewMembers), optionally only from a given configuration
// (FromConfig). It is a value: each method returns a changed copy.
type ReconfigBuilder struct {
	c       *Client
	joining []string
	leaving []int64
	members []string
	version int64
}

// Reconfig starts a reconfiguration. The servers must run with
// reconfigEnabled=true, and the client must be authorized to write
// /zookeeper/config: a super user (Builder.Authorization with the
// super digest's credentials), or any client under skipACL=yes. See
// ZooKeeper's "Dynamic Reconfiguration" guide for which changes a quorum
// accepts.
func (c *Client) Reconfig() ReconfigBuilder { return ReconfigBuilder{c: c, version: -1} }

// Joining adds servers, each a statement
// "server.ID=host:quorumPort:electionPort[:role];[clientHost:]clientPort"
// (Member.String gives one). A server already a member with other ports
// or another role is changed to these.
func (b ReconfigBuilder) Joining(servers ...string) ReconfigBuilder {
	b.joining = slices.Concat(b.joining, servers)
	return b
}

// Leaving removes the servers with these IDs.
func (b ReconfigBuilder) Leaving(ids ...int64) ReconfigBuilder {
	b.leaving = slices.Concat(b.leaving, ids)
	return b
}

// WithNewMembers replaces the whole membership with these servers
// (statements as Joining takes). It cannot be combined with Joining or
// Leaving.
func (b ReconfigBuilder) WithNewMembers(servers ...string) ReconfigBuilder {
	b.members = slices.Concat(b.members, servers)
	return b
}

// FromConfig makes the reconfiguration conditional: it is applied only if
// the current configuration's version is version (EnsembleConfig.Version),
// and otherwise fails with an error matching ErrBadVersion. -1, the
// default, applies it to whatever configuration is current.
func (b ReconfigBuilder) FromConfig(version int64) ReconfigBuilder { b.version = version; return b }

// ForEnsemble runs the reconfiguration in the retry loop and returns the
// configuration it made, read from the server that committed it.
//
// A reconfiguration whose reply was lost may have been applied: if its
// retry finds ErrBadVersion (under FromConfig) or ErrInvalidArgument (the
// servers it removes may be gone already), or the retries end on a
// connection error, the error matches ErrIndeterminate too: read the
// configuration (GetConfig) before trying again. Bad arguments (none of
// Joining, Leaving and WithNewMembers, WithNewMembers with either of the
// others, an empty statement or one holding ',', a negative ID or a
// version below -1) fail with ErrInvalidArgument before any request.
func (b ReconfigBuilder) ForEnsemble(ctx context.Context) (*EnsembleConfig, error) {
	if b.c == nil {
		return nil, ErrNilClient
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	leaving := make([]string, len(b.leaving))
	for i, id := range b.leaving {
		leaving[i] = strconv.FormatInt(id, 10)
	}
	var stat *zk.Stat
	maybe, err := b.c.retryOp(ctx, OpNameReconfig, func(bool) (err error) {
		conn := b.c.zkConn()
		if b.members != nil {
			stat, err = conn.Reconfig(b.members, b.version)
		} else {
			stat, err = conn.IncrementalReconfig(b.joining, leaving, b.version)
		}
		return err
	})
	if err != nil {
		// A retry may meet its own first attempt: the version moved on,
		// or the servers it removed are gone already.
		if maybe && (IsRetryable(err) || errors.Is(err, zk.ErrBadArguments) ||
			(b.version != -1 && errors.Is(err, zk.ErrBadVersion))) {
			err = Indeterminate(err)
		}
		return nil, errtext.Errorf("framework: reconfig: %w", reconfigError(err))
	}
	cfg, err := b.c.configSince(ctx, stat.Mzxid)
	if err != nil {
		return nil, errtext.Errorf("framework: reconfig: applied (version %x), then: %w", stat.Mzxid, err)
	}
	return cfg, nil
}

// check validates the builder's arguments.
func (b ReconfigBuilder) check() error {
	switch {
	case b.members == nil && b.joining == nil && b.leaving == nil:
		return fmt.Errorf("%w: reconfig: no Joining, Leaving or WithNewMembers", ErrInvalidArgument)
	case b.members != nil && (b.joining != nil || b.leaving != nil):
		return fmt.Errorf("%w: reconfig: WithNewMembers cannot be combined with Joining or Leaving", ErrInvalidArgument)
	case b.version < -1:
		return fmt.Errorf("%w: reconfig: FromConfig(%d): a version is -1 or more", ErrInvalidArgument, b.version)
	}
	for _, s := range slices.Concat(b.joining, b.members) {
		if strings.TrimSpace(s) == "" || strings.Contains(s, ",") {
			return fmt.Errorf("%w: reconfig: server statement %q: want one non-empty statement without ','", ErrInvalidArgument, s)
		}
	}
	for _, id := range b.leaving {
		if id < 0 {
			return fmt.Errorf("%w: reconfig: Leaving(%d): a server ID is not negative", ErrInvalidArgument, id)
		}
	}
	return nil
}

// configSince reads the configuration, syncing the server first if it
// has not seen version yet (a reconnect to a lagging server after the
// reconfiguration committed).
func (c *Client) configSince(ctx context.Context, version int64) (*EnsembleConfig, error) {
	var data []byte
	err := c.retryRead(ctx, OpNameGetConfig, func() error {
		conn := c.zkConn()
		d, stat, err := conn.Get(configNode)
		if err == nil && stat.Mzxid < version {
			if _, err = conn.Sync(configNode); err == nil {
				d, _, err = conn.Get(configNode)
			}
		}
		data = d
		return err
	})
	if err != nil {
		return nil, err
	}
	return ParseEnsembleConfig(data)
}

// reconfigError adds the framework's sentinels for a reconfiguration's
// refusals (see ErrReconfigDisabled).
func reconfigError(err error) error {
	switch {
	case errors.Is(err, zk.ErrReconfigDisabled):
		return fmt.Errorf("%w: %w", ErrReconfigDisabled, err)
	case errors.Is(err, zk.ErrBadArguments):
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	case hasUnknownCode(err, codeReconfigInProgress):
		return fmt.Errorf("%w: %w", ErrReconfigInProgress, err)
	}
	return err
}
