package models

import (
	"context"
	"slices"
	"testing"

	"palaver/migrations"
)

// TestUsernamesUniqueByKey: a name another account has in another case or
// Unicode form is taken, and sign-in's lookup finds an account by any form.
func TestUsernamesUniqueByKey(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		alice := mustUser(t, s, "alice")
		for _, name := range []string{"Alice", "ALICE", "ａｌｉｃｅ"} {
			_, err := s.CreateUser(ctx, name, "h", false)
			wantErr(t, err, ErrUsernameTaken, "create "+name)
		}
		if n := count(t, s, "users", "1 = 1"); n != 1 {
			t.Fatalf("%d accounts, want only alice", n)
		}
		for _, name := range []string{"alice", "ALICE", "Alice", "ａｌｉｃｅ"} {
			if u, err := s.UserByUsername(ctx, name); err != nil || u.ID != alice.ID {
				t.Errorf("UserByUsername(%q) = %+v, %v; want alice", name, u, err)
			}
		}
		if alice.UsernameKey == nil || *alice.UsernameKey != "alice" {
			t.Errorf("alice's key = %v", alice.UsernameKey)
		}
	})
}

// TestUsernameKeysMigration: accounts made before migration 00004 get their
// keys; two whose names now clash both survive, the older holds the key, each
// signs in by its own spelling, and the clash is reported.
func TestUsernameKeysMigration(t *testing.T) {
	eachEmptyDB(t, checkUsernameMigration)
}

func checkUsernameMigration(t *testing.T, s *Store) {
	ctx := context.Background()
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(ctx, sqlDB, s.dialect, 3); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob", "Alice", "ALICE", "carol"} {
		if err := s.db.Exec("INSERT INTO users (username, password_hash, is_admin, created_at) VALUES (?, ?, false, ?)",
			name, "hash-of-"+name, now()).Error; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate with clashing names: %v", err)
	}
	keys := map[string]*string{}
	var users []User
	if err := s.db.Order("id").Find(&users).Error; err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		keys[u.Username] = u.UsernameKey
	}
	if len(keys) != 5 {
		t.Fatalf("accounts after the migration: %v, want all five", keys)
	}
	for name, want := range map[string]string{"alice": "alice", "bob": "bob", "carol": "carol"} {
		if k := keys[name]; k == nil || *k != want {
			t.Errorf("%s's key = %v, want %q", name, k, want)
		}
	}
	for _, name := range []string{"Alice", "ALICE"} {
		if k := keys[name]; k != nil {
			t.Errorf("%s's key = %q, want NULL (alice, older, holds it)", name, *k)
		}
	}
	for _, name := range []string{"alice", "Alice", "ALICE", "bob"} {
		u, err := s.UserByUsername(ctx, name)
		if err != nil || u.Username != name || u.PasswordHash != "hash-of-"+name {
			t.Errorf("UserByUsername(%q) = %+v, %v; want that very account", name, u, err)
		}
	}
	if u, err := s.UserByUsername(ctx, "aLiCe"); err != nil || u.Username != "alice" {
		t.Errorf("UserByUsername(aLiCe) = %+v, %v; want alice, the holder of the key", u, err)
	}
	clashes, err := s.UsernameClashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []UsernameClash{{Username: "Alice", SameAs: "alice"}, {Username: "ALICE", SameAs: "alice"}}
	if !slices.Equal(clashes, want) {
		t.Errorf("clashes = %+v, want %+v", clashes, want)
	}
	// Migrating again changes nothing, and a new account cannot take the key.
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateUser(ctx, "ALIce", "h", false)
	wantErr(t, err, ErrUsernameTaken, "create ALIce")
}

// TestServerSecret: a secret is made once and then the same for every caller.
func TestServerSecret(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a, err := s.ServerSecret(ctx, "csrf")
		if err != nil || len(a) != serverSecretSize {
			t.Fatalf("secret: %x, %v", a, err)
		}
		b, err := s.ServerSecret(ctx, "csrf")
		if err != nil || string(a) != string(b) {
			t.Fatalf("second read: %x, %v; want %x", b, err, a)
		}
		if c, _ := s.ServerSecret(ctx, "other"); string(c) == string(a) {
			t.Fatal("two secrets are equal")
		}
	})
}
