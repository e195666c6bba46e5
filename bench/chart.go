package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The chart is plain SVG written here: the ratio bars of every case, a
// legend, and the acquire-latency CDFs of the most contended mutex case.
// A viewer draws its text in whatever font it has (the SVG names Liberation
// Sans and its metric-compatible fallbacks, but embeds none), so the layout
// never relies on one font's metrics: every label is measured with a
// conservative width per character (textWidth: at least DejaVu Sans's and
// Verdana's, the widest common sans fonts), the margins and the viewBox are
// sized from those widths, and text is anchored where it must not move (the
// case names end at the axis, centred titles stay centred), so a narrower
// font leaves a little room and a wider one is still inside.

// chartColors gives each implementation one color in both panels.
var chartColors = map[string]string{
	implCurator: "#444444",
	implGo:      "#1f77b4",
	implZkLock:  "#ff7f0e",
	implRaw:     "#2ca02c",
	implRawTrip: "#8c564b",
	implKazoo:   "#9467bd",
	implEtcd:    "#d62728",
}

// The fonts' sizes (px) and the layout's fixed lengths.
const (
	titleSize  = 15.0
	labelSize  = 12.0 // case names, axis titles
	tickSize   = 11.0
	legendSize = 11.0

	chartMargin  = 14.0  // around everything
	plotWidth    = 560.0 // the bars' and the CDFs' data area, at least
	barHeight    = 9.0
	groupGap     = 12.0 // between two cases' bar groups
	cdfHeight    = 340.0
	swatchWidth  = 28.0
	legendRow    = 17.0
	tickLength   = 5.0
	textGap      = 6.0 // between a label and what it labels
	fontFamily   = "'Liberation Sans',Arial,Helvetica,'DejaVu Sans',sans-serif"
	ascentEm     = 0.95 // above the baseline, conservatively (DejaVu Sans: 0.93)
	descentEm    = 0.25 // below it (DejaVu Sans: 0.24)
	lineSpacing  = 1.3  // between a text's baselines, in em
	cdfMaxPoints = 300
)

// charWidth returns a conservative advance width of r, in em: at least
// what DejaVu Sans and Verdana give it (the widest of the sans fonts a
// viewer falls back to; Liberation Sans, Arial and Helvetica are narrower).
// Characters it does not know get a full em.
func charWidth(r rune) float64 {
	switch {
	case strings.ContainsRune(" .,:;'!|il", r):
		return 0.36
	case strings.ContainsRune("()[]{}-/\\fjrtI\"", r):
		return 0.48
	case strings.ContainsRune("mw×÷%@MW&", r):
		return 1.0
	case strings.ContainsRune("·", r):
		return 0.4
	case strings.ContainsRune("+=<>~#_*^", r):
		return 0.86
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '$', r == '?':
		return 0.64
	case r >= 'A' && r <= 'Z':
		return 0.8
	}
	return 1.0
}

// textWidth is the width, in px, that s takes at most in a sans font of
// size px.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += charWidth(r)
	}
	return w * size
}

