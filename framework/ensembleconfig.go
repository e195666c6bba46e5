package framework

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ErrBadEnsembleConfig reports configuration data (the node
// /zookeeper/config) that ParseEnsembleConfig cannot read.
var ErrBadEnsembleConfig = errors.New("framework: bad ensemble configuration")

// configNode is the node where ZooKeeper 3.5+ keeps the ensemble's
// dynamic configuration. It is outside any chroot or namespace.
const configNode = "/zookeeper/config"

// EnsembleConfig is an ensemble's dynamic configuration, as the servers
// keep it in /zookeeper/config: one line "server.ID=spec" per member and
// "version=HEX", the zxid of the reconfiguration that made it. The data
// of a standalone server (ZooKeeperServerMain) is empty: no members,
// version 0. The zero value is such an empty configuration. An
// EnsembleConfig may be copied; its slices are shared by the copies.
type EnsembleConfig struct {
	// Version is the configuration's version: the value a conditional
	// reconfiguration (ReconfigBuilder.FromConfig) names.
	Version int64
	// Members are the servers, by ID.
	Members []Member
	// Data is the node's data as read.
	Data []byte
}

// Member is one server of an EnsembleConfig, from its statement
// "server.ID=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]".
type Member struct {
	ID           int64
	Host         string // the host of the quorum and election ports
	QuorumPort   int
	ElectionPort int
	Role         string // "participant" or "observer"
	// ClientAddr is the "host:port" a client dials, "" when the statement
	// has no client port. A wildcard client host (none given, 0.0.0.0 or
	// ::) is replaced by Host, as Curator's ensemble tracker does
	// (CURATOR-384: a client cannot dial the wildcard address).
	ClientAddr string
	// Spec is the statement's right-hand side as read.
	Spec string
}

// String returns the member's statement, "server.ID=spec": what
// ReconfigBuilder.Joining and WithNewMembers take.
func (m Member) String() string { return fmt.Sprintf("server.%d=%s", m.ID, m.Spec) }

// Servers returns the members' client addresses, in ID order: the server
// list the ensemble tracker gives the client. Members without a client
// port are left out.
func (c *EnsembleConfig) Servers() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, m := range c.Members {
		if m.ClientAddr != "" {
			out = append(out, m.ClientAddr)
		}
	}
	return out
}

// ParseEnsembleConfig reads the data of /zookeeper/config. Keys other than
// "server.ID" and "version" (a hierarchical quorum's "group" and "weight")
// are left in Data. Its errors match ErrBadEnsembleConfig and name the
// line.
func ParseEnsembleConfig(data []byte) (*EnsembleConfig, error) {
	cfg := &EnsembleConfig{Data: bytes.Clone(data)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: line %q has no '='", ErrBadEnsembleConfig, line)
		case key == "version":
			v, err := strconv.ParseInt(value, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: line %q: the version is not hexadecimal", ErrBadEnsembleConfig, line)
			}
			cfg.Version = v
		case strings.HasPrefix(key, "server."):
			id, err := strconv.ParseInt(key[len("server."):], 10, 64)
			if err != nil || id < 0 {
				return nil, fmt.Errorf("%w: line %q: %q is not a server ID", ErrBadEnsembleConfig, line, key[len("server."):])
			}
			m, err := parseMember(id, value)
			if err != nil {
				return nil, fmt.Errorf("%w: line %q: %v", ErrBadEnsembleConfig, line, err)
			}
			cfg.Members = append(cfg.Members, m)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEnsembleConfig, err)
	}
	slices.SortFunc(cfg.Members, func(a, b Member) int { return int(min(max(a.ID-b.ID, -1), 1)) })
	for i := 1; i < len(cfg.Members); i++ {
		if cfg.Members[i].ID == cfg.Members[i-1].ID {
			return nil, fmt.Errorf("%w: server %d is listed twice", ErrBadEnsembleConfig, cfg.Members[i].ID)
		}
	}
	return cfg, nil
}

// parseMember reads "host:quorumPort:electionPort[:role][;[clientHost:]clientPort]".
// Of several quorum addresses ("a:1:2|b:3:4", ZooKeeper 3.6's multiple
// addresses) the first is taken.
func parseMember(id int64, spec string) (Member, error) {
	m := Member{ID: id, Spec: spec, Role: "participant"}
	server, client, hasClient := strings.Cut(spec, ";")
	server, _, _ = strings.Cut(server, "|")
	host, rest := "", strings.TrimSpace(server)
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return m, errors.New("an unclosed '[' in the address")
		}
		host, rest = rest[1:end], rest[end+1:]
		if !strings.HasPrefix(rest, ":") {
			return m, errors.New("no ports after the address")
		}
		rest = rest[1:]
	} else {
		var ok bool
		if host, rest, ok = strings.Cut(rest, ":"); !ok {
			return m, errors.New("no ports after the address")
		}
	}
	parts := strings.Split(rest, ":")
	if host == "" || len(parts) < 2 || len(parts) > 3 {
		return m, errors.New("want host:quorumPort:electionPort[:role]")
	}
	var err error
	if m.QuorumPort, err = port(parts[0]); err != nil {
		return m, err
	}
	if m.ElectionPort, err = port(parts[1]); err != nil {
		return m, err
	}
	if len(parts) == 3 {
		switch role := strings.ToLower(strings.TrimSpace(parts[2])); role {
		case "participant", "observer":
			m.Role = role
		default:
			return m, fmt.Errorf("unknown role %q", parts[2])
		}
	}
	m.Host = host
	if !hasClient || strings.TrimSpace(client) == "" {
		return m, nil
	}
	client = strings.TrimSpace(client)
	chost, cport := "", client
	if strings.ContainsRune(client, ':') {
		if chost, cport, err = net.SplitHostPort(client); err != nil {
			return m, fmt.Errorf("client address: %v", err)
		}
	}
	p, err := port(cport)
	if err != nil {
		return m, fmt.Errorf("client %v", err)
	}
	if ip := net.ParseIP(chost); chost == "" || (ip != nil && ip.IsUnspecified()) {
		chost = host
	}
	m.ClientAddr = net.JoinHostPort(chost, strconv.Itoa(p))
	return m, nil
}

func port(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %q is not from 1 to 65535", s)
	}
	return p, nil
}
