// Package recipe holds the small helpers that several recipes share, so
// that each has one owner: the detached, bounded cleanup after a cancel,
// the restart of an attempt whose node vanished, the jitter between
// contending writers, and the hex dump in corruption messages.
package recipe
