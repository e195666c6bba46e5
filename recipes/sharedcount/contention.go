package sharedcount

import "time"

// maxJitter bounds the wait of a TrySetCount that lost a race.
const maxJitter = 20 * time.Millisecond
