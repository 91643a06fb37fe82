// Package oidctest runs a real OpenID Provider for tests: zitadel/oidc's
// certified op package on a loopback port, with test users, confidential
// clients, a sign-in form of its own, and hooks that make its token
// endpoint hand out a tampered ID token (another audience, expired, signed
// with an unknown key, another issuer, another nonce), so that the relying
// party's real verification is what refuses it.
//
// It is not a mock of Palaver's side: Palaver talks to it over HTTP exactly
// as it talks to Keycloak (discovery, authorize with PKCE, token, keys,
// end_session).
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is a person the provider knows. Username is what its sign-in form
// takes; Subject is the sub claim (Username when empty).
type User struct {
	Username          string
	Subject           string
	PreferredUsername string // the preferred_username claim; empty leaves it out
	Email             string
	EmailVerified     bool
	Groups            []string // the groups claim; nil leaves it out
}

// Tamper rewrites the claims of the ID token the token endpoint returns;
// the token is signed again with Key when set, else with the provider's own
// key. Nil changes nothing.
type Tamper struct {
	Claims func(claims map[string]any)
	Key    *rsa.PrivateKey // a key the provider does not publish
}

// Provider is a running OpenID Provider.
type Provider struct {
	Issuer string // its URL: discovery is Issuer + "/.well-known/openid-configuration"

	srv    *httptest.Server
	op     *op.Provider
	store  *storage
	key    *rsa.PrivateKey
	keyID  string
	mu     sync.Mutex
	tamper *Tamper
	down   bool
	ends   int
}

// Start runs a provider on a loopback port until the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + ln.Addr().String(), key: key, keyID: "oidctest-" + randomID()[:8]}
	p.store = &storage{p: p, users: map[string]User{}, clients: map[string]*client{},
		requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]token{}}
	var cryptoKey [32]byte
	_, _ = rand.Read(cryptoKey[:])
	cfg := &op.Config{CryptoKey: cryptoKey, CodeMethodS256: true, AuthMethodPost: true,
		DefaultLogoutRedirectURI: "/signed-out", SupportedScopes: []string{"openid", "profile", "email", "groups"}}
	p.op, err = op.NewProvider(cfg, p.store, op.StaticIssuer(p.Issuer), op.WithAllowInsecure(),
		op.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", p.loginForm)
	mux.HandleFunc("POST /login", p.login)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /signed-out", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "signed out") })
	mux.Handle("/", p.op)
	p.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: p.gate(mux)}}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// AddClient registers a confidential client (client_secret_basic or
// _post) with its redirect URIs and post-logout redirect URIs.
func (p *Provider) AddClient(id, secret string, redirectURIs, postLogout []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store.clients[id] = &client{id: id, secret: secret, redirects: redirectURIs, postLogout: postLogout}
}

// AddUser adds or replaces a user.
func (p *Provider) AddUser(u User) {
	if u.Subject == "" {
		u.Subject = u.Username
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store.users[u.Username] = u
}

// SetTamper makes the token endpoint return ID tokens rewritten by t (nil:
// genuine ones again).
func (p *Provider) SetTamper(t *Tamper) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = t
}

// SetDown makes every endpoint answer 503 (true) or work again (false).
func (p *Provider) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

// EndSessions is how many times end_session ended a session.
func (p *Provider) EndSessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ends
}

// SignInURL completes a pending authorization request (the address the
// provider's authorize endpoint redirected to: its /login?id=…) as the
// user, without a browser: it answers the address the provider sends the
// browser back to (the client's redirect URI with code and state, or an
// error). For HTTP-level tests.
func (p *Provider) SignInURL(ctx context.Context, loginURL, username string) (string, error) {
	i := strings.Index(loginURL, "id=")
	if i < 0 {
		return "", fmt.Errorf("oidctest: %q is not the provider's sign-in page", loginURL)
	}
	id := strings.SplitN(loginURL[i+3:], "&", 2)[0]
	if err := p.store.complete(id, username); err != nil {
		return "", err
	}
	// The callback of the authorize endpoint issues the code.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.callbackURL(id), nil)
	if err != nil {
		return "", err
	}
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(res.Body)
		return "", fmt.Errorf("oidctest: authorize callback answered %d: %s", res.StatusCode, b)
	}
	return res.Header.Get("Location"), nil
}

func (p *Provider) callbackURL(id string) string {
	ctx := op.ContextWithIssuer(context.Background(), p.Issuer)
	return op.AuthCallbackURL(p.op)(ctx, id)
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><title>Test provider: sign in</title></head><body>
<h1>Test provider</h1>
{{if .Error}}<p data-testid="op-error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.ID}}">
<label>Username <input name="username" data-testid="op-username" autofocus></label>
<button type="submit" data-testid="op-submit">Sign in</button>
</form></body></html>`))

// loginForm is the provider's own sign-in page (Client.LoginURL).
func (p *Provider) loginForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = loginPage.Execute(w, map[string]string{"ID": r.URL.Query().Get("id")})
}

// login signs the user in (no password: these are test users) and sends
// the browser back to the authorize endpoint's callback.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("id")
	if err := p.store.complete(id, r.FormValue("username")); err != nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_ = loginPage.Execute(w, map[string]string{"ID": id, "Error": err.Error()})
		return
	}
	http.Redirect(w, r, p.callbackURL(id), http.StatusFound)
}

// gate answers 503 while the provider is down, counts end_session calls,
// and rewrites the token endpoint's ID token while a Tamper is set.
func (p *Provider) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		down, tamper := p.down, p.tamper
		p.mu.Unlock()
		switch {
		case down:
			http.Error(w, "provider down", http.StatusServiceUnavailable)
			return
		case r.URL.Path == "/end_session":
			p.mu.Lock()
			p.ends++
			p.mu.Unlock()
		case r.URL.Path == "/oauth/token" && tamper != nil:
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body, err := p.tampered(rec.Body.Bytes(), tamper)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tampered is a token response with its id_token's claims rewritten and
// signed again.
func (p *Provider) tampered(body []byte, t *Tamper) ([]byte, error) {
	var res map[string]any
	if err := json.Unmarshal(body, &res); err != nil {
		return body, nil // an error answer: left as it is
	}
	raw, ok := res["id_token"].(string)
	if !ok {
		return body, nil
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, errors.New("oidctest: id_token is not a JWS")
	}
	jws, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &claims); err != nil {
		return nil, err
	}
	if t.Claims != nil {
		t.Claims(claims)
	}
	key, kid := p.key, p.keyID
	if t.Key != nil {
		key, kid = t.Key, "unknown-"+randomID()[:8]
	}
	signed, err := Sign(key, kid, claims)
	if err != nil {
		return nil, err
	}
	res["id_token"] = signed
	return json.Marshal(res)
}

// Sign makes a compact RS256 JWS of claims under key, with kid in its header.
func Sign(key *rsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
