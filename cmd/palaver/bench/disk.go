package bench

import (
	"context"
	"fmt"
	"time"
)

// diskSamples is how many single-row commits raw_commit_p50_ms times.
const diskSamples = 200

// diskFigures: what one durable commit of one row costs on this machine's
// disk (synchronous=FULL, the app's own settings), printed first: figures
// from two machines compare through it.
func diskFigures(ctx context.Context, e *env, r report) error {
	if _, err := e.raw.ExecContext(ctx, `CREATE TABLE bench_commit (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return err
	}
	ds := make([]time.Duration, 0, diskSamples)
	for i := range diskSamples {
		t0 := time.Now()
		if _, err := e.raw.ExecContext(ctx, `INSERT INTO bench_commit (v) VALUES (?)`, fmt.Sprintf("row %d", i)); err != nil {
			return err
		}
		ds = append(ds, time.Since(t0))
	}
	r.anchor("raw_commit_p50_ms", ms(percentile(ds, 0.5)), "one durable single-row commit, synchronous=FULL: this disk's sync")
	_, err := e.raw.ExecContext(ctx, `DROP TABLE bench_commit`)
	return err
}
