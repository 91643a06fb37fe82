package bench

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestBenchPrintsEveryFigure runs the bench at a tiny size and checks the
// output's shape only: every figure is printed with a positive number. It
// times nothing.
func TestBenchPrintsEveryFigure(t *testing.T) {
	tiny := Size{
		AppendSmall: 4, AppendBig: 12, AppendTurns: 2,
		Clients: 2, Turns: 4,
		HistExchanges: 6, HistMessages: 24, HistSamples: 2,
		FanoutClients: 3, FanoutRounds: 2,
		IdleSockets: 3,
	}
	var out bytes.Buffer
	// At this size the targets mean nothing: a miss is no failure here.
	var missed *MissedError
	if err := Run(context.Background(), &out, t.TempDir(), tiny, ""); err != nil && !errors.As(err, &missed) {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	figures := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		name, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("line %q is not name: value", line)
		}
		num, _, _ := strings.Cut(rest, " ")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			t.Fatalf("line %q: value %q is not a number", line, num)
		}
		figures[name] = v
	}
	for _, name := range []string{"raw_commit_p50_ms", "throughput_ratio_one_writer", "cpu_us_per_turn", "raw_cpu_us_per_turn", "append_ratio", "fork_p50_ms", "raw_copy_p50_ms", "fork_floor_ratio", "resume_p50_ms", "open_big_p50_ms", "open_big_kb", "upload_mb_per_s", "upload_ratio", "open_with_images_p50_ms", "turns_per_s", "raw_rows_per_s", "throughput_ratio", "raw_rows_per_s_one_writer",
		"history_p50_ms", "history_ratio", "export_msgs_per_s", "export_raw_select_msgs_per_s", "export_ratio", "import_msgs_per_s", "search_p50_ms", "search_bare_p50_ms", "search_ratio", "search_prefix_other_user_p50_ms", "fanout_p99_ms", "fanout_first_max_ms", "fanout_cpu_us_per_socket", "fanout_lead_max_ms", "ws_rss_mb", "rss_mb", "share_open_p50_ms", "unread_fanout_p99_ms",
		"turn_cpu_ratio", "history_p50_ms_projects", "search_p50_ms_project", "search_bare_p50_ms_project", "search_ratio_project", "usage_report_p50_ms"} {
		v, ok := figures[name]
		if !ok {
			t.Errorf("no %s line in:\n%s", name, out.String())
		} else if v <= 0 {
			t.Errorf("%s = %v, want a positive number", name, v)
		}
	}
	if !strings.HasPrefix(out.String(), "# ") {
		t.Errorf("the output does not start with the machine line:\n%s", out.String())
	}
}

// TestBenchOnly runs one group of figures: its lines and the disk's are
// printed, no other group's, and an unknown group is refused before
// anything is seeded.
func TestBenchOnly(t *testing.T) {
	tiny := Size{AppendSmall: 4, AppendBig: 12, AppendTurns: 2, Clients: 2, Turns: 4,
		HistExchanges: 6, HistMessages: 24, HistSamples: 2, FanoutClients: 3, FanoutRounds: 2, IdleSockets: 3}
	var out bytes.Buffer
	var missed *MissedError
	if err := Run(context.Background(), &out, t.TempDir(), tiny, "", "fork"); err != nil && !errors.As(err, &missed) {
		t.Fatalf("bench --only fork: %v\n%s", err, out.String())
	}
	for _, want := range []string{"raw_commit_p50_ms: ", "fork_p50_ms: ", "raw_copy_p50_ms: ", "fork_floor_ratio: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q line:\n%s", want, out.String())
		}
	}
	for _, not := range []string{"append_p50_ms_small", "history_p50_ms", "fanout_p99_ms"} {
		if strings.Contains(out.String(), not) {
			t.Errorf("%s printed by --only fork:\n%s", not, out.String())
		}
	}
	run, err := selectFigures([]string{"search"})
	if err != nil || !run["history"] || !run["search"] || run["fanout"] {
		t.Errorf("selectFigures(search) = %v, %v; want search with the history it reads, nothing else", run, err)
	}
	out.Reset()
	err = Run(context.Background(), &out, t.TempDir(), tiny, "", "forks")
	if err == nil || !strings.Contains(err.Error(), `"forks"`) || out.Len() != 0 {
		t.Errorf("unknown group: err %v, output %q; want an error naming it and nothing run", err, out.String())
	}
}

// TestTargetsChecked: a figure's target is read from its line and a miss
// is counted; a target stated against another figure is left to that
// figure's own ratio line; a run with a miss ends in a MissedError that
// names it.
func TestTargetsChecked(t *testing.T) {
	for _, c := range []struct {
		v            float64
		target       string
		met, checked bool
	}{
		{0.9, "≤ 1.0", true, true},
		{1.0, "≤ 1.0", true, true},
		{1.2, "≤ 1.0", false, true},
		{0.6, "≥ 0.5", true, true},
		{0.4, "≥ 0.5; = turns_per_s / (raw_rows_per_s/2)", false, true},
		{1500, "≥ 611 = 0.5 × raw one-writer turns/s", true, true},
		{31, "≤ 30; the rounds after the first", false, true},
		{9, "≤ 1.3 × append_p50_ms_small", false, false},
		{9, "anything else", false, false},
	} {
		met, checked := meets(c.v, c.target)
		if met != c.met || checked != c.checked {
			t.Errorf("meets(%v, %q) = %v, %v; want %v, %v", c.v, c.target, met, checked, c.met, c.checked)
		}
	}
	var out bytes.Buffer
	var misses []string
	r := report{&out, &misses}
	r.line("fast_ms", 0.5, "≤ 1.0")
	r.line("slow_ms", 2.5, "≤ 1.0")
	r.anchor("raw_ms", 9, "no target")
	err := missed(misses)
	var m *MissedError
	if !errors.As(err, &m) || len(m.Misses) != 1 || !strings.Contains(m.Misses[0], "slow_ms") {
		t.Fatalf("missed = %v; want one miss, slow_ms", err)
	}
	if missed(nil) != nil {
		t.Fatal("a run without misses is an error")
	}
}
