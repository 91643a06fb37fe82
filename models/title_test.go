package models

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitleFrom(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 characters
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"blank", " \n\t\n ", ""},
		{"first non-empty line", "\n\n   hello   world \t\nsecond line", "hello world"},
		{"crlf", "a\tb\r\nc", "a b"},
		{"exactly the limit", strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{"word ends at the limit", strings.Repeat("abcd ", 15) + "abcde tail words", strings.Repeat("abcd ", 15) + "abcde…"},
		// The last space is early in characters (27 of 80) though late in
		// bytes: the long word is cut instead of losing most of the room.
		{"multibyte, early space", strings.Repeat("привет ", 4) + strings.Repeat("ы", 100),
			strings.Repeat("привет ", 4) + strings.Repeat("ы", 52) + "…"},
		{"one long word", strings.Repeat("é", 200), strings.Repeat("é", 80) + "…"},
		{"no spaces at all", strings.Repeat("漢", 100), strings.Repeat("漢", 80) + "…"},
		{"punctuation before the cut", strings.Repeat("a", 60) + ", " + strings.Repeat("b", 30), strings.Repeat("a", 60) + "…"},
	} {
		if got := TitleFrom(tc.in); got != tc.want {
			t.Errorf("%s: TitleFrom = %q, want %q", tc.name, got, tc.want)
		}
	}

	for _, tc := range []struct{ name, word string }{
		{"latin", "word"},
		{"cyrillic", "привет"},
		{"greek", "λόγος"},
		{"cjk", "漢字漢字"},
		{"emoji", "🙂🙃"},
	} {
		in := strings.Repeat(tc.word+" ", 60)
		got := TitleFrom(in)
		body, ok := strings.CutSuffix(got, "…")
		if !ok {
			t.Errorf("%s: %q has no ellipsis", tc.name, got)
			continue
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: %q is not valid UTF-8", tc.name, got)
		}
		n := utf8.RuneCountInString(body)
		// Near the limit (within one word of it), never over it.
		if n > 80 || n < 80-utf8.RuneCountInString(tc.word)-1 {
			t.Errorf("%s: title has %d characters, want close to 80: %q", tc.name, n, got)
		}
		if !strings.HasPrefix(in, body+" ") {
			t.Errorf("%s: %q is not cut at a word", tc.name, got)
		}
	}
	if got := TitleFrom(long); !strings.HasSuffix(got, "word…") {
		t.Errorf("TitleFrom(long) = %q", got)
	}
}
