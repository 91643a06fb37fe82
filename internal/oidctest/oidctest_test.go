package oidctest_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"palaver/internal/oidctest"
)

// TestProviderSignsIn: the provider speaks the authorization code flow with
// PKCE to a standard relying party (go-oidc and x/oauth2): discovery,
// authorize, its sign-in, the code's exchange, and an ID token that
// verifies with the claims of its user.
func TestProviderSignsIn(t *testing.T) {
	ctx := context.Background()
	p := oidctest.Start(t)
	const redirect = "http://127.0.0.1:1/callback"
	p.AddClient("palaver", "s3cret", []string{redirect}, nil)
	p.AddUser(oidctest.User{Username: "ada", Subject: "sub-ada", PreferredUsername: "ada", Email: "ada@example.org",
		EmailVerified: true, Groups: []string{"staff"}})

	prov, err := gooidc.NewProvider(ctx, p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: "palaver", ClientSecret: "s3cret", Endpoint: prov.Endpoint(), RedirectURL: redirect,
		Scopes: []string{gooidc.ScopeOpenID, "profile", "email"}}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("st4te", gooidc.Nonce("n0nce"), oauth2.S256ChallengeOption(verifier))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	login, err := res.Location()
	if err != nil {
		t.Fatalf("authorize answered %d without a Location", res.StatusCode)
	}
	back, err := p.SignInURL(ctx, login.String(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(back)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("state") != "st4te" || u.Query().Get("code") == "" {
		t.Fatalf("back to %s", back)
	}
	tok, err := cfg.Exchange(ctx, u.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := prov.Verifier(&gooidc.Config{ClientID: "palaver"}).Verify(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Nonce, Email, PreferredUsername string   `json:"-"`
		N                               string   `json:"nonce"`
		E                               string   `json:"email"`
		PU                              string   `json:"preferred_username"`
		V                               bool     `json:"email_verified"`
		G                               []string `json:"groups"`
	}
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if idt.Subject != "sub-ada" || claims.N != "n0nce" || claims.E != "ada@example.org" || claims.PU != "ada" || !claims.V || len(claims.G) != 1 {
		t.Fatalf("claims: sub %q %+v", idt.Subject, claims)
	}
	// A wrong verifier is refused (PKCE is checked).
	if _, err := cfg.Exchange(ctx, u.Query().Get("code"), oauth2.VerifierOption("wrong")); err == nil {
		t.Fatal("a second exchange with a wrong verifier was accepted")
	}
}
