package recipe

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Jitter returns a random wait below twice try, the duration of one try,
// and below limit: writers that lost the same race spread out instead of
// racing again at once. It is 0 when try or limit is not positive.
func Jitter(try, limit time.Duration) time.Duration {
	w := min(2*try, limit)
	if w <= 0 {
		return 0
	}
	return rand.N(w)
}

// Hex formats up to 16 bytes as [0x66 0x6f 0x6f], and longer data as its
// first 16 bytes and "...", like Curator's corruption messages.
func Hex(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("[% #x ...]", b[:16])
	}
	return fmt.Sprintf("[% #x]", b)
}
