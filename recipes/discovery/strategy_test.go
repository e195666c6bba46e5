package discovery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
)

func instances(ids ...string) []Instance {
	out := make([]Instance, len(ids))
	for i, id := range ids {
		out[i] = Instance{Name: "svc", ID: id}
	}
	return out
}

func picks(s Strategy, list []Instance, n int) string {
	var ids []string
	for range n {
		in, ok := s.Pick(list)
		if !ok {
			in.ID = "-"
		}
		ids = append(ids, in.ID)
	}
	return strings.Join(ids, " ")
}

func TestRoundRobin(t *testing.T) {
	s := RoundRobin()
	if got := picks(s, instances("a", "b", "c"), 7); got != "a b c a b c a" {
		t.Errorf("picks %q", got)
	}
}

func TestRandom_PicksOnlyFromTheList(t *testing.T) {
	s := Random()
	seen := map[string]bool{}
	for range 200 {
		in, _ := s.Pick(instances("a", "b"))
		seen[in.ID] = true
	}
	if len(seen) != 2 || !seen["a"] || !seen["b"] {
		t.Errorf("picked %v from a, b", seen)
	}
}

func TestSticky_StaysUntilItsInstanceLeaves(t *testing.T) {
	s := Sticky(nil)
	if got := picks(s, instances("a", "b", "c"), 3); got != "a a a" {
		t.Errorf("picks %q", got)
	}
	if got := picks(s, instances("b", "c"), 2); got != "c c" { // round robin's second pick
		t.Errorf("after a left: picks %q", got)
	}
	if got := picks(s, instances("a", "b", "c"), 2); got != "c c" {
		t.Errorf("with a back: picks %q", got)
	}
}

// declineOdd declines every other pick, and otherwise picks the last
// instance.
type declineOdd struct{ n int }

func (d *declineOdd) Pick(instances []Instance) (Instance, bool) {
	d.n++
	if d.n%2 == 1 {
		return Instance{}, false
	}
	return instances[len(instances)-1], true
}

func TestSticky_DeclinesWhenItsNextDoes(t *testing.T) {
	s := Sticky(&declineOdd{})
	if got := picks(s, instances("a", "b"), 3); got != "- b b" {
		t.Errorf("picks %q; want a decline, then b kept", got)
	}
	if got := picks(s, instances("a"), 3); got != "- a a" {
		t.Errorf("after b left: picks %q; want a decline, then a kept", got)
	}
}

func TestDownList(t *testing.T) {
	now := time.Unix(1000, 0)
	d := newDownList(DownPolicy{})
	d.now = func() time.Time { return now }
	a := Instance{Name: "svc", ID: "a"}
	if !d.up(a) {
		t.Fatal("a down before any error")
	}
	d.note(a)
	if !d.up(a) {
		t.Error("a down after 1 error; Curator's threshold is 2")
	}
	d.note(a)
	if d.up(a) {
		t.Error("a up after 2 errors")
	}
	now = now.Add(29 * time.Second)
	if d.up(a) {
		t.Error("a up 29 s after its first error; Curator's timeout is 30 s")
	}
	now = now.Add(time.Second)
	if !d.up(a) {
		t.Error("a still down 30 s after its first error")
	}
}

func TestNew_BadArguments(t *testing.T) {
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(c, "/services")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		call func() error
		also error
	}{
		"nil client":         {func() error { _, err := New(nil, "/s"); return err }, framework.ErrNilClient},
		"relative base":      {func() error { _, err := New(c, "s"); return err }, framework.ErrInvalidPath},
		"base with //":       {func() error { _, err := New(c, "/a//b"); return err }, framework.ErrInvalidPath},
		"zero Discovery":     {func() error { var z Discovery; _, err := z.Names(context.Background()); return err }, framework.ErrInvalidArgument},
		"nil Discovery":      {func() error { var z *Discovery; _, err := z.NewCache("x"); return err }, framework.ErrInvalidArgument},
		"nil ctx, Register":  {func() error { _, err := d.Register(nil, Instance{Name: "x"}); return err }, framework.ErrInvalidArgument}, //nolint:staticcheck // nil ctx on purpose
		"nil ctx, Names":     {func() error { _, err := d.Names(nil); return err }, framework.ErrInvalidArgument},                         //nolint:staticcheck
		"bad name, Register": {func() error { _, err := d.Register(context.Background(), Instance{Name: "a/b"}); return err }, framework.ErrInvalidArgument},
		"bad name, cache":    {func() error { _, err := d.NewCache(""); return err }, framework.ErrInvalidArgument},
		"bad name, query":    {func() error { _, err := d.Instances(context.Background(), "."); return err }, framework.ErrInvalidArgument},
		"bad id, query":      {func() error { _, err := d.Instance(context.Background(), "a", "x/y"); return err }, framework.ErrInvalidArgument},
		"nil strategy":       {func() error { _, err := d.NewProvider("a", WithStrategy(nil)); return err }, framework.ErrInvalidArgument},
		"nil filter":         {func() error { _, err := d.NewProvider("a", WithFilter(nil)); return err }, framework.ErrInvalidArgument},
		"negative policy":    {func() error { _, err := d.NewProvider("a", WithDownPolicy(DownPolicy{Threshold: -1})); return err }, framework.ErrInvalidArgument},
		"nil option":         {func() error { _, err := d.NewProvider("a", nil); return err }, framework.ErrInvalidArgument},
		"zero Provider":      {func() error { var p Provider; _, err := p.Instance(); return err }, framework.ErrInvalidArgument},
		"zero Cache":         {func() error { var ch *Cache; return ch.Start(context.Background()) }, framework.ErrInvalidArgument},
		"zero Registration":  {func() error { var r Registration; return r.Unregister(context.Background()) }, framework.ErrInvalidArgument},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, tc.also) {
				t.Fatalf("err = %v, want ErrInvalidArgument and %v", err, tc.also)
			}
			if msg := err.Error(); strings.Count(msg, "discovery: ") != 1 || strings.Contains(msg, "framework: ") {
				t.Errorf("message %q: want one discovery: prefix", msg)
			}
		})
	}
}
