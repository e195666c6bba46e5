package integration

import (
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// TestContract_LossErrorsMatchOneSentinel: every package's loss error
// matches framework.ErrSessionLost, so one errors.Is serves every recipe
// (issue 26: ErrSessionLost had no shared sentinel). Each keeps its own
// package prefix.
func TestContract_LossErrorsMatchOneSentinel(t *testing.T) {
	for name, err := range map[string]error{
		"mutex":          mutex.ErrSessionLost,
		"rwlock":         rwlock.ErrSessionLost,
		"multilock":      multilock.ErrSessionLost,
		"semaphorev2":    semaphorev2.ErrSessionLost,
		"semaphoremutex": semaphoremutex.ErrSessionLost,
		"leaderselector": leaderselector.ErrSessionLost,
	} {
		if !errors.Is(err, framework.ErrSessionLost) {
			t.Errorf("%s.ErrSessionLost does not match framework.ErrSessionLost", name)
		}
		if got := contractPrefix.FindAllString(err.Error(), -1); len(got) != 1 {
			t.Errorf("%s.ErrSessionLost = %q: want one package prefix, got %q", name, err, got)
		}
	}
}
