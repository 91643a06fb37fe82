package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // thumbnails may be JPEG
	pngenc "image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"palaver/internal/s3test"
	"palaver/models"
)

// apiCall makes one API request with an API key and returns the status
// and body.
func apiCall(t *testing.T, method, url, key, ctype string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// uploadFile posts data as a file named name; it returns the status and
// the file's id (0 unless 201).
func uploadFile(t *testing.T, base, key, name string, data []byte) (int, int64) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write(data)
	_ = w.Close()
	status, body := apiCall(t, http.MethodPost, base+"/api/files", key, w.FormDataContentType(), b.Bytes())
	var f struct{ ID int64 }
	if status == http.StatusCreated {
		if err := json.Unmarshal(body, &f); err != nil {
			t.Fatal(err)
		}
	}
	return status, f.ID
}

// TestServeWithS3BlobStore: palaver serve --blob-store s3://… against a
// real S3 server: an upload is an object in the bucket, served back
// byte-identical; a conversation's deletion takes its objects (the
// housekeeping goroutine drains the queue); export and import carry the
// files through the store; the store down answers an upload 503 and
// stores nothing; the credentials never reach the log.
func TestServeWithS3BlobStore(t *testing.T) {
	srv := s3test.Start(t)
	t.Setenv("PALAVER_S3_ACCESS_KEY", s3test.AccessKey)
	t.Setenv("PALAVER_S3_SECRET_KEY", s3test.SecretKey)
	db := dbPath(t)
	for _, name := range []string{"ann", "bob"} {
		palaver(t, "user", "add", name, "--password", "correct horse", "--db", db).ok(t, "user add")
	}
	annKey := strings.TrimSpace(palaver(t, "user", "key", "ann", "--db", db).stdout)
	bobKey := strings.TrimSpace(palaver(t, "user", "key", "bob", "--db", db).stdout)
	t.Setenv("PALAVER_BLOB_STORE", srv.URL()) // the flag's variable
	base, logs := startServe(t, "--db", db)

	data := bytes.Repeat([]byte("a log line of the attached file\n"), 4000)
	status, id := uploadFile(t, base, annKey, "app.log", data)
	if status != http.StatusCreated {
		t.Fatalf("upload: %d", status)
	}
	if keys, files := srv.Keys(t), srv.Files(t); len(keys) != 1 || fmt.Sprint(keys) != fmt.Sprint(files) {
		t.Fatalf("objects %v, on disk %v; want the one upload", keys, files)
	}
	if status, _ := uploadFile(t, base, annKey, "again.log", data); status != http.StatusCreated || len(srv.Keys(t)) != 1 {
		t.Fatalf("the same bytes again: %d, objects %v", status, srv.Keys(t))
	}
	status, got := apiCall(t, http.MethodGet, fmt.Sprintf("%s/api/files/%d", base, id), annKey, "", nil)
	if status != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("download: %d, %d bytes, want %d identical", status, len(got), len(data))
	}

	// An image: its thumbnail is an object too, served back as an image.
	var png bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for x := range 300 {
		img.Set(x, x%200, color.RGBA{200, 10, 10, 255})
	}
	if err := pngenc.Encode(&png, img); err != nil {
		t.Fatal(err)
	}
	status, imgID := uploadFile(t, base, annKey, "red.png", png.Bytes())
	if status != http.StatusCreated || len(srv.Keys(t)) != 3 {
		t.Fatalf("image upload: %d, objects %v", status, srv.Keys(t))
	}
	status, thumb := apiCall(t, http.MethodGet, fmt.Sprintf("%s/api/files/%d/thumbnail", base, imgID), annKey, "", nil)
	if _, _, err := image.Decode(bytes.NewReader(thumb)); status != http.StatusOK || err != nil {
		t.Fatalf("thumbnail: %d, %v", status, err)
	}
	if status, b := apiCall(t, http.MethodDelete, fmt.Sprintf("%s/api/files/%d", base, imgID), annKey, "", nil); status != http.StatusOK {
		t.Fatalf("delete the image: %d %s", status, b)
	}
	for deadline := time.Now().Add(30 * time.Second); len(srv.Keys(t)) != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("objects 30 s after the image went: %v", srv.Keys(t))
		}
	}

	// Export with the file, import into bob's account: bob's own object.
	out := filepath.Join(t.TempDir(), "ann.ndjson")
	if r := palaver(t, "export", "--user", "ann", "--out", out, "--db", db); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	if r := palaver(t, "import", "--user", "bob", out, "--db", db); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	if keys := srv.Keys(t); len(keys) != 2 {
		t.Fatalf("objects after bob's import: %v", keys)
	}
	status, list := apiCall(t, http.MethodGet, base+"/api/files", bobKey, "", nil)
	var files struct{ Files []struct{ ID int64 } }
	if err := json.Unmarshal(list, &files); status != http.StatusOK || err != nil || len(files.Files) != 2 {
		t.Fatalf("bob's files: %d %s", status, list)
	}
	status, got = apiCall(t, http.MethodGet, fmt.Sprintf("%s/api/files/%d", base, files.Files[0].ID), bobKey, "", nil)
	if status != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("bob's imported file: %d, %d bytes", status, len(got))
	}

	// A conversation attaching bob's files, deleted: its objects go.
	body, _ := json.Marshal(map[string]any{"query": "look at these", "attachments": []int64{files.Files[0].ID, files.Files[1].ID}})
	status, answer := apiCall(t, http.MethodPost, base+"/api/chat", bobKey, "application/json", body)
	var chat struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	if err := json.Unmarshal(answer, &chat); status != http.StatusOK || err != nil || chat.ExchangeID == 0 {
		t.Fatalf("chat: %d %s", status, answer)
	}
	if status, b := apiCall(t, http.MethodDelete, fmt.Sprintf("%s/api/chat/exchange/%d", base, chat.ExchangeID), bobKey, "", nil); status != http.StatusOK {
		t.Fatalf("delete: %d %s", status, b)
	}
	for deadline := time.Now().Add(30 * time.Second); len(srv.Keys(t)) != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("objects 30 s after bob's conversation went: %v", srv.Keys(t))
		}
	}

	// The store down: 503, nothing stored.
	srv.Stop()
	if status, _ := uploadFile(t, base, annKey, "new.txt", []byte("while the store is down")); status != http.StatusServiceUnavailable {
		t.Fatalf("upload while the store is down: %d, want 503", status)
	}
	status, list = apiCall(t, http.MethodGet, base+"/api/files", annKey, "", nil)
	if err := json.Unmarshal(list, &files); status != http.StatusOK || err != nil || len(files.Files) != 2 {
		t.Fatalf("ann's files after a refused upload: %d %s", status, list)
	}
	if strings.Contains(logs.String(), s3test.SecretKey) || strings.Contains(logs.String(), s3test.AccessKey) {
		t.Fatalf("the log holds the store's credentials: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "S3-compatible store") {
		t.Fatalf("the log does not say where files go: %s", logs.String())
	}
}

