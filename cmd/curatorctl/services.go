package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/recipes/discovery"
)

// defaultServicesBase is where `services` looks without --base. Curator
// has no default base path; "/services" is the one its examples and
// go-curator's docs use.
const defaultServicesBase = "/services"

// service is one registered instance as `services --json` prints it:
// Curator's ServiceInstance fields, with the node's path, its built URI
// and the registering session.
type service struct {
	Path                string          `json:"path"`
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             string          `json:"address,omitempty"`
	Port                int             `json:"port,omitempty"`
	SSLPort             int             `json:"sslPort,omitempty"`
	URI                 string          `json:"uri,omitempty"`
	ServiceType         string          `json:"serviceType"`
	Enabled             bool            `json:"enabled"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	Session             string          `json:"session,omitempty"` // the owner of an ephemeral node, hex
	Payload             json.RawMessage `json:"payload,omitempty"`
}

// cmdServices lists the instances registered with Curator's (or
// go-curator's) service discovery: `services [NAME]`, under --base.
func cmdServices(ctx context.Context, g *global, args []string, w io.Writer) error {
	base := g.base
	if base == "" {
		base = defaultServicesBase
	}
	var names []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("%w: services: unknown flag %q", errUsage, a)
		}
		names = append(names, a)
	}
	if len(names) > 1 {
		return fmt.Errorf("%w: services: want at most one service NAME, got %d", errUsage, len(names))
	}
	c, err := open(ctx, g, base)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := discovery.New(c, base)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(names) == 0 {
		if names, err = d.Names(ctx); err != nil {
			return err
		}
	}
	var out []service
	var problems []error
	for _, name := range names {
		list, err := d.InstanceNodes(ctx, name)
		if errors.Is(err, discovery.ErrInvalidArgument) {
			return fmt.Errorf("%w: %w", errUsage, err) // a bad NAME
		}
		if err != nil && !errors.Is(err, discovery.ErrCorrupt) {
			return err
		}
		if err != nil {
			problems = append(problems, err)
		}
		for _, n := range list {
			out = append(out, describeService(n))
		}
	}
	if err := showServices(g, w, out); err != nil {
		return err
	}
	return errors.Join(problems...) // nodes that are not instances: listed last, exit 1
}

// describeService makes the printed form of an instance, with its node's
// path (a DYNAMIC_SEQUENTIAL instance's node is named <id><sequence>, not
// <id>) and owner.
func describeService(n discovery.InstanceNode) service {
	in := n.Instance
	s := service{
		Path: n.Path, Name: in.Name, ID: in.ID, Address: in.Address, Port: in.Port, SSLPort: in.SSLPort,
		URI: in.URI(nil), ServiceType: string(in.ServiceType), Enabled: !in.Disabled,
		RegistrationTimeUTC: in.RegistrationTimeUTC, Payload: in.Payload,
	}
	if n.Owner != 0 {
		s.Session = fmt.Sprintf("%#x", n.Owner)
	}
	return s
}

func showServices(g *global, w io.Writer, list []service) error {
	if g.json {
		if list == nil {
			list = []service{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	for _, s := range list {
		fields := []string{s.Name, s.ID}
		addr := s.Address
		if s.Port != 0 {
			addr += ":" + strconv.Itoa(s.Port)
		}
		if addr != "" {
			fields = append(fields, addr)
		}
		if s.SSLPort != 0 {
			fields = append(fields, "ssl="+strconv.Itoa(s.SSLPort))
		}
		if s.URI != "" {
			fields = append(fields, "uri="+s.URI)
		}
		fields = append(fields, strings.ToLower(s.ServiceType))
		if !s.Enabled {
			fields = append(fields, "disabled")
		}
		if s.Session != "" {
			fields = append(fields, "session="+s.Session)
		}
		if s.RegistrationTimeUTC > 0 {
			age := time.Since(time.UnixMilli(s.RegistrationTimeUTC)).Round(time.Second)
			fields = append(fields, "age="+age.String())
		}
		if len(s.Payload) > 0 {
			fields = append(fields, "payload="+string(s.Payload))
		}
		fmt.Fprintln(w, strings.Join(fields, "\t"))
	}
	return nil
}
