package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/handlers"
)

// pngOf is a w×h PNG.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{10, 200, 10, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartFile is a multipart form whose part "file" is data named name.
func fileForm(t testing.TB, name string, data []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(data)
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

type fileOut struct {
	ID          int64  `json:"id"`
	UID         string `json:"uid"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	Width       *int64 `json:"width"`
	Height      *int64 `json:"height"`
}

// upload posts a file through the API; it returns the response and body.
func (c *client) upload(name string, data []byte) (*http.Response, []byte) {
	c.a.t.Helper()
	ctype, body := fileForm(c.a.t, name, data)
	req := httptest.NewRequest(http.MethodPost, "/api/files", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if c.apiKey == "" && c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	res := c.do(req)
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func (c *client) mustUpload(name string, data []byte) fileOut {
	c.a.t.Helper()
	res, b := c.upload(name, data)
	if res.StatusCode != http.StatusCreated {
		c.a.t.Fatalf("upload %s: %d %s", name, res.StatusCode, b)
	}
	var f fileOut
	if err := json.Unmarshal(b, &f); err != nil {
		c.a.t.Fatal(err)
	}
	return f
}

func (a *testApp) countRows(table string) int64 {
	c, err := a.store.CountBlobs(context.Background())
	if err != nil {
		a.t.Fatal(err)
	}
	if c.Unreferenced != 0 {
		a.t.Fatalf("%d unreferenced blobs", c.Unreferenced)
	}
	if table == "files" {
		return c.Files
	}
	return c.Blobs
}

// TestFilesAPI: upload, list with usage, serve with the headers of
// API.md, thumbnail, dedupe, another user's 404, delete.
func TestFilesAPI(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	img := ann.mustUpload("photo.png", pngOf(t, 800, 400))
	if img.ContentType != "image/png" || img.Width == nil || *img.Width != 800 || *img.Height != 400 || img.UID == "" || len(img.SHA256) != 64 {
		t.Fatalf("record %+v", img)
	}
	again := ann.mustUpload("copy.png", pngOf(t, 800, 400))
	if again.ID == img.ID || a.countRows("blobs") != 1 {
		t.Fatalf("the same bytes twice: %d blobs", a.countRows("blobs"))
	}
	html := ann.mustUpload("page.html", []byte("<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"))
	svg := ann.mustUpload("logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))

	res := ann.get(fmt.Sprintf("/api/files/%d", img.ID))
	mustStatus(t, res, 200)
	if res.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "inline") ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("image headers %v", res.Header)
	}
	for _, f := range []fileOut{html, svg} {
		res := ann.get(fmt.Sprintf("/api/files/%d", f.ID))
		mustStatus(t, res, 200)
		if res.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") ||
			!strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("%s served %v", f.Name, res.Header)
		}
	}
	res = ann.get(fmt.Sprintf("/api/files/%d/thumbnail", img.ID))
	mustStatus(t, res, 200)
	cfg, _, err := image.DecodeConfig(res.Body)
	if err != nil || cfg.Width != 320 || cfg.Height != 160 {
		t.Fatalf("thumbnail %+v %v", cfg, err)
	}
	mustStatus(t, ann.get(fmt.Sprintf("/api/files/%d/thumbnail", html.ID)), 404)
	for _, p := range []string{"/api/files/%d", "/api/files/%d/thumbnail"} {
		mustStatus(t, bob.get(fmt.Sprintf(p, img.ID)), 404)
	}
	r, _ := bob.api("DELETE", fmt.Sprintf("/api/files/%d", img.ID), nil)
	mustStatus(t, r, 404)

	var list struct {
		Files []fileOut `json:"files"`
		Used  int64     `json:"used_bytes"`
		Quota int64     `json:"quota_bytes"`
	}
	ann.apiJSON("GET", "/api/files", nil, 200, &list)
	if len(list.Files) != 4 || list.Quota != 1<<30 || list.Used != img.Size+html.Size+svg.Size {
		t.Fatalf("list %+v", list)
	}
	ann.apiJSON("DELETE", fmt.Sprintf("/api/files/%d", img.ID), nil, 200, nil)
	ann.apiJSON("DELETE", fmt.Sprintf("/api/files/%d", again.ID), nil, 200, nil)
	if n := a.countRows("blobs"); n != 2 {
		t.Fatalf("%d blobs after the image's two files went, want 2", n)
	}
}

// badPNG is a 1×1 PNG whose header claims w×h pixels.
func badPNG(t testing.TB, w, h uint32) []byte {
	b := pngOf(t, 1, 1)
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// TestFilesBadInput: each bad upload gets a 4xx that names what is wrong,
// and nothing is stored.
func TestFilesBadInput(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) { d.Config.MaxFileBytes = 1 << 20; d.Config.UserQuotaBytes = 3 << 20 })
	ann := a.apiClient("ann")
	good := pngOf(t, 64, 64)
	var zipped bytes.Buffer
	zipped.WriteString("PK\x03\x04")
	zipped.Write(make([]byte, 100))
	for _, c := range []struct {
		name, file string
		data       []byte
		status     int
		says       string
	}{
		{"HTML named .png", "cat.png", []byte("<!DOCTYPE html><html><body>hi</body></html>"), 400, "HTML page"},
		{"truncated image", "cut.png", good[:len(good)/2], 400, "cannot be decoded"},
		{"decompression bomb", "bomb.png", badPNG(t, 50_000, 50_000), 400, "50000 × 50000"},
		{"zip disguised as image", "cat.jpg", zipped.Bytes(), 400, "zip"},
		{"name with separators", "../../etc/passwd", []byte("x"), 400, "path separator"},
		{"name with NUL", "a\x00b.txt", []byte("x"), 400, "could not be read"}, // the form's header itself
		{"name of 10,000 characters", strings.Repeat("n", 10_000), []byte("x"), 400, "255"},
		{"over the file limit", "big.txt", bytes.Repeat([]byte("a"), 1<<20+1), 413, "1 MiB a file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, b := ann.upload(c.file, c.data)
			if res.StatusCode != c.status || !strings.Contains(string(b), c.says) {
				t.Fatalf("%d %s, want %d saying %q", res.StatusCode, b, c.status, c.says)
			}
			if n := a.countRows("files") + a.countRows("blobs"); n != 0 {
				t.Fatalf("%d rows stored", n)
			}
		})
	}
	// The quota: three files of 900 KiB fit, the fourth does not.
	for i := range 3 {
		ann.mustUpload(fmt.Sprintf("f%d.txt", i), bytes.Repeat([]byte{'a' + byte(i)}, 900<<10))
	}
	res, b := ann.upload("f4.txt", bytes.Repeat([]byte("z"), 900<<10))
	if res.StatusCode != 413 || !strings.Contains(string(b), "quota of 3 MiB") {
		t.Fatalf("over the quota: %d %s", res.StatusCode, b)
	}
	if n := a.countRows("files"); n != 3 {
		t.Fatalf("%d files", n)
	}
}

// TestFilesUploadOverTheWire: on a real listener, an upload cut off
// halfway and one that trickles past its deadline are refused and store
// nothing, while 100 parallel uploads of one user all land.
func TestFilesUploadOverTheWire(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) { d.Config.UploadDeadline = 2 * time.Second })
	addr := a.listen()
	ann := a.apiClient("ann")
	// Over 1 MiB, the body streams to the handler (fiber's StreamRequestBody):
	// a smaller one is read whole first, within the server's ReadTimeout.
	ctype, body := fileForm(t, "notes.txt", bytes.Repeat([]byte("line of text\n"), 100_000))
	head := fmt.Sprintf("POST /api/files HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ann.apiKey, ctype, len(body))

	// Cut off: half the body, then the connection's write side closes.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte(head))
	_, _ = conn.Write(body[:len(body)/2])
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, _ := io.ReadAll(conn)
	conn.Close()
	if !bytes.HasPrefix(reply, []byte("HTTP/1.1 4")) && len(reply) != 0 {
		t.Fatalf("cut off: %.200s", reply)
	}

	// Slow: 1 KiB every 100 ms, past the 2 s deadline.
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte(head))
	start := time.Now()
	go func() {
		for i := 0; i+1024 < len(body) && time.Since(start) < 8*time.Second; i += 1024 {
			if _, err := conn.Write(body[i : i+1024]); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	slow, err := http.ReadResponse(bufio.NewReader(conn), nil)
	conn.Close()
	if err != nil || slow.StatusCode != http.StatusRequestTimeout || time.Since(start) > 6*time.Second {
		t.Fatalf("slow upload after %s: %v %v", time.Since(start), slow, err)
	}
	if n := a.countRows("files") + a.countRows("blobs"); n != 0 {
		t.Fatalf("%d rows stored by refused uploads", n)
	}

	// 100 at once, each its own bytes.
	var wg sync.WaitGroup
	codes := make([]int, 100)
	for i := range 100 {
		wg.Go(func() {
			ctype, body := fileForm(t, fmt.Sprintf("n%d.txt", i), []byte(strings.Repeat(fmt.Sprintf("file %d\n", i), 1000)))
			req, _ := http.NewRequest("POST", "http://"+addr+"/api/files", bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			req.Header.Set("x-api-key", ann.apiKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			codes[i] = res.StatusCode
			res.Body.Close()
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 201 {
			t.Fatalf("upload %d: %d", i, c)
		}
	}
	if n := a.countRows("files"); n != 100 {
		t.Fatalf("%d files", n)
	}
	mustStatus(t, ann.get("/healthz"), 200)
}

// TestChatWithAttachments: a message holds uploaded files, committed with
// it; the builtin agent says what they are; the messages carry them; a
// held file cannot be deleted; another user's file is 404 and too many
// files 400, either way with nothing sent; deleting the conversation takes
// the files and their blobs.
func TestChatWithAttachments(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	img := ann.mustUpload("dot.png", pngOf(t, 3, 2))
	txt := ann.mustUpload("log.txt", []byte("first line here\nsecond\n"))
	theirs := bob.mustUpload("b.txt", []byte("bob's"))

	res, b := ann.api("POST", "/api/chat", map[string]any{"query": "what are these?", "attachments": []int64{img.ID, theirs.ID}})
	if res.StatusCode != 404 {
		t.Fatalf("another user's file: %d %s", res.StatusCode, b)
	}
	many := make([]int64, 11)
	for i := range many {
		many[i] = img.ID + int64(i)
	}
	res, b = ann.api("POST", "/api/chat", map[string]any{"query": "many", "attachments": many})
	if res.StatusCode != 400 || !strings.Contains(string(b), "10 files a message") {
		t.Fatalf("11 files: %d %s", res.StatusCode, b)
	}
	var hist []apiHistoryOut
	ann.apiJSON("GET", "/api/chat/history", nil, 200, &hist)
	if len(hist) != 0 {
		t.Fatalf("refused sends left %d conversations", len(hist))
	}

	var out apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "what are these?", "attachments": []int64{img.ID, txt.ID}}, 200, &out)
	for _, want := range []string{"You attached dot.png (image/png, ", ", 3×2)", "You attached log.txt (text/plain, 23 bytes), 2 lines; first line: first line here"} {
		if !strings.Contains(out.Response, want) {
			t.Fatalf("reply %q lacks %q", out.Response, want)
		}
	}
	var msgs []struct {
		Role        string `json:"role"`
		Attachments []struct {
			ID          int64  `json:"id"`
			Name        string `json:"name"`
			ContentType string `json:"content_type"`
			Size        int64  `json:"size"`
			Width       *int64 `json:"width"`
		} `json:"attachments"`
	}
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", *out.ExchangeID), nil, 200, &msgs)
	if len(msgs) != 2 || len(msgs[0].Attachments) != 2 || msgs[0].Attachments[0].Name != "dot.png" ||
		*msgs[0].Attachments[0].Width != 3 || msgs[1].Attachments != nil {
		t.Fatalf("messages %+v", msgs)
	}
	r, b := ann.api("DELETE", fmt.Sprintf("/api/files/%d", img.ID), nil)
	if r.StatusCode != 409 {
		t.Fatalf("deleting a held file: %d %s", r.StatusCode, b)
	}
	ann.apiJSON("DELETE", fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), nil, 200, nil)
	if n := a.countRows("files"); n != 1 { // bob's
		t.Fatalf("%d files after the conversation went", n)
	}
	if n := a.countRows("blobs"); n != 1 {
		t.Fatalf("%d blobs after the conversation went", n)
	}
}

// TestComposerAttachments: without JavaScript the composer's form posts
// its file with the message (multipart) and lands on the conversation,
// which shows the file; with htmx the message carries the ids of files
// uploaded before.
func TestComposerAttachments(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	mustStatus(t, ann.get("/chat"), 200)
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("csrf_token", ann.csrf)
	_ = w.WriteField("query", "see the file")
	_ = w.WriteField("exchange_id", "0")
	part, _ := w.CreateFormFile("file", "notes.txt")
	_, _ = part.Write([]byte("alpha\nbeta\n"))
	_ = w.Close()
	req := httptest.NewRequest(http.MethodPost, "/chat/send", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res := ann.do(req)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("no-JS send: %d %s", res.StatusCode, bodyOf(res))
	}
	a.waitTurns()
	page := bodyOf(ann.get(res.Header.Get("Location")))
	if !strings.Contains(page, `data-testid="attachment"`) || !strings.Contains(page, "notes.txt") ||
		!strings.Contains(page, "You attached notes.txt (text/plain, 11 bytes), 2 lines; first line: alpha") {
		t.Fatalf("the conversation does not show the file:\n%s", page)
	}
	f := ann.mustUpload("dot.png", pngOf(t, 4, 4))
	form := url.Values{"query": {"and this"}, "exchange_id": {"0"}, "attachments": {fmt.Sprint(f.ID)}}
	res = ann.htmx("POST", "/chat/send", form)
	mustStatus(t, res, 200)
	a.waitTurns()
	if html := bodyOf(res); !strings.Contains(html, fmt.Sprintf(`data-file-id="%d"`, f.ID)) || !strings.Contains(html, fmt.Sprintf("/api/files/%d/thumbnail", f.ID)) {
		t.Fatalf("the htmx answer lacks the thumbnail:\n%s", html)
	}
}

// TestFilesExportImport: the export has a file line before the exchange
// whose message holds it; after the conversation (and with it the file)
// is deleted, importing the export brings both back, the message holding
// the file with the same bytes; a second import skips what is there.
func TestFilesExportImport(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	img := pngOf(t, 30, 20)
	f := ann.mustUpload("chart.png", img)
	var out apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "the chart", "attachments": []int64{f.ID}}, 200, &out)
	a.waitTurns()
	res, export := ann.api("GET", "/api/export", nil)
	mustStatus(t, res, 200)
	lines := strings.Split(strings.TrimSpace(string(export)), "\n")
	fileAt, exchangeAt := -1, -1
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"type":"file",`):
			fileAt = i
			if !strings.Contains(l, `"uid":"`+f.UID+`"`) || !strings.Contains(l, `"sha256":"`+f.SHA256+`"`) || !strings.Contains(l, `"data":"`) {
				t.Fatalf("file line %.300s", l)
			}
		case strings.HasPrefix(l, `{"type":"exchange",`):
			exchangeAt = i
			if !strings.Contains(l, `"attachments":["`+f.UID+`"]`) {
				t.Fatalf("exchange line lacks the attachment: %.500s", l)
			}
		}
	}
	if fileAt < 0 || exchangeAt < fileAt {
		t.Fatalf("file at line %d, exchange at %d", fileAt, exchangeAt)
	}
	ann.apiJSON("DELETE", fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), nil, 200, nil)
	if a.countRows("files") != 0 {
		t.Fatal("the file outlived its conversation")
	}
	ann.importOK("application/x-ndjson", export)
	if a.countRows("files") != 1 || a.countRows("blobs") != 1 {
		t.Fatalf("after the import: %d files, %d blobs", a.countRows("files"), a.countRows("blobs"))
	}
	var list struct {
		Files []fileOut `json:"files"`
	}
	ann.apiJSON("GET", "/api/files", nil, 200, &list)
	back := list.Files[0]
	if back.UID != f.UID || back.SHA256 != f.SHA256 || *back.Width != 30 {
		t.Fatalf("imported %+v, exported %+v", back, f)
	}
	got := ann.get(fmt.Sprintf("/api/files/%d", back.ID))
	if b, _ := io.ReadAll(got.Body); !bytes.Equal(b, img) {
		t.Fatal("the imported file's bytes differ")
	}
	var hist []apiHistoryOut
	ann.apiJSON("GET", "/api/chat/history", nil, 200, &hist)
	var msgs []struct {
		Attachments []struct {
			ID int64 `json:"id"`
		} `json:"attachments"`
	}
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", hist[0].ID), nil, 200, &msgs)
	if len(msgs) == 0 || len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].ID != back.ID {
		t.Fatalf("imported messages %+v", msgs)
	}
	ann.importOK("application/x-ndjson", export)
	if a.countRows("files") != 1 {
		t.Fatalf("a second import stored the file again: %d", a.countRows("files"))
	}
}

