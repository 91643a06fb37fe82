package models

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
)

func TestAdminListUsers(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		sd := seedExchanges(t, s, adminSpecs())
		if _, err := s.CreateAPIKey(ctx, sd.users["bob"].ID, "k1", "k1"); err != nil {
			t.Fatal(err)
		}
		rows, more, err := s.AdminListUsers(ctx, "", 10)
		if err != nil || more {
			t.Fatalf("list: more %v, %v", more, err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Username)
			wantEx := count(t, s, "exchanges", "user_id = ?", r.ID)
			wantMsgs := count(t, s, "messages", "exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)", r.ID)
			if r.Exchanges != wantEx || r.Messages != wantMsgs {
				t.Errorf("%s: %d exchanges, %d messages; want %d, %d", r.Username, r.Exchanges, r.Messages, wantEx, wantMsgs)
			}
			if (r.LastActive == nil) != (wantEx == 0) {
				t.Errorf("%s: last active %v with %d exchanges", r.Username, r.LastActive, wantEx)
			}
		}
		if len(names) != 4 || names[0] != "ann" || names[3] != "root" {
			t.Fatalf("users %v, want them by name", names)
		}
		for _, r := range rows {
			switch r.Username {
			case "bob":
				// bob's latest activity is his "ALPHA again", an hour before adminBase.
				if r.APIKeys != 1 || r.Exchanges != 3 || !r.LastActive.Equal(adminBase.Add(-3600e9)) {
					t.Errorf("bob: %+v (last active %v)", r, r.LastActive)
				}
			case "root":
				if !r.IsAdmin || r.Exchanges != 0 || r.ID != root.ID {
					t.Errorf("root: %+v", r)
				}
			}
		}
	})
}

func TestAdminLastAdminAndOwnAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		ann := mustUser(t, s, "ann")

		// The only admin can neither step down nor go.
		_, err := s.AdminSetAdmin(ctx, root.ID, root.ID, false)
		wantErr(t, err, ErrLastAdmin, "the last admin stepping down")
		_, err = s.AdminSetDisabled(ctx, root.ID, root.ID, true)
		wantErr(t, err, ErrOwnAccount, "disabling oneself")
		_, err = s.AdminDeleteUser(ctx, root.ID, root.ID)
		wantErr(t, err, ErrOwnAccount, "deleting oneself")
		if u, _ := s.UserByID(ctx, root.ID); !u.IsAdmin || u.Disabled {
			t.Fatalf("root changed: %+v", u)
		}

		// A non-admin cannot act at all.
		_, err = s.AdminSetAdmin(ctx, ann.ID, ann.ID, true)
		wantErr(t, err, ErrNotFound, "a non-admin promoting themselves")

		// With a second admin, one may step down; then the other is the last.
		if u, err := s.AdminSetAdmin(ctx, root.ID, ann.ID, true); err != nil || !u.IsAdmin {
			t.Fatalf("promote ann: %+v, %v", u, err)
		}
		if u, err := s.AdminSetAdmin(ctx, root.ID, root.ID, false); err != nil || u.IsAdmin {
			t.Fatalf("root steps down: %+v, %v", u, err)
		}
		_, err = s.AdminSetAdmin(ctx, root.ID, ann.ID, false)
		wantErr(t, err, ErrNotFound, "a former admin acting")
		_, err = s.AdminSetAdmin(ctx, ann.ID, ann.ID, false)
		wantErr(t, err, ErrLastAdmin, "ann, now the last admin, stepping down")

		// A disabled admin does not count as one who can sign in.
		carl := mustAdmin(t, s, "carl")
		if _, err := s.AdminSetDisabled(ctx, ann.ID, carl.ID, true); err != nil {
			t.Fatal(err)
		}
		_, err = s.AdminSetAdmin(ctx, ann.ID, ann.ID, false)
		wantErr(t, err, ErrLastAdmin, "stepping down beside a disabled admin")
		// And a disabled admin cannot act.
		_, err = s.AdminSetDisabled(ctx, carl.ID, carl.ID, false)
		wantErr(t, err, ErrNotFound, "a disabled admin acting")
		if n := count(t, s, "users", "is_admin AND NOT disabled"); n != 1 {
			t.Fatalf("%d admins who can sign in, want 1", n)
		}
	})
}

