package agents

import "testing"

func TestDJB2Vectors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "00001505"},
		{"hello", "0f923099"},
		{"😀", "0004aba5"}, // one code point, not two UTF-16 units or four bytes
		{"a", "0002b606"},
		// Long enough to wrap around 2^32 many times.
		{"The quick brown fox jumps over the lazy dog", "34cc38de"},
	} {
		if got := DJB2(tc.in); got != tc.want {
			t.Errorf("DJB2(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if DJB2("# A\n") == DJB2("# A\r\n") {
		t.Error("CRLF and LF content hash alike: an edit of line endings would go unnoticed")
	}
}
