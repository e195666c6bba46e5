package discovery_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/discovery"
)

// A service registers itself where Java services using Curator's
// ServiceDiscovery on the same base path find it, and stays registered
// across session losses until it unregisters.
func ExampleDiscovery_Register() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	d, err := discovery.New(client, "/services")
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close(context.WithoutCancel(ctx)) // unregisters
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/api")
	if err != nil {
		log.Fatal(err)
	}
	// A Java reader whose payload class is com.example.InstanceDetails
	// needs the class named in the payload.
	payload, err := discovery.JavaPayload("com.example.InstanceDetails", map[string]string{"zone": "eu-1"})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := d.Register(ctx, discovery.Instance{
		Name: "billing", Address: "10.0.0.7", Port: 8080, URISpec: spec, Payload: payload,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("registered at", reg.Path(), "as", reg.Instance().URI(nil))
}

// A caller picks an instance per request, round robin, and reports the
// ones that fail so that they are skipped for a while.
func ExampleProvider() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	d, err := discovery.New(client, "/services")
	if err != nil {
		log.Fatal(err)
	}
	p, err := d.NewProvider("billing",
		discovery.WithStrategy(discovery.RoundRobin()),
		discovery.WithFilter(func(in discovery.Instance) bool {
			var details struct{ Zone string }
			return in.DecodePayload(&details) == nil && details.Zone == "eu-1"
		}))
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	in, err := p.Instance() // no I/O: from the provider's cache
	if err != nil {
		log.Fatal(err) // discovery.ErrNoInstance: none available
	}
	resp, err := http.Get(in.URI(nil))
	if err != nil {
		p.NoteError(in) // after 2 errors, skipped for 30 s
		return
	}
	defer resp.Body.Close()
	fmt.Println(in.ID, resp.Status)
}
