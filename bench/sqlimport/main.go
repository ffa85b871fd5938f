// Command sqlimport measures how fast kmkit imports the demo data into SQLite and
// PostgreSQL, next to the databases' own CSV loaders in the same run: the sqlite3 shell's
// .import and psql's \copy, each into the same tables with the same indexes (read back
// from the catalog after kmkit's import, without kmkit's row-order column). It prints the
// times and their ratio, and the time of a second, unchanged import (a restart).
//
//	go run ./bench/sqlimport -rows 1000000 -pg 'postgres://kmkit@127.0.0.1:55432/db?sslmode=disable'
//
// Without -pg only SQLite is measured; without the sqlite3 or psql program, that peer is
// left out. -data reuses a data directory of the demo instead of generating one (the CSV
// writing takes longer than the imports), -only picks one database, -peers=false leaves
// the peers out, -phases prints how long each COPY, CREATE INDEX and ANALYZE ran per table
// on PostgreSQL, and -cpuprofile profiles kmkit's imports. Next to the wall-clock times it
// prints the CPU time (user and system) of this process during kmkit's import and of the
// peer's process: for SQLite, which runs inside them, a figure that a busy machine
// disturbs less than the wall clock; for PostgreSQL also the CPU time of the server
// processes serving the database meanwhile (see serverMonitor: the server must run on
// this machine); and the load average before and after, since other work on the machine
// slows both sides, and the CPU time the hypervisor gave other guests during each load
// (steal), which slows a virtual machine's loads just as much. Each load starts from a
// quiet disk (see settle).
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the monitor's own connection to PostgreSQL

	"github.com/kmkit/kmkit/internal/demodata"
	"github.com/kmkit/kmkit/query"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "orders to generate")
	pg := flag.String("pg", "", "PostgreSQL URL (a database the benchmark may fill)")
	peers := flag.Bool("peers", true, "measure the peers (sqlite3 .import, psql \\copy)")
	only := flag.String("only", "", "measure one database only: sqlite or postgres")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of kmkit's imports to this file")
	data := flag.String("data", "", "a data directory of the demo written before (models/, data/), instead of generating one (-rows is then only printed)")
	flag.BoolVar(&showPhases, "phases", false, "print how long each phase of the PostgreSQL loads ran (COPY, CREATE INDEX, ANALYZE per table)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		profile = f
	}
	dir, err := os.MkdirTemp("", "kmkit-sqlimport-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *data != "" {
		// The demo written earlier: its models and CSV files are linked, the databases
		// are created in dir.
		for _, sub := range []string{"models", "data"} {
			abs, err := filepath.Abs(filepath.Join(*data, sub))
			if err != nil {
				log.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, sub)); err != nil {
				log.Fatal(err)
			}
		}
	} else if err := writeDemo(dir, *rows); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	fmt.Printf("import of the demo with %d orders (all sources); load average %s\n", *rows, loadAverage())
	fmt.Printf("%-10s %12s %12s %8s %12s %12s %12s %12s %12s\n", "database", "kmkit", "peer", "ratio", "restart", "kmkit cpu", "peer cpu", "kmkit server", "peer server")
	if *only != "postgres" {
		run(ctx, "sqlite", "sqlite:"+filepath.Join(dir, "kmkit.db"), dir, func(idx map[string][][]string) (time.Duration, time.Duration, error) {
			if !*peers {
				return 0, 0, errNoPeer
			}
			return sqlitePeer(dir, idx)
		})
	}
	if *pg != "" && *only != "sqlite" {
		run(ctx, "postgres", *pg, dir, func(idx map[string][][]string) (time.Duration, time.Duration, error) {
			if !*peers {
				return 0, 0, errNoPeer
			}
			return postgresPeer(*pg, dir, idx)
		})
	}
	if profile != nil {
		profile.Close()
	}
	fmt.Printf("load average at the end %s; cpu: user+system time of this process during kmkit's import and of the peer's process (SQLite runs in them); server: of the PostgreSQL processes serving the database meanwhile\n", loadAverage())
}

// loadAverage returns the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// stealTime returns the CPU time the hypervisor has given other guests since boot, over
// all cores (the steal column of /proc/stat), or 0 where it cannot be read.
func stealTime() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	ticks, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// showPhases prints the phases of the PostgreSQL loads.
var showPhases bool

// profile, when set, receives a CPU profile of kmkit's imports (not of the peers).
var profile *os.File

var errNoPeer = errors.New("not measured (-peers=false)")

