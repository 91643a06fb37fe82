package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"
)

// Reader reads a Palaver export one line at a time.
type Reader struct {
	o       Options
	br      *bufio.Reader
	budget  budget
	maxLine int
	line    int    // the number of the last line read
	buf     []byte // the current line
	seen    map[UID]struct{}
	header  Header
	done    bool
	// instructions: the file's instructions line was read (one at most).
	instructions bool
	err          error // sticky
}

// NewReader reads the header of a Palaver export with the default Options.
func NewReader(r io.Reader) (*Reader, error) { return Options{}.NewReader(r) }

// NewReader reads the header of a Palaver export: a file that is not one,
// or names another format or a version this package does not read, gives an
// error matching ErrInvalid (a *FormatError for the last two).
func (o Options) NewReader(r io.Reader) (*Reader, error) {
	o = o.withDefaults()
	bound := newBoundReader(r, o.MaxStringBytes, 0, 0) // a line is bounded whole by maxLine
	bound.maxData, bound.maxFile = base64Len(o.MaxFileBytes), o.MaxFileBytes
	rd := &Reader{o: o, br: bufio.NewReaderSize(bound, 64<<10), maxLine: o.MaxLineBytes, seen: map[UID]struct{}{}}
	rd.budget = budget{o: &rd.o, read: func() int64 { return bound.total }}
	skipBOM(rd.br)
	line, err := rd.readLine()
	if err == io.EOF {
		return nil, &LineError{Line: 1, Err: errors.New("the file is empty")}
	}
	if err != nil {
		return nil, err
	}
	var h struct {
		Format     *string      `json:"format"`
		Version    *json.Number `json:"version"`
		ExportedAt time.Time    `json:"exported_at"`
	}
	if err := unmarshalLine(line, &h); err != nil {
		return nil, &LineError{Line: rd.line, Err: err}
	}
	if h.Format == nil {
		return nil, &LineError{Line: rd.line, Err: fmt.Errorf("not a %s header (no \"format\")", FormatName)}
	}
	if h.Version == nil {
		return nil, &LineError{Line: rd.line, Err: errors.New("the header has no \"version\"")}
	}
	v, err := strconv.Atoi(h.Version.String())
	if err != nil {
		return nil, &LineError{Line: rd.line, Err: fmt.Errorf("version %s is not a whole number", clip(h.Version.String()))}
	}
	if *h.Format != FormatName || v != Version {
		return nil, &FormatError{Format: *h.Format, Version: v}
	}
	rd.header = Header{Format: *h.Format, Version: v, ExportedAt: h.ExportedAt.UTC()}
	return rd, nil
}

// Header is the export's first line.
func (r *Reader) Header() Header { return r.header }

// Next returns the next exchange or page, checked (Exchange.Validate,
// Page.Validate, uids unique in the file), or io.EOF after the last. An
// error about the file is a *LineError naming the line; an error reading
// the input is returned as it came, wrapped.
func (r *Reader) Next() (Item, error) {
	if r.err != nil {
		return Item{}, r.err
	}
	it, err := r.next()
	if err != nil {
		r.err = err
	}
	return it, err
}

func (r *Reader) next() (Item, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Item{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // a blank line (the end of a file written by hand)
		}
		it, err := r.parse(line)
		if err != nil {
			return Item{}, &LineError{Line: r.line, Err: err}
		}
		it.Where = "line " + strconv.Itoa(r.line)
		return it, nil
	}
}

