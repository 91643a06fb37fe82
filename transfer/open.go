package transfer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Options bounds what reading a file may cost. A zero field takes its
// default.
type Options struct {
	MaxInputBytes        int64    // the file as sent: 256 MiB (past it: ErrTooLarge)
	MaxLineBytes         int      // one line of a Palaver export: 64 MiB
	MaxUncompressedBytes int64    // conversations.json inside a zip: 1 GiB
	MaxZipEntries        int      // entries a zip's directory may list: 100,000
	MaxMessages          int64    // messages a ChatGPT file may become, fork copies included: 5,000,000
	MaxStringBytes       int64    // one JSON string as written, escapes included: 8 MiB (a page's 1 MiB, escaped)
	MaxFileBytes         int64    // the bytes of one file line (its "data", base64, may be 4/3 as long): 20 MiB
	MaxStoredBytes       int64    // what the file may store, copies included: 1 GiB
	StoredFactor         int64    // … and at most this many times the file's size: 10
	InputSize            int64    // the file's size, when known (a zip: its conversations.json's, if larger, up to 20 times the zip's); 0: what was read
	TempDir              string   // where a zip is spooled; "" is os.TempDir()
	ChatGPTAgentType     string   // the agent_type of exchanges made from ChatGPT's: "router"
	AgentTypes           []string // the agent types an exchange or message may name; nil: any
}

// Defaults of Options.
const (
	DefaultMaxInputBytes        = 256 << 20
	DefaultMaxLineBytes         = 64 << 20
	DefaultMaxUncompressedBytes = 1 << 30
	DefaultMaxZipEntries        = 100_000
	DefaultMaxMessages          = 5_000_000
	DefaultMaxStringBytes       = 8 << 20
	DefaultMaxFileBytes         = 20 << 20 // the upload limit's default
	DefaultMaxStoredBytes       = 1 << 30
	DefaultStoredFactor         = 10
	DefaultChatGPTAgentType     = "router" // the general agent: continuing an imported chat needs a real one
)

func (o Options) withDefaults() Options {
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = DefaultMaxInputBytes
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxUncompressedBytes <= 0 {
		o.MaxUncompressedBytes = DefaultMaxUncompressedBytes
	}
	if o.MaxZipEntries <= 0 {
		o.MaxZipEntries = DefaultMaxZipEntries
	}
	if o.MaxMessages <= 0 {
		o.MaxMessages = DefaultMaxMessages
	}
	if o.MaxStringBytes <= 0 {
		o.MaxStringBytes = DefaultMaxStringBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxStoredBytes <= 0 {
		o.MaxStoredBytes = DefaultMaxStoredBytes
	}
	if o.StoredFactor <= 0 {
		o.StoredFactor = DefaultStoredFactor
	}
	if o.ChatGPTAgentType == "" {
		o.ChatGPTAgentType = DefaultChatGPTAgentType
	}
	return o
}

// Format is a kind of file this package reads.
type Format int

// The formats Detect tells apart.
const (
	FormatUnknown    Format = iota
	FormatPalaver           // Palaver's NDJSON export
	FormatChatGPT           // ChatGPT's conversations.json
	FormatChatGPTZip        // ChatGPT's export .zip, holding conversations.json
)

func (f Format) String() string {
	switch f {
	case FormatPalaver:
		return "Palaver export"
	case FormatChatGPT:
		return "ChatGPT conversations.json"
	case FormatChatGPTZip:
		return "ChatGPT export zip"
	}
	return "unknown format"
}

// sniffBytes is how much of the input Detect looks at.
const sniffBytes = 64 << 10

// Detect tells the format from the content (never a name): a zip's magic
// bytes, a JSON array whose first element has "mapping" or "current_node"
// within the first 64 KiB (or an empty array), or a JSON object first
// (Palaver's header, which NewReader then checks). The returned reader
// yields the whole input, the bytes looked at included. An unknown format
// is an error matching ErrInvalid.
func Detect(r io.Reader) (Format, io.Reader, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return FormatUnknown, br, fmt.Errorf("read the start of the file: %w", err)
	}
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) {
		return FormatChatGPTZip, br, nil
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(text) == 0:
		return FormatUnknown, br, invalid("the file is empty")
	case text[0] == '{':
		return FormatPalaver, br, nil
	case text[0] == '[':
		rest := bytes.TrimLeft(text[1:], " \t\r\n")
		if bytes.HasPrefix(rest, []byte("]")) ||
			bytes.Contains(text, []byte(`"mapping"`)) || bytes.Contains(text, []byte(`"current_node"`)) {
			return FormatChatGPT, br, nil
		}
		return FormatUnknown, br, invalid("a JSON array, but not of ChatGPT conversations (no \"mapping\")")
	}
	return FormatUnknown, br, invalid("not a Palaver export, a ChatGPT conversations.json or a ChatGPT export zip")
}

// Source is a reader of items, whatever the format.
type Source interface {
	// Next returns the next item, or io.EOF after the last.
	Next() (Item, error)
	// Close releases what the source holds (a zip's temporary file).
	Close() error
}

// Open detects r's format and returns a Source of its items, with the
// default Options.
func Open(r io.Reader) (Source, Format, error) { return Options{}.Open(r) }

// Open detects r's format and returns a Source of its items. Any call may
// fail, the last Next included (ErrTooLarge past MaxInputBytes, a truncated
// last line, trailing garbage after ChatGPT's array): a caller reads the
// file to io.EOF before it stores anything, or undoes what it stored.
func (o Options) Open(r io.Reader) (Source, Format, error) {
	o = o.withDefaults()
	lr := &limitReader{r: r, n: o.MaxInputBytes}
	f, in, err := Detect(lr)
	if err != nil {
		return nil, f, err
	}
	var src Source
	switch f {
	case FormatPalaver:
		var rd *Reader
		if rd, err = o.NewReader(in); err == nil {
			src = nopCloser{rd}
		}
	case FormatChatGPT:
		var rd *ChatGPTReader
		if rd, err = o.NewChatGPTReader(in); err == nil {
			src = nopCloser{rd}
		}
	case FormatChatGPTZip:
		src, err = o.openZip(in)
	}
	if err != nil {
		return nil, f, err
	}
	return src, f, nil
}

type itemReader interface{ Next() (Item, error) }

type nopCloser struct{ itemReader }

func (nopCloser) Close() error { return nil }

// limitReader reads at most n bytes, then fails with ErrTooLarge if the
// input has more.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		for {
			k, err := l.r.Read(one[:])
			if k > 0 {
				return 0, ErrTooLarge
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// skipBOMReader drops a leading UTF-8 byte order mark.
func skipBOMReader(r io.Reader) io.Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	skipBOM(br)
	return br
}
