package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report prints one figure a line: "name: value (target …)" for a figure
// with a target, "name: value (anchor: …)" for a raw baseline that the
// targets are read against. A figure that misses its target is noted in
// misses (when set): the run ends with a MissedError.
type report struct {
	w      io.Writer
	misses *[]string
}

func (r report) line(name string, v float64, target string) {
	fmt.Fprintf(r.w, "%s: %s (target %s)\n", name, num(v), target)
	if met, checked := meets(v, target); checked && !met && r.misses != nil {
		*r.misses = append(*r.misses, fmt.Sprintf("%s %s (target %s)", name, num(v), target))
	}
}

// meets reads a target written "≤ N…" or "≥ N…" and says whether v meets
// it (as printed: a figure is read at the precision it is shown). A target
// stated against another figure ("≤ 1.3 × append_p50_ms_small") is not
// checked here: its ratio has a line of its own.
func meets(v float64, target string) (met, checked bool) {
	var le bool
	switch {
	case strings.HasPrefix(target, "≤ "):
		le = true
	case strings.HasPrefix(target, "≥ "):
	default:
		return false, false
	}
	rest := strings.TrimSpace(target[len("≤ "):])
	end := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if end < 0 {
		end = len(rest)
	}
	limit, err := strconv.ParseFloat(rest[:end], 64)
	if err != nil || strings.HasPrefix(strings.TrimSpace(rest[end:]), "×") {
		return false, false
	}
	shown, _ := strconv.ParseFloat(num(v), 64)
	if le {
		return shown <= limit, true
	}
	return shown >= limit, true
}

// MissedError is a run whose figures missed their targets (each printed
// already); `palaver bench` exits with a non-zero status on it.
type MissedError struct{ Misses []string }

func (m *MissedError) Error() string {
	return fmt.Sprintf("bench: %d figures missed their targets: %s", len(m.Misses), strings.Join(m.Misses, "; "))
}

// missed is the run's outcome for its misses: nil when there are none.
func missed(misses []string) error {
	if len(misses) == 0 {
		return nil
	}
	return &MissedError{Misses: misses}
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
