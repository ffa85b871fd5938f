package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/km"
)

// config is the server's configuration from flags and KMKIT_* variables.
type config struct {
	addr        string
	dataDir     string
	db          string
	demoRows    int
	keysFile    string
	maxPageSize int
	maxBody     int64
	seats       int // default seat limit of a team's license; 0 is unlimited
	logLevel    slog.Level
}

// parseConfig reads the flags of args; every flag's default comes from its environment
// variable, so a flag on the command line wins over the variable.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envInt := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not an integer", name, v)
		}
		return n, nil
	}
	cfg := &config{}
	demoRows, err := envInt("KMKIT_DEMO_ROWS", 0)
	if err != nil {
		return nil, err
	}
	maxPage, err := envInt("KMKIT_MAX_PAGE_SIZE", km.DefaultMaxPageSize)
	if err != nil {
		return nil, err
	}
	maxBody, err := envInt("KMKIT_MAX_BODY", km.DefaultMaxBodyBytes)
	if err != nil {
		return nil, err
	}
	seats, err := envInt("KMKIT_SEATS", 0)
	if err != nil {
		return nil, err
	}
	var level string
	fs.StringVar(&cfg.addr, "addr", env("KMKIT_ADDR", ":8080"), "listen address (KMKIT_ADDR)")
	fs.StringVar(&cfg.dataDir, "data", env("KMKIT_DATA", ""), "serve this data directory instead of the demo (KMKIT_DATA)")
	fs.StringVar(&cfg.db, "db", env("KMKIT_DB", "sqlite:kmkit.db"), "sqlite:PATH, memory: or a postgres:// URL (KMKIT_DB)")
	fs.IntVar(&cfg.demoRows, "demo-rows", demoRows, "generate the demo with this many orders (KMKIT_DEMO_ROWS)")
	fs.StringVar(&cfg.keysFile, "keys", env("KMKIT_KEYS", ""), "keys file; without it a development key is printed (KMKIT_KEYS)")
	fs.IntVar(&cfg.maxPageSize, "max-page-size", maxPage, "largest pageSize of the KM API (KMKIT_MAX_PAGE_SIZE)")
	fs.Int64Var(&cfg.maxBody, "max-body", int64(maxBody), "largest request body in bytes (KMKIT_MAX_BODY)")
	fs.IntVar(&cfg.seats, "seats", seats, "seat limit of a team's license unless the keys file sets one; 0 is unlimited (KMKIT_SEATS)")
	fs.StringVar(&level, "log-level", env("KMKIT_LOG_LEVEL", "info"), "debug, info, warn or error (KMKIT_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case cfg.demoRows < 0:
		return nil, errors.New("-demo-rows must not be negative")
	case cfg.demoRows > 0 && cfg.dataDir != "":
		return nil, errors.New("-demo-rows and -data exclude each other")
	case cfg.maxPageSize < 1:
		return nil, errors.New("-max-page-size must be at least 1")
	case cfg.maxBody < 1:
		return nil, errors.New("-max-body must be at least 1")
	case cfg.seats < 0:
		return nil, errors.New("-seats must not be negative")
	}
	if err := cfg.logLevel.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	return cfg, nil
}
