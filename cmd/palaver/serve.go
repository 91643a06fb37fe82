package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/metrics"
	"palaver/models"
	"palaver/static"
)

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	f := newFlags("serve", stderr)
	addr := f.string("addr", "127.0.0.1:8080", "address to listen on")
	db := dbFlag(f)
	blobStore := blobStoreFlag(f)
	allowReg := f.bool("allow-registration", true, "let visitors create accounts (the first becomes admin), by the form or by a first sign-in through an --oidc provider")
	ssoConfig := ssoFlags(f)
	secure := f.bool("secure-cookies", false, "mark cookies Secure (serve behind HTTPS)")
	sync := f.string("sqlite-synchronous", "full", "SQLite synchronous mode: full (survives power loss) or normal (faster)")
	delay := f.duration("builtin-delay", 0, "pause per word of the builtin agent's streamed replies")
	llmURL := f.string("llm-base-url", "", "OpenAI-compatible endpoint up to /v1 (e.g. http://127.0.0.1:11434/v1); empty uses the builtin offline agent")
	llmKey := f.string("llm-api-key", "", "API key for the endpoint, if it needs one")
	llmModel := f.string("llm-model", "", "model name at the endpoint (required with --llm-base-url)")
	secretKey := f.string("secret-key", "", "encrypts the model connections' API keys at rest; empty: a key kept in palaver.secret beside the SQLite database (made on first start)")
	llmKind := f.string("llm-kind", "openai", "the endpoint's API: openai (any OpenAI-compatible server) or anthropic (the native Messages API)")
	turnTimeout := f.duration("turn-timeout", 10*time.Minute, "longest a reply may take; past it the turn ends as an error row saying so")
	autoRetries := f.int("turn-auto-retries", 1, "times a reply cut off by a server crash is retried automatically after restart (0: only by hand)")
	logLevel := f.string("log-level", "info", "debug, info, warn or error")
	logFormat := f.string("log-format", "text", "text (key=value lines) or json (one JSON object a line)")
	metricsAddr := f.string("metrics-addr", "", "serve Prometheus metrics at /metrics on this address only (e.g. 127.0.0.1:9090; empty: off)")
	importStored := f.int("import-max-stored-mib", 1024, "most MiB one import may store, copies of a ChatGPT file's branches included (and at most 10 times the file's size)")
	importDeadline := f.duration("import-deadline", 10*time.Minute, "longest an import's upload may take, all of it")
	// Files (issue 26).
	fileMiB := fileMaxFlag(f, "largest file one upload may be, in MiB")
	filesPerMsg := f.int("files-per-message", 10, "most files one message may hold")
	quotaMiB := f.int("file-quota-mib", 1024, "most MiB one user's files may take, each stored file counted once")
	fileTextChars := f.int("file-text-chars", 20000, "most characters of an attached text file an OpenAI-compatible model is shown")
	proxyList := f.string("trusted-proxies", "", "comma-separated IPs or CIDR ranges of the reverse proxies whose X-Forwarded-* headers count (empty: none)")
	if pos, err := f.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, pos[0])
	}
	if *turnTimeout <= 0 {
		return fmt.Errorf("%w: --turn-timeout must be positive, got %s", errUsage, *turnTimeout)
	}
	if *importStored <= 0 || *importDeadline <= 0 {
		return fmt.Errorf("%w: --import-max-stored-mib and --import-deadline must be positive", errUsage)
	}
	if *fileMiB <= 0 || *filesPerMsg <= 0 || *quotaMiB <= 0 || *fileTextChars <= 0 {
		return fmt.Errorf("%w: --file-max-mib, --files-per-message, --file-quota-mib and --file-text-chars must be positive", errUsage)
	}
	if *llmKind != "openai" && *llmKind != "anthropic" {
		return fmt.Errorf("%w: --llm-kind must be openai or anthropic, got %q", errUsage, *llmKind)
	}
	if *llmURL != "" && *llmModel == "" {
		return fmt.Errorf("%w: --llm-model ($PALAVER_LLM_MODEL) is required with --llm-base-url", errUsage)
	}
	blobs, err := blobStore()
	if err != nil {
		return err
	}
	oidc, passwordLogin, err := ssoConfig()
	if err != nil {
		return err
	}
	proxies, err := handlers.ParseTrustedProxies(*proxyList)
	if err != nil {
		return fmt.Errorf("%w: --trusted-proxies: %v", errUsage, err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %q is not debug, info, warn or error", errUsage, *logLevel)
	}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	default:
		return fmt.Errorf("%w: --log-format: %q is not text or json", errUsage, *logFormat)
	}
	// Metrics are counted only when they are served: the observers stay
	// empty otherwise.
	var (
		met      *metrics.Metrics
		onCommit func(int)
		turnObs  agents.Observer
		httpObs  handlers.Observer
	)
	if *metricsAddr != "" {
		met = metrics.New()
		onCommit, turnObs, httpObs = met.GroupCommit, met, met
	}

	store, n, err := openStore(ctx, *db, models.Options{Synchronous: strings.ToLower(*sync), OnGroupCommit: onCommit, Blobs: blobs})
	if err != nil {
		return err
	}
	defer store.Close()
	log.Info("database ready", "db", redactDSN(*db), "dialect", store.Dialect(), "migrations_applied", n)
	if blobs != nil {
		log.Info("files' bytes go to an S3-compatible store", "blob_store", blobs.String())
		// Deleted blobs' objects go after their rows (queued by trigger),
		// orphans of uploads cut short are swept (models/blobs_s3.go).
		go store.BlobHousekeeping(ctx, func(op string, err error) { log.Warn("blob store housekeeping failed", "op", op, "err", err) })
	}
	for _, p := range oidc.Providers {
		log.Info("single sign-on provider", "name", p.Name(), "issuer", p.Issuer(), "password_login", passwordLogin)
	}
	if err := warnUsernameClashes(ctx, store, log); err != nil {
		return err
	}
	csrfKey, err := store.ServerSecret(ctx, "csrf")
	if err != nil {
		return err
	}

	assets, err := static.Load()
	if err != nil {
		return err
	}
	if missing := assets.Missing(); len(missing) > 0 {
		log.Warn("assets missing from the binary: run `make assets` before building", "missing", missing)
	}
	sqlDB, err := store.SQL()
	if err != nil {
		return err
	}
	var provider agents.Provider = &agents.Builtin{Delay: *delay}
	switch {
	case *llmURL != "" && *llmKind == "anthropic":
		provider = &agents.Anthropic{BaseURL: *llmURL, APIKey: *llmKey, Model: *llmModel}
		log.Info("agents answer through Anthropic's Messages API", "url", *llmURL, "model", *llmModel)
	case *llmURL != "":
		provider = &agents.OpenAI{BaseURL: *llmURL, APIKey: *llmKey, Model: *llmModel, FileTextChars: *fileTextChars}
		log.Info("agents answer through an OpenAI-compatible endpoint", "url", *llmURL, "model", *llmModel)
	}
	// One count of what each user holds (running turns, live sockets,
	// streams), shared by the agents and the handlers, and the sign-in
	// throttle: in this process on SQLite, in the database on PostgreSQL,
	// where other processes may share them (shared.go).
	slots, throttle, closeShared, err := sharedState(ctx, store, sqlDB, log)
	if err != nil {
		return err
	}
	defer closeShared()
	catalog, err := modelCatalog(ctx, store, *db, *secretKey, provider, llmConnection{url: *llmURL, kind: *llmKind, key: *llmKey, model: *llmModel}, log)
	if err != nil {
		return err
	}
	svc := agents.New(store, provider, agents.Options{Logger: log, AutoRetries: int64(*autoRetries), TurnTimeout: *turnTimeout, Slots: slots, Observer: turnObs, Catalog: catalog})
	recoverEvery := time.Minute
	if store.Dialect() == "postgres" {
		// Other processes may share the database: hear what they commit,
		// reach their turns, and look for dead ones often (issue 13).
		agents.StartWaker(ctx, svc, store, *db)
		recoverEvery = 5 * time.Second
	}
	if n, err := svc.RecoverStaleTurns(ctx); err != nil {
		return err
	} else if n > 0 {
		log.Warn("failed turns left running by a stopped server", "count", n)
	}
	go recoverPeriodically(ctx, svc, recoverEvery, log)
	go retainPeriodically(ctx, store, models.RetentionEvery, log)
	go sweepTemporary(ctx, store, TemporaryEvery, time.Now, log)

	app := handlers.New(handlers.Deps{
		Store:    store,
		Sessions: handlers.NewSessions(sqlDB, store.Dialect(), *secure, 10*time.Minute),
		Agents:   svc,
		Slots:    slots,
		Throttle: throttle,
		Assets:   assets,
		Logger:   log,
		Config: handlers.Config{AllowRegistration: *allowReg, PasswordLoginOff: !passwordLogin, OIDC: oidc, TrustedProxies: proxies,
			MaxImportStored: int64(*importStored) << 20, ImportDeadline: *importDeadline,
			MaxFileBytes: int64(*fileMiB) << 20, MaxFilesPerMessage: *filesPerMsg, UserQuotaBytes: int64(*quotaMiB) << 20},
		CSRFKey:  csrfKey,
		Observer: httpObs,
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if met != nil {
		met.WatchDB("palaver", sqlDB)
		stop, err := serveMetrics(ctx, *metricsAddr, met, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	log.Info("serving", "url", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(handlers.Listener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		log.Info("shutting down")
		err := app.ShutdownWithTimeout(10 * time.Second)
		// Replies still being written are failed cleanly, so they can be
		// retried, rather than left for the stale-lease sweep.
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return errors.Join(err, svc.Close(closeCtx))
	}
}

// serveMetrics serves met's /metrics on addr, apart from the app (an
// operator's address, not the users'), until stop is called.
func serveMetrics(ctx context.Context, addr string, met *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", met.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// warnUsernameClashes logs the accounts whose names became the same under
// the username rules of migration 00004: both still sign in, each by its
// exact name, but an administrator may want one of them renamed.
func warnUsernameClashes(ctx context.Context, store *models.Store, log *slog.Logger) error {
	clashes, err := store.UsernameClashes(ctx)
	if err != nil {
		return err
	}
	for _, c := range clashes {
		log.Warn("two accounts' names are the same name in another case or Unicode form: both kept, each signs in by its exact name",
			"username", c.Username, "same_as", c.SameAs)
	}
	return nil
}

// recoverPeriodically fails turns whose process died, every so often, for
// as long as ctx lives.
func recoverPeriodically(ctx context.Context, svc *agents.Service, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := svc.RecoverStaleTurns(ctx); err != nil {
				log.Error("recover stale turns", "err", err)
			} else if n > 0 {
				log.Warn("failed turns left running by a stopped server", "count", n)
			}
		}
	}
}
