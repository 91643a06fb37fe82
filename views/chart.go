package views

import (
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
)

// Server-rendered charts: inline SVG written in Go, no JavaScript. Each chart
// has a <title> and <desc> for screen readers, a <title> on every bar for the
// mouse, and is shown beside a table with the same numbers.

// DayChart draws one or more daily series as small multiples: one row of
// bars per series, sharing the day axis.
type DayChart struct {
	ID     string   // unique on the page; prefixes the element ids
	Title  string   // what the chart shows
	Desc   string   // a sentence summing it up, for screen readers
	Days   []string // YYYY-MM-DD, oldest first
	Series []DaySeries
}

// DaySeries is one row of a DayChart.
type DaySeries struct {
	Name   string
	Unit   string    // "%" for rates; "" for counts
	Values []float64 // one per day
	Class  string    // the bars' fill class
}

// StackChart draws one horizontal bar per row, split into segments.
type StackChart struct {
	ID    string
	Title string
	Desc  string
	Keys  []StackKey // the segments, in order, with the legend
	Rows  []StackRow
	Unit  string // "%" when each row's segments add up to 100
}

// StackKey names one segment of a StackChart's bars.
type StackKey struct {
	Name  string
	Class string
}

// StackRow is one bar: a label and one value per key.
type StackRow struct {
	Label  string
	Values []float64
}

// Chart geometry, in SVG user units (the SVG scales to its box).
const (
	chartWidth  = 640
	dayPanelH   = 56 // bar area of one series
	dayHeadH    = 18 // series name above it
	dayGap      = 10
	dayAxisH    = 18
	stackLabelW = 150
	stackValueW = 80
	stackRowH   = 26
	stackLegend = 24
)

// Component renders the chart as inline SVG.
func (c DayChart) Component() templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, c.svg())
		return err
	})
}

func (c DayChart) svg() string {
	n := len(c.Days)
	height := len(c.Series)*(dayHeadH+dayPanelH+dayGap) + dayAxisH
	var b strings.Builder
	svgOpen(&b, c.ID, c.Title, c.Desc, height)
	slot := 0.0
	if n > 0 {
		slot = float64(chartWidth) / float64(n)
	}
	y := 0
	for _, s := range c.Series {
		peak := 0.0
		for _, v := range s.Values {
			peak = math.Max(peak, v)
		}
		fmt.Fprintf(&b, `<text x="0" y="%d" class="fill-slate-600 text-[11px] font-medium">%s</text>`, y+12, esc(s.Name))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" class="fill-slate-600 text-[10px]">max %s</text>`,
			chartWidth, y+12, esc(chartNumber(peak, s.Unit)))
		top := y + dayHeadH
		base := top + dayPanelH
		fmt.Fprintf(&b, `<line x1="0" x2="%d" y1="%d" y2="%d" class="stroke-slate-200" stroke-width="1"/>`, chartWidth, base, base)
		for i, v := range s.Values {
			if i >= n {
				break
			}
			h := 0.0
			if peak > 0 {
				h = v / peak * dayPanelH
			}
			if v > 0 && h < 1 {
				h = 1 // a small value stays visible
			}
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="%s" data-value="%s"><title>%s: %s %s</title></rect>`,
				f1(float64(i)*slot+slot*0.15), f1(float64(base)-h), f1(slot*0.7), f1(h), esc(s.Class),
				esc(chartNumber(v, s.Unit)), esc(ShortDay(c.Days[i])), esc(chartNumber(v, s.Unit)), esc(strings.ToLower(s.Name)))
		}
		y = base + dayGap
	}
	// Day axis: first, middle and last day.
	if n > 0 {
		for _, i := range []int{0, n / 2, n - 1} {
			anchor := "middle"
			x := float64(i)*slot + slot/2
			switch i {
			case 0:
				anchor, x = "start", 0
			case n - 1:
				anchor, x = "end", chartWidth
			}
			fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="%s" class="fill-slate-600 text-[10px]">%s</text>`,
				f1(x), y+10, anchor, esc(ShortDay(c.Days[i])))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// Component renders the chart as inline SVG.
func (c StackChart) Component() templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, c.svg())
		return err
	})
}

func (c StackChart) svg() string {
	rows := max(len(c.Rows), 1)
	height := stackLegend + rows*stackRowH
	var b strings.Builder
	svgOpen(&b, c.ID, c.Title, c.Desc, height)
	// Legend.
	x := 0
	for _, k := range c.Keys {
		fmt.Fprintf(&b, `<rect x="%d" y="4" width="10" height="10" rx="2" class="%s"/>`, x, esc(k.Class))
		fmt.Fprintf(&b, `<text x="%d" y="13" class="fill-slate-600 text-[11px]">%s</text>`, x+14, esc(k.Name))
		x += 24 + 7*len([]rune(k.Name))
	}
	if len(c.Rows) == 0 {
		fmt.Fprintf(&b, `<text x="0" y="%d" class="fill-slate-600 text-[12px]">Nothing in this period.</text>`, stackLegend+17)
		b.WriteString(`</svg>`)
		return b.String()
	}
	peak := 0.0
	for _, r := range c.Rows {
		peak = math.Max(peak, sum(r.Values))
	}
	if c.Unit == "%" {
		peak = 100
	}
	barW := float64(chartWidth - stackLabelW - stackValueW)
	for i, r := range c.Rows {
		top := stackLegend + i*stackRowH
		fmt.Fprintf(&b, `<text x="0" y="%d" class="fill-slate-700 text-[12px]">%s</text>`, top+16, esc(clip(r.Label, 22)))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="16" rx="2" class="fill-slate-100"/>`, stackLabelW, top+4, f1(barW))
		left := float64(stackLabelW)
		for j, v := range r.Values {
			if j >= len(c.Keys) || v <= 0 || peak <= 0 {
				continue
			}
			w := v / peak * barW
			fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="16" class="%s" data-value="%s"><title>%s — %s: %s</title></rect>`,
				f1(left), top+4, f1(w), esc(c.Keys[j].Class), esc(chartNumber(v, c.Unit)),
				esc(r.Label), esc(c.Keys[j].Name), esc(chartNumber(v, c.Unit)))
			left += w
		}
		total := sum(r.Values)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" class="fill-slate-500 text-[11px]">%s</text>`,
			chartWidth, top+16, esc(chartNumber(total, c.Unit)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func svgOpen(b *strings.Builder, id, title, desc string, height int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="%s-title %s-desc" class="h-auto w-full overflow-visible" data-testid="chart" id="%s">`,
		chartWidth, height, esc(id), esc(id), esc(id))
	fmt.Fprintf(b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(id), esc(title), esc(id), esc(desc))
}

func esc(s string) string { return html.EscapeString(s) }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func sum(vs []float64) float64 {
	t := 0.0
	for _, v := range vs {
		t += v
	}
	return t
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// chartNumber formats a value: a rate with one decimal and %, a count whole
// with thousands separators.
func chartNumber(v float64, unit string) string {
	if unit == "%" {
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	return Count(int64(math.Round(v)))
}

// ShortDay writes a YYYY-MM-DD day as "May 12" (unchanged if it is not one).
func ShortDay(day string) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.Format("2 Jan")
}
