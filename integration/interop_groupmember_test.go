package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/groupmember"
	"github.com/go-curator/curator/zktest"
)

// javaMembers reads a Java GroupMember's getCurrentMembers.
func javaMembers(t *testing.T, j *interop.Helper, p string) (map[string][]byte, error) {
	t.Helper()
	f, err := j.Fields(javaCtx(t, 10*time.Second), "gm.members", p)
	if err != nil {
		return nil, err
	}
	return interop.ParseMembers(f)
}

// waitJavaAndGo waits until the server holds want, and the Go members and
// the Java GroupMember all see it.
func waitJavaAndGo(t *testing.T, j *interop.Helper, obs *groupView, want map[string][]byte, members ...*groupmember.Member) {
	t.Helper()
	waitGroup(t, obs.c, obs.p, want, members...)
	waitFor(t, func() string {
		got, err := javaMembers(t, j, obs.p)
		if err != nil {
			return err.Error()
		}
		if !sameGroup(got, want) {
			return "Java sees " + groupString(got) + ", want " + groupString(want)
		}
		return ""
	})
}

// TestGroupMemberInterop_JavaAndGoMembersSeeEachOther: a Java Curator
// GroupMember and a Go Member in one group list each other with their
// payloads, follow each other's payload changes, see each other come back
// after a session expiry, and see each other leave.
func TestGroupMemberInterop_JavaAndGoMembersSeeEachOther(t *testing.T) {
	cacheNoLeaks(t)
	c, obsClient := newClient(t), newClient(t)
	p := cachePath(t, obsClient)
	obs := &groupView{c: obsClient, p: p}
	j := interop.StartGroup(t, zktest.Shared(t).ConnectString())

	var events pnEvents
	g := startMember(t, c, p, "go-1", "from go")
	g.AddListener(events.listen)
	if _, err := j.Call(javaCtx(t, 30*time.Second), "gm.start", p, "java-1", interop.Hex([]byte("from java"))); err != nil {
		t.Fatalf("Curator GroupMember start: %v", err)
	}
	want := map[string][]byte{"go-1": []byte("from go"), "java-1": []byte("from java")}
	waitJavaAndGo(t, j, obs, want, g)

	// Payload changes, both ways.
	if err := g.SetPayload(t.Context(), []byte("go 2")); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Call(javaCtx(t, 10*time.Second), "gm.set", p, interop.Hex([]byte("java 2"))); err != nil {
		t.Fatal(err)
	}
	want = map[string][]byte{"go-1": []byte("go 2"), "java-1": []byte("java 2")}
	waitJavaAndGo(t, j, obs, want, g)

	// The Java service's session expires: Go sees its member leave and
	// come back, on the new session.
	removedBefore := events.count(cache.NodeRemoved, p+"/java-1")
	addedBefore := events.count(cache.NodeAdded, p+"/java-1")
	if _, err := j.Call(javaCtx(t, 60*time.Second), "expire"); err != nil {
		t.Fatalf("expire the Java session: %v", err)
	}
	eventually(t, pnWait, func() bool {
		return events.count(cache.NodeRemoved, p+"/java-1") > removedBefore && events.count(cache.NodeAdded, p+"/java-1") > addedBefore
	}, "Go sees the Java member leave and come back")
	waitJavaAndGo(t, j, obs, want, g)

	// The Go service's session expires: Java lists it again, owned by the
	// new session.
	expire(t, c)
	waitJavaAndGo(t, j, obs, want, g)
	waitFor(t, func() string {
		_, stat, err := obsClient.GetData().ForPath(t.Context(), p+"/go-1")
		if err != nil {
			return err.Error()
		}
		if id := c.ZooKeeper().SessionID(); stat.EphemeralOwner != id {
			return fmt.Sprintf("go-1 owned by 0x%x, Go's session is 0x%x", stat.EphemeralOwner, id)
		}
		return ""
	})

	// Each leaves.
	if _, err := j.Call(javaCtx(t, 10*time.Second), "gm.close", p); err != nil {
		t.Fatal(err)
	}
	want = map[string][]byte{"go-1": []byte("go 2")}
	waitGroup(t, obsClient, p, want, g)
	if _, err := j.Call(javaCtx(t, 30*time.Second), "gm.start", p, "java-2", "-"); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		got, err := javaMembers(t, j, p)
		if err != nil {
			return err.Error()
		}
		if _, ok := got["go-1"]; ok || len(got) != 1 {
			return "Java sees " + groupString(got) + " after Go left"
		}
		return ""
	})
}
