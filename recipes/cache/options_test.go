package cache

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

func TestOptions_BadInput(t *testing.T) {
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	tree := func(opts ...TreeOption) func() error {
		return func() error { _, err := NewTree(c, "/a", opts...); return err }
	}
	kids := func(opts ...TreeOption) func() error {
		return func() error { _, err := NewChildren(c, "/a", opts...); return err }
	}
	for name, tc := range map[string]struct {
		new  func() error
		says string
	}{
		"tree, depth -1":           {tree(WithMaxDepth(-1)), "maximum depth -1 is below 0"},
		"tree, nil selector":       {tree(WithSelector(nil)), "nil selector"},
		"tree, start mode 0":       {tree(WithStartMode(0)), "unknown start mode 0"},
		"tree, start mode 7":       {tree(WithStartMode(7)), "unknown start mode 7"},
		"children, start mode -1":  {kids(WithStartMode(-1)), "unknown start mode -1"},
		"children, a depth":        {kids(WithMaxDepth(2)), "takes no maximum depth"},
		"children, a selector":     {kids(WithSelector(SelectorFuncs{})), "takes no selector"},
		"children, a nil option":   {kids(WithoutData(), nil), "option 1 is nil"},
		"tree, good then bad mode": {tree(WithoutData(), WithStartMode(StartNormal), WithStartMode(99)), "unknown start mode 99"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.new()
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument and framework.ErrInvalidArgument", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.says) || strings.Count(msg, "cache: ") != 1 {
				t.Errorf("message %q: want one cache: prefix and %q", msg, tc.says)
			}
		})
	}
	for _, opts := range [][]TreeOption{
		{WithoutData(), WithStartMode(StartBuildInitialCache)},
		{WithStartMode(StartNormal), WithStartMode(StartPostInitializedEvent)},
	} {
		if _, err := NewChildren(c, "/a", opts...); err != nil {
			t.Errorf("NewChildren: %v", err)
		}
		if _, err := NewTree(c, "/a", append(opts, WithMaxDepth(0), WithSelector(SelectorFuncs{}))...); err != nil {
			t.Errorf("NewTree: %v", err)
		}
	}
}

func TestStartMode_String(t *testing.T) {
	for m, want := range map[StartMode]string{
		StartNormal: "NORMAL", StartBuildInitialCache: "BUILD_INITIAL_CACHE",
		StartPostInitializedEvent: "POST_INITIALIZED_EVENT", 0: "UNKNOWN", 4: "UNKNOWN", -1: "UNKNOWN",
	} {
		if got := m.String(); got != want {
			t.Errorf("%d: %q, want %q", int(m), got, want)
		}
	}
}

func TestSelectorFuncs(t *testing.T) {
	var all SelectorFuncs
	if !all.TraverseChildren("/a") || !all.AcceptChild("/a/b") {
		t.Error("the zero SelectorFuncs refuses a node")
	}
	s := SelectorFuncs{
		Traverse: func(p string) bool { return p != "/a/leaf" },
		Accept:   func(p string) bool { return !strings.HasPrefix(p, "/a/_") },
	}
	if s.TraverseChildren("/a/leaf") || !s.TraverseChildren("/a") || s.AcceptChild("/a/_x") || !s.AcceptChild("/a/x") {
		t.Error("SelectorFuncs does not follow its funcs")
	}
}

func TestWithDecompression_Apply(t *testing.T) {
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	gz, err := framework.GzipCompression{}.Compress("", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		opts    []TreeOption
		data    []byte
		want    string
		wantNil bool
		bad     bool
	}{
		"gzip":                  {[]TreeOption{WithDecompression()}, gz, "hello", false, false},
		"not gzip":              {[]TreeOption{WithDecompression()}, []byte("plain"), "", true, true},
		"truncated":             {[]TreeOption{WithDecompression()}, gz[:len(gz)-4], "", true, true},
		"a header, then junk":   {[]TreeOption{WithDecompression()}, append(append([]byte{}, gz[:10]...), 0xff, 0xfe, 0xfd), "", true, true},
		"null data":             {[]TreeOption{WithDecompression()}, nil, "", true, false},
		"empty data":            {[]TreeOption{WithDecompression()}, []byte{}, "", false, false},
		"without the option":    {nil, gz, string(gz), false, false},
		"without data, corrupt": {[]TreeOption{WithDecompression(), WithoutData()}, []byte("plain"), "", true, false},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := NewTree(c, "/a", tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			core := tr.c
			core.state = started // apply, without a watch: the view is all there is to check
			st := zk.Stat{Czxid: 3, Mzxid: 3, DataLength: int32(len(tc.data))}
			core.apply(framework.WatchEvent{Type: framework.WatchCreated, Path: "/a", Data: tc.data, Stat: &st})
			e, err := tr.Get("/a")
			if err != nil {
				t.Fatal(err)
			}
			if (e.Data == nil) != tc.wantNil || string(e.Data) != tc.want || e.Stat != st {
				t.Errorf("Get = %q (nil %v), stat %+v; want %q (nil %v), %+v", e.Data, e.Data == nil, e.Stat, tc.want, tc.wantNil, st)
			}
			_, err = core.decompress("/a", tc.data)
			if tc.bad && !errors.Is(err, framework.ErrBadCompressedData) {
				t.Errorf("decompress: %v, want ErrBadCompressedData", err)
			}
			core.state = closed
		})
	}
}
