package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"palaver/dataport"
	"palaver/transfer"
)

// importCmd reads a Palaver export, or ChatGPT's conversations.json or
// export .zip, into a user's account, in one transaction.
func importCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("import", stderr)
	user := f.string("user", "", "the account that receives the data (required)")
	db := dbFlag(f)
	fileMiB := fileMaxFlag(f, "largest attached file the import takes, in MiB (as serve's flag)")
	blobStore := blobStoreFlag(f)
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if *user == "" || len(pos) != 1 {
		return fmt.Errorf("%w: import needs --user NAME and one FILE", errUsage)
	}
	if *fileMiB <= 0 {
		return fmt.Errorf("%w: --file-max-mib must be a positive number of MiB", errUsage)
	}
	file, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer file.Close()
	blobs, err := blobStore()
	if err != nil {
		return err
	}
	store, u, err := openForUser(ctx, *db, *user, blobs)
	if err != nil {
		return err
	}
	defer store.Close()
	n, err := dataport.Import(ctx, store, u.ID, file, transfer.Options{MaxFileBytes: int64(*fileMiB) << 20})
	if err != nil {
		return fmt.Errorf("nothing imported: %w", err)
	}
	fmt.Fprintf(stdout, "imported %d exchanges (%d messages) and %d pages; skipped %d exchanges and %d pages already there\n",
		n.Exchanges, n.Messages, n.Pages, n.SkippedExchanges, n.SkippedPages)
	if n.Projects+n.SkippedProjects+n.Memories+n.SkippedMemories > 0 {
		fmt.Fprintf(stdout, "imported %d projects and %d memory entries; skipped %d projects and %d memory entries already there\n",
			n.Projects, n.Memories, n.SkippedProjects, n.SkippedMemories)
	}
	return nil
}
