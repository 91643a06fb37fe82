package handlers_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"palaver/handlers"
	"palaver/internal/oidctest"
	"palaver/models"
	"palaver/paths"
	"palaver/sso"
)

var (
	opAda   = oidctest.User{Username: "ada", Subject: "sub-ada", PreferredUsername: "ada", Email: "ada@example.org", EmailVerified: true}
	opGrace = oidctest.User{Username: "grace", Subject: "sub-grace", PreferredUsername: "grace", Email: "grace@example.org", EmailVerified: true}
)

// A first sign-in makes an account without a password, named by the
// preferred_username claim, and signs it in; the next one signs the same
// account in again.
func TestOIDCFirstSignInMakesTheAccount(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	e.ops["corp"].AddUser(opAda)
	c := e.a.anon()
	res := e.signIn(c, "corp", "ada")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.ChatHome {
		t.Fatalf("callback: %d %q: %.300s", res.StatusCode, res.Header.Get("Location"), bodyOf(res))
	}
	if res := c.get(paths.ChatHome); res.StatusCode != http.StatusOK {
		t.Fatalf("/chat after signing in: %d", res.StatusCode)
	}
	ctx := context.Background()
	u, id, err := e.a.store.UserByIdentity(ctx, e.ops["corp"].Issuer, "sub-ada")
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "ada" || u.PasswordHash != "" || id.Provider != "corp" || id.Email != "ada@example.org" || !u.IsAdmin {
		t.Fatalf("account %+v, identity %+v (the first account is admin)", u, id)
	}
	// Again, in another browser: the same account.
	c2 := e.a.anon()
	if res := e.signIn(c2, "corp", "ada"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", res.StatusCode)
	}
	if n := e.users(); n != 1 {
		t.Fatalf("%d accounts after two sign-ins of one person", n)
	}
	// A password sign-in of the account that has none fails, as a wrong one.
	c3 := e.a.anon()
	c3.get(paths.Login)
	if res := c3.postForm(paths.Login, url.Values{"username": {"ada"}, "password": {""}}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("password sign-in of an account without one: %d", res.StatusCode)
	}
}

