package transfer

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"unicode/utf8"
)

// UID is the stable identity of an exchange, message, page or revision: a
// UUID, written in its canonical form (8-4-4-4-12 lowercase hex digits). It
// has the layout of github.com/google/uuid's UUID, so the two convert.
type UID [16]byte

// ParseUID reads a UUID in its canonical 36-character form (either case).
// Other spellings (braces, "urn:uuid:", no dashes) are refused: an export is
// written by Palaver, which writes only the canonical one.
func ParseUID(s string) (UID, error) {
	var u UID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("%q is not a UUID", clip(s))
	}
	var buf [32]byte
	n := 0
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		buf[n] = s[i]
		n++
	}
	if _, err := hex.Decode(u[:], buf[:]); err != nil {
		return UID{}, fmt.Errorf("%q is not a UUID", clip(s))
	}
	return u, nil
}

// IsZero reports whether u is the nil UUID, which no item may carry.
func (u UID) IsZero() bool { return u == UID{} }

// String gives the canonical form.
func (u UID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// MarshalText writes the canonical form.
func (u UID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads the canonical form (ParseUID).
func (u *UID) UnmarshalText(b []byte) error {
	v, err := ParseUID(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// ChatGPTNamespace is the UUIDv5 namespace of the uids derived from ChatGPT's
// ids. It is fixed forever: changing it would make a second import of the
// same ChatGPT file store everything again.
var ChatGPTNamespace = UID{0x6b, 0x1e, 0x6c, 0x5e, 0x2f, 0x43, 0x5d, 0x0a, 0x9c, 0x58, 0x4f, 0x0e, 0x77, 0x3a, 0x61, 0x21}

// NameUID derives a UUIDv5 (RFC 9562, SHA-1) from a namespace and a name:
// the same inputs always give the same uid.
func NameUID(namespace UID, name string) UID {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(name))
	var u UID
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}

// clip shortens s for an error message, on a character boundary.
func clip(s string) string { return Clip(s, 60) }

// Clip shortens s to at most max bytes (and "…"), on a character
// boundary: what an error quotes of a value that may be megabytes long.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
