package interop

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The cache helper is a third Java program, java/CacheHelper.java, for
// Curator's CuratorCache and PathChildrenCache. It speaks CuratorHelper's
// protocol (java/LineProtocol.java) and is driven through the same Helper
// type.

// StartCache starts a cache helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (its caches, then its
// session). It skips or fails t when Java Curator is missing, as Start
// does.
func StartCache(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, cacheProgram, connectString, DefaultSessionTimeout, false)
}

// CacheEntry is one node as a Java cache holds it.
type CacheEntry struct {
	Path    string
	Version int32
	Data    []byte
}

// ParseCacheEntries parses the reply of cc.dump and pcc.dump
// ("<path>:<version>:<hex>" words; "-" for no data).
func ParseCacheEntries(words []string) ([]CacheEntry, error) {
	var out []CacheEntry
	for _, w := range words {
		i := strings.LastIndexByte(w, ':')
		j := strings.LastIndexByte(w[:max(i, 0)], ':')
		if i < 0 || j < 0 {
			return nil, fmt.Errorf("interop: bad cache entry %q", w)
		}
		v, err := strconv.ParseInt(w[j+1:i], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("interop: bad version in %q: %w", w, err)
		}
		var data []byte
		if h := w[i+1:]; h != "-" {
			if data, err = hex.DecodeString(h); err != nil {
				return nil, fmt.Errorf("interop: bad data in %q: %w", w, err)
			}
		}
		out = append(out, CacheEntry{Path: w[:j], Version: int32(v), Data: data})
	}
	return out, nil
}

// Hex encodes data for the cache helper's set command.
func Hex(data []byte) string {
	if len(data) == 0 {
		return "-"
	}
	return hex.EncodeToString(data)
}
