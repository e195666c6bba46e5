package integration

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/zktest"
)

// javaCtx bounds one helper call in interop tests.
func javaCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// startJava starts a Curator helper on the shared server.
func startJava(t testing.TB) *interop.Helper {
	t.Helper()
	return interop.Start(t, zktest.Shared(t).ConnectString())
}

// curatorProtected asks Curator's ProtectedUtils about a node name: whether
// it is protected, and if so its id and its name without the prefix.
func curatorProtected(t testing.TB, j *interop.Helper, name string) (ok bool, id, normalized string) {
	t.Helper()
	f, err := j.Fields(javaCtx(t, 10*time.Second), "isprotected", name)
	if err != nil {
		t.Fatalf("isprotected %q: %v", name, err)
	}
	if f[0] == "false" {
		return false, "", ""
	}
	if len(f) != 3 || f[0] != "true" {
		t.Fatalf("isprotected %q: reply %q", name, f)
	}
	return true, f[1], f[2]
}

var seqSuffix = regexp.MustCompile(`^(.*?)(\d{10})$`)

// TestInterop_GoProtectedNamesPassCuratorCheck creates protected nodes in
// every mode from Go and checks each name with Curator's own check: it must
// be protected, carry the UUID Go put in it, and normalize to the name Go
// asked for (plus the server's suffix), as framework.StripProtected says.
func TestInterop_GoProtectedNamesPassCuratorCheck(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	ctx := t.Context()

	asked := map[string]framework.CreateMode{
		"lock-":       framework.EphemeralSequential,
		"member":      framework.Ephemeral,
		"plain_name":  framework.Persistent,
		"seq-with-x-": framework.PersistentSequential,
	}
	for name, mode := range asked {
		if _, err := c.Create().CreatingParentContainersIfNeeded().WithProtection().WithMode(mode).
			ForPath(ctx, base+"/"+name, nil); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}

	kids := children(t, c, base)
	if len(kids) != len(asked) {
		t.Fatalf("children of %s = %q, want %d nodes", base, kids, len(asked))
	}
	seen := map[string]bool{}
	for _, kid := range kids {
		ok, id, normalized := curatorProtected(t, j, kid)
		if !ok {
			t.Errorf("Curator does not take Go's node %q as protected", kid)
			continue
		}
		if want := kid[len(framework.ProtectedPrefix) : len(framework.ProtectedPrefix)+36]; id != want {
			t.Errorf("Curator reads id %q from %q, want %q", id, kid, want)
		}
		if goName := framework.StripProtected(kid); normalized != goName {
			t.Errorf("Curator normalizes %q to %q, Go to %q", kid, normalized, goName)
		}
		name := normalized
		if m := seqSuffix.FindStringSubmatch(normalized); m != nil {
			if mode, ok := asked[m[1]]; ok && (mode == framework.EphemeralSequential || mode == framework.PersistentSequential) {
				name = m[1]
			}
		}
		if _, ok := asked[name]; !ok {
			t.Errorf("node %q normalizes to %q, which Go did not ask for", kid, normalized)
		}
		seen[name] = true
	}
	if len(seen) != len(asked) {
		t.Errorf("Curator recognised %d of Go's %d names: %v", len(seen), len(asked), seen)
	}
}

