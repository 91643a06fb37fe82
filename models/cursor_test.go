package models

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, c := range []Cursor{
		{At: time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC), ID: 1},
		{At: time.Date(1999, 12, 31, 23, 59, 59, 0, paris), ID: 9_007_199_254_740_993},
		{At: time.Unix(0, 0), ID: 42},
	} {
		token := c.String()
		if strings.ContainsAny(token, "+/=?&# ") {
			t.Errorf("token %q is not URL-safe", token)
		}
		got, err := ParseCursor(token)
		if err != nil {
			t.Fatalf("ParseCursor(%q): %v", token, err)
		}
		if !got.At.Equal(c.At) || got.ID != c.ID {
			t.Errorf("round trip of %+v gave %+v", c, got)
		}
	}
	// A time finer than a microsecond is cut, as the database stores it.
	c := Cursor{At: time.Date(2026, 1, 1, 0, 0, 0, 1_500, time.UTC), ID: 7}
	if got, _ := ParseCursor(c.String()); !got.At.Equal(c.At.Truncate(time.Microsecond)) {
		t.Errorf("sub-microsecond cursor came back as %v", got.At)
	}
}

func TestParseCursorRejectsGarbage(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, token := range []string{
		"", "!!!", "not a cursor", b64("12345"), b64("abc.5"), b64("12.abc"),
		b64("12.0"), b64("12.-3"), b64("."), b64("1.2.3"),
		base64.StdEncoding.EncodeToString([]byte("1.2")) + "==",
	} {
		c, err := ParseCursor(token)
		if err == nil {
			t.Errorf("ParseCursor(%q) = %+v, want an error", token, c)
			continue
		}
		wantErr(t, err, ErrBadCursor, "ParseCursor("+token+")")
	}
}
