//go:build unix

package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Freeze stops every process of the server (SIGSTOP) without closing a
// connection: a hung server, or a host lost without a word, as its clients
// see it. Thaw lets it go on; the test thaws it at the end in any case.
func (c *Cluster) Freeze() {
	c.t.Helper()
	pids := c.pids()
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			c.t.Fatalf("freeze %d: %v", pid, err)
		}
	}
	c.t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	c.frozen = pids
}

// Thaw lets a frozen server go on.
func (c *Cluster) Thaw() {
	c.t.Helper()
	for _, pid := range c.frozen {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			c.t.Fatalf("thaw %d: %v", pid, err)
		}
	}
	c.frozen = nil
}

// pids are the server's processes: the postmaster (its postmaster.pid) and
// its children.
func (c *Cluster) pids() []int {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "data", "postmaster.pid"))
	if err != nil {
		c.t.Fatal(err)
	}
	main, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		c.t.Fatalf("postmaster.pid: %v", err)
	}
	pids := []int{main}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read past its ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(main) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			pids = append(pids, pid)
		}
	}
	return pids
}
