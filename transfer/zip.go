package transfer

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// A ChatGPT export zip is read from a temporary copy (archive/zip needs to
// seek; the input is a stream), at most MaxInputBytes of it. conversations.json
// is read, at the top level or inside one folder (the export unzipped and
// zipped again), and of the other entries only the files its messages name
// (zipAssets), each at most MaxFileBytes, which become file items; every
// other entry is ignored and never written anywhere. Still, a zip with an entry whose name leaves the root
// (an absolute path, "..", a backslash, a drive letter) is refused: it is
// not an export ChatGPT made. conversations.json may unpack to at most
// MaxUncompressedBytes, checked against its declared size before reading
// and counted while reading (a declared size can lie).

type zipSource struct {
	*ChatGPTReader
	entry io.Closer
	file  *os.File
}

func (z *zipSource) Close() error {
	err := z.entry.Close()
	return errors.Join(err, removeSpool(z.file))
}

func (o Options) openZip(in io.Reader) (Source, error) {
	f, err := os.CreateTemp(o.TempDir, "palaver-import-*.zip")
	if err != nil {
		return nil, fmt.Errorf("spool the zip: %w", err)
	}
	fail := func(err error) (Source, error) {
		removeSpool(f)
		return nil, err
	}
	size, err := io.Copy(f, in)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return fail(err)
		}
		return fail(fmt.Errorf("spool the zip: %w", err))
	}
	if err := checkZipDirectory(f, size, o.MaxZipEntries); err != nil {
		return fail(err)
	}
	zr, err := zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are checked below, and said which
		return fail(invalid("not a readable zip: %v", err))
	}
	entry, err := findConversations(zr, o.MaxUncompressedBytes)
	if err != nil {
		return fail(err)
	}
	rc, err := entry.Open()
	if err != nil {
		return fail(invalid("zip entry %q: %v", entry.Name, err))
	}
	cr := &capReader{r: rc, n: o.MaxUncompressedBytes, name: entry.Name}
	// The stored-bytes cap is a multiple of the JSON's size, not of the
	// zip's (JSON packs well), but of a JSON at most zipExpansion times
	// the zip: a small zip that unpacks to a mountain of valid messages
	// stores no more than that. The declared size cannot lie by much: past
	// MaxUncompressedBytes it is refused, and archive/zip checks it at the
	// end, which an import reads to before it stores anything.
	json := min(entry.UncompressedSize64, uint64(o.MaxUncompressedBytes), uint64(zipExpansion*size))
	o.InputSize = max(o.InputSize, size, int64(json))
	rd, err := o.NewChatGPTReader(zipErrors{cr, entry.Name})
	if err != nil {
		rc.Close()
		return fail(err)
	}
	rd.assets = newZipAssets(zr, entry)
	return &zipSource{ChatGPTReader: rd, entry: rc, file: f}, nil
}

// zipAssets finds the files of a ChatGPT export zip by the ids its
// messages give them: ChatGPT names an uploaded image or file
// "file-XXXX-photo.png" (or "file_XXXX-….png", or the id alone, with or
// without an extension), at the top level or in a folder (generated
// images: "dalle-generations/…"). Only entries a message names are read.
type zipAssets struct {
	byBase []zipAsset // sorted by base name
	byName map[string]*zip.File
}

type zipAsset struct {
	base string
	file *zip.File
}

func newZipAssets(zr *zip.Reader, conversations *zip.File) *zipAssets {
	z := &zipAssets{byName: map[string]*zip.File{}}
	for _, f := range zr.File {
		if f == conversations || f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		if _, dup := z.byName[f.Name]; dup {
			continue // the first of two entries of one name, as find gives it
		}
		z.byName[f.Name] = f
		z.byBase = append(z.byBase, zipAsset{base: path.Base(f.Name), file: f})
	}
	sort.SliceStable(z.byBase, func(i, j int) bool { return z.byBase[i].base < z.byBase[j].base })
	return z
}

func (z *zipAssets) lookup(id string) *zip.File {
	if id == "" || strings.ContainsAny(id, "/\\") {
		return nil
	}
	i := sort.Search(len(z.byBase), func(i int) bool { return z.byBase[i].base >= id })
	for ; i < len(z.byBase) && strings.HasPrefix(z.byBase[i].base, id); i++ {
		rest := z.byBase[i].base[len(id):]
		if rest == "" || rest[0] == '-' || rest[0] == '.' {
			return z.byBase[i].file
		}
	}
	return nil
}

func (z *zipAssets) find(id string) (string, bool) {
	if f := z.lookup(id); f != nil {
		return f.Name, true
	}
	return "", false
}

