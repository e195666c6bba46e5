package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as an etcd member of the bench's
// etcd reference peer, as the bench binary does (see serveEtcdMember).
func TestMain(m *testing.M) {
	if serveEtcdMember() {
		return
	}
	os.Exit(m.Run())
}
