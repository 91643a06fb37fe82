package models

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestProjectFilesHeld: a file a project holds outlives the message that
// also held it and housekeeping's purges; it cannot be deleted on its own;
// unlinking it, or deleting the project, releases it and its blob; another
// person's project or file is not found.
func TestProjectFilesHeld(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Work")})
		if err != nil {
			t.Fatal(err)
		}
		f := mustFile(t, s, ann.ID, "notes.txt", []byte("the knowledge"))
		theirs := mustFile(t, s, bob.ID, "theirs.txt", []byte("theirs"))
		wantErr(t, s.AddProjectFile(ctx, ann.ID, p.ID, theirs.ID), ErrNotFound, "another person's file")
		wantErr(t, s.AddProjectFile(ctx, bob.ID, p.ID, theirs.ID), ErrNotFound, "another person's project")
		if err := s.AddProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.AddProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
			t.Fatalf("added twice: %v", err)
		}
		_, err = s.ProjectFiles(ctx, bob.ID, p.ID)
		wantErr(t, err, ErrNotFound, "another person's project's files")

		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "look", Attachments: []int64{f.ID}}, "seen")
		if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.AdminPurgeOrphans(ctx, time.Now().Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PurgeUnreferencedBlobs(ctx); err != nil {
			t.Fatal(err)
		}
		files, err := s.ProjectFiles(ctx, ann.ID, p.ID)
		if err != nil || len(files) != 1 || files[0].ID != f.ID {
			t.Fatalf("after the message went: %v, %v", files, err)
		}
		if _, data, err := s.FileData(ctx, ann.ID, f.ID, false); err != nil || string(data) != "the knowledge" {
			t.Fatalf("its bytes: %q, %v", data, err)
		}
		wantErr(t, s.DeleteFile(ctx, ann.ID, f.ID), ErrFileInProject, "deleting a project's file")
		wantErr(t, s.RemoveProjectFile(ctx, bob.ID, p.ID, f.ID), ErrNotFound, "another person removing it")

		// Unlinked from its only project: it goes, with its blob.
		if err := s.RemoveProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "id = ?", f.ID); n != 0 {
			t.Fatalf("the unlinked file stays (%d)", n)
		}
		if n := count(t, s, "blobs", "id = ?", f.BlobID); n != 0 {
			t.Fatalf("its blob stays (%d)", n)
		}
		wantErr(t, s.RemoveProjectFile(ctx, ann.ID, p.ID, f.ID), ErrNotFound, "removed twice")

		// Held by a message and the project: the project's deletion
		// leaves it to the message; with the message gone, it goes.
		g := mustFile(t, s, ann.ID, "more.txt", []byte("more"))
		if err := s.AddProjectFile(ctx, ann.ID, p.ID, g.ID); err != nil {
			t.Fatal(err)
		}
		ex, _, _ = mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "look", Attachments: []int64{g.ID}}, "seen")
		if _, _, err := s.DeleteProject(ctx, ann.ID, p.ID, false); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "id = ?", g.ID); n != 1 {
			t.Fatalf("a message still holds it, yet %d files", n)
		}
		if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "id = ?", g.ID); n != 0 {
			t.Fatalf("nothing holds it, yet it stays")
		}
		// Only in a project: the project's deletion takes it.
		p2, _ := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Home")})
		h := mustFile(t, s, ann.ID, "home.txt", []byte("home"))
		if err := s.AddProjectFile(ctx, ann.ID, p2.ID, h.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.DeleteProject(ctx, ann.ID, p2.ID, true); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "user_id = ?", ann.ID); n != 0 {
			t.Fatalf("%d files left after the project went", n)
		}
	})
}

// TestProjectFilesComposed: a project's text files follow its
// instructions, fenced under their names, within the budget; the model is
// told which were cut or left out, and which are not text; the hash
// covers them.
func TestProjectFilesComposed(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		p, _ := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Work"), Instructions: ptr("Be brief.")})
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "hi", ProjectID: &p.ID}, "ok")
		before, err := s.ComposeInstructions(ctx, ann.ID, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		small := mustFile(t, s, ann.ID, "small.md", []byte("Use ```go``` fences.\n"))
		big := mustFile(t, s, ann.ID, "big.txt", []byte(strings.Repeat("b", ProjectFilesBudget)))
		late := mustFile(t, s, ann.ID, "late.txt", []byte("never seen"))
		pic := mustFile(t, s, ann.ID, "pic.png", []byte("not really"))
		if err := s.db.Model(&File{}).Where("id = ?", pic.ID).Updates(map[string]any{"kind": FileImage, "content_type": "image/png"}).Error; err != nil {
			t.Fatal(err)
		}
		for _, f := range []*File{small, big, late, pic} {
			if err := s.AddProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
				t.Fatal(err)
			}
		}
		c, err := s.ComposeInstructions(ctx, ann.ID, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Hash == before.Hash {
			t.Fatal("the hash does not cover the files")
		}
		for _, want := range []string{
			"Be brief.\n\nThe project's files:\n\nFile \"small.md\":\n````\nUse ```go``` fences.\n````",
			"File \"big.txt\":\n```\n" + strings.Repeat("b", ProjectFilesBudget-len("Use ```go``` fences.\n")) + "\n```",
			"Cut short, to stay within 20000 characters of files: \"big.txt\" (the first 19979 characters of its 20000 bytes).",
			"Left out, to stay within 20000 characters of files: \"late.txt\".",
			"Not shown to you (not text): \"pic.png\" (image/png).",
		} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("composed text lacks %q", want)
			}
		}
		if strings.Contains(c.Text, "never seen") || strings.Contains(c.Text, "not really") {
			t.Error("a file left out, or not text, is inlined")
		}
	})
}

