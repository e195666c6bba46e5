package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// TestSmokeEtcdChart runs the etcd reference peer beside go-curator on a
// tiny workload (two mutex cases, 300 ms windows) and writes the chart. It
// checks what the run did, not how fast: the etcd rows exist, completed
// operations with no error and no overlapping holders, the table labels
// them as another server, and the chart is an SVG document that names
// them. The etcd member is a child process, stopped before the test ends.
func TestSmokeEtcdChart(t *testing.T) {
	cluster := zktest.Start(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, err := newConfig(cluster.ConnectString(), 300*time.Millisecond, 100*time.Millisecond, false, 1, -1,
		"^mutex (uncontended|contended ×4)$", "^(go-curator|etcd)")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	cfg.log = &progress
	cfg.topology, cfg.etcdMembers = "standalone", 1
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rep, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, progress.String())
	}
	if why, ok := rep.missing[implEtcd]; ok {
		t.Fatalf("the etcd peer did not start: %s\n%s", why, progress.String())
	}
	for _, c := range []string{"mutex uncontended", "mutex contended ×4"} {
		for _, name := range []string{implEtcd, implGo} {
			r := rep.find(c, name)
			switch {
			case r == nil:
				t.Errorf("%s: no %s row", c, name)
			case r.Ops == 0:
				t.Errorf("%s / %s completed no operation (errors %d: %s)", c, name, r.Errors, r.FirstError)
			case r.Errors > 0:
				t.Errorf("%s / %s: %d errors, first: %s", c, name, r.Errors, r.FirstError)
			case r.Overlaps != 0:
				t.Errorf("%s / %s: %d overlapping holders, want 0", c, name, r.Overlaps)
			}
		}
	}

	var table bytes.Buffer
	rep.writeTable(&table)
	if !strings.Contains(table.String(), "| mutex contended ×4 | "+implEtcd+" |") ||
		!strings.Contains(table.String(), "reference, not a target") {
		t.Errorf("the table does not show the etcd rows as a reference:\n%s", table.String())
	}

	path := filepath.Join(t.TempDir(), "results", "chart.svg")
	if err := rep.writeSVG(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, text, err := parseSVG(b)
	if err != nil {
		t.Fatalf("the chart is not well-formed XML: %v", err)
	}
	if root.Space != "http://www.w3.org/2000/svg" || root.Local != "svg" {
		t.Errorf("the chart's root element is %v, want svg in the SVG namespace", root)
	}
	for _, want := range []string{implEtcd, implGo, "mutex contended ×4: acquire latency"} {
		if !strings.Contains(text, want) {
			t.Errorf("the chart's text has no %q", want)
		}
	}
}

// parseSVG reads an XML document to its end and returns its root element's
// name and its character data.
func parseSVG(b []byte) (xml.Name, string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var root xml.Name
	var text strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return root, "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root.Local == "" {
				root = tok.Name
			}
		case xml.CharData:
			text.Write(tok)
		}
	}
	if root.Local == "" {
		return root, "", errors.New("no element")
	}
	return root, text.String(), nil
}
