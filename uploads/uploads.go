// Package uploads checks an uploaded file before it is stored: its name,
// its type sniffed from its bytes (never from the name), and, for an image,
// its size in pixels within bounds, decoded to make a thumbnail re-encoded
// without any of the original's metadata (EXIF, GPS). It knows nothing of
// HTTP or the database.
package uploads

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"
	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"palaver/models"
)

// Bounds of what is decoded and kept.
const (
	MaxNameBytes = 255        // a file's name, in bytes of UTF-8
	MaxPixels    = 40_000_000 // an image's width × height (a 40 MP photo); more is refused unread
	MaxSide      = 20_000     // an image's width or height
	ThumbSide    = 320        // a thumbnail's longer side, at most
)

// Refused is an upload refused for what it is; Reason says why to a person.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return e.Reason }

func refused(format string, args ...any) error { return &Refused{Reason: fmt.Sprintf(format, args...)} }

// Info is what Inspect learnt of a file.
type Info struct {
	Name        string // cleaned
	ContentType string // sniffed
	Kind        string // models.FileImage, FileText, FilePDF or FileOther
	SHA256      string
	Width       int64 // images only
	Height      int64
	Thumbnail   []byte // images only: PNG or JPEG, re-encoded
}

// imageTypes are the images Palaver decodes and shows, by sniffed type.
var imageTypes = map[string]func([]byte) (image.Image, error){
	"image/png":  func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) },
	"image/jpeg": func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) },
	"image/gif":  func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) },
	"image/webp": func(b []byte) (image.Image, error) { return webp.Decode(bytes.NewReader(b)) },
}

// configs read an image's header only: its size before any pixel is
// decoded (a 1×1 PNG may claim 50,000 × 50,000).
var configs = map[string]func([]byte) (image.Config, error){
	"image/png":  func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
	"image/jpeg": func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
	"image/gif":  func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) },
	"image/webp": func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) },
}

// imageNames are the extensions that say "an image": a file named so whose
// bytes are something else (an HTML page, a zip) is refused.
var imageNames = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true,
	".bmp": true, ".svg": false, ".ico": true, ".tif": true, ".tiff": true, ".avif": true, ".heic": true}

// CleanName checks a file's name as the client gave it: a name with a path
// separator, a NUL or another control character, or over MaxNameBytes, is
// refused; an empty one is "file".
func CleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case !utf8.ValidString(name):
		return "", refused("the file's name is not valid UTF-8")
	case len(name) > MaxNameBytes:
		return "", refused("the file's name is %d bytes long; the limit is %d", len(name), MaxNameBytes)
	case strings.ContainsAny(name, `/\`):
		return "", refused("the file's name holds a path separator (/ or \\)")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", refused("the file's name holds a control character")
	case name == "." || name == "..":
		return "", refused("%q is not a file's name", name)
	case name == "":
		return "file", nil
	}
	return name, nil
}

// Inspect checks a file's name and bytes and says what it is. An image is
// decoded only when its header's size is within MaxPixels and MaxSide, and
// must decode whole; a name that says image over bytes that are not one is
// refused.
func Inspect(name string, data []byte) (*Info, error) {
	clean, err := CleanName(name)
	if err != nil {
		return nil, err
	}
	mt := mimetype.Detect(data)
	ctype := mt.String()
	base, _, _ := strings.Cut(ctype, ";")
	sum := sha256.Sum256(data)
	info := &Info{Name: clean, ContentType: ctype, Kind: kindOf(base, data), SHA256: hex.EncodeToString(sum[:])}
	decode, isImage := imageTypes[base]
	if !isImage {
		if imageNames[strings.ToLower(path.Ext(clean))] {
			return nil, refused("the file is named as an image but its content is %s", describe(mt))
		}
		return info, nil
	}
	cfg, err := configs[base](data)
	if err != nil {
		return nil, refused("the image cannot be read: %s", plain(err))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxSide || cfg.Height > MaxSide ||
		int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, refused("the image is %d × %d pixels; the limit is %d pixels on a side and %d in all",
			cfg.Width, cfg.Height, MaxSide, MaxPixels)
	}
	img, err := decode(data)
	if err != nil {
		return nil, refused("the image cannot be decoded (cut short or damaged): %s", plain(err))
	}
	b := img.Bounds()
	info.Width, info.Height = int64(b.Dx()), int64(b.Dy())
	if info.Thumbnail, err = thumbnail(img, base == "image/jpeg"); err != nil {
		return nil, err
	}
	return info, nil
}

// kindOf is what a file of sniffed type base is to the model.
func kindOf(base string, data []byte) string {
	switch {
	case imageTypes[base] != nil:
		return models.FileImage
	case base == "application/pdf":
		return models.FilePDF
	case (strings.HasPrefix(base, "text/") || textTypes[base]) && utf8.Valid(data):
		return models.FileText
	}
	return models.FileOther
}

// textTypes are the non-text/* types that are text a model reads.
var textTypes = map[string]bool{"application/json": true, "application/xml": true, "application/x-ndjson": true,
	"application/javascript": true, "application/x-sh": true, "application/x-php": true, "application/x-python": true,
	"image/svg+xml": true, "application/geo+json": true}

func describe(mt *mimetype.MIME) string {
	base, _, _ := strings.Cut(mt.String(), ";")
	for m := mt; m != nil; m = m.Parent() {
		if m.Is("application/zip") {
			return "a zip archive (" + base + ")"
		}
	}
	switch {
	case base == "text/html":
		return "an HTML page"
	case base == "application/zip":
		return "a zip archive"
	case strings.HasPrefix(base, "image/"):
		return "an image of a type Palaver does not show (" + base + ")"
	}
	return base
}

// plain is a decoder's error without its package's prefix.
func plain(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "it ends too soon"
	}
	s := err.Error()
	if _, rest, ok := strings.Cut(s, ": "); ok {
		return rest
	}
	return s
}

// thumbnail scales img to fit ThumbSide and encodes it again: JPEG for a
// photo, PNG otherwise (transparency). Nothing of the original's metadata
// survives the re-encoding.
func thumbnail(img image.Image, photo bool) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > ThumbSide || h > ThumbSide {
		if w >= h {
			w, h = ThumbSide, max(1, h*ThumbSide/w)
		} else {
			w, h = max(1, w*ThumbSide/h), ThumbSide
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	var out bytes.Buffer
	var err error
	if photo {
		err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 82})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&out, dst)
	}
	if err != nil {
		return nil, fmt.Errorf("thumbnail: %w", err)
	}
	return out.Bytes(), nil
}
