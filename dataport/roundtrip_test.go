package dataport_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"palaver/dataport"
	"palaver/internal/pgtest"
	"palaver/models"
	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// eachDB runs fn on a fresh SQLite store and, with PALAVER_TEST_POSTGRES,
// on a fresh (wiped and migrated) PostgreSQL one.
func eachDB(t *testing.T, fn func(t *testing.T, s *models.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		s, err := models.Open(filepath.Join(t.TempDir(), "palaver.db"), models.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.Fresh(t)) })
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
	eachDB(t, testRoundTrip)
}

func testRoundTrip(t *testing.T, s *models.Store) {
	ctx := context.Background()
	for i, seed := range []uint64{1, 2, 3} {
		ann, err := s.CreateUser(ctx, fmt.Sprintf("ann%d", i), "x", false)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := s.CreateUser(ctx, fmt.Sprintf("bob%d", i), "x", false)
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
		moved := addProjects(t, s, ann.ID, exchanges)
		first, firstFile := exportOf(t, s, ann.ID)
		var projects, memories, instructions int
		for _, it := range first {
			switch {
			case it.Project != nil:
				projects++
			case it.Memory != nil:
				memories++
			case it.Instructions != nil:
				instructions++
			}
		}
		if projects != 2 || memories != 2 || instructions != 1 {
			t.Fatalf("seed %d: the export holds %d projects, %d memories, %d instructions lines", seed, projects, memories, instructions)
		}
		n, err = dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{})
		if err != nil {
			t.Fatalf("seed %d: import into another account: %v", seed, err)
		}
		if n.Projects != 2 || n.Memories != 2 || !n.Instructions {
			t.Fatalf("seed %d: imported %+v", seed, n)
		}
		second, _ := exportOf(t, s, bob.ID)
		if err := transfertest.EqualContent(first, second); err != nil {
			t.Fatalf("seed %d: the round trip changed the content: %v", seed, err)
		}
		// The chat kept its project; the instructions and memory are there.
		bobEx, err := exchangeByUID(t, s, bob.ID, moved)
		if err != nil || bobEx.ProjectID == nil {
			t.Fatalf("seed %d: bob's copy of the moved chat: %+v, %v", seed, bobEx, err)
		}
		if p, err := s.Project(ctx, bob.ID, *bobEx.ProjectID); err != nil || p.Name != "Inner" || p.ParentID == nil {
			t.Fatalf("seed %d: bob's chat is in %+v, %v", seed, p, err)
		}
		if in, err := s.Instructions(ctx, bob.ID); err != nil || in.About != "I keep bees." || in.Memory {
			t.Fatalf("seed %d: bob's instructions %+v, %v", seed, in, err)
		}
		// Again: everything is there already, and skipped.
		again, err = dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{})
		if err != nil || again.Projects != 0 || again.SkippedProjects != 2 || again.Memories != 0 || again.SkippedMemories != 2 || again.Instructions {
			t.Fatalf("seed %d: a second import into bob: %+v, %v", seed, again, err)
		}
	}
}