// TestImportUndoKeepsTheAccountsProjectFiles: an import whose project
// holds a file the account had before it, and one of its own, is refused
// part-way: the undo takes its project and its file, and leaves the
// account's file as it was.
func TestImportUndoKeepsTheAccountsProjectFiles(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		loose := mustFile(t, s, u.ID, "mine.txt", []byte("the account's own file"))
		sum := sha256.Sum256([]byte("imported bytes"))
		imported := &NewFile{File: File{UID: newUID(), Name: "i.txt", ContentType: "text/plain", Kind: FileText,
			Size: 14, SHA256: hex.EncodeToString(sum[:]), CreatedAt: time.Now()}, Data: []byte("imported bytes")}
		at := time.Now().UTC()
		project := &ExportedProject{Project: Project{UID: newUID(), Name: "Imported", Memory: true, CreatedAt: at, UpdatedAt: at},
			FileUIDs: []string{loose.UID, imported.File.UID}}
		filler := bytes.Repeat([]byte("filler "), importBatchBytes/7+1)
		fsum := sha256.Sum256(filler)
		big := &NewFile{File: File{UID: newUID(), Name: "filler.txt", ContentType: "text/plain", Kind: FileText,
			Size: int64(len(filler)), SHA256: hex.EncodeToString(fsum[:]), CreatedAt: time.Now()}, Data: filler}
		items := []*ImportItem{{File: imported, Where: "line 2"}, {Project: project, Where: "line 3"}, {File: big, Where: "line 4"}}
		n := 0
		_, err := s.Import(ctx, u.ID, func() (*ImportItem, error) {
			if n < len(items) {
				n++
				return items[n-1], nil
			}
			if count(t, s, "project_files", "file_id = ?", loose.ID) != 1 {
				t.Fatal("the first batch did not commit: the test tests nothing")
			}
			return nil, fmt.Errorf("line 5: %w", ErrImport)
		})
		if !errors.Is(err, ErrImport) {
			t.Fatalf("the import: %v", err)
		}
		if n := count(t, s, "projects", "1 = 1"); n != 0 {
			t.Fatalf("%d projects left after the undo", n)
		}
		if n := count(t, s, "files", "uid = ?", imported.File.UID); n != 0 {
			t.Fatal("the import's own file outlived the undo")
		}
		if n := count(t, s, "files", "id = ?", loose.ID); n != 1 {
			t.Fatal("the undo deleted a file the account had before the import")
		}
		if n := count(t, s, "file_holds", "1 = 1"); n != 0 {
			t.Fatalf("%d holds left after the undo", n)
		}
	})
}

// TestProjectFilesPrefix: a text file larger than the budget's bytes is
// read in part, cut at a character (multi-byte ones whole), and said cut.
func TestProjectFilesPrefix(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		p, _ := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Long")})
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "hi", ProjectID: &p.ID}, "ok")
		long := strings.Repeat("é", 3*ProjectFilesBudget) // 6 bytes a budget's character
		f := mustFile(t, s, ann.ID, "long.txt", []byte(long))
		if err := s.AddProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
			t.Fatal(err)
		}
		c, err := s.ComposeInstructions(ctx, ann.ID, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := "File \"long.txt\":\n```\n" + strings.Repeat("é", ProjectFilesBudget) + "\n```"
		if !strings.Contains(c.Text, want) || strings.Contains(c.Text, "\uFFFD") {
			t.Fatalf("the long file is not cut at %d characters", ProjectFilesBudget)
		}
		if !strings.Contains(c.Text, "\"long.txt\" (the first 20000 characters of its 120000 bytes)") {
			t.Fatalf("not said cut: %.300s", c.Text[len(c.Text)-300:])
		}
	})
}
