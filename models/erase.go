package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
)

// What a deletion leaves behind (SQLite). secure_delete zeroes the freed
// parts of the database file, and FTS5's secure-delete its index; but in
// WAL mode every page a write touched is first appended to the -wal file,
// where the deleted text stays (a copy per write of its page) until a
// checkpoint restarts the log and the file is cut. So a committed deletion
// of user data asks for a TRUNCATE checkpoint, which runs once no reader
// still needs the log, retried for up to eraseWithin; and journal_size_limit
// keeps any log, once it restarts, from staying larger than walLimit.
const (
	// walLimit is the size the -wal file is cut back to when the log
	// restarts (PRAGMA journal_size_limit, on every connection).
	walLimit = 64 << 20
	// eraseWithin bounds the retries of a deletion's TRUNCATE checkpoint
	// while readers hold the log; the next deletion asks again.
	eraseWithin = 2 * time.Minute
	// eraseRetry is the wait between two attempts.
	eraseRetry = 200 * time.Millisecond
	// eraseBusy is the busy timeout of an attempt: a TRUNCATE checkpoint
	// holds writers back while it waits for readers, so it waits little
	// and tries again.
	eraseBusy = 50
)

// erasingTables are the tables whose deleted rows hold a user's text.
var erasingTables = map[string]bool{"users": true, "exchanges": true, "messages": true, "pages": true, "page_revisions": true}

// sqliteConnector opens SQLite connections with journal_size_limit set
// (go-sqlite3's DSN has no parameter for it).
type sqliteConnector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func newSQLiteConnector(dsn string) sqliteConnector {
	return sqliteConnector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA journal_size_limit = "+strconv.Itoa(walLimit), nil)
		return err
	}}}
}

// Connect implements driver.Connector.
func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

// Driver implements driver.Connector.
func (c sqliteConnector) Driver() driver.Driver { return c.drv }

// watchErasures asks for the log's truncation after every GORM delete of
// rows that hold a user's text (an account's, by cascade; a conversation's;
// a page's). The callback runs inside the deletion's transaction, before
// its commit: the checkpoint waits for the quiet after it, and an attempt
// while the transaction still writes is busy and tried again.
func (s *Store) watchErasures() error {
	return s.db.Callback().Delete().After("gorm:delete").Register("palaver:erase", func(tx *gorm.DB) {
		if tx.Error == nil && tx.Statement.RowsAffected > 0 && erasingTables[tx.Statement.Table] {
			s.group.ckpt.erased()
		}
	})
}

// erased notes a deletion of user data: the log is truncated soon.
func (cp *checkpointer) erased() {
	cp.erase.Store(true)
	select {
	case cp.wake <- struct{}{}:
	default:
	}
}

// truncate checkpoints the whole log and cuts the -wal file to nothing, on
// a connection of its own with a short busy timeout, until it completes
// (no reader or writer held it back) or eraseWithin passes; false: the
// checkpointer was stopped meanwhile.
func (cp *checkpointer) truncate() bool {
	until := time.Now().Add(eraseWithin)
	for time.Now().Before(until) {
		if cp.truncateOnce() {
			return true
		}
		select {
		case <-cp.stop:
			return false
		case <-time.After(eraseRetry):
		}
	}
	return true
}

// truncateOnce tries one TRUNCATE checkpoint and says whether it completed.
func (cp *checkpointer) truncateOnce() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := cp.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	var busyWas int64
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busyWas); err != nil {
		return false
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(eraseBusy)); err != nil {
		return false
	}
	defer func() { _, _ = conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(busyWas, 10)) }()
	var busy, logged, copied sql.NullInt64
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &copied); err != nil {
		return false
	}
	return busy.Int64 == 0
}