// TestInterop_CuratorProtectedNamesPassGoCheck lets Curator make protected
// nodes (plain creates and InterProcessMutex's lock node) and checks them
// with framework.IsProtected and StripProtected.
func TestInterop_CuratorProtectedNamesPassGoCheck(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)

	for _, create := range [][]string{
		{base + "/plain", "persistent"},
		{base + "/member", "ephemeral"},
		{base + "/seq-", "persistent_sequential"},
		{base + "/eseq-", "ephemeral_sequential"},
	} {
		p, err := j.Call(javaCtx(t, 10*time.Second), "create", create[0], create[1], "protected")
		if err != nil {
			t.Fatalf("Curator create %v: %v", create, err)
		}
		parent, name := framework.SplitPath(p)
		if parent != base {
			t.Fatalf("Curator created %q, not under %q", p, base)
		}
		if !framework.IsProtected(name) {
			t.Errorf("framework.IsProtected(%q) = false for Curator's protected %s node", name, create[1])
		}
		_, asked := framework.SplitPath(create[0])
		got := framework.StripProtected(name)
		if strings.HasSuffix(create[1], "sequential") {
			m := seqSuffix.FindStringSubmatch(got)
			if m == nil {
				t.Errorf("StripProtected(%q) = %q, want %q plus 10 digits", name, got, asked)
				continue
			}
			got = m[1]
		}
		if got != asked {
			t.Errorf("StripProtected(%q) = %q, want %q", name, got, asked)
		}
	}

	lockPath := base + "/lock"
	held, err := j.Bool(javaCtx(t, 10*time.Second), "mutex.acquire", lockPath, "5000")
	if err != nil || !held {
		t.Fatalf("Curator mutex.acquire = %v, %v", held, err)
	}
	kids := children(t, c, lockPath)
	if len(kids) != 1 {
		t.Fatalf("children of Curator's lock = %q, want one node", kids)
	}
	if !framework.IsProtected(kids[0]) {
		t.Errorf("framework.IsProtected(%q) = false for Curator's lock node", kids[0])
	}
	if got := framework.StripProtected(kids[0]); !regexp.MustCompile(`^lock-\d{10}$`).MatchString(got) {
		t.Errorf("StripProtected(%q) = %q, want lock-<10 digits>", kids[0], got)
	}
	parts, err := j.Fields(javaCtx(t, 10*time.Second), "mutex.participants", lockPath)
	if err != nil || len(parts) != 1 || parts[0] != lockPath+"/"+kids[0] {
		t.Errorf("Curator participants = %q, %v; want [%s/%s]", parts, err, lockPath, kids[0])
	}
	if _, err := j.Call(javaCtx(t, 10*time.Second), "mutex.release", lockPath); err != nil {
		t.Fatalf("Curator mutex.release: %v", err)
	}
	if kids := children(t, c, lockPath); len(kids) != 0 {
		t.Errorf("after Curator's release, %s holds %q", lockPath, kids)
	}
}

// TestInterop_ProtectedCheckAgreesWithCurator feeds the same names to
// framework.IsProtected and to Curator's ProtectedUtils.isProtectedZNode.
// They must agree on every name either library can produce or meet from
// the other, and on the near misses around them.
func TestInterop_ProtectedCheckAgreesWithCurator(t *testing.T) {
	j := startJava(t)
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	names := []string{
		"_c_" + id + "-lock-0000000001",
		"_c_" + id + "-__READ__0000000007",
		"_c_" + id + "-__WRIT__0000000007",
		"_c_" + id + "-lease-0000000003",
		"_c_" + id + "-x",
		"_c_" + strings.ToUpper(id) + "-lock-0000000001", // Java and Go parse hex in either case
		"_c_" + id + "_lock-0000000001",                  // wrong separator
		"_c_" + id[:35] + "-lock-0000000001",             // short UUID
		"_c_" + id[:8] + "x" + id[9:] + "-lock-0000000001",
		"_c_" + id[:9] + "g" + id[10:] + "-lock-0000000001", // not hex
		"_C_" + id + "-lock-0000000001",
		"c_" + id + "-lock-0000000001",
		"lock-0000000001",
		"__READ__0000000001",
		"_c_",
		"_c_" + id + "-", // the prefix alone, with no name after it
		"_c_" + id,
	}
	for _, name := range names {
		javaSays, _, normalized := curatorProtected(t, j, name)
		if goSays := framework.IsProtected(name); goSays != javaSays {
			t.Errorf("%q: framework.IsProtected = %v, Curator = %v", name, goSays, javaSays)
			continue
		}
		if javaSays && framework.StripProtected(name) != normalized {
			t.Errorf("%q: StripProtected = %q, Curator normalizes to %q", name, framework.StripProtected(name), normalized)
		}
	}
}

// deleteTree deletes p and everything under it, ignoring errors.
func deleteTree(t testing.TB, c *framework.Client, p string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var walk func(string)
	walk = func(p string) {
		kids, _ := c.GetChildren().ForPath(ctx, p)
		for _, k := range kids {
			walk(framework.JoinPath(p, k))
		}
		_ = c.Delete().Quietly().ForPath(ctx, p)
	}
	walk(p)
}
