package oidctest

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the provider's state, in memory: the op.Storage the op
// package asks. Only the authorization code flow is supported.
type storage struct {
	p        *Provider // its mutex guards the maps below
	users    map[string]User
	clients  map[string]*client
	requests map[string]*authRequest
	codes    map[string]string // code -> request id
	tokens   map[string]token  // access token id -> its grant
}

type token struct {
	subject, clientID string
	scopes            []string
}

var errNotFound = errors.New("oidctest: not found")

// complete marks the request signed in as the user named username.
func (s *storage) complete(id, username string) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	r, ok := s.requests[id]
	if !ok {
		return fmt.Errorf("oidctest: no authorization request %q", id)
	}
	u, ok := s.users[username]
	if !ok {
		return fmt.Errorf("no user %q", username)
	}
	r.subject, r.done, r.authTime = u.Subject, true, time.Now()
	return nil
}

func (s *storage) userBySubject(sub string) (User, bool) {
	for _, u := range s.users {
		if u.Subject == sub {
			return u, true
		}
	}
	return User{}, false
}

func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	r := &authRequest{id: randomID(), req: *req}
	s.requests[r.id] = r
	return r, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if r, ok := s.requests[id]; ok {
		return r, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if r, ok := s.requests[s.codes[code]]; ok {
		return r, nil
	}
	return nil, errNotFound
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest forgets the request and its code: a code is used once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	id := randomID()
	t := token{subject: req.GetSubject(), scopes: req.GetScopes()}
	if r, ok := req.(*authRequest); ok {
		t.clientID = r.req.ClientID
	}
	s.tokens[id] = t
	return id, time.Now().Add(5 * time.Minute), nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("oidctest: no refresh tokens")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error { return nil }

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{id: s.p.keyID, key: s.p.key}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{id: s.p.keyID, key: &s.p.key.PublicKey}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if c, ok := s.clients[id]; ok && c.secret == secret {
		return nil
	}
	return errors.New("oidctest: wrong client credentials")
}

// SetUserinfoFromScopes fills the claims the ID token carries: profile
// (preferred_username), email (email, email_verified) and groups.
func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, subject, _ string, scopes []string) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	u, ok := s.userBySubject(subject)
	if !ok {
		return errNotFound
	}
	info.Subject = u.Subject
	for _, sc := range scopes {
		switch sc {
		case oidc.ScopeProfile:
			info.PreferredUsername = u.PreferredUsername
		case oidc.ScopeEmail:
			info.Email, info.EmailVerified = u.Email, oidc.Bool(u.EmailVerified)
		}
	}
	if u.Groups != nil {
		info.AppendClaims("groups", u.Groups)
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.p.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.p.mu.Unlock()
	if !ok {
		return errNotFound
	}
	return s.SetUserinfoFromScopes(ctx, info, t.subject, t.clientID, t.scopes)
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("oidctest: no introspection")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("oidctest: no JWT profile")
}

func (s *storage) Health(context.Context) error { return nil }

// authRequest is one authorization request, signed in once its user is set.
type authRequest struct {
	id       string
	req      oidc.AuthRequest
	subject  string
	done     bool
	authTime time.Time
}

func (r *authRequest) GetID() string                      { return r.id }
func (r *authRequest) GetACR() string                     { return "" }
func (r *authRequest) GetAMR() []string                   { return []string{"pwd"} }
func (r *authRequest) GetAudience() []string              { return []string{r.req.ClientID} }
func (r *authRequest) GetAuthTime() time.Time             { return r.authTime }
func (r *authRequest) GetClientID() string                { return r.req.ClientID }
func (r *authRequest) GetNonce() string                   { return r.req.Nonce }
func (r *authRequest) GetRedirectURI() string             { return r.req.RedirectURI }
func (r *authRequest) GetScopes() []string                { return r.req.Scopes }
func (r *authRequest) GetState() string                   { return r.req.State }
func (r *authRequest) GetSubject() string                 { return r.subject }
func (r *authRequest) Done() bool                         { return r.done }
func (r *authRequest) GetResponseMode() oidc.ResponseMode { return r.req.ResponseMode }
func (r *authRequest) GetResponseType() oidc.ResponseType { return r.req.ResponseType }
func (r *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if r.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: r.req.CodeChallenge, Method: r.req.CodeChallengeMethod}
}

// client is a confidential web client.
type client struct {
	id, secret            string
	redirects, postLogout []string
}

func (c *client) GetID() string                       { return c.id }
func (c *client) RedirectURIs() []string              { return c.redirects }
func (c *client) PostLogoutRedirectURIs() []string    { return c.postLogout }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) LoginURL(id string) string            { return "/login?id=" + id }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return true } // http redirect URIs on loopback
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true } // the claims ride in the ID token
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct {
	id  string
	key *rsa.PublicKey
}

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.key }
