package main

import (
	"bytes"
	"context"
	"testing"
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
