package integration

import (
	"testing"

	"github.com/go-curator/curator/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }
