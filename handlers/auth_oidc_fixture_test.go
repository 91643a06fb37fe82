package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/handlers"
	"palaver/internal/oidctest"
	"palaver/paths"
	"palaver/sso"
)

// oidcEnv is an app whose single sign-on providers are real OpenID
// Providers (internal/oidctest) on loopback ports, one per name, and the
// app's log.
type oidcEnv struct {
	t   *testing.T
	a   *testApp
	ops map[string]*oidctest.Provider
	log *syncBuffer
}

// oidcClient and oidcSecret are every test provider's client for Palaver.
const oidcClient, oidcSecret = "palaver", "palaver-secret"

// startOPs starts one provider per name, each with the client registered
// for base's callback and login page.
func startOPs(t *testing.T, base string, names ...string) (map[string]*oidctest.Provider, handlers.OIDCConfig) {
	t.Helper()
	ops := map[string]*oidctest.Provider{}
	var cfg handlers.OIDCConfig
	for _, name := range names {
		op := oidctest.Start(t)
		op.AddClient(oidcClient, oidcSecret, []string{base + paths.OIDCCallback(name)}, []string{base + paths.Login})
		ops[name] = op
		c, err := sso.ParseSpec(name + "=" + op.Issuer + "," + oidcClient + "," + oidcSecret + ",openid profile email groups")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Providers = append(cfg.Providers, sso.New(c, nil))
	}
	return ops, cfg
}

// withOIDC sets the app's single sign-on.
func withOIDC(cfg handlers.OIDCConfig) appOption {
	return func(d *handlers.Deps) { d.Config.OIDC = cfg }
}

// newOIDCEnv is an app (requests through app.Test, whose address is
// http://example.com) with a provider per name; set adjusts the set-up.
func newOIDCEnv(t *testing.T, set func(*handlers.OIDCConfig), opts []appOption, names ...string) *oidcEnv {
	t.Helper()
	ops, cfg := startOPs(t, "http://example.com", names...)
	if set != nil {
		set(&cfg)
	}
	log := &syncBuffer{}
	opts = append([]appOption{withOIDC(cfg), func(d *handlers.Deps) {
		d.Logger = slog.New(slog.NewTextHandler(log, nil))
	}}, opts...)
	return &oidcEnv{t: t, a: newTestApp(t, opts...), ops: ops, log: log}
}

// start begins a sign-in at the provider and has the provider sign user in:
// the callback address (path and query) the browser would be sent back to.
func (e *oidcEnv) start(c *client, name, user string) string {
	e.t.Helper()
	res := c.get(paths.OIDCStart(name))
	return e.atProvider(res, name, user)
}

// atProvider follows a redirect to the provider's authorization endpoint,
// signs user in there and returns the callback address it sends back.
func (e *oidcEnv) atProvider(res *http.Response, name, user string) string {
	e.t.Helper()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, e.ops[name].Issuer+"/") {
		e.t.Fatalf("start %s: status %d, location %q: %.300s", name, res.StatusCode, loc, bodyOf(res))
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(loc)
	if err != nil {
		e.t.Fatal(err)
	}
	r.Body.Close()
	login := r.Header.Get("Location")
	if login == "" {
		e.t.Fatalf("the provider's authorize answered %d without a redirect", r.StatusCode)
	}
	back, err := e.ops[name].SignInURL(context.Background(), login, user)
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := url.Parse(back)
	if err != nil {
		e.t.Fatal(err)
	}
	if u.Host != "example.com" {
		e.t.Fatalf("the provider sends the browser back to %s", back)
	}
	return u.RequestURI()
}

// signIn is a whole sign-in through the provider: the callback's answer.
func (e *oidcEnv) signIn(c *client, name, user string) *http.Response {
	e.t.Helper()
	return c.get(e.start(c, name, user))
}

// users counts the accounts.
func (e *oidcEnv) users() int64 {
	e.t.Helper()
	db, err := e.a.store.SQL()
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM users").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}
