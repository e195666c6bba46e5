package main

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// svgBuilder writes the chart's elements, in px, y growing downwards.
type svgBuilder struct {
	strings.Builder
	width float64 // the chart's, to keep centred text inside it
	base  string  // the baseline implementation, drawn dashed
}

const gridColor = "#dddddd"

// text writes s with its baseline at y, anchored at x ("start", "middle"
// or "end"), turned by rotate degrees about (x, y).
func (b *svgBuilder) text(x, y, size float64, anchor string, rotate float64, s string) {
	fmt.Fprintf(b, `<text x="%.2f" y="%.2f" font-size="%g"`, x, y, size)
	if anchor != "start" {
		fmt.Fprintf(b, ` text-anchor="%s"`, anchor)
	}
	if rotate != 0 {
		fmt.Fprintf(b, ` transform="rotate(%g %.2f %.2f)"`, rotate, x, y)
	}
	b.WriteString(">")
	xml.EscapeText(b, []byte(s))
	b.WriteString("</text>\n")
}

func (b *svgBuilder) line(x1, y1, x2, y2 float64, color string, width float64, dashed bool) {
	fmt.Fprintf(b, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" stroke-width="%g"`, x1, y1, x2, y2, color, width)
	if dashed {
		b.WriteString(` stroke-dasharray="5 3"`)
	}
	b.WriteString("/>\n")
}

// dashed reports whether impl is drawn dashed: the baseline and the etcd
// reference.
func (b *svgBuilder) dashed(impl string) bool { return impl == b.base || impl == implEtcd }

// title writes s centred at x, its top at top, and returns the y below it.
func (b *svgBuilder) title(x, top float64, s string) float64 {
	y := top + titleSize*ascentEm
	b.text(x, y, titleSize, "middle", 0, s)
	return y + titleSize*descentEm + textGap
}

// axisTitle writes s centred under a plot (from left, pw wide), moved
// inwards if it is wider than the room on either side, its top at top, and
// returns the y below it.
func (b *svgBuilder) axisTitle(left, pw, top float64, s string) float64 {
	half := textWidth(s, labelSize) / 2
	x := min(max(left+pw/2, chartMargin+half), b.width-chartMargin-half)
	y := top + labelSize*ascentEm
	b.text(x, y, labelSize, "middle", 0, s)
	return y + labelSize*descentEm
}

// swatch writes impl's legend mark, from x, centred on y.
func (b *svgBuilder) swatch(x, y float64, impl string) {
	if b.dashed(impl) {
		b.line(x, y, x+swatchWidth, y, chartColors[impl], 2, true)
		return
	}
	b.line(x, y, x+swatchWidth, y, chartColors[impl], 6, false)
}

// bars writes the ratio panel: the plot from left, pw wide, its top at top;
// the case names end textGap left of it. It returns the y below the axis
// title.
func (b *svgBuilder) bars(d ratioData, left, top, pw float64) float64 {
	groupH := float64(len(d.impls))*barHeight + groupGap
	bottom := top + float64(len(d.cases))*groupH
	x := func(v float64) float64 { return left + v/d.max*pw }
	for v := 0.25; v <= d.max+1e-9; v += 0.25 {
		b.line(x(v), top, x(v), bottom, gridColor, 1, false)
	}
	for i, c := range d.cases {
		gy := top + float64(i)*groupH
		b.text(left-textGap, gy+groupH/2+labelSize*0.35, labelSize, "end", 0, c)
		for j, impl := range d.impls {
			v, ok := d.ratio[c][impl]
			if !ok {
				continue
			}
			fmt.Fprintf(b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%g" fill="%s"/>`+"\n",
				left, gy+groupGap/2+float64(j)*barHeight, x(v)-left, barHeight-1, chartColors[impl])
		}
	}
	b.line(x(1), top, x(1), bottom, chartColors[d.base], 1.5, true)
	b.line(left, top, left, bottom, "#000000", 1, false)
	b.line(left, bottom, left+pw, bottom, "#000000", 1, false)
	for v := 0.0; v <= d.max+1e-9; v += 0.25 {
		major := math.Mod(v, 0.5) == 0
		l := tickLength
		if !major {
			l *= 0.6
		}
		b.line(x(v), bottom, x(v), bottom+l, "#000000", 1, false)
		if major {
			b.text(x(v), bottom+tickLength+2+tickSize*ascentEm, tickSize, "middle", 0, ratioLabel(v))
		}
	}
	return b.axisTitle(left, pw, bottom+tickLength+2+tickSize*(ascentEm+descentEm)+textGap, d.axis)
}

// cdf writes the latency panel: the plot from left, pw wide, its top at
// top, with its y axis title turned along its left side. It returns the y
// below the axis title.
func (b *svgBuilder) cdf(d cdfData, left, top, pw float64) float64 {
	bottom := top + cdfHeight
	lo, span := math.Log(d.lo), math.Log(d.hi)-math.Log(d.lo)
	x := func(v float64) float64 { return left + (math.Log(v)-lo)/span*pw }
	y := func(share float64) float64 { return bottom - share*cdfHeight }
	ticks := logTicks(d.lo, d.hi)
	for _, t := range ticks {
		if t.label != "" {
			b.line(x(t.value), top, x(t.value), bottom, gridColor, 1, false)
		}
	}
	for _, s := range []float64{0, 0.25, 0.5, 0.75, 1} {
		b.line(left, y(s), left+pw, y(s), gridColor, 1, false)
		b.line(left-tickLength, y(s), left, y(s), "#000000", 1, false)
		b.text(left-tickLength-2, y(s)+tickSize*0.35, tickSize, "end", 0, fmt.Sprint(s))
	}
	for _, l := range d.lines {
		var pts strings.Builder
		for _, p := range l.pts {
			fmt.Fprintf(&pts, "%.2f,%.2f ", x(p.x), y(p.y))
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"`, strings.TrimSpace(pts.String()), chartColors[l.impl])
		if b.dashed(l.impl) {
			b.WriteString(` stroke-dasharray="5 3"`)
		}
		b.WriteString("/>\n")
	}
	b.line(left, top, left, bottom, "#000000", 1, false)
	b.line(left, bottom, left+pw, bottom, "#000000", 1, false)
	for _, t := range ticks {
		l := tickLength
		if t.label == "" {
			l *= 0.6
		}
		b.line(x(t.value), bottom, x(t.value), bottom+l, "#000000", 1, false)
		if t.label != "" {
			b.text(x(t.value), bottom+tickLength+2+tickSize*ascentEm, tickSize, "middle", 0, t.label)
		}
	}
	b.text(chartMargin+labelSize*ascentEm, top+cdfHeight/2, labelSize, "middle", -90, d.yAxis)
	return b.axisTitle(left, pw, bottom+tickLength+2+tickSize*(ascentEm+descentEm)+textGap, d.axis)
}
