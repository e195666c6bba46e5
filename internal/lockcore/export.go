package lockcore

import "errors"

// Export returns err so that it also matches the recipe's own sentinels
// for the lock core's conditions a caller must handle: vanished where err
// matches ErrNodeVanished, sessionLost where it matches ErrSessionLost.
// The message and every match of err stay as they are. A recipe exports
// these conditions under its own name, since its callers cannot import
// this package.
func Export(err, vanished, sessionLost error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNodeVanished):
		return &exported{err: err, also: vanished}
	case errors.Is(err, ErrSessionLost):
		return &exported{err: err, also: sessionLost}
	}
	return err
}

type exported struct {
	err, also error
}

func (e *exported) Error() string   { return e.err.Error() }
func (e *exported) Unwrap() []error { return []error{e.err, e.also} }
