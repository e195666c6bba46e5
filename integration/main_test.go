package integration

import (
	"testing"

	"github.com/go-curator/curator/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }
