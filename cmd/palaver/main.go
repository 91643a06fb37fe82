// Command palaver serves Palaver and administers its database.
//
//	palaver serve   [--addr 127.0.0.1:8080] [--db data/palaver.db]
//	palaver migrate [--db …]
//	palaver user add NAME --password PW [--admin] [--db …]
//	palaver user key NAME [--db …]
//	palaver export --user NAME [--out FILE] [--db …]
//	palaver import --user NAME FILE [--db …]
//	palaver bench [--quick] [--postgres URL] [--only GROUPS] [--db-dir DIR] [--cpuprofile FILE] [--trace FILE]
//
// Every flag also reads an environment variable (PALAVER_ADDR, PALAVER_DB, …).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"palaver/cmd/palaver/bench"
	"palaver/models"
	"palaver/transfer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  palaver serve   [--addr 127.0.0.1:8080] [--db data/palaver.db]   migrate, then serve
  palaver migrate [--db …]                                          apply pending migrations
  palaver user add NAME --password PW [--admin] [--db …]            create an account
  palaver user key NAME [--db …]                                    print a new API key
  palaver export --user NAME [--out FILE] [--db …]                  the user's data as JSONL (stdout without --out)
  palaver import --user NAME FILE [--db …]                          Palaver JSONL, or ChatGPT's conversations.json / export .zip
  palaver bench   [--quick] [--postgres URL] [--only GROUPS] [--db-dir DIR] [--cpuprofile FILE] [--trace FILE]
                                                                    measure against the targets on a temporary database

Run "palaver COMMAND -h" for a command's flags; each also reads its PALAVER_* variable.
`

// errUsage marks a mistake on the command line (exit status 2).
var errUsage = errors.New("usage")

// run executes one command and returns the exit status. Errors become one
// clear line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "palaver:", strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	default:
		fmt.Fprintln(stderr, "palaver:", err)
		return 1
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest, stderr)
	case "migrate":
		return migrate(ctx, rest, stdout, stderr)
	case "export":
		return exportCmd(ctx, rest, stdout, stderr)
	case "import":
		return importCmd(ctx, rest, stdout, stderr)
	case "bench":
		return benchCmd(ctx, rest, stdout, stderr)
	case "bench-clients": // the bench's own: its API clients in a process apart
		return bench.Clients(os.Stdin, stdout)
	case "user":
		if len(rest) == 0 {
			return fmt.Errorf("%w: user needs a subcommand: add or key", errUsage)
		}
		switch rest[0] {
		case "add":
			return userAdd(ctx, rest[1:], stdout, stderr)
		case "key":
			return userKey(ctx, rest[1:], stdout, stderr)
		}
		return fmt.Errorf("%w: unknown user subcommand %q (want add or key)", errUsage, rest[0])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("%w: unknown command %q (run \"palaver help\" for the list)", errUsage, cmd)
	}
}

// flags is a FlagSet whose flags default to their PALAVER_* variable.
type flags struct {
	*flag.FlagSet
	envErr error
	help   io.Writer // where -h prints the flags
}

func newFlags(name string, stderr io.Writer) *flags {
	fs := flag.NewFlagSet("palaver "+name, flag.ContinueOnError)
	// Left to itself the flag package prints its error and then the whole
	// usage; run prints the error as the one line the contract promises, and
	// parse prints the flags only when asked with -h.
	fs.SetOutput(io.Discard)
	return &flags{FlagSet: fs, help: stderr}
}

func envName(flagName string) string {
	return "PALAVER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flags) string(name, def, help string) *string {
	if v, ok := os.LookupEnv(envName(name)); ok {
		def = v
	}
	return f.String(name, def, help+" ($"+envName(name)+")")
}

func (f *flags) bool(name string, def bool, help string) *bool {
	if v, ok := os.LookupEnv(envName(name)); ok {
		b, err := strconv.ParseBool(v)
		if err != nil && f.envErr == nil {
			f.envErr = fmt.Errorf("%w: $%s: %q is not true or false", errUsage, envName(name), v)
		}
		def = b
	}
	return f.Bool(name, def, help+" ($"+envName(name)+")")
}

func (f *flags) int(name string, def int, help string) *int {
	if v, ok := os.LookupEnv(envName(name)); ok {
		n, err := strconv.Atoi(v)
		if err != nil && f.envErr == nil {
			f.envErr = fmt.Errorf("%w: $%s: %q is not a whole number", errUsage, envName(name), v)
		}
		def = n
	}
	return f.Int(name, def, help+" ($"+envName(name)+")")
}

func (f *flags) duration(name string, def time.Duration, help string) *time.Duration {
	if v, ok := os.LookupEnv(envName(name)); ok {
		d, err := time.ParseDuration(v)
		if err != nil && f.envErr == nil {
			f.envErr = fmt.Errorf("%w: $%s: %q is not a duration like 30ms", errUsage, envName(name), v)
		}
		def = d
	}
	return f.Duration(name, def, help+" ($"+envName(name)+")")
}

// parse parses args, allowing flags after positional arguments, and returns
// the positional ones.
func (f *flags) parse(args []string) ([]string, error) {
	if f.envErr != nil {
		return nil, f.envErr
	}
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(f.help, "usage of %s:\n", f.Name())
				f.SetOutput(f.help)
				f.PrintDefaults()
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = f.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// blobStoreFlag is the --blob-store flag of the commands that read or
// write files' bytes (serve, export, import); its value is read once the
// flags are parsed, credentials from the environment (never the URL).
func blobStoreFlag(f *flags) func() (*models.BlobStoreConfig, error) {
	raw := f.string("blob-store", "", "where files' bytes go: empty for the database, or s3://BUCKET?endpoint=HOST:PORT[&region=R][&secure=false][&path_style=true][&prefix=P] with the credentials in $PALAVER_S3_ACCESS_KEY and $PALAVER_S3_SECRET_KEY")
	return func() (*models.BlobStoreConfig, error) {
		c, err := models.ParseBlobStore(*raw, os.Getenv)
		if err != nil {
			return nil, fmt.Errorf("%w: --blob-store: %v", errUsage, err)
		}
		return c, nil
	}
}

// dbFlag is the --db flag every command has.
// fileMaxFlag is --file-max-mib, the largest file in MiB, as serve (an
// upload) and import (an attached file) take it.
func fileMaxFlag(f *flags, help string) *int {
	return f.int("file-max-mib", transfer.DefaultMaxFileBytes>>20, help)
}

func dbFlag(f *flags) *string {
	return f.string("db", "data/palaver.db", "SQLite file path (created on first run) or postgres:// URL")
}