// addProjects gives the user two projects (one inside the other), their
// own instructions, two memory entries (one from a chat), and moves the
// first general exchange of the file into the inner project; it returns
// that exchange's uid.
func addProjects(t *testing.T, s *models.Store, userID int64, exchanges []*transfer.Exchange) string {
	t.Helper()
	ctx := context.Background()
	outer, inner := "Outer", "Inner"
	text := "Answer in French."
	po, err := s.CreateProject(ctx, userID, models.ProjectInput{Name: &outer, Instructions: &text})
	if err != nil {
		t.Fatal(err)
	}
	off := false
	pi, err := s.CreateProject(ctx, userID, models.ProjectInput{Name: &inner, ParentID: &po.ID, Memory: &off})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetInstructions(ctx, userID, "I keep bees.", "Briefly.", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMemory(ctx, userID, "Likes honey", nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range exchanges {
		if e.Scope != transfer.ScopeGeneral || e.ForkedFrom != nil {
			continue
		}
		ex, err := exchangeByUID(t, s, userID, e.UID.String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.MoveToProject(ctx, userID, ex.ID, &pi.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddMemory(ctx, userID, "Has two hives", &ex.ID); err != nil {
			t.Fatal(err)
		}
		return e.UID.String()
	}
	t.Fatal("no general exchange to move")
	return ""
}

// TestImportRefusedStoresNothing: a file that fails part-way (a page chat
// whose page is nowhere) stores nothing of what came before it.
func TestImportRefusedStoresNothing(t *testing.T) {
	eachDB(t, testImportRefusedStoresNothing)
}

func testImportRefusedStoresNothing(t *testing.T, s *models.Store) {
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

// TestImportChatGPT: ChatGPT's conversations.json imports (branches as
// forks), a second import of it, or of its zip, imports nothing, and the
// imported account round-trips through a Palaver export like any other.
func TestImportChatGPT(t *testing.T) {
	file, err := os.ReadFile("../transfer/testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, _ := zw.Create("conversations.json")
	w.Write(file)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, _ := s.CreateUser(ctx, "ann", "x", false)
		bob, _ := s.CreateUser(ctx, "bob", "x", false)
		n, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
		if err != nil || n.Exchanges < 2 || n.Messages == 0 {
			t.Fatalf("import: %+v %v", n, err)
		}
		for name, f := range map[string][]byte{"the same file": file, "its zip": zipped.Bytes()} {
			again, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(f), transfer.Options{})
			if err != nil || again.Exchanges != 0 || again.Messages != 0 || again.SkippedExchanges != n.Exchanges {
				t.Fatalf("%s again: %+v %v", name, again, err)
			}
		}
		first, firstFile := exportOf(t, s, ann.ID)
		forks := 0
		for _, it := range first {
			if it.Exchange != nil && it.Exchange.ForkedFrom != nil {
				forks++
			}
		}
		if forks == 0 {
			t.Fatal("no branch became a fork")
		}
		if _, err := dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{}); err != nil {
			t.Fatal(err)
		}
		second, _ := exportOf(t, s, bob.ID)
		if err := transfertest.EqualContent(first, second); err != nil {
			t.Fatalf("the round trip changed the content: %v", err)
		}
	})
}

// TestImportChatGPTImages: a ChatGPT export zip holding the image a
// message shows ("file-abc-map.png" for file-service://file-abc) imports
// it as a file that message holds, with its bytes, width and height; a
// second import skips it; and the account round-trips through a Palaver
// export into another account, the file and its attachment included.
func TestImportChatGPTImages(t *testing.T) {
	file, err := os.ReadFile("../transfer/testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		img.Set(x, x%48, color.RGBA{200, 30, 30, 255})
	}
	var png_ bytes.Buffer
	if err := png.Encode(&png_, img); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for name, body := range map[string][]byte{"conversations.json": file, "file-abc-map.png": png_.Bytes(), "chat.html": []byte("<html>")} {
		w, _ := zw.Create(name)
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, _ := s.CreateUser(ctx, "ann", "x", false)
		bob, _ := s.CreateUser(ctx, "bob", "x", false)
		n, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(zipped.Bytes()), transfer.Options{})
		if err != nil || n.Files != 1 || n.Exchanges < 2 {
			t.Fatalf("import: %+v %v", n, err)
		}
		files, err := s.Files(ctx, ann.ID)
		if err != nil || len(files) != 1 {
			t.Fatalf("files %+v %v", files, err)
		}
		f := files[0]
		if f.Name != "map.png" || f.ContentType != "image/png" || f.Width == nil || *f.Width != 64 || *f.Height != 48 {
			t.Fatalf("the imported image: %+v", f)
		}
		if _, data, err := s.FileData(ctx, ann.ID, f.ID, false); err != nil || !bytes.Equal(data, png_.Bytes()) {
			t.Fatalf("the imported image's bytes differ (%v)", err)
		}
		first, firstFile := exportOf(t, s, ann.ID)
		holders := 0
		for _, it := range first {
			if it.Exchange == nil {
				continue
			}
			for _, m := range it.Exchange.Messages {
				if len(m.Attachments) == 1 && m.Attachments[0].String() == f.UID {
					if !strings.Contains(m.Content, "here is a map") {
						t.Fatalf("the image is held by %q", m.Content)
					}
					holders++
				}
			}
		}
		if holders == 0 {
			t.Fatal("no message holds the imported image")
		}
		again, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(zipped.Bytes()), transfer.Options{})
		if err != nil || again.Files != 0 || again.SkippedFiles != 1 || again.Exchanges != 0 {
			t.Fatalf("the zip again: %+v %v", again, err)
		}
		if _, err := dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{}); err != nil {
			t.Fatalf("the export into another account: %v", err)
		}
		second, _ := exportOf(t, s, bob.ID)
		if err := transfertest.EqualContent(first, second); err != nil {
			t.Fatalf("the round trip changed the content: %v", err)
		}
		if again, err := dataport.Import(ctx, s, bob.ID, bytes.NewReader(firstFile), transfer.Options{}); err != nil || again.Files != 0 || again.SkippedFiles != 1 {
			t.Fatalf("the export into the other account again: %+v %v", again, err)
		}
	})
}

