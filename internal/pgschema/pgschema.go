// Package pgschema gives a test a PostgreSQL schema of its own on a shared server: a new
// schema named after a prefix, the test process and a number, and the URL whose
// search_path is that schema, so that tests running at once, in one process or several,
// never see each other's tables.
//
// A schema is dropped when its test ends. A test process that was killed leaves its
// schemas behind (a fuzzing worker stopped at the fuzz time's end, a test binary that hit
// its timeout); Create drops those of its prefix whose process no longer runs on this
// machine, as it creates a new one.
package pgschema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// seq numbers the schemas of this process.
var seq atomic.Int64

// Create creates a new schema on the PostgreSQL server of dsn, named
// prefix_<process id>_<number>, and returns the URL that uses it (dsn with search_path
// set) and a function that drops it. It first drops the schemas of prefix that processes
// no longer running here created.
func Create(ctx context.Context, dsn, prefix string) (schemaURL string, drop func() error, err error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, err
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	if err := dropOrphans(ctx, admin, prefix); err != nil {
		return "", nil, err
	}
	schema := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), seq.Add(1))
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() error {
		admin, err := sql.Open("pgx", dsn)
		if err != nil {
			return err
		}
		defer admin.Close()
		_, err = admin.ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		return err
	}, nil
}

// ForTest is Create for t: it fails t where Create fails and drops the schema when t
// ends.
func ForTest(t testing.TB, dsn, prefix string) string {
	t.Helper()
	u, drop, err := Create(context.Background(), dsn, prefix)
	if err != nil {
		t.Fatalf("a PostgreSQL schema on %s: %v", redacted(dsn), err)
	}
	t.Cleanup(func() { drop() })
	return u
}

// dropOrphans drops the schemas prefix_<pid>_<n> whose process is gone.
func dropOrphans(ctx context.Context, admin *sql.DB, prefix string) error {
	rows, err := admin.QueryContext(ctx, "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", prefix+"_")
	if err != nil {
		return err
	}
	var orphans []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		pid, _, ok := strings.Cut(strings.TrimPrefix(name, prefix+"_"), "_")
		if n, err := strconv.Atoi(pid); ok && err == nil && n > 0 && !running(n) {
			orphans = append(orphans, name)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range orphans {
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			return err
		}
	}
	return nil
}

// running reports whether a process pid runs on this machine (or might: any answer but
// "no such process" counts as running, so where signals are not supported nothing is
// taken for gone).
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH)
}

// redacted is dsn without its password.
func redacted(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the server"
	}
	return u.Redacted()
}
