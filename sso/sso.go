// Package sso signs people in through OpenID Connect providers (issue 30):
// the Authorization Code flow with PKCE, state and nonce, discovery from the
// issuer, and the ID token verified by go-oidc (signature against the
// provider's published keys, issuer, audience, expiry). It knows nothing of
// HTTP servers or accounts: the handlers keep the flow's secrets in the
// session and decide what an identity may do.
//
// Discovery is lazy and retried: a provider that is down when Palaver
// starts, or later, costs its own sign-ins (ErrUnavailable) and nothing
// else.
package sso

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Config is one provider as the operator names it: --oidc
// NAME=ISSUER,CLIENT_ID,CLIENT_SECRET[,scopes].
type Config struct {
	Name, Issuer, ClientID, ClientSecret string
	Scopes                               []string // openid always comes first
}

// DefaultScopes are asked for when the operator names none.
var DefaultScopes = []string{gooidc.ScopeOpenID, "profile", "email"}

// validName is what a provider's name may be: it goes into paths and
// data-testid values.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// ParseSpec reads NAME=ISSUER,CLIENT_ID,CLIENT_SECRET[,scopes]; the scopes
// (the fields after the secret) are separated by commas or spaces.
func ParseSpec(spec string) (Config, error) {
	name, rest, ok := strings.Cut(strings.TrimSpace(spec), "=")
	if !ok {
		return Config{}, fmt.Errorf("%q is not NAME=ISSUER,CLIENT_ID,CLIENT_SECRET[,scopes]", spec)
	}
	if !validName.MatchString(name) {
		return Config{}, fmt.Errorf("provider name %q: use 1-32 letters, digits, '-' or '_'", name)
	}
	f := strings.Split(rest, ",")
	if len(f) < 3 || f[0] == "" || f[1] == "" || f[2] == "" {
		return Config{}, fmt.Errorf("provider %s: want ISSUER,CLIENT_ID,CLIENT_SECRET[,scopes]", name)
	}
	u, err := url.Parse(f[0])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Config{}, fmt.Errorf("provider %s: issuer %q is not an http(s) URL", name, f[0])
	}
	// The issuer is kept as given, a trailing '/' included (Auth0's has
	// one): the ID token's iss must be exactly it.
	c := Config{Name: name, Issuer: f[0], ClientID: f[1], ClientSecret: f[2]}
	for _, s := range f[3:] {
		c.Scopes = append(c.Scopes, strings.Fields(s)...)
	}
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(DefaultScopes)
	}
	if !slices.Contains(c.Scopes, gooidc.ScopeOpenID) {
		c.Scopes = append([]string{gooidc.ScopeOpenID}, c.Scopes...)
	}
	return c, nil
}

