package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// startupSamples is how many starts startup_ms times.
const startupSamples = 3

// startupFigures: `palaver serve` started on the bench's database, which
// the history figures have filled (size.HistMessages messages), until
// /healthz answers: what a restart costs. The median of a few starts.
func startupFigures(ctx context.Context, e *env, r report) error {
	if e.palaver == "" {
		fmt.Fprintln(r.w, "# startup_ms: not measured (no palaver binary to start)")
		return nil
	}
	var ds []time.Duration
	for range startupSamples {
		d, err := e.startServe(ctx)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	r.line("startup_ms", ms(percentile(ds, 0.5)), "≤ 500; `palaver serve` on this database until /healthz answers")
	return nil
}

// startServe starts `palaver serve` on the bench's database and a free
// port, times it until /healthz answers 200, then stops it.
func (e *env) startServe(ctx context.Context) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr strings.Builder
	cmd := exec.Command(e.palaver, "serve", "--db", e.path, "--addr", addr, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	client := &http.Client{Timeout: time.Second}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	deadline := time.After(60 * time.Second)
	for {
		res, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Since(t0), nil
			}
		}
		select {
		case err := <-exited:
			exited <- err // for the deferred stop
			return 0, fmt.Errorf("palaver serve exited before /healthz answered: %v: %s", err, stderr.String())
		case <-deadline:
			return 0, fmt.Errorf("palaver serve: /healthz did not answer within a minute")
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
