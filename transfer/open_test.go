package transfer_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"palaver/transfer"
	"palaver/transfer/transfertest"
)

func chatgptFile(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type zipEntry struct {
	name string
	body []byte
}

func makeZip(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// openAll reads every item through Open, checking that Close leaves no
// temporary file behind.
func openAll(t testing.TB, o transfer.Options, data []byte) ([]transfer.Item, transfer.Format, error) {
	t.Helper()
	o.TempDir = t.TempDir()
	defer func() {
		if left, _ := os.ReadDir(o.TempDir); len(left) > 0 {
			t.Errorf("%d temporary files left behind", len(left))
		}
	}()
	src, f, err := o.Open(bytes.NewReader(data))
	if err != nil {
		return nil, f, err
	}
	defer src.Close()
	var items []transfer.Item
	for {
		it, err := src.Next()
		if err == io.EOF {
			return items, f, nil
		}
		if err != nil {
			return items, f, err
		}
		items = append(items, it)
	}
}

func TestDetect(t *testing.T) {
	palaver := write(t, transfertest.New(3).Items(1, 2))
	cases := []struct {
		name string
		data []byte
		want transfer.Format
	}{
		{"palaver", palaver, transfer.FormatPalaver},
		{"palaver with a BOM", append([]byte("\xef\xbb\xbf"), palaver...), transfer.FormatPalaver},
		{"any object", []byte(`{"a":1}`), transfer.FormatPalaver}, // its header is checked by the reader
		{"chatgpt", chatgptFile(t), transfer.FormatChatGPT},
		{"chatgpt, current_node only in view", []byte(`[{"current_node":"x"`), transfer.FormatChatGPT},
		{"empty array", []byte(" [\n] "), transfer.FormatChatGPT},
		{"zip", makeZip(t, zipEntry{"conversations.json", chatgptFile(t)}), transfer.FormatChatGPTZip},
		{"empty zip", makeZip(t), transfer.FormatChatGPTZip},
		{"other array", []byte(`[{"messages":[]}]`), transfer.FormatUnknown},
		{"text", []byte("Hello"), transfer.FormatUnknown},
		{"empty", nil, transfer.FormatUnknown},
		{"spaces", []byte(" \n\t"), transfer.FormatUnknown},
		{"gzip", []byte("\x1f\x8b\x08\x00"), transfer.FormatUnknown},
	}
	for _, c := range cases {
		f, r, err := transfer.Detect(bytes.NewReader(c.data))
		if f != c.want {
			t.Errorf("%s: %v, want %v", c.name, f, c.want)
		}
		if (err != nil) != (c.want == transfer.FormatUnknown) || (err != nil && !errors.Is(err, transfer.ErrInvalid)) {
			t.Errorf("%s: error %v", c.name, err)
		}
		if all, _ := io.ReadAll(r); !bytes.Equal(all, c.data) {
			t.Errorf("%s: the reader gave %d bytes of %d", c.name, len(all), len(c.data))
		}
	}
}

func TestOpenEveryFormat(t *testing.T) {
	want, err := readChatGPT(string(chatgptFile(t)))
	if err != nil {
		t.Fatal(err)
	}
	// A file no message names is never read (file-abc, which one names,
	// is TestChatGPTZipAttachments').
	junk := zipEntry{"file-zzz.png", bytes.Repeat([]byte{0x89}, 1000)}
	cases := []struct {
		name string
		data []byte
		f    transfer.Format
	}{
		{"conversations.json", chatgptFile(t), transfer.FormatChatGPT},
		{"zip", makeZip(t, zipEntry{"chat.html", []byte("<html>")}, junk, zipEntry{"conversations.json", chatgptFile(t)},
			zipEntry{"user.json", []byte(`{}`)}), transfer.FormatChatGPTZip},
		{"zip of a folder", makeZip(t, zipEntry{"export/", nil}, zipEntry{"export/conversations.json", chatgptFile(t)}, junk), transfer.FormatChatGPTZip},
		{"zip with a deeper copy", makeZip(t, zipEntry{"conversations.json", chatgptFile(t)}, zipEntry{"a/b/conversations.json", []byte("no")}), transfer.FormatChatGPTZip},
	}
	for _, c := range cases {
		items, f, err := openAll(t, transfer.Options{}, c.data)
		if err != nil || f != c.f {
			t.Errorf("%s: %v, %v", c.name, f, err)
			continue
		}
		if len(items) != len(want) {
			t.Errorf("%s: %d items, want %d", c.name, len(items), len(want))
			continue
		}
		for i, it := range items {
			if it.Exchange.UID != want[i].UID || summary(it.Exchange) != summary(want[i]) {
				t.Errorf("%s: item %d differs", c.name, i)
			}
			if !strings.HasPrefix(it.Where, "conversation ") {
				t.Errorf("%s: Where %q", c.name, it.Where)
			}
		}
	}

	exp := transfertest.New(5).Items(2, 5)
	items, f, err := openAll(t, transfer.Options{}, write(t, exp))
	if err != nil || f != transfer.FormatPalaver {
		t.Fatalf("palaver: %v %v", f, err)
	}
	if err := transfertest.Equal(exp, items); err != nil {
		t.Error(err)
	}
}

func TestOpenRefusesBadZips(t *testing.T) {
	conv := zipEntry{"conversations.json", chatgptFile(t)}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"no conversations.json", makeZip(t, zipEntry{"chat.html", []byte("x")}), "the zip has no conversations.json"},
		{"empty zip", makeZip(t), "the zip has no conversations.json"},
		{"two folders", makeZip(t, zipEntry{"a/conversations.json", nil}, zipEntry{"b/conversations.json", nil}), "the zip has 2 conversations.json in different folders"},
		{"dot-dot", makeZip(t, conv, zipEntry{"../../etc/cron.d/x", []byte("x")}), `zip entry "../../etc/cron.d/x" points outside the archive`},
		{"dot-dot inside", makeZip(t, conv, zipEntry{"a/../../x", nil}), `zip entry "a/../../x" points outside`},
		{"absolute", makeZip(t, zipEntry{"/conversations.json", chatgptFile(t)}), `zip entry "/conversations.json" points outside`},
		{"backslash", makeZip(t, conv, zipEntry{`..\x`, nil}), `zip entry "..\\x" points outside`},
		{"drive", makeZip(t, conv, zipEntry{`C:x`, nil}), `zip entry "C:x" points outside`},
		{"not JSON inside", makeZip(t, zipEntry{"conversations.json", []byte("PK")}), "conversations.json: not a JSON array"},
		{"cut short", makeZip(t, conv)[:300], "not a readable zip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items, _, err := openAll(t, transfer.Options{}, c.data)
			if err == nil {
				t.Fatalf("no error; %d items", len(items))
			}
			if !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, transfer.ErrInvalid) {
				t.Errorf("error %q, want %q (ErrInvalid)", err, c.want)
			}
		})
	}

	var many []zipEntry
	for i := range 20 {
		many = append(many, zipEntry{strings.Repeat("x", i+1), nil})
	}
	if _, _, err := openAll(t, transfer.Options{MaxZipEntries: 10}, makeZip(t, many...)); err == nil ||
		!strings.Contains(err.Error(), "the zip lists 20 entries, more than the 10 allowed") {
		t.Errorf("too many entries: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A 1.1 GiB conversations.json that compresses to about 1.4 MB: refused
// from its declared size, without unpacking it.
func TestOpenRefusesZipBomb(t *testing.T) {
	start := time.Now()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create("conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, io.LimitReader(zeros{}, 1100<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("bomb: %d bytes compressed, made in %v", buf.Len(), time.Since(start))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start = time.Now()
	_, _, err = openAll(t, transfer.Options{}, buf.Bytes())
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, transfer.ErrInvalid) || !strings.Contains(err.Error(), "conversations.json unpacks to 1153433600 bytes, more than the 1073741824 allowed") {
		t.Errorf("a bomb: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("refusing the bomb allocated %d MiB", alloc>>20)
	}
	t.Logf("refused in %v", time.Since(start))

	// The same stream under a declared size that lies: archive/zip stops at
	// the declared size, and that is the file's fault too.
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, flate.BestSpeed)
	fw.Write([]byte("["))
	io.Copy(fw, io.LimitReader(spaces{}, 8<<20))
	fw.Write([]byte("]"))
	fw.Close()
	buf.Reset()
	zw = zip.NewWriter(&buf)
	hw, err := zw.CreateRaw(&zip.FileHeader{Name: "conversations.json", Method: zip.Deflate,
		CompressedSize64: uint64(raw.Len()), UncompressedSize64: 1000})
	if err != nil {
		t.Fatal(err)
	}
	hw.Write(raw.Bytes())
	zw.Close()
	if _, _, err := openAll(t, transfer.Options{}, buf.Bytes()); err == nil || !errors.Is(err, transfer.ErrInvalid) ||
		!strings.Contains(err.Error(), "zip entry conversations.json: zip: not a valid zip file") {
		t.Errorf("a lying declared size: %v", err)
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestOpenTooLarge(t *testing.T) {
	zipped := makeZip(t, zipEntry{"conversations.json", chatgptFile(t)})
	for name, data := range map[string][]byte{
		"palaver": write(t, transfertest.New(9).Items(5, 30)),
		"chatgpt": chatgptFile(t),
		"zip":     zipped,
	} {
		o := transfer.Options{MaxInputBytes: int64(len(data)) - 1}
		_, _, err := openAll(t, o, data)
		if !errors.Is(err, transfer.ErrTooLarge) || errors.Is(err, transfer.ErrInvalid) {
			t.Errorf("%s, one byte over: %v, want ErrTooLarge (and not ErrInvalid)", name, err)
		}
		o.MaxInputBytes = int64(len(data))
		if _, _, err := openAll(t, o, data); err != nil {
			t.Errorf("%s, at the limit: %v", name, err)
		}
	}
	if transfer.DefaultMaxInputBytes != 256<<20 || transfer.DefaultMaxUncompressedBytes != 1<<30 {
		t.Error("the defaults are not the issue's 256 MiB and 1 GiB")
	}
}

var errReset = errors.New("connection reset")

// A dropped connection is not the file's fault: no ErrInvalid, and the
// cause stays visible.
func TestOpenReadErrors(t *testing.T) {
	zipped := makeZip(t, zipEntry{"conversations.json", chatgptFile(t)})
	for name, data := range map[string][]byte{
		"palaver": write(t, transfertest.New(9).Items(5, 30)),
		"chatgpt": chatgptFile(t),
		"zip":     zipped,
	} {
		for _, at := range []int{10, len(data) / 2, len(data) - 1} {
			r := io.MultiReader(bytes.NewReader(data[:at]), iotestErr{errReset})
			src, _, err := transfer.Options{TempDir: t.TempDir()}.Open(r)
			for err == nil {
				_, err = src.Next()
			}
			if src != nil {
				src.Close()
			}
			if !errors.Is(err, errReset) || errors.Is(err, transfer.ErrInvalid) {
				t.Errorf("%s cut at %d by a reset: %v", name, at, err)
			}
		}
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// TestChatGPTZipAttachments: an image a message shows (asset_pointer
// file-service://file-abc) that the zip holds ("file-abc-map.png", in any
// folder) becomes a file item before the first exchange that holds it,
// named without ChatGPT's id, with its bytes; every exchange whose log
// holds that message (its fork's copies too) names it; it comes once.
// Without the entry, the message holds nothing; a file over MaxFileBytes
// is refused, named.
func TestChatGPTZipAttachments(t *testing.T) {
	img := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("map"), 100)...)
	for _, name := range []string{"file-abc-map.png", "export/file-abc-map.png"} {
		data := makeZip(t, zipEntry{"conversations.json", chatgptFile(t)}, zipEntry{name, img}, zipEntry{"file-abcd-other.png", []byte("x")})
		items, _, err := openAll(t, transfer.Options{}, data)
		if err != nil {
			t.Fatal(err)
		}
		var file *transfer.File
		holders := 0
		for _, it := range items {
			if it.File != nil {
				if file != nil {
					t.Fatalf("%s: a second file item %s", name, it.File.Name)
				}
				file = it.File
				continue
			}
			for _, m := range messagesOf(it) {
				if len(m.Attachments) == 0 {
					continue
				}
				if file == nil || len(m.Attachments) != 1 || m.Attachments[0] != file.UID {
					t.Fatalf("%s: message %q holds %v before its file came (%v)", name, m.Content, m.Attachments, file)
				}
				if !strings.Contains(m.Content, "here is a map") {
					t.Fatalf("%s: the wrong message holds the image: %q", name, m.Content)
				}
				holders++
			}
		}
		if file == nil || file.Name != "map.png" || !bytes.Equal(file.Data, img) || file.Size != int64(len(img)) || file.Validate() != nil {
			t.Fatalf("%s: file %+v", name, file)
		}
		if holders == 0 {
			t.Fatalf("%s: no message holds the image", name)
		}
	}
	items, _, err := openAll(t, transfer.Options{}, makeZip(t, zipEntry{"conversations.json", chatgptFile(t)}))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, m := range messagesOf(it) {
			if it.File != nil || len(m.Attachments) > 0 {
				t.Fatalf("without the image in the zip: %+v", it)
			}
		}
	}
	big := makeZip(t, zipEntry{"conversations.json", chatgptFile(t)}, zipEntry{"file-abc.png", img})
	if _, _, err := openAll(t, transfer.Options{MaxFileBytes: 100}, big); !errors.Is(err, transfer.ErrInvalid) || !strings.Contains(err.Error(), "file-abc") {
		t.Fatalf("an image over MaxFileBytes: %v", err)
	}
}
