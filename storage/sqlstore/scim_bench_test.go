package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kmkit/kmkit/scim"
	"github.com/kmkit/kmkit/storage/sqlstore"
)

// BenchmarkContendedGroupPatches: n writers PATCH one group at once, each adding one
// member, on PostgreSQL (KMKIT_POSTGRES_DSN). "kmkit" runs scim.Service.PatchGroup; its
// peer "sql", in the same run on the same database, applies the same changes with
// hand-written SQL, each writer a transaction that takes the team's lock, adds its member
// and sets the group's version, as the store's transactions do. Reported per round of n
// writers: wall time (ms), CPU time of this process (cpu-ms) and allocations.
//
//	KMKIT_POSTGRES_DSN=... go test ./storage/sqlstore -run '^$' -bench 'ContendedGroupPatches' -benchtime 5x
func BenchmarkContendedGroupPatches(b *testing.B) {
	for _, n := range []int{8, 32} {
		db := open(b, postgresDSN(b))
		st := db.SCIM()
		svc := scim.NewService(st)
		ctx := context.Background()
		users := make([]string, n)
		for i := range users {
			u, err := st.CreateUser(ctx, "acme", scim.User{UserName: fmt.Sprintf("w%d@example.com", i), Active: true})
			if err != nil {
				b.Fatal(err)
			}
			users[i] = u.ID
		}
		g, err := st.CreateGroup(ctx, "acme", scim.Group{DisplayName: "G"})
		if err != nil {
			b.Fatal(err)
		}
		reset := func(b *testing.B) {
			if _, err := st.ReplaceGroup(ctx, "acme", scim.Group{ID: g.ID, DisplayName: "G"}, 0); err != nil {
				b.Fatal(err)
			}
		}
		check := func(b *testing.B) {
			got, err := st.GetGroup(ctx, "acme", g.ID)
			if err != nil || len(got.Members) != n {
				b.Fatalf("the group has %d members (%v), want %d", len(got.Members), err, n)
			}
		}
		kmkit := func(i int) error {
			ops := scim.Patch{{Op: "add", Path: "members", Value: []any{map[string]any{"value": users[i]}}, HasValue: true}}
			_, err := svc.PatchGroup(ctx, "acme", g.ID, ops, nil)
			return err
		}
		peer := func(i int) error { return sqlAddMember(ctx, db, g.ID, users[i], i) }
		for _, c := range []struct {
			name  string
			write func(int) error
		}{{"kmkit", kmkit}, {"sql", peer}} {
			b.Run(fmt.Sprintf("writers=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var wall, cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					reset(b)
					b.StartTimer()
					c0, t0 := cpuTime(), time.Now()
					var wg sync.WaitGroup
					for i := range n {
						wg.Go(func() {
							if err := c.write(i); err != nil {
								b.Error(err)
							}
						})
					}
					wg.Wait()
					wall += time.Since(t0)
					cpu += cpuTime() - c0
					b.StopTimer()
					check(b)
					b.StartTimer()
				}
				b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
			})
		}
	}
}

// sqlAddMember is the peer's write: one transaction that takes the team's lock (the
// store's scim_teams row, which hands out the version), adds the member and gives the
// group and the user the version.
func sqlAddMember(ctx context.Context, db *sqlstore.DB, gid, uid string, pos int) error {
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO scim_teams (team, seq) VALUES ('acme', 1)
		ON CONFLICT (team) DO UPDATE SET seq = scim_teams.seq + 1 RETURNING seq`).Scan(&version); err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO scim_members (team, group_id, user_id, pos) VALUES ('acme', $1, $2, $3)`, []any{gid, uid, pos}},
		{`UPDATE scim_groups SET modified_us = $1, version = $2 WHERE team = 'acme' AND id = $3`, []any{now, version, gid}},
		{`UPDATE scim_users SET modified_us = $1, version = $2 WHERE team = 'acme' AND id = $3`, []any{now, version, uid}},
	} {
		if _, err := tx.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