// TestAdminsDemotingEachOtherAtOnce: two admins revoke each other at the
// same moment; the last-admin check runs inside the transaction, so exactly
// one succeeds and an admin remains.
func TestAdminsDemotingEachOtherAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for round := range 10 {
			a := mustAdmin(t, s, "a"+string(rune('a'+round)))
			b := mustAdmin(t, s, "b"+string(rune('a'+round)))
			// Everyone else steps aside so a and b are the only admins.
			if err := s.db.Exec("UPDATE users SET is_admin = ? WHERE id NOT IN (?, ?)", false, a.ID, b.ID).Error; err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, pair := range [][2]int64{{a.ID, b.ID}, {b.ID, a.ID}} {
				wg.Go(func() { _, errs[i] = s.AdminSetAdmin(ctx, pair[0], pair[1], false) })
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrNotFound), errors.Is(err, ErrLastAdmin):
				default:
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if n := count(t, s, "users", "is_admin AND NOT disabled"); ok != 1 || n != 1 {
				t.Fatalf("round %d: %d demotions succeeded, %d admins left (errors %v)", round, ok, n, errs)
			}
		}
	})
}

func TestAdminDisableAndPassword(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		ann := mustUser(t, s, "ann")
		u, err := s.AdminSetDisabled(ctx, root.ID, ann.ID, true)
		if err != nil || !u.Disabled || u.SessionEpoch != 1 {
			t.Fatalf("disable: %+v, %v", u, err)
		}
		// Disabling again changes nothing more; enabling keeps the epoch, so
		// the sessions that ended stay ended.
		if u, _ = s.AdminSetDisabled(ctx, root.ID, ann.ID, true); u.SessionEpoch != 1 {
			t.Fatalf("disabled twice: epoch %d", u.SessionEpoch)
		}
		if u, err = s.AdminSetDisabled(ctx, root.ID, ann.ID, false); err != nil || u.Disabled || u.SessionEpoch != 1 {
			t.Fatalf("enable: %+v, %v", u, err)
		}
		for _, name := range []string{"laptop", "ci"} {
			if _, err := s.CreateAPIKey(ctx, ann.ID, name, "hash-"+name); err != nil {
				t.Fatal(err)
			}
		}
		// A reset alone keeps the keys.
		u, revoked, err := s.AdminSetPassword(ctx, root.ID, ann.ID, "new-hash", false)
		if err != nil || u.PasswordHash != "new-hash" || u.SessionEpoch != 2 || revoked != 0 {
			t.Fatalf("password: %+v, %d revoked, %v", u, revoked, err)
		}
		if keys, err := s.APIKeys(ctx, ann.ID); err != nil || len(keys) != 2 {
			t.Fatalf("keys after a reset that keeps them: %v, %v", keys, err)
		}
		// Asked to, it revokes them all, with the password.
		u, revoked, err = s.AdminSetPassword(ctx, root.ID, ann.ID, "newer-hash", true)
		if err != nil || u.PasswordHash != "newer-hash" || u.SessionEpoch != 3 || revoked != 2 {
			t.Fatalf("password and keys: %+v, %d revoked, %v", u, revoked, err)
		}
		if keys, err := s.APIKeys(ctx, ann.ID); err != nil || len(keys) != 0 {
			t.Fatalf("keys after a reset that revokes them: %v, %v", keys, err)
		}
		_, _, err = s.AdminSetPassword(ctx, root.ID, 424242, "x", true)
		wantErr(t, err, ErrNotFound, "password of a missing user")
	})
}

// TestAdminDeleteUserCountsRows deletes an account with data in every table
// and checks, table by table, that exactly its rows went.
func TestAdminDeleteUserCountsRows(t *testing.T) {
	testDeleteUserCountsRows(t, func(s *Store, actorID, userID int64) (UserDeletion, error) {
		return s.AdminDeleteUser(context.Background(), actorID, userID)
	})
}

// A user's own deletion shares the administrator's: the same rows go, the
// same counts are reported.
func TestDeleteOwnAccountCountsRows(t *testing.T) {
	testDeleteUserCountsRows(t, func(s *Store, _, userID int64) (UserDeletion, error) {
		return s.DeleteOwnAccount(context.Background(), userID)
	})
}

