package interop

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"
)

// The compression helper is a Java program of its own,
// java/CompressHelper.java, for Curator's compressed() and decompressed()
// with its default GzipCompressionProvider. It speaks CuratorHelper's
// protocol and is driven through the same Helper type.

var compressProgram = &program{class: "CompressHelper", kind: "compress", what: "compression helper"}

// StartCompress starts a compression helper connected to connectString
// with DefaultSessionTimeout; t.Cleanup closes it. It skips or fails t
// when Java Curator is missing, as Start does.
func StartCompress(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, compressProgram, connectString, DefaultSessionTimeout, false)
}

// Unhex parses a helper's data reply: hex, or "-" for none (Hex's
// reverse).
func Unhex(s string) ([]byte, error) {
	if s == "-" {
		return []byte{}, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("interop: bad hex %q: %w", s, err)
	}
	return b, nil
}

// Data calls a helper command whose reply is data ("OK <hex>").
func (h *Helper) Data(ctx context.Context, words ...string) ([]byte, error) {
	r, err := h.Call(ctx, words...)
	if err != nil {
		return nil, err
	}
	return Unhex(r)
}