// TestServeBlobStoreMistakes: a --blob-store that cannot work stops serve
// at start-up with one line saying why.
func TestServeBlobStoreMistakes(t *testing.T) {
	srv := s3test.Start(t)
	db := dbPath(t)
	t.Setenv("PALAVER_S3_ACCESS_KEY", s3test.AccessKey)
	t.Setenv("PALAVER_S3_SECRET_KEY", s3test.SecretKey)
	for _, tc := range []struct{ url, want string }{
		{"s3://bucket", "--blob-store: endpoint=HOST:PORT is required"},
		{"s3://bkt?endpoint=" + srv.Endpoint + "&secure=no", "--blob-store: secure="},
		{"s3://no-such-bucket?endpoint=" + srv.Endpoint + "&secure=false&path_style=true", `no bucket "no-such-bucket"`},
	} {
		r := palaver(t, "serve", "--addr", "127.0.0.1:0", "--db", db, "--blob-store", tc.url)
		r.oneLine(t, tc.url, tc.want)
	}
	t.Setenv("PALAVER_S3_SECRET_KEY", "")
	r := palaver(t, "serve", "--addr", "127.0.0.1:0", "--db", db, "--blob-store", srv.URL())
	r.oneLine(t, "no secret key", "PALAVER_S3_SECRET_KEY")
}

