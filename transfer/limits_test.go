package transfer_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// letters is an endless stream of 'a'.
type letters struct{}

func (letters) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// peakHeap runs fn while sampling the live heap, and says by how much it
// grew at most over what it was before.
func peakHeap(fn func()) int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			if s.HeapAlloc > peak.Load() {
				peak.Store(s.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return int64(peak.Load()) - int64(base)
}

// The bomb: a zip of about 1 MB whose conversations.json holds a
// 1000 MiB title (it took 3.2 GB to import). The string is refused once it
// passes the decoder's bound, and the heap stays small all along.
func TestTitleBombRefusedInBoundedMemory(t *testing.T) {
	start := time.Now()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create("conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	body := io.MultiReader(strings.NewReader(`[{"id":"bomb","title":"`), io.LimitReader(letters{}, 1000<<20),
		strings.NewReader(`","current_node":"n","mapping":{"n":{"parent":null,"children":[],"message":null}}}]`))
	if _, err := io.Copy(w, body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("bomb: %d KB zipped, made in %v", zipped.Len()>>10, time.Since(start).Round(time.Millisecond))
	if zipped.Len() > 4<<20 {
		t.Fatalf("the bomb is %d bytes", zipped.Len())
	}
	var readErr error
	grew := peakHeap(func() { _, _, readErr = openAll(t, transfer.Options{}, zipped.Bytes()) })
	t.Logf("refused: %v; the heap grew at most %d MiB", readErr, grew>>20)
	var limit *transfer.LimitError
	if !errors.As(readErr, &limit) || !errors.Is(readErr, transfer.ErrInvalid) ||
		!strings.Contains(readErr.Error(), "conversation 1: a string is longer than the 8388608 bytes allowed") {
		t.Fatalf("the bomb: %v", readErr)
	}
	if grew > 48<<20 {
		t.Fatalf("the heap grew by %d MiB while refusing the bomb", grew>>20)
	}
}

// A comb tree: 100 branches of a 100 KB file copy its long first question
// 100 times. Counted against the stored-bytes cap (10 times the file), it
// is refused, naming the cap.
func TestCombTreeRefused(t *testing.T) {
	file := transfertest.Comb(100)
	grew := peakHeap(func() {
		_, _, err := openAll(t, transfer.Options{InputSize: int64(len(file))}, file)
		var limit *transfer.LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), "what the file stores (copies of branches included) is longer than the") ||
			!strings.Contains(err.Error(), "10 times the file's size") {
			t.Errorf("a comb of %d bytes: %v", len(file), err)
		}
		t.Logf("refused: %v", err)
	})
	if grew > 48<<20 {
		t.Errorf("the heap grew by %d MiB", grew>>20)
	}
	// A small comb stays under the cap and is read whole.
	small := transfertest.Comb(3)
	items, _, err := openAll(t, transfer.Options{InputSize: int64(len(small))}, small)
	if err != nil || len(items) != 4 {
		t.Fatalf("a comb of 3 turns: %d items, %v", len(items), err)
	}
}

// The API's field limits hold for an import: a title over 200 characters,
// a message over 100,000, an unknown agent type are refused naming the
// line and the limit; NUL and invalid UTF-8 become U+FFFD.
func TestImportFieldLimits(t *testing.T) {
	exchange := func(title, agent, content string) []byte {
		return []byte(header + `{"type":"exchange","uid":"` + u1 + `","title":` + quote(title) + `,"agent_type":` + quote(agent) +
			`,"scope":"general","pinned":false,"archived":false,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z",` +
			`"messages":[{"uid":"` + u2 + `","seq":0,"role":"user","content":` + quote(content) + `,"timestamp":"2024-01-01T00:00:00Z"}]}` + "\n")
	}
	opts := transfer.Options{AgentTypes: []string{"router", "page_assistant"}}
	for _, c := range []struct {
		name, title, agent, content, want string
	}{
		{"title at the limit", strings.Repeat("é", 200), "router", "hi", ""},
		{"title over it", strings.Repeat("é", 201), "router", "hi", "line 2: the title has 201 characters, more than the 200 allowed"},
		{"content at the limit", "t", "router", strings.Repeat("😀", 100_000), ""},
		{"content over it", "t", "router", strings.Repeat("x", 100_001), "line 2: message 1's content has 100001 characters, more than the 100000 allowed"},
		{"unknown agent type", "t", "evil", "hi", `line 2: agent_type "evil" is not an agent type (valid ones are: router, page_assistant)`},
	} {
		items, _, err := openAll(t, opts, exchange(c.title, c.agent, c.content))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, transfer.ErrInvalid)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case c.want == "" && len(items) != 1:
			t.Errorf("%s: %d items", c.name, len(items))
		}
	}

	items, _, err := openAll(t, opts, exchange("a\x00title", "router", "nul \x00 and a bad byte \xff here"))
	if err != nil {
		t.Fatal(err)
	}
	e := items[0].Exchange
	if e.Title != "a\uFFFDtitle" || e.Messages[0].Content != "nul \uFFFD and a bad byte \uFFFD here" {
		t.Errorf("title %q, content %q", e.Title, e.Messages[0].Content)
	}
	// The same through ChatGPT's format.
	gpt := `[{"id":"c","title":"nul\u0000","create_time":1700000000,"current_node":"m","mapping":{` +
		`"m":{"parent":null,"children":[],"message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["a\u0000b"]}}}}}]`
	items, _, err = openAll(t, transfer.Options{}, []byte(gpt))
	if err != nil {
		t.Fatal(err)
	}
	if e := items[0].Exchange; e.Title != "nul\uFFFD" || e.Messages[0].Content != "a\uFFFDb" {
		t.Errorf("ChatGPT: title %q, content %q", e.Title, e.Messages[0].Content)
	}
	long := `[{"id":"c","title":"` + strings.Repeat("t", 201) + `","create_time":1700000000,"current_node":"m","mapping":{` +
		`"m":{"parent":null,"children":[],"message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["hi"]}}}}}]`
	if _, _, err := openAll(t, transfer.Options{}, []byte(long)); err == nil ||
		!strings.Contains(err.Error(), "the title has 201 characters, more than the 200 allowed") {
		t.Errorf("a long ChatGPT title: %v", err)
	}
}

