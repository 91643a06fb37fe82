package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestBenchPrintsEveryFigure runs the bench at a tiny size and checks the
// output's shape only: every figure is printed with a positive number. It
// times nothing.
func TestBenchPrintsEveryFigure(t *testing.T) {
	tiny := benchSize{
		appendSmall: 4, appendBig: 12, appendTurns: 2,
		clients: 2, turns: 4,
		histExchanges: 6, histMessages: 24, histSamples: 2,
		fanoutClients: 3, fanoutRounds: 2,
		idleSockets: 3,
	}
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, t.TempDir(), tiny); err != nil {
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
	for _, name := range []string{"append_ratio", "turns_per_s", "raw_rows_per_s", "throughput_ratio", "raw_rows_per_s_one_writer",
		"history_p50_ms", "history_ratio", "fanout_p99_ms", "fanout_first_max_ms", "ws_rss_mb", "rss_mb"} {
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

func TestBenchFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"bench", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("bench extra: exit %d, want 2 (stderr %q)", code, stderr.String())
	}
	t.Setenv("PALAVER_QUICK", "maybe")
	stderr.Reset()
	if code := run(context.Background(), []string{"bench"}, &stdout, &stderr); code != 2 {
		t.Errorf("bench with PALAVER_QUICK=maybe: exit %d, want 2 (stderr %q)", code, stderr.String())
	}
}
