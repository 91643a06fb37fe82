package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestGCPercent: the process runs at gcPercent, or at the GOGC the
// environment gives.
func TestGCPercent(t *testing.T) {
	want := gcPercent
	if env := os.Getenv("GOGC"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil {
			t.Skipf("GOGC=%s is not a number", env) // "off": nothing to compare
		}
		want = n
	}
	got := debug.SetGCPercent(want)
	if got != want {
		t.Fatalf("GOGC is %d, want %d", got, want)
	}
}
