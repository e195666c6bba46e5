package recipe

import (
	"errors"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
)

// Apply applies opts to o in order, the one way every recipe's
// constructor takes its options (type Option func(*options) error on an
// unexported struct). A nil option, or an option that returns an error,
// stops it: the error matches invalid, the recipe's ErrInvalidArgument,
// and framework.ErrInvalidArgument, and its message carries the recipe's
// prefix only ("mutex: invalid argument: option 2: ...").
func Apply[O any, F ~func(*O) error](invalid error, o *O, opts []F) error {
	for i, opt := range opts {
		if opt == nil {
			return BadArg(invalid, "option %d is nil", i)
		}
		if err := opt(o); err != nil {
			return OptionErr(invalid, i, err)
		}
	}
	return nil
}

// OptionErr wraps err, the error of the i-th option, so that it matches
// invalid and framework.ErrInvalidArgument as well as err itself.
func OptionErr(invalid error, i int, err error) error {
	if errors.Is(err, invalid) {
		if !errors.Is(err, framework.ErrInvalidArgument) {
			err = errtext.Also(err, framework.ErrInvalidArgument)
		}
		return err
	}
	return errtext.Also(errtext.Errorf("%w: option %d: %w", invalid, i, err), framework.ErrInvalidArgument)
}
