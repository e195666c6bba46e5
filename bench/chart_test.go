package main

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChart_TextInsideViewBox: every text of the chart (titles, case
// names, tick labels, axis titles, legend) lies inside the SVG's viewBox,
// and no two texts overlap, when each is measured with the conservative
// per-character width of the widest common sans font (textWidth): a viewer
// without Liberation Sans, which draws it in DejaVu Sans or Verdana, cuts
// nothing off. The runs are the latest results in results/ and the same
// with a case whose name is long.
func TestChart_TextInsideViewBox(t *testing.T) {
	latest := latestResults(t)
	long := latestResults(t)
	const longName = "mutex contended by every client of a very large fleet at once ×1024"
	for _, impl := range []string{implCurator, implGo, implKazoo} {
		long.results = append(long.results, &Result{Case: longName, Impl: impl, Ops: 700, Seconds: 1, Lat: syntheticLat(3, 9)})
	}
	for _, tc := range []struct {
		name string
		rep  *report
		want []string // texts the chart must have
	}{
		{"latest results", latest, []string{"mutex contended ×16", "mutex contended ×16: acquire latency"}},
		{"a long case name", long, []string{longName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.rep.drawSVG(&buf); err != nil {
				t.Fatal(err)
			}
			vb, texts, err := svgTexts(buf.Bytes())
			if err != nil {
				t.Fatalf("the chart does not parse: %v", err)
			}
			checkTexts(t, vb, texts)
			for _, w := range tc.want {
				if !slices.ContainsFunc(texts, func(x svgText) bool { return strings.HasPrefix(x.s, w) }) {
					t.Errorf("no text %q in the chart", w)
				}
			}
			if t.Failed() {
				path := filepath.Join(t.TempDir(), "chart.svg")
				os.WriteFile(path, buf.Bytes(), 0o644)
				t.Logf("the chart is in %s", path)
			}
		})
	}
}

// TestChart_LatestSVG: the chart in results/ (latest.svg, drawn by the
// last run or redrawn) has every text inside its viewBox, as
// TestChart_TextInsideViewBox measures them.
func TestChart_LatestSVG(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("results", "latest.svg"))
	if err != nil {
		t.Fatal(err)
	}
	vb, texts, err := svgTexts(b)
	if err != nil {
		t.Fatalf("results/latest.svg does not parse: %v", err)
	}
	checkTexts(t, vb, texts)
}

// checkTexts fails t for each text outside vb, and each pair that overlap.
func checkTexts(t *testing.T, vb box, texts []svgText) {
	t.Helper()
	if len(texts) < 10 {
		t.Fatalf("%d texts in the chart; want its titles, labels and legend", len(texts))
	}
	for i, x := range texts {
		if x.box.x0 < vb.x0 || x.box.y0 < vb.y0 || x.box.x1 > vb.x1 || x.box.y1 > vb.y1 {
			t.Errorf("text %q at %v reaches outside the viewBox %v", x.s, x.box, vb)
		}
		for _, o := range texts[i+1:] {
			if x.box.x0 < o.box.x1 && o.box.x0 < x.box.x1 && x.box.y0 < o.box.y1 && o.box.y0 < x.box.y1 {
				t.Errorf("texts %q at %v and %q at %v overlap", x.s, x.box, o.s, o.box)
			}
		}
	}
}

// box is a rectangle: x0 <= x1, y0 <= y1.
type box struct{ x0, y0, x1, y1 float64 }

func (b box) String() string { return fmt.Sprintf("[%.1f,%.1f–%.1f,%.1f]", b.x0, b.y0, b.x1, b.y1) }

// svgText is one text element: its content and its estimated box in the
// viewBox's coordinates.
type svgText struct {
	s   string
	box box
}

