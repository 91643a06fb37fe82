// Package pgtest gives tests of several packages a PostgreSQL database: the
// shared one named by PALAVER_TEST_POSTGRES (wiped and migrated, taken in
// turns with every other package's tests), or a private throwaway cluster
// that a test may stop and start (database faults).
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"testing"

	"palaver/internal/pgtest/pgshared"
	"palaver/models"
)

// Env names the shared test database's URL.
const Env = pgshared.Env

// DSN is the shared test database's URL; the test skips when it is unset.
func DSN(t testing.TB) string {
	t.Helper()
	return pgshared.DSN(t)
}

// Take takes the shared database for the test (an advisory lock held until
// it ends) without wiping it, for a test that runs the binary on it, and
// returns its URL.
func Take(t testing.TB) string {
	t.Helper()
	return pgshared.Take(t)
}

// Wiped takes the shared database for the test (an advisory lock held until
// it ends) and wipes its schema: a store on an empty, unmigrated database,
// for the tests of migrations.
func Wiped(t testing.TB) *models.Store {
	t.Helper()
	dsn := pgshared.Take(t)
	s, err := models.Open(dsn, models.Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	pgshared.Wipe(t, sqlDB)
	return s
}

// Fresh takes the shared database for the test (an advisory lock held until
// it ends), wipes its schema and migrates it. Open more stores on DSN(t) for
// more processes.
func Fresh(t testing.TB) *models.Store {
	t.Helper()
	s := Wiped(t)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s
}

// Cluster is a private PostgreSQL server in a temporary folder, listening on
// a Unix socket there only, for a test that stops and starts it.
type Cluster struct {
	t      testing.TB
	bin    string
	dir    string
	frozen []int
	// DSN is its database palaver's URL.
	DSN string
}

// NewCluster initialises and starts a private cluster, stopped and removed
// when the test ends. It skips the test, saying why, when the PostgreSQL
// server's binaries are missing or the test does not run as root (initdb
// runs as the user postgres, through runuser).
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): the private cluster this test stops cannot be made")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the private cluster this test stops is made as the user postgres, through runuser, which needs root")
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("no user postgres to run the private cluster: %v", err)
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Skip("no runuser: the private cluster cannot be started as the user postgres")
	}
	sort.Strings(bins) // the newest version last (one digit or two: good enough here)
	c := &Cluster{t: t, bin: filepath.Dir(bins[len(bins)-1])}
	c.dir, err = os.MkdirTemp("", "palaver-pgfault.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(c.dir) })
	if out, err := exec.Command("chown", pg.Username+":", c.dir).CombinedOutput(); err != nil {
		t.Fatalf("chown %s: %v %s", c.dir, err, out)
	}
	c.run("initdb", "-D", c.dir+"/data", "-U", "postgres", "-A", "trust", "--no-sync")
	c.Start()
	t.Cleanup(func() { _ = c.pgctl("-m", "immediate", "stop") })
	c.run("createdb", "-h", c.dir, "-U", "postgres", "palaver")
	c.DSN = fmt.Sprintf("postgres://postgres@/palaver?host=%s&sslmode=disable", c.dir)
	return c
}

// run runs one of the server's programs as the user postgres.
func (c *Cluster) run(prog string, args ...string) {
	c.t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, prog)}, args...)...)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("%s: %v\n%s", prog, err, out)
	}
}

func (c *Cluster) pgctl(args ...string) error {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, "pg_ctl"),
		"-D", c.dir + "/data", "-l", c.dir + "/log", "-w"}, args...)...)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl %v: %v\n%s", args, err, out)
	}
	return nil
}

// Start starts the server (again).
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.pgctl("-o", "-c listen_addresses='' -k "+c.dir+" -c fsync=off -c full_page_writes=off", "start"); err != nil {
		c.t.Fatal(err)
	}
}

// Stop stops the server at once, as a crash or a lost host would, closing
// every connection (pg_ctl's immediate mode: it recovers at the next start).
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.pgctl("-m", "immediate", "stop"); err != nil {
		c.t.Fatal(err)
	}
}

// Dir is the cluster's folder (its socket, its log).
func (c *Cluster) Dir() string { return c.dir }
