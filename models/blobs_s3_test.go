package models

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"palaver/internal/pgtest/pgshared"
	"palaver/internal/s3test"
)

// eachS3DB runs fn on a fresh SQLite store and (with PALAVER_TEST_POSTGRES)
// a fresh PostgreSQL one, each keeping its blobs' bytes on its own real S3
// server (versitygw, PALAVER_TEST_S3_SERVER).
func eachS3DB(t *testing.T, fn func(t *testing.T, s *Store, srv *s3test.Server)) {
	t.Helper()
	open := func(t *testing.T, dsn string) (*Store, *s3test.Server) {
		srv := s3test.Start(t)
		cfg, err := ParseBlobStore(srv.URL(), srv.Env)
		if err != nil {
			t.Fatal(err)
		}
		cfg.OrphanGrace = time.Nanosecond // the tests run no upload while they sweep
		s, err := Open(dsn, Options{Blobs: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, srv
	}
	t.Run("sqlite", func(t *testing.T) {
		s, srv := open(t, filepath.Join(t.TempDir(), "palaver.db"))
		if _, err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, s, srv)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgshared.Take(t)
		s, srv := open(t, dsn)
		sqlDB, err := s.SQL()
		if err != nil {
			t.Fatal(err)
		}
		pgshared.Wipe(t, sqlDB)
		if _, err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, s, srv)
	})
}

