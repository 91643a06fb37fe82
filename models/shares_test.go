package models

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shareFixture is alice's conversation of two turns, with feedback and an
// error row, and bob.
func shareFixture(t *testing.T, s *Store) (alice, bob *User, ex *Exchange) {
	t.Helper()
	ctx := context.Background()
	alice, bob = mustUser(t, s, "alice"), mustUser(t, s, "bob")
	ex, _, a := mustTurn(t, s, TurnStart{UserID: alice.ID, Query: "first question"}, "first answer")
	mustTurn(t, s, TurnStart{UserID: alice.ID, ExchangeID: ex.ID, Query: "second question"}, "second answer")
	if _, err := s.SetFeedback(ctx, alice.ID, a.ID, ptr(int64(FeedbackUp)), ptr("secret comment")); err != nil {
		t.Fatal(err)
	}
	_, q := mustStart(t, s, TurnStart{UserID: alice.ID, ExchangeID: ex.ID, Query: "third question"})
	_ = q
	if _, err := s.FailTurn(ctx, ex.ID, "owner-1", "the model fell over"); err != nil {
		t.Fatal(err)
	}
	return alice, bob, reload(t, s, ex.ID).ptr()
}

func (e Exchange) ptr() *Exchange { return &e }

func TestSharesSnapshotUpdateContinueRevoke(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		alice, bob, ex := shareFixture(t, s)
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

		// Another user's exchange, a seq outside the log: refused.
		_, err := s.CreateShare(ctx, ShareNew{UserID: bob.ID, ExchangeID: ex.ID, Visibility: ShareLink, Token: "t-bob-000000000000000000", At: now})
		wantErr(t, err, ErrNotFound, "a share of another user's exchange")
		_, err = s.CreateShare(ctx, ShareNew{UserID: alice.ID, ExchangeID: ex.ID, AtSeq: ptr(int64(99)), Visibility: ShareLink, Token: "t-bad-000000000000000000", At: now})
		wantErr(t, err, ErrBadSeq, "a share past the log")

		day := now.Add(24 * time.Hour)
		sh, err := s.CreateShare(ctx, ShareNew{UserID: alice.ID, ExchangeID: ex.ID, AtSeq: ptr(int64(3)), Visibility: ShareLink,
			ExpiresAt: &day, Token: "t-alice-0000000000000000", At: now})
		if err != nil {
			t.Fatal(err)
		}
		got, owner, err := s.ShareByToken(ctx, sh.Token, now)
		if err != nil || owner != "alice" || got.ID != sh.ID {
			t.Fatalf("by token: %+v %q %v", got, owner, err)
		}
		msgs, err := s.SharedMessages(ctx, got, got.AtSeq)
		if err != nil {
			t.Fatal(err)
		}
		var roles []string
		for _, m := range msgs {
			roles = append(roles, strconv.FormatInt(m.Seq, 10)+":"+m.Role+":"+m.Content)
		}
		want := "0:user:first question|1:assistant:first answer|2:user:second question|3:assistant:second answer"
		if strings.Join(roles, "|") != want {
			t.Fatalf("snapshot %s, want %s", strings.Join(roles, "|"), want)
		}

		// Expired, at the injected clock: a 404 like an unknown token.
		_, _, err = s.ShareByToken(ctx, sh.Token, day.Add(time.Second))
		wantErr(t, err, ErrNotFound, "an expired share")
		_, _, err = s.ShareByToken(ctx, "no-such-token-0000000000", now)
		wantErr(t, err, ErrNotFound, "an unknown token")

		// Update: the same token, the latest entry; an old page's seq still reads.
		mustTurn(t, s, TurnStart{UserID: alice.ID, ExchangeID: ex.ID, Query: "fourth question"}, "fourth answer")
		up, err := s.UpdateShare(ctx, alice.ID, sh.ID, ShareUpdate{Resnapshot: true, At: now})
		if err != nil || up.Token != sh.Token || up.AtSeq <= sh.AtSeq {
			t.Fatalf("update: %+v %v", up, err)
		}
		old, err := s.SharedMessages(ctx, up, 1)
		if err != nil || len(old) != 2 {
			t.Fatalf("an old page's snapshot: %d entries, %v", len(old), err)
		}

		// Continue: bob's own copy, naming nothing of alice's.
		cp, err := s.ContinueShare(ctx, bob.ID, up, 3, now)
		if err != nil {
			t.Fatal(err)
		}
		if cp.UserID != bob.ID || cp.ForkedFromID != nil || cp.TurnCount != 2 || cp.Title != ex.Title {
			t.Fatalf("copy %+v", cp)
		}
		copied, err := s.Messages(ctx, bob.ID, cp.ID, nil)
		if err != nil || len(copied) != 4 {
			t.Fatalf("copy's log: %d, %v", len(copied), err)
		}
		for i, m := range copied {
			if m.CopyOf != nil || m.Feedback != nil || m.FeedbackComment != nil || m.Seq == nil || *m.Seq != int64(i) {
				t.Errorf("copied entry %d: %+v", i, m)
			}
		}
		if marked, err := s.SharedCopyOf(ctx, bob.ID, cp.ID); err != nil || !marked {
			t.Fatalf("the copy is not marked as from a shared link: %v %v", marked, err)
		}
		if last, err := s.LastSeq(ctx, bob.ID, cp.ID); err != nil || last != 3 {
			t.Fatalf("copy's last seq %d %v", last, err)
		}

		// Revoke: gone; revoking again changes nothing; not another user's.
		wantErr(t, s.RevokeShare(ctx, bob.ID, sh.ID, now), ErrNotFound, "revoking another user's share")
		if err := s.RevokeShare(ctx, alice.ID, sh.ID, now); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.ShareByToken(ctx, sh.Token, now)
		wantErr(t, err, ErrNotFound, "a revoked share")
		_, err = s.UpdateShare(ctx, alice.ID, sh.ID, ShareUpdate{Resnapshot: true, At: now})
		wantErr(t, err, ErrNotFound, "updating a revoked share")

		// Deleting the conversation deletes its links; bob's copy stays.
		sh2, err := s.CreateShare(ctx, ShareNew{UserID: alice.ID, ExchangeID: ex.ID, Visibility: ShareUsers, Token: "t-alice-1111111111111111", At: now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteExchange(ctx, alice.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.ShareByToken(ctx, sh2.Token, now)
		wantErr(t, err, ErrNotFound, "a share of a deleted conversation")
		if n := count(t, s, "shares", "exchange_id = ?", ex.ID); n != 0 {
			t.Fatalf("%d shares of the deleted exchange left", n)
		}
		if again, err := s.Messages(ctx, bob.ID, cp.ID, nil); err != nil || len(again) != 4 {
			t.Fatalf("bob's copy after alice deleted hers: %d, %v", len(again), err)
		}
	})
}

func TestSharesGoWithTheAccountAndAdminRevokes(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		alice, _, ex := shareFixture(t, s)
		admin := mustUser(t, s, "root")
		if err := s.db.Model(&User{}).Where("id = ?", admin.ID).Update("is_admin", true).Error; err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		sh, err := s.CreateShare(ctx, ShareNew{UserID: alice.ID, ExchangeID: ex.ID, Visibility: ShareLink, Token: "t-admin-000000000000000", At: now})
		if err != nil {
			t.Fatal(err)
		}
		all, more, err := s.AdminShares(ctx, 0, 10)
		if err != nil || len(all) != 1 || all[0].Username != "alice" || more {
			t.Fatalf("admin list %+v %v", all, err)
		}
		if err := s.AdminRevokeShare(ctx, admin.ID, sh.ID, now); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ShareByToken(ctx, sh.Token, now); err == nil {
			t.Fatal("an admin-revoked share still opens")
		}
		if n := count(t, s, "admin_audit", "exchange_ref = ? AND reason LIKE ?", ex.ID, "revoked share link%"); n != 1 {
			t.Fatalf("%d audit rows for the revoke", n)
		}
		if _, err := s.CreateShare(ctx, ShareNew{UserID: alice.ID, ExchangeID: ex.ID, Visibility: ShareLink, Token: "t-gone-0000000000000000", At: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteOwnAccount(ctx, alice.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "shares", "1 = 1"); n != 0 {
			t.Fatalf("%d shares left after the account went", n)
		}
	})
}
