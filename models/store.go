package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"palaver/migrations"
)

// Store owns all database access. Every method that reads user data takes the
// user's id and scopes its query by it.
type Store struct {
	db *gorm.DB
	// searches reads for Search on SQLite, through a pool of its own
	// (searchPool); on PostgreSQL it is db.
	searches *gorm.DB
	dialect  string
	group    *committer     // SQLite's group commit of turn writes (commit.go); nil on PostgreSQL
	index    *searchIndexer // SQLite's search indexing after the commit (search_index.go); nil on PostgreSQL
	tag      string         // the application_name of its PostgreSQL sessions (notify.go)
	objects  *s3Blobs       // the S3-compatible store of blobs' bytes (blobs_s3.go); nil: the database
	// onDeleted hears the deletions once committed (deletions.go).
	onDeleted atomic.Pointer[func([]Deletion)]
	// onAccount hears the accounts whose sessions or keys ended (principals.go).
	onAccount atomic.Pointer[func(userID int64)]
	// people remembers, for a while, whether a person's indexed rows are
	// few (SQLite's search: search.go, SearchIndexScope).
	people sync.Map // int64 → personRows
}

// Options tune how a database is opened.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: "full" (default; a committed
	// message survives a power cut) or "normal" (faster, survives a crash).
	Synchronous string
	// Logger receives GORM's statement log; nil keeps it silent.
	Logger logger.Interface
	// OnGroupCommit hears how many writes shared each SQLite group commit
	// (metrics); nil: nobody. It must not block.
	OnGroupCommit func(writes int)
	// BusyTimeout is how long a SQLite write waits for the writer another
	// connection holds before it fails "database is locked": 10 s when
	// zero. (A turn's write then tries again: commit.go.) Tests shorten it.
	BusyTimeout time.Duration
	// Blobs is the S3-compatible store of files' bytes (--blob-store);
	// nil: the database's blobs table.
	Blobs *BlobStoreConfig
}

// Open connects to dsn (a SQLite file path, or a postgres:// URL), creating a
// SQLite file's folder on first use. It does not migrate; call Migrate.
func Open(dsn string, opts Options) (*Store, error) {
	s, err := open(dsn, opts)
	if err != nil || opts.Blobs == nil {
		return s, err
	}
	if s.objects, err = newS3Blobs(opts.Blobs); err == nil {
		err = s.watchBlobDeletions()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func open(dsn string, opts Options) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Default.LogMode(logger.Silent),
		SkipDefaultTransaction: true, // multi-statement writes open their own
		NowFunc:                now,
		TranslateError:         true,
	}
	if opts.Logger != nil {
		cfg.Logger = opts.Logger
	}
	if isPostgres(dsn) {
		// Every session is named after this store (notify.go), so that its
		// holder can tell its own notifications from other processes'.
		tag := newProcessTag()
		db, err := gorm.Open(postgres.Open(withProcessTag(withConnectTimeout(dsn), tag)), cfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// A pool of its own size, kept open: without a bound, 200 tabs
		// reading at once after one event opened 200 connections (each a
		// server process forked), of which database/sql kept 2; under that
		// storm new ones timed out connecting and the tabs' sockets failed.
		// Requests past the pool wait for a connection instead.
		sqlDB.SetMaxOpenConns(postgresPool)
		sqlDB.SetMaxIdleConns(postgresPool)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		return &Store{db: db, searches: db, dialect: "postgres", tag: tag}, nil
	}
	sqliteDSN, err := sqliteDSN(dsn, opts.Synchronous, opts.BusyTimeout)
	if err != nil {
		return nil, err
	}
	// WAL lets readers run beside the one writer SQLite allows. Every
	// transaction begins IMMEDIATE (_txlock) so a read-then-write never has to
	// upgrade its lock, the failure mode that busy_timeout cannot cure; writers
	// then simply queue on the busy timeout. A handful of connections is enough
	// for concurrent readers on 2 cores.
	db, sqlDB, err := openSQLitePool(sqliteDSN, cfg, 8)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", dsn, err)
	}
	searches, _, err := openSQLitePool(sqliteDSN+"&_cache_size=-32768&_query_only=1", cfg, searchPool)
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", dsn, err)
	}
	s := &Store{db: db, searches: searches, dialect: "sqlite"}
	s.index = newSearchIndexer(s)
	onGroup := opts.OnGroupCommit
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = defaultBusyTimeout
	}
	s.group = newCommitter(db, busy, func(writes int) {
		if onGroup != nil {
			onGroup(writes)
		}
		s.index.wrote(writes)
	})
	if s.group.ckpt != nil {
		if err := s.watchErasures(); err != nil {
			s.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
	}
	return s, nil
}

