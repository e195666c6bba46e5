package recipe

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-curator/curator/framework"
)

func TestApply(t *testing.T) {
	errInvalid := errors.New("mutex: invalid argument")
	type opts struct{ n int }
	type option func(*opts) error
	set := func(n int) option { return func(o *opts) error { o.n = n; return nil } }
	plain := errors.New("semaphorev2: too big")
	tests := []struct {
		name  string
		opts  []option
		n     int
		want  []error // nil: no error
		label string  // the error's text
	}{
		{"none", nil, 0, nil, ""},
		{"in order, last wins", []option{set(1), set(2)}, 2, nil, ""},
		{"nil option", []option{set(1), nil}, 1,
			[]error{errInvalid, framework.ErrInvalidArgument}, "mutex: invalid argument: option 1 is nil"},
		{"bad value, recipe error", []option{func(*opts) error { return BadArg(errInvalid, "negative wait") }}, 0,
			[]error{errInvalid, framework.ErrInvalidArgument}, "mutex: invalid argument: negative wait"},
		{"bad path", []option{func(*opts) error { return Invalid(errInvalid, fmt.Errorf("%w \"x\"", framework.ErrInvalidPath)) }}, 0,
			[]error{errInvalid, framework.ErrInvalidArgument, framework.ErrInvalidPath}, ""},
		{"other error, one prefix", []option{func(*opts) error { return plain }}, 0,
			[]error{errInvalid, framework.ErrInvalidArgument, plain}, "mutex: invalid argument: option 0: too big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o opts
			err := Apply(errInvalid, &o, tt.opts)
			if o.n != tt.n {
				t.Errorf("n = %d, want %d", o.n, tt.n)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Apply = %v, want nil", err)
				}
				return
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("Apply = %v, want a match of %v", err, w)
				}
			}
			if tt.label != "" && (err == nil || err.Error() != tt.label) {
				t.Errorf("Apply = %q, want %q", err, tt.label)
			}
		})
	}
}
