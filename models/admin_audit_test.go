package models

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func mustAdmin(t *testing.T, s *Store, name string) *User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), name, "hash-of-"+name, true)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAdminOpenExchangeWritesAudit(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		sd := seedExchanges(t, s, adminSpecs())
		bob, ann := sd.users["bob"], sd.users["ann"]
		gamma := sd.specs[3] // bob's, with an error row
		for i := 1; i <= 3; i++ {
			reason := ""
			if i == 2 {
				reason = "support ticket #12"
			}
			ex, msgs, audit, err := s.AdminOpenExchange(ctx, root.ID, gamma.id, reason)
			if err != nil {
				t.Fatal(err)
			}
			if ex.ID != gamma.id || ex.Username != "bob" || ex.Errors != 1 {
				t.Fatalf("opened %+v", ex)
			}
			// The whole log in write order, error row included.
			if got := strings.Join(seqs(msgs), " "); got != "user@0 assistant@1 user@2 error@-" {
				t.Fatalf("log %s", got)
			}
			if n := count(t, s, "admin_audit", "exchange_id = ?", gamma.id); n != int64(i) {
				t.Fatalf("after %d openings, %d audit rows", i, n)
			}
			if audit.AdminName != "root" || *audit.AdminID != root.ID || *audit.OwnerID != bob.ID ||
				audit.OwnerName != "bob" || audit.ExchangeRef != gamma.id || audit.Reason != reason {
				t.Fatalf("audit row %+v", audit)
			}
		}
		// Only an administrator who can sign in opens anything: no log, no row.
		for _, actor := range []int64{ann.ID, 424242} {
			_, msgs, _, err := s.AdminOpenExchange(ctx, actor, gamma.id, "")
			wantErr(t, err, ErrNotFound, "opening as a non-admin")
			if msgs != nil {
				t.Fatal("a non-admin got the log")
			}
		}
		_, _, _, err := s.AdminOpenExchange(ctx, root.ID, 424242, "")
		wantErr(t, err, ErrNotFound, "opening a missing exchange")
		if n := count(t, s, "admin_audit", "1 = 1"); n != 3 {
			t.Fatalf("%d audit rows, want 3", n)
		}
		// A long reason is cut at a character boundary.
		_, _, audit, err := s.AdminOpenExchange(ctx, root.ID, sd.specs[0].id, strings.Repeat("é", MaxAuditReason+10))
		if err != nil || len([]rune(audit.Reason)) != MaxAuditReason || !strings.HasSuffix(audit.Reason, "é") {
			t.Fatalf("long reason: %d runes, %v", len([]rune(audit.Reason)), err)
		}

		// The owner sees it; nobody else does, and other exchanges show nothing.
		v, err := s.ExchangeAdminViews(ctx, bob.ID, gamma.id)
		if err != nil || v.Count != 3 || v.Last == nil {
			t.Fatalf("owner's views: %+v, %v", v, err)
		}
		if v, _ := s.ExchangeAdminViews(ctx, ann.ID, gamma.id); v.Count != 0 || v.Last != nil {
			t.Fatalf("another user sees %+v", v)
		}
		if v, _ := s.ExchangeAdminViews(ctx, bob.ID, sd.specs[4].id); v.Count != 0 {
			t.Fatalf("an unopened exchange shows %+v", v)
		}

		// The audit rows outlive the exchange and the owner's account.
		if _, err := s.DeleteExchange(ctx, bob.ID, gamma.id); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "admin_audit", "exchange_ref = ? AND exchange_id IS NULL", gamma.id); n != 3 {
			t.Fatalf("after the exchange went, %d audit rows keep its number", n)
		}
		if _, err := s.AdminDeleteUser(ctx, root.ID, bob.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "admin_audit", "owner_id IS NULL AND owner_name = 'bob'"); n != 3 {
			t.Fatalf("after bob's account went, %d audit rows name him", n)
		}
	})
}

func TestAdminAuditLogPages(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		root := mustAdmin(t, s, "root")
		sd := seedExchanges(t, s, adminSpecs())
		var want []int64
		for _, sp := range sd.specs {
			_, _, a, err := s.AdminOpenExchange(ctx, root.ID, sp.id, "r")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, a.ID)
		}
		_, _, again, _ := s.AdminOpenExchange(ctx, root.ID, sd.specs[0].id, "again")
		want = append(want, again.ID)
		slices.Reverse(want) // newest first
		var got []int64
		before := int64(0)
		for range 20 {
			page, next, err := s.AdminAuditLog(ctx, AuditQuery{BeforeID: before, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				got = append(got, e.ID)
				if e.ExchangeTitle == nil {
					t.Fatalf("entry %d: no exchange title while the exchange exists", e.ID)
				}
			}
			if next == 0 {
				break
			}
			before = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("audit pages %v, want %v", got, want)
		}
		one, _, err := s.AdminAuditLog(ctx, AuditQuery{ExchangeID: sd.specs[0].id})
		if err != nil || len(one) != 2 || one[0].Reason != "again" {
			t.Fatalf("one exchange's entries: %+v, %v", one, err)
		}
	})
}
