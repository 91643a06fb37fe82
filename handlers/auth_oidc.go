package handlers

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/sso"
	"palaver/throttle"
	"palaver/views"
)

// Single sign-on (issue 30, API.md "Single sign-on (OIDC)"). A flow starts
// at GET /auth/oidc/{name} (or, to link an identity to the signed-in
// account, from the account page's form), keeps its state, nonce and PKCE
// verifier in the session, and ends at the callback, which takes them out
// again whatever happens: a state is good once. The callback's identity is
// the ID token's (issuer, subject). A sign-in then finds the account linked
// to it, or links one by a verified email (only with LinkVerifiedEmail),
// or makes one (unless registration is closed); it is throttled, renewed
// and CSRF-protected as a password sign-in is.

// OIDCConfig is the single sign-on set-up.
type OIDCConfig struct {
	Providers []*sso.Provider // in the login page's order
	// AutoRedirect sends GET /login straight to the first provider.
	AutoRedirect bool
	// AdminClaim and AdminValue make an administrator of whoever's ID
	// token carries the value in the claim, re-read at every sign-in
	// through a provider; "" leaves the admin role to Palaver.
	AdminClaim, AdminValue string
	// LinkVerifiedEmail links a first sign-in to the account that another
	// provider already vouched for with the same email, when this provider
	// says email_verified true.
	LinkVerifiedEmail bool
	// UsernameClaim names the claim a new account's username comes from;
	// "" is preferred_username.
	UsernameClaim string
}

// Session keys of single sign-on.
const (
	sessOIDCFlow     = "oidc_flow"     // the flow under way (oidcFlow, as JSON)
	sessOIDCProvider = "oidc_provider" // the provider the session signed in through
	sessOIDCIDToken  = "oidc_id_token" // its ID token: the sign-out's id_token_hint
)

// oidcFlowLifetime bounds the time between a flow's start and its callback.
const oidcFlowLifetime = 15 * time.Minute

// oidcFlow is the session's record of a flow under way.
type oidcFlow struct {
	sso.Flow
	Provider string
	LinkUser int64 // the account an identity is being linked to; 0 for a sign-in
	Started  int64 // Unix seconds
}

