package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kmkit/kmkit/outage"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// TestUnavailable: errors of a database that cannot be reached are outages (503 in the
// APIs); errors of a reachable database are not.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	// SQLite locked by another writer beyond the busy timeout.
	path := filepath.Join(t.TempDir(), "kmkit.db")
	db := open(t, "sqlite:"+path)
	tx, err := db.SQL().BeginTx(ctx, nil) // immediate: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM rate_limits`); err != nil {
		t.Fatal(err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10)")
	other, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.Exec(`DELETE FROM rate_limits`)
	if busy == nil || !sqlstore.Unavailable(busy) || !outage.Is(busy) {
		t.Errorf("a locked SQLite database: %v; want an outage", busy)
	}
	// A syntax error of a reachable database is not an outage.
	_, bad := db.SQL().Exec(`SELEC 1`)
	if bad == nil || outage.Is(bad) {
		t.Errorf("a syntax error: %v; want no outage", bad)
	}
	// PostgreSQL on a closed port.
	_, err = sqlstore.Open(ctx, "postgres://kmkit@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil || !outage.Is(err) {
		t.Errorf("PostgreSQL on a closed port: %v; want an outage", err)
	}
	// The next step of a transaction whose connection was lost mid-statement.
	if closed := fmt.Errorf("rollback: %w", pgconn.ErrConnClosed); !outage.Is(closed) {
		t.Errorf("%v: want an outage", closed)
	}
	if outage.Is(context.Canceled) || outage.Is(errors.New("x")) {
		t.Error("context.Canceled or a plain error taken for an outage")
	}
}
