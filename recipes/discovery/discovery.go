package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// ErrAlreadyRegistered reports a second Register of the same service name
// and ID on one Discovery: update the first Registration instead.
var ErrAlreadyRegistered = errors.New("discovery: instance already registered here")

// Discovery registers and finds service instances under a base path:
// Curator's ServiceDiscovery. It is safe for concurrent use and must not
// be copied. Make one with [New]; the zero Discovery is not usable (its
// methods return an error matching ErrInvalidArgument).
type Discovery struct {
	client *framework.Client
	base   string

	mu     sync.Mutex
	regs   map[string]*Registration // key: name + "/" + id
	caches map[*Cache]struct{}      // made by NewCache and NewProvider, not yet closed
	closed bool
}

// New returns a Discovery for the services under basePath (Curator's
// ServiceDiscoveryBuilder.basePath). It checks its arguments and does no
// I/O: the client may be started later, before the first call that does.
func New(client *framework.Client, basePath string) (*Discovery, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(basePath); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	return &Discovery{client: client, base: basePath, regs: make(map[string]*Registration), caches: make(map[*Cache]struct{})}, nil
}

var errZero = recipe.Zero(ErrInvalidArgument, "Discovery")

func (d *Discovery) usable(ctx context.Context) error {
	if d == nil || d.client == nil {
		return errZero
	}
	if ctx != nil {
		if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

// BasePath returns the base path given to New.
func (d *Discovery) BasePath() string {
	if d == nil {
		return ""
	}
	return d.base
}

// servicePath is the node of a service's instances.
func (d *Discovery) servicePath(name string) string { return framework.JoinPath(d.base, name) }

// instancePath is the node of one instance.
func (d *Discovery) instancePath(name, id string) string {
	return framework.JoinPath(d.servicePath(name), id)
}

// Register registers in and keeps it registered until Unregister or Close:
// it writes the instance's node, <base>/<name>/<id>, and returns once the
// node exists. Zero fields take the values Curator's
// ServiceInstance.builder() gives them: an empty ID a random UUID, a zero
// RegistrationTimeUTC the current time, an empty Address the host's local
// IP address (the first that is not loopback or link-local; none, written
// as null, if the host has no such address), an empty ServiceType
// Dynamic; a zero Port, SSLPort, Payload or URISpec is none (null), and
// Disabled false is enabled. The Registration's Instance has them.
//
// A Dynamic instance's node is ephemeral, and is made again after it is
// deleted or its session ends (an expiry, or the client's Lost): callers
// need do nothing on Suspended or Lost, but a Dynamic instance is not
// visible while its client has no session. A DynamicSequential one is an
// ephemeral sequential node, <base>/<name>/<id><10-digit sequence>
// (Curator's layout), made again with a new sequence; Registration.Path
// gives its current path. Static and Permanent instances are persistent
// nodes.
//
// # Who holds an ID
//
// An ID names one live instance: IDs must be unique among the instances
// alive at once (leave ID empty for a UUID). A node found at a Dynamic
// instance's path that another session owns is taken to be this
// instance's own, left by its earlier process whose session the server
// has not yet expired (up to a session timeout after a crash): as
// Curator does, Register deletes it and registers at once. If its owner is
// in fact another live process using the same ID, that process loses its
// node to this one, and waits for it to go before it registers again
// (only the first creation replaces a node; the keeping after it waits
// for another's node to go), so two such processes never delete each
// other's node in turn. Waiting at Register is right only when two live
// processes share an ID on purpose (a standby ready to take over): give
// the standby its own ID, or hold the ID with a lock.
//
// # Errors
//
// Bad input (a bad name or ID, a port out of range, a payload that is not
// JSON or makes the instance larger than MaxInstanceSize, a nil ctx)
// returns an error matching ErrInvalidArgument and writes nothing. A
// refusal that no retry changes (the service's node is ephemeral, an ACL
// forbids the create) returns at once an error matching ErrCannotRegister
// and the server's sentinel (zk.ErrNoChildrenForEphemerals, zk.ErrNoAuth,
// ...). If ctx ends before the node is made, Register returns an error
// matching ctx's that says what it was waiting for, and leaves no node.
func (d *Discovery) Register(ctx context.Context, in Instance) (*Registration, error) {
	if ctx == nil {
		return nil, recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	if err := d.usable(ctx); err != nil {
		return nil, err
	}
	if in.ID == "" {
		in.ID = uuid.NewString()
	}
	if in.RegistrationTimeUTC == 0 {
		in.RegistrationTimeUTC = time.Now().UnixMilli()
	}
	if in.ServiceType == "" {
		in.ServiceType = Dynamic
	}
	if in.Address == "" {
		in.Address = localAddress()
	}
	data, err := in.encode()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts []persistentnode.Option
	switch in.ServiceType {
	case Dynamic:
		opts = []persistentnode.Option{persistentnode.WithMode(framework.Ephemeral), persistentnode.WithTakeOver()}
	case DynamicSequential:
		opts = []persistentnode.Option{persistentnode.WithMode(framework.EphemeralSequential), persistentnode.WithoutProtection()}
	default:
		opts = []persistentnode.Option{persistentnode.WithMode(framework.Persistent)}
	}
	node, err := persistentnode.New(d.client, d.instancePath(in.Name, in.ID), data, opts...)
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "discovery: register %s/%s: %w", in.Name, in.ID, err)
	}
	r := &Registration{d: d, node: node, inst: in, key: in.Name + "/" + in.ID, path: d.instancePath(in.Name, in.ID)}

	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return nil, ErrClosed
	case d.regs[r.key] != nil:
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrAlreadyRegistered, r.key)
	}
	d.regs[r.key] = r
	d.mu.Unlock()

	err = node.Start(ctx)
	if err == nil {
		err = node.WaitForInitialCreate(ctx)
	}
	if err != nil {
		dctx, cancel := recipe.Detached(ctx)
		defer cancel()
		d.forget(r)
		if errors.Is(err, persistentnode.ErrCannotCreate) {
			err = wrapf("%w: %s: %w", ErrCannotRegister, r.key, err)
		} else {
			err = wrapf("discovery: register %s: %w", r.key, err)
		}
		return nil, errors.Join(err, node.Close(dctx))
	}
	return r, nil
}