// TestImportNUL: text holding a NUL character, which PostgreSQL cannot
// store, is the file's fault there (refused, naming the line, nothing
// stored), and kept whole on SQLite.
// TestImportNUL: a NUL character in a message (which cut search snippets
// short, and which PostgreSQL cannot store) is stored as U+FFFD, on both
// databases alike.
func TestImportNUL(t *testing.T) {
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, _ := s.CreateUser(ctx, "ann", "x", false)
		g := transfertest.New(11)
		pages, exchanges := g.Export(1, 3)
		exchanges[2].Messages[0].Content = "before\x00after"
		file := fileOf(t, pages, exchanges)
		_, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(file), transfer.Options{})
		items, _ := exportOf(t, s, ann.ID)
		if err != nil || len(items) != 4 {
			t.Fatalf("a NUL: %v, %d items", err, len(items))
		}
		for _, it := range items {
			if e := it.Exchange; e != nil && e.UID == exchanges[2].UID && e.Messages[0].Content != "before\uFFFDafter" {
				t.Errorf("stored as %q", e.Messages[0].Content)
			}
		}
	})
}

// failingWriter fails once n bytes are written.
type failingWriter struct{ n int }

var errWriteFailed = errors.New("the client went away")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errWriteFailed
	}
	w.n -= len(p)
	return len(p), nil
}

// TestExportStopsOnWriteError: an export whose writer fails part-way (the
// client went away) stops with that error, its database reader stopped too.
func TestExportStopsOnWriteError(t *testing.T) {
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, _ := s.CreateUser(ctx, "ann", "x", false)
		pages, exchanges := transfertest.New(5).Export(1, 40)
		if _, err := dataport.Import(ctx, s, ann.ID, bytes.NewReader(fileOf(t, pages, exchanges)), transfer.Options{}); err != nil {
			t.Fatal(err)
		}
		_, whole := exportOf(t, s, ann.ID)
		n, err := dataport.Export(ctx, s, ann.ID, &failingWriter{n: len(whole) / 2}, nil)
		if !errors.Is(err, errWriteFailed) || n.Exchanges == 0 || n.Exchanges >= len(exchanges) {
			t.Fatalf("export to a failing writer: %+v, %v", n, err)
		}
		// The store is free for what comes next (the reader let go).
		if _, err := s.CreateUser(ctx, "bob", "x", false); err != nil {
			t.Fatal(err)
		}
	})
}