// oidcProvider is the configured provider called name, or nil.
func (h *Handlers) oidcProvider(name string) *sso.Provider {
	for _, p := range h.cfg.OIDC.Providers {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// oidcRedirectURI is the callback's absolute address, as the provider must
// have it registered.
func oidcRedirectURI(c *fiber.Ctx, p *sso.Provider) string {
	return c.BaseURL() + paths.OIDCCallback(p.Name())
}

// oidcStart sends a visitor to the provider to sign in.
func (h *Handlers) oidcStart(c *fiber.Ctx) error {
	p := h.oidcProvider(c.Params("name"))
	if p == nil {
		return fiber.ErrNotFound
	}
	if currentUser(c) != nil {
		return redirect(c, paths.ChatHome)
	}
	return h.oidcBegin(c, p, 0)
}

// oidcBegin keeps a new flow in the session and redirects to the
// provider's authorization endpoint.
func (h *Handlers) oidcBegin(c *fiber.Ctx, p *sso.Provider, linkUser int64) error {
	f := oidcFlow{Flow: sso.NewFlow(), Provider: p.Name(), LinkUser: linkUser, Started: time.Now().Unix()}
	u, err := p.AuthURL(c.UserContext(), oidcRedirectURI(c, p), f.Flow)
	if err != nil {
		return h.oidcRefused(c, p, err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessOIDCFlow, string(b))
	return redirect(c, u)
}

// takeFlow removes the session's flow and returns it, if there was one
// still fresh.
func (h *Handlers) takeFlow(c *fiber.Ctx) (oidcFlow, bool) {
	var f oidcFlow
	s := h.sessions.PopString(c.UserContext(), sessOIDCFlow)
	if s == "" || json.Unmarshal([]byte(s), &f) != nil {
		return f, false
	}
	return f, time.Since(time.Unix(f.Started, 0)) < oidcFlowLifetime
}

// The refusals of a flow, as the log says them; oidcRefused tells the
// person in other words.
var (
	errOIDCState    = errors.New("this sign-in was already used, has expired, or was started in another browser")
	errOIDCNoCode   = errors.New("the provider's answer has no authorization code")
	errOIDCProvider = errors.New("the provider returned an error")
	errOIDCClosed   = errors.New("registration is closed")
	errOIDCDisabled = errors.New("the account is disabled")
	errOIDCOtherAcc = errors.New("the identity is linked to another account")
	errOIDCNotYou   = errors.New("the signed-in account is not the one that started linking")
)

// oidcCallback ends a flow: the provider sends the browser back here with
// a code and the flow's state (or an error).
func (h *Handlers) oidcCallback(c *fiber.Ctx) error {
	p := h.oidcProvider(c.Params("name"))
	if p == nil {
		return fiber.ErrNotFound
	}
	f, fresh := h.takeFlow(c)
	link := fresh && f.LinkUser != 0
	from := throttle.Key{Limit: signInAddrLimit, ID: addrKey(h.clientAddr(c))}
	if wait, err := h.throttle.Take(c.UserContext(), from); err != nil {
		return err
	} else if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa((&throttledError{wait}).seconds()))
		return h.oidcRefused(c, p, &throttledError{wait})
	}
	id, err := h.oidcIdentity(c, p, f, fresh)
	if err == nil && link {
		err = h.oidcLink(c, p, id, f.LinkUser)
	} else if err == nil {
		err = h.oidcSignIn(c, p, id)
	}
	if err != nil {
		return h.oidcRefused(c, p, err)
	}
	if err := h.throttle.Undo(c.UserContext(), from); err != nil {
		return err
	}
	if link {
		return h.accountDone(c, "Your "+p.Name()+" account is linked: you can sign in with it.")
	}
	return redirect(c, paths.ChatHome)
}

// oidcIdentity checks the callback against the flow and has the provider
// verify it: the identity it vouches for.
func (h *Handlers) oidcIdentity(c *fiber.Ctx, p *sso.Provider, f oidcFlow, fresh bool) (*sso.Identity, error) {
	if e := c.Query("error"); e != "" {
		return nil, fmt.Errorf("%w: %s: %s", errOIDCProvider, e, c.Query("error_description"))
	}
	state := c.Query("state")
	if !fresh || f.Provider != p.Name() || subtle.ConstantTimeCompare([]byte(state), []byte(f.State)) != 1 {
		return nil, errOIDCState
	}
	code := c.Query("code")
	if code == "" {
		return nil, errOIDCNoCode
	}
	return p.Exchange(c.UserContext(), oidcRedirectURI(c, p), code, f.Flow)
}

// oidcSignIn signs in the account linked to the identity, linking or
// making one first when there is none.
func (h *Handlers) oidcSignIn(c *fiber.Ctx, p *sso.Provider, id *sso.Identity) error {
	ctx := c.UserContext()
	email, verified := id.Email()
	u, ident, err := h.store.UserByIdentity(ctx, id.Issuer, id.Subject)
	switch {
	case errors.Is(err, models.ErrNotFound):
		u, err = h.oidcNewIdentity(ctx, p, id)
	case err == nil && u.Disabled:
		err = fmt.Errorf("%w: %s", errOIDCDisabled, u.Username)
	case err == nil:
		err = h.store.TouchIdentity(ctx, ident.ID, email, verified)
	}
	if err != nil {
		return err
	}
	if o := h.cfg.OIDC; o.AdminClaim != "" {
		admin := sso.ClaimMatches(id.Claims, o.AdminClaim, o.AdminValue)
		nu, changed, err := h.store.SetAdminFromClaim(ctx, u.ID, admin)
		if err != nil {
			return err
		}
		if changed {
			h.log.Info("admin role set from the provider's claim", "user", u.Username, "provider", p.Name(), "admin", admin)
		} else if nu.IsAdmin != admin {
			h.log.Warn("the provider's claim would demote the last administrator: kept", "user", u.Username, "provider", p.Name())
		}
		u = nu
	}
	if err := h.signIn(c, u); err != nil {
		return err
	}
	h.sessions.Put(ctx, sessOIDCProvider, p.Name())
	h.sessions.Put(ctx, sessOIDCIDToken, id.RawIDToken)
	h.log.Info("signed in through a provider", "user", u.Username, "provider", p.Name(), "subject", id.Subject)
	return nil
}

// oidcNewIdentity links a first-seen identity to the one account another
// provider vouched for with the same verified email (only when the
// operator allows it and this provider says the email is verified too),
// or makes an account for it.
func (h *Handlers) oidcNewIdentity(ctx context.Context, p *sso.Provider, id *sso.Identity) (*models.User, error) {
	email, verified := id.Email()
	ident := models.Identity{Provider: p.Name(), Issuer: id.Issuer, Subject: id.Subject, Email: email, EmailVerified: verified}
	if h.cfg.OIDC.LinkVerifiedEmail && email != "" {
		if !verified {
			h.log.Warn("not linked by email: the provider does not say it is verified", "provider", p.Name(), "subject", id.Subject)
		} else if ids, err := h.store.UsersByVerifiedEmail(ctx, email); err != nil {
			return nil, err
		} else if len(ids) == 1 {
			u, err := h.store.UserByID(ctx, ids[0])
			if err != nil {
				return nil, err
			}
			if u.Disabled {
				return nil, fmt.Errorf("%w: %s", errOIDCDisabled, u.Username)
			}
			if err := h.store.LinkIdentity(ctx, u.ID, ident); err != nil {
				return nil, err
			}
			h.log.Info("identity linked by verified email", "provider", p.Name(), "subject", id.Subject, "user", u.Username)
			return u, nil
		} else if len(ids) > 1 {
			h.log.Warn("not linked by email: several accounts have it", "provider", p.Name(), "subject", id.Subject)
		}
	}
	admin := h.cfg.OIDC.AdminClaim != "" && sso.ClaimMatches(id.Claims, h.cfg.OIDC.AdminClaim, h.cfg.OIDC.AdminValue)
	if !h.cfg.AllowRegistration && !admin {
		return nil, errOIDCClosed
	}
	base := accounts.UsernameFrom(h.usernameCandidates(id)...)
	for n := 1; ; n++ {
		name := accounts.Numbered(base, n)
		if n > 20 { // twenty of one name: random numbers end the search
			name = accounts.Numbered(base, 100+int(binary.BigEndian.Uint16(randomBytes(2))))
		}
		u, err := h.store.CreateUserWithIdentity(ctx, name, admin, ident)
		if errors.Is(err, models.ErrUsernameTaken) && n < 40 {
			continue // another's name: never theirs, the next one
		}
		if err != nil {
			return nil, err
		}
		h.log.Info("account created through a provider", "user", u.Username, "provider", p.Name(), "subject", id.Subject)
		return u, nil
	}
}

// usernameCandidates are what a new account's name may come from, best
// first: the configured claim, the email's local part, the subject.
func (h *Handlers) usernameCandidates(id *sso.Identity) []string {
	claim := h.cfg.OIDC.UsernameClaim
	if claim == "" {
		claim = "preferred_username"
	}
	name, _ := id.Claims[claim].(string)
	email, _ := id.Email()
	local, _, _ := strings.Cut(email, "@")
	return []string{name, local, id.Subject}
}

// oidcLink links the identity to the account that started the flow from
// its page, if it is still the one signed in.
func (h *Handlers) oidcLink(c *fiber.Ctx, p *sso.Provider, id *sso.Identity, userID int64) error {
	u := currentUser(c)
	if u == nil || u.ID != userID {
		return errOIDCNotYou
	}
	email, verified := id.Email()
	owner, _, err := h.store.UserByIdentity(c.UserContext(), id.Issuer, id.Subject)
	switch {
	case err == nil && owner.ID == u.ID:
		return nil // linked already
	case err == nil:
		return errOIDCOtherAcc
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	err = h.store.LinkIdentity(c.UserContext(), u.ID, models.Identity{Provider: p.Name(), Issuer: id.Issuer,
		Subject: id.Subject, Email: email, EmailVerified: verified})
	if errors.Is(err, models.ErrIdentityTaken) {
		return errOIDCOtherAcc
	}
	if err == nil {
		h.log.Info("identity linked from the account page", "user", u.Username, "provider", p.Name(), "subject", id.Subject)
	}
	return err
}

// oidcRefused answers a flow that failed: to a visitor on the login page
// (password sign-in and the other providers are still there), to someone
// signed in (linking) on the account page, each in words a person can act on; the log has the
// cause. Nothing was created or changed.
func (h *Handlers) oidcRefused(c *fiber.Ctx, p *sso.Provider, err error) error {
	name := p.Name()
	status, msg := fiber.StatusBadRequest, ""
	var wait *throttledError
	switch {
	case errors.As(err, &wait):
		status, msg = fiber.StatusTooManyRequests, "Too many sign-ins from your address. Try again "+wait.in()+"."
	case errors.Is(err, sso.ErrUnavailable):
		status, msg = fiber.StatusServiceUnavailable, name+" is not answering at the moment, so signing in with it does not work. Try again later"
		if !h.cfg.PasswordLoginOff {
			msg += ", or sign in with your password"
		}
		msg += "."
	case errors.Is(err, sso.ErrMisconfigured):
		status, msg = fiber.StatusServiceUnavailable, "Signing in with "+name+" is not set up correctly on this server. Ask an administrator."
	case errors.Is(err, sso.ErrInvalidToken):
		status, msg = fiber.StatusUnauthorized, name+"'s answer could not be verified, so you are not signed in. Try again."
	case errors.Is(err, sso.ErrRefused), errors.Is(err, errOIDCNoCode):
		msg = name + " did not complete the sign-in. Try again."
	case errors.Is(err, errOIDCProvider):
		msg = name + " did not sign you in. Try again, or ask your administrator."
	case errors.Is(err, errOIDCState):
		msg = "This sign-in has expired or was already used. Start again."
	case errors.Is(err, errOIDCClosed):
		status, msg = fiber.StatusForbidden, "Registration is closed on this server: there is no account for your "+name+" identity. Ask an administrator."
	case errors.Is(err, errOIDCDisabled):
		status, msg = fiber.StatusForbidden, "This account is disabled. Ask an administrator to enable it."
	case errors.Is(err, errOIDCOtherAcc):
		status, msg = fiber.StatusConflict, "That "+name+" account is already linked to another Palaver account."
	case errors.Is(err, errOIDCNotYou):
		status, msg = fiber.StatusForbidden, "You signed out or changed accounts while linking. Start again from your account page."
	default:
		return err
	}
	r := &Refusal{Status: status, Reason: msg, Cause: fmt.Errorf("oidc %s: %w", name, err)}
	if currentUser(c) != nil { // linking, or signed in meanwhile: the account page says it
		return h.accountRefused(c, r, func(p *views.AccountScreen, r *Refusal) { p.IdentityError = r.Reason })
	}
	return r.onPage(func(r *Refusal) error {
		f := h.authForm(c, false)
		f.Error = r.Reason
		return render(c, r.Status, views.Auth(f))
	})
}

// accountOIDCLink starts linking an identity at the form's provider to
// the signed-in account.
func (h *Handlers) accountOIDCLink(c *fiber.Ctx) error {
	p := h.oidcProvider(formValue(c, "provider"))
	if p == nil {
		return h.accountRefused(c, refuse(fiber.StatusUnprocessableEntity, "There is no such provider."),
			func(p *views.AccountScreen, r *Refusal) { p.IdentityError = r.Reason })
	}
	return h.oidcBegin(c, p, currentUser(c).ID)
}

// accountIdentityUnlink removes one of the account's identities, unless
// it is the last way to sign in.
func (h *Handlers) accountIdentityUnlink(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return fiber.ErrNotFound
	}
	err = h.store.UnlinkIdentity(c.UserContext(), currentUser(c).ID, id, !h.cfg.PasswordLoginOff)
	if errors.Is(err, models.ErrLastSignIn) {
		msg := "This is your last way to sign in, so it stays linked. Set a password or link another account first."
		if h.cfg.PasswordLoginOff {
			msg = "This is your last way to sign in, so it stays linked. Link another account first."
		}
		return h.accountRefused(c, refuse(fiber.StatusConflict, msg).because(err),
			func(p *views.AccountScreen, r *Refusal) { p.IdentityError = r.Reason })
	}
	if err != nil {
		return err
	}
	return h.accountDone(c, "The account is unlinked: it no longer signs you in.")
}

// oidcSignOut is where sign-out goes after the session ended: the
// provider's end_session_endpoint when the session signed in through one
// that has it, coming back to the login page; else the login page.
func (h *Handlers) oidcSignOut(c *fiber.Ctx, provider, idToken string) string {
	p := h.oidcProvider(provider)
	if p == nil {
		return paths.Login
	}
	if u := p.EndSessionURL(c.UserContext(), idToken, c.BaseURL()+paths.Login); u != "" {
		return u
	}
	return paths.Login
}

// oidcButtons are the login page's "Sign in with NAME" links.
func (h *Handlers) oidcButtons() []views.OIDCButton {
	var out []views.OIDCButton
	for _, p := range h.cfg.OIDC.Providers {
		out = append(out, views.OIDCButton{Name: p.Name(), URL: paths.OIDCStart(p.Name())})
	}
	return out
}

// formActionOrigins are the origins forms may lead to besides Palaver's
// own: the providers', since signing out and linking answer a form with a
// redirect there, which the policy's form-action would otherwise stop.
func formActionOrigins(o OIDCConfig) []string {
	var out []string
	for _, p := range o.Providers {
		if u, err := url.Parse(p.Issuer()); err == nil {
			out = append(out, u.Scheme+"://"+u.Host)
		}
	}
	return out
}