// wrapf is errtext.Errorf, whose operands also lose persistentnode's
// prefix, so the message carries this package's only.
func wrapf(format string, args ...any) error {
	err := errtext.Errorf(format, args...)
	msg := strings.ReplaceAll(err.Error(), ": persistentnode: ", ": ")
	msg = strings.ReplaceAll(msg, "(persistentnode: ", "(")
	if msg == err.Error() {
		return err
	}
	return &reworded{msg: msg, err: err}
}

// reworded is err with another message.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

func (d *Discovery) forget(r *Registration) {
	d.mu.Lock()
	if d.regs[r.key] == r {
		delete(d.regs, r.key)
	}
	d.mu.Unlock()
}

// Names returns the names of the registered services, sorted (Curator's
// queryForNames). A missing base path means none.
func (d *Discovery) Names(ctx context.Context) ([]string, error) {
	if ctx == nil {
		return nil, recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	if err := d.usable(ctx); err != nil {
		return nil, err
	}
	names, err := d.client.GetChildren().ForPath(ctx, d.base)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "discovery: names under %s: %w", d.base, err)
	}
	slices.Sort(names)
	return names, nil
}

// Instances reads the instances of the named service from the server,
// sorted by ID (Curator's queryForInstances). A missing service means
// none. A node whose data is not an instance (undecodable, or of an
// unknown serviceType) is left out, and reported in an error matching
// ErrCorrupt returned with the others.
func (d *Discovery) Instances(ctx context.Context, name string) ([]Instance, error) {
	nodes, err := d.InstanceNodes(ctx, name)
	if nodes == nil {
		return nil, err
	}
	out := make([]Instance, len(nodes))
	for i, n := range nodes {
		out[i] = n.Instance
	}
	return out, err
}

