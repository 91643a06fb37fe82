package transfer

import (
	"fmt"
	"io"
)

// boundReader bounds the JSON tokens of a stream before a decoder holds
// them: it follows strings (their escapes included) and nesting as the
// bytes pass, and fails the read as soon as one string passes maxString
// bytes as written, or one element of the top-level array (a ChatGPT
// conversation) passes maxValue bytes. A decoder buffers a whole value
// before it decodes it, and a string whole: without this, a 1 GiB title
// inside a 1 MiB zip was held, twice, before any check could see it. It is
// a bound, not a parser: a malformed stream is left to the decoder, which
// stops at the first wrong byte anyway.
type boundReader struct {
	r         io.Reader
	maxString int64 // 0: no bound
	maxValue  int64 // 0: no bound
	valueAt   int   // the depth whose elements maxValue bounds (1: a top-level array's)
	// maxData, when set, bounds instead the string that is the value of a
	// "data" key of a top-level object (a file line's bytes, base64):
	// a file of the per-file limit is longer than any text field.
	maxData int64
	maxFile int64 // the per-file limit maxData encodes, to name it

	key      [4]byte // the first bytes of the string being read, at depth 1
	afterKey int     // 1: a "data" key just ended; 2: and its ":"
	dataStr  bool    // the string being read is a "data" value

	inString, escape bool
	depth            int
	stringLen        int64
	valueLen         int64
	total            int64 // bytes read
	err              error // sticky
}

func newBoundReader(r io.Reader, maxString, maxValue int64, valueAt int) *boundReader {
	return &boundReader{r: r, maxString: maxString, maxValue: maxValue, valueAt: valueAt}
}

func (b *boundReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.total += int64(n)
	for i := 0; i < n; i++ {
		c := p[i]
		inside := b.depth > b.valueAt
		switch {
		case b.inString:
			b.stringLen++
			closed := false
			switch {
			case b.escape:
				b.escape = false
			case c == '\\':
				b.escape = true
			case c == '"' || c == '\n': // a raw newline ends no valid string; the decoder says so
				b.inString, closed = false, c == '"'
			}
			if b.maxData > 0 && b.depth == 1 {
				if k := b.stringLen - 2; !closed && k < int64(len(b.key)) {
					b.key[k] = c
				}
				if closed && b.stringLen == 6 && string(b.key[:]) == "data" && !b.dataStr {
					b.afterKey = 1
				}
			}
			limit, what, why := b.maxString, "a string", ""
			if b.dataStr {
				limit, what = b.maxData, "a file's data"
				why = fmt.Sprintf("base64: a file may be at most %d bytes", b.maxFile)
			}
			if limit > 0 && b.stringLen > limit {
				b.err = &LimitError{What: what, Max: limit, Unit: "bytes", Why: why}
				return i, b.err
			}
			if !b.inString {
				b.dataStr = false
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case c == ':' && b.afterKey == 1:
			b.afterKey = 2
		case c == '"':
			b.inString, b.stringLen = true, 1
			b.dataStr, b.afterKey = b.afterKey == 2 && b.depth == 1, 0
		case c == '{' || c == '[':
			b.depth++
			b.afterKey = 0
		case c == '}' || c == ']':
			b.depth--
			b.afterKey = 0
		default:
			b.afterKey = 0
		}
		if inside || b.depth > b.valueAt {
			b.valueLen++
			if b.maxValue > 0 && b.valueLen > b.maxValue {
				b.err = &LimitError{What: "a conversation", Max: b.maxValue, Unit: "bytes"}
				return i, b.err
			}
		}
		if b.depth <= b.valueAt {
			b.valueLen = 0
		}
	}
	return n, err
}
