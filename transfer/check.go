package transfer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The API's limits of a field, which an import applies too: a file cannot
// store what a request could not.
const (
	MaxTitleChars   = 200     // an exchange's or a page's title
	MaxContentChars = 100_000 // a message's content (a query's limit)
	MaxCommentChars = 2000    // a feedback comment
	MaxPageBytes    = 1 << 20 // a page's or a revision's content (the API's body limit)
)

// rowBytes is what a stored row costs beyond its text, for the stored-bytes
// cap: a file of a million empty messages is not free.
const rowBytes = 64

// Text an import stores is UTF-8 without NUL: a NUL character cut search
// snippets short (and PostgreSQL stores none), invalid UTF-8 shows as
// mojibake. Both become U+FFFD, the replacement character, as encoding/json
// already does for invalid bytes inside a JSON string: a file is not
// refused for a stray byte in one message of thousands.
func cleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// cleanRaw is cleanText for a JSON object kept as it is (agent_response,
// tool): invalid bytes and the escape \u0000 become U+FFFD. A backslash
// occurs only inside a JSON string, so escapes can be read off the bytes.
func cleanRaw(raw json.RawMessage) json.RawMessage {
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if bytes.IndexByte(raw, 0) < 0 && !bytes.Contains(raw, []byte(`\u0000`)) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == 0:
			out = append(out, "\uFFFD"...) // invalid JSON; the decoder refuses it
		case raw[i] == '\\' && i+5 < len(raw) && string(raw[i+1:i+6]) == "u0000":
			out = append(out, `\ufffd`...)
			i += 5
		case raw[i] == '\\' && i+1 < len(raw):
			out = append(out, raw[i], raw[i+1])
			i++
		default:
			out = append(out, raw[i])
		}
	}
	return out
}

// checkChars refuses a text of more than max characters.
func checkChars(what, s string, max int) error {
	if len(s) <= max { // a character is at least one byte
		return nil
	}
	if n := utf8.RuneCountInString(s); n > max {
		return &LimitError{What: what, Max: int64(max), Unit: "characters", Have: int64(n)}
	}
	return nil
}

func checkBytes(what, s string, max int) error {
	if len(s) > max {
		return &LimitError{What: what, Max: int64(max), Unit: "bytes", Have: int64(len(s))}
	}
	return nil
}

func (o *Options) checkAgentType(what, t string) error {
	if len(o.AgentTypes) == 0 || slices.Contains(o.AgentTypes, t) {
		return nil
	}
	return fmt.Errorf("%s %q is not an agent type (valid ones are: %s)", what, clip(t), strings.Join(o.AgentTypes, ", "))
}

// cleanExchange makes an exchange's text storable (cleanText) and checks
// it against the API's limits and the known agent types. It returns the
// bytes it will store, for the stored-bytes cap.
func (o *Options) cleanExchange(e *Exchange) (int64, error) {
	e.Title, e.AgentType = cleanText(e.Title), cleanText(e.AgentType)
	if err := checkChars("the title", e.Title, MaxTitleChars); err != nil {
		return 0, err
	}
	if err := o.checkAgentType("agent_type", e.AgentType); err != nil {
		return 0, err
	}
	size := int64(rowBytes + len(e.Title) + len(e.AgentType))
	for i, m := range e.Messages {
		if m == nil {
			continue // Validate says so
		}
		m.Content = cleanText(m.Content)
		if err := checkChars(fmt.Sprintf("message %d's content", i+1), m.Content, MaxContentChars); err != nil {
			return 0, err
		}
		if m.AgentType != nil {
			t := cleanText(*m.AgentType)
			m.AgentType = &t
			if err := o.checkAgentType(fmt.Sprintf("message %d's agent_type", i+1), t); err != nil {
				return 0, err
			}
		}
		if m.Comment != nil {
			c := cleanText(*m.Comment)
			m.Comment = &c
			if err := checkChars(fmt.Sprintf("message %d's comment", i+1), c, MaxCommentChars); err != nil {
				return 0, err
			}
			size += int64(len(c))
		}
		m.AgentResponse, m.Tool = cleanRaw(m.AgentResponse), cleanRaw(m.Tool)
		size += int64(rowBytes + len(m.Content) + len(m.AgentResponse) + len(m.Tool))
	}
	return size, nil
}

// cleanPage is cleanExchange for a page.
func (o *Options) cleanPage(p *Page) (int64, error) {
	p.Title, p.Content = cleanText(p.Title), cleanText(p.Content)
	if err := checkChars("the title", p.Title, MaxTitleChars); err != nil {
		return 0, err
	}
	if err := checkBytes("the page's content", p.Content, MaxPageBytes); err != nil {
		return 0, err
	}
	size := int64(rowBytes + len(p.Title) + len(p.Content))
	for i, r := range p.Revisions {
		if r == nil {
			continue
		}
		r.Content = cleanText(r.Content)
		if err := checkBytes(fmt.Sprintf("revision %d's content", i+1), r.Content, MaxPageBytes); err != nil {
			return 0, err
		}
		size += int64(rowBytes + len(r.Content))
	}
	return size, nil
}

// budget counts the bytes a file will store, copies included (a ChatGPT
// branch repeats the start it shares, so a small tree of many branches
// stores far more than its size), against Options' cap: StoredFactor times
// the file's size (InputSize, or what was read when that is not known),
// and at most MaxStoredBytes.
type budget struct {
	o    *Options
	read func() int64 // the bytes of the file read so far
	used int64
}

func (b *budget) spend(n int64) error {
	b.used += n
	size := b.o.InputSize // a zip's counts its JSON as at most zipExpansion times the zip
	if size <= 0 {
		size = b.read()
	}
	limit := b.o.MaxStoredBytes
	if f := b.o.StoredFactor * size; f < limit && f >= 0 {
		limit = f
	}
	if b.used > limit {
		return &LimitError{What: "what the file stores (copies of branches included)", Max: limit, Unit: "bytes",
			Why: fmt.Sprintf("%d times the file's size, and at most %d MiB", b.o.StoredFactor, b.o.MaxStoredBytes>>20)}
	}
	return nil
}
