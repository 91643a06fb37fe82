package uploads

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"palaver/models"
)

// PNG is a w×h image encoded as PNG.
func PNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{200, 10, 10, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bomb is a valid 1×1 PNG whose header claims w×h pixels.
func bomb(t testing.TB, w, h uint32) []byte {
	b := PNG(t, 1, 1)
	// IHDR: 8-byte signature, 4 length, 4 type, then width and height.
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// withEXIF is a JPEG holding an APP1 (EXIF) segment that names a place.
func withEXIF(t testing.TB) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 640, 480)), nil); err != nil {
		t.Fatal(err)
	}
	payload := []byte("Exif\x00\x00GPSLatitude=52.3676 WHEREILIVE")
	seg := append([]byte{0xFF, 0xE1, 0, 0}, payload...)
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	raw := b.Bytes()
	return append(append(append([]byte{}, raw[:2]...), seg...), raw[2:]...)
}

func zipBytes(t testing.TB) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create("a.txt")
	_, _ = w.Write([]byte("hello"))
	_ = z.Close()
	return b.Bytes()
}

func TestInspectRefusesBadInput(t *testing.T) {
	good := PNG(t, 4, 4)
	for _, c := range []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"an HTML page named .png", "cat.png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), "HTML page"},
		{"a zip named .jpg", "cat.jpg", zipBytes(t), "zip archive"},
		{"a truncated PNG", "cut.png", good[:len(good)/2], "cannot be decoded"},
		{"a header only", "cut.png", good[:30], "cannot be"},
		{"a decompression bomb", "bomb.png", bomb(t, 50_000, 50_000), "50000 × 50000"},
		{"a name with a slash", "../etc/passwd", []byte("x"), "path separator"},
		{"a name with a backslash", `..\boot.ini`, []byte("x"), "path separator"},
		{"a name with NUL", "a\x00.txt", []byte("x"), "control character"},
		{"a name of 10,000 characters", strings.Repeat("a", 10_000), []byte("x"), "10000 bytes long"},
		{"a name not UTF-8", "a\xff.txt", []byte("x"), "UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Inspect(c.file, c.data)
			var r *Refused
			if !errors.As(err, &r) || !strings.Contains(r.Reason, c.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.want)
			}
		})
	}
}

func TestInspectSniffsTypes(t *testing.T) {
	for _, c := range []struct {
		file, ctype, kind string
		data              []byte
	}{
		{"notes.md", "text/plain", models.FileText, []byte("# Notes\n\nsome text\n")},
		{"data.csv", "text/csv", models.FileText, []byte("a,b,c\n1,2,3\n4,5,6\n")},
		{"x.json", "application/json", models.FileText, []byte(`{"a": [1, 2, 3]}`)},
		{"page.html", "text/html", models.FileText, []byte("<!DOCTYPE html><html><body>hi</body></html>")},
		{"doc.pdf", "application/pdf", models.FilePDF, []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n%%EOF\n")},
		{"a.bin", "application/zip", models.FileOther, zipBytes(t)},
		{"image-named-txt.txt", "image/png", models.FileImage, PNG(t, 3, 2)},
	} {
		info, err := Inspect(c.file, c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if !strings.HasPrefix(info.ContentType, c.ctype) || info.Kind != c.kind {
			t.Errorf("%s: %s %s, want %s %s", c.file, info.ContentType, info.Kind, c.ctype, c.kind)
		}
	}
}

// TestThumbnailDropsMetadata: a JPEG's EXIF (its GPS position) is not in
// the thumbnail, which fits ThumbSide and keeps the aspect.
func TestThumbnailDropsMetadata(t *testing.T) {
	data := withEXIF(t)
	if !bytes.Contains(data, []byte("WHEREILIVE")) {
		t.Fatal("the test image holds no EXIF: the test proves nothing")
	}
	info, err := Inspect("photo.jpg", data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 640 || info.Height != 480 || info.Kind != models.FileImage {
		t.Fatalf("info %+v", info)
	}
	if bytes.Contains(info.Thumbnail, []byte("WHEREILIVE")) || bytes.Contains(info.Thumbnail, []byte("Exif")) {
		t.Fatal("the thumbnail keeps the EXIF")
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(info.Thumbnail))
	if err != nil || cfg.Width != ThumbSide || cfg.Height != 240 {
		t.Fatalf("thumbnail %+v, %v", cfg, err)
	}
}

// FuzzInspect: whatever the bytes and the name, Inspect never panics, an
// image it accepts is within bounds with a thumbnail that decodes, and a
// name it accepts holds no separator or control character.
func FuzzInspect(f *testing.F) {
	f.Add("a.png", PNG(f, 2, 2))
	f.Add("b.png", bomb(f, 50_000, 50_000))
	f.Add("c.txt", []byte("hello\nworld"))
	f.Add("d.jpg", withEXIF(f))
	f.Add("e.png", []byte("<html>"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		info, err := Inspect(name, data)
		if err != nil {
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("not a refusal: %v", err)
			}
			return
		}
		if strings.ContainsAny(info.Name, "/\\\x00") || len(info.Name) > MaxNameBytes {
			t.Fatalf("accepted name %q", info.Name)
		}
		if info.Kind == models.FileImage {
			if info.Width*info.Height > MaxPixels || len(info.Thumbnail) == 0 {
				t.Fatalf("image %d×%d, thumbnail %d bytes", info.Width, info.Height, len(info.Thumbnail))
			}
			if _, _, err := image.DecodeConfig(bytes.NewReader(info.Thumbnail)); err != nil {
				t.Fatalf("thumbnail: %v", err)
			}
		}
	})
}
