package zktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// noLocalInstall makes StartAny's only possible sources ZK_TEST_CONNECT
// (unset here) and a container.
func noLocalInstall(t *testing.T) {
	t.Setenv("ZK_TEST_CONNECT", "")
	t.Setenv("ZK_TEST_DOCKER", "")
	t.Setenv("ZK_TEST_JARS", t.TempDir())
}

func TestStartAny_WithoutRuntimeNamesTheDockerModule(t *testing.T) {
	noLocalInstall(t)
	c, err := StartAny(t.Context(), 1)
	if err == nil {
		c.Close()
		t.Fatalf("StartAny without a local install or a container runtime gave %v", c)
	}
	if want := `import _ "github.com/go-curator/curator/zktest/docker"`; !strings.Contains(err.Error(), want) {
		t.Errorf("StartAny error = %v\nwant it to say %s", err, want)
	}
}

// fakeRuntime answers Available with avail and fails every Run.
type fakeRuntime struct {
	avail error
	asked *int
	runs  *[]int // the host ports Run was asked for
}

var errFakeRun = errors.New("fake runtime cannot run")

func (r fakeRuntime) Available(context.Context) error { *r.asked++; return r.avail }

func (r fakeRuntime) Run(_ context.Context, hostPort int) (Container, error) {
	*r.runs = append(*r.runs, hostPort)
	return nil, errFakeRun
}

func (fakeRuntime) String() string { return "fake" }

func TestStartAny_TriesTheRegisteredRuntime(t *testing.T) {
	noLocalInstall(t)
	t.Cleanup(func() { RegisterContainerRuntime(nil) })
	asked, runs := 0, []int(nil)
	RegisterContainerRuntime(fakeRuntime{asked: &asked, runs: &runs})
	for range 2 {
		_, err := StartAny(t.Context(), 1)
		if !errors.Is(err, errFakeRun) || !strings.Contains(err.Error(), "no local ZooKeeper") {
			t.Fatalf("StartAny error = %v, want the runtime's and the local install's", err)
		}
	}
	if asked != 1 || len(runs) != 2 || runs[0] <= 0 {
		t.Errorf("Available asked %d times (want once per process), Run on ports %v (want two)", asked, runs)
	}

	t.Setenv("ZK_TEST_DOCKER", "0")
	_, err := StartAny(t.Context(), 1)
	if !strings.Contains(err.Error(), "ZK_TEST_DOCKER") || len(runs) != 2 {
		t.Errorf("with ZK_TEST_DOCKER=0: StartAny error = %v, Run on ports %v (want no new Run)", err, runs)
	}
}

func TestStartAny_SaysWhyTheRuntimeIsUnavailable(t *testing.T) {
	noLocalInstall(t)
	t.Cleanup(func() { RegisterContainerRuntime(nil) })
	asked, runs := 0, []int(nil)
	why := errors.New("no engine here")
	RegisterContainerRuntime(fakeRuntime{avail: why, asked: &asked, runs: &runs})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := StartAny(ctx, 1)
	if !strings.Contains(err.Error(), "containers: no engine here") || len(runs) != 0 {
		t.Errorf("StartAny error = %v, Run on ports %v; want the runtime's reason and no Run", err, runs)
	}
}