func (z *zipAssets) read(name string, max int64) ([]byte, error) {
	f := z.byName[name]
	if f == nil {
		return nil, invalid("zip entry %q is not there", clip(name))
	}
	if f.UncompressedSize64 > uint64(max) {
		return nil, &LimitError{What: "the file", Max: max, Unit: "bytes", Have: int64(min(f.UncompressedSize64, 1<<62))}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, invalid("zip entry %q: %v", clip(name), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(zipErrors{rc, name}, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &LimitError{What: "the file", Max: max, Unit: "bytes"}
	}
	return data, nil
}

// zipExpansion is how many times its zip's size a conversations.json counts
// at most, for the stored-bytes cap: ChatGPT's exports pack 4 to 8 times.
const zipExpansion = 20

func removeSpool(f *os.File) error {
	err := f.Close()
	if rmErr := os.Remove(f.Name()); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// findConversations checks every entry's name and picks conversations.json.
func findConversations(zr *zip.Reader, maxBytes int64) (*zip.File, error) {
	var top *zip.File
	var nested []*zip.File
	for _, f := range zr.File {
		if !safeZipName(f.Name) {
			return nil, invalid("zip entry %q points outside the archive", clip(f.Name))
		}
		if f.FileInfo().IsDir() {
			continue
		}
		dir, base := path.Split(strings.TrimPrefix(f.Name, "./"))
		if base != "conversations.json" {
			continue
		}
		switch dir = strings.TrimSuffix(dir, "/"); {
		case dir == "":
			top = f
		case !strings.Contains(dir, "/") && dir != "__MACOSX":
			nested = append(nested, f)
		}
	}
	entry := top
	if entry == nil {
		switch len(nested) {
		case 0:
			return nil, invalid("the zip has no conversations.json")
		case 1:
			entry = nested[0]
		default:
			return nil, invalid("the zip has %d conversations.json in different folders (%s, %s…)", len(nested), nested[0].Name, nested[1].Name)
		}
	}
	if entry.UncompressedSize64 > uint64(maxBytes) {
		return nil, invalid("%s unpacks to %d bytes, more than the %d allowed", entry.Name, entry.UncompressedSize64, maxBytes)
	}
	return entry, nil
}

// safeZipName reports whether name stays inside the archive's root when
// unpacked, on any system.
func safeZipName(name string) bool {
	if name == "" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") {
		return false
	}
	if len(name) >= 2 && name[1] == ':' { // C:foo
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}

// capReader fails past n bytes: the declared size was a lie (a bomb).
type capReader struct {
	r    io.Reader
	n    int64
	name string
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		var one [1]byte
		if k, err := c.r.Read(one[:]); k == 0 && err != nil {
			return 0, err
		}
		return 0, invalid("%s unpacks to more bytes than allowed (a decompression bomb?)", c.name)
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}

// zipErrors makes archive/zip's complaints (a checksum, a size that differs
// from the declared one, a corrupt stream) the file's fault (ErrInvalid)
// rather than a reading failure.
type zipErrors struct {
	r    io.Reader
	name string
}

func (z zipErrors) Read(p []byte) (int, error) {
	k, err := z.r.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) {
		err = invalid("zip entry %s: %v", z.name, err)
	}
	return k, err
}

// checkZipDirectory reads the zip's end record and refuses a directory of
// more than maxEntries entries before archive/zip allocates one struct per
// entry (a few hundred bytes each: a 256 MiB zip of empty entries would
// otherwise cost gigabytes). A file without a readable end record is left
// to archive/zip to refuse.
func checkZipDirectory(r io.ReaderAt, size int64, maxEntries int) error {
	const eocdLen, maxComment = 22, 65535
	tail := int64(eocdLen + maxComment)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return fmt.Errorf("read the zip's directory: %w", err)
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return nil
	}
	entries := uint64(binary.LittleEndian.Uint16(buf[i+10:]))
	if entries == 0xffff && i >= 20 && bytes.Equal(buf[i-20:i-16], []byte("PK\x06\x07")) {
		// zip64: the locator before the end record points at the real count.
		off := int64(binary.LittleEndian.Uint64(buf[i-20+8:]))
		var rec [56]byte
		if off >= 0 && off <= size-56 {
			if _, err := r.ReadAt(rec[:], off); err == nil && bytes.Equal(rec[:4], []byte("PK\x06\x06")) {
				entries = binary.LittleEndian.Uint64(rec[32:])
			}
		}
	}
	if entries > uint64(maxEntries) {
		return invalid("the zip lists %d entries, more than the %d allowed", entries, maxEntries)
	}
	return nil
}
