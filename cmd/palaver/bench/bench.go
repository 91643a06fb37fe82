// Package bench measures Palaver against its performance targets: a
// temporary database is seeded, the real app serves it on a loopback
// listener, and each figure is printed beside a raw baseline measured in the
// same run (figures swing between runs and machines; ratios within one run
// do not). `palaver bench` runs it; each figure lives in its own file.
package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
	"palaver/static"
)

// Size is how much data and work one bench run uses.
type Size struct {
	AppendSmall, AppendBig int // messages already in the exchange a turn is appended to
	AppendTurns            int // turns timed at each size
	Clients                int // concurrent API clients and raw-insert goroutines
	Turns                  int // API turns (and raw turns) in all, over the clients
	HistExchanges          int
	HistMessages           int
	HistSamples            int
	FanoutClients          int
	FanoutRounds           int
	IdleSockets            int
}

// Full is the size the targets are set for; Quick finishes in about 20 s.
var (
	Full  = Size{10, 10_000, 50, 8, 800, 100_000, 1_000_000, 200, 200, 20, 1000}
	Quick = Size{10, 1_000, 20, 8, 200, 10_000, 100_000, 100, 200, 8, 200}
)

// figure measures and prints one group of figures.
type figure func(ctx context.Context, e *env, r report) error

// figures run in this order: the disk's own cost first (the yardstick for
// comparing machines), then the cheap ones, the seeding of the big
// history table after the turns (so they meet a small database), the
// search over that history, a server started on it, the sockets, and last
// the export and its import (a million-message transaction, whose WAL the
// next commits would pay for). readsHistory marks the groups that read
// the data the history figures seed (--only runs those with them).
var figures = []struct {
	name         string
	run          figure
	readsHistory bool
}{
	{"disk", diskFigures, false},
	{"append", appendFigures, false},
	{"fork", forkFigures, false},
	{"resume", resumeFigures, false},
	{"open", openFigures, false},
	{"files", filesFigures, false},
	{"throughput", throughputFigures, false},
	{"history", historyFigures, false},
	{"search", searchFigures, true},
	{"projects", projectsFigures, true},
	{"usage", usageFigures, false},
	{"startup", startupFigures, true},
	{"fanout", fanoutFigures, false},
	{"shares", sharesFigures, false},
	{"rss", rssFigures, false},
	{"export", exportFigures, true},
}

// Groups names the groups of figures, in the order they run (for --only).
func Groups() []string {
	names := make([]string, len(figures))
	for i, f := range figures {
		names[i] = f.name
	}
	return names
}