// affine is a 2D transform: (x, y) -> (a x + c y + e, b x + d y + f).
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// then returns m followed by n (n applied to m's result).
func (m affine) then(n affine) affine {
	return affine{
		a: n.a*m.a + n.c*m.b, b: n.b*m.a + n.d*m.b,
		c: n.a*m.c + n.c*m.d, d: n.b*m.c + n.d*m.d,
		e: n.a*m.e + n.c*m.f + n.e, f: n.b*m.e + n.d*m.f + n.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

var transformFunc = regexp.MustCompile(`(\w+)\s*\(([^)]*)\)`)

// parseTransform reads an SVG transform attribute: translate, scale,
// rotate and matrix.
func parseTransform(s string) (affine, error) {
	m := identity
	for _, f := range transformFunc.FindAllStringSubmatch(s, -1) {
		var v []float64
		for _, a := range strings.FieldsFunc(f[2], func(r rune) bool { return r == ',' || r == ' ' }) {
			n, err := strconv.ParseFloat(a, 64)
			if err != nil {
				return m, fmt.Errorf("transform %q: %w", s, err)
			}
			v = append(v, n)
		}
		arg := func(i int, def float64) float64 {
			if i < len(v) {
				return v[i]
			}
			return def
		}
		var n affine
		switch f[1] {
		case "translate":
			n = affine{a: 1, d: 1, e: arg(0, 0), f: arg(1, 0)}
		case "scale":
			n = affine{a: arg(0, 1), d: arg(1, arg(0, 1))}
		case "rotate":
			r := arg(0, 0) * math.Pi / 180
			cx, cy := arg(1, 0), arg(2, 0)
			n = affine{a: 1, d: 1, e: -cx, f: -cy}.
				then(affine{a: math.Cos(r), b: math.Sin(r), c: -math.Sin(r), d: math.Cos(r)}).
				then(affine{a: 1, d: 1, e: cx, f: cy})
		case "matrix":
			if len(v) != 6 {
				return m, fmt.Errorf("transform %q: matrix wants 6 numbers", s)
			}
			n = affine{v[0], v[1], v[2], v[3], v[4], v[5]}
		default:
			return m, fmt.Errorf("transform %q: %s not supported", s, f[1])
		}
		// SVG applies the rightmost function first.
		m = n.then(m)
	}
	return m, nil
}

// svgTexts reads an SVG document and returns its viewBox and its texts,
// each boxed from its font size, anchor and transforms (its element's and
// its groups'), with textWidth for its width, ascentEm above the baseline
// and descentEm below.
func svgTexts(doc []byte) (box, []svgText, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var vb box
	var texts []svgText
	stack := []affine{identity}
	var cur *svgText
	var curAttrs map[string]string
	var content strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return vb, nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
			}
			for _, kv := range strings.Split(attrs["style"], ";") {
				if k, v, ok := strings.Cut(kv, ":"); ok {
					attrs[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			m, err := parseTransform(attrs["transform"])
			if err != nil {
				return vb, nil, err
			}
			stack = append(stack, m.then(stack[len(stack)-1]))
			switch tok.Name.Local {
			case "svg":
				f := strings.Fields(strings.ReplaceAll(attrs["viewBox"], ",", " "))
				if len(f) != 4 {
					return vb, nil, fmt.Errorf("viewBox %q", attrs["viewBox"])
				}
				var n [4]float64
				for i := range f {
					if n[i], err = strconv.ParseFloat(f[i], 64); err != nil {
						return vb, nil, fmt.Errorf("viewBox %q: %w", attrs["viewBox"], err)
					}
				}
				vb = box{n[0], n[1], n[0] + n[2], n[1] + n[3]}
			case "text":
				cur, curAttrs = &svgText{}, attrs
				content.Reset()
			}
		case xml.CharData:
			if cur != nil {
				content.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && cur != nil {
				b, err := textBox(content.String(), curAttrs, stack[len(stack)-1])
				if err != nil {
					return vb, nil, err
				}
				texts = append(texts, svgText{s: content.String(), box: b})
				cur = nil
			}
			stack = stack[:len(stack)-1]
		}
	}
	if vb == (box{}) {
		return vb, nil, errors.New("no viewBox")
	}
	return vb, texts, nil
}

// textBox is the box s takes, drawn with attrs under the transform m.
func textBox(s string, attrs map[string]string, m affine) (box, error) {
	num := func(k string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(attrs[k], "px"), 64)
		if err != nil {
			return 0, fmt.Errorf("text %q: %s %q: %w", s, k, attrs[k], err)
		}
		return v, nil
	}
	x, err := num("x")
	if err != nil {
		return box{}, err
	}
	y, err := num("y")
	if err != nil {
		return box{}, err
	}
	size, err := num("font-size")
	if err != nil {
		return box{}, err
	}
	w := textWidth(s, size)
	x0 := x
	switch attrs["text-anchor"] {
	case "middle":
		x0 -= w / 2
	case "end":
		x0 -= w
	}
	b := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, c := range [][2]float64{{x0, y - size*ascentEm}, {x0 + w, y - size*ascentEm}, {x0, y + size*descentEm}, {x0 + w, y + size*descentEm}} {
		px, py := m.apply(c[0], c[1])
		b = box{min(b.x0, px), min(b.y0, py), max(b.x1, px), max(b.y1, py)}
	}
	return b, nil
}

// latestResults reads the newest run's table in results/ (by name) into a
// report: each row's ops/s, and latencies with its p50 and p99.
func latestResults(t *testing.T) *report {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("results", "*-run*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no results/*-run*.md to chart: %v", err)
	}
	slices.Sort(files)
	f, err := os.Open(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep := &report{zkVersion: "?"}
	head := regexp.MustCompile(`ZooKeeper ([0-9.]+), ([^,]+),`)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil && rep.cfg.topology == "" {
			rep.zkVersion, rep.cfg.topology = m[1], m[2]
		}
		cols := strings.Split(line, "|")
		if len(cols) < 7 || !strings.HasPrefix(line, "| ") {
			continue
		}
		ops, err1 := strconv.ParseFloat(strings.TrimSpace(cols[3]), 64)
		p50, err2 := strconv.ParseFloat(strings.TrimSpace(cols[4]), 64)
		p99, err3 := strconv.ParseFloat(strings.TrimSpace(cols[5]), 64)
		if err1 != nil || err2 != nil || err3 != nil || ops <= 0 {
			continue // the header, or a row without figures
		}
		rep.results = append(rep.results, &Result{Case: strings.TrimSpace(cols[1]), Impl: strings.TrimSpace(cols[2]),
			Ops: int(ops), Seconds: 1, Lat: syntheticLat(p50, p99)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rep.results) == 0 {
		t.Fatalf("%s: no result rows", files[len(files)-1])
	}
	return rep
}

// syntheticLat returns 100 sorted latencies whose p50 and p99 are the
// given ones, in ms: a table keeps no more of the distribution.
func syntheticLat(p50, p99 float64) []time.Duration {
	lat := make([]time.Duration, 100)
	for i := range lat {
		var v float64
		switch {
		case i < 50:
			v = p50 * (0.5 + 0.5*float64(i)/49)
		case i < 99:
			v = p50 + (p99-p50)*float64(i-49)/49
		default:
			v = p99 * 1.2
		}
		lat[i] = time.Duration(v * float64(time.Millisecond))
	}
	return lat
}
