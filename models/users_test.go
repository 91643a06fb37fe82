package models

import (
	"context"
	"fmt"
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
		if _, err := s.CreateAPIKey(ctx, ann.ID, "hash-a"); err != nil {
			t.Fatal(err)
		}
		k, err := s.CreateAPIKey(ctx, bob.ID, "hash-b")
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
