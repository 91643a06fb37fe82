package main

import (
	"fmt"
	"os"
	"strings"

	"palaver/handlers"
	"palaver/sso"
)

// oidcSpecs collects the repeated --oidc flag: one provider each, after
// those of $PALAVER_OIDC (';'-separated), unless a flag names any.
type oidcSpecs struct {
	list    []sso.Config
	fromEnv bool
}

func (s *oidcSpecs) String() string { return "" }

func (s *oidcSpecs) Set(v string) error {
	c, err := sso.ParseSpec(v)
	if err != nil {
		return err
	}
	if s.fromEnv { // a flag replaces the environment's list
		s.list, s.fromEnv = nil, false
	}
	s.list = append(s.list, c)
	return nil
}

// ssoFlags declares the single sign-on flags of serve; the function it
// returns checks them once parsed and builds the handlers' set-up, and
// says whether password sign-in stays on.
func ssoFlags(f *flags) func() (handlers.OIDCConfig, bool, error) {
	specs := &oidcSpecs{}
	if v, ok := os.LookupEnv(envName("oidc")); ok {
		list, err := sso.ParseList(v)
		if err != nil && f.envErr == nil {
			f.envErr = fmt.Errorf("%w: $%s: %v", errUsage, envName("oidc"), err)
		}
		specs.list, specs.fromEnv = list, true
	}
	f.Var(specs, "oidc", "sign in through an OpenID Connect provider: NAME=ISSUER,CLIENT_ID,CLIENT_SECRET[,scopes]; repeat for several ($"+envName("oidc")+", ';'-separated)")
	password := f.bool("password-login", true, "show the password form and accept password sign-in (false: only --oidc providers sign in)")
	auto := f.bool("oidc-auto-redirect", false, "send /login straight to the first --oidc provider")
	admin := f.string("oidc-admin-claim", "", "CLAIM=VALUE: who signs in through a provider with VALUE in CLAIM (a string or a list) is an administrator, re-read at every sign-in")
	link := f.bool("oidc-link-verified-email", false, "link a first sign-in to the account another provider vouched for with the same email, when the provider says email_verified")
	username := f.string("oidc-username-claim", "preferred_username", "the claim a new account's username comes from (then the email's local part, then the subject)")
	return func() (handlers.OIDCConfig, bool, error) {
		o := handlers.OIDCConfig{AutoRedirect: *auto, LinkVerifiedEmail: *link, UsernameClaim: *username}
		seen := map[string]bool{}
		for _, c := range specs.list {
			if seen[c.Name] {
				return o, false, fmt.Errorf("%w: --oidc: two providers are called %s", errUsage, c.Name)
			}
			seen[c.Name] = true
			o.Providers = append(o.Providers, sso.New(c, nil))
		}
		if *admin != "" {
			claim, value, ok := strings.Cut(*admin, "=")
			if !ok || claim == "" || value == "" {
				return o, false, fmt.Errorf("%w: --oidc-admin-claim: %q is not CLAIM=VALUE", errUsage, *admin)
			}
			o.AdminClaim, o.AdminValue = claim, value
		}
		if !*password && len(o.Providers) == 0 {
			return o, false, fmt.Errorf("%w: --password-login=false needs at least one --oidc provider, or nobody could sign in", errUsage)
		}
		if (*auto || *admin != "" || *link) && len(o.Providers) == 0 {
			return o, false, fmt.Errorf("%w: the --oidc-… flags need at least one --oidc provider", errUsage)
		}
		return o, *password, nil
	}
}
