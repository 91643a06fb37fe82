package agents

import "fmt"

// DJB2 is the hash proposals carry as original_content_hash: h = 5381, then
// h = h*33 + c for every Unicode code point c of s, mod 2^32, written as 8
// lowercase hex digits. It is Galaxy's staleness check: over code points (as
// Python iterates a str), not UTF-8 bytes or UTF-16 units, so "😀" counts once.
// Invalid UTF-8 counts as U+FFFD per bad byte, as Go's range over a string does.
func DJB2(s string) string {
	h := uint32(5381)
	for _, r := range s {
		h = h*33 + uint32(r)
	}
	return fmt.Sprintf("%08x", h)
}