// writeSVG draws the run as an SVG file at path (its directory is made if
// missing): the ops/s ratio of every implementation to the baseline, per
// case, and the acquire-latency CDFs of the most contended mutex case.
func (rep *report) writeSVG(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.drawSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// drawSVG draws the chart to w: the ratio bars on top, the legend they
// share with the CDFs below them, then the CDFs.
func (rep *report) drawSVG(w io.Writer) error {
	if !rep.hasRatios() {
		return errNoRatios
	}
	cdf := rep.cdfData()
	return drawChart(w, rep.ratioData(), cdf, rep.legend(cdf.caseName))
}

// drawChart lays the chart out and writes it to w.
func drawChart(w io.Writer, bars ratioData, cdf cdfData, legend []legendEntry) error {

	// The widths: the case names on the left, the plot, and room on the
	// right for the last tick label; the chart is as wide as its widest
	// line of text needs, and the plots grow to fill it.
	nameW := 0.0
	for _, c := range bars.cases {
		nameW = max(nameW, textWidth(c, labelSize))
	}
	barsLeft := chartMargin + nameW + textGap
	right := chartMargin + textWidth(ratioLabel(bars.max), tickSize)/2
	width := barsLeft + plotWidth + right
	cdfLeft := chartMargin + labelSize*(ascentEm+descentEm) + textGap + textWidth("0.75", tickSize) + textGap
	width = max(width, cdfLeft+plotWidth+chartMargin+textWidth("10000", tickSize)/2)
	for _, s := range []string{bars.title, bars.axis, cdf.title, cdf.axis} {
		width = max(width, textWidth(s, s2size(s, bars, cdf))+2*chartMargin)
	}
	for _, e := range legend {
		width = max(width, chartMargin+swatchWidth+textGap+textWidth(e.label, legendSize)+chartMargin)
	}
	width = math.Ceil(width)

	b := svgBuilder{width: width, base: bars.base}
	y := b.title(width/2, chartMargin, bars.title)
	y = b.bars(bars, barsLeft, y, width-right-barsLeft)
	y += 2 * textGap
	for _, e := range legend {
		b.swatch(chartMargin, y+legendRow/2, e.impl)
		b.text(chartMargin+swatchWidth+textGap, y+legendRow/2+legendSize*0.35, legendSize, "start", 0, e.label)
		y += legendRow
	}
	if cdf.caseName != "" {
		y = b.title(width/2, y+3*textGap, cdf.title)
		y = b.cdf(cdf, cdfLeft, y, width-chartMargin-textWidth("10000", tickSize)/2-cdfLeft)
	}
	height := math.Ceil(y + chartMargin)

	var out bytes.Buffer
	fmt.Fprintf(&out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" font-family=\"%s\">\n",
		width, height, width, height, fontFamily)
	fmt.Fprintf(&out, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" fill=\"#ffffff\"/>\n", width, height)
	out.WriteString(b.String())
	out.WriteString("</svg>\n")
	_, err := w.Write(out.Bytes())
	return err
}

// s2size is the font size s is drawn at: the titles' or the axis titles'.
func s2size(s string, bars ratioData, cdf cdfData) float64 {
	if s == bars.title || s == cdf.title {
		return titleSize
	}
	return labelSize
}

// ratioData is what the top panel shows: per case (top to bottom in the
// bench's order) and implementation, its ops/s over the baseline's.
type ratioData struct {
	title, axis string
	base        string
	cases       []string
	impls       []string
	ratio       map[string]map[string]float64 // case, impl; absent: did not run
	max         float64                       // the axis's end
}

// ratioData collects the top panel's bars. The raw round trip (one exists,
// not a lock) is left out: it is off the scale.
func (rep *report) ratioData() ratioData {
	base := rep.baselineName()
	d := ratioData{base: base, ratio: map[string]map[string]float64{}}
	d.title = fmt.Sprintf("ops/s relative to %s, same run (%s ZooKeeper %s)", base, rep.topology(), rep.zkVersion)
	d.axis = fmt.Sprintf("ops/s ÷ %s's ops/s: longer is faster; the dashed line is %s", base, base)
	d.cases = rep.chartCases()
	maxRatio := 1.0
	for _, name := range implOrder {
		if name == base || name == implRawTrip {
			continue
		}
		ran := false
		for _, c := range d.cases {
			r, b := rep.find(c, name), rep.find(c, base)
			if r == nil || r.Ops <= 0 {
				continue
			}
			if d.ratio[c] == nil {
				d.ratio[c] = map[string]float64{}
			}
			v := r.OpsPerSec() / b.OpsPerSec()
			d.ratio[c][name] = v
			maxRatio = max(maxRatio, v)
			ran = true
		}
		if ran {
			d.impls = append(d.impls, name)
		}
	}
	d.max = max(math.Ceil(maxRatio*1.05*4)/4, 1.25)
	return d
}

func ratioLabel(v float64) string { return fmt.Sprintf("%.1f×", v) }

// cdfData is what the bottom panel shows: for the most contended mutex
// case that ran, each implementation's acquire latencies as a cumulative
// distribution. caseName is "" when no contended case ran.
type cdfData struct {
	caseName    string
	title, axis string
	yAxis       string
	lines       []cdfLine
	lo, hi      float64 // the x axis's range, ms
}

type cdfLine struct {
	impl string
	pts  []point
}

// point is a latency in ms and the share of acquisitions at or below it.
type point struct{ x, y float64 }

func (rep *report) cdfData() cdfData {
	var d cdfData
	most := 0
	for _, c := range allCases() {
		if c.kind != kindContended || c.clients <= most {
			continue
		}
		for _, r := range rep.results {
			if r.Case == c.name && r.Skipped == "" && len(r.Lat) > 0 {
				d.caseName, most = c.name, c.clients
				break
			}
		}
	}
	if d.caseName == "" {
		return d
	}
	d.title = fmt.Sprintf("%s: acquire latency, cumulative (%s ZooKeeper %s)", d.caseName, rep.topology(), rep.zkVersion)
	d.axis = "acquire latency, ms (log scale)"
	d.yAxis = "share of acquisitions at or below"
	d.lo, d.hi = math.Inf(1), 0
	for _, name := range implOrder {
		r := rep.find(d.caseName, name)
		if r == nil || len(r.Lat) == 0 {
			continue
		}
		pts := cdfPoints(r, cdfMaxPoints)
		d.lines = append(d.lines, cdfLine{impl: name, pts: pts})
		d.lo, d.hi = min(d.lo, pts[0].x), max(d.hi, pts[len(pts)-1].x)
	}
	if d.hi <= d.lo*1.01 {
		d.hi = d.lo * 10
	}
	d.lo, d.hi = d.lo/1.05, d.hi*1.05
	return d
}

// legendEntry is one implementation in the legend both panels share.
type legendEntry struct{ impl, label string }

// legend lists every implementation that ran, in the table's order, with
// its p50 and p99 in cdfCase when it ran there.
func (rep *report) legend(cdfCase string) []legendEntry {
	base := rep.baselineName()
	var out []legendEntry
	for _, name := range implOrder {
		ran := false
		for _, r := range rep.results {
			if r.Impl == name && r.Skipped == "" && r.Ops > 0 {
				ran = true
				break
			}
		}
		if !ran || (name == implRawTrip && rep.find(cdfCase, name) == nil) {
			continue // the round trip is in neither panel
		}
		label := name
		switch name {
		case base:
			label += ", the baseline (dashed)"
		case implEtcd:
			label += ": reference, etcd " + etcdVersion + " (dashed)"
		}
		if r := rep.find(cdfCase, name); r != nil && len(r.Lat) > 0 {
			label += fmt.Sprintf(" · %s: p50 %s, p99 %s ms", strings.TrimPrefix(cdfCase, "mutex "), ms(r.Percentile(0.5)), ms(r.Percentile(0.99)))
		}
		out = append(out, legendEntry{name, label})
	}
	return out
}

// baselineName is the implementation the ratios are to: Curator, or
// go-curator when Curator did not run.
func (rep *report) baselineName() string {
	for _, r := range rep.results {
		if r.Impl == implCurator && r.Skipped == "" {
			return implCurator
		}
	}
	return implGo
}

// errNoRatios reports a run with no case the baseline measured (only the
// scale case, or -impls without the baseline): there is nothing to chart.
var errNoRatios = errors.New("no case with the baseline's ops/s to chart (run it with the baseline, or -svg '')")

// hasRatios reports whether some case has the baseline's ops/s.
func (rep *report) hasRatios() bool { return len(rep.chartCases()) > 0 }

// chartCases returns the cases with the baseline's ops/s: the bench's, in
// its order, then any other case of the results, in theirs.
func (rep *report) chartCases() []string {
	base := rep.baselineName()
	var cases []string
	for _, c := range allCases() {
		if b := rep.find(c.name, base); b != nil && b.Ops > 0 {
			cases = append(cases, c.name)
		}
	}
	for _, r := range rep.results {
		if r.Impl == base && r.Skipped == "" && r.Ops > 0 && !slices.Contains(cases, r.Case) {
			cases = append(cases, r.Case)
		}
	}
	return cases
}

// logTicks labels 1, 2 and 5 of every decade between min and max, with
// unlabelled ticks between them.
func logTicks(min, max float64) []tick {
	var ts []tick
	for dec := math.Pow(10, math.Floor(math.Log10(min))); dec <= max; dec *= 10 {
		for m := 1; m < 10; m++ {
			v := float64(m) * dec
			if v < min || v > max {
				continue
			}
			t := tick{value: v}
			if m == 1 || m == 2 || m == 5 {
				t.label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// tick is an axis tick; one without a label is a minor tick.
type tick struct {
	value float64
	label string
}

// msf is d in milliseconds.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cdfPoints samples r's sorted latencies at up to n points (in ms, and the
// share at or below), keeping the first and the last.
func cdfPoints(r *Result, n int) []point {
	lat := r.Lat
	var pts []point
	step := max(len(lat)/n, 1)
	for i := 0; i < len(lat); i += step {
		pts = append(pts, point{msf(lat[i]), float64(i+1) / float64(len(lat))})
	}
	if last := len(lat) - 1; (last % step) != 0 {
		pts = append(pts, point{msf(lat[last]), 1})
	}
	for i := range pts {
		pts[i].x = max(pts[i].x, 0.001) // the log scale needs > 0
	}
	return pts
}