// writeDemo writes the demo's models and generated CSV files as a data directory.
func writeDemo(dir string, n int) error {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	models, err := fs.Sub(demodata.FS, "models")
	if err != nil {
		return err
	}
	if err := os.CopyFS(filepath.Join(dir, "models"), models); err != nil {
		return err
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	return demodata.WriteCSV(n, func(source string) (io.Writer, error) {
		f, err := os.Create(filepath.Join(dir, "data", source+".csv"))
		files = append(files, f)
		return f, err
	})
}

// settle starts a load from a quiet disk: PostgreSQL writes out what earlier loads left in
// its buffers (CHECKPOINT: 1 GB of WAL, the default max_wal_size, is less than one import
// writes, so a checkpoint the previous load triggered may still be writing), then the
// kernel writes every dirty page (sync), which otherwise goes on during the next load and
// slows it by a third or more on this machine's disk. Without the privilege to
// CHECKPOINT (a superuser or pg_checkpoint) it says so and goes on.
func settle(ctx context.Context, mon *sql.DB) {
	if mon != nil {
		if _, err := mon.ExecContext(ctx, "CHECKPOINT"); err != nil {
			log.Printf("no CHECKPOINT before the load: %v", err)
		}
	}
	syscall.Sync()
}

// run imports the data directory through kmkit, twice, then runs the peer.
func run(ctx context.Context, name, dsn, dir string, peer func(map[string][][]string) (time.Duration, time.Duration, error)) {
	db, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if name == "postgres" {
		// A fresh start: kmkit's tables and import records of earlier runs go.
		for _, s := range demodata.Sources {
			if _, err := db.SQL().ExecContext(ctx, "DROP TABLE IF EXISTS "+s.Name+", peer_"+s.Name); err != nil {
				log.Fatal(err)
			}
		}
		if _, err := db.SQL().ExecContext(ctx, "DELETE FROM km_imports"); err != nil {
			log.Fatal(err)
		}
	}
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			log.Fatal(err)
		}
	}
	var mon *sql.DB
	if name == "postgres" {
		if mon, err = sql.Open("pgx", dsn); err != nil {
			log.Fatal(err)
		}
		defer mon.Close()
		mon.SetMaxOpenConns(1)
	}
	watch := func() func() (time.Duration, []phase) {
		if mon == nil {
			return func() (time.Duration, []phase) { return -1, nil }
		}
		m := watchServer(mon)
		return func() (time.Duration, []phase) { c := m.finish(); return c, m.phases() }
	}
	settle(ctx, mon)
	finish := watch()
	start, cpu0, steal0 := time.Now(), cpuTime(), stealTime()
	if err := db.KM().Import(ctx, os.DirFS(dir)); err != nil {
		log.Fatal(err)
	}
	took, cpu, steal := time.Since(start), cpuTime()-cpu0, stealTime()-steal0
	serverCPU, phases := finish()
	if profile != nil {
		pprof.StopCPUProfile()
	}
	start = time.Now()
	if err := db.KM().Import(ctx, os.DirFS(dir)); err != nil {
		log.Fatal(err)
	}
	restart := time.Since(start)
	idx, err := indexes(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	settle(ctx, mon)
	finish = watch()
	steal0 = stealTime()
	peerTook, peerCPU, err := peer(idx)
	peerSteal := stealTime() - steal0
	peerServerCPU, peerPhases := finish()
	peerText, ratio, peerCPUText := "n/a", "n/a", "n/a"
	if err != nil {
		log.Printf("%s peer: %v", name, err)
	} else {
		peerText, ratio = peerTook.Round(time.Millisecond).String(), fmt.Sprintf("%.2fx", took.Seconds()/peerTook.Seconds())
		peerCPUText = peerCPU.Round(time.Millisecond).String()
	}
	serverText, peerServerText := "n/a", "n/a"
	if serverCPU >= 0 {
		serverText = serverCPU.Round(10 * time.Millisecond).String()
		if err == nil {
			peerServerText = peerServerCPU.Round(10 * time.Millisecond).String()
		}
	}
	fmt.Printf("%-10s %12s %12s %8s %12s %12s %12s %12s %12s\n", name, took.Round(time.Millisecond), peerText, ratio, restart.Round(time.Millisecond),
		cpu.Round(time.Millisecond), peerCPUText, serverText, peerServerText)
	fmt.Printf("%-10s cpu steal during the loads: kmkit %s, peer %s (time the hypervisor ran other guests on this machine's cores)\n",
		"", steal.Round(10*time.Millisecond), peerSteal.Round(10*time.Millisecond))
	if showPhases && mon != nil {
		printPhases("kmkit", phases)
		if err == nil {
			printPhases("peer", peerPhases)
		}
	}
}

// printPhases prints the time each phase of a load ran (statements on several
// connections at once each count their own time).
func printPhases(who string, phases []phase) {
	for _, p := range phases {
		fmt.Printf("    %-6s %-32s %3d statements %10s\n", who, p.name, p.count, p.took.Round(10*time.Millisecond))
	}
}

