package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kmkit/kmkit/km"
)

// errNoData is the error of a reload without -data: the embedded demo never changes.
var errNoData = errors.New("reload: the server runs the embedded demo; only a -data directory can be reloaded")

// reload loads the -data directory's Knowledge Models and data into a new store, checked
// as a start would check it, and swaps it in. On error the old store keeps serving and the
// error, which names the file and the line, is logged and returned.
func (a *app) reload(ctx context.Context) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if a.cfg.dataDir == "" {
		a.log.Warn(errNoData.Error())
		return errNoData
	}
	start := time.Now()
	next, err := a.loadKM(ctx)
	if err != nil {
		err = fmt.Errorf("%s: %w", filepath.Clean(a.cfg.dataDir), err)
		a.reloads.WithLabelValues("failed").Inc()
		a.log.Error("reload failed; the previous data stays in service", "err", err)
		return err
	}
	a.live.Swap(next)
	a.reloads.WithLabelValues("ok").Inc()
	models, _ := next.Models(ctx)
	a.log.Info("reloaded", "models", len(models), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// loadKM returns a new KM store of the -data directory: in memory, or imported into the
// database.
func (a *app) loadKM(ctx context.Context) (km.Store, error) {
	s := a.newKM()
	if err := s.Import(ctx, os.DirFS(a.cfg.dataDir)); err != nil {
		return nil, err
	}
	return s, nil
}

// reloadOnSignal reloads on every SIGHUP until ctx is done.
func (a *app) reloadOnSignal(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			a.log.Info("SIGHUP: reloading")
			_ = a.reload(ctx) // logged
		}
	}
}

// watch polls the -data directory every interval and reloads when a file under it was
// added, removed or changed (by name, size or modification time). A failed reload is not
// retried until the files change again.
func (a *app) watch(ctx context.Context, interval time.Duration) {
	last, err := fingerprint(a.cfg.dataDir)
	if err != nil {
		a.log.Error("watch: cannot read the data directory", "err", err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := fingerprint(a.cfg.dataDir)
		if err != nil {
			a.log.Error("watch: cannot read the data directory", "err", err)
			continue
		}
		if now != last {
			last = now
			a.log.Info("watch: the data directory changed: reloading")
			_ = a.reload(ctx) // logged
		}
	}
}

// fingerprint digests the names, sizes and modification times of the files under dir.
func fingerprint(dir string) ([sha256.Size]byte, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", path, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, err
}
