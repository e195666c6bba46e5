package framework

// connOptions holds the Builder's connectivity settings beyond the connect
// string: authentication, the ACL provider and TLS.
type connOptions struct{}

// check reports a bad connectivity setting when Build runs.
func (o *connOptions) check() error { return nil }
