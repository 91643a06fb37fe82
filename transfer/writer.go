package transfer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Writer writes a Palaver export: the header, then one line per call. Each
// line goes to the underlying writer whole before the call returns, so the
// memory held is one exchange or page, whatever the export's size; wrap a
// slow destination in a bufio.Writer and flush it at the end if small
// writes cost.
type Writer struct {
	w         io.Writer
	buf       bytes.Buffer
	enc       *json.Encoder // encodes into buf
	exchanges int
	pages     int
	err       error // sticky: after a failed write the stream is unusable
}

type exchangeLine struct {
	Type string `json:"type"`
	*Exchange
}

type fileLine struct {
	Type string `json:"type"`
	*File
}

// WriteFile writes one file line. Write a file before the exchanges that
// hold it.
func (w *Writer) WriteFile(f *File) error {
	if err := w.write(fileLine{"file", f}); err != nil {
		return fmt.Errorf("write file %s: %w", f.UID, err)
	}
	return nil
}

type pageLine struct {
	Type string `json:"type"`
	*Page
}

// NewWriter writes the header to w and returns a Writer for the lines.
func NewWriter(w io.Writer, exportedAt time.Time) (*Writer, error) {
	wr := &Writer{w: w}
	wr.enc = json.NewEncoder(&wr.buf)
	wr.enc.SetEscapeHTML(false) // keep "<", ">" and "&" readable in a file a person may open
	if err := wr.write(Header{Format: FormatName, Version: Version, ExportedAt: exportedAt.UTC()}); err != nil {
		return nil, fmt.Errorf("write export header: %w", err)
	}
	return wr, nil
}

// WriteExchange writes one exchange line. It does not validate: call
// Exchange.Validate first to refuse to write what an import would refuse.
func (w *Writer) WriteExchange(e *Exchange) error {
	if e.Messages == nil { // [] rather than null: a reader in another language need not care
		c := *e
		c.Messages = []*Message{}
		e = &c
	}
	if err := w.write(exchangeLine{"exchange", e}); err != nil {
		return fmt.Errorf("write exchange %s: %w", e.UID, err)
	}
	w.exchanges++
	return nil
}

// WritePage writes one page line. Write a page before the exchanges about it.
func (w *Writer) WritePage(p *Page) error {
	if p.Revisions == nil {
		c := *p
		c.Revisions = []*Revision{}
		p = &c
	}
	if err := w.write(pageLine{"page", p}); err != nil {
		return fmt.Errorf("write page %s: %w", p.UID, err)
	}
	w.pages++
	return nil
}

// Exchanges is how many exchange lines were written, for a progress count.
func (w *Writer) Exchanges() int { return w.exchanges }

// Pages is how many page lines were written.
func (w *Writer) Pages() int { return w.pages }

func (w *Writer) write(v any) error {
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err // nothing written: the stream is still whole
	}
	_, err := w.w.Write(w.buf.Bytes())
	if w.buf.Cap() > maxKeptBuffer {
		w.buf = bytes.Buffer{} // one huge exchange should not pin its size for the rest
	}
	w.err = err
	return err
}

// maxKeptBuffer is the largest line buffer a Writer keeps between lines.
const maxKeptBuffer = 1 << 20
