package views

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
)

// bars lists a chart's bars (the rects that carry a value) with their size.
func bars(t *testing.T, svg *html.Node) (heights, widths []float64, values []string) {
	t.Helper()
	for _, r := range htmltest.ByTag(svg, "rect") {
		v, ok := htmltest.Attr(r, "data-value")
		if !ok {
			continue
		}
		h, _ := htmltest.Attr(r, "height")
		w, _ := htmltest.Attr(r, "width")
		hf, err1 := strconv.ParseFloat(h, 64)
		wf, err2 := strconv.ParseFloat(w, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bar with height %q width %q", h, w)
		}
		heights, widths, values = append(heights, hf), append(widths, wf), append(values, v)
	}
	return heights, widths, values
}

func TestDayChart(t *testing.T) {
	c := DayChart{
		ID: "c1", Title: "Activity <per> day", Desc: "Bars & such",
		Days: []string{"2026-06-08", "2026-06-09", "2026-06-10"},
		Series: []DaySeries{
			{Name: "Messages", Values: []float64{10, 0, 5}, Class: "fill-sky-500"},
			{Name: "Error rate", Unit: "%", Values: []float64{0, 12.5, 25}, Class: "fill-rose-500"},
		},
	}
	raw, doc := htmltest.Render(t, c.Component())
	svgs := htmltest.ByTag(doc, "svg")
	if len(svgs) != 1 {
		t.Fatalf("%d svg elements", len(svgs))
	}
	svg := svgs[0]
	// Accessible: role img, labelled by its own title and description.
	htmltest.MustAttr(t, svg, "role", "img")
	htmltest.MustAttr(t, svg, "aria-labelledby", "c1-title c1-desc")
	titles := htmltest.ByTag(svg, "title")
	if len(titles) == 0 || htmltest.Text(titles[0]) != "Activity <per> day" {
		t.Fatalf("chart title %q", htmltest.Text(titles[0]))
	}
	if !strings.Contains(raw, "Activity &lt;per&gt; day") || !strings.Contains(raw, "Bars &amp; such") {
		t.Fatal("text is not escaped")
	}
	if d := htmltest.ByTag(svg, "desc"); len(d) != 1 || htmltest.Text(d[0]) != "Bars & such" {
		t.Fatal("no description")
	}
	h, _, values := bars(t, svg)
	if len(h) != 6 {
		t.Fatalf("%d bars, want 6 (3 days × 2 series)", len(h))
	}
	// Heights are proportional within a series: 10 is the tallest, 5 half of it.
	if h[0] != float64(dayPanelH) || h[1] != 0 || h[2] != float64(dayPanelH)/2 {
		t.Fatalf("message bars %v", h[:3])
	}
	if h[5] != float64(dayPanelH) || h[4] != float64(dayPanelH)/2 {
		t.Fatalf("rate bars %v", h[3:])
	}
	if values[4] != "12.5%" || values[0] != "10" {
		t.Fatalf("values %v", values)
	}
	// Each bar says what it is when hovered.
	if !strings.Contains(raw, "<title>9 Jun: 12.5% error rate</title>") {
		t.Fatalf("no tooltip for 9 Jun's rate in %s", raw)
	}
}

func TestDayChartSmallAndEmpty(t *testing.T) {
	c := DayChart{ID: "c", Days: []string{"2026-06-09", "2026-06-10"},
		Series: []DaySeries{{Name: "Big and small", Values: []float64{100000, 1}}}}
	_, doc := htmltest.Render(t, c.Component())
	h, _, _ := bars(t, doc)
	if h[1] < 1 {
		t.Fatalf("a value of 1 beside 100000 vanished: %v", h)
	}
	empty := DayChart{ID: "e", Days: []string{"2026-06-10"}, Series: []DaySeries{{Name: "Nothing", Values: []float64{0}}}}
	_, doc = htmltest.Render(t, empty.Component())
	if h, _, _ := bars(t, doc); len(h) != 1 || h[0] != 0 {
		t.Fatalf("all-zero chart: %v", h)
	}
}

func TestStackChart(t *testing.T) {
	c := StackChart{
		ID: "s", Title: "Proposals",
		Keys: []StackKey{{Name: "Accepted", Class: "fill-emerald-500"}, {Name: "Rejected", Class: "fill-rose-500"}},
		Rows: []StackRow{{Label: "page_assistant", Values: []float64{3, 1}}, {Label: "<b>x</b>", Values: []float64{2, 0}}},
	}
	raw, doc := htmltest.Render(t, c.Component())
	_, w, values := bars(t, doc)
	// Zero segments are not drawn; widths follow the values against the
	// largest row (4).
	if len(w) != 3 || values[0] != "3" || values[2] != "2" {
		t.Fatalf("segments %v %v", w, values)
	}
	full := float64(chartWidth - stackLabelW - stackValueW)
	if w[0] != full*3/4 || w[1] != full/4 || w[2] != full/2 {
		t.Fatalf("widths %v, want %v", w, []float64{full * 3 / 4, full / 4, full / 2})
	}
	if strings.Contains(raw, "<b>") || !strings.Contains(raw, "&lt;b&gt;x&lt;/b&gt;") {
		t.Fatal("a label became markup")
	}
	// A rate chart runs to 100.
	pct := StackChart{ID: "p", Unit: "%", Keys: c.Keys, Rows: []StackRow{{Label: "a", Values: []float64{25, 25}}}}
	_, doc = htmltest.Render(t, pct.Component())
	if _, w, values := bars(t, doc); w[0] != full/4 || values[0] != "25.0%" {
		t.Fatalf("rate widths %v values %v", w, values)
	}
	// No rows: a sentence, not an empty box.
	raw, _ = htmltest.Render(t, StackChart{ID: "n", Keys: c.Keys}.Component())
	if !strings.Contains(raw, "Nothing in this period.") {
		t.Fatal("an empty chart says nothing")
	}
}

func TestAdminFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(0), "0"}, {Count(999), "999"}, {Count(1000), "1,000"}, {Count(1234567), "1,234,567"}, {Count(-12345), "-12,345"},
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(1536), "1.5 KB"}, {Bytes(5 << 20), "5.0 MB"}, {Bytes(3 << 30), "3.0 GB"},
		{Percent(1, 8), "12.5%"}, {Percent(0, 0), "–"}, {Percent(3, 3), "100.0%"},
		{ShortDay("2026-06-10"), "10 Jun"}, {ShortDay("nonsense"), "nonsense"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestAdminViewedNotice(t *testing.T) {
	raw, _ := htmltest.Render(t, AdminViewedNotice(nil))
	if strings.TrimSpace(raw) != "" {
		t.Fatalf("no views, but %q", raw)
	}
	_, doc := htmltest.Render(t, AdminViewedNotice(&AdminViewed{Count: 1, Last: "Jun 10, 2026 at 14:05", LastFull: "2026-06-10T14:05:00Z"}))
	n := htmltest.One(t, doc, "admin-viewed")
	if got := htmltest.Text(n); got != "An administrator opened this conversation on Jun 10, 2026 at 14:05." {
		t.Fatalf("notice %q", got)
	}
	_, doc = htmltest.Render(t, AdminViewedNotice(&AdminViewed{Count: 3, Last: "Jun 10, 2026 at 14:05"}))
	if got := htmltest.Text(htmltest.One(t, doc, "admin-viewed")); !strings.HasSuffix(got, "14:05 (3 times in all).") {
		t.Fatalf("notice %q", got)
	}
}
