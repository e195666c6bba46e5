package framework_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
)

// Put one circuit breaker in front of every listener of a client, as
// Curator's ConnectionStateListenerManagerFactory.circuitBreaking does: a
// connection that flaps shows its listeners Suspended once, then the
// latest state when the circuit closes (Lost at once).
func ExampleBuilder_CircuitBreaking() {
	ctx := context.Background()
	circuit, err := retry.NewNTimes(6, 5*time.Second) // open for up to 6 × 5 s
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").
		CircuitBreaking(circuit).
		Listener(func(s framework.ConnectionState) { log.Print("connection: ", s) }).
		Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// Put a circuit breaker in front of one listener only.
func ExampleNewCircuitBreaker() {
	ctx := context.Background()
	circuit, err := retry.NewExponentialBackoffMax(time.Second, 5, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	breaker, err := framework.NewCircuitBreaker(func(s framework.ConnectionState) {
		log.Print("connection: ", s)
	}, circuit)
	if err != nil {
		log.Fatal(err)
	}
	defer breaker.Close()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").
		Listener(breaker.StateChanged).Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// Stop an operation, rather than go on on a new session, once its session
// has expired: Curator's SessionFailedRetryPolicy.
func ExampleBuilder_RetryPolicy_sessionFailed() {
	ctx := context.Background()
	inner, err := retry.NewExponentialBackoff(100*time.Millisecond, 5)
	if err != nil {
		log.Fatal(err)
	}
	policy, err := retry.NewSessionFailed(inner)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").RetryPolicy(policy).Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, _, err := client.GetData().ForPath(ctx, "/config"); err != nil {
		log.Print(err) // errors.Is(err, zk.ErrSessionExpired) if the session expired under it
	}
}