// imageFile is an upload of an image (its "thumbnail" some other bytes).
func imageFile(userID int64, data, thumb []byte) NewFile {
	sum := sha256.Sum256(data)
	return NewFile{File: File{UserID: userID, Name: "pic.png", ContentType: "image/png", Kind: FileImage,
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, Data: data, Thumbnail: thumb}
}

// TestS3BlobStore: with --blob-store s3://…, an upload's bytes are objects
// in the bucket (on disk in the server's folder) and its row holds none;
// the same bytes twice are one object; reads come back byte-identical;
// every way a blob row goes (a file, a conversation, an account) deletes
// its objects once the queue drains; an object no row names is counted
// and swept, the named ones kept; a server that is down refuses the
// upload and stores no row.
func TestS3BlobStore(t *testing.T) {
	eachS3DB(t, func(t *testing.T, s *Store, srv *s3test.Server) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		data := bytes.Repeat([]byte("the bytes of a file "), 5000)
		a := mustFile(t, s, u.ID, "a.txt", data)
		keys := srv.Keys(t)
		if len(keys) != 1 || !strings.HasPrefix(keys[0], "blobs/"+strconv.FormatInt(u.ID, 10)+"/"+a.SHA256+"/") {
			t.Fatalf("objects after one upload: %v", keys)
		}
		if files := srv.Files(t); !slices.Equal(files, keys) {
			t.Fatalf("on the server's disk %v, want %v", files, keys)
		}
		var row Blob
		if err := s.db.Where("id = ?", a.BlobID).Take(&row).Error; err != nil {
			t.Fatal(err)
		}
		if len(row.Data) != 0 || row.ObjectKey == nil || *row.ObjectKey != keys[0] || row.Size != int64(len(data)) {
			t.Fatalf("row: %d bytes of data, key %v, size %d", len(row.Data), row.ObjectKey, row.Size)
		}
		// Dedupe: the same bytes again are the same blob and object.
		b := mustFile(t, s, u.ID, "b.txt", data)
		if b.BlobID != a.BlobID || !slices.Equal(srv.Keys(t), keys) {
			t.Fatalf("the same bytes twice: blobs %d, %d; objects %v", a.BlobID, b.BlobID, srv.Keys(t))
		}
		if used, _ := s.UsedBytes(ctx, u.ID); used != int64(len(data)) {
			t.Fatalf("used = %d", used)
		}
		// Over the quota: refused, nothing left in the bucket.
		big := imageFile(u.ID, bytes.Repeat([]byte("x"), 10), nil)
		var oq *ErrOverQuota
		if _, err := s.CreateFile(ctx, big, int64(len(data))+5); !errors.As(err, &oq) || !slices.Equal(srv.Keys(t), keys) {
			t.Fatalf("over the quota: %v, objects %v", err, srv.Keys(t))
		}
		_, got, err := s.FileData(ctx, u.ID, b.ID, false)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes (%v), want %d identical", len(got), err, len(data))
		}
		// A project's knowledge reads only a prefix: a ranged read.
		if got, err := s.readBlob(ctx, u.ID, a.BlobID, false, 7); err != nil || string(got) != "the byt" {
			t.Fatalf("the first 7 bytes: %q, %v", got, err)
		}
		// An image: its thumbnail is an object of its own.
		img, err := s.CreateFile(ctx, imageFile(u.ID, []byte("image bytes"), []byte("thumb bytes")), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, th, err := s.FileData(ctx, u.ID, img.ID, true); err != nil || string(th) != "thumb bytes" {
			t.Fatalf("thumbnail %q, %v", th, err)
		}
		if _, th, err := s.FileData(ctx, u.ID, a.ID, true); err != nil || len(th) != 0 {
			t.Fatalf("a text file's thumbnail %q, %v", th, err)
		}
		if n := len(srv.Keys(t)); n != 3 {
			t.Fatalf("%d objects, want 3 (text, image, thumbnail)", n)
		}

		// A conversation's files go with it, their objects after the
		// queue drains: the turn reads them through the store first.
		_, msg, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: "look", Attachments: []int64{a.ID, b.ID, img.ID}}, "seen")
		mf, err := s.MessageFiles(ctx, u.ID, msg.ID)
		if err != nil || len(mf) != 3 || !bytes.Equal(mf[0].Data, data) || string(mf[2].Data) != "image bytes" {
			t.Fatalf("message files: %d, %v", len(mf), err)
		}
		if _, err := s.DeleteExchange(ctx, u.ID, msg.ExchangeID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "blobs", "user_id = ?", u.ID); n != 0 {
			t.Fatalf("%d blobs left", n)
		}
		if n := count(t, s, "blob_deletions", "1 = 1"); n != 3 {
			t.Fatalf("%d queued deletions, want 3", n)
		}
		if n, err := s.DrainBlobDeletions(ctx); err != nil || n != 3 {
			t.Fatalf("drained %d, %v", n, err)
		}
		if keys := srv.Keys(t); len(keys) != 0 {
			t.Fatalf("objects left after the conversation went: %v", keys)
		}
		if files := srv.Files(t); len(files) != 0 {
			t.Fatalf("files left on the server's disk: %v", files)
		}

		// A file deleted by itself; then the same bytes uploaded again
		// before its deletion drained: the new row's object is another,
		// which the drain leaves.
		c := mustFile(t, s, u.ID, "c.txt", []byte("again"))
		if err := s.DeleteFile(ctx, u.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		c2 := mustFile(t, s, u.ID, "c.txt", []byte("again"))
		if _, err := s.DrainBlobDeletions(ctx); err != nil {
			t.Fatal(err)
		}
		if _, got, err := s.FileData(ctx, u.ID, c2.ID, false); err != nil || string(got) != "again" {
			t.Fatalf("re-uploaded bytes after the old blob's drain: %q, %v", got, err)
		}

		// An account's deletion (by cascade) queues its objects too.
		bob := mustUser(t, s, "bob")
		mustFile(t, s, bob.ID, "x.txt", []byte("bob's"))
		if n := len(srv.Keys(t)); n != 2 {
			t.Fatalf("%d objects, want 2", n)
		}
		if _, err := s.DeleteOwnAccount(ctx, bob.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DrainBlobDeletions(ctx); err != nil {
			t.Fatal(err)
		}
		if keys := srv.Keys(t); len(keys) != 1 || !strings.Contains(keys[0], c2.SHA256) {
			t.Fatalf("objects after bob's account went: %v", keys)
		}

		// An orphan (an upload cut off between its put and its commit):
		// counted as unreferenced, purged; named objects stay.
		orphan := "blobs/" + strconv.FormatInt(u.ID, 10) + "/" + strings.Repeat("0", 64) + "/cut-off"
		if _, err := srv.Client.PutObject(ctx, srv.Bucket, orphan, strings.NewReader("orphan"), 6, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		if c, err := s.CountBlobs(ctx); err != nil || c.Unreferenced != 1 {
			t.Fatalf("unreferenced %+v, %v; want 1", c, err)
		}
		if n, size, err := s.PurgeUnreferencedBlobs(ctx); err != nil || n != 1 || size != 6 {
			t.Fatalf("purged %d (%d bytes), %v", n, size, err)
		}
		if keys := srv.Keys(t); len(keys) != 1 || slices.Contains(keys, orphan) {
			t.Fatalf("objects after the purge: %v", keys)
		}
		if n, err := s.UnreferencedBlobs(ctx); err != nil || n != 0 {
			t.Fatalf("unreferenced after the purge: %d, %v", n, err)
		}

		// The server down: the upload fails as the store being down,
		// and stores nothing; reads fail the same way.
		srv.Stop()
		files, blobs := count(t, s, "files", "1 = 1"), count(t, s, "blobs", "1 = 1")
		sum := sha256.Sum256([]byte("while down"))
		_, err = s.CreateFile(ctx, NewFile{File: File{UserID: u.ID, Name: "d.txt", ContentType: "text/plain", Kind: FileText,
			Size: 10, SHA256: hex.EncodeToString(sum[:])}, Data: []byte("while down")}, 0)
		if !errors.Is(err, ErrBlobStoreDown) {
			t.Fatalf("upload while the store is down: %v", err)
		}
		if f, b := count(t, s, "files", "1 = 1"), count(t, s, "blobs", "1 = 1"); f != files || b != blobs {
			t.Fatalf("files %d → %d, blobs %d → %d after a refused upload", files, f, blobs, b)
		}
		if _, _, err := s.FileData(ctx, u.ID, c2.ID, false); !errors.Is(err, ErrBlobStoreDown) {
			t.Fatalf("read while the store is down: %v", err)
		}
	})
}

// TestS3BlobStoreImport: an import's files go to the S3 store; an import
// that fails is undone, and its blobs' objects deleted with its rows.
func TestS3BlobStoreImport(t *testing.T) {
	eachS3DB(t, func(t *testing.T, s *Store, srv *s3test.Server) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		img := imageFile(0, []byte("imported image"), []byte("its thumbnail"))
		img.File.UID = "0190a0a0-0000-7000-8000-000000000001"
		items := []*ImportItem{{File: &img, Where: "line 1"}}
		next := func() (*ImportItem, error) {
			if len(items) == 0 {
				return nil, io.EOF
			}
			it := items[0]
			items = items[1:]
			return it, nil
		}
		n, err := s.Import(ctx, u.ID, next)
		if err != nil || n.Files != 1 {
			t.Fatalf("import: %+v, %v", n, err)
		}
		if keys := srv.Keys(t); len(keys) != 2 {
			t.Fatalf("objects after the import: %v", keys)
		}
		fs, err := s.Files(ctx, u.ID)
		if err != nil || len(fs) != 1 {
			t.Fatal(fs, err)
		}
		if _, got, err := s.FileData(ctx, u.ID, fs[0].ID, false); err != nil || string(got) != "imported image" {
			t.Fatalf("imported bytes %q, %v", got, err)
		}
		// Again: skipped by uid, and no second object.
		items = []*ImportItem{{File: &img, Where: "line 1"}}
		if n, err := s.Import(ctx, u.ID, next); err != nil || n.SkippedFiles != 1 || len(srv.Keys(t)) != 2 {
			t.Fatalf("import again: %+v, %v, objects %v", n, err, srv.Keys(t))
		}
		// A failing import: its new file's row and objects go.
		other := imageFile(0, []byte("other image"), nil)
		other.File.UID = "0190a0a0-0000-7000-8000-000000000002"
		bad := &ExportedExchange{Exchange: Exchange{UID: "0190a0a0-0000-7000-8000-000000000003", Title: "t", Scope: ScopeGeneral},
			Attachments: map[string][]string{"0190a0a0-0000-7000-8000-000000000004": {"0190a0a0-0000-7000-8000-00000000dead"}},
			Messages:    []Message{{UID: "0190a0a0-0000-7000-8000-000000000004", Seq: ptr(int64(0)), Role: RoleUser, Content: "q"}}}
		items = []*ImportItem{{File: &other, Where: "line 1"}, {Exchange: bad, Where: "line 2"}}
		if _, err := s.Import(ctx, u.ID, next); err == nil {
			t.Fatal("an import naming a file it does not have succeeded")
		}
		if _, err := s.DrainBlobDeletions(ctx); err != nil {
			t.Fatal(err)
		}
		if keys := srv.Keys(t); len(keys) != 2 {
			t.Fatalf("objects after a failed import: %v", keys)
		}
		if n, err := s.UnreferencedBlobs(ctx); err != nil || n != 0 {
			t.Fatalf("unreferenced: %d, %v", n, err)
		}
	})
}

