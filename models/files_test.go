package models

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// mustFile stores data as the user's file named name.
func mustFile(t testing.TB, s *Store, userID int64, name string, data []byte) *File {
	t.Helper()
	sum := sha256.Sum256(data)
	f, err := s.CreateFile(context.Background(), NewFile{
		File: File{UserID: userID, Name: name, ContentType: "text/plain; charset=utf-8", Kind: FileText,
			Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])},
		Data: data,
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFilesDedupeAttachAndRelease: the same bytes uploaded twice are one
// blob; a message holds files committed with it; a held file cannot be
// deleted; the conversation's deletion takes its files and their blob, an
// account's deletion takes the rest; a fork's copy holds the same files.
func TestFilesDedupeAttachAndRelease(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		other := mustUser(t, s, "bob")
		a := mustFile(t, s, u.ID, "a.txt", []byte("same bytes"))
		b := mustFile(t, s, u.ID, "b.txt", []byte("same bytes"))
		if a.BlobID != b.BlobID || count(t, s, "blobs", "user_id = ?", u.ID) != 1 {
			t.Fatalf("the same bytes twice: blobs %d and %d", a.BlobID, b.BlobID)
		}
		if used, _ := s.UsedBytes(ctx, u.ID); used != int64(len("same bytes")) {
			t.Fatalf("used = %d", used)
		}
		// Another user's file: not found, and no message is stored.
		theirs := mustFile(t, s, other.ID, "c.txt", []byte("theirs"))
		if _, _, err := s.StartTurn(ctx, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "look", Owner: "o", Attachments: []int64{a.ID, theirs.ID}}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another user's file: %v", err)
		}
		if n := count(t, s, "messages", "1 = 1"); n != 0 {
			t.Fatalf("%d messages stored after a refused attachment", n)
		}
		ex, msg, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "look", Attachments: []int64{b.ID, a.ID}}, "seen")
		got, err := s.Attachments(ctx, u.ID, []int64{msg.ID})
		if err != nil || len(got[msg.ID]) != 2 || got[msg.ID][0].ID != b.ID {
			t.Fatalf("attachments %v, %v", got, err)
		}
		if err := s.DeleteFile(ctx, u.ID, a.ID); !errors.Is(err, ErrFileInUse) {
			t.Fatalf("deleting a held file: %v", err)
		}
		if err := s.DeleteFile(ctx, other.ID, a.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleting another's file: %v", err)
		}
		fork, err := s.Fork(ctx, u.ID, ex.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "message_attachments", "message_id IN (SELECT id FROM messages WHERE exchange_id = ?)", fork.ID); n != 2 {
			t.Fatalf("the fork's copy holds %d files, want 2", n)
		}
		// The copy holds them in their order; so does a fork of the fork
		// (its copies name the original), and one made after the original
		// went (the oldest copy holds them then).
		copyHolds := func(exchangeID int64) {
			t.Helper()
			var id int64
			if err := s.db.Raw("SELECT id FROM messages WHERE exchange_id = ? AND seq = 0", exchangeID).Scan(&id).Error; err != nil {
				t.Fatal(err)
			}
			got, err := s.Attachments(ctx, u.ID, []int64{id})
			if err != nil || len(got[id]) != 2 || got[id][0].ID != b.ID || got[id][1].ID != a.ID {
				t.Fatalf("the copy in exchange %d holds %v, %v; want b.txt then a.txt", exchangeID, got[id], err)
			}
		}
		copyHolds(fork.ID)
		grandchild, err := s.Fork(ctx, u.ID, fork.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		copyHolds(grandchild.ID)
		if n := count(t, s, "message_attachments", "message_id IN (SELECT id FROM messages WHERE exchange_id = ?)", grandchild.ID); n != 2 {
			t.Fatalf("the fork's fork holds %d files, want 2", n)
		}
		if _, err := s.DeleteExchange(ctx, u.ID, grandchild.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteExchange(ctx, u.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		after, err := s.Fork(ctx, u.ID, fork.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		copyHolds(after.ID)
		if _, err := s.DeleteExchange(ctx, u.ID, after.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "user_id = ?", u.ID); n != 2 {
			t.Fatalf("the fork still holds the files: %d left", n)
		}
		if _, err := s.DeleteExchange(ctx, u.ID, fork.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "user_id = ?", u.ID) + count(t, s, "blobs", "user_id = ?", u.ID); n != 0 {
			t.Fatalf("%d files and blobs left after the last conversation holding them went", n)
		}
		// An unattached file goes by itself, and its blob with it.
		c := mustFile(t, s, u.ID, "c.txt", []byte("alone"))
		if err := s.DeleteFile(ctx, u.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "blobs", "user_id = ?", u.ID); n != 0 {
			t.Fatalf("%d blobs left", n)
		}
		if n, _ := s.UnreferencedBlobs(ctx); n != 0 {
			t.Fatalf("%d unreferenced blobs", n)
		}
		_ = time.Second
	})
}

// TestFileQuota: an upload past the quota is refused and stores nothing;
// bytes the user has already do not count again.
func TestFileQuota(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		mustFile(t, s, u.ID, "a", []byte("0123456789"))
		nf := func(data string) NewFile {
			sum := sha256.Sum256([]byte(data))
			return NewFile{File: File{UserID: u.ID, Name: "n", ContentType: "text/plain", Kind: FileText,
				Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, Data: []byte(data)}
		}
		var oq *ErrOverQuota
		if _, err := s.CreateFile(ctx, nf("abcdefghijk"), 20); !errors.As(err, &oq) {
			t.Fatalf("over the quota: %v", err)
		}
		if _, err := s.CreateFile(ctx, nf("0123456789"), 15); err != nil {
			t.Fatalf("bytes already stored: %v", err)
		}
		if n := count(t, s, "blobs", "user_id = ?", u.ID); n != 1 {
			t.Fatalf("%d blobs", n)
		}
	})
}

