package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// serve's single sign-on flags: repeated --oidc (or $PALAVER_OIDC,
// ';'-separated), the admin claim, and the combinations that make no
// sense, refused as usage errors.
func TestSSOFlags(t *testing.T) {
	parse := func(env string, args ...string) (names []string, password bool, err error) {
		t.Helper()
		t.Setenv("PALAVER_OIDC", env)
		f := newFlags("serve", io.Discard)
		build := ssoFlags(f)
		if _, err := f.parse(args); err != nil {
			return nil, false, err
		}
		o, password, err := build()
		for _, p := range o.Providers {
			names = append(names, p.Name())
		}
		if err == nil && o.AdminClaim != "" && (o.AdminClaim != "groups" || o.AdminValue != "palaver-admins") {
			t.Fatalf("admin claim %q=%q", o.AdminClaim, o.AdminValue)
		}
		return names, password, err
	}
	names, password, err := parse("", "--oidc", "corp=https://sso.example/realms/x,palaver,s3cret",
		"--oidc", "lab=https://lab.example,id,secret,openid profile groups", "--oidc-admin-claim", "groups=palaver-admins",
		"--password-login=false")
	if err != nil || len(names) != 2 || names[1] != "lab" || password {
		t.Fatalf("flags: %v %v %v", names, password, err)
	}
	names, _, err = parse("a=https://a.example,id,s; b=https://b.example,id,s")
	if err != nil || len(names) != 2 {
		t.Fatalf("$PALAVER_OIDC: %v %v", names, err)
	}
	names, _, err = parse("a=https://a.example,id,s", "--oidc", "c=https://c.example,id,s")
	if err != nil || len(names) != 1 || names[0] != "c" {
		t.Fatalf("a flag replaces the environment's list: %v %v", names, err)
	}
	for _, bad := range [][]string{
		{"--oidc", "corp"},
		{"--oidc", "corp=ftp://x,id,s"},
		{"--oidc", "a b=https://x,id,s"},
		{"--oidc", "corp=https://x,id"},
		{"--oidc", "corp=https://x,id,s", "--oidc", "corp=https://y,id,s"},
		{"--oidc", "corp=https://x,id,s", "--oidc-admin-claim", "groups"},
		{"--password-login=false"},
		{"--oidc-auto-redirect"},
	} {
		if _, _, err := parse("", bad...); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	if _, _, err := parse("broken"); !errors.Is(err, errUsage) {
		t.Errorf("a bad $PALAVER_OIDC: %v", err)
	}
}

// serve starts with a provider that does not answer (discovery is lazy):
// the login page offers it and the password form, and its button says it
// is not answering.
func TestServeWithAProviderDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	ln.Close() // nothing answers there
	base, logs := startServe(t, "--db", filepath.Join(t.TempDir(), "p.db"), "--oidc", "corp="+issuer+",palaver,very-secret")
	page := get(t, base+"/login")
	if !strings.Contains(page, `data-testid="oidc-corp"`) || !strings.Contains(page, `name="password"`) {
		t.Fatalf("login page: %.1000s", page)
	}
	if page := get(t, base+"/auth/oidc/corp"); !strings.Contains(page, "corp is not answering") {
		t.Fatalf("the provider's button: %.1000s", page)
	}
	if got := logs.String(); strings.Contains(got, "very-secret") || !strings.Contains(got, "single sign-on provider") {
		t.Fatalf("log: %s", got)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
