package sso

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
)

func TestParseSpec(t *testing.T) {
	c, err := ParseSpec(" corp=https://sso.example/realms/acme/,palaver,s3cr,et")
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the secret are scopes: a secret has no comma.
	if c.Name != "corp" || c.Issuer != "https://sso.example/realms/acme/" || c.ClientID != "palaver" || c.ClientSecret != "s3cr" ||
		!slices.Equal(c.Scopes, []string{"openid", "et"}) {
		t.Fatalf("%+v", c)
	}
	c, err = ParseSpec("lab=http://127.0.0.1:9000,id,secret")
	if err != nil || !slices.Equal(c.Scopes, DefaultScopes) {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = ParseSpec("lab=http://127.0.0.1:9000,id,secret,openid profile, groups")
	if err != nil || !slices.Equal(c.Scopes, []string{"openid", "profile", "groups"}) {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []string{"", "corp", "=https://x,a,b", "co rp=https://x,a,b", "corp=https://x,a", "corp=x,a,b", "corp=https://x,,b"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	list, err := ParseList("a=https://a,i,s; ;b=https://b,i,s;")
	if err != nil || len(list) != 2 || list[1].Name != "b" {
		t.Fatalf("%+v %v", list, err)
	}
}

func TestClaimMatches(t *testing.T) {
	claims := map[string]any{"groups": []any{"staff", "palaver-admins"}, "role": "admin", "admin": true, "n": 1.0}
	for _, tc := range []struct {
		claim, value string
		want         bool
	}{
		{"groups", "palaver-admins", true}, {"groups", "palaver", false}, {"role", "admin", true},
		{"role", "Admin", false}, {"admin", "true", true}, {"n", "1", false}, {"missing", "x", false},
	} {
		if got := ClaimMatches(claims, tc.claim, tc.value); got != tc.want {
			t.Errorf("%s=%s: %v", tc.claim, tc.value, got)
		}
	}
	id := &Identity{Claims: map[string]any{"email": "a@b", "email_verified": "true"}}
	if e, v := id.Email(); e != "a@b" || !v {
		t.Fatalf("%q %v", e, v)
	}
}

// A provider that does not answer is ErrUnavailable, and stays so without
// being asked again for a moment.
func TestUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := New(Config{Name: "gone", Issuer: "http://" + addr, ClientID: "x", ClientSecret: "y", Scopes: DefaultScopes}, nil)
	if _, err := p.AuthURL(context.Background(), "http://palaver/cb", NewFlow()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("%v", err)
	}
	if u := p.EndSessionURL(context.Background(), "tok", "http://palaver/login"); u != "" {
		t.Fatalf("end session %q", u)
	}
}
