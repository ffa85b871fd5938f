package server

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/kmkit/kmkit/km"
)

// defaultQueryMemory is -query-memory's default: an eighth of the memory the process may
// use (the machine's, or its cgroup's limit when lower), so that the default concurrency
// of heavy queries fits; km.DefaultMaxQueryMemory where neither can be read.
func defaultQueryMemory() int64 {
	n := machineMemory()
	if n <= 0 {
		return km.DefaultMaxQueryMemory
	}
	return max(n/8, 64<<20)
}

// machineMemory returns the memory available to the process in bytes: MemTotal of
// /proc/meminfo, or the cgroup v2 limit (memory.max) when it is lower; 0 when unknown.
func machineMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					total = kb << 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}