// ParseList reads several specs separated by ';' (as $PALAVER_OIDC holds
// them), skipping empty ones.
func ParseList(list string) ([]Config, error) {
	var out []Config
	for _, s := range strings.Split(list, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		c, err := ParseSpec(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Errors of a sign-in. ErrUnavailable: the provider did not answer (or
// answered its discovery or token endpoint with an error page); ErrRefused:
// it answered, and refused (the code was wrong, used, or expired);
// ErrInvalidToken: its ID token did not verify (signature, issuer,
// audience, expiry) or carried another nonce.
// ErrMisconfigured: the provider answers discovery under another issuer
// than the one configured (go-oidc refuses it).
var (
	ErrMisconfigured = errors.New("the provider's discovery names another issuer")
	ErrUnavailable   = errors.New("the provider is not answering")
	ErrRefused       = errors.New("the provider refused the sign-in")
	ErrInvalidToken  = errors.New("the provider's ID token is not valid")
)

// Provider is one configured provider, discovered on first use.
type Provider struct {
	cfg    Config
	client *http.Client

	mu         sync.Mutex
	disc       *gooidc.Provider // nil until discovery succeeds
	endSession string
	lastTry    time.Time
	lastErr    error
}

// retryAfter is how long a failed discovery is remembered before the next
// request tries again: a provider that is down is not asked on every click.
const retryAfter = 5 * time.Second

// New is a provider; client makes its requests (nil: one with a 10 s
// timeout).
func New(cfg Config, client *http.Client) *Provider {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return &Provider{cfg: cfg, client: client}
}

// Name is the operator's name for the provider.
func (p *Provider) Name() string { return p.cfg.Name }

// Issuer is the provider's issuer URL, as configured.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

func (p *Provider) ctx(ctx context.Context) context.Context {
	return gooidc.ClientContext(ctx, p.client)
}

// discover fetches the provider's metadata once; a failure is retried by a
// later call (after retryAfter). go-oidc refuses metadata whose issuer is
// not the configured one.
func (p *Provider) discover(ctx context.Context) (*gooidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	if p.lastErr != nil && time.Since(p.lastTry) < retryAfter {
		return nil, p.lastErr
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := gooidc.NewProvider(p.ctx(dctx), p.cfg.Issuer)
	p.lastTry = time.Now()
	if err != nil {
		p.lastErr = fmt.Errorf("%w: discovery at %s: %v", ErrUnavailable, p.cfg.Issuer, err)
		if iss, ok := p.advertisedIssuer(dctx); ok && iss != p.cfg.Issuer {
			p.lastErr = fmt.Errorf("%w: %s calls itself %q", ErrMisconfigured, p.cfg.Issuer, iss)
		}
		return nil, p.lastErr
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = d.Claims(&meta) // the metadata was read once already: it parses
	p.disc, p.endSession, p.lastErr = d, meta.EndSession, nil
	return d, nil
}

// advertisedIssuer is the issuer the provider's discovery document names,
// read after go-oidc refused it, to tell a wrong configuration from a
// provider that is down.
func (p *Provider) advertisedIssuer(ctx context.Context) (string, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.cfg.Issuer, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return "", false
	}
	res, err := p.client.Do(req)
	if err != nil {
		return "", false
	}
	defer res.Body.Close()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&doc) != nil || doc.Issuer == "" {
		return "", false
	}
	return doc.Issuer, true
}

func (p *Provider) oauth(d *gooidc.Provider, redirectURI string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: d.Endpoint(),
		RedirectURL: redirectURI, Scopes: p.cfg.Scopes}
}

// Flow is what a sign-in keeps between its start and its callback: kept in
// the session, never shown but in the provider's URL.
type Flow struct {
	State, Nonce, Verifier string
}

// NewFlow makes a flow's random secrets.
func NewFlow() Flow {
	return Flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier()}
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// AuthURL is the provider's authorization endpoint for the flow, with the
// S256 PKCE challenge of its verifier.
func (p *Provider) AuthURL(ctx context.Context, redirectURI string, f Flow) (string, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return p.oauth(d, redirectURI).AuthCodeURL(f.State, gooidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), nil
}

// Identity is who the provider says signed in: (Issuer, Subject) is the
// identity; Claims are the ID token's, for the username, email and admin
// claims; RawIDToken is kept for the sign-out's id_token_hint.
type Identity struct {
	Issuer, Subject string
	Claims          map[string]any
	RawIDToken      string
}

// Email is the email claim and whether the provider says it is verified
// (email_verified true, as a boolean or the string "true").
func (id *Identity) Email() (string, bool) {
	email, _ := id.Claims["email"].(string)
	switch v := id.Claims["email_verified"].(type) {
	case bool:
		return email, v
	case string:
		return email, v == "true"
	}
	return email, false
}

// Exchange trades the callback's code (with the flow's verifier) for
// tokens and verifies the ID token: its signature against the provider's
// keys, its issuer, audience (this client) and expiry, and its nonce
// against the flow's.
func (p *Provider) Exchange(ctx context.Context, redirectURI, code string, f Flow) (*Identity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(p.ctx(ctx), 15*time.Second)
	defer cancel()
	tok, err := p.oauth(d, redirectURI).Exchange(tctx, code, oauth2.VerifierOption(f.Verifier))
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 500:
		return nil, fmt.Errorf("%w: token endpoint: %v", ErrUnavailable, err)
	case errors.As(err, &re):
		return nil, fmt.Errorf("%w: token endpoint: %v", ErrRefused, err)
	case err != nil:
		return nil, fmt.Errorf("%w: token endpoint: %v", ErrUnavailable, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, fmt.Errorf("%w: the token response has no id_token", ErrInvalidToken)
	}
	idt, err := d.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID}).Verify(p.ctx(ctx), raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if idt.Nonce != f.Nonce {
		return nil, fmt.Errorf("%w: nonce mismatch", ErrInvalidToken)
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", ErrInvalidToken, err)
	}
	return &Identity{Issuer: idt.Issuer, Subject: idt.Subject, Claims: claims, RawIDToken: raw}, nil
}

// EndSessionURL is the provider's end_session_endpoint for signing out of
// it too, coming back to postLogout; "" when the provider has none, or
// cannot be discovered now (the Palaver session has ended all the same).
func (p *Provider) EndSessionURL(ctx context.Context, idToken, postLogout string) string {
	if _, err := p.discover(ctx); err != nil {
		return ""
	}
	p.mu.Lock()
	end := p.endSession
	p.mu.Unlock()
	if end == "" {
		return ""
	}
	u, err := url.Parse(end)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", p.cfg.ClientID)
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	if postLogout != "" {
		q.Set("post_logout_redirect_uri", postLogout)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ClaimMatches says whether the claim holds value: a string equal to it,
// a list (of strings) holding it, or a boolean true for "true".
func ClaimMatches(claims map[string]any, claim, value string) bool {
	switch v := claims[claim].(type) {
	case string:
		return v == value
	case bool:
		return fmt.Sprint(v) == value
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s == value {
				return true
			}
		}
	}
	return false
}