// InstanceNode is an instance with its node: what Instances reads, and
// what a tool shows.
type InstanceNode struct {
	// Path is the node's path: <base>/<name>/<node name>, where the node's
	// name is the instance's ID, or for a DynamicSequential instance the
	// ID and a sequence number.
	Path string
	// Owner is the session that owns an ephemeral node, 0 for a
	// persistent one.
	Owner    int64
	Instance Instance
}

// InstanceNodes reads the instances of the named service from the server
// with their nodes, sorted by ID then path, as Instances does.
func (d *Discovery) InstanceNodes(ctx context.Context, name string) ([]InstanceNode, error) {
	if ctx == nil {
		return nil, recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	if err := d.usable(ctx); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	kids, err := d.client.GetChildren().ForPath(ctx, d.servicePath(name))
	if errors.Is(err, zk.ErrNoNode) {
		return []InstanceNode{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: instances of %s: %w", name, err)
	}
	out := make([]InstanceNode, 0, len(kids))
	var corrupt []error
	for _, k := range kids {
		n, err := d.readNode(ctx, framework.JoinPath(d.servicePath(name), k))
		switch {
		case errors.Is(err, ErrNoInstance):
			continue // gone since the list
		case errors.Is(err, ErrCorrupt):
			corrupt = append(corrupt, err)
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b InstanceNode) int {
		return cmp.Or(cmp.Compare(a.Instance.ID, b.Instance.ID), cmp.Compare(a.Path, b.Path))
	})
	return out, errors.Join(corrupt...)
}

// Instance reads one instance from the server (Curator's
// queryForInstance): the node <base>/<name>/<id>. A missing one returns an
// error matching ErrNoInstance.
func (d *Discovery) Instance(ctx context.Context, name, id string) (Instance, error) {
	if ctx == nil {
		return Instance{}, recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	if err := d.usable(ctx); err != nil {
		return Instance{}, err
	}
	if err := checkName(name); err != nil {
		return Instance{}, err
	}
	if reason := segmentProblem(id); reason != "" {
		return Instance{}, recipe.BadArg(ErrInvalidArgument, "instance id %q: %s", id, reason)
	}
	n, err := d.readNode(ctx, d.instancePath(name, id))
	return n.Instance, err
}

func (d *Discovery) readNode(ctx context.Context, p string) (InstanceNode, error) {
	data, stat, err := d.client.GetData().ForPath(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return InstanceNode{}, fmt.Errorf("%w: %s", ErrNoInstance, p)
	}
	if err != nil {
		return InstanceNode{}, fmt.Errorf("discovery: read %s: %w", p, err)
	}
	in, err := decode(p, data)
	if err != nil {
		return InstanceNode{}, err
	}
	return InstanceNode{Path: p, Owner: stat.EphemeralOwner, Instance: in}, nil
}

// Close closes the caches and providers made from d that are still open,
// then unregisters every instance still registered through d, as Curator's
// ServiceDiscovery.close does, and makes d unusable: its methods, and
// those of its caches and providers, then return an error matching
// ErrClosed. Close is idempotent: a second call returns nil. ctx bounds
// only the wait for the deletes, which go on in the background on
// connection problems. A Cache or Provider listener must not call Close:
// closing its cache waits for its listeners.
func (d *Discovery) Close(ctx context.Context) error {
	if d == nil || d.client == nil {
		return errZero
	}
	if ctx == nil {
		return recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	regs := make([]*Registration, 0, len(d.regs))
	for _, r := range d.regs {
		regs = append(regs, r)
	}
	caches := make([]*Cache, 0, len(d.caches))
	for c := range d.caches {
		caches = append(caches, c)
	}
	d.mu.Unlock()
	var errs []error
	for _, c := range caches {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, r := range regs {
		if err := r.Unregister(ctx); err != nil && !errors.Is(err, ErrNotRegistered) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Registration is one registered instance, kept registered until
// Unregister. It is safe for concurrent use; the zero Registration is not
// usable.
type Registration struct {
	d    *Discovery
	node *persistentnode.Node
	key  string // name/id
	path string

	mu   sync.Mutex
	inst Instance
	done bool
}

var errZeroReg = recipe.BadArg(ErrInvalidArgument, "nil or zero Registration: make one with Discovery.Register")

// Instance returns the registered instance, as last written.
func (r *Registration) Instance() Instance {
	if r == nil {
		return Instance{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inst
}

// Path returns the instance's node path (relative to the client's
// namespace): <base>/<name>/<id>, and for a DynamicSequential instance
// the path with the sequence of its current node.
func (r *Registration) Path() string {
	if r == nil {
		return ""
	}
	if p, _ := r.node.Path(); p != "" {
		return p
	}
	return r.path
}

// Update replaces the registered instance with in (Curator's
// updateService): the node is written now if it exists, and every later
// re-creation uses the new data.
//
// in's zero fields follow one rule, Register's: each takes the value
// Register gives that zero field, and where Register fixed a value for the
// registration's life, that value. So an empty Address is the local IP
// address, a zero Port, SSLPort, Payload or URISpec is none, Disabled
// false is enabled, and an empty Name, ID or ServiceType and a zero
// RegistrationTimeUTC are the registration's (Update(ctx, Instance{})
// after Register(ctx, Instance{Name: n}) writes the same instance again).
// To keep a field, pass its current value: start from
// [Registration.Instance]. A Name, ID or ServiceType other than the
// registration's is an error; a non-zero RegistrationTimeUTC replaces the
// time.
//
// Bad input returns an error matching ErrInvalidArgument and changes
// nothing. Otherwise the registration takes the new data even when the
// write fails (on a connection problem, or ctx's end): it is written as
// soon as it can be, and Update's error only says it is not yet known to
// be.
func (r *Registration) Update(ctx context.Context, in Instance) error {
	if r == nil || r.d == nil {
		return errZeroReg
	}
	if ctx == nil {
		return recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return fmt.Errorf("%w: %s", ErrNotRegistered, r.key)
	}
	if in.Name == "" {
		in.Name = r.inst.Name
	}
	if in.ID == "" {
		in.ID = r.inst.ID
	}
	if in.Name != r.inst.Name || in.ID != r.inst.ID {
		return recipe.BadArg(ErrInvalidArgument, "update of %s names another instance, %s/%s", r.key, in.Name, in.ID)
	}
	if in.RegistrationTimeUTC == 0 {
		in.RegistrationTimeUTC = r.inst.RegistrationTimeUTC
	}
	if in.ServiceType == "" {
		in.ServiceType = r.inst.ServiceType
	}
	if in.ServiceType != r.inst.ServiceType {
		return recipe.BadArg(ErrInvalidArgument, "update of %s changes its service type from %s to %s", r.key, r.inst.ServiceType, in.ServiceType)
	}
	if in.Address == "" {
		in.Address = localAddress()
	}
	data, err := in.encode()
	if err != nil {
		return err
	}
	err = r.node.SetData(ctx, data)
	if err != nil && (recipe.IsBadArg(err) || errors.Is(err, persistentnode.ErrClosed)) {
		return fmt.Errorf("discovery: update %s: %w", r.key, err)
	}
	// From here the node keeps the new data: it writes it when it can, and
	// every re-creation uses it.
	r.inst = in
	if errors.Is(err, zk.ErrNoNode) {
		return nil // gone (its session ended): made again with the new data
	}
	if err != nil {
		return fmt.Errorf("discovery: update %s: not yet written, and will be: %w", r.key, err)
	}
	return nil
}

// Unregister deletes the instance's node and stops keeping it (Curator's
// unregisterService). If the delete fails on a connection problem it goes
// on in the background until it succeeds or the client closes; ctx bounds
// only the wait. A second Unregister returns an error matching
// ErrNotRegistered.
func (r *Registration) Unregister(ctx context.Context) error {
	if r == nil || r.d == nil {
		return errZeroReg
	}
	if ctx == nil {
		return recipe.CheckCtx(ErrInvalidArgument, ctx)
	}
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotRegistered, r.key)
	}
	r.done = true
	r.mu.Unlock()
	r.d.forget(r)
	if err := r.node.Close(ctx); err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", r.key, err)
	}
	return nil
}