// A username claim that is another account's name gets a name of its own:
// the existing account is never taken over, and its password still works.
func TestOIDCUsernameCollisionNeverTakesOver(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	owner := e.a.register("ada")
	e.ops["corp"].AddUser(oidctest.User{Username: "impostor", Subject: "sub-x", PreferredUsername: "ADA", Email: "ada@evil.example", EmailVerified: true})
	if res := e.signIn(e.a.anon(), "corp", "impostor"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d: %.300s", res.StatusCode, bodyOf(res))
	}
	u, _, err := e.a.store.UserByIdentity(context.Background(), e.ops["corp"].Issuer, "sub-x")
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == owner.user.ID || u.Username != "ADA2" {
		t.Fatalf("the impostor got account %d %q (ada is %d)", u.ID, u.Username, owner.user.ID)
	}
	ids, err := e.a.store.Identities(context.Background(), owner.user.ID)
	if err != nil || len(ids) != 0 {
		t.Fatalf("ada's identities: %v %v", ids, err)
	}
	c := e.a.anon()
	c.get(paths.Login)
	if res := c.postForm(paths.Login, url.Values{"username": {"ada"}, "password": {"correct horse"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("ada's password sign-in: %d", res.StatusCode)
	}
}

// Every refusal of a callback: a clear page (the login page, with the
// reason), no account created or changed, and a line in the log.
func TestOIDCCallbackRefusals(t *testing.T) {
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e := newOIDCEnv(t, nil, nil, "corp")
	op := e.ops["corp"]
	op.AddUser(opAda)
	tampered := func(f func(map[string]any)) func(*oidctest.Provider) {
		return func(p *oidctest.Provider) { p.SetTamper(&oidctest.Tamper{Claims: f}) }
	}
	for _, tc := range []struct {
		name   string
		setup  func(*oidctest.Provider)
		back   func(c *client, back string) string // the callback address to visit
		status int
		says   string
		logs   string
	}{
		{name: "wrong state", back: func(_ *client, b string) string { return replaceQuery(b, "state", "forged") },
			status: 400, says: "expired or was already used", logs: "already used"},
		{name: "replayed state", back: func(c *client, b string) string {
			// The first use signs in; signed out, the same answer again.
			if res := c.get(b); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("first use: %d", res.StatusCode)
			}
			c.get(paths.ChatHome) // the signed-in session's token
			if res := c.postForm(paths.Logout, nil); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("logout: %d", res.StatusCode)
			}
			c.get(paths.Login)
			return b
		}, status: 400, says: "expired or was already used", logs: "already used"},
		{name: "nonce mismatch", setup: tampered(func(c map[string]any) { c["nonce"] = "another" }),
			status: 401, says: "could not be verified", logs: "nonce mismatch"},
		{name: "wrong audience", setup: tampered(func(c map[string]any) { c["aud"] = []string{"another-client"} }),
			status: 401, says: "could not be verified", logs: "audience"},
		{name: "expired token", setup: tampered(func(c map[string]any) {
			c["exp"], c["iat"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-2*time.Hour).Unix()
		}), status: 401, says: "could not be verified", logs: "expired"},
		{name: "unknown key", setup: func(p *oidctest.Provider) { p.SetTamper(&oidctest.Tamper{Key: stranger}) },
			status: 401, says: "could not be verified", logs: "signature"},
		{name: "issuer mismatch", setup: tampered(func(c map[string]any) { c["iss"] = "http://issuer.invalid" }),
			status: 401, says: "could not be verified", logs: "issuer"},
		{name: "no code", back: func(_ *client, b string) string { return replaceQuery(b, "code", "") },
			status: 400, says: "did not complete the sign-in", logs: "no authorization code"},
		{name: "provider error", back: func(_ *client, b string) string {
			b = replaceQuery(b, "code", "")
			return b + "&error=access_denied&error_description=no+thanks"
		}, status: 400, says: "did not sign you in", logs: "access_denied"},
		{name: "used code", back: func(_ *client, b string) string { return replaceQuery(b, "code", "not-a-code") },
			status: 400, says: "did not complete the sign-in", logs: "token endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer op.SetTamper(nil)
			if tc.setup != nil {
				tc.setup(op)
			}
			before := e.users()
			if tc.name == "replayed state" {
				before++ // its first use made the account
			}
			c := e.a.anon()
			back := e.start(c, "corp", "ada")
			if tc.back != nil {
				back = tc.back(c, back)
			}
			logged := len(e.log.String())
			res := c.get(back)
			body := bodyOf(res)
			if res.StatusCode != tc.status || !strings.Contains(body, tc.says) || !strings.Contains(body, `data-testid="oidc-corp"`) {
				t.Fatalf("status %d (want %d), page: %.1500s", res.StatusCode, tc.status, body)
			}
			if n := e.users(); n != before {
				t.Fatalf("%d accounts, want %d", n, before)
			}
			if res := c.get(paths.ChatHome); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("signed in after a refusal: /chat answers %d", res.StatusCode)
			}
			if line := e.log.String()[logged:]; !strings.Contains(line, "oidc corp") || !strings.Contains(line, tc.logs) {
				t.Fatalf("log: %s", line)
			}
		})
	}
}