// TestDeletedFileLeavesTheFile: with secure_delete on, the bytes of a file
// (and of its blob) whose conversation was deleted are not readable in the
// database file or its WAL once checkpointed, as for deleted text
// (TestDeletedContentLeavesTheFile).
func TestDeletedFileLeavesTheFile(t *testing.T) {
	const secret = "quetzalfilepassphrase"
	s := newSQLite(t, Options{})
	ctx := context.Background()
	var dbs []struct {
		Seq  int64
		Name string
		File string
	}
	s.db.Raw("PRAGMA database_list").Scan(&dbs)
	path := dbs[0].File
	contains := func() bool {
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if err == nil && bytes.Contains(b, []byte(secret)) {
				return true
			}
		}
		return false
	}
	u := mustUser(t, s, "ann")
	f := mustFile(t, s, u.ID, "secret.txt", []byte(strings.Repeat("the secret is "+secret+"\n", 50)))
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "see", Attachments: []int64{f.ID}}, "seen")
	if !contains() {
		t.Fatal("the file's bytes are not in the database files: the test proves nothing")
	}
	if _, err := s.DeleteExchange(ctx, u.ID, ex.ID); err != nil {
		t.Fatal(err)
	}
	// The erase watcher's own checkpoint may hold this one back (busy):
	// try again for a while, as TestDeletedContentLeavesTheFile does.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
			t.Fatal(err)
		}
		if !contains() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted file's bytes are still readable in the database files")
		}
	}
}

// TestFilesGoWithRetentionAndImportUndo: retention's deletion of an old
// conversation takes its files and blobs; an import refused part-way
// takes back the files it had stored.
func TestFilesGoWithRetentionAndImportUndo(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		f := mustFile(t, s, u.ID, "old.txt", []byte("an old file"))
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "old", Attachments: []int64{f.ID}}, "ok")
		setUpdatedAt(t, s, ex.ID, time.Now().Add(-400*24*time.Hour))
		if _, err := s.AdminSetRetention(ctx, true, 30); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionScheduled, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "1 = 1") + count(t, s, "blobs", "1 = 1"); n != 0 {
			t.Fatalf("%d files and blobs left after retention took their conversation", n)
		}

		sum := sha256.Sum256([]byte("imported bytes"))
		items := []*ImportItem{{File: &NewFile{File: File{UID: newUID(), Name: "i.txt", ContentType: "text/plain", Kind: FileText,
			Size: 14, SHA256: hex.EncodeToString(sum[:]), CreatedAt: time.Now()}, Data: []byte("imported bytes")}, Where: "line 2"}}
		n := 0
		_, err := s.Import(ctx, u.ID, func() (*ImportItem, error) {
			if n < len(items) {
				n++
				return items[n-1], nil
			}
			return nil, fmt.Errorf("line 3: %w", ErrImport)
		})
		if !errors.Is(err, ErrImport) {
			t.Fatalf("the import: %v", err)
		}
		if n := count(t, s, "files", "1 = 1") + count(t, s, "blobs", "1 = 1"); n != 0 {
			t.Fatalf("%d files and blobs left after the import was undone", n)
		}
	})
}

