package migrations_test

import (
	"context"
	"slices"
	"testing"
)

// forkAttachmentsVersion leaves the copy of a fork's attachments to the
// fork's own statement.
const forkAttachmentsVersion = 33

// TestForkAttachmentsSQLite: before, a copied row takes its original's
// attachments by trigger; up, the trigger is gone (the fork copies them
// itself, models' TestFilesDedupeAttachAndRelease), and nothing else
// changes; down, the trigger copies again.
func TestForkAttachmentsSQLite(t *testing.T) {
	ctx := context.Background()
	_, db, p := sqliteBefore(t, forkAttachmentsVersion)
	for _, q := range []string{
		`INSERT INTO blobs (id, user_id, sha256, size, data, created_at) VALUES (1001, 1001, 'x', 3, x'616263', '2026-01-01 10:00:00+00:00')`,
		`INSERT INTO files (id, uid, user_id, blob_id, name, content_type, kind, size, sha256, created_at) VALUES
			(1001, 'f1', 1001, 1001, 'a.txt', 'text/plain', 'text', 3, 'x', '2026-01-01 10:00:00+00:00'),
			(1002, 'f2', 1001, 1001, 'b.txt', 'text/plain', 'text', 3, 'x', '2026-01-01 10:00:00+00:00')`,
		`INSERT INTO message_attachments (message_id, file_id, position) VALUES (1001, 1002, 0), (1001, 1001, 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	copied := func(step string, id int64, want ...string) {
		t.Helper()
		if _, err := db.Exec(`INSERT INTO messages (id, exchange_id, seq, role, content, created_at, copy_of, uid)
			VALUES (?, 1005, ?, 'user', 'tell me about pelicans', '2026-01-01 10:00:00+00:00', 1001, ?)`, id, id, "copy-"+step); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got := stringsOf(t, db, `SELECT CAST(file_id AS TEXT) FROM message_attachments WHERE message_id = ? ORDER BY position`, id)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: a copied row holds files %v, want %v", step, got, want)
		}
	}
	copied("before", 2001, "1002", "1001")
	if _, err := p.UpTo(ctx, forkAttachmentsVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	copied("up", 2002)
	if got := stringsOf(t, db, `SELECT CAST(file_id AS TEXT) FROM message_attachments WHERE message_id IN (1001, 2001) ORDER BY message_id, position`); !slices.Equal(got, []string{"1002", "1001", "1002", "1001"}) {
		t.Fatalf("up: the attachments held before are %v", got)
	}
	if _, err := p.DownTo(ctx, forkAttachmentsVersion-1); err != nil {
		t.Fatalf("down: %v", err)
	}
	copied("down", 2003, "1002", "1001")
	if _, err := p.UpTo(ctx, forkAttachmentsVersion); err != nil {
		t.Fatalf("up again: %v", err)
	}
	copied("up again", 2004)
}
