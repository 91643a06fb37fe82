package transfer

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// archive/zip already stops at an entry's declared size, so the counting
// reader is a second wall that a real zip cannot reach; here it is alone.
func TestCapReader(t *testing.T) {
	c := &capReader{r: strings.NewReader(strings.Repeat("x", 100)), n: 99, name: "conversations.json"}
	n, err := io.Copy(io.Discard, c)
	if n != 99 || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "unpacks to more bytes than allowed") {
		t.Errorf("past the cap: %d bytes, %v", n, err)
	}
	c = &capReader{r: strings.NewReader(strings.Repeat("x", 100)), n: 100}
	if n, err := io.Copy(io.Discard, c); n != 100 || err != nil {
		t.Errorf("at the cap: %d bytes, %v", n, err)
	}
}

func TestCheckZipDirectory(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"a", "b", "c"} {
		zw.Create(name)
	}
	zw.SetComment(strings.Repeat("c", 1000))
	zw.Close()
	r := bytes.NewReader(buf.Bytes())
	if err := checkZipDirectory(r, int64(buf.Len()), 3); err != nil {
		t.Errorf("3 entries, 3 allowed: %v", err)
	}
	if err := checkZipDirectory(r, int64(buf.Len()), 2); err == nil {
		t.Error("3 entries, 2 allowed: no error")
	}
	if err := checkZipDirectory(strings.NewReader("PK"), 2, 2); err != nil {
		t.Errorf("no end record: %v (left to archive/zip)", err)
	}
}

// Past 65,535 entries the count is in the zip64 end record.
func TestCheckZipDirectoryZip64(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a zip of 70,000 entries")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range 70_000 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: strconv.Itoa(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	r := bytes.NewReader(buf.Bytes())
	if err := checkZipDirectory(r, int64(buf.Len()), 65_000); err == nil || !strings.Contains(err.Error(), "lists 70000 entries") {
		t.Errorf("70,000 entries, 65,000 allowed: %v", err)
	}
	if err := checkZipDirectory(r, int64(buf.Len()), 100_000); err != nil {
		t.Errorf("70,000 entries, 100,000 allowed: %v", err)
	}
}
