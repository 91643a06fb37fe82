package bench

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"palaver/handlers"
	"palaver/transfer"
)

// exportFigures: GET /api/export of the big history the history figures
// seeded, against a raw SELECT of the same rows (every column of the
// user's messages, in the export's order), then POST /api/import of that
// file into another account.
func exportFigures(ctx context.Context, e *env, r report) error {
	if e.histUser.id == 0 {
		return errors.New("the history figures seed the messages exported: run them first")
	}
	// The best of a few rounds of each, alternated: one pass is at the
	// mercy of whatever else the machine does for that second.
	const rounds = 3
	// A line heads the file, one per exchange, and one per project when
	// the projects figures ran first.
	var projects int
	if err := e.raw.QueryRowContext(ctx, e.rebind(`SELECT COUNT(*) FROM projects WHERE user_id = ?`), e.histUser.id).Scan(&projects); err != nil {
		return err
	}
	var raw, took time.Duration
	var n int
	var file *os.File
	for round := range rounds {
		d, rows, err := e.rawExportSelect(ctx)
		if err != nil {
			return err
		}
		if round == 0 || d < raw {
			raw = d
		}
		n = rows
		if file != nil {
			file.Close()
			os.Remove(file.Name())
		}
		if file, err = os.CreateTemp(e.dir, "export-*.ndjson"); err != nil {
			return err
		}
		d, lines, err := e.exportTo(ctx, file)
		if err != nil {
			return err
		}
		if want := 1 + e.size.HistExchanges + projects; lines != want {
			return fmt.Errorf("the export has %d lines, want %d", lines, want)
		}
		if round == 0 || d < took {
			took = d
		}
	}
	defer os.Remove(file.Name())
	defer file.Close()
	fmt.Fprintf(r.w, "# export: %d messages, best of %d: %s ms through GET /api/export, %s ms by a raw SELECT\n", n, rounds, num(ms(took)), num(ms(raw)))
	exportRate, rawRate := float64(n)/took.Seconds(), float64(n)/raw.Seconds()
	r.anchor("export_msgs_per_s", exportRate, "the user's messages a second through GET /api/export; read against export_ratio")
	r.anchor("export_raw_select_msgs_per_s", rawRate, "the same rows a second by a raw SELECT")
	r.line("export_ratio", exportRate/rawRate, "≥ 0.5")

	imported, took, err := e.importFrom(ctx, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.w, "# import: %d messages through POST /api/import in %s ms\n", imported, num(ms(took)))
	r.anchor("import_msgs_per_s", float64(imported)/took.Seconds(), "messages a second through POST /api/import, spooled, checked, then stored in batches (no target: the issue asks for the figure)")
	return nil
}

// rawExportSelect reads every column of the history user's messages, in
// the export's order (exchange by exchange, in log order), through
// database/sql: the least an export can do.
func (e *env) rawExportSelect(ctx context.Context) (time.Duration, int, error) {
	t0 := time.Now()
	rows, err := e.raw.QueryContext(ctx, `SELECT m.* FROM messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE e.user_id = ? ORDER BY m.exchange_id, m.id`, e.histUser.id)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, 0, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, 0, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if n != e.size.HistMessages/e.size.HistExchanges*e.size.HistExchanges {
		return 0, 0, fmt.Errorf("the raw select read %d messages", n)
	}
	return time.Since(t0), n, nil
}

// exportTo downloads the history user's export into w and counts its lines.
func (e *env) exportTo(ctx context.Context, w io.Writer) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.addr+"/api/export", nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("x-api-key", e.histUser.apiKey)
	t0 := time.Now()
	res, err := e.http.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET /api/export: %d", res.StatusCode)
	}
	lc := &lineCounter{w: w}
	if _, err := io.Copy(lc, res.Body); err != nil {
		return 0, 0, err
	}
	return time.Since(t0), lc.n, nil
}

type lineCounter struct {
	w io.Writer
	n int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += bytes.Count(p, []byte{'\n'})
	return l.w.Write(p)
}

// importFrom posts the export to POST /api/import for a new account: the
// whole file, or, when it is over the import's 256 MiB, its lines up to
// there. It returns the messages imported.
func (e *env) importFrom(ctx context.Context, file *os.File) (int, time.Duration, error) {
	size, err := fileUpTo(file, transfer.DefaultMaxInputBytes)
	if err != nil {
		return 0, 0, err
	}
	u, err := e.store.CreateUser(ctx, "bench-import", "x", false)
	if err != nil {
		return 0, 0, err
	}
	key := randHex(16)
	if _, err := e.store.CreateAPIKey(ctx, u.ID, "bench", handlers.HashAPIKey(key)); err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.addr+"/api/import", io.NewSectionReader(file, 0, size))
	if err != nil {
		return 0, 0, err
	}
	req.ContentLength = size
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/x-ndjson")
	client := &http.Client{Timeout: 30 * time.Minute} // one transaction for the whole file
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	took := time.Since(t0)
	if res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("POST /api/import: %d %s", res.StatusCode, body)
	}
	var out struct {
		Imported struct{ Messages int } `json:"imported"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Imported.Messages == 0 {
		return 0, 0, fmt.Errorf("POST /api/import: %s (%v)", body, err)
	}
	return out.Imported.Messages, took, nil
}

// fileUpTo is the length of file's first lines that fit in limit bytes
// (the whole file when it fits).
func fileUpTo(file *os.File, limit int64) (int64, error) {
	st, err := file.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() <= limit {
		return st.Size(), nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(file, 0, limit), 1<<20)
	var size int64
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, errors.New("an export line over 1 MiB")
		}
		if err != nil {
			return size, nil // the rest is a cut line
		}
		size += int64(len(line))
	}
}
