package sqlstore

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/kmkit/kmkit/outage"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func init() { outage.Register(Unavailable) }

// Unavailable reports whether err, an error of a DB, means that the database cannot be
// reached right now, so that the APIs answer 503 with Retry-After (see package outage,
// where it is registered): a connection that cannot be made or was lost (also when it is
// lost mid-statement and the transaction's next step finds it closed), PostgreSQL
// shutting down, starting, out of connections or without the database (SQLSTATE class 08,
// 57P01-57P03, 53300, 3D000), or a SQLite database that is locked beyond the busy timeout
// or cannot be read.
func Unavailable(err error) bool {
	var (
		ce *pgconn.ConnectError
		pe *pgconn.PgError
		ne net.Error
		se *sqlite.Error
	)
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, pgconn.ErrConnClosed):
		return true
	case errors.As(err, &pe):
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300", "3D000":
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08"
	case errors.As(err, &se):
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return true
		}
	}
	return false
}
