package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework/internal/transport"
)

func TestParseEnsembleConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		version int64
		members []Member
		servers []string
		bad     bool
	}{
		{name: "standalone: empty", data: ""},
		{
			name: "three members",
			data: "server.2=127.0.0.1:2002:3002:participant;127.0.0.1:4002\n" +
				"server.1=127.0.0.1:2001:3001:participant;127.0.0.1:4001\n" +
				"server.3=zk3:2003:3003:observer;0.0.0.0:4003\nversion=100000003\n",
			version: 0x100000003,
			members: []Member{
				{ID: 1, Host: "127.0.0.1", QuorumPort: 2001, ElectionPort: 3001, Role: "participant", ClientAddr: "127.0.0.1:4001", Spec: "127.0.0.1:2001:3001:participant;127.0.0.1:4001"},
				{ID: 2, Host: "127.0.0.1", QuorumPort: 2002, ElectionPort: 3002, Role: "participant", ClientAddr: "127.0.0.1:4002", Spec: "127.0.0.1:2002:3002:participant;127.0.0.1:4002"},
				{ID: 3, Host: "zk3", QuorumPort: 2003, ElectionPort: 3003, Role: "observer", ClientAddr: "zk3:4003", Spec: "zk3:2003:3003:observer;0.0.0.0:4003"},
			},
			servers: []string{"127.0.0.1:4001", "127.0.0.1:4002", "zk3:4003"},
		},
		{
			name:    "client port only, no role, IPv6, no client port",
			data:    "server.1=zk1:2001:3001;4001\nserver.2=[::1]:2002:3002;[::]:4002\nserver.3=zk3:2003:3003\nversion=a",
			version: 10,
			members: []Member{
				{ID: 1, Host: "zk1", QuorumPort: 2001, ElectionPort: 3001, Role: "participant", ClientAddr: "zk1:4001", Spec: "zk1:2001:3001;4001"},
				{ID: 2, Host: "::1", QuorumPort: 2002, ElectionPort: 3002, Role: "participant", ClientAddr: "[::1]:4002", Spec: "[::1]:2002:3002;[::]:4002"},
				{ID: 3, Host: "zk3", QuorumPort: 2003, ElectionPort: 3003, Role: "participant", Spec: "zk3:2003:3003"},
			},
			servers: []string{"zk1:4001", "[::1]:4002"},
		},
		{
			name:    "multiple addresses, other keys",
			data:    "group.1=1:2\nweight.1=1\nserver.1=a:1:2|b:3:4;c:5\nversion=1",
			version: 1,
			members: []Member{{ID: 1, Host: "a", QuorumPort: 1, ElectionPort: 2, Role: "participant", ClientAddr: "c:5", Spec: "a:1:2|b:3:4;c:5"}},
			servers: []string{"c:5"},
		},
		{name: "no =", data: "server.1", bad: true},
		{name: "bad version", data: "version=xyz", bad: true},
		{name: "bad id", data: "server.x=a:1:2;3", bad: true},
		{name: "missing election port", data: "server.1=a:1;3", bad: true},
		{name: "bad port", data: "server.1=a:1:70000;3", bad: true},
		{name: "bad role", data: "server.1=a:1:2:leader;3", bad: true},
		{name: "bad client port", data: "server.1=a:1:2;a:b", bad: true},
		{name: "unclosed bracket", data: "server.1=[::1:1:2;3", bad: true},
		{name: "twice", data: "server.1=a:1:2;3\nserver.1=b:1:2;3", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseEnsembleConfig([]byte(tc.data))
			if tc.bad {
				if !errors.Is(err, ErrBadEnsembleConfig) {
					t.Fatalf("ParseEnsembleConfig(%q) = %v, want ErrBadEnsembleConfig", tc.data, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Version != tc.version || !slices.Equal(cfg.Members, tc.members) || !slices.Equal(cfg.Servers(), tc.servers) || string(cfg.Data) != tc.data {
				t.Fatalf("got version %x, members %+v, servers %q\nwant version %x, members %+v, servers %q",
					cfg.Version, cfg.Members, cfg.Servers(), tc.version, tc.members, tc.servers)
			}
			for _, m := range cfg.Members {
				if m.String() != fmt.Sprintf("server.%d=%s", m.ID, m.Spec) {
					t.Errorf("String() = %q", m.String())
				}
			}
		})
	}
	var nilCfg *EnsembleConfig
	if nilCfg.Servers() != nil {
		t.Error("a nil config has servers")
	}
}

func FuzzParseEnsembleConfig(f *testing.F) {
	f.Add([]byte("server.1=127.0.0.1:2001:3001:participant;127.0.0.1:4001\nversion=100000000"))
	f.Add([]byte("server.2=[::1]:1:2:observer;[::]:3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseEnsembleConfig(data)
		if err != nil {
			if !errors.Is(err, ErrBadEnsembleConfig) {
				t.Fatalf("error %v does not match ErrBadEnsembleConfig", err)
			}
			return
		}
		for i, m := range cfg.Members {
			if i > 0 && cfg.Members[i-1].ID >= m.ID {
				t.Fatalf("members not in ID order: %+v", cfg.Members)
			}
			if m.QuorumPort < 1 || m.ElectionPort < 1 {
				t.Fatalf("member without ports: %+v", m)
			}
		}
	})
}

func TestEnsembleTracker_Default(t *testing.T) {
	for _, tc := range []struct {
		connect string
		set     func(*Builder) *Builder
		want    bool
	}{
		{"a:1,b:2,c:3", nil, true},
		{"a:1", nil, false},
		{"a:1,b:2/chroot", func(b *Builder) *Builder { return b.EnsembleTracker(false) }, false},
		{"a:1", func(b *Builder) *Builder { return b.EnsembleTracker(true) }, true},
	} {
		b := NewBuilder().ConnectString(tc.connect)
		if tc.set != nil {
			b = tc.set(b)
		}
		c, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if c.ens.track != tc.want {
			t.Errorf("%s: tracker on = %v, want %v", tc.connect, c.ens.track, tc.want)
		}
		if c.ConnectString() != tc.connect || c.CurrentConfig() != nil {
			t.Errorf("%s: ConnectString %q, CurrentConfig %v before Start", tc.connect, c.ConnectString(), c.CurrentConfig())
		}
	}
	var nilClient *Client
	if nilClient.ConnectString() != "" || nilClient.CurrentConfig() != nil {
		t.Error("a nil client has a connect string or a config")
	}
}

func TestReconfig_BadArguments(t *testing.T) {
	c, err := NewBuilder().ConnectString("a:1,b:2").Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		b    ReconfigBuilder
		want error
	}{
		{"nothing", c.Reconfig(), ErrInvalidArgument},
		{"whole and incremental", c.Reconfig().WithNewMembers("server.1=a:1:2;3").Leaving(2), ErrInvalidArgument},
		{"empty statement", c.Reconfig().Joining(""), ErrInvalidArgument},
		{"two in one", c.Reconfig().Joining("server.1=a:1:2;3,server.2=b:1:2;3"), ErrInvalidArgument},
		{"negative id", c.Reconfig().Leaving(-1), ErrInvalidArgument},
		{"bad version", c.Reconfig().Leaving(1).FromConfig(-2), ErrInvalidArgument},
		{"not started", c.Reconfig().Leaving(1), ErrNotStarted},
		{"nil client", (*Client)(nil).Reconfig().Leaving(1), ErrNilClient},
	} {
		if _, err := tc.b.ForEnsemble(ctx); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	var nilCtx context.Context
	if _, err := c.Reconfig().Leaving(1).ForEnsemble(nilCtx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil ctx: %v", err)
	}
	if _, _, err := (*Client)(nil).GetConfig().ForEnsemble(ctx); !errors.Is(err, ErrNilClient) {
		t.Errorf("GetConfig of a nil client: %v", err)
	}
	if _, _, err := c.GetConfig().ForEnsemble(ctx); !errors.Is(err, ErrNotStarted) {
		t.Errorf("GetConfig before Start: %v", err)
	}
	// The builder is a value: a copy's changes do not leak into another.
	base := c.Reconfig().Joining("server.1=a:1:2;3")
	_ = base.Joining("server.2=b:1:2;3")
	if len(base.joining) != 1 {
		t.Errorf("a copy's Joining changed the original: %q", base.joining)
	}
}

func TestReconfigError(t *testing.T) {
	if !errors.Is(reconfigError(errors.New("unknown error: -14")), ErrReconfigInProgress) {
		t.Error("code -14 does not match ErrReconfigInProgress")
	}
}

// The zero Client and the zero builders answer with errors, never a panic.
func TestReconfig_ZeroValues(t *testing.T) {
	ctx := context.Background()
	var zero Client
	if _, _, err := zero.GetConfig().ForEnsemble(ctx); !errors.Is(err, ErrNotStarted) {
		t.Errorf("GetConfig of a zero Client: %v", err)
	}
	if _, err := zero.Reconfig().Leaving(1).ForEnsemble(ctx); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Reconfig of a zero Client: %v", err)
	}
	if zero.CurrentConfig() != nil || zero.ConnectString() != "" {
		t.Error("a zero Client has a config or a connect string")
	}
	if _, _, _, err := (GetConfigBuilder{}).ForEnsembleW(ctx); !errors.Is(err, ErrNilClient) {
		t.Errorf("zero GetConfigBuilder: %v", err)
	}
	if _, err := (ReconfigBuilder{}).ForEnsemble(ctx); !errors.Is(err, ErrNilClient) {
		t.Errorf("zero ReconfigBuilder: %v", err)
	}
}