// openSQLitePool opens a pool of up to conns connections to dsn, kept
// open, each through a connector of its own that sets its
// journal_size_limit (erase.go).
func openSQLitePool(dsn string, cfg *gorm.Config, conns int) (*gorm.DB, *sql.DB, error) {
	sqlDB := sql.OpenDB(newSQLiteConnector(dsn))
	db, err := gorm.Open(sqlite.New(sqlite.Config{Conn: sqlDB}), cfg)
	if err != nil {
		sqlDB.Close()
		return nil, nil, err
	}
	sqlDB.SetMaxOpenConns(conns)
	sqlDB.SetMaxIdleConns(conns)
	sqlDB.SetConnMaxIdleTime(0)
	return db, sqlDB, nil
}

// searchPool is how many searches run at once on SQLite; more wait. Search
// reads through a pool of its own: read-only connections, each caching up
// to 32 MiB of pages (SQLite's default is 2 MiB). A search reads a few
// thousand pages of the full-text index (each chat it names looked up in
// every segment, a common word's postings), and with 2 MiB every search
// read them all again from the operating system: search_p50_ms 17-20 →
// 9-12 ms on the bench's million messages. Not the main pool's: there the
// larger cache made a fork's copy of 10,000 rows a quarter slower
// (docs/PERFORMANCE.md). A cache fills only as pages are read, and a
// commit by another connection empties it (SQLite's WAL mode): it serves
// searches between writes, and the pages one search reads more than once.
const searchPool = 4

// postgresPool is how many connections a process holds to PostgreSQL at
// most; with one listening connection per process, max_connections must
// cover 33 per process.
const postgresPool = 32

// connectTimeout bounds a new connection to PostgreSQL: a host that does
// not answer (lost, partitioned) is given up on, and the request answers
// 503 (Unavailable), rather than waiting for the system's TCP timeout.
const connectTimeout = "5"

// withConnectTimeout sets dsn's connect_timeout, in seconds, unless it has
// one.
func withConnectTimeout(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // gorm reports it
	}
	q := u.Query()
	if q.Get("connect_timeout") != "" {
		return dsn
	}
	q.Set("connect_timeout", connectTimeout)
	u.RawQuery = q.Encode()
	return u.String()
}

// defaultBusyTimeout is SQLite's wait for the writer, unless Options say.
const defaultBusyTimeout = 10 * time.Second

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func sqliteDSN(path, synchronous string, busy time.Duration) (string, error) {
	if path == "" {
		return "", errors.New("open sqlite: empty database path")
	}
	switch synchronous {
	case "":
		synchronous = "full"
	case "full", "normal":
	default:
		return "", fmt.Errorf("open sqlite: synchronous must be full or normal, not %q", synchronous)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("open sqlite: create folder: %w", err)
		}
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", strings.ToUpper(synchronous))
	if busy <= 0 {
		busy = defaultBusyTimeout
	}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	q.Set("_secure_delete", "on")
	// Each connection keeps its prepared statements: the same few dozen run
	// on every request, and preparing them was an eighth of a turn's CPU.
	// (gorm's PrepareStmt would not do: inside a transaction it prepares
	// again every time.)
	q.Set("_stmt_cache_size", "128")
	// A URI filename: escape what SQLite would otherwise read as an escape,
	// the start of the parameters or a fragment.
	uriPath := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + uriPath + "?" + q.Encode(), nil
}

// now is the clock for every stored time: UTC, microsecond precision, so a
// time read back from either dialect equals the one written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Migrate applies pending migrations, then fills what SQL cannot compute
// (the username keys of accounts made before them: fillUsernameKeys).
// Whoever opens the store decides when it migrates (cmd/palaver's openStore,
// the bench, the tests); the running is the store's because that second
// step is a Go pass over its own tables, on its own handle and dialect, that
// must follow the SQL every time: one call, so no caller can apply the one
// without the other.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	n, err := migrations.Up(ctx, sqlDB, s.dialect)
	if err != nil {
		return n, err
	}
	if s.index != nil {
		// What a stopped process left waiting is indexed in a moment.
		s.index.wrote(0)
	}
	return n, s.fillUsernameKeys(ctx)
}

// SQL returns the underlying connection pool, for the session store.
func (s *Store) SQL() (*sql.DB, error) { return s.db.DB() }

// Dialect is "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect }

// Close closes the connection pool.
func (s *Store) Close() error {
	if s.index != nil {
		s.index.close()
	}
	if s.group != nil {
		s.group.close()
	}
	if s.dialect == "sqlite" {
		if searches, err := s.searches.DB(); err == nil {
			searches.Close()
		}
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// SearchSQL returns the pool Search reads through (searchPool): the
// bench times the search's statements by hand on it.
func (s *Store) SearchSQL() (*sql.DB, error) { return s.searches.DB() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// notFound turns GORM's record-not-found into ErrNotFound and wraps everything
// else with the operation's name.
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
}
