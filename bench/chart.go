package main

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The chart is drawn with gonum.org/v1/plot: a maintained, pure-Go plotting
// library (no cgo, no browser, no download at run time) whose SVG back end
// writes a plain file; its fonts (Liberation) come with the module.

// chartColors gives each implementation one color in both panels.
var chartColors = map[string]color.Color{
	implCurator: color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff},
	implGo:      color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	implZkLock:  color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	implRaw:     color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	implRawTrip: color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	implKazoo:   color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	implEtcd:    color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
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
	bars, err := rep.ratioPlot()
	if err != nil {
		return err
	}
	cdf, cdfCase, err := rep.cdfPlot()
	if err != nil {
		return err
	}
	legend, rows := rep.legend(cdfCase)
	c := vgsvg.New(chartWidth, chartHeight)
	dc := draw.New(c)
	barsH := chartHeight * 0.45
	legendH := vg.Points(15*float64(rows) + 36)
	bars.Draw(draw.Crop(dc, 0, 0, chartHeight-barsH, 0))
	legend.Draw(draw.Crop(dc, vg.Points(40), 0, chartHeight-barsH-legendH, -barsH))
	if cdf != nil {
		cdf.Draw(draw.Crop(dc, 0, 0, 0, -(barsH + legendH)))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	// The fonts are not embedded (that would add ~0.5 MB): name
	// Liberation Sans's metric-compatible fallbacks, so that a viewer
	// without it lays the text out as it was measured.
	out := strings.ReplaceAll(buf.String(), "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	_, err = io.WriteString(w, out)
	return err
}

const chartWidth, chartHeight = 9 * vg.Inch, 12 * vg.Inch

// legend is the legend both panels share: one entry per implementation
// that ran, in the table's order, with its color (dashed for the baseline
// and for etcd, as drawn), and its p50 and p99 in cdfCase when it ran
// there. It returns the number of entries.
func (rep *report) legend(cdfCase string) (plot.Legend, int) {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, 11)
	l.Top, l.Left = true, true
	l.YOffs = -vg.Points(18) // below the bars' axis label
	l.ThumbnailWidth = vg.Points(28)
	base := rep.baselineName()
	n := 0
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
		ls := draw.LineStyle{Color: chartColors[name], Width: vg.Points(6)}
		if name == base || name == implEtcd {
			ls.Width = vg.Points(2)
			ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		l.Add(label, &plotter.Line{LineStyle: ls})
		n++
	}
	return l, n
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, 13)
	for _, t := range []*font.Font{&p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		t.Variant = "Sans"
	}
	return p
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
func (rep *report) hasRatios() bool {
	base := rep.baselineName()
	for _, c := range allCases() {
		if b := rep.find(c.name, base); b != nil && b.Ops > 0 {
			return true
		}
	}
	return false
}

