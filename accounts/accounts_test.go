package accounts_test

import (
	"errors"
	"strings"
	"testing"

	"palaver/accounts"
)

// usernameCases is the table of names the rules decide on; the handler and
// command-line tests walk it too.
var usernameCases = []struct {
	name string
	want error
}{
	{"alice", nil},
	{"Alice.B-c_9", nil},
	{"ａｌｉｃｅ", nil},  // full-width: NFKC makes it "alice"
	{"алиса", nil},  // all Cyrillic
	{"Ζωή", nil},    // all Greek
	{"नमस्ते", nil}, // Devanagari with its vowel signs and virama
	{"田中さん", nil},   // Han with Hiragana, as Japanese is written
	{"アリス_ー", nil},  // Katakana with the long-vowel mark
	{"123", nil},
	{"ab", accounts.ErrUsernameLength},
	{"abcdefghijklmnopqrstuvwxyz0123456", accounts.ErrUsernameLength}, // 33
	{"", accounts.ErrUsernameEmpty},
	{"alice\u200b", accounts.ErrUsernameCharacters},   // zero-width space
	{"\u202eecila", accounts.ErrUsernameCharacters},   // right-to-left override
	{"ali\x07ce", accounts.ErrUsernameCharacters},     // a control character
	{"ali ce", accounts.ErrUsernameCharacters},        // a space
	{"alice@example", accounts.ErrUsernameCharacters}, // punctuation
	{"x\u20e3yz", accounts.ErrUsernameCharacters},     // a combining mark of no script
	{"\u0430lice", accounts.ErrUsernameScripts},       // Cyrillic а among Latin letters
	{"ali\u03bfe", accounts.ErrUsernameScripts},       // Greek ο among Latin letters
	{"...", accounts.ErrUsernameNoLetter},
}

func TestValidateUsername(t *testing.T) {
	for _, tc := range usernameCases {
		if got := accounts.ValidateUsername(accounts.Username(tc.name)); !errors.Is(got, tc.want) {
			t.Errorf("ValidateUsername(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"Alice", "alice"}, {"ALICE", "alice"}, {"ａｌｉｃｅ", "alice"}, {"  alice ", "alice"},
		{"Straße", "strasse"}, {"ΣΊΣΥΦΟΣ", "σίσυφοσ"}, {"Ǆemal", "džemal"},
	} {
		if ka, kb := accounts.Key(tc.a), accounts.Key(tc.b); ka != kb {
			t.Errorf("Key(%q) = %q, Key(%q) = %q; want one key", tc.a, ka, tc.b, kb)
		}
	}
	if accounts.Key("\u0430lice") == accounts.Key("alice") {
		t.Error("Cyrillic аlice and Latin alice share a key")
	}
	if got := accounts.Username(" ａｌｉｃｅ "); got != "alice" {
		t.Errorf("Username(full-width) = %q, want alice", got)
	}
}

func TestPasswords(t *testing.T) {
	if err := accounts.ValidatePassword("short"); !errors.Is(err, accounts.ErrPasswordShort) {
		t.Errorf("short password: %v", err)
	}
	if err := accounts.ValidatePassword(string(make([]byte, 73))); !errors.Is(err, accounts.ErrPasswordLong) {
		t.Errorf("long password: %v", err)
	}
	hash, err := accounts.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !accounts.CheckPassword(hash, "correct horse") || accounts.CheckPassword(hash, "wrong horse") || accounts.CheckPassword("", "correct horse") {
		t.Error("CheckPassword accepts a wrong password or refuses the right one")
	}
}

func TestUsernameFrom(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"ada"}, "ada"},
		{[]string{"Ada Lovelace"}, "Ada_Lovelace"},
		{[]string{"ada@example.org"}, "ada_example.org"},
		{[]string{"", "grace", "sub"}, "grace"},
		{[]string{"al", "alovelace"}, "alovelace"},                   // too short: the next one
		{[]string{"аda", "ada"}, "ada"},                              // mixed scripts: the next one
		{[]string{"???", "", "0f8e-11"}, "0f8e-11"},                  // a subject as the last resort
		{[]string{"!!"}, "user"},                                     // nothing usable
		{[]string{strings.Repeat("x", 40)}, strings.Repeat("x", 32)}, // cut to the limit
	} {
		if got := accounts.UsernameFrom(tc.in...); got != tc.want {
			t.Errorf("accounts.UsernameFrom(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := accounts.UsernameFrom(tc.in...); accounts.ValidateUsername(got) != nil {
			t.Errorf("accounts.UsernameFrom(%q) = %q breaks the rules", tc.in, got)
		}
	}
	if got := accounts.Numbered("ada", 1); got != "ada" {
		t.Errorf("Numbered 1: %q", got)
	}
	if got := accounts.Numbered(strings.Repeat("x", 32), 12); got != strings.Repeat("x", 30)+"12" || accounts.ValidateUsername(got) != nil {
		t.Errorf("Numbered 12 of a long name: %q", got)
	}
}
