package main

import (
	"archive/zip"
	"compress/flate"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// repeated is an endless stream of one letter.
type repeated struct{}

func (repeated) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestImportBombPeakRSS imports, through the real binary, a 1 MB zip whose
// conversations.json holds a 1,000 MiB title: it is refused, saying why,
// and the process's peak resident memory (the kernel's count, not Go's
// heap) stays under a fixed ceiling.
func TestImportBombPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and packs 1,000 MiB")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "palaver.db")
	palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db).ok(t, "user add")

	bomb := filepath.Join(dir, "bomb.zip")
	f, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create("conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	body := io.MultiReader(strings.NewReader(`[{"id":"bomb","title":"`), io.LimitReader(repeated{}, 1000<<20),
		strings.NewReader(`","current_node":"n","mapping":{"n":{"parent":null,"children":[],"message":null}}}]`))
	if _, err := io.Copy(w, body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "import", "--user", "ann", bomb, "--db", db)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "longer than") {
		t.Fatalf("the bomb's import: %v\n%s", err, out)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // KiB → MiB
	t.Logf("refused (%s); peak RSS %d MiB", strings.TrimSpace(string(out)), peak)
	if peak > 160 {
		t.Fatalf("the import of a bomb peaked at %d MiB resident, want at most 160", peak)
	}
}
