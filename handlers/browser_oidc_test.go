package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"palaver/handlers"
	"palaver/internal/oidctest"
	"palaver/paths"
)

// TestBrowserOIDC drives single sign-on in Chromium against two real
// OpenID Providers (internal/oidctest): the first sign-in that makes the
// account, the admin role from the groups claim, signing out through the
// provider, a second provider whose unverified email is not linked to the
// account of the first, and linking from the account page. It runs a
// browser of its own, so that its scenario stays in this file.
func TestBrowserOIDC(t *testing.T) {
	root := startBrowser(t)
	t.Run("SignInAndOut", func(t *testing.T) { browserOIDCSignInAndOut(t, root) })
	t.Run("LinkFromAccount", func(t *testing.T) { browserOIDCLink(t, root) })
}

// oidcScene is a browser scene whose app signs in through providers named
// names; set adjusts the set-up. Each provider knows Palaver's callback
// and login page at the scene's address.
func oidcScene(t *testing.T, root context.Context, set func(*handlers.OIDCConfig), names ...string) (*browserScene, map[string]*oidctest.Provider) {
	t.Helper()
	ops, cfg := startOPs(t, "http://127.0.0.1", names...)
	if set != nil {
		set(&cfg)
	}
	s := newBrowserScene(t, root, withOIDC(cfg))
	for _, name := range names {
		ops[name].AddClient(oidcClient, oidcSecret, []string{s.base + paths.OIDCCallback(name)}, []string{s.base + paths.Login})
	}
	return s, ops
}

// atProvider signs in as user on the provider's own page, where the tab
// is, and waits to be back at Palaver.
func (tab *browserTab) atProvider(op *oidctest.Provider, user string) {
	tab.s.t.Helper()
	tab.waitFor("the provider's sign-in page", fmt.Sprintf(`location.href.startsWith(%s) && document.querySelector("[data-testid=op-username]")`,
		browserQuote(op.Issuer)))
	tab.typeInto("[data-testid=op-username]", user)
	tab.clickToLoad("[data-testid=op-submit]")
	tab.waitFor("Palaver again", fmt.Sprintf(`location.href.startsWith(%s)`, browserQuote(tab.s.base)))
}

