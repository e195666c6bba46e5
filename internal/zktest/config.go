package zktest

import (
	"fmt"
	"strings"
	"time"
)

// Config is what a local server's zoo.cfg says about time. The server
// clamps each session timeout a client asks for to [MinSessionTimeout,
// MaxSessionTimeout] and tells the client the result in the handshake, so a
// Config can make the negotiated timeout differ from the requested one.
//
// The zero Config keeps the harness's defaults. A Config is a value; copy it
// freely.
type Config struct {
	// TickTime is ZooKeeper's unit of time; 500 ms when zero, which lets
	// sessions as short as 1 s be granted. A whole number of milliseconds,
	// as are the others.
	TickTime time.Duration
	// MinSessionTimeout is the shortest session timeout granted; when zero,
	// ZooKeeper's default of 2 × TickTime.
	MinSessionTimeout time.Duration
	// MaxSessionTimeout is the longest session timeout granted; 60 s when
	// zero (ZooKeeper's own default would be 20 × TickTime).
	MaxSessionTimeout time.Duration
	// ExtraConfig is appended to every server's zoo.cfg: "key=value" lines.
	// A key given here overrides the harness's; it must not move the ports
	// or the data directory.
	ExtraConfig string
}

// zooCfg returns the part of zoo.cfg that c sets, or an error that names
// what is wrong with c.
func (c Config) zooCfg() (string, error) {
	tick, minSession, maxSession := 500*time.Millisecond, time.Duration(0), 60*time.Second
	for _, f := range []struct {
		name string
		d    time.Duration
		set  *time.Duration
	}{
		{"TickTime", c.TickTime, &tick},
		{"MinSessionTimeout", c.MinSessionTimeout, &minSession},
		{"MaxSessionTimeout", c.MaxSessionTimeout, &maxSession},
	} {
		switch {
		case f.d < 0:
			return "", fmt.Errorf("zktest: Config.%s is negative (%v)", f.name, f.d)
		case f.d%time.Millisecond != 0:
			return "", fmt.Errorf("zktest: Config.%s is not a whole number of milliseconds (%v)", f.name, f.d)
		case f.d > 0:
			*f.set = f.d
		}
	}
	effectiveMin, what := minSession, "MinSessionTimeout"
	if minSession == 0 {
		effectiveMin, what = 2*tick, "2 × TickTime, the default MinSessionTimeout,"
	}
	if effectiveMin > maxSession {
		return "", fmt.Errorf("zktest: Config: %s (%v) exceeds MaxSessionTimeout (%v)", what, effectiveMin, maxSession)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\nmaxSessionTimeout=%d\n", tick.Milliseconds(), maxSession.Milliseconds())
	if minSession > 0 {
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", minSession.Milliseconds())
	}
	if c.ExtraConfig != "" {
		b.WriteString(c.ExtraConfig)
		if !strings.HasSuffix(c.ExtraConfig, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}
