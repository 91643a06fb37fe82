package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable is the database not answering: a PostgreSQL server that is
// down, restarting, unreachable or too slow for the request's deadline. The
// request may be tried again in a moment; Unavailable tells it from the
// other errors.
var ErrUnavailable = errors.New("the database is not answering")

// Unavailable says whether err means that the database could not be
// reached, or did not answer in time, rather than that it refused what was
// asked: the request can be tried again once it is back (503, not 500).
//
// It is mostly PostgreSQL's case. A SQLite database is a file this process
// holds open from the start: it does not go away while the server runs (a
// full disk or a failing one is an error like any other, answered 500);
// but its one writer may be held elsewhere for longer than a request may
// wait (busy: a backup, another process), which is not answering in time.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if busy(err) || errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err) {
		return true
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // shut down by an administrator, crashed, starting up
			return true
		case pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}