// ratioPlot is the top panel: horizontal bars, one group per case (top to
// bottom in the bench's order), one bar per implementation, each the
// implementation's ops/s over the baseline's in the same case. The raw
// round trip (one exists, not a lock) is left out: it is off the scale.
func (rep *report) ratioPlot() (*plot.Plot, error) {
	base := rep.baselineName()
	var cases []string
	for _, c := range allCases() {
		if b := rep.find(c.name, base); b != nil && b.Ops > 0 {
			cases = append(cases, c.name)
		}
	}
	var impls []string
	for _, name := range implOrder {
		if name == base || name == implRawTrip {
			continue
		}
		for _, c := range cases {
			if r := rep.find(c, name); r != nil && r.Ops > 0 {
				impls = append(impls, name)
				break
			}
		}
	}
	p := newPlot(fmt.Sprintf("ops/s relative to %s, same run (%s ZooKeeper %s)", base, rep.topology(), rep.zkVersion))
	p.X.Label.Text = fmt.Sprintf("ops/s ÷ %s's ops/s (longer is faster; the dashed line is %s)", base, base)
	p.Y.Label.Text = ""
	// Cases top to bottom: the first case gets the highest Y.
	labels := slices.Clone(cases)
	slices.Reverse(labels)
	for i, l := range labels {
		labels[i] = strings.ReplaceAll(l, " ×", "\n×")
	}
	p.NominalY(labels...)
	const barW = 7 // points
	maxRatio := 1.0
	for i, name := range impls {
		vals := make(plotter.Values, len(cases))
		for j, c := range cases {
			r, b := rep.find(c, name), rep.find(c, base)
			if r != nil && r.Ops > 0 {
				vals[len(cases)-1-j] = r.OpsPerSec() / b.OpsPerSec()
				maxRatio = max(maxRatio, vals[len(cases)-1-j])
			}
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(barW))
		if err != nil {
			return nil, err
		}
		bc.Horizontal = true
		bc.Color = chartColors[name]
		bc.LineStyle.Width = 0
		bc.Offset = vg.Points(barW * (float64(len(impls)-1)/2 - float64(i)))
		p.Add(bc)
	}
	line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(cases)) - 0.5}})
	if err != nil {
		return nil, err
	}
	line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	line.LineStyle.Color = chartColors[base]
	p.Add(line)
	p.X.Min = 0
	p.X.Max = max(math.Ceil(maxRatio*1.05*4)/4, 1.25)
	p.Y.Min, p.Y.Max = -0.5, float64(len(cases))-0.5
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for v := 0.0; v <= max+1e-9; v += 0.25 {
			t := plot.Tick{Value: v}
			if math.Mod(v, 0.5) == 0 {
				t.Label = fmt.Sprintf("%.1f×", v)
			}
			ts = append(ts, t)
		}
		return ts
	})
	p.Add(plotter.NewGrid())
	return p, nil
}

// cdfPlot is the bottom panel: for the most contended mutex case that ran,
// each implementation's acquire latencies as a cumulative distribution on
// a log scale, and that case's name. Nil when no contended case ran.
func (rep *report) cdfPlot() (*plot.Plot, string, error) {
	var caseName string
	most := 0
	for _, c := range allCases() {
		if c.kind != kindContended || c.clients <= most {
			continue
		}
		for _, r := range rep.results {
			if r.Case == c.name && r.Skipped == "" && len(r.Lat) > 0 {
				caseName, most = c.name, c.clients
				break
			}
		}
	}
	if caseName == "" {
		return nil, "", nil
	}
	p := newPlot(fmt.Sprintf("%s: acquire latency, cumulative (%s ZooKeeper %s)", caseName, rep.topology(), rep.zkVersion))
	p.X.Label.Text = "acquire latency, ms (log scale)"
	p.Y.Label.Text = "share of acquisitions at or below"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(logTicks)
	p.Y.Min, p.Y.Max = 0, 1
	for _, name := range implOrder {
		r := rep.find(caseName, name)
		if r == nil || len(r.Lat) == 0 {
			continue
		}
		line, err := plotter.NewLine(cdfPoints(r, 300))
		if err != nil {
			return nil, "", err
		}
		line.LineStyle.Color = chartColors[name]
		line.LineStyle.Width = vg.Points(1.5)
		if name == implEtcd || name == rep.baselineName() {
			line.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line)
	}
	p.Add(plotter.NewGrid())
	return p, caseName, nil
}

// logTicks labels 1, 2 and 5 of every decade between min and max, with
// unlabelled ticks between them.
func logTicks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for dec := math.Pow(10, math.Floor(math.Log10(min))); dec <= max; dec *= 10 {
		for m := 1; m < 10; m++ {
			v := float64(m) * dec
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// msf is d in milliseconds.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cdfPoints samples r's sorted latencies at up to n points (in ms, and the
// share at or below), keeping the first and the last.
func cdfPoints(r *Result, n int) plotter.XYs {
	lat := r.Lat
	var pts plotter.XYs
	step := max(len(lat)/n, 1)
	for i := 0; i < len(lat); i += step {
		pts = append(pts, plotter.XY{X: msf(lat[i]), Y: float64(i+1) / float64(len(lat))})
	}
	if last := len(lat) - 1; (last % step) != 0 {
		pts = append(pts, plotter.XY{X: msf(lat[last]), Y: 1})
	}
	for i := range pts {
		pts[i].X = max(pts[i].X, 0.001) // the log scale needs > 0
	}
	return pts
}