// TestParseBlobStore: the --blob-store values, and the mistakes refused
// with a reason.
func TestParseBlobStore(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	keys := env(map[string]string{"PALAVER_S3_ACCESS_KEY": "ak", "PALAVER_S3_SECRET_KEY": "sk"})
	if c, err := ParseBlobStore("", keys); c != nil || err != nil {
		t.Fatalf("empty: %v, %v", c, err)
	}
	c, err := ParseBlobStore("s3://my-bucket?endpoint=minio.local:9000&secure=false&path_style=true&region=eu-west-1&prefix=palaver", keys)
	if err != nil {
		t.Fatal(err)
	}
	want := BlobStoreConfig{Bucket: "my-bucket", Endpoint: "minio.local:9000", Region: "eu-west-1", Prefix: "palaver/",
		PathStyle: true, AccessKey: "ak", SecretKey: "sk"}
	if *c != want {
		t.Fatalf("parsed %+v, want %+v", *c, want)
	}
	if strings.Contains(c.String(), "sk") || strings.Contains(c.String(), "ak") {
		t.Fatalf("String shows credentials: %s", c)
	}
	aws := env(map[string]string{"AWS_ACCESS_KEY_ID": "a2", "AWS_SECRET_ACCESS_KEY": "s2"})
	if c, err := ParseBlobStore("s3://b-1?endpoint=s3.example.com", aws); err != nil || c.AccessKey != "a2" || !c.Secure || c.Region != "us-east-1" {
		t.Fatalf("AWS credentials, defaults: %+v, %v", c, err)
	}
	for _, tc := range []struct{ raw, want string }{
		{"http://bucket?endpoint=h:1", "s3://BUCKET"},
		{"s3://ak:sk@bucket?endpoint=h:1", "credentials do not go in the URL"},
		{"s3://bucket", "endpoint=HOST:PORT is required"},
		{"s3://bucket?endpoint=http://h:1", "no scheme"},
		{"s3://Bad_Bucket?endpoint=h:1", "bucket"},
		{"s3://bucket?endpoint=h:1&secure=maybe", "secure"},
		{"s3://bucket?endpoint=h:1&colour=blue", `unknown parameter "colour"`},
		{"s3://bucket/path?endpoint=h:1", "prefix="},
	} {
		if _, err := ParseBlobStore(tc.raw, keys); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.raw, err, tc.want)
		}
	}
	if _, err := ParseBlobStore("s3://bucket?endpoint=h:1", env(nil)); err == nil || !strings.Contains(err.Error(), "PALAVER_S3_ACCESS_KEY") {
		t.Errorf("no credentials: %v", err)
	}
}