func testDeleteUserCountsRows(t *testing.T, del func(s *Store, actorID, userID int64) (UserDeletion, error)) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		sd := seedExchanges(t, s, adminSpecs())
		ann, bob := sd.users["ann"], sd.users["bob"]
		for _, u := range []*User{ann, bob} {
			if _, err := s.CreateAPIKey(ctx, u.ID, "key", "key-"+u.Username); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, _, err := s.AdminOpenExchange(ctx, root.ID, sd.specs[0].id, "check"); err != nil {
			t.Fatal(err)
		}
		before := tableCounts(t, s)
		annRows := map[string]int64{
			"users":               1,
			"api_keys":            1,
			"pages":               count(t, s, "pages", "user_id = ?", ann.ID),
			"page_revisions":      count(t, s, "page_revisions", "page_id IN (SELECT id FROM pages WHERE user_id = ?)", ann.ID),
			"exchanges":           count(t, s, "exchanges", "user_id = ?", ann.ID),
			"messages":            count(t, s, "messages", "exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)", ann.ID),
			"proposal_rejections": count(t, s, "proposal_rejections", "user_id = ?", ann.ID),
		}
		for table, n := range annRows {
			if n == 0 {
				t.Fatalf("the seed gives ann no %s: the test would prove nothing", table)
			}
		}
		d, err := del(s, root.ID, ann.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Username != "ann" || d.Exchanges != annRows["exchanges"] || d.Messages != annRows["messages"] ||
			d.Pages != annRows["pages"] || d.APIKeys != 1 {
			t.Fatalf("deletion reported %+v, want %v", d, annRows)
		}
		want := maps.Clone(before)
		for table, n := range annRows {
			want[table] -= n
		}
		if got := tableCounts(t, s); !maps.Equal(got, want) {
			t.Fatalf("rows after deleting ann:\n got %v\nwant %v", got, want)
		}
		for _, q := range []string{
			"SELECT COUNT(*) FROM exchanges WHERE user_id = ?",
			"SELECT COUNT(*) FROM pages WHERE user_id = ?",
			"SELECT COUNT(*) FROM api_keys WHERE user_id = ?",
		} {
			var n int64
			if err := s.db.Raw(q, ann.ID).Scan(&n).Error; err != nil || n != 0 {
				t.Fatalf("%s: %d left, %v", q, n, err)
			}
		}
		// The audit row stays, without a live owner or exchange.
		if n := count(t, s, "admin_audit", "owner_id IS NULL AND exchange_id IS NULL AND owner_name = 'ann'"); n != 1 {
			t.Fatalf("%d audit rows kept for ann", n)
		}
		_, err = del(s, root.ID, ann.ID)
		wantErr(t, err, ErrNotFound, "deleting ann twice")
	})
}

// The last administrator cannot delete their own account; another can.
func TestDeleteOwnAccountLastAdmin(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		_, err := s.DeleteOwnAccount(ctx, root.ID)
		wantErr(t, err, ErrLastAdmin, "the last admin deleting themselves")
		other := mustAdmin(t, s, "other")
		if _, err := s.DeleteOwnAccount(ctx, root.ID); err != nil {
			t.Fatal(err)
		}
		_, err = s.DeleteOwnAccount(ctx, other.ID)
		wantErr(t, err, ErrLastAdmin, "the new last admin deleting themselves")
	})
}

// SetOwnPassword sets the hash and moves the session epoch on; keys stay.
func TestSetOwnPassword(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		if _, err := s.CreateAPIKey(ctx, ann.ID, "key", "key-ann"); err != nil {
			t.Fatal(err)
		}
		u, err := s.SetOwnPassword(ctx, ann.ID, "new-hash")
		if err != nil {
			t.Fatal(err)
		}
		if u.PasswordHash != "new-hash" || u.SessionEpoch != ann.SessionEpoch+1 {
			t.Fatalf("after the change: %+v", u)
		}
		if n := count(t, s, "api_keys", "user_id = ?", ann.ID); n != 1 {
			t.Fatalf("%d keys after a password change", n)
		}
		_, err = s.SetOwnPassword(ctx, 987654, "x")
		wantErr(t, err, ErrNotFound, "a missing user")
	})
}
