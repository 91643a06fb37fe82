package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the collector's pace (GOGC) unless the environment sets
// one. Palaver's live heap is small, a few MiB (the data lives in the
// database), so at Go's default of 100 a collection ran every 4-5 MiB
// allocated: about once for each turn sent to 200 watching tabs (a round
// of the bench's fan-out), each marking with write barriers on beside the
// tabs' writes. At 400 the heap grows to five times the live one between
// collections, still tens of MiB: fanout_p99_ms 27.7, 56.7, 20.4 → 17.8,
// 21.5, 17.4 (--only fanout, alternated), and the bench's resident memory
// at the end of --only rss,fanout 98.7 → 101 MB (docs/PERFORMANCE.md).
const gcPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
