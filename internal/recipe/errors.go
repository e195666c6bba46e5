package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
)

// The bad-argument contract: every error of a bad argument matches both
// the recipe's ErrInvalidArgument and the framework's specific sentinel
// (framework.ErrNilClient, ErrInvalidPath, or ErrInvalidArgument when
// none is more specific), and its message carries the recipe's prefix
// only.

// Invalid wraps err, a bad argument that the framework found (a nil
// client, an invalid path, a nil ctx), so that it also matches invalid,
// the recipe's ErrInvalidArgument: "mutex: invalid argument: invalid path
// ...".
func Invalid(invalid, err error) error {
	return errtext.Errorf("%w: %w", invalid, err)
}

// BadArg returns the error of a bad argument that the recipe found
// itself: its message is invalid's, a colon, then the formatted detail;
// it matches invalid and framework.ErrInvalidArgument.
func BadArg(invalid error, format string, args ...any) error {
	return errtext.Also(fmt.Errorf("%w: "+format, append([]any{invalid}, args...)...), framework.ErrInvalidArgument)
}

// Zero returns the error of a method called on a nil or zero value of the
// recipe's type typ, which New makes: a bad argument.
func Zero(invalid error, typ string) error {
	return BadArg(invalid, "nil or zero %s: make one with New", typ)
}

// NilClient returns the error of a constructor given a nil client.
func NilClient(invalid error) error {
	return Invalid(invalid, framework.ErrNilClient)
}

// IsBadArg reports whether err reports a bad argument that the framework
// found: it matches framework.ErrInvalidArgument, ErrInvalidPath or
// ErrNilClient.
func IsBadArg(err error) bool {
	return errors.Is(err, framework.ErrInvalidArgument) || errors.Is(err, framework.ErrInvalidPath) ||
		errors.Is(err, framework.ErrNilClient)
}

// Wrapf is errtext.Errorf, whose result also matches invalid, the
// recipe's ErrInvalidArgument, when one of its operands reports a bad
// argument that the framework found (see IsBadArg): a nil ctx or an
// invalid path given to a call fits the bad-argument contract.
func Wrapf(invalid error, format string, args ...any) error {
	err := errtext.Errorf(format, args...)
	if IsBadArg(err) {
		return errtext.Also(err, invalid)
	}
	return err
}

// CheckCtx returns a bad-argument error for a nil ctx, which the recipe
// checks before it touches ctx or changes any state: a nil ctx would make
// the standard library panic.
func CheckCtx(invalid error, ctx context.Context) error {
	if ctx == nil {
		return BadArg(invalid, "nil context")
	}
	return nil
}
