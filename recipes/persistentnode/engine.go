package persistentnode

import (
	"context"
	"errors"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
)

var errTODO = errors.New("persistentnode: not implemented yet")

// errZero is the error of a nil or zero Node or TTLNode.
var errZero = recipe.BadArg(ErrInvalidArgument, "nil or zero Node or TTLNode: make one with New or NewTTL")

func badArg(format string, args ...any) error {
	return recipe.BadArg(ErrInvalidArgument, format, args...)
}

// checkName checks a single path segment.
func checkName(name string) error {
	if err := framework.ValidatePath("/" + name); err != nil || name == "" {
		return recipe.Invalid(ErrInvalidArgument, framework.ErrInvalidPath)
	}
	return nil
}

type engine struct{}

func newEngine(client *framework.Client, path string, data []byte, opts []Option) (*engine, error) {
	return nil, errTODO
}

func (e *engine) start(ctx context.Context) error             { return errTODO }
func (e *engine) waitInitial(ctx context.Context) error       { return errTODO }
func (e *engine) path() (string, bool)                        { return "", false }
func (e *engine) data() []byte                                { return nil }
func (e *engine) setData(ctx context.Context, b []byte) error { return errTODO }
func (e *engine) addListener(fn func(Event)) func()           { return func() {} }
func (e *engine) close(ctx context.Context, del bool) error   { return errTODO }

type ttlEngine struct{}

func newTTLEngine(client *framework.Client, path string, ttl time.Duration, data []byte, opts []TTLOption) (*ttlEngine, error) {
	return nil, errTODO
}

func (t *ttlEngine) start(ctx context.Context) error             { return errTODO }
func (t *ttlEngine) waitInitial(ctx context.Context) error       { return errTODO }
func (t *ttlEngine) path() (string, bool)                        { return "", false }
func (t *ttlEngine) data() []byte                                { return nil }
func (t *ttlEngine) setData(ctx context.Context, b []byte) error { return errTODO }
func (t *ttlEngine) close(ctx context.Context) error             { return errTODO }
