package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"palaver/dataport"
	"palaver/models"
)

// exportCmd writes one user's data as a Palaver export (NDJSON) to stdout or
// --out: the same stream as GET /api/export.
func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	f := newFlags("export", stderr)
	user := f.string("user", "", "the account whose data is exported (required)")
	outPath := f.string("out", "", "write to this file instead of standard output")
	db := dbFlag(f)
	blobStore := blobStoreFlag(f)
	if pos, err := f.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%w: export takes no arguments, got %q", errUsage, pos[0])
	}
	if *user == "" {
		return fmt.Errorf("%w: export needs --user NAME", errUsage)
	}
	blobs, err := blobStore()
	if err != nil {
		return err
	}
	store, u, err := openForUser(ctx, *db, *user, blobs)
	if err != nil {
		return err
	}
	defer store.Close()
	w := stdout
	if *outPath != "" {
		file, err := os.Create(*outPath)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}()
		w = file
	}
	b := bufio.NewWriter(w)
	n, err := dataport.Export(ctx, store, u.ID, b, nil)
	if err != nil {
		return err
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if *outPath != "" {
		fmt.Fprintf(stderr, "exported %d pages and %d exchanges (%d messages) to %s\n", n.Pages, n.Exchanges, n.Messages, *outPath)
	}
	return nil
}

// openForUser opens and migrates the database and finds the account the
// command is for.
func openForUser(ctx context.Context, dsn, name string, blobs *models.BlobStoreConfig) (*models.Store, *models.User, error) {
	store, _, err := openStore(ctx, dsn, models.Options{Blobs: blobs})
	if err != nil {
		return nil, nil, err
	}
	u, err := store.UserByUsername(ctx, name)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("no account %q: %w", name, err)
	}
	return store, u, nil
}
