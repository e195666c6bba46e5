package lockcore

import (
	"errors"

	"github.com/go-curator/curator/internal/errtext"
)

// Export returns err so that it also matches the recipe's own sentinels
// for the lock core's conditions a caller must handle: vanished where err
// matches ErrNodeVanished, sessionLost where it matches ErrSessionLost.
// The message and every match of err stay as they are. A recipe exports
// these conditions under its own name, since its callers cannot import
// this package. (A Reentrant does it through its Errors.)
func Export(err, vanished, sessionLost error) error {
	switch {
	case errors.Is(err, ErrNodeVanished):
		return errtext.Also(err, vanished)
	case errors.Is(err, ErrSessionLost):
		return errtext.Also(err, sessionLost)
	}
	return err
}
