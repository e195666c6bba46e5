package errtext

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorf(t *testing.T) {
	errInvalid := errors.New("mutex: invalid argument")
	errPath := errors.New("framework: invalid path")
	errNoNode := errors.New("zk: node does not exist")
	inner := fmt.Errorf("framework: create /x: %w", fmt.Errorf("framework: get /x: %w", errNoNode))
	tests := []struct {
		name string
		err  error
		msg  string
		is   []error
	}{
		{
			name: "lower layers lose their prefixes",
			err:  Errorf("mutex: acquire %s: %w", "/x", inner),
			msg:  "mutex: acquire /x: create /x: get /x: zk: node does not exist",
			is:   []error{errNoNode},
		},
		{
			name: "a leading sentinel keeps its prefix",
			err:  Errorf("%w: %w %q", errInvalid, errPath, "x"),
			msg:  `mutex: invalid argument: invalid path "x"`,
			is:   []error{errInvalid, errPath},
		},
		{
			name: "a parenthesized operand",
			err:  Errorf("%w (%w)", errInvalid, fmt.Errorf("lockcore: gone (%w)", errPath)),
			msg:  "mutex: invalid argument (gone (invalid path))",
			is:   []error{errInvalid, errPath},
		},
		{
			name: "nothing to trim",
			err:  Errorf("semaphorev2: acquire: %w", errNoNode),
			msg:  "semaphorev2: acquire: zk: node does not exist",
			is:   []error{errNoNode},
		},
		{
			name: "stacked prefixes",
			err:  Errorf("semaphoremutex: %w", errors.New("semaphorev2: framework: client is closed")),
			msg:  "semaphoremutex: client is closed",
		},
		{
			name: "also",
			err:  Also(Errorf("%w: nil Mutex", errInvalid), errPath),
			msg:  "mutex: invalid argument: nil Mutex",
			is:   []error{errInvalid, errPath},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("message %q\nwant    %q", got, tt.msg)
			}
			for _, target := range tt.is {
				if !errors.Is(tt.err, target) {
					t.Errorf("%v does not match %v", tt.err, target)
				}
			}
		})
	}
	if Also(nil, errPath) != nil {
		t.Error("Also(nil) is not nil")
	}
}