// TestFilesGoWithTheAccount: deleting an account takes its files and
// blobs, attached or not; a turn reading the files of a message whose
// conversation went finds none, without an error.
func TestFilesGoWithTheAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustUser(t, s, "admin")
		u := mustUser(t, s, "ann")
		a := mustFile(t, s, u.ID, "a.txt", []byte("attached"))
		mustFile(t, s, u.ID, "b.txt", []byte("not attached"))
		ex, msg, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "q", Attachments: []int64{a.ID}}, "ok")
		if _, err := s.DeleteExchange(ctx, u.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if files, err := s.MessageFiles(ctx, u.ID, msg.ID); err != nil || len(files) != 0 {
			t.Fatalf("the files of a deleted message: %v, %v", files, err)
		}
		if _, err := s.DeleteOwnAccount(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "files", "1 = 1") + count(t, s, "blobs", "1 = 1"); n != 0 {
			t.Fatalf("%d files and blobs left after the account went", n)
		}
	})
}

// TestImportUndoKeepsTheAccountsFiles: an import whose message attaches a
// file the account had before it (not yet attached to anything), and a
// file of its own, is refused part-way: the undo takes the import's file
// and its blob, and leaves the account's file, its blob and its bytes.
func TestImportUndoKeepsTheAccountsFiles(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		loose := mustFile(t, s, u.ID, "mine.txt", []byte("the account's own file"))
		sum := sha256.Sum256([]byte("imported bytes"))
		imported := &NewFile{File: File{UID: newUID(), Name: "i.txt", ContentType: "text/plain", Kind: FileText,
			Size: 14, SHA256: hex.EncodeToString(sum[:]), CreatedAt: time.Now()}, Data: []byte("imported bytes")}
		at := time.Now().UTC()
		seq := int64(0)
		msgUID := newUID()
		ex := &ExportedExchange{Exchange: Exchange{UID: newUID(), Title: "imported", AgentType: "router", Scope: ScopeGeneral,
			CreatedAt: at, UpdatedAt: at},
			Messages:    []Message{{UID: msgUID, Seq: &seq, Role: RoleUser, Content: "see these", CreatedAt: at}},
			Attachments: map[string][]string{msgUID: {loose.UID, imported.File.UID}}}
		// A file of importBatchBytes ends the first batch, which commits;
		// the file then fails in the second.
		filler := bytes.Repeat([]byte("filler "), importBatchBytes/7+1)
		fsum := sha256.Sum256(filler)
		big := &NewFile{File: File{UID: newUID(), Name: "filler.txt", ContentType: "text/plain", Kind: FileText,
			Size: int64(len(filler)), SHA256: hex.EncodeToString(fsum[:]), CreatedAt: time.Now()}, Data: filler}
		items := []*ImportItem{{File: imported, Where: "line 2"}, {Exchange: ex, Where: "line 3"}, {File: big, Where: "line 4"}}
		n := 0
		_, err := s.Import(ctx, u.ID, func() (*ImportItem, error) {
			if n < len(items) {
				n++
				return items[n-1], nil
			}
			if count(t, s, "message_attachments", "file_id = ?", loose.ID) != 1 {
				t.Fatal("the first batch did not commit: the test tests nothing")
			}
			return nil, fmt.Errorf("line 5: %w", ErrImport)
		})
		if !errors.Is(err, ErrImport) {
			t.Fatalf("the import: %v", err)
		}
		if n := count(t, s, "exchanges", "1 = 1"); n != 0 {
			t.Fatalf("%d exchanges left after the undo", n)
		}
		if n := count(t, s, "files", "uid = ?", imported.File.UID); n != 0 {
			t.Fatal("the import's own file outlived the undo")
		}
		if n := count(t, s, "files", "id = ?", loose.ID); n != 1 {
			t.Fatal("the undo deleted a file the account had before the import")
		}
		if n := count(t, s, "blobs", "1 = 1"); n != 1 {
			t.Fatalf("%d blobs after the undo, want the account's one", n)
		}
		if n := count(t, s, "file_holds", "1 = 1"); n != 0 {
			t.Fatalf("%d holds left after the undo", n)
		}
		_, data, err := s.FileData(ctx, u.ID, loose.ID, false)
		if err != nil || string(data) != "the account's own file" {
			t.Fatalf("the account's file after the undo: %q, %v", data, err)
		}
	})
}