// The connect string stands until a configuration newer than the first
// read names members; then the client's servers and the current chain's
// list follow it. A chroot stays.
func TestEnsembleTracker_ApplyConfig(t *testing.T) {
	c, err := NewBuilder().ConnectString("p1:1,p2:2,p3:3/app").Build()
	if err != nil {
		t.Fatal(err)
	}
	hosts := transport.NewHosts(false) // names kept: they do not resolve
	c.mu.Lock()
	c.ens.hosts = hosts
	c.mu.Unlock()
	if err := hosts.Init(c.servers); err != nil {
		t.Fatal(err)
	}
	cfg := func(version string, servers ...string) []byte {
		var b []byte
		for i, s := range servers {
			b = fmt.Appendf(b, "server.%d=q%d:10:11;%s\n", i+1, i+1, s)
		}
		return fmt.Appendf(b, "version=%s\n", version)
	}
	for _, step := range []struct {
		name    string
		data    []byte
		want    string
		version int64
	}{
		{"first read: the connect string stands (proxies, names)", cfg("10", "s1:1", "s2:2", "s3:3"), "p1:1,p2:2,p3:3/app", 0x10},
		{"same version again", cfg("10", "s1:1"), "p1:1,p2:2,p3:3/app", 0x10},
		{"a newer membership", cfg("11", "s1:1", "s2:2", "s3:3", "s4:4", "s5:5"), "s1:1,s2:2,s3:3,s4:4,s5:5/app", 0x11},
		{"an older one", cfg("f", "s9:9"), "s1:1,s2:2,s3:3,s4:4,s5:5/app", 0xf},
		{"newer, no client ports", []byte("server.4=q4:10:11\nversion=12\n"), "s1:1,s2:2,s3:3,s4:4,s5:5/app", 0x12},
		{"newer, two members", cfg("13", "s4:4", "s5:5"), "s4:4,s5:5/app", 0x13},
	} {
		if err := c.applyConfig(step.data); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := c.ConnectString(); got != step.want {
			t.Fatalf("%s: ConnectString = %q, want %q", step.name, got, step.want)
		}
		if got := c.CurrentConfig(); got == nil || got.Version != step.version {
			t.Fatalf("%s: CurrentConfig = %+v, want version %x", step.name, got, step.version)
		}
		want, _ := strings.CutSuffix(step.want, "/app")
		if !sameStrings(hosts.Servers(), strings.Split(want, ",")) {
			t.Fatalf("%s: the connection chain dials %q, want %q", step.name, hosts.Servers(), want)
		}
	}
	if err := c.applyConfig([]byte("server.1=bad")); !errors.Is(err, ErrBadEnsembleConfig) {
		t.Fatalf("bad data: %v", err)
	}
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
