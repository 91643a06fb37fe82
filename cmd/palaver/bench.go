package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strings"

	"palaver/cmd/palaver/bench"
)

// benchCmd parses `palaver bench`'s flags and runs the bench (package bench).
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("bench", stderr)
	quick := f.bool("quick", false, "shrink the data and the work to finish in under a minute")
	dbDir := f.string("db-dir", os.TempDir(), "folder for the temporary database (removed afterwards)")
	cpuProfile := f.string("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
	traceOut := f.string("trace", "", "write an execution trace of the run to this file (go tool trace reads it; best with --only)")
	only := f.string("only", "", "run only these groups of figures, comma-separated ("+strings.Join(bench.Groups(), ", ")+")")
	pgURL := f.string("postgres", "", "measure on the PostgreSQL server at this postgres:// URL instead (a database of its own is made there and dropped), with xproc_fanout_p99_ms")
	if pos, err := f.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, pos[0])
	}
	if *pgURL != "" && *only != "" {
		return fmt.Errorf("%w: bench --only measures SQLite, not with --postgres", errUsage)
	}
	size := bench.Full
	if *quick {
		size = bench.Quick
	}
	if *cpuProfile != "" {
		out, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *traceOut != "" {
		out, err := os.Create(*traceOut)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := trace.Start(out); err != nil {
			return err
		}
		defer trace.Stop()
	}
	if *pgURL != "" {
		return bench.RunPostgres(ctx, stdout, *pgURL, size)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: where is the palaver binary: %w", err)
	}
	var groups []string
	if *only != "" {
		groups = strings.Split(*only, ",")
	}
	return bench.Run(ctx, stdout, *dbDir, size, exe, groups...)
}