// Run seeds a database in a temporary folder under dbDir, serves it and
// prints every figure to stdout, one a line. palaver is the palaver binary,
// which the bench starts as a process of its own for startup_ms and for the
// throughput figures' clients (so that cpu_us_per_turn is the server's
// alone); "" (a test) runs the clients in this process and skips startup_ms.
// only, when given, names the groups of figures to run (a quicker look at
// one part while working on it): the disk's always runs, and the history's
// seeding runs for the groups that read its data (search, startup,
// export).
func Run(ctx context.Context, stdout io.Writer, dbDir string, size Size, palaver string, only ...string) error {
	run, err := selectFigures(only)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# palaver bench: %d CPUs, %s/%s, %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(stdout, "# sizes: append %d vs %d messages, %d turns from %d clients, history %d exchanges / %d messages, fanout %d sockets x %d rounds, %d idle sockets\n",
		size.AppendBig, size.AppendSmall, size.Turns, size.Clients, size.HistExchanges, size.HistMessages, size.FanoutClients, size.FanoutRounds, size.IdleSockets)
	dir, err := os.MkdirTemp(dbDir, "palaver-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e, err := start(ctx, filepath.Join(dir, "bench.db"), size)
	if err != nil {
		return err
	}
	e.palaver = palaver
	defer e.close()
	var misses []string
	for _, f := range figures {
		if !run[f.name] {
			continue
		}
		if err := f.run(ctx, e, report{stdout, &misses}); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return missed(misses)
}

// selectFigures says which groups of figures run: every one without only;
// otherwise the named ones, the disk's, and the history's where a named
// group reads the data it seeds. An unknown name is an error that lists
// the known ones.
func selectFigures(only []string) (map[string]bool, error) {
	run := map[string]bool{}
	for _, f := range figures {
		run[f.name] = len(only) == 0
	}
	for _, name := range only {
		if _, ok := run[name]; !ok {
			return nil, fmt.Errorf("bench: no figures named %q (known: %s)", name, strings.Join(Groups(), ", "))
		}
		run[name] = true
	}
	for _, f := range figures {
		if f.readsHistory && run[f.name] {
			run["history"] = true
		}
	}
	run["disk"] = true
	return run, nil
}

// env is the seeded database, the server on a loopback listener and the
// clients' credentials.
type env struct {
	size    Size
	path    string // the database file
	palaver string // the palaver binary, or "" (Run)
	dir     string // the temporary folder of the database
	store   *models.Store
	raw     *sql.DB // a second pool on the same file, same SQLite settings
	// rawSearches is the second store's search pool (models.Store.SearchSQL),
	// where the searches' statements are timed by hand.
	rawSearches *sql.DB
	svc         *agents.Service
	addr        string
	via         string // where chat posts turns when not addr (xproc.go)
	http        *http.Client
	jar         http.CookieJar
	userID      int64
	apiKey      string
	closers     []func()

	words []string // the seeded text's vocabulary, most frequent first (vocabulary)
	// histUser is the user whose big history the history figures seed,
	// and the search figures search.
	histUser struct {
		id     int64
		apiKey string
	}
}

// vocabulary is the words the bench writes its messages with, made once.
func (e *env) vocabulary() []string {
	if e.words == nil {
		e.words = vocabulary()
	}
	return e.words
}

// start opens and migrates the database at path, serves the app on a
// loopback listener and signs the bench user up.
func start(ctx context.Context, path string, size Size) (_ *env, err error) {
	e := &env{size: size, path: path, dir: filepath.Dir(path)}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if err := e.serve(ctx, path); err != nil {
		return nil, err
	}
	e.jar, _ = cookiejar.New(nil)
	e.http = &http.Client{Jar: e.jar, Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := e.signUp(ctx); err != nil {
		return nil, fmt.Errorf("sign up: %w", err)
	}
	return e, nil
}

// serve opens and migrates the database at path (a SQLite file or a
// postgres:// URL) and serves the app on it on a loopback listener. On
// PostgreSQL the app listens for other processes' commits, as serve does.
func (e *env) serve(ctx context.Context, path string) (err error) {
	opts := models.Options{Synchronous: "full"}
	if e.store, err = models.Open(path, opts); err != nil {
		return err
	}
	e.closers = append(e.closers, func() { e.store.Close() })
	if _, err := e.store.Migrate(ctx); err != nil {
		return err
	}
	// The raw baseline: plain database/sql on a second pool opened with the
	// very same DSN and pool settings as the app's (models.Open builds it).
	rawStore, err := models.Open(path, opts)
	if err != nil {
		return err
	}
	e.closers = append(e.closers, func() { rawStore.Close() })
	if e.raw, err = rawStore.SQL(); err != nil {
		return err
	}
	if e.rawSearches, err = rawStore.SearchSQL(); err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// One bench user drives every client and socket: the per-user limits,
	// a policy for people, would measure the policy instead of the machine.
	slots := agents.NewMemorySlotsWithLimits(nil)
	// The model catalog as `palaver serve` has it without --llm flags (its
	// offline connection), so that a turn picks its model and checks its
	// budget as a served one does.
	box, err := agents.NewSecretBox(rand.Text())
	if err != nil {
		return err
	}
	offline, model := models.OfflineConnection()
	if err := e.store.EnsureFlagConnection(ctx, offline, model); err != nil {
		return err
	}
	catalog := agents.NewCatalog(e.store, box, &agents.Builtin{})
	e.svc = agents.New(e.store, &agents.Builtin{}, agents.Options{Logger: log, Slots: slots, Catalog: catalog})
	e.closers = append(e.closers, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.svc.Close(cctx)
	})
	if e.store.Dialect() == "postgres" {
		wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		agents.StartWaker(wctx, e.svc, e.store, path)
		e.closers = append(e.closers, stop)
	}
	assets, err := static.Load()
	if err != nil {
		return err
	}
	sqlDB, err := e.store.SQL()
	if err != nil {
		return err
	}
	app := handlers.New(handlers.Deps{
		Store:    e.store,
		Sessions: handlers.NewSessions(sqlDB, e.store.Dialect(), false, 10*time.Minute),
		Agents:   e.svc,
		Slots:    slots,
		Assets:   assets,
		Logger:   log,
		Config:   handlers.Config{AllowRegistration: true},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = app.Listener(handlers.Listener(ln)) }()
	e.closers = append(e.closers, func() { _ = app.ShutdownWithTimeout(2 * time.Second) })
	e.addr = ln.Addr().String()
	return nil
}

// close undoes start, last step first.
func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}
