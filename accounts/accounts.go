// Package accounts holds the rules of Palaver's accounts, shared by the web
// handlers and the command line: what a username may be, when two names are
// the same name, what a password must be, and how it is hashed.
package accounts

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Username and password limits.
const (
	MinUsername = 3  // characters, after NFKC normalisation
	MaxUsername = 32 // characters, after NFKC normalisation
	MinPassword = 8  // characters
	MaxPassword = 72 // bytes: bcrypt ignores anything beyond
)

// Errors of a username that breaks the rules, in words a person can act on.
var (
	ErrUsernameEmpty      = errors.New("Choose a username.")
	ErrUsernameLength     = errors.New("A username has 3 to 32 characters.")
	ErrUsernameCharacters = errors.New("A username can only contain letters, digits, dots, hyphens and underscores.")
	ErrUsernameScripts    = errors.New("A username cannot mix letters of different alphabets (such as Latin and Cyrillic).")
	ErrUsernameNoLetter   = errors.New("A username needs at least one letter or digit.")
	ErrPasswordShort      = errors.New("The password is too short: use at least 8 characters.")
	ErrPasswordLong       = errors.New("The password is too long: use at most 72 bytes.")
)

// Username is the form a name is stored and shown in: NFKC-normalised (so
// full-width "ａｄａ" is "ada") with surrounding spaces trimmed. It does not
// check the rules; ValidateUsername does.
func Username(name string) string {
	return norm.NFKC.String(strings.TrimSpace(name))
}

// Key is what makes two names the same name: the NFKC case fold of the name
// (NFKC, full Unicode case folding, NFKC again, as Unicode's NFKC_Casefold
// does), so "Ada", "ADA" and "ａｄａ" are one name. Accounts are unique by it
// and sign-in finds them by it.
func Key(name string) string {
	return norm.NFKC.String(cases.Fold().String(Username(name)))
}

// ValidateUsername checks a new account's name (as Username gives it) against
// the rules: 3–32 characters, only letters, digits, '.', '-' and '_', at least
// one letter or digit, and letters from one script.
//
// One script per name stops a look-alike made by swapping a letter for
// another alphabet's (Cyrillic "а" in "аda"); invisible or reordering
// characters (zero-width space, right-to-left override, controls) are not
// letters, so they are refused. "One script" is Unicode's "highly
// restrictive" level (UTS #39): a single script, or Latin with the scripts
// written together in Japanese (Han, Hiragana, Katakana), Chinese (Han,
// Bopomofo) or Korean (Han, Hangul). A name written wholly in another script
// that happens to look like a Latin one (Cyrillic "аԁа") is not caught: that
// needs Unicode's confusables table, which these rules leave out.
func ValidateUsername(name string) error {
	if name == "" {
		return ErrUsernameEmpty
	}
	if n := utf8.RuneCountInString(name); n < MinUsername || n > MaxUsername {
		return ErrUsernameLength
	}
	scripts := map[string]bool{}
	alnum, prev := false, rune(0)
	for _, r := range name {
		switch {
		case r == '.' || r == '-' || r == '_':
		case r >= '0' && r <= '9':
			alnum = true
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r):
			s := scriptOf(r)
			// A mark (a vowel sign, a virama) belongs to its script and
			// follows a letter or mark; a combining accent of no script is
			// one NFKC could not compose onto its letter.
			if s == "" || unicode.IsMark(r) && !(unicode.IsLetter(prev) || unicode.IsMark(prev)) {
				return ErrUsernameCharacters
			}
			scripts[s] = true
			alnum = alnum || !unicode.IsMark(r)
		default:
			return ErrUsernameCharacters
		}
		prev = r
	}
	if !alnum {
		return ErrUsernameNoLetter
	}
	if !oneScript(scripts) {
		return ErrUsernameScripts
	}
	return nil
}

// scriptsTogether are the sets of scripts one name may mix (UTS #39, highly
// restrictive): languages that are written in several scripts at once.
var scriptsTogether = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// oneScript says whether a name's scripts are one script, or one of the
// sets written together.
func oneScript(scripts map[string]bool) bool {
	if len(scripts) <= 1 {
		return true
	}
	for _, set := range scriptsTogether {
		n := 0
		for _, s := range set {
			if scripts[s] {
				n++
			}
		}
		if n == len(scripts) {
			return true
		}
	}
	return false
}

// scriptOf is the name of the script a letter, digit or mark belongs to; ""
// for the Common and Inherited pseudo-scripts. Marks count as their script's
// (Devanagari's vowel signs are Devanagari). The one Common letter of a
// script is Japanese's long-vowel mark ー, counted as Katakana.
func scriptOf(r rune) string {
	if r == 'ー' {
		return "Katakana"
	}
	for name, t := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(t, r) {
			return name
		}
	}
	return ""
}

// ValidatePassword checks a new password.
func ValidatePassword(password string) error {
	switch {
	case utf8.RuneCountInString(password) < MinPassword:
		return ErrPasswordShort
	case len(password) > MaxPassword:
		return ErrPasswordLong
	}
	return nil
}

// ValidateCredentials checks a new account's name (as Username gives it) and
// password: the first rule broken, or nil.
func ValidateCredentials(username, password string) error {
	if err := ValidateUsername(username); err != nil {
		return err
	}
	return ValidatePassword(password)
}

// HashPassword hashes a password with bcrypt.
func HashPassword(password string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(b), err
}

// noSuchUserHash is a bcrypt hash no password matches in practice, compared
// against when the username is unknown so the answer takes the same time.
const noSuchUserHash = "$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z8ZqJ0L1G9a3uY9T1m5Q3d6e"

// CheckPassword says whether password is the one hash was made from. An
// empty hash (no such account) is compared against a stand-in, so a name
// that does not exist costs the same time as a wrong password.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		bcrypt.CompareHashAndPassword([]byte(noSuchUserHash), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// UsernameFrom makes a new account's name out of what an identity
// provider calls the person, trying each candidate in turn (a claim, an
// email's local part, an opaque subject): the first that can be made to
// follow the rules, with each character the rules refuse replaced by '_'
// and the name cut to MaxUsername. None: "user".
func UsernameFrom(candidates ...string) string {
	for _, s := range candidates {
		var b strings.Builder
		for _, r := range Username(s) {
			if r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
				b.WriteRune(r)
			} else {
				b.WriteRune('_')
			}
		}
		name := []rune(b.String())
		if len(name) > MaxUsername {
			name = name[:MaxUsername]
		}
		if ValidateUsername(string(name)) == nil {
			return string(name)
		}
	}
	return "user"
}

// Numbered is the nth name to try for a new account called base: base
// itself, then base2, base3… with base cut short so that the name keeps
// within MaxUsername.
func Numbered(base string, n int) string {
	if n <= 1 {
		return base
	}
	suffix := strconv.Itoa(n)
	r := []rune(base)
	if len(r)+len(suffix) > MaxUsername {
		r = r[:MaxUsername-len(suffix)]
	}
	return string(r) + suffix
}
