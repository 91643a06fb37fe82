package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"palaver/internal/pgtest"
)

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

// TestBenchPostgres runs `palaver bench --quick --postgres URL`: it prints
// the cross-process fanout beside the one within one process, and drops the
// scratch database it made.
func TestBenchPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bench")
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"bench", "--postgres", "/tmp/not-a-url"}, &stdout, &stderr); code == 0 {
		t.Errorf("bench --postgres with a file path: exit 0, want an error")
	}
	dsn := pgtest.DSN(t) // the bench makes and drops a scratch database of its own: no lock
	stdout.Reset()
	stderr.Reset()
	// A figure that misses its target on this (loaded) machine exits 1
	// and says so; any other failure fails the test.
	if code := run(context.Background(), []string{"bench", "--quick", "--postgres", dsn}, &stdout, &stderr); code != 0 &&
		!(code == 1 && strings.Contains(stderr.String(), "missed their targets")) {
		t.Fatalf("bench --postgres: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, figure := range []string{"fanout_p99_ms", "xproc_fanout_p99_ms"} {
		if !regexp.MustCompile(`(?m)^` + figure + `: [0-9.]+ \(target`).MatchString(out) {
			t.Errorf("no %s figure in:\n%s", figure, out)
		}
	}
	for _, figure := range []string{"xproc_turns_per_s_1", "xproc_turns_per_s_2", "xproc_turns_per_s_4", "raw_copy_p50_ms", "fork_floor_ratio"} {
		if !regexp.MustCompile(`(?m)^` + figure + `: [0-9.]+ \(anchor`).MatchString(out) {
			t.Errorf("no %s figure in:\n%s", figure, out)
		}
	}
	m := regexp.MustCompile(`scratch database (palaver_bench_[0-9a-f]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the bench does not name its scratch database:\n%s", out)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", m[1]).Scan(&left); err != nil || left != 0 {
		t.Fatalf("the scratch database %s is still there (%d, %v)", m[1], left, err)
	}
}
