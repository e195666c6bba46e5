package zktest

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// SuperUser is the digest credential, "user:password", of the super user
// that every server of a reconfigurable cluster (Config.Reconfig) knows.
// ZooKeeper lets only an authorized client reconfigure the ensemble: give a
// client the "digest" scheme with these bytes to do it.
const SuperUser = "super:zktest"

// superDigest returns ZooKeeper's DigestAuthenticationProvider digest of
// "user:password": user:base64(sha1(user:password)).
func superDigest(cred string) string {
	user, _, _ := strings.Cut(cred, ":")
	sum := sha1.Sum([]byte(cred))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// reconfigState is what a reconfigurable cluster keeps to start servers
// that join it (Cluster.AddServer).
type reconfigState struct {
	static string   // the zoo.cfg lines every server shares, without its own ports and dirs
	cmd    []string // java's arguments up to the zoo.cfg path
	java   string
	from   string // where the jars come from, for messages
}

// reconfigCfg returns the zoo.cfg lines a reconfigurable server needs: the
// feature on, standalone mode off (so that one server runs as a quorum of
// one, and an ensemble may shrink to one), and SuperUser as super user.
// Unknown zoo.cfg keys become "zookeeper."-prefixed system properties, which
// is where ZooKeeper reads the super digest from.
func reconfigCfg() string {
	return "reconfigEnabled=true\nstandaloneEnabled=false\n" +
		"DigestAuthenticationProvider.superDigest=" + superDigest(SuperUser) + "\n"
}

// serverSpec returns the dynamic-config statement of server id: its quorum
// and election ports, its role, and its client address.
func serverSpec(id, quorum, election int, role string, client int) string {
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;127.0.0.1:%d", id, quorum, election, role, client)
}

// Spec returns the server's statement in ZooKeeper's dynamic configuration
// as a participant, "server.ID=127.0.0.1:quorumPort:electionPort:participant;127.0.0.1:clientPort":
// what a reconfiguration that adds the server names (a joining server, or a
// member of a whole new configuration). It is "" for a server that is not a
// member of a local ensemble.
func (s *Server) Spec() string { return s.spec }

// AddServer starts a server that can join the cluster, and waits until it
// serves: a new ID (one above the highest so far), new loopback ports and a
// data directory of its own. It is not a member until a reconfiguration
// adds it (with its [Server.Spec]): until then it is a non-voting follower
// that syncs with the leader, as ZooKeeper's reconfiguration guide has
// joiners start, listed in its own first configuration as an observer
// beside the members that a running server of the cluster reports (the
// "conf" four-letter word), so that joiners never form a quorum of their
// own. The cluster must have been started with Config.Reconfig. The
// server is one of [Cluster.Servers] from then on and Close stops it;
// [Cluster.ConnectString] stays the first servers'.
func (c *Cluster) AddServer(ctx context.Context) (*Server, error) {
	if ctx == nil {
		return nil, errors.New("zktest: AddServer: nil context")
	}
	c.mu.Lock()
	closed, rc, known := c.closed, c.rc, slices.Clone(c.servers)
	c.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case len(known) == 0:
		return nil, ErrNoControl
	case rc == nil:
		return nil, errors.New("zktest: AddServer: the cluster was not started with Config.Reconfig, so servers cannot join it")
	}
	members, err := currentMembers(ctx, known)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	// The ID is taken and the server listed under one lock, so that
	// servers added at once get IDs of their own.
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	id := 0
	for _, s := range c.servers {
		id = max(id, s.ID)
	}
	id++
	sdir := filepath.Join(c.dir, "s"+strconv.Itoa(id))
	cfgPath := filepath.Join(sdir, "zoo.cfg")
	s := c.newReconfigServer(id, ports[0], ports[1], ports[2])
	s.b = &process{
		java: rc.java, args: append(slices.Clone(rc.cmd), cfgPath), dir: sdir,
		logPath: filepath.Join(sdir, "server.log"), addr: s.addr, jarsFrom: rc.from,
	}
	c.servers = append(c.servers, s)
	c.mu.Unlock()

	data := filepath.Join(sdir, "data")
	conf := fmt.Sprintf("%sdataDir=%s\nclientPort=%d\n", rc.static, data, ports[0])
	for _, m := range members {
		conf += m + "\n"
	}
	conf += serverSpec(id, ports[1], ports[2], "observer", ports[0]) + "\n"
	err = os.MkdirAll(data, 0o755)
	if err == nil {
		err = os.WriteFile(cfgPath, []byte(conf), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// newReconfigServer returns the Server, without its backend, of a member
// of a reconfigurable cluster.
func (c *Cluster) newReconfigServer(id, client, quorum, election int) *Server {
	return &Server{
		ID:         id,
		addr:       net.JoinHostPort("127.0.0.1", strconv.Itoa(client)),
		ensemble:   true,
		quorumAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(quorum)),
		spec:       serverSpec(id, quorum, election, "participant", client),
	}
}

// currentMembers returns the "server." statements of the configuration the
// first running server of known reports ("conf"), or, when none answers
// with them, the statements of every known server.
func currentMembers(ctx context.Context, known []*Server) ([]string, error) {
	for _, s := range known {
		answer, err := fourLetter(ctx, s.addr, "conf")
		if err != nil {
			continue
		}
		var members []string
		sc := bufio.NewScanner(strings.NewReader(answer))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "server.") {
				members = append(members, line)
			}
		}
		if len(members) > 0 {
			return members, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("zktest: AddServer: %w", err)
	}
	var members []string
	for _, s := range known {
		if s.spec != "" {
			members = append(members, s.spec)
		}
	}
	return members, nil
}

// StartReconfigurable returns n servers (n >= 1) from the local ZooKeeper
// install whose ensemble can be reconfigured, for the calling test: see
// Config.Reconfig. cfg's Reconfig need not be set. t.Cleanup closes it. An
// invalid cfg fails the test; without a local install, the test skips, or
// fails when ZK_TEST_REQUIRE=1.
func StartReconfigurable(t testing.TB, n int, cfg Config) *Cluster {
	t.Helper()
	cfg.Reconfig = true
	return startWithFor(t, n, cfg)
}
