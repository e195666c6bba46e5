package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-curator/curator/internal/errtext"
)

// NamespaceView is a Client seen under another namespace: Curator's
// usingNamespace. It shares the client's connection, session, state,
// listeners, retry policy, ACL provider and compression; only the prefix
// put before paths differs. Make one with Client.UsingNamespace.
//
// A view offers the one-shot operations (Create, Delete, GetData,
// SetData, CheckExists, GetChildren, Transaction, GetACL, SetACL). Their
// watching reads (ForPathW) and the client's lasting and persistent
// watches are not offered through a view, since the client turns the
// paths of watch events into paths under its own namespace: ForPathW on
// a view's builder fails with an error matching errors.ErrUnsupported.
// Recipes take the Client: give them a client built with the namespace.
//
// The zero NamespaceView has no client: its operations fail with
// ErrNilClient. A view may be copied; copies share the state of its
// namespace node.
type NamespaceView struct {
	c  *Client
	ns *nsNode
}

// nsNode is the namespace an operation runs under when it is not the
// client's own: the path every path is put under, and whether its node
// has been made.
type nsNode struct {
	path string // chroot + "/" + namespace, or the chroot alone for none

	mu    sync.Mutex
	ready bool
}

// UsingNamespace returns a view of the client under namespace ns ("" for
// none; without the leading "/", as Builder.Namespace takes it), as
// Curator's usingNamespace does. The view's namespace node is made as a
// container (persistent under Builder.DontUseContainerParents) by the
// first create under it. The connect string's chroot still comes first.
// Closing the client ends the view's operations with ErrClosed.
func (c *Client) UsingNamespace(ns string) (NamespaceView, error) {
	if c == nil {
		return NamespaceView{}, ErrNilClient
	}
	path := c.chroot
	if ns != "" {
		if err := ValidatePath("/" + ns); err != nil {
			return NamespaceView{}, errtext.Errorf("framework: namespace: %w", err)
		}
		path += "/" + ns
	}
	return NamespaceView{c: c, ns: &nsNode{path: path}}, nil
}

// Client returns the client the view shares.
func (v NamespaceView) Client() *Client { return v.c }

// Namespace returns the view's namespace without its leading "/", or "".
func (v NamespaceView) Namespace() string {
	if v.ns == nil || len(v.ns.path) <= len(v.c.chroot) {
		return ""
	}
	return v.ns.path[len(v.c.chroot)+1:]
}

// Create starts a create under the view's namespace.
func (v NamespaceView) Create() CreateBuilder { b := v.c.Create(); b.ns = v.ns; return b }

// Delete starts a delete under the view's namespace.
func (v NamespaceView) Delete() DeleteBuilder { b := v.c.Delete(); b.ns = v.ns; return b }

// GetData starts a read under the view's namespace.
func (v NamespaceView) GetData() GetDataBuilder { b := v.c.GetData(); b.ns = v.ns; return b }

// SetData starts a write under the view's namespace.
func (v NamespaceView) SetData() SetDataBuilder { b := v.c.SetData(); b.ns = v.ns; return b }

// CheckExists starts an existence check under the view's namespace.
func (v NamespaceView) CheckExists() CheckExistsBuilder {
	b := v.c.CheckExists()
	b.ns = v.ns
	return b
}

// GetChildren starts a listing under the view's namespace.
func (v NamespaceView) GetChildren() GetChildrenBuilder {
	b := v.c.GetChildren()
	b.ns = v.ns
	return b
}

// Transaction starts a transaction under the view's namespace.
func (v NamespaceView) Transaction() Transaction { t := v.c.Transaction(); t.ns = v.ns; return t }

// GetACL starts a read of an ACL under the view's namespace.
func (v NamespaceView) GetACL() GetACLBuilder { b := v.c.GetACL(); b.ns = v.ns; return b }

// SetACL starts a write of an ACL under the view's namespace.
func (v NamespaceView) SetACL() SetACLBuilder { b := v.c.SetACL(); b.ns = v.ns; return b }

// errViewWatch is ForPathW's error on a view's builder.
var errViewWatch = fmt.Errorf("framework: watches through a NamespaceView: %w", errors.ErrUnsupported)

// nsPath returns the prefix of operations under v: the client's own
// namespace for nil.
func (c *Client) nsPath(v *nsNode) string {
	if v == nil {
		return c.ns
	}
	return v.path
}

// prepareIn is prepare under the namespace v (nil: the client's).
func (c *Client) prepareIn(ctx context.Context, v *nsNode, p string) (string, error) {
	full, err := c.prepare(ctx, p)
	if err != nil || v == nil {
		return full, err
	}
	return fixPath(v.path, p), nil
}

// hasNS reports whether operations under v have a namespace node.
func (c *Client) hasNS(v *nsNode) bool { return len(c.nsPath(v)) > len(c.chroot) }

// ensureNS makes the namespace node of v (nil: the client's) once.
func (c *Client) ensureNS(v *nsNode) error {
	if v == nil {
		return c.ensureNamespace()
	}
	if !c.hasNS(v) {
		return nil
	}
	v.mu.Lock()
	ready := v.ready
	v.mu.Unlock()
	if ready {
		return nil
	}
	if err := c.mkdirs(v.path, c.containerParents(true)); err != nil {
		return err
	}
	v.mu.Lock()
	v.ready = true
	v.mu.Unlock()
	return nil
}

// containerParents reports whether parents asked for as containers are
// made as containers: not under Builder.DontUseContainerParents.
func (c *Client) containerParents(containers bool) bool {
	return containers && !c.noContainerParents
}
