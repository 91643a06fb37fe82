package models

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestCreateUser(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		first, err := s.CreateUser(ctx, "ann", "h1", false)
		if err != nil {
			t.Fatal(err)
		}
		if !first.IsAdmin {
			t.Error("the first account is not admin")
		}
		second, err := s.CreateUser(ctx, "bob", "h2", false)
		if err != nil {
			t.Fatal(err)
		}
		if second.IsAdmin {
			t.Error("the second account became admin without asking")
		}
		third, err := s.CreateUser(ctx, "cat", "h3", true)
		if err != nil {
			t.Fatal(err)
		}
		if !third.IsAdmin {
			t.Error("an account asked as admin is not admin")
		}

		_, err = s.CreateUser(ctx, "bob", "other", true)
		wantErr(t, err, ErrUsernameTaken, "duplicate username")
		if n := count(t, s, "users", "username = ?", "bob"); n != 1 {
			t.Errorf("%d users named bob, want 1", n)
		}

		got, err := s.UserByUsername(ctx, "bob")
		if err != nil || got.ID != second.ID || got.PasswordHash != "h2" || got.IsAdmin {
			t.Errorf("UserByUsername(bob) = %+v, %v; want the second account unchanged", got, err)
		}
		if got, err := s.UserByID(ctx, first.ID); err != nil || got.Username != "ann" || !got.IsAdmin {
			t.Errorf("UserByID(ann) = %+v, %v", got, err)
		}
		if got.CreatedAt.IsZero() || time.Since(got.CreatedAt) > time.Minute {
			t.Errorf("created_at = %v, want about now", got.CreatedAt)
		}
		_, err = s.UserByUsername(ctx, "nobody")
		wantErr(t, err, ErrNotFound, "UserByUsername(nobody)")
		_, err = s.UserByID(ctx, 999_999)
		wantErr(t, err, ErrNotFound, "UserByID(missing)")
	})
}

func TestAPIKeys(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		bob := mustUser(t, s, "bob")
		if _, err := s.CreateAPIKey(ctx, ann.ID, "laptop", "hash-a"); err != nil {
			t.Fatal(err)
		}
		k, err := s.CreateAPIKey(ctx, bob.ID, "ci", "hash-b")
		if err != nil {
			t.Fatal(err)
		}
		if k.LastUsedAt != nil {
			t.Error("a new key already has a last use")
		}
		u, err := s.UserByAPIKey(ctx, "hash-b")
		if err != nil || u.ID != bob.ID {
			t.Fatalf("UserByAPIKey(hash-b) = %+v, %v; want bob", u, err)
		}
		// The key's read is written by hand: every field as UserByID has it.
		if _, err := s.AdminSetDisabled(ctx, ann.ID, bob.ID, true); err != nil {
			t.Fatal(err)
		}
		u, err = s.UserByAPIKey(ctx, "hash-b")
		want, err2 := s.UserByID(ctx, bob.ID)
		if err != nil || err2 != nil || !reflect.DeepEqual(u, want) || !u.Disabled || u.UsernameKey == nil {
			t.Fatalf("UserByAPIKey(hash-b) = %+v, %v; UserByID = %+v, %v", u, err, want, err2)
		}
		var stored APIKey
		if err := s.db.Take(&stored, k.ID).Error; err != nil {
			t.Fatal(err)
		}
		if stored.LastUsedAt == nil || time.Since(*stored.LastUsedAt) > time.Minute {
			t.Errorf("last_used_at = %v after use, want about now", stored.LastUsedAt)
		}
		if u, err := s.UserByAPIKey(ctx, "hash-a"); err != nil || u.ID != ann.ID {
			t.Fatalf("UserByAPIKey(hash-a) = %+v, %v; want ann", u, err)
		}
		_, err = s.UserByAPIKey(ctx, "no-such-hash")
		wantErr(t, err, ErrNotFound, "unknown key")
		_, err = s.UserByAPIKey(ctx, "")
		wantErr(t, err, ErrNotFound, "empty key")
	})
}

// TestFirstAdminUnderConcurrency registers many accounts at once on an empty
// database: exactly one may become admin.
func TestFirstAdminUnderConcurrency(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		const n = 8
		// Open the connections first, so the registrations really overlap
		// instead of queueing behind connection set-up.
		var warm sync.WaitGroup
		for range n {
			warm.Go(func() {
				if err := s.db.Exec("SELECT 1").Error; err != nil {
					t.Error(err)
				}
			})
		}
		warm.Wait()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				_, err := s.CreateUser(context.Background(), fmt.Sprintf("user%d", i), "h", false)
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if admins := count(t, s, "users", "is_admin"); admins != 1 {
			t.Fatalf("%d admins among %d accounts registered at once, want 1", admins, n)
		}
	})
}

func TestAPIKeyLastUseIsWrittenAtMostOnceAMinute(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		k, err := s.CreateAPIKey(ctx, ann.ID, "script", "hash-s")
		if err != nil {
			t.Fatal(err)
		}
		lastUse := func() time.Time {
			t.Helper()
			var stored APIKey
			if err := s.db.Take(&stored, k.ID).Error; err != nil {
				t.Fatal(err)
			}
			if stored.LastUsedAt == nil {
				t.Fatal("no last use recorded")
			}
			return *stored.LastUsedAt
		}
		use := func() {
			t.Helper()
			if u, err := s.UserByAPIKey(ctx, "hash-s"); err != nil || u.ID != ann.ID {
				t.Fatalf("UserByAPIKey = %+v, %v", u, err)
			}
		}
		use()
		first := lastUse()
		time.Sleep(5 * time.Millisecond)
		use() // within the minute: not written again
		if got := lastUse(); !got.Equal(first) {
			t.Fatalf("a second use within a minute moved last_used_at from %v to %v", first, got)
		}
		// Set the last use back past the minute: the next use writes it.
		old := time.Now().UTC().Add(-2 * time.Minute).Truncate(time.Microsecond)
		if err := s.db.Model(&APIKey{}).Where("id = ?", k.ID).Update("last_used_at", old).Error; err != nil {
			t.Fatal(err)
		}
		use()
		if got := lastUse(); !got.After(first) {
			t.Fatalf("a use after a minute left last_used_at at %v (was set back to %v)", got, old)
		}
	})
}

func TestAPIKeysAreListedAndRevokedByTheirOwnerOnly(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		a1, _ := s.CreateAPIKey(ctx, ann.ID, "one", "hash-1")
		a2, _ := s.CreateAPIKey(ctx, ann.ID, "two", "hash-2")
		if _, err := s.CreateAPIKey(ctx, bob.ID, "bob's", "hash-3"); err != nil {
			t.Fatal(err)
		}
		keys, err := s.APIKeys(ctx, ann.ID)
		if err != nil || len(keys) != 2 || keys[0].ID != a1.ID || keys[1].ID != a2.ID || keys[1].Name != "two" {
			t.Fatalf("ann's keys %+v, %v", keys, err)
		}
		wantErr(t, s.DeleteAPIKey(ctx, bob.ID, a1.ID), ErrNotFound, "bob revoking ann's key")
		if err := s.DeleteAPIKey(ctx, ann.ID, a1.ID); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.DeleteAPIKey(ctx, ann.ID, a1.ID), ErrNotFound, "revoking twice")
		_, err = s.UserByAPIKey(ctx, "hash-1")
		wantErr(t, err, ErrNotFound, "a revoked key")
		if keys, _ := s.APIKeys(ctx, ann.ID); len(keys) != 1 || keys[0].ID != a2.ID {
			t.Fatalf("after revoking: %+v", keys)
		}
	})
}
