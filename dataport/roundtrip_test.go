package dataport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"palaver/dataport"
	"palaver/models"
	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// newStore opens and migrates a temporary SQLite database.
func newStore(t *testing.T) *models.Store {
	t.Helper()
	s, err := models.Open(filepath.Join(t.TempDir(), "palaver.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// exportOf exports a user's data and reads it back as items.
func exportOf(t *testing.T, s *models.Store, userID int64) ([]transfer.Item, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := dataport.Export(context.Background(), s, userID, &buf, nil); err != nil {
		t.Fatal(err)
	}
	r, err := transfer.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var items []transfer.Item
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return items, buf.Bytes()
		}
		if err != nil {
			t.Fatalf("the export does not read back: %v", err)
		}
		items = append(items, it)
	}
}

// fileOf writes generated pages and exchanges as an export file.
func fileOf(t *testing.T, pages []*transfer.Page, exchanges []*transfer.Exchange) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := transfer.NewWriter(&buf, transfertest.New(1).Time())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := w.WritePage(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range exchanges {
		if err := w.WriteExchange(e); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestRoundTrip: random logs (forks, error rows, tool entries, feedback,
// Unicode) imported into one account, exported, imported into another and
// exported again give the same content; a second import of the same file
// imports nothing.
func TestRoundTrip(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		s := newStore(t)
		ctx := context.Background()
		ann, err := s.CreateUser(ctx, "ann", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := s.CreateUser(ctx, "bob", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		pages, exchanges := transfertest.New(seed).Export(4, 30)
		file := fileOf(t, pages, exchanges)
		n, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
		if err != nil {
			t.Fatalf("seed %d: import: %v", seed, err)
		}
		if n.Pages != len(pages) || n.Exchanges != len(exchanges) {
			t.Fatalf("seed %d: imported %+v of %d pages and %d exchanges", seed, n, len(pages), len(exchanges))
		}
		again, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
		if err != nil || again.Pages != 0 || again.Exchanges != 0 || again.SkippedExchanges != len(exchanges) || again.SkippedPages != len(pages) {
			t.Fatalf("seed %d: a second import: %+v, %v", seed, again, err)
		}
		first, firstFile := exportOf(t, s, ann.ID)
		if _, err := dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{}); err != nil {
			t.Fatalf("seed %d: import into another account: %v", seed, err)
		}
		second, _ := exportOf(t, s, bob.ID)
		if err := transfertest.EqualContent(first, second); err != nil {
			t.Fatalf("seed %d: the round trip changed the content: %v", seed, err)
		}
	}
}

// TestImportRefusedStoresNothing: a file that fails part-way (a page chat
// whose page is nowhere) stores nothing of what came before it.
func TestImportRefusedStoresNothing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, err := s.CreateUser(ctx, "ann", "x", false)
	if err != nil {
		t.Fatal(err)
	}
	g := transfertest.New(7)
	pages, exchanges := g.Export(1, 5)
	orphan := g.Exchange(nil, nil)
	missing := g.UID()
	orphan.Scope, orphan.PageUID, orphan.JobID = "page", &missing, nil
	file := fileOf(t, pages, append(exchanges, orphan))
	_, err = dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
	if !errors.Is(err, models.ErrImport) || !strings.Contains(err.Error(), "line") {
		t.Fatalf("import of a file with an orphan page chat: %v", err)
	}
	if items, _ := exportOf(t, s, ann.ID); len(items) != 0 {
		t.Fatalf("a refused file left %d items", len(items))
	}
	// A truncated file: refused, nothing stored.
	good := fileOf(t, pages, exchanges)
	_, err = dataport.Import(ctx, s, ann.ID, bytes.NewReader(good[:len(good)-7]), transfer.Options{})
	if !errors.Is(err, transfer.ErrInvalid) {
		t.Fatalf("a truncated file: %v", err)
	}
	if items, _ := exportOf(t, s, ann.ID); len(items) != 0 {
		t.Fatalf("a truncated file left %d items", len(items))
	}
}
