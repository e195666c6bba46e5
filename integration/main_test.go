package integration

import (
	"testing"

	"github.com/go-curator/curator/zktest"
	_ "github.com/go-curator/curator/zktest/docker" // a standalone server may run in Docker, as before zktest/docker was split out
)

func TestMain(m *testing.M) { zktest.Main(m) }