func (r *Reader) parse(line []byte) (Item, error) {
	var kind struct {
		Type *string `json:"type"`
	}
	// The writer puts "type" first: read it from there rather than parse
	// the line twice (a third of the reader's time otherwise).
	switch {
	case bytes.HasPrefix(line, []byte(`{"type":"exchange",`)):
		kind.Type = &typeExchange
	case bytes.HasPrefix(line, []byte(`{"type":"page",`)):
		kind.Type = &typePage
	default:
		if err := unmarshalLine(line, &kind); err != nil {
			return Item{}, err
		}
	}
	switch {
	case kind.Type == nil:
		return Item{}, errors.New(`no "type"`)
	case *kind.Type == "exchange":
		var e Exchange
		if err := json.Unmarshal(line, &e); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		normalizeExchange(&e)
		if err := e.Validate(); err != nil {
			return Item{}, err
		}
		size, err := r.o.cleanExchange(&e)
		if err != nil {
			return Item{}, err
		}
		if err := r.budget.spend(size); err != nil {
			return Item{}, err
		}
		if err := r.unique(&e, nil); err != nil {
			return Item{}, err
		}
		return Item{Exchange: &e}, nil
	case *kind.Type == "page":
		var p Page
		if err := json.Unmarshal(line, &p); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		normalizePage(&p)
		if err := p.Validate(); err != nil {
			return Item{}, err
		}
		size, err := r.o.cleanPage(&p)
		if err != nil {
			return Item{}, err
		}
		if err := r.budget.spend(size); err != nil {
			return Item{}, err
		}
		if err := r.unique(nil, &p); err != nil {
			return Item{}, err
		}
		return Item{Page: &p}, nil
	case *kind.Type == "project":
		var p Project
		if err := json.Unmarshal(line, &p); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		if err := p.Validate(); err != nil {
			return Item{}, err
		}
		size, err := r.o.cleanProject(&p)
		if err != nil {
			return Item{}, err
		}
		if err := r.spendUnique(size, p.UID); err != nil {
			return Item{}, err
		}
		return Item{Project: &p}, nil
	case *kind.Type == "instructions":
		var in Instructions
		if err := json.Unmarshal(line, &in); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		if r.instructions {
			return Item{}, errors.New("a second instructions line (an export has one)")
		}
		r.instructions = true
		size, err := r.o.cleanInstructions(&in)
		if err != nil {
			return Item{}, err
		}
		if err := r.budget.spend(size); err != nil {
			return Item{}, err
		}
		return Item{Instructions: &in}, nil
	case *kind.Type == "memory":
		var m Memory
		if err := json.Unmarshal(line, &m); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		if err := m.Validate(); err != nil {
			return Item{}, err
		}
		size, err := r.o.cleanMemory(&m)
		if err != nil {
			return Item{}, err
		}
		if err := r.spendUnique(size, m.UID); err != nil {
			return Item{}, err
		}
		return Item{Memory: &m}, nil
	case *kind.Type == "file":
		var f File
		if err := json.Unmarshal(line, &f); err != nil {
			return Item{}, lineJSONError(err, line)
		}
		if f.Size > r.o.MaxFileBytes || int64(len(f.Data)) > r.o.MaxFileBytes {
			return Item{}, &LimitError{What: "file " + f.UID.String(), Max: r.o.MaxFileBytes, Unit: "bytes", Have: max(f.Size, int64(len(f.Data)))}
		}
		if err := f.Validate(); err != nil {
			return Item{}, err
		}
		if err := r.budget.spend(f.Size); err != nil {
			return Item{}, err
		}
		if _, dup := r.seen[f.UID]; dup {
			return Item{}, fmt.Errorf("uid %s appears twice in the file", f.UID)
		}
		r.seen[f.UID] = struct{}{}
		return Item{File: &f}, nil
	default:
		return Item{}, fmt.Errorf("unknown type %q", clip(*kind.Type))
	}
}

var typeExchange, typePage = "exchange", "page"

// spendUnique counts a line's bytes and records its uid, refusing one
// seen earlier in the file.
func (r *Reader) spendUnique(size int64, uid UID) error {
	if err := r.budget.spend(size); err != nil {
		return err
	}
	if _, dup := r.seen[uid]; dup {
		return fmt.Errorf("uid %s appears twice in the file", uid)
	}
	r.seen[uid] = struct{}{}
	return nil
}

// unique records the uids of an item, refusing one seen earlier in the file:
// the store matches on uids, so a repeated one would silently drop data.
// The set grows with the file (16 bytes and a map slot per uid, 36 MiB
// for a million messages); that is the price of refusing such a file.
func (r *Reader) unique(e *Exchange, p *Page) error {
	var uids []UID
	if e != nil {
		uids = append(uids, e.UID)
		for _, m := range e.Messages {
			uids = append(uids, m.UID)
		}
	} else {
		uids = append(uids, p.UID)
		for _, rv := range p.Revisions {
			uids = append(uids, rv.UID)
		}
	}
	for _, u := range uids {
		if _, dup := r.seen[u]; dup {
			return fmt.Errorf("uid %s appears twice in the file", u)
		}
		r.seen[u] = struct{}{}
	}
	return nil
}

