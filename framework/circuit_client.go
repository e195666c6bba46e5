package framework

import (
	"fmt"

	"github.com/go-curator/curator/retry"
)

// CircuitBreaking puts one circuit breaker, whose open times come from p,
// in front of every connection state listener of the client: those of
// [Builder.Listener] and [Client.AddListener], the recipes' own included
// (a cache's, a shared count's). It is Curator's
// ConnectionStateListenerManagerFactory.circuitBreaking; the rules are
// [CircuitBreaker]'s. All listeners then see the same states: Suspended
// when the connection first drops, Lost at once, and the latest state when
// the circuit closes, but not each flap in between. The metrics hook's
// StateChanged and the holds' Lost channels still see every change. The
// default is no circuit: every listener gets every state.
//
// Build fails with ErrInvalidArgument for a nil p. A policy such as
// retry.NewNTimes(n, d) keeps the circuit open for at most n periods of d
// (n × d) after the connection first drops; one that allows no retry
// never opens it.
func (b *Builder) CircuitBreaking(p retry.Policy) *Builder {
	b.circuit = circuitOption{set: true, policy: p}
	return b
}

// circuitOption is the Builder's CircuitBreaking setting.
type circuitOption struct {
	set    bool
	policy retry.Policy
}

// check reports a bad CircuitBreaking setting when Build runs.
func (o circuitOption) check() error {
	if o.set && o.policy == nil {
		return fmt.Errorf("%w: circuit breaking: retry policy is nil", ErrInvalidArgument)
	}
	return nil
}

// applyCircuit gives a client built with CircuitBreaking its circuit,
// guarded by the client's mu.
func (c *Client) applyCircuit(o circuitOption) {
	if !o.set {
		return
	}
	c.circuit = &circuit{}
	c.circuit.init(o.policy, c.clock, &c.mu, c.postListeners)
}

// postState queues s for the listeners, through the circuit if there is
// one. Called with c.mu held.
func (c *Client) postState(s ConnectionState) {
	if c.circuit != nil {
		c.circuit.stateChanged(s)
		return
	}
	c.postListeners(s)
}

// postListeners queues s for every listener. Called with c.mu held.
func (c *Client) postListeners(s ConnectionState) {
	for l := range c.listeners {
		l.Post(s)
	}
}

// stopCircuit ends the client's circuit, if any, at Close. Called with
// c.mu held.
func (c *Client) stopCircuit() {
	if c.circuit != nil {
		c.circuit.stop()
	}
}
