package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func TestProbe_LeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	start := time.Now()
	err := probe(t.Context())
	t.Logf("Docker probe: %v after %v", err, time.Since(start))
}

// TestImport_RegistersTheRuntime takes the local install away, so that only
// a container can serve: zktest runs the server in Docker, or reports what
// Docker said (not that no runtime is linked in).
func TestImport_RegistersTheRuntime(t *testing.T) {
	t.Setenv("ZK_TEST_CONNECT", "")
	t.Setenv("ZK_TEST_DOCKER", "")
	t.Setenv("ZK_TEST_JARS", t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := zktest.StartAny(ctx, 1)
	if err != nil {
		if !strings.Contains(err.Error(), "containers: no Docker engine") {
			t.Errorf("StartAny error = %v, want Docker's answer", err)
		}
		return
	}
	defer c.Close()
	if !strings.HasPrefix(c.String(), "docker "+Image) {
		t.Errorf("StartAny gave %v, want a %s container", c, Image)
	}
}
