package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// serverMonitor watches the PostgreSQL server processes working for one database (the
// backends of its connections and their parallel workers) while an import runs: every
// 100 ms it reads pg_stat_activity and each process's CPU time from /proc (the server runs
// on this machine; without /proc the CPU figure is 0). It reports the server's CPU time
// and how long each long statement ran, so that the phases of an import (COPY per table,
// each CREATE INDEX, ANALYZE) can be told apart.
type serverMonitor struct {
	db   *sql.DB
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	sampled bool                  // after the first sample
	cpu     map[int]time.Duration // per process: the largest CPU time seen
	first   map[int]time.Duration // per process: the CPU time at the first sample, 0 for later ones
	stmts   map[string]*statement // by pid and start
}

// statement is one statement seen running.
type statement struct {
	pid   int
	query string
	start time.Time
	end   time.Time // the last time seen running, or when it ended
}

// watchServer starts monitoring the server processes of db's database.
func watchServer(db *sql.DB) *serverMonitor {
	m := &serverMonitor{db: db, stop: make(chan struct{}), done: make(chan struct{}),
		cpu: map[int]time.Duration{}, first: map[int]time.Duration{}, stmts: map[string]*statement{}}
	go func() {
		defer close(m.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				m.sample()
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// sample reads the activity of the database's processes once.
func (m *serverMonitor) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := m.db.QueryContext(ctx, `SELECT pid, coalesce(leader_pid, pid), state, coalesce(query, ''), query_start, state_change, now()
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return
	}
	defer rows.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	defer func() { m.sampled = true }()
	for rows.Next() {
		var (
			pid, leader         int
			state               sql.NullString
			query               string
			start, changed, now sql.NullTime
		)
		if rows.Scan(&pid, &leader, &state, &query, &start, &changed, &now) != nil {
			continue
		}
		if c, ok := processCPU(pid); ok {
			if _, seen := m.first[pid]; !seen && !m.sampled {
				m.first[pid] = c
			}
			m.cpu[pid] = max(m.cpu[pid], c)
		}
		// A parallel worker shows its leader's statement: the statement is the leader's.
		if !start.Valid || query == "" || leader != pid {
			continue
		}
		key := fmt.Sprint(pid, start.Time.UnixNano())
		st := m.stmts[key]
		if st == nil {
			st = &statement{pid: pid, query: query, start: start.Time}
			m.stmts[key] = st
		}
		switch {
		case state.String == "active" && now.Valid:
			st.end = now.Time
		case changed.Valid:
			st.end = changed.Time
		}
	}
}

// finish stops the monitor and returns the CPU time the processes used while watched.
func (m *serverMonitor) finish() time.Duration {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	var total time.Duration
	for pid, c := range m.cpu {
		total += c - m.first[pid]
	}
	return total
}

// phase is the statements of one kind on one table and how long they ran in total.
type phase struct {
	name  string
	took  time.Duration
	count int
}

var (
	copyTable  = regexp.MustCompile(`(?i)^\s*COPY\s+"?(\w+)"?`)
	indexTable = regexp.MustCompile(`(?i)^\s*CREATE\s+INDEX\s+\S+\s+ON\s+"?(\w+)"?`)
	analyze    = regexp.MustCompile(`(?i)^\s*ANALYZE\s+"?(\w+)"?`)
)

// phases groups the statements seen into COPY, CREATE INDEX and ANALYZE per table (others
// are left out), in the order they started.
func (m *serverMonitor) phases() []phase {
	m.mu.Lock()
	defer m.mu.Unlock()
	stmts := make([]*statement, 0, len(m.stmts))
	for _, st := range m.stmts {
		stmts = append(stmts, st)
	}
	slices.SortFunc(stmts, func(a, b *statement) int { return a.start.Compare(b.start) })
	var out []phase
	at := map[string]int{}
	for _, st := range stmts {
		var name string
		for _, p := range []struct {
			re   *regexp.Regexp
			kind string
		}{{copyTable, "COPY"}, {indexTable, "CREATE INDEX"}, {analyze, "ANALYZE"}} {
			if g := p.re.FindStringSubmatch(st.query); g != nil {
				name = p.kind + " " + g[1]
				break
			}
		}
		if name == "" || st.end.IsZero() {
			continue
		}
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, phase{name: name})
		}
		out[i].took += st.end.Sub(st.start)
		out[i].count++
	}
	return out
}

// processCPU returns the user and system CPU time of a process from /proc.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name in parentheses may hold spaces: the fields start after ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Clock ticks of 1/100 s (USER_HZ on Linux).
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}
