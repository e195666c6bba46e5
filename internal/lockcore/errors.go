package lockcore

import (
	"errors"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors names a lock's conditions in the package its users import: they
// cannot import this one. A Reentrant reports every error through it, so
// that its messages carry the recipe's prefix only, and its errors match
// the recipe's sentinels as well as this package's and the framework's.
type Errors struct {
	// Prefix opens every message, e.g. "mutex" or "rwlock".
	Prefix string
	// Lock names the lock in messages after the operation, e.g. "" or
	// "read lock".
	Lock string
	// Invalid is the recipe's ErrInvalidArgument: every bad-argument error
	// matches it and the framework's specific sentinel.
	Invalid error
	// NotOwner, NodeVanished and SessionLost stand for ErrNotOwner,
	// ErrNodeVanished and ErrSessionLost.
	NotOwner, NodeVanished, SessionLost error
	// OwnerVanished, if set, stands for ErrOwnerVanished, and opens the
	// message of such an error.
	OwnerVanished error
}

// wrap reports err, the error of op on the lock at path.
func (e *Errors) wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotOwner) {
		return errtext.Also(e.NotOwner, err)
	}
	if e.OwnerVanished != nil && errors.Is(err, ErrOwnerVanished) {
		err = errtext.Errorf("%w (%w)", e.OwnerVanished, err)
	}
	lock := path
	if e.Lock != "" {
		lock = e.Lock + " " + path
	}
	return errtext.Also(errtext.Errorf("%s: %s %s: %w", e.Prefix, op, lock, err), e.also(err)...)
}

// also lists the recipe's sentinels that err's conditions stand for.
func (e *Errors) also(err error) []error {
	var also []error
	for _, m := range []struct{ core, recipe error }{
		{ErrNodeVanished, e.NodeVanished},
		{ErrSessionLost, e.SessionLost},
	} {
		if m.recipe != nil && errors.Is(err, m.core) {
			also = append(also, m.recipe)
		}
	}
	if recipe.IsBadArg(err) {
		also = append(also, e.Invalid)
	}
	return also
}

// invalid returns a bad-argument error of the lock.
func (e *Errors) invalid(format string, args ...any) error {
	return recipe.BadArg(e.Invalid, format, args...)
}
