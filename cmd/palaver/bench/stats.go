package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// report prints one figure a line: "name: value (target …)" for a figure
// with a target, "name: value (anchor: …)" for a raw baseline that the
// targets are read against.
type report struct{ w io.Writer }

func (r report) line(name string, v float64, target string) {
	fmt.Fprintf(r.w, "%s: %s (target %s)\n", name, num(v), target)
}

// anchor prints a raw baseline: no target, what it measures.
func (r report) anchor(name string, v float64, what string) {
	fmt.Fprintf(r.w, "%s: %s (anchor: %s)\n", name, num(v), what)
}

// median of a few figures.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// num prints a figure with as many decimals as its size deserves.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return max(s[i], time.Nanosecond) // a positive figure even on a coarse clock
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
