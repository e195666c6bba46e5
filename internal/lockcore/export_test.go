package lockcore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestExport(t *testing.T) {
	vanished := errors.New("recipe: vanished")
	sessionLost := errors.New("recipe: session lost")
	for _, tc := range []struct {
		name string
		err  error
		want []error // every error the result must match
		not  []error
	}{
		{"nil", nil, nil, nil},
		{"vanished", fmt.Errorf("x: %w", ErrNodeVanished), []error{ErrNodeVanished, vanished}, []error{sessionLost}},
		{"session lost", fmt.Errorf("x: %w", ErrSessionLost), []error{ErrSessionLost, sessionLost}, []error{vanished}},
		{"other", fmt.Errorf("x: %w", zk.ErrConnectionClosed), []error{zk.ErrConnectionClosed}, []error{vanished, sessionLost}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Export(tc.err, vanished, sessionLost)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("Export(nil) = %v", got)
				}
				return
			}
			if got.Error() != tc.err.Error() {
				t.Errorf("message %q, want %q", got, tc.err)
			}
			for _, w := range tc.want {
				if !errors.Is(got, w) {
					t.Errorf("%v does not match %v", got, w)
				}
			}
			for _, n := range tc.not {
				if errors.Is(got, n) {
					t.Errorf("%v matches %v", got, n)
				}
			}
		})
	}
}