// TestFilesExportImportLargest: a file of the per-file limit (20 MiB,
// 27 MiB of base64 in its export line) goes out through the export and
// back in through the import with the same bytes.
func TestFilesExportImportLargest(t *testing.T) {
	// In parallel with TestBrowser, which mostly waits: an app and a
	// database of its own, no timing, and the tests that measure the
	// process's memory run serially, before any parallel test starts.
	t.Parallel()
	a := newTestApp(t)
	ann := a.apiClient("ann")
	data := make([]byte, 20<<20)
	for i := range data {
		data[i] = byte(i*7919 + i>>9) // not text, not an image: stored and downloadable
	}
	f := ann.mustUpload("big.bin", data)
	if f.Size != int64(len(data)) {
		t.Fatalf("uploaded %d bytes", f.Size)
	}
	var out apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "the big one", "attachments": []int64{f.ID}}, 200, &out)
	a.waitTurns()
	res, export := ann.api("GET", "/api/export", nil)
	mustStatus(t, res, 200)
	if len(export) < 20<<20*4/3 {
		t.Fatalf("the export has %d bytes", len(export))
	}
	ann.apiJSON("DELETE", fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), nil, 200, nil)
	if a.countRows("files") != 0 {
		t.Fatal("the file outlived its conversation")
	}
	got := ann.importOK("application/x-ndjson", export)
	if got.Imported.Exchanges != 1 {
		t.Fatalf("imported %+v", got)
	}
	var list struct {
		Files []fileOut `json:"files"`
	}
	ann.apiJSON("GET", "/api/files", nil, 200, &list)
	if len(list.Files) != 1 || list.Files[0].UID != f.UID || list.Files[0].Size != f.Size {
		t.Fatalf("files after the import: %+v", list.Files)
	}
	back := ann.get(fmt.Sprintf("/api/files/%d", list.Files[0].ID))
	if b, _ := io.ReadAll(back.Body); !bytes.Equal(b, data) {
		t.Fatalf("the imported file's %d bytes differ from the %d sent", len(b), len(data))
	}
}
