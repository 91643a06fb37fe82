package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
)

// rssFigures: the memory that idle websockets cost.
func rssFigures(ctx context.Context, e *env, r report) error {
	delta, total, err := e.idleRSS(ctx)
	if err != nil {
		return err
	}
	// The clients run in the same process as the server, so the delta counts
	// both ends of every websocket: an upper bound on the server's share.
	r.line("ws_rss_mb", delta, fmt.Sprintf("≤ 150; %d idle websockets, server and clients in one process", e.size.IdleSockets))
	r.anchor("rss_mb", total, "the bench process's resident memory at the end")
	return nil
}

// idleRSS opens size.idleSockets idle websockets and returns the growth of
// the process's RSS and its total, in MiB.
func (e *env) idleRSS(ctx context.Context) (delta, total float64, err error) {
	settle := func() {
		runtime.GC()
		debug.FreeOSMemory()
		time.Sleep(200 * time.Millisecond)
	}
	settle()
	before, err := rssMB()
	if err != nil {
		return 0, 0, err
	}
	conns := make([]*websocket.Conn, 0, e.size.IdleSockets)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range e.size.IdleSockets {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		c, err := e.dial()
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond) // the server's side settles too
	settle()
	after, err := rssMB()
	if err != nil {
		return 0, 0, err
	}
	return max(after-before, 0.0001), after, nil
}

// rssMB is VmRSS from /proc/self/status in MiB (Linux only).
func rssMB() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("read RSS: %w", err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("read RSS: no VmRSS in /proc/self/status")
}
