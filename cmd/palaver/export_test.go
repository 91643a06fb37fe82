package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"palaver/models"
	"palaver/transfer"
)

// TestExportCommand: palaver export writes the user's data as the export
// format (to stdout, or --out with a line on stderr), and nothing of other
// users'; mistakes are one clear line.
func TestExportCommand(t *testing.T) {
	db := dbPath(t)
	palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db).ok(t, "user add")
	palaver(t, "user", "add", "bob", "--password", "correct horse", "--db", db).ok(t, "user add")
	s := openDB(t, db)
	ctx := context.Background()
	for name, query := range map[string]string{"ann": "ann's pelican question", "bob": "bob's walrus question"} {
		u, err := s.UserByUsername(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, AgentType: "router", Query: query, Owner: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: "an answer"}); err != nil {
			t.Fatal(err)
		}
	}

	r := palaver(t, "export", "--user", "ann", "--db", db)
	r.ok(t, "export to stdout")
	items := readExport(t, r.stdout)
	if len(items) != 1 || items[0].Exchange == nil || items[0].Exchange.Messages[0].Content != "ann's pelican question" {
		t.Fatalf("exported %+v", items)
	}
	if strings.Contains(r.stdout, "walrus") {
		t.Fatal("the export holds another user's message")
	}

	out := filepath.Join(t.TempDir(), "ann.ndjson")
	r = palaver(t, "export", "--user", "ann", "--out", out, "--db", db)
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "exported 0 pages and 1 exchanges (2 messages)") {
		t.Errorf("export to a file: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := readExport(t, string(b)); len(got) != 1 || got[0].Exchange.UID != items[0].Exchange.UID {
		t.Fatalf("the file's export %+v differs from stdout's %+v", got, items)
	}

	// The file imports into another account, once.
	r = palaver(t, "import", "--user", "bob", out, "--db", db)
	r.ok(t, "import")
	if r.stdout != "imported 1 exchanges (2 messages) and 0 pages; skipped 0 exchanges and 0 pages already there\n" {
		t.Errorf("import said %q", r.stdout)
	}
	r = palaver(t, "import", "--user", "bob", out, "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "imported 0 exchanges (0 messages) and 0 pages; skipped 1 exchanges") {
		t.Errorf("a second import: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.ndjson")
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	palaver(t, "import", "--user", "bob", bad, "--db", db).oneLine(t, "import of a cut file", "nothing imported")
	palaver(t, "import", "--user", "bob", "--db", db).oneLine(t, "import without a file", "FILE")

	palaver(t, "export", "--db", db).oneLine(t, "export without --user", "--user")
	palaver(t, "export", "--user", "nobody", "--db", db).oneLine(t, "export of a missing user", "nobody")
}

// readExport reads a whole Palaver export.
func readExport(t *testing.T, s string) []transfer.Item {
	t.Helper()
	r, err := transfer.NewReader(bytes.NewReader([]byte(s)))
	if err != nil {
		t.Fatalf("export header: %v\n%s", err, s)
	}
	var items []transfer.Item
	for {
		it, err := r.Next()
		if err == io.EOF {
			return items
		}
		if err != nil {
			t.Fatalf("export: %v\n%s", err, s)
		}
		items = append(items, it)
	}
}

// TestImportCommandFileLimit: palaver import takes attached files up to
// --file-max-mib (serve's flag, 20 MiB by default): over it, nothing is
// imported and the line names the limit.
func TestImportCommandFileLimit(t *testing.T) {
	db := dbPath(t)
	palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db).ok(t, "user add")
	palaver(t, "user", "add", "bob", "--password", "correct horse", "--db", db).ok(t, "user add")
	s := openDB(t, db)
	ctx := context.Background()
	ann, err := s.UserByUsername(ctx, "ann")
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("two MiB of log lines\n"), (2<<20)/21)
	sum := sha256.Sum256(data)
	if _, err := s.CreateFile(ctx, models.NewFile{File: models.File{UserID: ann.ID, Name: "big.log", ContentType: "text/plain; charset=utf-8",
		Kind: models.FileText, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, Data: data}, 0); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ann.ndjson")
	if r := palaver(t, "export", "--user", "ann", "--out", out, "--db", db); r.code != 0 {
		t.Fatalf("export: exit %d, %s", r.code, r.stderr)
	}

	r := palaver(t, "import", "--user", "bob", "--file-max-mib", "1", out, "--db", db)
	r.oneLine(t, "an import of a file over --file-max-mib", "nothing imported")
	if !strings.Contains(r.stderr, "a file may be at most 1048576 bytes") {
		t.Errorf("the refusal does not name the limit: %q", r.stderr)
	}
	bob, err := s.UserByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if files, err := s.Files(ctx, bob.ID); err != nil || len(files) != 0 {
		t.Fatalf("a refused import stored files: %v, %v", files, err)
	}
	palaver(t, "import", "--user", "bob", out, "--db", db).ok(t, "an import within the default limit")
	if files, err := s.Files(ctx, bob.ID); err != nil || len(files) != 1 || files[0].Size != int64(len(data)) {
		t.Fatalf("imported files: %+v, %v", files, err)
	}
	palaver(t, "import", "--user", "bob", "--file-max-mib", "0", out, "--db", db).oneLine(t, "a limit of 0", "--file-max-mib")
}