// replaceQuery sets (or, with "", removes) one query parameter of a path.
func replaceQuery(path, key, value string) string {
	u, _ := url.Parse(path)
	q := u.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// A provider that is down: its button says so on a clear page, the server
// runs on, and password sign-in still works.
func TestOIDCProviderDown(t *testing.T) {
	// It waits out the pause before discovery is tried again: in parallel,
	// with its own app, providers and log.
	t.Parallel()
	e := newOIDCEnv(t, nil, nil, "corp")
	e.a.register("bob")
	e.ops["corp"].SetDown(true)
	c := e.a.anon()
	res := c.get(paths.OIDCStart("corp"))
	body := bodyOf(res)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "corp is not answering") ||
		!strings.Contains(body, "sign in with your password") || !strings.Contains(body, `name="password"`) {
		t.Fatalf("start with the provider down: %d %.1500s", res.StatusCode, body)
	}
	if !strings.Contains(e.log.String(), "discovery") {
		t.Fatalf("log: %s", e.log.String())
	}
	if res := c.postForm(paths.Login, url.Values{"username": {"bob"}, "password": {"correct horse"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("password sign-in with the provider down: %d", res.StatusCode)
	}
	// Back up: the next try discovers it (after the short pause).
	e.ops["corp"].SetDown(false)
	e.ops["corp"].AddUser(opAda)
	time.Sleep(5100 * time.Millisecond)
	if res := e.signIn(e.a.anon(), "corp", "ada"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in once the provider is back: %d", res.StatusCode)
	}
}

// A disabled account cannot sign in through its provider.
func TestOIDCDisabledAccount(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	admin := e.a.register("root")
	e.ops["corp"].AddUser(opAda)
	if res := e.signIn(e.a.anon(), "corp", "ada"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first sign-in: %d", res.StatusCode)
	}
	ctx := context.Background()
	u, _, err := e.a.store.UserByIdentity(ctx, e.ops["corp"].Issuer, "sub-ada")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.store.AdminSetDisabled(ctx, admin.user.ID, u.ID, true); err != nil {
		t.Fatal(err)
	}
	c := e.a.anon()
	res := e.signIn(c, "corp", "ada")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(bodyOf(res), "disabled") {
		t.Fatalf("disabled account's sign-in: %d %.500s", res.StatusCode, bodyOf(res))
	}
	if res := c.get(paths.ChatHome); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
}

// With registration closed, a first sign-in makes no account, unless the
// admin claim says the person is an administrator.
func TestOIDCRegistrationClosed(t *testing.T) {
	e := newOIDCEnv(t, func(o *handlers.OIDCConfig) { o.AdminClaim, o.AdminValue = "groups", "palaver-admins" },
		[]appOption{withoutRegistration()}, "corp")
	e.ops["corp"].AddUser(opAda)
	boss := opGrace
	boss.Groups = []string{"staff", "palaver-admins"}
	e.ops["corp"].AddUser(boss)
	res := e.signIn(e.a.anon(), "corp", "ada")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(bodyOf(res), "Registration is closed") || e.users() != 0 {
		t.Fatalf("closed registration: %d, %d accounts: %.500s", res.StatusCode, e.users(), bodyOf(res))
	}
	if res := e.signIn(e.a.anon(), "corp", "grace"); res.StatusCode != http.StatusSeeOther || e.users() != 1 {
		t.Fatalf("an administrator by claim: %d, %d accounts", res.StatusCode, e.users())
	}
}

// The admin claim is read again at every sign-in: granted, then taken
// away (another administrator remains).
func TestOIDCAdminClaim(t *testing.T) {
	e := newOIDCEnv(t, func(o *handlers.OIDCConfig) { o.AdminClaim, o.AdminValue = "groups", "palaver-admins" }, nil, "corp")
	e.a.register("root") // the first account, admin
	op := e.ops["corp"]
	staff := opAda
	staff.Groups = []string{"staff"}
	op.AddUser(staff)
	isAdmin := func() bool {
		u, _, err := e.a.store.UserByIdentity(context.Background(), op.Issuer, "sub-ada")
		if err != nil {
			t.Fatal(err)
		}
		return u.IsAdmin
	}
	for i, groups := range [][]string{{"staff"}, {"staff", "palaver-admins"}, {"staff"}} {
		staff.Groups = groups
		op.AddUser(staff)
		c := e.a.anon()
		if res := e.signIn(c, "corp", "ada"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in %d: %d", i, res.StatusCode)
		}
		want := strings.Contains(strings.Join(groups, " "), "palaver-admins")
		if isAdmin() != want {
			t.Fatalf("sign-in %d with groups %v: admin %v", i, groups, !want)
		}
		admin := c.get(paths.Admin)
		if (admin.StatusCode == http.StatusOK) != want {
			t.Fatalf("sign-in %d: /admin answers %d", i, admin.StatusCode)
		}
	}
}

// Linking by email: only with LinkVerifiedEmail, and only when the new
// provider says the email is verified; otherwise a new account.
func TestOIDCLinkByVerifiedEmail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flag     bool
		verified bool
		same     bool
	}{
		{"flag and verified", true, true, true},
		{"flag, unverified", true, false, false},
		{"no flag", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newOIDCEnv(t, func(o *handlers.OIDCConfig) { o.LinkVerifiedEmail = tc.flag }, nil, "corp", "lab")
			e.ops["corp"].AddUser(opAda)
			e.ops["lab"].AddUser(oidctest.User{Username: "ada", Subject: "lab-ada", PreferredUsername: "alovelace",
				Email: "ADA@example.org", EmailVerified: tc.verified})
			e.signIn(e.a.anon(), "corp", "ada")
			logged := len(e.log.String())
			if res := e.signIn(e.a.anon(), "lab", "ada"); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("lab sign-in: %d %.500s", res.StatusCode, bodyOf(res))
			}
			ctx := context.Background()
			a, _, err1 := e.a.store.UserByIdentity(ctx, e.ops["corp"].Issuer, "sub-ada")
			b, _, err2 := e.a.store.UserByIdentity(ctx, e.ops["lab"].Issuer, "lab-ada")
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if (a.ID == b.ID) != tc.same {
				t.Fatalf("corp's account %d %q, lab's %d %q", a.ID, a.Username, b.ID, b.Username)
			}
			if tc.flag && !tc.verified && !strings.Contains(e.log.String()[logged:], "not linked by email") {
				t.Fatalf("log: %s", e.log.String()[logged:])
			}
		})
	}
}