// TestImportedFamilyOutlivesItsRoot: a family exported and imported into
// another account is a family there too: deleting the imported root and
// then the first fork leaves the last fork's log whole, each of its
// entries found once by search (its copies were promoted: on SQLite they
// are found through the family the import recorded, migration 00016).
func TestImportedFamilyOutlivesItsRoot(t *testing.T) {
	eachDB(t, func(t *testing.T, s *models.Store) {
		ctx := context.Background()
		ann, err := s.CreateUser(ctx, "ann", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		bob, err := s.CreateUser(ctx, "bob", "x", false)
		if err != nil {
			t.Fatal(err)
		}
		turn := func(exchangeID int64, query, reply string) int64 {
			t.Helper()
			ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann.ID, ExchangeID: exchangeID, Scope: models.ScopeGeneral,
				AgentType: "router", Owner: "test", Query: query})
			if err != nil {
				t.Fatal(err)
			}
			agent := "router"
			if err := s.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: reply, AgentType: &agent}); err != nil {
				t.Fatal(err)
			}
			return ex.ID
		}
		root := turn(0, "alpha words", "bravo words")
		turn(root, "charlie words", "delta words")
		f1, err := s.Fork(ctx, ann.ID, root, 2)
		if err != nil {
			t.Fatal(err)
		}
		turn(f1.ID, "echo words", "foxtrot words")
		f2, err := s.Fork(ctx, ann.ID, f1.ID, 4)
		if err != nil {
			t.Fatal(err)
		}
		turn(f2.ID, "golf words", "hotel words")
		_, file := exportOf(t, s, ann.ID)
		if _, err := dataport.Import(ctx, s, bob.ID, bytes.NewReader(file), transfer.Options{}); err != nil {
			t.Fatal(err)
		}
		heads, err := s.ListExchanges(ctx, bob.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 10})
		if err != nil || len(heads) != 3 {
			t.Fatalf("bob's exchanges: %d, %v", len(heads), err)
		}
		byParent := map[int64]int64{} // parent → fork
		var bobRoot, bobLast int64
		for _, h := range heads {
			if h.ForkedFromID == nil {
				bobRoot = h.ID
			} else {
				byParent[*h.ForkedFromID] = h.ID
			}
		}
		bobFirst := byParent[bobRoot]
		bobLast = byParent[bobFirst]
		if bobRoot == 0 || bobFirst == 0 || bobLast == 0 {
			t.Fatalf("bob's family is not root → fork → fork: %+v", byParent)
		}
		logOf := func() []string {
			msgs, err := s.Messages(ctx, bob.ID, bobLast, nil)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range msgs {
				out = append(out, m.Role+": "+m.Content)
			}
			return out
		}
		want := logOf()
		if len(want) != 6 {
			t.Fatalf("bob's last fork reads %v", want)
		}
		for _, gone := range []int64{bobRoot, bobFirst} {
			if _, err := s.DeleteExchange(ctx, bob.ID, gone); err != nil {
				t.Fatal(err)
			}
			if got := logOf(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("after deleting %d the last fork reads %v, want %v", gone, got, want)
			}
			for _, word := range []string{"alpha", "bravo", "echo", "foxtrot", "golf", "hotel"} {
				hits, err := s.Search(ctx, bob.ID, models.SearchQuery{Terms: models.ParseSearch(word), Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, h := range hits {
					if h.Role != models.RoleTitle {
						n++
					}
				}
				if n != 1 {
					t.Errorf("after deleting %d, %q is found %d times in bob's messages, want once", gone, word, n)
				}
			}
		}
	})
}

// exchangeByUID finds one of the user's exchanges by its uid.
func exchangeByUID(t *testing.T, s *models.Store, userID int64, uid string) (*models.Exchange, error) {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := s.ExportExchanges(ctx, userID, func(e *models.ExportedExchange) error {
		if e.UID == uid {
			id = e.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Exchange(ctx, userID, id)
}
