package models

import (
	"context"
	"errors"
	"testing"
)

// Identities: (issuer, subject) is one account's; an account made by a
// sign-in has no password and keeps its last identity; a name that is
// taken is refused without touching its owner.
func TestIdentities(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ada := mustUser(t, s, "ada") // has a password
		corp := Identity{Provider: "corp", Issuer: "https://sso.example", Subject: "s1", Email: "Ada@Example.org", EmailVerified: true}
		if err := s.LinkIdentity(ctx, ada.ID, corp); err != nil {
			t.Fatal(err)
		}
		if err := s.LinkIdentity(ctx, ada.ID, corp); !errors.Is(err, ErrIdentityTaken) {
			t.Fatalf("linking twice: %v", err)
		}
		if _, err := s.CreateUserWithIdentity(ctx, "ADA", false, Identity{Provider: "lab", Issuer: "https://lab", Subject: "s1"}); !errors.Is(err, ErrUsernameTaken) {
			t.Fatalf("a taken name: %v", err)
		}
		if _, err := s.CreateUserWithIdentity(ctx, "grace", false, corp); !errors.Is(err, ErrIdentityTaken) {
			t.Fatalf("a linked identity: %v", err)
		}
		if _, err := s.UserByUsername(ctx, "grace"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the refused account was made: %v", err)
		}
		g, err := s.CreateUserWithIdentity(ctx, "grace", false, Identity{Provider: "lab", Issuer: "https://lab", Subject: "g"})
		if err != nil || g.PasswordHash != "" {
			t.Fatalf("grace: %+v %v", g, err)
		}
		u, id, err := s.UserByIdentity(ctx, "https://lab", "g")
		if err != nil || u.ID != g.ID || id.Provider != "lab" {
			t.Fatalf("by identity: %v %v %v", u, id, err)
		}
		if ids, err := s.UsersByVerifiedEmail(ctx, "ada@example.ORG"); err != nil || len(ids) != 1 || ids[0] != ada.ID {
			t.Fatalf("by verified email: %v %v", ids, err)
		}
		if err := s.UnlinkIdentity(ctx, g.ID, id.ID, true); !errors.Is(err, ErrLastSignIn) {
			t.Fatalf("grace's last identity: %v", err)
		}
		if err := s.UnlinkIdentity(ctx, ada.ID, id.ID, true); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another's identity: %v", err)
		}
		ids, _ := s.Identities(ctx, ada.ID)
		if err := s.UnlinkIdentity(ctx, ada.ID, ids[0].ID, false); !errors.Is(err, ErrLastSignIn) {
			t.Fatalf("ada's last identity with passwords off: %v", err)
		}
		if err := s.UnlinkIdentity(ctx, ada.ID, ids[0].ID, true); err != nil {
			t.Fatalf("ada's identity (she has a password): %v", err)
		}
		// The admin role from a claim: never the last administrator away.
		if _, changed, err := s.SetAdminFromClaim(ctx, ada.ID, false); err != nil || changed {
			t.Fatalf("demoting the only admin: changed %v, %v", changed, err)
		}
		if u, changed, err := s.SetAdminFromClaim(ctx, g.ID, true); err != nil || !changed || !u.IsAdmin {
			t.Fatalf("promoting: %v %v %v", u, changed, err)
		}
		if u, changed, err := s.SetAdminFromClaim(ctx, ada.ID, false); err != nil || !changed || u.IsAdmin {
			t.Fatalf("demoting with another admin: %v %v %v", u, changed, err)
		}
	})
}
