package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"palaver/accounts"
	"palaver/handlers"
	"palaver/models"
)

// openStore opens and migrates the database, checks its blob store (if
// any), and says how many migrations it applied.
func openStore(ctx context.Context, dsn string, opts models.Options) (*models.Store, int, error) {
	store, err := models.Open(dsn, opts)
	if err != nil {
		return nil, 0, err
	}
	n, err := store.Migrate(ctx)
	if err == nil {
		err = store.CheckBlobStore(ctx)
	}
	if err != nil {
		store.Close()
		return nil, 0, err
	}
	return store, n, nil
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("migrate", stderr)
	db := dbFlag(f)
	if pos, err := f.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%w: migrate takes no arguments, got %q", errUsage, pos[0])
	}
	store, n, err := openStore(ctx, *db, models.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "applied %d migration(s)\n", n)
	return nil
}

func userAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("user add", stderr)
	db := dbFlag(f)
	password := f.string("password", "", "the account's password (at least 8 characters)")
	admin := f.bool("admin", false, "make the account an admin")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: user add takes one NAME", errUsage)
	}
	name := accounts.Username(pos[0]) // the same rules as registering in the browser
	if err := accounts.ValidateCredentials(name, *password); err != nil {
		return fmt.Errorf("%w: %s", errUsage, err)
	}
	store, _, err := openStore(ctx, *db, models.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	hash, err := accounts.HashPassword(*password)
	if err != nil {
		return err
	}
	u, err := store.CreateUser(ctx, name, hash, *admin)
	if errors.Is(err, models.ErrUsernameTaken) {
		return fmt.Errorf("user %q already exists", name)
	}
	if err != nil {
		return err
	}
	role := "user"
	if u.IsAdmin {
		role = "admin"
	}
	fmt.Fprintf(stdout, "created %s %q (id %d)\n", role, u.Username, u.ID)
	return nil
}

func userKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("user key", stderr)
	db := dbFlag(f)
	keyName := f.string("key-name", "cli", "the key's name, as the user's list of keys shows it")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: user key takes one NAME", errUsage)
	}
	store, _, err := openStore(ctx, *db, models.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := store.UserByUsername(ctx, pos[0])
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("no user named %q", pos[0])
	}
	if err != nil {
		return err
	}
	name := strings.TrimSpace(*keyName)
	if name == "" {
		return fmt.Errorf("%w: --key-name cannot be empty", errUsage)
	}
	key, err := handlers.NewAPIKey()
	if err != nil {
		return err
	}
	if _, err := store.CreateAPIKey(ctx, u.ID, name, handlers.HashAPIKey(key)); err != nil {
		return err
	}
	fmt.Fprintln(stdout, key)
	return nil
}