// TestS3CrashLoop kills a real server (SIGKILL) with --blob-store s3://…
// while clients upload files, attach them and delete the conversations
// again, restarts it each time, and then checks what the kills left: no
// blob row whose object is missing, the deletion queue drained by the
// restart, and every object either a blob's or an orphan of an upload cut
// off between its put and its commit, which the sweep deletes.
func TestS3CrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	srv := s3test.Start(t)
	bin := buildBinary(t)
	t.Setenv("PALAVER_S3_ACCESS_KEY", s3test.AccessKey)
	t.Setenv("PALAVER_S3_SECRET_KEY", s3test.SecretKey)
	t.Setenv("PALAVER_BLOB_STORE", srv.URL()) // the servers started below inherit it
	db := filepath.Join(t.TempDir(), "palaver.db")
	const clients, rounds = 3, 4
	keys := keyedUsers(t, bin, db, clients)
	addr := freeAddr(t)
	var uploads, deletions atomic.Int64
	for round := range rounds {
		s := startServer(t, bin, db, addr)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					text := strings.Repeat(fmt.Sprintf("round %d client %d file %d\n", round, c, i), 200)
					id, err := crashUpload(s.base, keys[c], "f.txt", text)
					if err != nil {
						return // the kill
					}
					uploads.Add(1)
					if i%3 == 2 {
						continue // kept: some blobs outlive the loop
					}
					var chat struct {
						ExchangeID int64 `json:"exchange_id"`
					}
					body := map[string]any{"query": "look", "attachments": []int64{id}}
					if st, err := tryAPI(s.base, http.MethodPost, "/api/chat", keys[c], body, &chat); err != nil || st != http.StatusOK {
						return
					}
					if st, err := tryAPI(s.base, http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", chat.ExchangeID), keys[c], nil, nil); err != nil || st != http.StatusOK {
						return
					}
					deletions.Add(1)
				}
			})
		}
		time.Sleep(time.Duration(300+100*round) * time.Millisecond)
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = s.cmd.Wait()
		close(stop)
		wg.Wait()
	}
	if uploads.Load() < rounds || deletions.Load() == 0 {
		t.Fatalf("%d uploads, %d deletions: the loop proves nothing", uploads.Load(), deletions.Load())
	}
	t.Logf("%d uploads, %d conversations deleted, %d kills", uploads.Load(), deletions.Load(), rounds)

	// The restart drains what the kills left queued.
	s := startServer(t, bin, db, addr)
	store := openDB(t, db)
	sqlDB, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 {
		var n int64
		if err := sqlDB.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); count("SELECT COUNT(*) FROM blob_deletions") != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d deletions still queued 30 s after the restart", count("SELECT COUNT(*) FROM blob_deletions"))
		}
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("graceful shutdown: %v\n%s", err, s.log)
	}
	// No dangling reference: every key a row names is an object.
	objects := map[string]bool{}
	for _, k := range srv.Keys(t) {
		objects[k] = true
	}
	rows, err := sqlDB.Query("SELECT object_key FROM blobs UNION ALL SELECT thumbnail_key FROM blobs WHERE thumbnail_key IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for rows.Next() {
		var k *string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k == nil {
			t.Fatal("a blob row of the S3 store keeps its bytes in the database")
		}
		named[*k] = true
		if !objects[*k] {
			t.Errorf("blob object %s is missing: a dangling reference", *k)
		}
	}
	rows.Close()
	if len(named) == 0 || count("SELECT COUNT(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.id = f.blob_id)") != 0 ||
		count("SELECT COUNT(*) FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.blob_id = b.id)") != 0 {
		t.Fatalf("%d blobs; files without blobs or blobs without files", len(named))
	}
	// Orphans: at most one upload in flight per client and kill; the
	// sweep (without its hour of grace: nothing runs now) takes them.
	orphans := 0
	for k := range objects {
		if !named[k] {
			orphans++
		}
	}
	if orphans > clients*rounds {
		t.Fatalf("%d orphan objects after %d kills of %d clients", orphans, rounds, clients)
	}
	cfg, err := models.ParseBlobStore(srv.URL(), srv.Env)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OrphanGrace = time.Nanosecond
	sweeper, err := models.Open(db, models.Options{Blobs: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer sweeper.Close()
	if n, _, err := sweeper.PurgeUnreferencedBlobs(context.Background()); err != nil || n != int64(orphans) {
		t.Fatalf("swept %d, %v; want the %d orphans", n, err, orphans)
	}
	if left := srv.Keys(t); len(left) != len(named) {
		t.Fatalf("%d objects after the sweep, want the %d blobs' own", len(left), len(named))
	}
	t.Logf("%d blob objects kept, %d orphans swept", len(named), orphans)
}

// tryAPI is one API request that may fail (the server killed under it).
func tryAPI(base, method, path, key string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, r)
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			return res.StatusCode, err
		}
	}
	return res.StatusCode, nil
}

// TestS3BlobStoreTwoProcesses: two palaver serve processes on one
// PostgreSQL database and one bucket see the same blobs: a file uploaded
// through one downloads through the other, the same bytes through the
// other are the same object, and deleting both files through the other
// deletes it.
func TestS3BlobStoreTwoProcesses(t *testing.T) {
	srv := s3test.Start(t)
	t.Setenv("PALAVER_S3_ACCESS_KEY", s3test.AccessKey)
	t.Setenv("PALAVER_S3_SECRET_KEY", s3test.SecretKey)
	t.Setenv("PALAVER_BLOB_STORE", srv.URL()) // both servers inherit it
	ts := startTwo(t)
	data := bytes.Repeat([]byte("shared between processes\n"), 1000)
	status, id := uploadFile(t, ts.a.base, ts.key, "a.txt", data)
	if status != http.StatusCreated || len(srv.Keys(t)) != 1 {
		t.Fatalf("upload through A: %d, objects %v", status, srv.Keys(t))
	}
	status, got := apiCall(t, http.MethodGet, fmt.Sprintf("%s/api/files/%d", ts.b.base, id), ts.key, "", nil)
	if status != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("download through B: %d, %d bytes", status, len(got))
	}
	status, id2 := uploadFile(t, ts.b.base, ts.key, "b.txt", data)
	if status != http.StatusCreated || len(srv.Keys(t)) != 1 {
		t.Fatalf("the same bytes through B: %d, objects %v", status, srv.Keys(t))
	}
	for _, f := range []int64{id, id2} {
		if status, b := apiCall(t, http.MethodDelete, fmt.Sprintf("%s/api/files/%d", ts.b.base, f), ts.key, "", nil); status != http.StatusOK {
			t.Fatalf("delete %d through B: %d %s", f, status, b)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); len(srv.Keys(t)) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("objects 30 s after the files went: %v", srv.Keys(t))
		}
	}
}