func browserOIDCSignInAndOut(t *testing.T, root context.Context) {
	s, ops := oidcScene(t, root, func(o *handlers.OIDCConfig) {
		o.AdminClaim, o.AdminValue, o.LinkVerifiedEmail = "groups", "palaver-admins", true
	}, "corp", "lab")
	corp, lab := ops["corp"], ops["lab"]
	corp.AddUser(oidctest.User{Username: "ada", Subject: "sub-ada", PreferredUsername: "ada", Email: "ada@example.org",
		EmailVerified: true, Groups: []string{"staff", "palaver-admins"}})
	lab.AddUser(oidctest.User{Username: "ada", Subject: "lab-ada", PreferredUsername: "alovelace", Email: "ada@example.org"})
	// The first account exists already: ada's admin role comes from the claim.
	if _, err := s.app.store.CreateUser(context.Background(), "root", "x", false); err != nil {
		t.Fatal(err)
	}

	tab := s.window("ada")
	tab.visit(paths.Login)
	if got := browserTexts(tab, "a[data-testid^=oidc-]"); strings.Join(got, "|") != "Sign in with corp|Sign in with lab" {
		t.Fatalf("the login page's providers: %q", got)
	}
	tab.clickToLoad("[data-testid=oidc-corp]")
	tab.atProvider(corp, "ada")
	tab.waitFor("the chat", `location.pathname === "/chat" && document.querySelector("[data-testid=chat-input]")`)
	u, _, err := s.app.store.UserByIdentity(context.Background(), corp.Issuer, "sub-ada")
	if err != nil || u.Username != "ada" || !u.IsAdmin {
		t.Fatalf("the account made by the first sign-in: %+v %v", u, err)
	}
	if !browserEval[bool](tab, `!!document.querySelector('a[href="/admin"]')`) {
		t.Fatal("no Admin link for an administrator by claim")
	}
	tab.visit(paths.Account)
	if got := browserTexts(tab, "[data-testid=identity]"); len(got) != 1 || !strings.Contains(got[0], "corp") {
		t.Fatalf("the account's identities: %q", got)
	}
	tab.waitVisible("[data-testid=oidc-link-lab]")

	// Signing out goes through the provider's end_session and back.
	tab.clickToLoad(`form[action="/logout"] button[type=submit]`)
	tab.waitFor("the login page", `location.pathname === "/login" && document.querySelector("[data-testid=oidc-corp]")`)
	if n := corp.EndSessions(); n != 1 {
		t.Fatalf("the provider ended %d sessions", n)
	}
	tab.visit(paths.ChatHome)
	if loc := tab.location(); loc != paths.Login {
		t.Fatalf("after signing out, /chat is at %q", loc)
	}

	// lab says the same email, unverified: a new account, not ada's.
	tab.clickToLoad("[data-testid=oidc-lab]")
	tab.atProvider(lab, "ada")
	tab.waitFor("the chat", `location.pathname === "/chat"`)
	v, _, err := s.app.store.UserByIdentity(context.Background(), lab.Issuer, "lab-ada")
	if err != nil || v.ID == u.ID || v.Username != "alovelace" || v.IsAdmin {
		t.Fatalf("lab's account %+v (%v); ada's is %d", v, err, u.ID)
	}
	tab.visit(paths.Account)
	if got := browserTexts(tab, "[data-testid=identity]"); len(got) != 1 || !strings.Contains(got[0], "lab") {
		t.Fatalf("alovelace's identities: %q", got)
	}
	if ids, _ := s.app.store.Identities(context.Background(), u.ID); len(ids) != 1 {
		t.Fatalf("ada's identities: %+v", ids)
	}
}

func browserOIDCLink(t *testing.T, root context.Context) {
	s, ops := oidcScene(t, root, nil, "corp")
	corp := ops["corp"]
	corp.AddUser(oidctest.User{Username: "grace", Subject: "sub-grace", PreferredUsername: "grace", Email: "grace@example.org", EmailVerified: true})
	tab := s.window("hopper")
	tab.register("hopper")
	tab.visit(paths.Account)
	if got := tab.text("[data-testid=oidc-link-corp]"); got != "Link your corp account" {
		t.Fatalf("the link button says %q", got)
	}
	tab.clickToLoad("[data-testid=oidc-link-corp]")
	tab.atProvider(corp, "grace")
	tab.waitFor("the account page", `location.pathname === "/account" && document.querySelector("[data-testid=account-notice]")`)
	if got := tab.text("[data-testid=account-notice]"); !strings.Contains(got, "corp account is linked") {
		t.Fatalf("notice: %q", got)
	}
	if got := browserTexts(tab, "[data-testid=identity]"); len(got) != 1 || !strings.Contains(got[0], "grace@example.org") {
		t.Fatalf("identities: %q", got)
	}

	// Signed out, the corp account signs hopper in.
	tab.clickToLoad(`form[action="/logout"] button[type=submit]`)
	tab.waitFor("the login page", `location.pathname === "/login"`)
	tab.clickToLoad("[data-testid=oidc-corp]")
	tab.atProvider(corp, "grace")
	tab.waitFor("the chat", `location.pathname === "/chat"`)
	tab.visit(paths.Account)
	if got := tab.text("h1"); got != "Your account" {
		t.Fatalf("account page: %q", got)
	}
	if !browserEval[bool](tab, `document.body.textContent.includes("hopper")`) {
		t.Fatal("signed in through corp, the page does not name hopper")
	}
	// hopper has a password: unlinking is allowed, and says so.
	tab.clickToLoad("[data-testid=identity-unlink]")
	if got := tab.text("[data-testid=account-notice]"); !strings.Contains(got, "unlinked") {
		t.Fatalf("after unlinking: %q", got)
	}
}
