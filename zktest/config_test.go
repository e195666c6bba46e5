package zktest

import (
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestConfig_ZooCfg(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // lines of the result, or the start of the error
		err  bool
	}{
		{"zero keeps the defaults", Config{}, []string{"tickTime=500", "maxSessionTimeout=60000"}, false},
		{"all set", Config{TickTime: time.Second, MinSessionTimeout: 3 * time.Second, MaxSessionTimeout: 5 * time.Second, ExtraConfig: "globalOutstandingLimit=100"},
			[]string{"tickTime=1000", "maxSessionTimeout=5000", "minSessionTimeout=3000", "globalOutstandingLimit=100"}, false},
		{"sync limit", Config{SyncLimit: 10}, []string{"tickTime=500", "maxSessionTimeout=60000", "syncLimit=10"}, false},
		{"negative sync limit", Config{SyncLimit: -1}, []string{"zktest: Config.SyncLimit is negative"}, true},
		{"negative", Config{MaxSessionTimeout: -time.Second}, []string{"zktest: Config.MaxSessionTimeout is negative"}, true},
		{"not whole milliseconds", Config{TickTime: 1500 * time.Microsecond}, []string{"zktest: Config.TickTime is not a whole number of milliseconds"}, true},
		{"min above max", Config{MinSessionTimeout: 3 * time.Second, MaxSessionTimeout: 2 * time.Second}, []string{"zktest: Config: MinSessionTimeout (3s) exceeds MaxSessionTimeout (2s)"}, true},
		{"default min above max", Config{TickTime: 40 * time.Second}, []string{"zktest: Config: 2 × TickTime"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.zooCfg()
			if tc.err {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want[0]) {
					t.Errorf("zooCfg() = %q, %v; want an error starting %q", got, err, tc.want[0])
				}
				return
			}
			if err != nil || got != strings.Join(tc.want, "\n")+"\n" {
				t.Errorf("zooCfg() = %q, %v; want the lines %q", got, err, tc.want)
			}
		})
	}
}

func TestStartLocalWith_InvalidConfigStartsNothing(t *testing.T) {
	c, err := StartLocalWith(t.Context(), 1, Config{TickTime: -time.Second})
	if err == nil || c != nil || !strings.Contains(err.Error(), "TickTime") {
		t.Errorf("StartLocalWith(invalid) = %v, %v; want an error naming TickTime", c, err)
	}
}

// grants records the session timeout a server grants each connection, from
// its ConnectResponse: after the length, protocolVersion int32, timeOut
// int32 in milliseconds, sessionId int64 and passwd.
type grants struct {
	mu   sync.Mutex
	last time.Duration
}

// dialer returns a go-zookeeper option that dials through g.
func (g *grants) dialer() func(*zk.Conn) {
	return zk.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &handshakeConn{Conn: c, g: g}, nil
	})
}

// granted returns the timeout of the last handshake.
func (g *grants) granted() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

// handshakeConn is a connection whose first 12 bytes read, the length,
// protocol version and timeout of the ConnectResponse, go to g.
type handshakeConn struct {
	net.Conn
	g    *grants
	head []byte
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if len(c.head) < 12 {
		c.head = append(c.head, b[:min(n, 12-len(c.head))]...)
		if len(c.head) == 12 {
			ms := int32(binary.BigEndian.Uint32(c.head[8:]))
			c.g.mu.Lock()
			c.g.last = time.Duration(ms) * time.Millisecond
			c.g.mu.Unlock()
		}
	}
	return n, err
}

// checkGranted connects to c asking for each requested timeout and checks
// the timeout the server grants.
func checkGranted(t *testing.T, c *Cluster, cases []struct{ asked, granted time.Duration }) {
	t.Helper()
	for _, tc := range cases {
		var g grants
		conn := connect(t, c.ConnectString(), tc.asked, g.dialer())
		if got := g.granted(); got != tc.granted {
			t.Errorf("asked for %v, granted %v; want %v", tc.asked, got, tc.granted)
		}
		// The session works at the granted timeout.
		if _, err := conn.Sync("/"); err != nil {
			t.Errorf("Sync on a session granted %v: %v", g.granted(), err)
		}
		conn.Close()
	}
}

func TestStartWith_MaxSessionTimeoutLowersTheRequest(t *testing.T) {
	c := StartWith(t, Config{TickTime: 500 * time.Millisecond, MaxSessionTimeout: 2 * time.Second})
	checkGranted(t, c, []struct{ asked, granted time.Duration }{
		{10 * time.Second, 2 * time.Second},
		{1500 * time.Millisecond, 1500 * time.Millisecond},
		{200 * time.Millisecond, time.Second}, // the default minimum, 2 × TickTime
	})
}

func TestStartWith_MinSessionTimeoutRaisesTheRequest(t *testing.T) {
	c := StartWith(t, Config{MinSessionTimeout: 6 * time.Second, ExtraConfig: "maxSessionTimeout=8000"})
	checkGranted(t, c, []struct{ asked, granted time.Duration }{
		{2 * time.Second, 6 * time.Second},
		{7 * time.Second, 7 * time.Second},
		{10 * time.Second, 8 * time.Second}, // ExtraConfig overrides the harness's 60 s
	})
}

func TestStartWith_ClientPortFromConfig(t *testing.T) {
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	c := StartWith(t, Config{ExtraConfig: "clientPort=" + port})
	want := "127.0.0.1:" + port
	if s := c.Servers()[0]; s.Addr() != want || c.ConnectString() != want {
		t.Errorf("Addr() = %s, ConnectString() = %s; want %s", s.Addr(), c.ConnectString(), want)
	}
	conn := connect(t, c.ConnectString(), 4*time.Second)
	if _, err := conn.Sync("/"); err != nil {
		t.Fatal(err)
	}
}