// quote writes s as a JSON string, leaving invalid UTF-8 as it is (as a
// file may have it).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ':
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// A small zip that unpacks to a mountain of valid messages: 2,000
// conversations of one 99,000-character question (200 MB of JSON that
// packs into a few hundred KB). Its JSON counts as at most 20 times the
// zip, so the cap (10 times that) refuses it long before 100 MB is kept.
func TestZipOfManyValidMessagesRefused(t *testing.T) {
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestCompression) })
	w, err := zw.Create("conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a", 99_000)
	io.WriteString(w, "[")
	for i := range 2000 {
		if i > 0 {
			io.WriteString(w, ",")
		}
		c := conversations(conversation(fmt.Sprintf("c%d", i), "Question", "u", node{id: "root"}, node{id: "u", parent: "root", role: "user", text: text}))
		io.WriteString(w, c[1:len(c)-1])
	}
	io.WriteString(w, "]")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d KB zipped", zipped.Len()>>10)
	if zipped.Len() > 2<<20 {
		t.Fatalf("the zip is %d bytes: it does not pack as the test needs", zipped.Len())
	}
	_, _, err = openAll(t, transfer.Options{}, zipped.Bytes())
	var limit *transfer.LimitError
	if !errors.As(err, &limit) || !strings.Contains(err.Error(), "what the file stores (copies of branches included) is longer than the") {
		t.Fatalf("a %d KB zip of 200 MB of messages: %v", zipped.Len()>>10, err)
	}
	if limit.Max > 20*10*int64(zipped.Len()) {
		t.Fatalf("the cap is %d bytes for a zip of %d", limit.Max, zipped.Len())
	}
}

// TestFileDataBound: a file line's "data" may be as long as the base64 of
// MaxFileBytes, longer than MaxStringBytes; any other string keeps its
// bound (a "data" key elsewhere than a line's top level included), and a
// file over MaxFileBytes is refused, named.
func TestFileDataBound(t *testing.T) {
	o := transfer.Options{MaxStringBytes: 1024, MaxFileBytes: 4096}
	g := transfertest.New(7)
	fileLine := func(n int) []byte {
		data := bytes.Repeat([]byte{0xfe, 0x01, 0x7f}, n/3+1)[:n]
		var buf bytes.Buffer
		w, err := transfer.NewWriter(&buf, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if err := w.WriteFile(&transfer.File{UID: g.UID(), Name: "f.bin", ContentType: "application/octet-stream",
			Size: int64(n), SHA256: hex.EncodeToString(sum[:]), CreatedAt: time.Now(), Data: data}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	read := func(file []byte) ([]transfer.Item, error) {
		r, err := o.NewReader(bytes.NewReader(file))
		if err != nil {
			return nil, err
		}
		var items []transfer.Item
		for {
			it, err := r.Next()
			if err == io.EOF {
				return items, nil
			}
			if err != nil {
				return items, err
			}
			items = append(items, it)
		}
	}
	items, err := read(fileLine(4096)) // 5,464 bytes of base64
	if err != nil || len(items) != 1 || items[0].File == nil || len(items[0].File.Data) != 4096 {
		t.Fatalf("a file of MaxFileBytes: %v, %d items", err, len(items))
	}
	if _, err := read(fileLine(4097)); !errors.Is(err, transfer.ErrInvalid) || !strings.Contains(err.Error(), "4096") {
		t.Fatalf("a file over MaxFileBytes: %v", err)
	}
	header := `{"format":"palaver-export","version":1,"exported_at":"2026-01-01T00:00:00Z"}` + "\n"
	long := strings.Repeat("x", 2000)
	for name, line := range map[string]string{
		"a title":                  `{"type":"file","name":"` + long + `","data":""}`,
		"a nested data":            `{"type":"exchange","messages":[{"data":"` + long + `"}]}`,
		"a data key as a value":    `{"type":"file","name":"data","title":"` + long + `"}`,
		"a value after data's key": `{"type":"file","data":"","name":"` + long + `"}`,
	} {
		if _, err := read([]byte(header + line + "\n")); err == nil || !strings.Contains(err.Error(), "a string is longer than the 1024 bytes") {
			t.Errorf("%s of 2000 bytes: %v", name, err)
		}
	}
}
