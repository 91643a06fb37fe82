package handlers

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Export limits. A full export is long, and its client may read it slowly
// or not at all: the export holds no database cursor while it writes
// (models reads each batch whole, then hands it on), but while it reads it
// holds a pooled connection, so only a few run at once, fewer than the
// pool's 8 connections, and a client that stops reading is cut off.
const (
	exportsPerUser     = 2                // at once, per user: a third answers 429
	exportsAtOnce      = 4                // at once, in this process: below the pool's size
	exportWriteTimeout = 30 * time.Second // the longest a batch may wait on the client
	exportRetryAfter   = "30"             // seconds, on a 429
)

// exportGate counts the exports running, per user and in all.
type exportGate struct {
	mu      sync.Mutex
	perUser map[int64]int
	total   int
	maxUser int
	maxAll  int
}

func newExportGate(perUser, atOnce int) *exportGate {
	if perUser <= 0 {
		perUser = exportsPerUser
	}
	if atOnce <= 0 {
		atOnce = exportsAtOnce
	}
	return &exportGate{perUser: map[int64]int{}, maxUser: perUser, maxAll: atOnce}
}

// acquire takes a place for one of userID's exports, or answers why not
// (429: the user's own, or everyone's); release gives it back, once.
func (g *exportGate) acquire(userID int64) (release func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.perUser[userID] >= g.maxUser:
		return nil, fiber.NewError(fiber.StatusTooManyRequests,
			fmt.Sprintf("%d of your exports are running already: wait until one has finished.", g.maxUser))
	case g.total >= g.maxAll:
		return nil, fiber.NewError(fiber.StatusTooManyRequests, "Too many exports are running: try again in a minute.")
	}
	g.perUser[userID]++
	g.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.total--
			if g.perUser[userID]--; g.perUser[userID] == 0 {
				delete(g.perUser, userID)
			}
		})
	}, nil
}

// deadlineWriter writes an export to its client, each write under a fresh
// write deadline on the connection: the export's stream is copied to the
// connection by fasthttp, which then fails a write the client has not taken
// within timeout (or one to a client that has gone), and the export's next
// write fails with it and cancels the export's context.
type deadlineWriter struct {
	w       *bufio.Writer
	conn    net.Conn
	timeout time.Duration
	cancel  func()
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.deadline(); err != nil {
		return 0, err
	}
	n, err := d.w.Write(p)
	return n, d.failed(err)
}

// Flush sends what is buffered, under a fresh deadline.
func (d *deadlineWriter) Flush() error {
	if err := d.deadline(); err != nil {
		return err
	}
	return d.failed(d.w.Flush())
}

func (d *deadlineWriter) deadline() error {
	if d.conn == nil {
		return nil
	}
	return d.failed(d.conn.SetWriteDeadline(time.Now().Add(d.timeout)))
}

// failed cancels the export when a write failed.
func (d *deadlineWriter) failed(err error) error {
	if err != nil && d.cancel != nil {
		d.cancel()
	}
	return err
}
