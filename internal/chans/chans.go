// Package chans owns the closed channel: the Lost signal of a hold that
// holds nothing, and the starting value of a loss signal.
package chans

var closed = NewClosed()

// Closed returns a channel that is already closed. Every call returns the
// same one.
func Closed() <-chan struct{} { return closed }

// NewClosed returns a new channel that is already closed, for a field that
// is later replaced by an open one.
func NewClosed() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// IsClosed reports whether ch is closed, without waiting. A nil channel is
// never closed.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