// indexes reads the columns of kmkit's indexes on the demo tables from the catalog,
// without the row-order column, by source: kmkit loads a source into a generation table
// of its own (sqlstore.DB.CurrentTable), which carries the indexes.
func indexes(ctx context.Context, db *sqlstore.DB) (map[string][][]string, error) {
	q := `SELECT m.tbl_name, m.name, ii.name FROM sqlite_master m, pragma_index_info(m.name) ii
		WHERE m.type = 'index' AND m.sql IS NOT NULL ORDER BY m.name, ii.seqno`
	if db.Dialect() == "postgres" {
		q = `SELECT c.relname, i.relname, a.attname FROM pg_index x
			JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
			WHERE n.nspname = current_schema() AND NOT x.indisprimary ORDER BY i.relname, k.ord`
	}
	rows, err := db.SQL().QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byIndex := map[string][]string{}
	tableOf := map[string]string{}
	var order []string
	for rows.Next() {
		var table, index, col string
		if err := rows.Scan(&table, &index, &col); err != nil {
			return nil, err
		}
		if col == sqlstore.RowColumn {
			continue
		}
		if _, ok := byIndex[index]; !ok {
			order = append(order, index)
		}
		byIndex[index] = append(byIndex[index], col)
		tableOf[index] = table
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sourceOf := map[string]string{}
	for _, s := range demodata.Sources {
		table, err := db.CurrentTable(ctx, s.Name)
		if err != nil {
			return nil, err
		}
		if table == "" {
			return nil, fmt.Errorf("no table of source %s after the import", s.Name)
		}
		sourceOf[table] = s.Name
	}
	out := map[string][][]string{}
	for _, index := range order {
		if s, ok := sourceOf[tableOf[index]]; ok {
			out[s] = append(out[s], byIndex[index])
		}
	}
	for _, s := range demodata.Sources {
		if len(out[s.Name]) == 0 {
			return nil, fmt.Errorf("no index of source %s read from the catalog", s.Name)
		}
	}
	return out, nil
}

// peerDDL returns the statements creating the peer tables (typed for the database) and
// the index statements for after the load.
func peerDDL(types func(query.Type) string, idx map[string][][]string) (tables, after []string) {
	for _, s := range demodata.Sources {
		var defs []string
		for i, c := range s.Columns {
			defs = append(defs, `"`+c+`" `+types(s.Types[i]))
		}
		tables = append(tables, "DROP TABLE IF EXISTS peer_"+s.Name+";", "CREATE TABLE peer_"+s.Name+" ("+strings.Join(defs, ", ")+");")
		for i, cols := range idx[s.Name] {
			after = append(after, fmt.Sprintf(`CREATE INDEX peer_%s_%d ON peer_%s ("%s");`, s.Name, i, s.Name, strings.Join(cols, `", "`)))
		}
	}
	return tables, after
}

// sqlitePeer loads the CSV files with the sqlite3 shell's .import, in one transaction,
// then creates the indexes.
func sqlitePeer(dir string, idx map[string][][]string) (time.Duration, time.Duration, error) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		return 0, 0, err
	}
	tables, after := peerDDL(func(t query.Type) string {
		switch t {
		case query.TypeString, query.TypeDate, query.TypeDateTime:
			return "TEXT"
		case query.TypeFloat:
			return "REAL"
		}
		return "INTEGER"
	}, idx)
	var script strings.Builder
	script.WriteString("PRAGMA journal_mode=WAL;\n")
	script.WriteString(strings.Join(tables, "\n") + "\nBEGIN;\n")
	for _, s := range demodata.Sources {
		fmt.Fprintf(&script, ".import --csv --skip 1 %s peer_%s\n", filepath.Join(dir, "data", s.Name+".csv"), s.Name)
	}
	script.WriteString(strings.Join(after, "\n") + "\nCOMMIT;\n")
	return timeCommand(script.String(), "sqlite3", filepath.Join(dir, "peer.db"))
}

// postgresPeer loads the CSV files with psql's \copy in one transaction, then creates the
// indexes.
func postgresPeer(dsn, dir string, idx map[string][][]string) (time.Duration, time.Duration, error) {
	if _, err := exec.LookPath("psql"); err != nil {
		return 0, 0, err
	}
	tables, after := peerDDL(func(t query.Type) string {
		switch t {
		case query.TypeString:
			return `TEXT COLLATE "C"`
		case query.TypeFloat:
			return "DOUBLE PRECISION"
		case query.TypeBoolean:
			return "BOOLEAN"
		case query.TypeDate:
			return "DATE"
		case query.TypeDateTime:
			return "TIMESTAMPTZ"
		}
		return "BIGINT"
	}, idx)
	var script strings.Builder
	script.WriteString("BEGIN;\nSET LOCAL maintenance_work_mem = '256MB';\n" + strings.Join(tables, "\n") + "\n")
	for _, s := range demodata.Sources {
		fmt.Fprintf(&script, "\\copy peer_%s FROM '%s' WITH (FORMAT csv, HEADER true)\n", s.Name, filepath.Join(dir, "data", s.Name+".csv"))
	}
	script.WriteString(strings.Join(after, "\n") + "\nCOMMIT;\n")
	return timeCommand(script.String(), "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", dsn)
}

// timeCommand runs a program with script as its input and returns its wall-clock and
// CPU (user and system) time.
func timeCommand(script string, name string, args ...string) (time.Duration, time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = bufio.NewReader(strings.NewReader(script))
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}