// readLine returns the next line without its "\n" (valid until the next
// call), io.EOF at the end, a *LineError past maxLine bytes, or the input's
// own error wrapped. A last line without "\n" is returned like any other:
// if it was cut short, parsing it fails ("unexpected end").
func (r *Reader) readLine() ([]byte, error) {
	if r.done {
		return nil, io.EOF
	}
	if cap(r.buf) > maxKeptBuffer {
		r.buf = nil // one huge line should not pin its size for the rest
	}
	r.buf = r.buf[:0]
	r.line++
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > r.maxLine+1 { // +1: the "\n" is not counted
			return nil, &LineError{Line: r.line, Err: fmt.Errorf("longer than %d bytes", r.maxLine)}
		}
		r.buf = append(r.buf, chunk...)
		switch {
		case err == nil:
			return r.buf[:len(r.buf)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			r.done = true
			if len(r.buf) == 0 {
				r.line--
				return nil, io.EOF
			}
			return r.buf, nil
		case errors.Is(err, ErrInvalid): // a string past its bound (boundReader)
			return nil, &LineError{Line: r.line, Err: err}
		default:
			return nil, fmt.Errorf("read line %d: %w", r.line, err)
		}
	}
}

// base64Len is how long n bytes are in standard base64, as a JSON string
// (its quotes included).
func base64Len(n int64) int64 { return (n+2)/3*4 + 2 }

// unmarshalLine decodes a line that must be one JSON object.
func unmarshalLine(line []byte, v any) error {
	trimmed := bytes.TrimLeft(line, " \t\r")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) > 0 && trimmed[0] == '[' {
			return errors.New("not a JSON object (an array)")
		}
		return errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, v); err != nil {
		return lineJSONError(err, line)
	}
	return nil
}

// lineJSONError is jsonError for a whole line: a syntax error at its very
// end (inside an escape, a string, an object) means the line was cut short.
func lineJSONError(err error, line []byte) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// A Decoder, unlike Unmarshal, tells "ended too soon" from "wrong".
		var v json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(line)).Decode(&v); errors.Is(err, io.ErrUnexpectedEOF) {
			return errUnexpectedEnd
		}
	}
	return jsonError(err)
}

var errUnexpectedEnd = errors.New("unexpected end (the file looks cut short)")

// jsonError words a decoding error for a person.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		return errUnexpectedEnd
	case errors.As(err, &syn):
		return fmt.Errorf("invalid JSON at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ):
		// Value quotes a number whole, which may be megabytes long.
		if typ.Field != "" {
			return fmt.Errorf("field %s: a JSON %s where %s was due", typ.Field, clip(typ.Value), kindName(typ.Type))
		}
		return fmt.Errorf("a JSON %s where %s was due", clip(typ.Value), kindName(typ.Type))
	}
	return err
}

// skipBOM drops a UTF-8 byte order mark that some editors put first.
func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
}

func normalizeExchange(e *Exchange) {
	if e.Messages == nil {
		e.Messages = []*Message{}
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	for _, m := range e.Messages {
		if m != nil {
			m.Timestamp = m.Timestamp.UTC()
			m.AgentResponse = nullToNil(m.AgentResponse)
			m.Tool = nullToNil(m.Tool)
		}
	}
}

func normalizePage(p *Page) {
	if p.Revisions == nil {
		p.Revisions = []*Revision{}
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	for _, r := range p.Revisions {
		if r != nil {
			r.CreatedAt = r.CreatedAt.UTC()
		}
	}
}

// nullToNil makes a JSON null the same as an absent field.
func nullToNil(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	return raw
}

// kindName says what JSON a Go type takes, for a person.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t == reflect.TypeFor[UID]() {
			return "a UUID string"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return "another value"
}
