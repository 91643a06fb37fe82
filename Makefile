# Palaver's one entry point. `make help` lists the targets.

GO       ?= go
TAGS     := sqlite_fts5
GOFLAGS_ := -tags=$(TAGS)
BIN      := bin/palaver
# The S3-compatible server the S3 blob store's tests run against (Versity's
# gateway): a module of its own (tools/s3server), so that its ~200 modules
# stay out of Palaver's go.mod; built once into bin/, from the module proxy.
S3SERVER := bin/versitygw
ASSETS   := static/dist/app.css static/dist/htmx.min.js static/dist/ws.min.js
GO_SRC   := $(shell find . -name '*.go' -not -path './node_modules/*') go.mod go.sum
TEMPL    := $(wildcard views/*.templ)
# Fuzzing budgets in executions, about 10 s each on 2 cores. A count, not a
# duration: a duration races Go 1.26's fuzz coordinator at the deadline and
# can fail with "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27).
FUZZ_PATCH    ?= 200000x
FUZZ_MARKDOWN ?= 40000x
FUZZ_API      ?= 8000x
FUZZ_SEARCH   ?= 20000x
FUZZ_TRANSFER ?= 20000x
FUZZ_TOOLARGS ?= 10000x
FUZZ_UPLOAD   ?= 15000x
export BROWSERSLIST_IGNORE_OLD_DATA := 1

.DEFAULT_GOAL := help
.PHONY: help assets generate build run test check bench clean chromium s3server

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  make %-9s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

static/dist/app.css: node_modules/.package-lock.json tailwind.config.js static/app.css $(TEMPL) $(wildcard views/*.go handlers/*.go) static/app.js
	npx tailwindcss -c tailwind.config.js -i static/app.css -o $@ --minify

static/dist/htmx.min.js: node_modules/.package-lock.json
	cp node_modules/htmx.org/dist/htmx.min.js $@

static/dist/ws.min.js: node_modules/.package-lock.json
	cp node_modules/htmx-ext-ws/dist/ws.min.js $@

assets: $(ASSETS) ## Build the CSS and copy htmx + its ws extension into static/dist

generate: ## Regenerate the templ components (*_templ.go, committed)
	$(GO) tool templ generate

$(BIN): $(ASSETS) $(GO_SRC)
	$(GO) build $(GOFLAGS_) -o $@ ./cmd/palaver

build: $(BIN) ## Build bin/palaver (assets embedded)

run: $(BIN) ## Build, migrate data/palaver.db and serve on http://127.0.0.1:8080
	PALAVER_BUILTIN_DELAY=$${PALAVER_BUILTIN_DELAY:-40ms} $(BIN) serve

bench: $(BIN) ## Measure against the performance targets on a temporary database (BENCH_FLAGS=--quick)
	$(BIN) bench $(BENCH_FLAGS)

$(S3SERVER): tools/s3server/go.mod tools/s3server/go.sum
	@mkdir -p $(dir $(S3SERVER))
	cd tools/s3server && $(GO) build -o ../../$(S3SERVER) github.com/versity/versitygw/cmd/versitygw

s3server: $(S3SERVER) ## Build the S3 server the tests of --blob-store s3://… use (bin/versitygw)

# The browser tests drive Debian's chromium (handlers/browser_*_test.go). As
# root it is installed when missing; otherwise make stops and says so.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing chromium for the browser tests (about 2 minutes)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make test needs Chromium for the browser tests: install the Debian package 'chromium' (apt-get install chromium), then run make test again"; \
	    exit 1; \
	  fi; }

# The store tests also run on PostgreSQL: on a throwaway cluster listening
# only on a Unix socket in a temporary folder (so no port can collide), or on
# the database named by PALAVER_TEST_POSTGRES. As root the server package is
# installed when missing; otherwise those tests skip and say why. The S3
# blob store's tests run against bin/versitygw (built once, above).
test: $(ASSETS) chromium $(S3SERVER) ## Build what the tests need and run every test
	$(GO) vet $(GOFLAGS_) ./...
	@set -eu; \
	if [ -z "$${PALAVER_TEST_POSTGRES:-}" ]; then \
	  pgbin=$$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1); \
	  if [ -z "$$pgbin" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing the PostgreSQL server for the store tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	    pgbin=$$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1); \
	  fi; \
	  if [ -n "$$pgbin" ] && [ "$$(id -u)" = 0 ]; then \
	    pgdir=$$(mktemp -d /tmp/palaver-pg.XXXXXX); chown postgres:postgres "$$pgdir"; \
	    trap '(cd / && runuser -u postgres -- "$$pgbin/pg_ctl" -D "$$pgdir/data" -m fast stop >/dev/null 2>&1); rm -rf "$$pgdir"' EXIT; \
	    (cd / && runuser -u postgres -- "$$pgbin/initdb" -D "$$pgdir/data" -U postgres -A trust --no-sync >/dev/null); \
	    (cd / && runuser -u postgres -- "$$pgbin/pg_ctl" -D "$$pgdir/data" -l "$$pgdir/log" -w \
	      -o "-c listen_addresses='' -k $$pgdir -c fsync=off -c full_page_writes=off -c max_connections=300" start >/dev/null); \
	    "$$pgbin/psql" -q -h "$$pgdir" -U postgres -c "CREATE DATABASE palaver_test"; \
	    export PALAVER_TEST_POSTGRES="postgres://postgres@/palaver_test?host=$$pgdir&sslmode=disable"; \
	  else \
	    echo "note: no PostgreSQL server (or not root): the PostgreSQL store tests will skip"; \
	  fi; \
	fi; \
	PALAVER_BROWSER_TESTS=required PALAVER_TEST_S3_SERVER=$(CURDIR)/$(S3SERVER) $(GO) test $(GOFLAGS_) -count=1 -timeout 30m ./...
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzPatch$$' -fuzztime $(FUZZ_PATCH) ./agents/sections
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzMarkdown$$' -fuzztime $(FUZZ_MARKDOWN) ./views
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzAPIRequest$$' -fuzztime $(FUZZ_API) ./handlers
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzSearchQuery$$' -fuzztime $(FUZZ_SEARCH) ./models
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzPalaverReader$$' -fuzztime $(FUZZ_TRANSFER) ./transfer
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzChatGPTReader$$' -fuzztime $(FUZZ_TRANSFER) ./transfer
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzValidateArgs$$' -fuzztime $(FUZZ_TOOLARGS) ./agents
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzInspect$$' -fuzztime $(FUZZ_UPLOAD) ./uploads

check: ## Fail if templ generate or gofmt would change a file, or go vet complains
	$(GO) tool templ generate
	@git diff --exit-code -- '*_templ.go' || (echo "templ generate changed files: commit them"; exit 1)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt would change the files above"; exit 1)
	$(GO) vet $(GOFLAGS_) ./...

clean: ## Remove built files (not data/)
	rm -rf bin static/dist/*.css static/dist/*.js
