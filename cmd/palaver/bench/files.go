package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"palaver/agents"
)

// filesFigures: attachments (issue 26). upload_mb_per_s is files of 4 MiB
// of random bytes through POST /api/files over the loopback listener (read,
// spooled, sniffed, hashed and committed to the database with its sync),
// against a raw write of the same bytes to a file in the same folder with
// an fsync each (upload_ratio). open_with_images_p50_ms opens a
// conversation of 200 messages whose latest 50 user messages each hold an
// image (their thumbnails in the page).
func filesFigures(ctx context.Context, e *env, r report) error {
	const fileSize = 4 << 20
	uploads := 8
	if e.size.AppendBig < 10_000 {
		uploads = 4 // --quick
	}
	blobs := make([][]byte, uploads)
	for i := range blobs {
		blobs[i] = make([]byte, fileSize)
		_, _ = rand.Read(blobs[i])
	}
	// The request bodies are made before the clock starts, as the raw
	// write's bytes are: the figure is the server's, not the client's
	// building of a form.
	bodies := make([]uploadBody, uploads)
	for i, b := range blobs {
		bodies[i] = newUploadBody(fmt.Sprintf("blob%d.bin", i), b)
	}
	t0 := time.Now()
	for _, b := range bodies {
		if _, err := e.send(ctx, b); err != nil {
			return err
		}
	}
	upload := float64(uploads*fileSize) / (1 << 20) / time.Since(t0).Seconds()
	raw, err := rawWrites(e.dir, blobs)
	if err != nil {
		return err
	}
	r.anchor("upload_mb_per_s", upload, "4 MiB files through POST /api/files, stored in the database")
	r.anchor("raw_write_mb_per_s", raw, "the same bytes written to a file in the database's folder, an fsync each")
	r.line("upload_ratio", upload/raw, "≥ 0.5")

	first, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, AgentType: agents.AgentAuto, Query: "a conversation with images"})
	if err != nil {
		return err
	}
	if first.Failed {
		return errors.New("the first turn failed")
	}
	id := first.Exchange.ID
	if err := e.seedLog(ctx, id, 2, 200); err != nil {
		return err
	}
	db, err := e.store.SQL()
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, "SELECT id FROM messages WHERE exchange_id = ? AND role = 'user' ORDER BY seq DESC LIMIT 50", id)
	if err != nil {
		return err
	}
	var msgIDs []int64
	for rows.Next() {
		var m int64
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return err
		}
		msgIDs = append(msgIDs, m)
	}
	rows.Close()
	for i, m := range msgIDs {
		fileID, err := e.upload(ctx, fmt.Sprintf("chart%d.png", i), benchPNG(i))
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO message_attachments (message_id, file_id, position) VALUES (?, ?, 0)", m, fileID); err != nil {
			return err
		}
	}
	url := fmt.Sprintf("http://%s/chat/%d", e.addr, id)
	var ds []time.Duration
	for range openSamples {
		took, status, _, err := e.getTimed(ctx, url, "")
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /chat/%d: %d", id, status)
		}
		ds = append(ds, took)
	}
	r.line("open_with_images_p50_ms", ms(percentile(ds, 0.5)), "≤ 20")
	return nil
}

// uploadBody is a multipart form holding one file, ready to send.
type uploadBody struct {
	form        []byte
	contentType string
}

func newUploadBody(name string, data []byte) uploadBody {
	var b bytes.Buffer
	b.Grow(len(data) + 1024)
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write(data)
	_ = w.Close()
	return uploadBody{form: b.Bytes(), contentType: w.FormDataContentType()}
}

// upload posts data as a file through the API and gives its id.
func (e *env) upload(ctx context.Context, name string, data []byte) (int64, error) {
	return e.send(ctx, newUploadBody(name, data))
}

// send posts an upload's form and gives the file's id.
func (e *env) send(ctx context.Context, u uploadBody) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.addr+"/api/files", bytes.NewReader(u.form))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", u.contentType)
	req.Header.Set("x-api-key", e.apiKey)
	res, err := e.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("POST /api/files: %d %s", res.StatusCode, body)
	}
	var out struct {
		ID int64 `json:"id"`
	}
	return out.ID, json.Unmarshal(body, &out)
}

// rawWrites writes each blob to a new file in dir with an fsync, as the
// upload's commit syncs: MB/s.
func rawWrites(dir string, blobs [][]byte) (float64, error) {
	total := 0
	t0 := time.Now()
	for i, b := range blobs {
		p := filepath.Join(dir, fmt.Sprintf("raw-%d.bin", i))
		f, err := os.Create(p)
		if err != nil {
			return 0, err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return 0, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return 0, err
		}
		f.Close()
		total += len(b)
		defer os.Remove(p)
	}
	return float64(total) / (1 << 20) / time.Since(t0).Seconds(), nil
}

// benchPNG is a 640×480 chart-like image, different for each i.
func benchPNG(i int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for x := range 640 {
		y := (x*(i+3) + i*17) % 480
		img.Set(x, y, color.RGBA{uint8(i * 5), 80, 200, 255})
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