// Linking from the account page: the signed-in account starts it (a form
// with the CSRF token), the provider's identity is linked to it, and then
// signs it in. Unlinking keeps the last way to sign in.
func TestOIDCLinkAndUnlinkFromTheAccountPage(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp", "lab")
	e.ops["corp"].AddUser(opGrace)
	e.ops["lab"].AddUser(opGrace)
	owner := e.a.register("hopper")
	page := bodyOf(owner.get(paths.Account))
	if !strings.Contains(page, "Link your corp account") || !strings.Contains(page, `data-testid="oidc-link-lab"`) {
		t.Fatalf("account page: %.2000s", page)
	}
	// Without the CSRF token: refused.
	if res := owner.postForm(paths.AccountOIDCLink, url.Values{"provider": {"corp"}, "csrf_token": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("link without the token: %d", res.StatusCode)
	}
	res := owner.postForm(paths.AccountOIDCLink, url.Values{"provider": {"corp"}})
	back := e.atProvider(res, "corp", "grace")
	if res := owner.get(back); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.Account {
		t.Fatalf("link callback: %d %q %.500s", res.StatusCode, res.Header.Get("Location"), bodyOf(res))
	}
	if page := bodyOf(owner.get(paths.Account)); !strings.Contains(page, "Your corp account is linked") || !strings.Contains(page, `data-testid="identity"`) {
		t.Fatalf("account page after linking: %.3000s", page)
	}
	if n := e.users(); n != 1 {
		t.Fatalf("%d accounts after linking", n)
	}
	// The identity now signs the account in.
	c := e.a.anon()
	e.signIn(c, "corp", "grace")
	u, _, err := e.a.store.UserByIdentity(context.Background(), e.ops["corp"].Issuer, "sub-grace")
	if err != nil || u.ID != owner.user.ID {
		t.Fatalf("corp signs in %v (%v), want %d", u, err, owner.user.ID)
	}
	// Another account cannot link the same identity.
	other := e.a.register("other")
	res = other.postForm(paths.AccountOIDCLink, url.Values{"provider": {"corp"}})
	if res := other.get(e.atProvider(res, "corp", "grace")); res.StatusCode != http.StatusConflict || !strings.Contains(bodyOf(res), "already linked to another") {
		t.Fatalf("linking another's identity: %d %.500s", res.StatusCode, bodyOf(res))
	}
	// hopper has a password: the identity may go. Another user's is not found.
	ids, _ := e.a.store.Identities(context.Background(), owner.user.ID)
	if res := other.postForm(paths.AccountIdentityUnlink(ids[0].ID), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unlinking another's identity: %d", res.StatusCode)
	}
	if res := owner.postForm(paths.AccountIdentityUnlink(ids[0].ID), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("unlink: %d %.500s", res.StatusCode, bodyOf(res))
	}
	// An account made by a sign-in has only its identity: it stays.
	e.ops["lab"].AddUser(opAda)
	only := e.a.anon()
	e.signIn(only, "lab", "ada")
	only.get(paths.Account)
	ids, _ = e.a.store.Identities(context.Background(), mustUser(t, e, "lab", "sub-ada").ID)
	res = only.postForm(paths.AccountIdentityUnlink(ids[0].ID), nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(bodyOf(res), "last way to sign in") {
		t.Fatalf("unlinking the last way in: %d %.500s", res.StatusCode, bodyOf(res))
	}
	if ids, _ := e.a.store.Identities(context.Background(), mustUser(t, e, "lab", "sub-ada").ID); len(ids) != 1 {
		t.Fatalf("identities: %v", ids)
	}
}

func mustUser(t *testing.T, e *oidcEnv, provider, subject string) *models.User {
	t.Helper()
	u, _, err := e.a.store.UserByIdentity(context.Background(), e.ops[provider].Issuer, subject)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Signing out ends the session and goes on to the provider's
// end_session_endpoint, which comes back to the login page.
func TestOIDCSignOut(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	op := e.ops["corp"]
	op.AddUser(opAda)
	c := e.a.anon()
	e.signIn(c, "corp", "ada")
	c.get(paths.ChatHome)
	res := c.postForm(paths.Logout, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, op.Issuer+"/end_session?") || !strings.Contains(loc, "id_token_hint=") {
		t.Fatalf("logout: %d %q", res.StatusCode, loc)
	}
	if res := c.get(paths.ChatHome); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("still signed in: %d", res.StatusCode)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.Header.Get("Location") != "http://example.com"+paths.Login || op.EndSessions() != 1 {
		t.Fatalf("end_session: %d %q, %d sessions ended", r.StatusCode, r.Header.Get("Location"), op.EndSessions())
	}
	// A password session signs out to the login page.
	e.a.register("bob").postForm(paths.Logout, nil)
}

// Password sign-in off: the login page has only the providers, and a
// posted password is refused, as is the registration form.
func TestOIDCPasswordLoginOff(t *testing.T) {
	e := newOIDCEnv(t, nil, []appOption{func(d *handlers.Deps) { d.Config.PasswordLoginOff = true }}, "corp", "lab")
	c := e.a.anon()
	page := bodyOf(c.get(paths.Login))
	if strings.Contains(page, `name="password"`) || !strings.Contains(page, "Sign in with corp") || !strings.Contains(page, `data-testid="oidc-lab"`) {
		t.Fatalf("login page: %.2000s", page)
	}
	if res := c.postForm(paths.Login, url.Values{"username": {"x"}, "password": {"correct horse"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("password sign-in: %d", res.StatusCode)
	}
	if res := c.postForm(paths.Register, url.Values{"username": {"newbie"}, "password": {"correct horse"}}); res.StatusCode != http.StatusForbidden || e.users() != 0 {
		t.Fatalf("registration: %d", res.StatusCode)
	}
}

// Auto-redirect: /login goes to the first provider.
func TestOIDCAutoRedirect(t *testing.T) {
	e := newOIDCEnv(t, func(o *handlers.OIDCConfig) { o.AutoRedirect = true }, nil, "corp")
	res := e.a.anon().get(paths.Login)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.OIDCStart("corp") {
		t.Fatalf("login: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := e.a.anon().get(paths.Login + "?local=1"); res.StatusCode != http.StatusOK || !strings.Contains(bodyOf(res), `name="password"`) {
		t.Fatalf("login?local=1: %d", res.StatusCode)
	}
}

// The policy lets forms lead to the providers (sign-out, linking).
func TestOIDCFormActionPolicy(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	csp := e.a.anon().get(paths.Login).Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "form-action 'self' "+e.ops["corp"].Issuer+";") {
		t.Fatalf("policy: %s", csp)
	}
}

// A callback is a sign-in attempt: failures count against the address as
// failed passwords do, and once it has had its share even a good one is
// refused (429); a sign-in renews the session's token.
func TestOIDCThrottleAndRenewal(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	e.ops["corp"].AddUser(opAda)
	c := e.a.anon()
	back := e.start(c, "corp", "ada")
	before := c.cookies["palaver_session"]
	if before == "" {
		t.Fatal("no session holds the flow")
	}
	if res := c.get(back); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	if after := c.cookies["palaver_session"]; after == "" || after == before {
		t.Fatalf("the session token was not renewed: %q -> %q", before, after)
	}
	for i := 0; i < 20; i++ {
		if res := e.a.anon().get(replaceQuery(back, "state", "forged")); res.StatusCode != http.StatusBadRequest {
			t.Fatalf("forged callback %d: %d", i, res.StatusCode)
		}
	}
	res := e.signIn(e.a.anon(), "corp", "ada")
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(bodyOf(res), "Too many sign-ins") {
		t.Fatalf("the 21st attempt: %d %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}

// Linking by a verified email never reaches a disabled account: the
// sign-in is refused and no identity is linked to it.
func TestOIDCLinkByEmailToADisabledAccount(t *testing.T) {
	e := newOIDCEnv(t, func(o *handlers.OIDCConfig) { o.LinkVerifiedEmail = true }, nil, "corp", "lab")
	root := e.a.register("root")
	e.ops["corp"].AddUser(opAda)
	e.ops["lab"].AddUser(oidctest.User{Username: "ada", Subject: "lab-ada", Email: "ada@example.org", EmailVerified: true})
	e.signIn(e.a.anon(), "corp", "ada")
	ctx := context.Background()
	ada := mustUser(t, e, "corp", "sub-ada")
	if _, err := e.a.store.AdminSetDisabled(ctx, root.user.ID, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	res := e.signIn(e.a.anon(), "lab", "ada")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(bodyOf(res), "disabled") {
		t.Fatalf("lab sign-in: %d %.500s", res.StatusCode, bodyOf(res))
	}
	if ids, _ := e.a.store.Identities(ctx, ada.ID); len(ids) != 1 || e.users() != 2 {
		t.Fatalf("ada's identities %+v, %d accounts", ids, e.users())
	}
}

// A provider whose discovery names another issuer than the configured one
// (here: localhost for 127.0.0.1) is refused by go-oidc, and said to be
// set up wrongly rather than down.
func TestOIDCDiscoveryIssuerMismatch(t *testing.T) {
	op := oidctest.Start(t)
	op.AddClient(oidcClient, oidcSecret, []string{"http://example.com/auth/oidc/corp/callback"}, nil)
	wrong := strings.Replace(op.Issuer, "127.0.0.1", "localhost", 1)
	c, err := sso.ParseSpec("corp=" + wrong + "," + oidcClient + "," + oidcSecret)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	a := newTestApp(t, withOIDC(handlers.OIDCConfig{Providers: []*sso.Provider{sso.New(c, nil)}}),
		func(d *handlers.Deps) { d.Logger = slog.New(slog.NewTextHandler(log, nil)) })
	res := a.anon().get(paths.OIDCStart("corp"))
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(bodyOf(res), "not set up correctly") {
		t.Fatalf("start: %d %.1000s", res.StatusCode, bodyOf(res))
	}
	if !strings.Contains(log.String(), "calls itself") {
		t.Fatalf("log: %s", log.String())
	}
}

// An account that signs in only through a provider deletes itself with its
// name typed out (it has no password to give), freshly signed in.
func TestOIDCAccountDeletesItself(t *testing.T) {
	e := newOIDCEnv(t, nil, nil, "corp")
	e.a.register("root") // the first account is the administrator, which cannot go last
	e.ops["corp"].AddUser(opAda)
	c := e.a.anon()
	if res := e.signIn(c, "corp", "ada"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	if body := bodyOf(c.get(paths.Account)); !strings.Contains(body, `data-testid="delete-account-username"`) || strings.Contains(body, `data-testid="delete-account-password"`) {
		t.Fatal("the account page asks an account without a password for one")
	}
	if res := c.postForm(paths.AccountDelete, url.Values{"username": {"grace"}}); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("another name typed: %d", res.StatusCode)
	}
	if res := c.postForm(paths.AccountDelete, url.Values{"username": {"ada"}}); res.StatusCode != http.StatusOK || !strings.Contains(bodyOf(res), "Delete your account?") {
		t.Fatalf("its name typed: %d", res.StatusCode)
	}
	if res := c.postForm(paths.AccountDelete, url.Values{"confirmed": {"1"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("confirmed: %d", res.StatusCode)
	}
	if n := e.users(); n != 1 {
		t.Fatalf("%d accounts after ada deleted hers, want 1 (root)", n)
	}
}
