package handlers_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"palaver/handlers"
	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// importOut is POST /api/import's answer.
type importOut struct {
	Imported struct{ Exchanges, Messages, Pages int } `json:"imported"`
	Skipped  struct{ Exchanges, Pages int }           `json:"skipped"`
}

// importRaw posts a file as the raw body of POST /api/import.
func (c *client) importRaw(ctype string, file []byte) (*http.Response, []byte) {
	c.a.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/import", bytes.NewReader(file))
	req.Header.Set("Content-Type", ctype)
	if c.apiKey == "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	res := c.do(req)
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// multipartFile is a multipart form with the given fields, then the file
// as its field "file".
func multipartFile(t testing.TB, fields map[string]string, file []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	w, err := mw.CreateFormFile("file", "export.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(file)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// importOK posts a file and decodes the 200 answer.
func (c *client) importOK(ctype string, file []byte) importOut {
	c.a.t.Helper()
	res, b := c.importRaw(ctype, file)
	if res.StatusCode != http.StatusOK {
		c.a.t.Fatalf("POST /api/import: %d %s", res.StatusCode, b)
	}
	apiShape(c.a.t, "import answer", apiObject(c.a.t, b), map[string]string{"imported": "object", "skipped": "object"})
	var out importOut
	if err := json.Unmarshal(b, &out); err != nil {
		c.a.t.Fatal(err)
	}
	return out
}

// exportItems is a user's export through the API, read back.
func (c *client) exportItems() ([]transfer.Item, []byte) {
	c.a.t.Helper()
	res, body := c.api(http.MethodGet, "/api/export", nil)
	if res.StatusCode != http.StatusOK {
		c.a.t.Fatalf("GET /api/export: %d", res.StatusCode)
	}
	r, err := transfer.NewReader(bytes.NewReader(body))
	if err != nil {
		c.a.t.Fatal(err)
	}
	var items []transfer.Item
	for {
		it, err := r.Next()
		if err == io.EOF {
			return items, body
		}
		if err != nil {
			c.a.t.Fatal(err)
		}
		items = append(items, it)
	}
}

func chatgptTestFile(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../transfer/testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func zipOf(t testing.TB, entries map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAPIImport: an export imported into another account through
// POST /api/import (the raw body, any Content-Type) stores the same content
// (an export of it equals the first); importing it again (as a multipart
// form) imports nothing and skips everything. The imported chats run no
// agent and leave the account's own chat where it was in the history.
// ChatGPT's conversations.json imports, and its zip, holding the same
// conversations, then skips them all.
func TestAPIImport(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	root := *ann.apiChat("pelicans in winter", 0).ExchangeID
	ann.apiChat("and in summer", root)
	ann.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/fork", root), map[string]any{"seq": 2}, http.StatusCreated, nil)
	page := ann.apiPageCreate("Trip", pageTrip)
	ann.apiPageChat(page.ID, "what is in the plan?", 0)
	a.waitTurns()
	annItems, file := ann.exportItems()
	msgs := 0
	for _, it := range annItems {
		if it.Exchange != nil {
			msgs += len(it.Exchange.Messages)
		}
	}

	own := *bob.apiChat("bob's own chat", 0).ExchangeID
	a.waitTurns()
	before := bob.apiHistory("")
	got := bob.importOK("text/plain", file)
	if got.Imported.Exchanges != 3 || got.Imported.Pages != 1 || got.Imported.Messages != msgs || got.Skipped.Exchanges != 0 || got.Skipped.Pages != 0 {
		t.Fatalf("first import: %+v, want 3 exchanges, %d messages, 1 page", got, msgs)
	}
	running, err := a.store.RunningTurns(context.Background())
	if err != nil || len(running) != 0 {
		t.Fatalf("turns running after an import: %v %v", running, err)
	}
	after := bob.apiHistory("")
	if len(after) != len(before)+2 || after[0].ID != own || after[0].UpdatedAt != before[0].UpdatedAt {
		t.Fatalf("the import moved bob's own chat: before %+v, after %+v", before, after)
	}
	bobItems, _ := bob.exportItems()
	var bobImported []transfer.Item
	for _, it := range bobItems {
		if it.Exchange == nil || len(it.Exchange.Messages) == 0 || it.Exchange.Messages[0].Content != "bob's own chat" {
			bobImported = append(bobImported, it)
		}
	}
	if err := transfertest.EqualContent(annItems, bobImported); err != nil {
		t.Fatalf("the import changed the content: %v", err)
	}

	rows := a.apiRows()
	ctype, form := multipartFile(t, nil, file)
	again := bob.importOK(ctype, form)
	if again.Imported.Exchanges != 0 || again.Imported.Messages != 0 || again.Imported.Pages != 0 || again.Skipped.Exchanges != 3 || again.Skipped.Pages != 1 {
		t.Fatalf("second import: %+v", again)
	}
	if a.apiRows() != rows {
		t.Fatal("a second import stored rows")
	}

	chatgpt := chatgptTestFile(t)
	first := bob.importOK("application/json", chatgpt)
	if first.Imported.Exchanges == 0 || first.Imported.Messages == 0 {
		t.Fatalf("ChatGPT import: %+v", first)
	}
	zipped := bob.importOK("application/octet-stream", zipOf(t, map[string][]byte{"export/conversations.json": chatgpt}))
	if zipped.Imported.Exchanges != 0 || zipped.Skipped.Exchanges != first.Imported.Exchanges {
		t.Fatalf("the zip of the same conversations after them: %+v (first %+v)", zipped, first)
	}

	// Through a session: the CSRF header is required.
	alice := a.register("alice")
	csrf := alice.csrf
	alice.csrf = "wrong"
	if res, b := alice.importRaw("text/plain", file); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a session's import without its CSRF token: %d %s", res.StatusCode, b)
	}
	alice.csrf = csrf
	if got := alice.importOK("text/plain", file); got.Imported.Exchanges != 3 {
		t.Fatalf("a session's import: %+v", got)
	}
}

// chatgptConversation is a small conversations.json whose mapping is given.
func chatgptConversation(mapping string) []byte {
	return []byte(`[{"id":"abc","title":"Trip plan","create_time":1700000000,"current_node":"u","mapping":` + mapping + `}]`)
}

// zipBomb is a zip whose conversations.json unpacks to 1.1 GiB.
func zipBomb(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create("conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, io.LimitReader(zeroReader{}, 1100<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestAPIImportRefused: each bad file is refused with a 400 or 413 that
// says where, and nothing of it is stored: not the items before the fault,
// not anything else.
func TestAPIImportRefused(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	ann.apiChat("already here", 0)
	a.waitTurns()

	var good bytes.Buffer
	w, err := transfer.NewWriter(&good, time.Unix(1700000000, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	g := transfertest.New(3)
	pages, exchanges := g.Export(2, 6)
	for _, p := range pages {
		w.WritePage(p)
	}
	for _, e := range exchanges {
		w.WriteExchange(e)
	}
	header := `{"format":"palaver-export","version":1,"exported_at":"2026-01-02T03:04:05Z"}` + "\n"
	node := func(id, parent, children, role, text string) string {
		msg := "null"
		if role != "" {
			msg = fmt.Sprintf(`{"id":%q,"author":{"role":%q},"create_time":1700000001,"content":{"content_type":"text","parts":[%q]}}`, id, role, text)
		}
		p := "null"
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		return fmt.Sprintf(`%q:{"id":%q,"parent":%s,"children":[%s],"message":%s}`, id, id, p, children, msg)
	}
	// One line of exchanges made from the generator's, changed by edit.
	exchangesFile := func(edit func(es []*transfer.Exchange)) []byte {
		g := transfertest.New(4)
		es := []*transfer.Exchange{g.Exchange(nil, nil), g.Exchange(nil, nil)}
		for _, e := range es {
			e.Scope, e.PageUID, e.JobID, e.ForkedFrom = transfer.ScopeGeneral, nil, nil, nil
		}
		edit(es)
		var b bytes.Buffer
		w, _ := transfer.NewWriter(&b, time.Unix(1700000000, 0).UTC())
		for _, e := range es {
			if err := w.WriteExchange(e); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes()
	}
	cases := []struct {
		name   string
		file   []byte
		status int
		want   string
	}{
		{"ChatGPT comb", transfertest.Comb(100), 400, "what the file stores (copies of branches included) is longer than the"},
		{"long title", exchangesFile(func(es []*transfer.Exchange) { es[1].Title = strings.Repeat("é", 201) }), 400,
			"line 3: the title has 201 characters, more than the 200 allowed"},
		{"unknown agent type", exchangesFile(func(es []*transfer.Exchange) { es[0].AgentType = "root_shell" }), 400,
			`line 2: agent_type "root_shell" is not an agent type`},
		{"fork cycle", exchangesFile(func(es []*transfer.Exchange) {
			es[0].ForkedFrom = &transfer.ForkRef{ExchangeUID: es[1].UID}
			es[1].ForkedFrom = &transfer.ForkRef{ExchangeUID: es[0].UID}
		}), 400, "forked_from makes a cycle"},
		{"truncated", good.Bytes()[:good.Len()-7], 400, "line 9"},
		{"a line not an object", []byte(header + "[1, 2]\n"), 400, "line 2"},
		{"unknown version", []byte(`{"format":"palaver-export","version":99}` + "\n"), 400, "version 99"},
		{"not an export", []byte("hello, world"), 400, "not a Palaver export"},
		{"empty", nil, 400, "empty"},
		{"ChatGPT cycle", chatgptConversation("{" + node("r", "u", `"u"`, "", "") + "," + node("u", "r", `"r"`, "user", "hi") + "}"), 400,
			`conversation 1 ("Trip plan", id abc): mapping has a cycle`},
		{"ChatGPT missing parent", chatgptConversation("{" + node("r", "xyz", `"u"`, "", "") + "," + node("u", "r", "", "user", "hi") + "}"), 400,
			`conversation 1 ("Trip plan", id abc): node r: parent xyz does not exist`},
		{"zip path escape", zipOf(t, map[string][]byte{"conversations.json": chatgptTestFile(t), "../../etc/x": []byte("x")}), 400,
			"points outside the archive"},
		{"zip bomb", zipBomb(t), 400, "more than the 1073741824 allowed"},
	}
	rows, nPages := a.apiRows(), a.apiCount("pages")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, b := ann.importRaw("application/octet-stream", c.file)
			if msg := apiErr(t, res, b, c.status); !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "Nothing was imported") {
				t.Fatalf("%s: %q, want it to say %q", c.name, msg, c.want)
			}
			if a.apiRows() != rows || a.apiCount("pages") != nPages {
				t.Fatalf("%s: a refused file stored rows", c.name)
			}
		})
	}
	// A multipart form without its field "file".
	ctype, form := multipartFile(t, map[string]string{"other": "x"}, nil)
	form = bytes.Replace(form, []byte(`name="file"`), []byte(`name="upload"`), 1)
	if res, b := ann.importRaw(ctype, form); !strings.Contains(apiErr(t, res, b, 400), `no field "file"`) {
		t.Fatalf("a form without a file: %s", b)
	}

	// Over the limit (a smaller one here: 256 MiB is the server's): 413.
	small := newTestApp(t, func(d *handlers.Deps) { d.Config.MaxImportBytes = int64(good.Len()) - 1 })
	if res, b := small.apiClient("ann").importRaw("text/plain", good.Bytes()); !strings.Contains(apiErr(t, res, b, 413), "too large") {
		t.Fatalf("over the limit: %s", b)
	}
	if small.apiCount("exchanges") != 0 || small.apiCount("pages") != 0 {
		t.Fatal("a file over the limit stored rows")
	}
}

// TestImportRouteBodyLimits: the import route reads bodies over the global
// 1 MiB limit (a 3 MiB export, sent whole before the client reads), while
// the same size to another route is still refused with a 413 that the
// client reads; a body announced over 256 MiB is refused at once, and the
// client reads that 413 too while it is still sending.
func TestImportRouteBodyLimits(t *testing.T) {
	a := newTestApp(t)
	key := a.apiClient("bob")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })
	addr := ln.Addr().String()

	var file bytes.Buffer
	w, err := transfer.NewWriter(&file, time.Unix(1700000000, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	gen := transfertest.New(5)
	for range 4 { // 3.2 MiB, in pages of 800 KiB (a page may have 1 MiB)
		page := gen.Page()
		page.Content = strings.Repeat("long page ", 80<<10)
		page.Revisions = page.Revisions[:0]
		if err := w.WritePage(page); err != nil {
			t.Fatal(err)
		}
	}
	post := func(target string, chunked bool) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/x-ndjson\r\n", target, addr, key.apiKey)
		if !chunked {
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", file.Len())
			b.Write(file.Bytes())
			return b.Bytes()
		}
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := file.Bytes(); len(rest) > 0; {
			k := min(len(rest), 100<<10)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", k, rest[:k])
			rest = rest[k:]
		}
		b.WriteString("0\r\n\r\n")
		return b.Bytes()
	}
	if file.Len() < 3<<20 {
		t.Fatalf("the file is %d bytes", file.Len())
	}
	for _, chunked := range []bool{false, true} {
		status, ctype, body, err := limitRaw(addr, post("/api/chat", chunked))
		if err != nil {
			t.Fatal(err)
		}
		limitJSONErr(t, "3 MiB to /api/chat", status, ctype, body, http.StatusRequestEntityTooLarge)
	}
	status, _, body, err := limitRaw(addr, post("/api/import", false))
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"pages":4`) {
		t.Fatalf("3 MiB to /api/import: %d %v %s", status, err, body)
	}
	status, _, body, err = limitRaw(addr, post("/api/import", true))
	if err != nil || status != http.StatusOK || !strings.Contains(body, `"skipped":{"exchanges":0,"pages":4,`) {
		t.Fatalf("3 MiB chunked to /api/import: %d %v %s", status, err, body)
	}

	// Announced at 300 MiB: answered at once; the client, still sending,
	// reads the 413.
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /api/import HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\nContent-Length: %d\r\n\r\n", addr, key.apiKey, 300<<20)
	go func() {
		chunk := make([]byte, 64<<10)
		for range 64 { // 4 MiB, within what the server discards
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to a 300 MiB body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	limitJSONErr(t, "300 MiB to /api/import", res.StatusCode, res.Header.Get("Content-Type"), string(b), http.StatusRequestEntityTooLarge)
	if a.apiCount("pages") != 4 {
		t.Fatalf("%d pages", a.apiCount("pages"))
	}
}

// pageStream is a Palaver export made as it is read: its header, then n
// pages of content each, then (cut) the first half of one more line. It
// never holds more than one line.
type pageStream struct {
	w       *transfer.Writer
	buf     bytes.Buffer
	content string
	n, made int
	cut     bool
}

func newPageStream(t testing.TB, n int, content string) *pageStream {
	s := &pageStream{n: n, content: content}
	w, err := transfer.NewWriter(&s.buf, time.Unix(1700000000, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	s.w = w
	return s
}

func (s *pageStream) Read(p []byte) (int, error) {
	if s.buf.Len() == 0 {
		at := time.Unix(1700000000, 0).UTC()
		page := &transfer.Page{UID: transfer.UID(uuid.Must(uuid.NewV7())), Title: fmt.Sprintf("page %d", s.made), Content: s.content,
			CreatedAt: at, UpdatedAt: at, Revisions: []*transfer.Revision{}}
		switch {
		case s.made < s.n:
			if err := s.w.WritePage(page); err != nil {
				return 0, err
			}
		case !s.cut:
			if err := s.w.WritePage(page); err != nil {
				return 0, err
			}
			s.buf.Truncate(s.buf.Len() / 2)
			s.cut = true
		default:
			return 0, io.EOF
		}
		s.made++
	}
	return s.buf.Read(p)
}

// TestImportStreamsLargeFile: a 200 MiB upload (chunked, made as it is
// sent) is read as it arrives: the server's heap stays within 64 MiB of its
// idle size all along, and the file, cut short at its end, is refused with
// nothing of its 200 pages stored.
func TestImportStreamsLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 200 MiB")
	}
	a := newTestApp(t)
	ann := a.apiClient("ann")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })

	body := newPageStream(t, 200, strings.Repeat("a page of notes ", 64<<10)) // 1 MiB each
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	idle := m.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			if s.HeapInuse > peak.Load() {
				peak.Store(s.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/api/import", body)
	req.Header.Set("x-api-key", ann.apiKey)
	res, err := http.DefaultClient.Do(req)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if msg := apiErr(t, res, b, http.StatusBadRequest); !strings.Contains(msg, "line 202") {
		t.Fatalf("the cut file: %s", msg)
	}
	grew := int64(peak.Load()) - int64(idle)
	t.Logf("sent %d pages of 1 MiB; heap in use idle %d MiB, peak +%d MiB", body.made, idle>>20, grew>>20)
	if body.made != 201 {
		t.Fatalf("the server stopped reading after %d pages", body.made)
	}
	if grew >= 64<<20 {
		t.Fatalf("the heap grew by %d MiB while a 200 MiB file was imported", grew>>20)
	}
	if n := a.apiCount("pages"); n != 0 {
		t.Fatalf("a refused file left %d pages", n)
	}
}
